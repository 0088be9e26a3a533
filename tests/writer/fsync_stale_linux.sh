#!/usr/bin/env bash
# fsync_stale_linux.sh TEST_BINARY: Linux 6.1 reads the stale-mark
# sequences' power-cut images as our roll-forward does.
#
#   1. TEST_BINARY (f2fscore_writer_fsync_interop_tests) runs
#      FsyncOracle.DISABLED_StaleMarkCutImages: create /base/n1, fsync,
#      sync, write 100 bytes, sync (and the same on the existing /base/f0
#      with ipu_policy 0), cut at every write; it keeps raw images (before
#      any recovery) of cuts during the last sync and of a cut with an
#      fsynced chain, each with the tree our recovery read from it.
#   2. One Linux boot mounts each image (roll-forward where there is a
#      chain), compares every path and the sha256 of every file with that
#      tree, unmounts; the kernel must not complain (no "Cannot recover all
#      fsync data").
#   3. fsck.f2fs -f is clean on every image Linux mounted and unmounted.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: fsync_stale_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
export F2FSCORE_REQUIRE_FSCK="${F2FSCORE_REQUIRE_FSCK:-${F2FSCORE_REQUIRE_ORACLE:-0}}"
fsck="${FSCK_F2FS:-/usr/sbin/fsck.f2fs}"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup fsync_stale_linux.sh
[[ -x "$fsck" ]] || oracle_skip "$fsck not found"

oracle_workdir
fail() { echo "fsync_stale_linux.sh: FAIL: $*"; exit 1; }

mkdir -p "$work/cuts"
FSYNC_CUTS="$work/cuts" "$bin" --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_StaleMarkCutImages \
  > "$work/cuts.log" 2>&1 || { cat "$work/cuts.log"; fail "could not make the cut images"; }
imgs=()
names=()
for c in "$work"/cuts/*.img; do
  [[ -f "$c" ]] || continue
  imgs+=("$c")
  names+=("$(basename "$c" .img)")
done
[[ ${#imgs[@]} -ge 4 && ${#imgs[@]} -le 8 ]] || fail "${#imgs[@]} cut images (expected 4 to 8)"

mkdir -p "$work/in"
listing() { (cd "$1" && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort); }
sums() { (cd "$1" && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done); }
for i in "${!imgs[@]}"; do
  tree="${imgs[$i]%.img}.tree"
  listing "$tree" > "$work/in/${names[$i]}.list"
  sums "$tree" > "$work/in/${names[$i]}.sha"
done
printf '%s\n' "${names[@]}" > "$work/in/names"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
n=0
for name in $(cat /in/names); do
  dev=/dev/vd$(echo abcdefghij | cut -c$((n + 1)))
  n=$((n + 1))
  mount -t f2fs "$dev" /mnt || fail "$name: mount"
  (cd /mnt && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort) > /tmp/got.list
  cmp /in/$name.list /tmp/got.list || { diff /in/$name.list /tmp/got.list | head; fail "$name: paths differ"; }
  (cd /mnt && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done) > /tmp/got.sha
  cmp /in/$name.sha /tmp/got.sha || { diff /in/$name.sha /tmp/got.sha | head; fail "$name: contents differ"; }
  umount /mnt || fail "$name: umount"
  echo "GUEST-OK $name $(wc -l < /tmp/got.sha) files"
done
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck|cannot recover'; then fail "kernel complained"; fi
echo "GUEST-READ-ALL-OK"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "${imgs[@]}" > "$work/linux.log" 2>&1
orc=$?
set -e
cat "$work/linux.log"
grep -q GUEST-READ-ALL-OK "$work/linux.log" || fail "Linux did not read the cut images as we did (status $orc)"
[[ $orc -eq 0 ]] || fail "oracle status $orc"

for i in "${!names[@]}"; do
  "$repo_root/tests/interop/fsck_clean.sh" "${imgs[$i]}" > "$work/fsck.log" 2>&1 || {
    cat "$work/fsck.log"; fail "fsck.f2fs -f after Linux mounted ${names[$i]}"; }
done
echo "fsync_stale_linux.sh: PASS (${#names[@]} cut images read by Linux as by our roll-forward)"
