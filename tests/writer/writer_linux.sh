#!/usr/bin/env bash
# writer_linux.sh TEST_BINARY: Linux reads and writes an image our writer
# populated; our writer then reads what Linux wrote.
#
#   1. TEST_BINARY (f2fscore_writer_interop_tests) runs
#      WriterOracle.DISABLED_WriteImage: our mkfs (192 MiB), then the writer
#      makes directories and 40 files (one of 6 MiB, some truncated, one
#      unlinked) and unmounts; the expected tree is written beside it.
#   2. fsck.f2fs -f on a copy is clean.
#   3. Linux 6.1 mounts the image, md5sums every file (compared with the
#      expected tree: same paths, same contents), writes /linux/new (256 KiB
#      plus 100 bytes), unmounts; the kernel must not complain.
#      and /linux/small (100 bytes, inline data) in /linux (inline dentries).
#   4. WriterOracle.DISABLED_ReadLinuxFile: our writer mounts Linux's image,
#      reads /linux/new equal to what Linux wrote, writes /linux/ours,
#      appends to /linux/small (inline data -> block), adds 200 entries to
#      /linux (inline dentries -> dentry blocks), unmounts; fsck.f2fs -f is
#      clean again.
#   5. Linux mounts the result and reads our changes (/linux/ours equal to
#      /linux/new, 203 entries in /linux, /linux/small's 8100 bytes).
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: writer_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup writer_linux.sh --fsck

oracle_workdir
img="$work/w.img"
WRITER_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=WriterOracle.DISABLED_WriteImage > "$work/gen.log" 2>&1 || {
  cat "$work/gen.log"; echo "writer_linux.sh: FAIL: could not write the image"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
(cd "$img.expect" && find . -type f | sort | while read -r f; do md5sum "$f"; done) > "$work/expect.md5"
mkdir -p "$work/in" "$work/out"
cp "$work/expect.md5" "$work/in/"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
(cd /mnt && find . -type f | sort | while read -r f; do md5sum "$f"; done) > /tmp/got.md5 || fail "read"
cmp /in/expect.md5 /tmp/got.md5 || { diff /in/expect.md5 /tmp/got.md5 | head; fail "tree differs from what our writer wrote"; }
mkdir /mnt/linux || fail "mkdir"
dd if=/dev/urandom of=/out/new bs=100 count=2622 2>/dev/null
cp /out/new /mnt/linux/new || fail "write"
printf 'ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss' > /mnt/linux/small || fail "small"
sync
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /tmp/got.md5) files read equal, 262200 bytes written"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" --out "$work/out" "$work/guest.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
[[ -s "$work/out/new" ]] || { echo "writer_linux.sh: FAIL: Linux's file did not come back"; exit 1; }
WRITER_IMAGE="$img" WRITER_LINUX_FILE="$work/out/new" "$bin" --gtest_also_run_disabled_tests \
  --gtest_filter=WriterOracle.DISABLED_ReadLinuxFile > "$work/back.log" 2>&1 || {
  cat "$work/back.log"; echo "writer_linux.sh: FAIL: our writer on Linux's image"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_linux.sh: FAIL: fsck.f2fs after Linux and our writer"; exit 1; }

# 5. Linux reads what our writer did to its image.
cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
cmp /mnt/linux/new /mnt/linux/ours || fail "/linux/ours differs from /linux/new"
n=$(ls /mnt/linux | wc -l); [ "$n" = 203 ] || fail "/linux holds $n entries, want 203"
[ -f /mnt/linux/e0 ] && [ -f /mnt/linux/e199 ] || fail "entries missing"
s=$(stat -c %s /mnt/linux/small); [ "$s" = 8100 ] || fail "/linux/small is $s bytes, want 8100"
[ "$(head -c 100 /mnt/linux/small | tr -d s | wc -c)" = 0 ] || fail "/linux/small head"
[ "$(tail -c 8000 /mnt/linux/small | tr -d t | wc -c)" = 0 ] || fail "/linux/small tail"
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: Linux reads our writer's changes to its image"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" "$work/guest2.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_linux.sh: FAIL: Linux on our second image (status $orc)"; exit 1; }
echo "writer_linux.sh: PASS"
