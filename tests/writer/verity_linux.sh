#!/usr/bin/env bash
# verity_linux.sh TEST_BINARY: fs-verity files our writer made, verified and
# measured by Linux.
#
#   1. TEST_BINARY (f2fscore_writer_verity_interop_tests) runs
#      WriterVerityOracle.DISABLED_WriteImage: a verity volume with verity
#      files of 0, 100 (inline first), 4096, 5000, 528,391 bytes, one of
#      300,000 bytes with a salt and /bad (3 blocks), then GC moves every
#      block of their segments (data, trees and descriptors past EOF);
#      both checkers clean.
#   2. Linux 6.1 mounts the image (one boot) and, for each file: reads it
#      whole (fs-verity checks every block against our tree: a mismatch is
#      EIO), compares its sha256 and size with ours, and compares
#      FS_IOC_MEASURE_VERITY (verity_measure.c, built here statically) with
#      our digest; a copy of /big made verity by Linux (gtool verity) has the
#      same digest; writing to a verity file fails. Then, unmounted, one data
#      block of /bad is overwritten on the device: reading /bad fails
#      (EIO) while its first block still reads.
#   3. fsck.f2fs -f is clean after Linux; WriterVerityOracle.DISABLED_AfterLinux:
#      our reader reads Linux's verity copy of /big as /big, our writer
#      measures it as the reference computes, refuses writes to it, and
#      makes a new verity file; both checkers clean after.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle, fsck.f2fs or
# static C compiler), 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: verity_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup verity_linux.sh --fsck

oracle_workdir
img="$work/verity.img"
mkdir -p "$work/in"
gcc -O2 -static -o "$work/in/verity_measure" "$here/verity_measure.c" 2>"$work/cc.log" ||
  oracle_skip "cannot build verity_measure.c statically: $(head -3 "$work/cc.log")"
WRITER_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterVerityOracle.DISABLED_WriteImage" \
  > "$work/gen.log" 2>&1 || { tail -60 "$work/gen.log"; echo "verity_linux.sh: FAIL: WriteImage"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "verity_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
cp "$img.expect" "$work/in/expect"
cp "$img.corrupt" "$work/in/corrupt"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -iE 'f2fs|verity' | tail -20; exit 1; }
M=/in/verity_measure
mount -t f2fs /dev/vda /mnt || fail "mount"
n=0
while read -r p size sha digest; do
  got=$(sha256sum "/mnt$p" | cut -d' ' -f1) || fail "read $p (verification)"
  [ "$got" = "$sha" ] || fail "$p: sha256 $got, ours $sha"
  [ "$(stat -c %s "/mnt$p")" = "$size" ] || fail "$p: size"
  m=$($M "/mnt$p") || fail "measure $p"
  [ "$m" = "$digest" ] || fail "$p: Linux measures $m, we computed $digest"
  n=$((n+1))
done < /in/expect
if (echo x >> /mnt/odd) 2>/dev/null; then fail "a verity file took a write"; fi
cp /mnt/big /mnt/big.linux || fail "cp big"
gtool verity /mnt/big.linux || fail "gtool verity"
[ "$($M /mnt/big.linux)" = "$($M /mnt/big)" ] || fail "Linux's tree of the same bytes has another digest"
umount /mnt || fail "umount"
if dmesg | grep -iE 'f2fs|verity' | grep -iE 'error|corrupt|inconsistent|fsck|mismatch'; then fail "kernel complained"; fi
echo "GUEST OK: $n verity files verified, read and measured as ours"
read -r bp off < /in/corrupt
dd if=/dev/zero of=/dev/vda bs=4096 count=1 seek=$((off / 4096)) conv=notrunc 2>/dev/null || fail "dd"
sync
mount -t f2fs /dev/vda /mnt || fail "mount 2"
dd if="/mnt$bp" of=/dev/null bs=4096 count=1 2>/dev/null || fail "block 0 of $bp should still read"
if cat "/mnt$bp" > /dev/null 2>/tmp/err; then fail "a damaged verity block read without error"; fi
grep -qiE 'input/output|i/o error' /tmp/err || fail "damaged block: $(cat /tmp/err), not EIO"
umount /mnt || fail "umount 2"
echo "GUEST OK: the damaged block of $bp fails with EIO"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" --dmesg "$work/guest.sh" "$img" > "$work/guest.log" 2>&1
orc=$?
set -e
cat "$work/guest.log" | grep -E 'GUEST|verity' || true
[[ $orc -eq 0 ]] || { tail -30 "$work/guest.log"; echo "verity_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "verity_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
WRITER_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterVerityOracle.DISABLED_AfterLinux" \
  > "$work/back.log" 2>&1 || { tail -60 "$work/back.log"; echo "verity_linux.sh: FAIL: AfterLinux"; exit 1; }
echo "verity_linux.sh: PASS"
