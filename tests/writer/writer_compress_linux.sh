#!/usr/bin/env bash
# writer_compress_linux.sh TEST_BINARY: compressed files our writer made,
# read and copied by Linux, then changed by our writer again.
#
#   1. TEST_BINARY (f2fscore_writer_compress_interop_tests) runs
#      WriterCompressOracle.DISABLED_WriteImage: a compression volume with one
#      compressed directory per algorithm (lzo 4-block clusters, lz4 16,
#      zstd 4, lzo-rle 16) holding a zero file, a text file and a random
#      file; the list of "path sha256 size i_compr_blocks".
#   2. fsck.f2fs -f on a copy is clean.
#   3. Linux 6.1 mounts it and reads every file byte for byte (sha256);
#      then, mounted with each directory's compress_algorithm and
#      compress_log_size, copies each file to PATH.linux (compressed by
#      Linux, inheriting the directory's flag).
#   4. fsck.f2fs -f is clean; WriterCompressOracle.DISABLED_AfterLinux: our
#      reader reads Linux's copies; i_compr_blocks of Linux's copies of the
#      zero and random files equal ours (the text files' are printed); our
#      writer overwrites and truncates inside Linux's compressed clusters;
#      both checkers clean.
#   5. Linux reads every file again byte for byte; fsck.f2fs clean.
#   The compressed-file operations ride on the same two boots (/ops, lz4
#   clusters of 4; writer_compress_ops_test.cpp):
#   1b. WriterCompressOpsOracle.DISABLED_WriteImage: rr released and
#      reserved by us; mixed (with a hole) written under compress_mode=user
#      and compressed by our F2FS_IOC_COMPRESS_FILE; dec compressed and
#      decompressed by us.
#   3b. Linux reads them byte for byte and writes into rr; answers
#      RESERVE on a file not released (EINVAL) and COMPRESS_FILE in fs mode
#      (EOPNOTSUPP); GET/SET_COMPRESS_OPTION on opt (zstd, clusters of 8,
#      then 64 KiB of zeroes) and their refusals (ENODATA, EINVAL, EBUSY,
#      EFBIG);
#      copies /lz4/zero to linrel and releases it; under
#      compress_mode=user copies mixed (same hole) and runs its own
#      COMPRESS_FILE, copies dec and runs COMPRESS_FILE then DECOMPRESS_FILE
#      (compress_ioctl.c, built here statically, does the ioctls).
#   4b. WriterCompressOpsOracle.DISABLED_AfterLinux: Linux's counts and
#      layouts equal ours; we reserve linrel (what Linux released) and write
#      into it; both checkers clean; step 5 reads rr, mixed.linux, linrel.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: writer_compress_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup writer_compress_linux.sh --fsck

oracle_workdir
img="$work/compr.img"
run_test() {  # NAME LOG
  "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterCompressOracle.DISABLED_$1" > "$work/$2" 2>&1 || {
    tail -60 "$work/$2"; echo "writer_compress_linux.sh: FAIL: WriterCompressOracle.DISABLED_$1"; exit 1; }
}
run_ops() {  # NAME LOG
  "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterCompressOpsOracle.DISABLED_$1" > "$work/$2" 2>&1 || {
    tail -60 "$work/$2"; echo "writer_compress_linux.sh: FAIL: WriterCompressOpsOracle.DISABLED_$1"; exit 1; }
}
mkdir -p "$work/in" "$work/out"
gcc -O2 -static -o "$work/in/compress_ioctl" "$here/compress_ioctl.c" 2>"$work/cc.log" ||
  oracle_skip "cannot build compress_ioctl.c statically: $(head -3 "$work/cc.log")"
WRITER_IMAGE="$img" run_test WriteImage gen.log
WRITER_IMAGE="$img" run_ops WriteImage gen_ops.log
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_compress_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
cp "$img.expect" "$work/in/expect"
cp "$img.ops_expect" "$work/in/ops_expect"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
check() {  # every listed file reads as its sha256
  while read -r p sha size cb; do
    got=$(sha256sum "/mnt$p" | cut -d' ' -f1) || fail "read $p"
    [ "$got" = "$sha" ] || fail "$p: sha256 $got, ours $sha"
    [ "$(stat -c %s "/mnt$p")" = "$size" ] || fail "$p: size"
  done < /in/expect
}
mount -t f2fs /dev/vda /mnt || fail "mount"
check
umount /mnt || fail "umount"
for d in lzo:2 lz4:4 zstd:2 lzo-rle:4; do
  alg=${d%:*}; log=${d#*:}
  mount -t f2fs -o compress_algorithm=$alg,compress_log_size=$log /dev/vda /mnt || fail "mount $alg"
  for f in zero text random; do cp "/mnt/$alg/$f" "/mnt/$alg/$f.linux" || fail "cp $alg/$f"; done
  umount /mnt || fail "umount $alg"
done
# The compressed-file operations (/ops, lz4 clusters of 4).
C=/in/compress_ioctl
mount -t f2fs -o compress_algorithm=lz4,compress_log_size=2 /dev/vda /mnt || fail "mount ops"
while read -r p sha; do
  got=$(sha256sum "/mnt$p" | cut -d' ' -f1) || fail "read $p"
  [ "$got" = "$sha" ] || fail "$p: sha256 $got, ours $sha"
done < /in/ops_expect
dd if=/dev/zero bs=5000 count=1 2>/dev/null | tr '\000' L | dd of=/mnt/ops/rr bs=5000 seek=4 conv=notrunc 2>/dev/null ||
  fail "write into rr after our reserve"
r=$($C reserve /mnt/ops/rr); [ "$r" = "errno 22" ] || fail "RESERVE of a file not released: $r (want EINVAL)"
r=$($C compress /mnt/ops/dec); [ "$r" = "errno 95" ] || fail "COMPRESS_FILE in fs mode: $r (want EOPNOTSUPP)"
cp /mnt/lz4/zero /mnt/ops/linrel || fail "cp linrel"
: > /mnt/ops/opt || fail "create opt"
: > /mnt/optplain || fail "create optplain"
r=$($C getopt /mnt/ops/opt); [ "$r" = "1 2" ] || fail "GET_COMPRESS_OPTION: $r"
r=$($C getopt /mnt/optplain); [ "$r" = "errno 61" ] || fail "GET_COMPRESS_OPTION of a plain file: $r (want ENODATA)"
r=$($C setopt 2 9 /mnt/ops/opt); [ "$r" = "errno 22" ] || fail "SET_COMPRESS_OPTION log 9: $r (want EINVAL)"
r=$($C setopt 2 3 /mnt/optplain); [ "$r" = "errno 22" ] || fail "SET_COMPRESS_OPTION of a plain file: $r (want EINVAL)"
r=$($C setopt 2 3 /mnt/ops/rr); [ "$r" = "errno 16" ] || fail "SET_COMPRESS_OPTION of a file with dirty pages: $r (want EBUSY)"
sync
r=$($C setopt 2 3 /mnt/ops/rr); [ "$r" = "errno 27" ] || fail "SET_COMPRESS_OPTION of a file with blocks: $r (want EFBIG)"
r=$($C setopt 2 3 /mnt/ops/opt); [ "$r" = "ok" ] || fail "SET_COMPRESS_OPTION: $r"
r=$($C getopt /mnt/ops/opt); [ "$r" = "2 3" ] || fail "GET_COMPRESS_OPTION after SET: $r"
head -c 65536 /dev/zero > /mnt/ops/opt || fail "write opt"
sync
echo "linrel_released $($C release /mnt/ops/linrel)" >> /out/ops
echo "opt_saved $($C get /mnt/ops/opt)" >> /out/ops
umount /mnt || fail "umount ops"
mount -t f2fs -o compress_algorithm=lz4,compress_log_size=2,compress_mode=user /dev/vda /mnt || fail "mount user"
dd if=/mnt/ops/mixed of=/mnt/ops/mixed.linux bs=16384 count=3 conv=notrunc 2>/dev/null || fail "dd mixed"
dd if=/mnt/ops/mixed of=/mnt/ops/mixed.linux bs=16384 skip=4 seek=4 conv=notrunc 2>/dev/null || fail "dd mixed tail"
sync
echo "mixed_plain $($C get /mnt/ops/mixed.linux)" >> /out/ops
$C compress /mnt/ops/mixed.linux > /dev/null || fail "COMPRESS_FILE mixed.linux"
echo "mixed_linux $($C get /mnt/ops/mixed.linux)" >> /out/ops
[ "$(sha256sum < /mnt/ops/mixed.linux)" = "$(sha256sum < /mnt/ops/mixed)" ] || fail "mixed.linux differs from mixed"
cp /mnt/ops/dec /mnt/ops/dec.linux || fail "cp dec"
$C compress /mnt/ops/dec.linux > /dev/null || fail "COMPRESS_FILE dec.linux"
echo "dec_linux_compressed $($C get /mnt/ops/dec.linux)" >> /out/ops
$C decompress /mnt/ops/dec.linux > /dev/null || fail "DECOMPRESS_FILE dec.linux"
echo "dec_linux $($C get /mnt/ops/dec.linux)" >> /out/ops
umount /mnt || fail "umount user"
cat /out/ops
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /in/expect) files read byte for byte, copied under each algorithm; /ops done"
GUEST

cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
while read -r p sha; do
  got=$(sha256sum "/mnt$p" | cut -d' ' -f1) || fail "read $p"
  [ "$got" = "$sha" ] || fail "$p: sha256 $got, ours $sha"
done < /in/final
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /in/final) files read byte for byte after our changes"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" --out "$work/out" "$work/guest.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_compress_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_compress_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
WRITER_IMAGE="$img" run_test AfterLinux back.log
grep '^i_compr_blocks' "$work/back.log" || true
cp "$work/out/ops" "$img.ops"
WRITER_IMAGE="$img" run_ops AfterLinux back_ops.log
grep "^i_compress_flag" "$work/back_ops.log" || true
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_compress_linux.sh: FAIL: fsck.f2fs after our changes"; exit 1; }
cat "$img.final" "$img.ops_final" > "$work/in/final"
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest2.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_compress_linux.sh: FAIL: Linux after our changes (status $orc)"; exit 1; }
echo "writer_compress_linux.sh: PASS"
