#!/usr/bin/env bash
# fsync_random_linux.sh TEST_BINARY [--seeds FROM-TO] [--keep K] [--node-cache N]
#                       [--vol-seeds FROM-TO]:
# Linux 6.1 rolls forward the random crash test's cut images as our
# roll-forward does.
#
#   1. TEST_BINARY (f2fscore_writer_fsync_interop_tests) runs
#      FsyncOracle.DISABLED_RandomCutImages: seeded random sequences of
#      creates, writes, fsyncs, fdatasyncs and syncs cut at every write; for
#      each seed it keeps up to K raw cut images (before any recovery) whose
#      checkpoint alone reads differently from what our roll-forward read,
#      each with that tree (the last checkpoint plus what was fsynced).
#      Defaults: seeds 1-4, K 2 (the CI run, ~50 s); the bench run is
#      --seeds 1-40 --keep 3 (the unit test's 40 seeds, 5 boots). The same
#      seeds run a second time with a node page cache of N pages (default 4;
#      0: not), so that node writeback between checkpoints ends the chains
#      Linux walks (FSYNC_CUT_NODE_CACHE). The --vol-seeds (default 1-2;
#      0-0: none) run again, K images each, on a compression volume
#      (compressed files, their fsyncs checkpoints as in Linux) and on a
#      quota and project quota volume (files of other owners and projects,
#      chown and project changes fsynced): Linux rolls those forward too,
#      and fsck.f2fs -f (step 4) compares the quota files with the usage it
#      counts after Linux's roll-forward (FSYNC_CUT_VOL).
#   2. The images are packed as partitions of a few disks (an MS-DOS
#      partition table, 4 primary partitions a disk, 1 MiB aligned), so one
#      boot reads up to 24 images (the oracle attaches 8 disks, /in is one);
#      more images take more boots.
#   3. In each boot Linux mounts every partition (roll-forward), compares
#      every path and the sha256 of every file with the expected tree,
#      unmounts; the kernel must not complain ("Cannot recover all fsync
#      data", errors, corruption).
#   4. fsck.f2fs -f is clean on every image Linux recovered and unmounted
#      (copied back out of its partition).
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
usage() { echo "usage: fsync_random_linux.sh TEST_BINARY [--seeds FROM-TO] [--keep K] [--node-cache N] [--vol-seeds FROM-TO]" >&2; exit 2; }
[[ $# -ge 1 && -x "$1" ]] || usage
bin="$1"; shift
seeds=1-4 keep=2 node_cache=4 vol_seeds=1-2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --node-cache) node_cache="$2"; shift 2 ;;
    --vol-seeds) vol_seeds="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[[ "$seeds" =~ ^[0-9]+-[0-9]+$ && "$keep" =~ ^[0-9]+$ && "$node_cache" =~ ^[0-9]+$ && "$vol_seeds" =~ ^[0-9]+-[0-9]+$ ]] || usage
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup fsync_random_linux.sh --fsck

oracle_workdir
fail() { echo "fsync_random_linux.sh: FAIL: $*"; exit 1; }

# 1. The cut images.
mkdir -p "$work/cuts"
FSYNC_CUTS="$work/cuts" FSYNC_CUT_SEEDS="$seeds" FSYNC_CUT_KEEP="$keep" "$bin" --gtest_also_run_disabled_tests \
  --gtest_filter=FsyncOracle.DISABLED_RandomCutImages > "$work/cuts.log" 2>&1 ||
  { cat "$work/cuts.log"; fail "could not make the cut images"; }
grep -E '^seeds ' "$work/cuts.log" || true
if [[ $node_cache -gt 0 ]]; then
  FSYNC_CUTS="$work/cuts" FSYNC_CUT_SEEDS="$seeds" FSYNC_CUT_KEEP="$keep" FSYNC_CUT_NODE_CACHE="$node_cache" "$bin" \
    --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_RandomCutImages > "$work/cuts-wb.log" 2>&1 ||
    { cat "$work/cuts-wb.log"; fail "could not make the cut images with node writeback"; }
  grep -E '^seeds ' "$work/cuts-wb.log" | sed 's/^/node cache '"$node_cache"': /' || true
fi
if [[ $vol_seeds != 0-0 ]]; then
  for vol in compression quota; do
    FSYNC_CUTS="$work/cuts" FSYNC_CUT_SEEDS="$vol_seeds" FSYNC_CUT_KEEP="$keep" FSYNC_CUT_VOL="$vol" "$bin" \
      --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_RandomCutImages > "$work/cuts-$vol.log" 2>&1 ||
      { cat "$work/cuts-$vol.log"; fail "could not make the cut images on the $vol volume"; }
    grep -E '^seeds ' "$work/cuts-$vol.log" | sed 's/^/'"$vol"' volume: /' || true
    n=$(ls "$work"/cuts/cut${vol:0:1}*.img 2>/dev/null | wc -l)
    [[ $n -gt 0 ]] || fail "no cut image with a chain on the $vol volume"
  done
fi
imgs=()
for c in "$work"/cuts/*.img; do
  [[ -f "$c" ]] || continue
  imgs+=("$c")
done
from=${seeds%-*} to=${seeds#*-}
[[ ${#imgs[@]} -ge $(( (to - from + 1) * (keep > 0) )) ]] || fail "${#imgs[@]} cut images for seeds $seeds (expected one a seed or more)"

listing() { (cd "$1" && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort); }
sums() { (cd "$1" && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done); }

# An MS-DOS partition table on DISK: one primary partition (type 0x83) per
# "START SECTORS" line of PARTS, at most 4.
write_mbr() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
parts = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
assert 1 <= len(parts) <= 4
mbr = bytearray(512)
for i, (start, count) in enumerate(parts):
    mbr[446 + 16 * i:462 + 16 * i] = struct.pack('<B3sB3sII', 0, b'\xfe\xff\xff', 0x83, b'\xfe\xff\xff', start, count)
mbr[510:512] = b'\x55\xaa'
with open(sys.argv[1], 'r+b') as f:
    f.write(mbr)
PY
}

per_disk=4 disks_per_boot=6
per_boot=$((per_disk * disks_per_boot))
cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
while read -r name part; do
  [ -b "$part" ] || fail "$name: no partition $part"
  mount -t f2fs "$part" /mnt || fail "$name: mount"
  (cd /mnt && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort) > /tmp/got.list
  cmp /in/$name.list /tmp/got.list || { diff /in/$name.list /tmp/got.list | head; fail "$name: paths differ"; }
  (cd /mnt && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done) > /tmp/got.sha
  cmp /in/$name.sha /tmp/got.sha || { diff /in/$name.sha /tmp/got.sha | head; fail "$name: contents differ"; }
  umount /mnt || fail "$name: umount"
  echo "GUEST-OK $name $(wc -l < /tmp/got.sha) files"
done < /in/parts
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck|cannot recover'; then fail "kernel complained"; fi
echo "GUEST-READ-ALL-OK"
GUEST

boots=0 read_ok=0
for ((b = 0; b < ${#imgs[@]}; b += per_boot)); do
  batch=("${imgs[@]:b:per_boot}")
  rm -rf "$work/in" "$work"/disk*.img; mkdir -p "$work/in"
  : > "$work/in/parts"
  disks=() placed=()   # placed: "IMAGE DISK START_SECTOR SECTORS"
  for ((i = 0; i < ${#batch[@]}; i++)); do
    d=$((i / per_disk)) p=$((i % per_disk + 1))
    disk="$work/disk$d.img"
    if [[ $p -eq 1 ]]; then disks+=("$disk"); : > "$disk"; start=2048; fi
    img="${batch[$i]}" name=$(basename "${batch[$i]}" .img)
    size=$(stat -c %s "$img")
    sectors=$(( (size + 1048575) / 1048576 * 2048 ))
    truncate -s $(( (start + sectors) * 512 )) "$disk"
    dd if="$img" of="$disk" bs=1M seek=$((start / 2048)) conv=notrunc,sparse status=none
    echo "$start $sectors" >> "$disk.parts"
    placed+=("$img $disk $start $sectors")
    echo "$name /dev/vd$(echo abcdefgh | cut -c$((d + 1)))$p" >> "$work/in/parts"
    listing "${img%.img}.tree" > "$work/in/$name.list"
    sums "${img%.img}.tree" > "$work/in/$name.sha"
    start=$((start + sectors))
  done
  for disk in "${disks[@]}"; do write_mbr "$disk" "$disk.parts"; rm -f "$disk.parts"; done
  set +e
  "$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "${disks[@]}" > "$work/linux.log" 2>&1
  orc=$?
  set -e
  boots=$((boots + 1))
  echo "boot $boots: images Linux read as we did: $(grep -c GUEST-OK "$work/linux.log" || true)"
  grep -q GUEST-READ-ALL-OK "$work/linux.log" || { cat "$work/linux.log"; fail "Linux did not read the cut images as we did (status $orc)"; }
  [[ $orc -eq 0 ]] || { cat "$work/linux.log"; fail "oracle status $orc"; }
  read_ok=$((read_ok + ${#batch[@]}))
  # 4. fsck.f2fs -f on each image as Linux left it.
  for pl in "${placed[@]}"; do
    read -r img disk start sectors <<< "$pl"
    dd if="$disk" of="$img" bs=1M skip=$((start / 2048)) count=$((sectors / 2048)) conv=sparse status=none
    "$repo_root/tests/interop/fsck_clean.sh" "$img" > "$work/fsck.log" 2>&1 || {
      cat "$work/fsck.log"; fail "fsck.f2fs -f after Linux recovered $(basename "$img" .img)"; }
  done
done
echo "fsync_random_linux.sh: PASS (seeds $seeds, volume seeds $vol_seeds: ${read_ok} cut images rolled forward by Linux as by us, fsck.f2fs -f clean, $boots boots)"
