#!/usr/bin/env bash
# writer_gc_linux.sh TEST_BINARY: Linux reads images our writer filled and
# churned (SSR logs, GC'd sections, SIT mtimes), then writes on them.
#
#   For each seed (WRITER_GC_SEEDS, default "21 22"):
#   1. TEST_BINARY (f2fscore_writer_gc_interop_tests) runs
#      WriterGcOracle.DISABLED_ChurnImage: a 256 MiB volume of our mkfs
#      filled to 95% of user_block_count, overwritten twice its size at
#      random (foreground GC and SSR run), then a model phase of creates,
#      writes, truncates and unlinks; the expected tree beside the image.
#   2. fsck.f2fs -f on a copy is clean.
#   3. Linux 6.1 mounts the image, md5sums every file (compared with the
#      expected tree), overwrites 8 MiB inside existing files (its own SSR
#      and GC on our logs), syncs, unmounts; the kernel must not complain.
#   4. fsck.f2fs -f is clean after Linux.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
# Cost: about 25 s per seed (image ~15 s, one Linux boot ~6 s).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: writer_gc_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup writer_gc_linux.sh --fsck

oracle_workdir

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
(cd /mnt && find . -type f | sort | while read -r f; do md5sum "$f"; done) > /tmp/got.md5 || fail "read"
cmp /in/expect.md5 /tmp/got.md5 || { diff /in/expect.md5 /tmp/got.md5 | head; fail "tree differs from what our writer wrote"; }
# 8 MiB of overwrites inside the first files of at least 256 KiB.
n=0
for f in $(cd /mnt && find . -type f -size +255k | sort | head -32); do
  dd if=/dev/urandom of="/mnt/$f" bs=4096 count=64 seek=$((n % 3)) conv=notrunc 2>/dev/null || fail "overwrite $f"
  n=$((n + 1))
done
sync
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /tmp/got.md5) files read equal, $n files overwritten"
GUEST

for seed in ${WRITER_GC_SEEDS:-21 22}; do
  img="$work/gc$seed.img"
  WRITER_IMAGE="$img" WRITER_GC_SEED="$seed" "$bin" --gtest_also_run_disabled_tests \
    --gtest_filter=WriterGcOracle.DISABLED_ChurnImage > "$work/gen.log" 2>&1 || {
    cat "$work/gen.log"; echo "writer_gc_linux.sh: FAIL: could not write the image (seed $seed)"; exit 1; }
  grep '\[ gc stats \]' "$work/gen.log" || true
  "$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_gc_linux.sh: FAIL: fsck.f2fs after our writer (seed $seed)"; exit 1; }
  rm -rf "$work/in"; mkdir -p "$work/in"
  (cd "$img.expect" && find . -type f | sort | while read -r f; do md5sum "$f"; done) > "$work/in/expect.md5"
  set +e
  "$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "$img"
  orc=$?
  set -e
  [[ $orc -eq 0 ]] || { echo "writer_gc_linux.sh: FAIL: Linux (seed $seed, status $orc)"; exit 1; }
  "$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_gc_linux.sh: FAIL: fsck.f2fs after Linux (seed $seed)"; exit 1; }
  rm -rf "$img" "$img.expect"
done
echo "writer_gc_linux.sh: PASS"
