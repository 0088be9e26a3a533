#!/usr/bin/env bash
# Multi-device volumes (mkfs -c): the reader, the checker and the writer
# address blocks across all the devices of a volume.
#  1. Volume A: mkfs.f2fs -c, three devices (64, 128, 64 MiB + 28 KiB). Volume B:
#     f2fscore-mkfs -c with the rich feature set, two devices (64 and
#     192 MiB). f2fscore-sload fills both with a tree whose 72 MB file
#     spans the devices (f2fscore-dump map: blkaddrs on each device, whose
#     ranges are hand-computed: device 0 holds 512 + 31 x 512 blocks, each
#     further device its size / 2 MiB segments); our fsck (-f -n) and
#     fsck.f2fs -f (which opens the other devices by the superblock's
#     paths) are clean; f2fscore-dump extracts exactly the tree.
#  2. Clear refusals, nothing written: a missing device (named, with the
#     hint --device), a device of the wrong size, too many --device, a
#     device named twice, a device held by another writer (flock, as our
#     tools lock an image) for sload; resize (unsupported). A moved device
#     is found with --device, also given before the device operand (one
#     path per --device; sload's refusal of a missing source after the
#     mount writes nothing).
#  3. With the Linux oracle, one boot: the superblocks name the host
#     paths, so the guest makes them symlinks to its disks (/dev/vda...)
#     before mounting. Linux reads both trees byte for byte (sha256 of
#     every file equal to the source's), writes more (a 20 MB file, a
#     rewrite, an unlink, a directory), unmounts. Then we read what Linux
#     left (sha256 of our extraction equal to Linux's list), both checkers
#     are clean, f2fscore-sload keeps writing, both checkers clean again and
#     the extraction equal.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_FSCK, F2FSCORE_DUMP,
# F2FSCORE_SLOAD, F2FSCORE_RESIZE. Skips (77) without f2fs-tools, failing
# instead under F2FSCORE_REQUIRE_FSCK=1; the Linux part is skipped without
# the oracle unless F2FSCORE_REQUIRE_ORACLE=1.
set -uo pipefail
name=multi_device.sh
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
MKFS=${F2FSCORE_MKFS:?} FSCK=${F2FSCORE_FSCK:?} DUMP=${F2FSCORE_DUMP:?} SLOAD=${F2FSCORE_SLOAD:?}
RESIZE=${F2FSCORE_RESIZE:?}
for t in mkfs.f2fs fsck.f2fs; do
  if ! command -v "$t" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$t ]]; then
    if [[ "${F2FSCORE_REQUIRE_FSCK:-0}" == 1 ]]; then echo "$name: FAIL: $t not found" >&2; exit 1; fi
    echo "$name: SKIP: $t not found (install f2fs-tools)" >&2; exit 77
  fi
done
export PATH="$PATH:/usr/sbin:/sbin"
# Short: the superblock keeps each path in 63 bytes.
T=$(mktemp -d /tmp/f2fscore-md.XXXXXX)
holder=""
trap '[[ -n "$holder" ]] && kill "$holder" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "$name: FAIL: $*"; exit 1; }

# fsck.f2fs -f on the volume whose devices are "$@" (device 0 first): it
# opens them by the superblock's paths and rewrites the checkpoint, so the
# devices are copied aside and put back after.
ref_fsck() {
  local f
  for f in "$@"; do cp --sparse=always "$f" "$f.keep"; done
  fsck.f2fs -f "$1" >"$T/ref-fsck.log" 2>&1
  local rc=$?
  for f in "$@"; do mv "$f.keep" "$f"; done
  [[ $rc == 0 ]] || { cat "$T/ref-fsck.log"; fail "fsck.f2fs -f exits $rc on $1"; }
  if grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' "$T/ref-fsck.log"; then
    cat "$T/ref-fsck.log"; fail "fsck.f2fs -f reports problems on $1"
  fi
}
our_fsck() {
  "$FSCK" -f -n "$1" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "our fsck -f -n exits $? on $1"; }
}
# sha256 of every file under a directory, "sum  ./path" sorted by path
# (lost+found left out).
sums() { (cd "$1" && find . -type f ! -path './lost+found/*' | LC_ALL=C sort | while read -r f; do sha256sum "$f"; done); }
# Whether the file $2 of volume $1 has blocks in [$3, $4) (f2fscore-dump map).
has_blocks_in() {
  "$DUMP" "$1" map | awk -v f="$2" -v lo="$3" -v hi="$4" '
    $1 == f { for (i = 2; i <= NF; i++) { n = split($i, r, "-"); a = r[1] + 0; b = (n > 1 ? r[2] : r[1]) + 0;
                if (a < hi && b >= lo) found = 1 } }
    END { exit found ? 0 : 1 }'
}

# The tree.
src=$T/src
mkdir -p "$src/d/e"
head -c 72000000 /dev/urandom > "$src/big"
head -c 3000000 /dev/urandom > "$src/d/mid"
echo small > "$src/d/e/small"
for i in $(seq 1 50); do head -c $((i * 997)) /dev/urandom > "$src/d/f$i"; done

# 1. Volume A (mkfs.f2fs, three devices) and B (ours, two).
A0=$T/a0.img A1=$T/a1.img A2=$T/a2.img B0=$T/b0.img B1=$T/b1.img
truncate -s 64M "$A0" "$B0"
# The last device of A is no whole number of segments: block_count counts
# its tail (as mkfs.f2fs sums the devices), no device maps it.
truncate -s $((64 * 1048576 + 28672)) "$A2"
truncate -s 128M "$A1"
truncate -s 192M "$B1"
mkfs.f2fs -f -q -c "$A1" -c "$A2" "$A0" >"$T/mkfs.log" 2>&1 || { cat "$T/mkfs.log"; fail "mkfs.f2fs -c"; }
"$MKFS" -q -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found -c "$B1" "$B0" ||
  fail "f2fscore-mkfs -c exits $?"
for v in "$A0" "$B0"; do
  "$SLOAD" -f "$src" -T 1700000000 "$v" >"$T/sload.log" 2>&1 || { cat "$T/sload.log"; fail "f2fscore-sload on $v exits $?"; }
  our_fsck "$v"
  rm -rf "$T/out"; "$DUMP" "$v" extract / "$T/out" >"$T/dump.log" 2>&1 || { cat "$T/dump.log"; fail "f2fscore-dump extract of $v"; }
  rm -rf "$T/out/lost+found"
  diff -r "$src" "$T/out" || fail "the extraction of $v differs from the tree"
done
ref_fsck "$A0" "$A1" "$A2"
ref_fsck "$B0" "$B1"
# Device 0: blkaddrs [0, 16384); A's device 1 [16384, 49152), device 2
# [49152, 65536); B's device 1 [16384, 65536).
has_blocks_in "$A0" /big 16384 49152 || fail "no block of A's /big on its device 1"
has_blocks_in "$A0" /big 49152 65536 || fail "no block of A's /big on its device 2"
has_blocks_in "$B0" /big 16384 65536 || fail "no block of B's /big on its device 1"
echo "$name: both volumes filled, both checkers clean, extraction equal, /big on every device"

# 2. Refusals.
sumA=$(cat "$A0" "$A1" "$A2" | cksum)
mv "$A2" "$T/moved.img"
out=$("$SLOAD" -f "$src" "$A0" 2>&1) && fail "sload wrote with device 2 missing"
[[ "$out" == *"device 2 of 3 ($A2): cannot open $A2: no such file or device; name it with --device PATH"* ]] ||
  fail "missing device: $out"
"$FSCK" -f -n "$A0" --device "" --device "$T/moved.img" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "--device does not find the moved device"; }
# --device takes one path each: the operands after it stay the tools' own.
"$FSCK" -f -n --device "" --device "$T/moved.img" "$A0" >"$T/fsck.log" 2>&1 ||
  { cat "$T/fsck.log"; fail "fsck: --device before the device operand"; }
"$DUMP" --device "" --device "$T/moved.img" "$A0" info >"$T/dump.log" 2>&1 ||
  { cat "$T/dump.log"; fail "dump: --device before the image operand"; }
# (A source that cannot be read, found after the mount: nothing written.)
out=$("$SLOAD" -f "$T/missing" --device "" --device "$T/moved.img" "$A0" 2>&1); rc=$?
[[ $rc == 1 && "$out" == *"No such file"* ]] || fail "sload: --device before the device operand ($rc): $out"
truncate -s 60M "$T/moved.img"
out=$("$FSCK" -f -n "$A0" --device "" --device "$T/moved.img" 2>&1) && fail "a short device passed"
[[ "$out" == *"device 2 of 3 ($T/moved.img) has 62914560 bytes; the volume's device list needs 67108864"* ]] || fail "short device: $out"
truncate -s $((64 * 1048576 + 28672)) "$T/moved.img"
mv "$T/moved.img" "$A2"
out=$("$FSCK" -f -n "$A0" --device a --device b --device c 2>&1); rc=$?
[[ $rc == 16 && "$out" == *"3 other devices named, but $A0 is a volume of 3 devices (2 besides it)"* ]] || fail "too many --device ($rc): $out"
out=$("$SLOAD" -f "$src" "$A0" --device "$A2" 2>&1) && fail "one device named twice passed"
[[ "$out" == *"is device 2 ($A2) too"* || "$out" == *"($A2) is device"* ]] || fail "device named twice: $out"
if command -v flock >/dev/null; then
  flock "$A1" sleep 60 & holder=$!
  sleep 0.5
  out=$("$SLOAD" -f "$src" "$A0" 2>&1) && fail "sload wrote while device 1 is held"
  [[ "$out" == *"in use"* ]] || fail "held device: $out"
  kill "$holder"; wait "$holder" 2>/dev/null; holder=""
fi
out=$("$RESIZE" "$A0" 2>&1) && fail "resize of a multi-device volume passed"
[[ "$out" == *"multi-device volumes cannot be resized"* ]] || fail "resize: $out"
[[ "$(cat "$A0" "$A1" "$A2" | cksum)" == "$sumA" ]] || fail "a refusal changed volume A"
echo "$name: refusals clear, nothing written"

# 3. Linux.
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then fail "Linux oracle not found at $oracle"; fi
  echo "$name: PASS (Linux part skipped: no oracle at $oracle)"; exit 0
fi
sums "$src" > "$T/src.sums"
cat > "$T/guest.sh" <<EOF
set -e
mkdir -p $T
ln -s /dev/vda $A0; ln -s /dev/vdb $A1; ln -s /dev/vdc $A2
ln -s /dev/vdd $B0; ln -s /dev/vde $B1
sums() { (cd "\$1" && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "\$f"; done); }
n=0
for v in a:/dev/vda b:/dev/vdd; do
  tag=\${v%%:*} dev=\${v#*:}
  mount -t f2fs \$dev /mnt || { echo "FAIL: Linux does not mount volume \$tag"; exit 1; }
  sums /mnt > /out/\$tag.read
  gtool pwrite /mnt/linux-big 0 20000000 7
  gtool pwrite /mnt/d/mid 1000000 2000000 8
  rm /mnt/d/f7
  mkdir /mnt/linux-dir
  echo from-linux > /mnt/linux-dir/note
  sync
  sums /mnt > /out/\$tag.after
  umount /mnt
done
echo GUEST-OK
EOF
mkdir -p "$T/guest-out"
"$oracle" --out "$T/guest-out" "$T/guest.sh" "$A0" "$A1" "$A2" "$B0" "$B1" > "$T/guest.log" 2>&1 ||
  { cat "$T/guest.log"; fail "the Linux guest failed"; }
grep -q GUEST-OK "$T/guest.log" || { cat "$T/guest.log"; fail "the guest script did not finish"; }
src2=$T/src2
mkdir -p "$src2/x"
head -c 8000000 /dev/urandom > "$src2/x/more"
echo again > "$src2/x/again"
for tag in a b; do
  if [[ $tag == a ]]; then v=$A0; devs=("$A0" "$A1" "$A2"); else v=$B0; devs=("$B0" "$B1"); fi
  diff "$T/src.sums" "$T/guest-out/$tag.read" || fail "Linux reads volume $tag otherwise than the tree"
  our_fsck "$v"
  ref_fsck "${devs[@]}"
  rm -rf "$T/out"; "$DUMP" "$v" extract / "$T/out" >"$T/dump.log" 2>&1 || { cat "$T/dump.log"; fail "extract of $tag after Linux"; }
  sums "$T/out" > "$T/ours.after"
  diff "$T/guest-out/$tag.after" "$T/ours.after" || fail "we read volume $tag otherwise than Linux left it"
  # We keep writing.
  "$SLOAD" -f "$src2" --target-dir /more -T 1700000500 "$v" >"$T/sload.log" 2>&1 || { cat "$T/sload.log"; fail "sload after Linux on $tag"; }
  our_fsck "$v"
  ref_fsck "${devs[@]}"
  rm -rf "$T/out"; "$DUMP" "$v" extract / "$T/out" >"$T/dump.log" 2>&1 || { cat "$T/dump.log"; fail "extract of $tag after sload"; }
  { cat "$T/guest-out/$tag.after"; (cd "$src2" && find . -type f | while read -r f; do echo "$(sha256sum < "$f" | cut -d' ' -f1)  ./more/${f#./}"; done); } |
    LC_ALL=C sort -k2 > "$T/expect"
  sums "$T/out" | LC_ALL=C sort -k2 > "$T/ours.final"
  diff "$T/expect" "$T/ours.final" || fail "volume $tag after our sload on Linux's tree"
done
echo "$name: PASS (Linux read both volumes byte for byte, wrote more; we read it, kept writing; both checkers clean)"
