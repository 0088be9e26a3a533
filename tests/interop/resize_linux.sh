#!/usr/bin/env bash
# f2fscore-resize against Linux: a volume populated with a tree (files of
# random data filling about half of it, a directory tree, small files) is
# shrunk by f2fscore-resize (the GC moving blocks out of the cut: the data
# was spread over the volume by deleting every other file after filling it
# with Linux), a copy is shrunk and grown back, and another copy is grown
# from 256 MiB to 1.5 GiB, past what its SSA area describes (the SIT, NAT and
# SSA moved, the main area's first segments emptied), and a populated
# 64 GiB volume is grown to 128 GiB, whose NAT is smaller by mkfs's rule
# (the grow cuts the NAT's free last segment), and a 256 MiB volume that
# Linux filled to ENOSPC and then freed every tenth file of (about 90% full,
# the data over the whole main area) is shrunk by 4% and grown back; Linux mounts all, reads
# the same tree (sha256 of every file, as listed before the resize), writes
# and unmounts; fsck.f2fs -f finds both clean afterwards.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_RESIZE. Skips (77)
# without ../shared/oracle/linux-f2fs, fails instead under
# F2FSCORE_REQUIRE_ORACLE=1.
set -uo pipefail
name=resize_linux.sh
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
MKFS=${F2FSCORE_MKFS:?} RESIZE=${F2FSCORE_RESIZE:?}
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    echo "$name: FAIL: Linux oracle not found at $oracle and F2FSCORE_REQUIRE_ORACLE=1" >&2; exit 1
  fi
  echo "$name: SKIP: Linux oracle not found at $oracle" >&2; exit 77
fi
T=$(mktemp -d /tmp/f2fscore-resize-linux.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/d/e"
for i in $(seq 1 20); do head -c $((i * 37)) /dev/urandom > "$T/src/d/e/s$i"; done
truncate -s 256M "$T/a.img"
"$MKFS" -q --populate "$T/src" "$T/a.img" || { echo "$name: FAIL: mkfs"; exit 1; }
truncate -s 256M "$T/e.img"
"$MKFS" -q "$T/e.img" || { echo "$name: FAIL: mkfs of e.img"; exit 1; }
# Linux fills the volume with 4 MiB files and deletes every other one, so
# that what stays is spread over the main area, across any cut.
cat > "$T/fill.sh" <<'GUEST'
mount -t f2fs /dev/vda /mnt || { echo "FAIL: mount"; exit 1; }
i=0
while [ $i -lt 48 ]; do dd if=/dev/urandom of=/mnt/f$i bs=1M count=4 2>/dev/null || break; i=$((i + 1)); done
sync
i=0
while [ $i -lt 48 ]; do rm -f /mnt/f$i; i=$((i + 2)); done
sync
(cd /mnt && find . -type f | sort | while read f; do sha256sum "$f"; done) > /out/sums
umount /mnt || { echo "FAIL: umount"; exit 1; }
echo "guest: filled, spread, $(wc -l < /out/sums) files summed"
mount -t f2fs /dev/vdb /mnt || { echo "FAIL: mount /dev/vdb"; exit 1; }
i=0
while dd if=/dev/urandom of=/mnt/g$i bs=1M count=4 2>/dev/null; do i=$((i + 1)); done
sync
j=0
while [ $j -le $i ]; do rm -f /mnt/g$j; j=$((j + 10)); done
sync
df -k /mnt | tail -1 > /out/df_e
(cd /mnt && find . -type f | sort | while read f; do sha256sum "$f"; done) > /out/sums_e
umount /mnt || { echo "FAIL: umount /dev/vdb"; exit 1; }
echo "guest: /dev/vdb filled to ENOSPC ($i files of 4 MiB), every tenth freed: $(cat /out/df_e)"
GUEST
mkdir -p "$T/out"
"$oracle" --out "$T/out" "$T/fill.sh" "$T/a.img" "$T/e.img" || { echo "$name: FAIL: filling in Linux"; exit 1; }
cp "$T/out/sums" "$T/sums"
e_small=$((246 * 2048))
"$RESIZE" --shrink -t $e_small "$T/e.img" || { echo "$name: FAIL: shrink of the 90% full volume by 4% exited $?"; exit 1; }
"$RESIZE" "$T/e.img" || { echo "$name: FAIL: grow back of the 90% full volume exited $?"; exit 1; }
cp --sparse=always "$T/a.img" "$T/b.img"
cp --sparse=always "$T/a.img" "$T/c.img"
truncate -s 1536M "$T/c.img"
"$RESIZE" "$T/c.img" || { echo "$name: FAIL: grow moving the metadata exited $?"; exit 1; }
small=$((200 * 2048))
"$RESIZE" --shrink -t $small "$T/a.img" || { echo "$name: FAIL: shrink exited $?"; exit 1; }
truncate -s $((small * 512)) "$T/a.img"
"$RESIZE" --shrink -t $small "$T/b.img" || { echo "$name: FAIL: shrink of the copy exited $?"; exit 1; }
"$RESIZE" "$T/b.img" || { echo "$name: FAIL: grow exited $?"; exit 1; }
truncate -s 64G "$T/d.img"
"$MKFS" -q --populate "$T/src" "$T/d.img" || { echo "$name: FAIL: mkfs of 64 GiB"; exit 1; }
truncate -s 128G "$T/d.img"
"$RESIZE" "$T/d.img" || { echo "$name: FAIL: grow 64 -> 128 GiB exited $?"; exit 1; }
mkdir -p "$T/in" && cp "$T/sums" "$T/in/sums"
(cd "$T/src" && find . -type f | sort | while read f; do sha256sum "$f"; done) > "$T/in/sums_d"
cp "$T/out/sums_e" "$T/in/sums_e"
cat > "$T/check.sh" <<'GUEST'
# check DEV SUMS WHAT: Linux mounts /dev/DEV, reads the tree listed in
# /in/SUMS, writes a file and unmounts.
check() {
  mount -t f2fs /dev/$1 /mnt || { echo "FAIL: Linux does not mount /dev/$1 ($3)"; exit 1; }
  (cd /mnt && find . -type f | sort | while read f; do sha256sum "$f"; done) > /tmp/sums.$1
  cmp /tmp/sums.$1 /in/$2 || { echo "FAIL: /dev/$1: the tree differs"; diff /tmp/sums.$1 /in/$2 | head; exit 1; }
  dd if=/dev/urandom of=/mnt/new bs=1M count=2 2>/dev/null && sync || { echo "FAIL: write on /dev/$1"; exit 1; }
  umount /mnt || { echo "FAIL: umount /dev/$1"; exit 1; }
  echo "guest: /dev/$1 ($3) mounted, $(wc -l < /in/$2) files read back equal, written, unmounted"
}
check vda sums "shrunk"
check vdb sums "shrunk and grown back"
check vdc sums "grown, the metadata areas moved"
check vdd sums_d "64 -> 128 GiB"
check vde sums_e "90% full, shrunk by 4%, grown back"
GUEST
out=$("$oracle" --in "$T/in" --dmesg "$T/check.sh" "$T/a.img" "$T/b.img" "$T/c.img" "$T/d.img" "$T/e.img" 2>&1)
rc=$?
echo "$out"
if [[ $rc != 0 ]]; then echo "$name: FAIL: guest exited $rc"; exit 1; fi
if command -v fsck.f2fs >/dev/null; then
  for img in a b c d e; do
    o=$(fsck.f2fs -f "$T/$img.img" </dev/null 2>&1)
    if printf '%s\n' "$o" | grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg'; then
      echo "$o"; echo "$name: FAIL: fsck.f2fs -f finds $img.img not clean after Linux"; exit 1
    fi
  done
fi
echo "$name: PASS"
