#!/usr/bin/env bash
# Every tool that writes refuses a target in use, and writes nothing:
#   (a) a mounted device: ext4 on a loop device, mounted;
#   (b) a mounted image file: the image behind that loop device;
#   (c) a block device another process holds with O_EXCL (a python3 helper),
#       and the image file behind it;
#   (d) the second device of a two-device volume (mkfs -c), an image behind
#       a loop device held with O_EXCL: sload, fsck -y / -p, io fs and
#       mkfs -c refuse the volume, neither device changes.
# Tools: f2fscore-mkfs (plain and --populate), f2fscore-fsck -y / -p / -a,
# f2fscore-sload, f2fscore-io --rw write / randwrite, f2fscore-io fs,
# f2fscore-label DEVICE LABEL (when F2FSCORE_LABEL names it), f2fscore-tune
# -l LABEL and -O encrypt (when F2FSCORE_TUNE names it), f2fscore-resize
# --shrink (when F2FSCORE_RESIZE names it). Each
# case checks the exit status, the message, and the target's SHA-256 before
# and after. Also: f2fscore-fsck -n on a device in use checks it read-only
# (as e2fsck -n), -p on a read-only loop device (blockdev --setro) and on an
# image without write permission checks it as -n, and f2fscore-io refuses a
# raw write over another file system unless --force.
#
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_FSCK, F2FSCORE_SLOAD,
# F2FSCORE_IO. Needs root, loop devices, mkfs.ext4, mount, python3 and
# blockdev: without them it skips (77), or fails (1) under
# F2FSCORE_REQUIRE_ORACLE=1 or CI=true. Loop devices, mounts and the helper
# are removed on every exit.
set -uo pipefail

name=in_use.sh
strict=0
[[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 || "${CI:-}" == "true" ]] && strict=1
skip() {
  if [[ $strict == 1 ]]; then
    echo "$name: FAIL: cannot run: $* (F2FSCORE_REQUIRE_ORACLE=1 or CI=true)" >&2
    exit 1
  fi
  echo "$name: SKIP: $*"
  exit 77
}
[[ $(id -u) == 0 ]] || skip "needs root (loop devices, mount)"
for c in losetup mkfs.ext4 mount umount python3 blockdev sha256sum setpriv; do
  command -v "$c" >/dev/null 2>&1 || skip "$c not found"
done
MKFS=${F2FSCORE_MKFS:?} FSCK=${F2FSCORE_FSCK:?} SLOAD=${F2FSCORE_SLOAD:?} IO=${F2FSCORE_IO:?}
LABEL=${F2FSCORE_LABEL:-}
TUNE=${F2FSCORE_TUNE:-}
RESIZE=${F2FSCORE_RESIZE:-}

T=$(mktemp -d /tmp/f2fscore-in-use.XXXXXX)
loops=()
mounted=()
helper=""
cleanup() {
  [[ -n "$helper" ]] && kill "$helper" 2>/dev/null && wait "$helper" 2>/dev/null
  local m l
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  # blockdev --setro outlives the detach: the next user of the device
  # would find it read-only.
  for l in "${loops[@]}"; do blockdev --setrw "$l" 2>/dev/null; losetup -d "$l" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

attach() {  # attach FILE: the loop device in $dev (and in loops, for cleanup)
  dev=$(losetup -f --show "$1" 2>/dev/null) || return 1
  loops+=("$dev")
}

fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "$name: FAIL: $*" >&2; fails=$((fails + 1)); }

# Runs a tool on `target`: it must exit `want` with `msg` in its output and
# leave the target byte-identical.
refuses() {
  local what=$1 target=$2 want=$3 msg=$4
  shift 4
  local before after out rc
  before=$(sha256sum <"$target" | cut -d' ' -f1)
  out=$("$@" 2>&1)
  rc=$?
  after=$(sha256sum <"$target" | cut -d' ' -f1)
  if [[ $rc != "$want" ]]; then
    bad "$what: exit $rc, expected $want: $out"
  elif [[ "$out" != *"$msg"* ]]; then
    bad "$what: no \"$msg\" in: $out"
  elif [[ "$before" != "$after" ]]; then
    bad "$what: the target changed (sha256 $before -> $after)"
  else
    ok
  fi
}

# Every writing tool against one target in use; `why` is what the message
# must name ("is mounted on", "held open exclusively").
every_tool() {
  local label=$1 target=$2 why=$3
  refuses "$label: f2fscore-mkfs" "$target" 1 "$why" "$MKFS" -f "$target"
  refuses "$label: f2fscore-mkfs --populate" "$target" 1 "$why" "$MKFS" -f --populate "$T/src" "$target"
  refuses "$label: f2fscore-fsck -y" "$target" 8 "$why" "$FSCK" -y "$target"
  refuses "$label: f2fscore-fsck -p" "$target" 8 "$why" "$FSCK" -p "$target"
  refuses "$label: f2fscore-fsck -a" "$target" 8 "$why" "$FSCK" -a "$target"
  refuses "$label: f2fscore-sload" "$target" 1 "$why" "$SLOAD" -f "$T/src" "$target"
  if [[ -f "$target" ]]; then  # -S replaces an image file
    refuses "$label: f2fscore-mkfs -S" "$target" 1 "$why" "$MKFS" -f -S 67108864 "$target"
    refuses "$label: f2fscore-sload -S" "$target" 1 "$why" "$SLOAD" -S -f "$T/src" "$target"
  fi
  refuses "$label: f2fscore-io --rw write" "$target" 1 "$why" "$IO" "$target" --rw write --bs 4k --size 1m --buffered
  refuses "$label: f2fscore-io --rw randwrite" "$target" 1 "$why" "$IO" "$target" --rw randwrite --bs 4k --size 1m
  refuses "$label: f2fscore-io fs" "$target" 1 "$why" "$IO" fs "$target" --workload overwrite
  if [[ -n "$LABEL" ]]; then
    refuses "$label: f2fscore-label" "$target" 1 "$why" "$LABEL" "$target" newlabel
  fi
  if [[ -n "$TUNE" ]]; then
    refuses "$label: f2fscore-tune -l" "$target" 1 "$why" "$TUNE" -l newlabel "$target"
    refuses "$label: f2fscore-tune -O encrypt" "$target" 1 "$why" "$TUNE" -O encrypt "$target"
  fi
  if [[ -n "$RESIZE" ]]; then
    refuses "$label: f2fscore-resize --shrink" "$target" 1 "$why" "$RESIZE" --shrink -t 65536 "$target"
  fi
  # The messages say why (and -n would check it read-only).
  refuses "$label: f2fscore-fsck -y names -n" "$target" 8 "-n checks it read-only" "$FSCK" -y "$target"
}

mkdir -p "$T/src/d" "$T/mnt"
echo hello >"$T/src/d/file"

# (a), (b): ext4 on a loop device, mounted read-only (nothing the kernel
# writes changes the hashes).
truncate -s 64M "$T/ext.img"
attach "$T/ext.img" || skip "no loop device (losetup -f failed)"
L1=$dev
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$L1" >/dev/null 2>&1 || skip "mkfs.ext4 failed"
mount -o ro "$L1" "$T/mnt" 2>/dev/null || skip "cannot mount ext4 on $L1"
mounted+=("$T/mnt")
every_tool "(a) mounted $L1" "$L1" "is mounted on $T/mnt (ext4)"
every_tool "(b) image behind mounted $L1" "$T/ext.img" "backs $L1, which is mounted on $T/mnt (ext4)"
# fsck -n on a mounted device: it checks (read-only, with the warning);
# here the ext4 volume has no F2FS superblock, so the check itself fails.
refuses "(a) f2fscore-fsck -n on mounted $L1" "$L1" 8 "is mounted on $T/mnt (ext4); checking it read-only" \
  "$FSCK" -n "$L1"

# (c): an F2FS image on a loop device held with O_EXCL by another process.
truncate -s 64M "$T/f2.img"
"$MKFS" "$T/f2.img" >/dev/null || { bad "f2fscore-mkfs $T/f2.img failed"; exit 1; }
attach "$T/f2.img" || skip "no second loop device"
L2=$dev
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
open(sys.argv[2], "w").close()
time.sleep(600)
' "$L2" "$T/held" &
helper=$!
for _ in $(seq 100); do [[ -e "$T/held" ]] && break; sleep 0.05; done
[[ -e "$T/held" ]] || { bad "the O_EXCL helper did not start"; exit 1; }
every_tool "(c) $L2 held with O_EXCL" "$L2" "held open exclusively (O_EXCL) by another program"
every_tool "(c) image behind held $L2" "$T/f2.img" "backs $L2, which is held open exclusively"
# fsck -n on the held device checks it, read-only: clean, exit 0.
refuses "(c) f2fscore-fsck -n on held $L2" "$L2" 0 "checking it read-only" "$FSCK" -n "$L2"
kill "$helper" 2>/dev/null
wait "$helper" 2>/dev/null
helper=""
# Released: the same device is accepted (the refusals were the hold's).
if out=$("$FSCK" -y "$L2" 2>&1); then ok; else bad "fsck -y on $L2 once released: $out"; fi

# (d): a two-device volume (mkfs -c) whose device 1 is an image behind a
# loop device held with O_EXCL: every tool that writes the volume checks
# each device before its first write and refuses; neither device changes.
truncate -s 64M "$T/md0.img"
truncate -s 64M "$T/md1.img"
"$MKFS" -c "$T/md1.img" "$T/md0.img" >/dev/null || { bad "f2fscore-mkfs -c failed"; exit 1; }
attach "$T/md1.img" || skip "no loop device for the second device"
L4=$dev
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
open(sys.argv[2], "w").close()
time.sleep(600)
' "$L4" "$T/held4" &
helper=$!
for _ in $(seq 100); do [[ -e "$T/held4" ]] && break; sleep 0.05; done
[[ -e "$T/held4" ]] || { bad "the O_EXCL helper did not start"; exit 1; }
md1_before=$(sha256sum <"$T/md1.img")
why="$T/md1.img backs $L4, which is held open exclusively"
refuses "(d) f2fscore-sload, device 1 held" "$T/md0.img" 1 "$why" "$SLOAD" -f "$T/src" "$T/md0.img"
refuses "(d) f2fscore-fsck -y, device 1 held" "$T/md0.img" 8 "$why" "$FSCK" -y -f "$T/md0.img"
refuses "(d) f2fscore-fsck -p, device 1 held" "$T/md0.img" 8 "$why" "$FSCK" -p "$T/md0.img"
refuses "(d) f2fscore-io fs, device 1 held" "$T/md0.img" 1 "$why" "$IO" fs "$T/md0.img" --workload overwrite
refuses "(d) f2fscore-mkfs -c, device 1 held" "$T/md0.img" 1 "$why" "$MKFS" -f -c "$T/md1.img" "$T/md0.img"
[[ "$(sha256sum <"$T/md1.img")" == "$md1_before" ]] && ok || bad "(d) device 1 changed"
# fsck -n reads it (read-only): clean.
refuses "(d) f2fscore-fsck -n, device 1 held" "$T/md0.img" 0 "clean" "$FSCK" -n -f "$T/md0.img"
kill "$helper" 2>/dev/null
wait "$helper" 2>/dev/null
helper=""
if out=$("$SLOAD" -f "$T/src" "$T/md0.img" 2>&1); then ok; else bad "sload on the volume once released: $out"; fi

# -p/-a on a read-only device checks it as -n: a read-only loop device.
cp --sparse=always "$T/f2.img" "$T/ro.img"
attach "$T/ro.img" || skip "no third loop device"
L3=$dev
blockdev --setro "$L3"
refuses "f2fscore-fsck -p on read-only $L3" "$L3" 0 "is read-only: checking it without repairs" "$FSCK" -p "$L3"
refuses "f2fscore-fsck -a on read-only $L3" "$L3" 0 "is read-only: checking it without repairs" "$FSCK" -a "$L3"
refuses "f2fscore-fsck -y on read-only $L3" "$L3" 8 "read-only" "$FSCK" -y "$L3"
# ... and an image without write permission, for a user who cannot write it.
cp --sparse=always "$T/f2.img" "$T/perm.img"
cp "$FSCK" "$T/fsck-copy"
chmod 0444 "$T/perm.img"
chmod 0755 "$T" "$T/fsck-copy"
refuses "f2fscore-fsck -p on an image without write permission" "$T/perm.img" 0 \
  "is read-only: checking it without repairs" setpriv --reuid=65534 --regid=65534 --clear-groups "$T/fsck-copy" -p "$T/perm.img"

# Raw writes over a file system of another kind: refused, unless --force.
umount "$T/mnt" && mounted=()
keep=()
for l in "${loops[@]}"; do [[ "$l" == "$L1" ]] || keep+=("$l"); done
losetup -d "$L1" && loops=("${keep[@]}")
refuses "f2fscore-io --rw write over ext4 (not mounted)" "$T/ext.img" 1 "holds a file system of another kind (ext4)" \
  "$IO" "$T/ext.img" --rw write --bs 4k --size 1m --buffered
before=$(sha256sum <"$T/ext.img")
if out=$("$IO" "$T/ext.img" --rw write --bs 4k --size 1m --buffered --force 2>&1) &&
   [[ "$out" == *"writing over it (--force)"* ]] && [[ "$(sha256sum <"$T/ext.img")" != "$before" ]]; then
  ok
else
  bad "f2fscore-io --force over ext4: $out"
fi

echo "$name: $passes passed, $fails failed"
[[ $fails == 0 ]]
