#!/usr/bin/env bash
# meta_linux.sh TEST_BINARY: Linux mounts a volume whose metadata our
# rebuild rewrote, read-write.
#
#   1. TEST_BINARY (f2fscore_meta_interop_tests) writes the image:
#      MetaOracle.DISABLED_WriteRepairedImage takes the Linux-written fixture
#      tests/data/linux61-compress.img.zst, damages a SIT entry, the
#      checkpoint counts and the hot node log's next block, and repairs it
#      with meta::rebuild (plan_from_volume, active log moved); and an image
#      of our mkfs with 2-segment sections whose hot data log moved to a
#      free section.
#   2. The Linux oracle mounts each read-write, reads every file, writes a
#      new 1 MiB file and a directory, fsyncs, unmounts, mounts again and
#      compares, unmounts. The kernel's own checks on mount (checkpoint,
#      SIT, summaries, curseg sanity) must pass.
#   3. fsck_clean.sh: fsck.f2fs -f calls the result clean.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1,
# which defaults to F2FSCORE_REQUIRE_ORACLE). About 20 s.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: meta_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup meta_linux.sh --fsck

oracle_workdir
img="$work/rebuilt.img"
META_REBUILT_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=MetaOracle.DISABLED_WriteRepairedImage > "$work/gen.log" 2>&1 || {
  cat "$work/gen.log"; echo "meta_linux.sh: FAIL: could not make the rebuilt image"; exit 1; }
[[ -s "$img" && -s "$img.s2" ]] || { cat "$work/gen.log"; echo "meta_linux.sh: FAIL: no image written"; exit 1; }

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL ($dev): $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
for dev in /dev/vda /dev/vdb; do
  mount -t f2fs $dev /mnt || fail "mount"
  find /mnt -type f | sort | while read -r f; do md5sum "$f"; done > /tmp/before || fail "read"
  mkdir /mnt/after-rebuild || fail "mkdir"
  dd if=/dev/urandom of=/tmp/new bs=4096 count=256 2>/dev/null
  cp /tmp/new /mnt/after-rebuild/new || fail "write"
  sync
  umount /mnt || fail "umount"
  mount -t f2fs $dev /mnt || fail "remount"
  cmp /tmp/new /mnt/after-rebuild/new || fail "new file differs after remount"
  find /mnt -type f ! -path '/mnt/after-rebuild/*' | sort | while read -r f; do md5sum "$f"; done > /tmp/after
  cmp /tmp/before /tmp/after || fail "old files differ after remount"
  umount /mnt || fail "second umount"
  echo "GUEST OK ($dev): $(wc -l < /tmp/before) files read, 1 MiB written"
done
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" "$work/guest.sh" "$img" "$img.s2"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "meta_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
frc=0
for i in "$img" "$img.s2"; do
  set +e
  "$repo_root/tests/interop/fsck_clean.sh" "$i"
  rc=$?
  set -e
  [[ $rc -eq 0 ]] || frc=$rc
done
case $frc in
  0) echo "meta_linux.sh: PASS" ;;
  77) echo "meta_linux.sh: SKIP: fsck.f2fs unavailable (Linux part passed)"; exit 77 ;;
  *) echo "meta_linux.sh: FAIL: fsck.f2fs -f does not call the image clean after Linux wrote it"; exit 1 ;;
esac
