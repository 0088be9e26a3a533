#!/usr/bin/env bash
# Read-only images (the ro feature, as Android's system partitions):
#  1. mkfs.f2fs -O ro and sload.f2fs fill an image with a tree (a file of
#     several segments, so that full data segments have no summary, an
#     inline file, an empty file, a symlink, nested directories); our fsck
#     (-f -n) calls it clean and f2fscore-dump extracts exactly the tree
#     (diff -r against the source).
#  2. f2fscore-mkfs -O ro (and with lost_found, extra_attr): fsck.f2fs -f
#     calls it clean, and so does ours (mkfs_parity_test compares it with
#     mkfs.f2fs's block for block).
#  3. f2fscore-sload onto either image refuses (exit 1, the message names
#     the ro feature) and writes nothing (sha256 before = after).
#  4. With the Linux oracle: Linux 6.1 mounts both read-only; the sha256 of
#     every file of the first and its listing equal the source tree's; a
#     read-write mount ends read-only.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_FSCK, F2FSCORE_DUMP,
# F2FSCORE_SLOAD. Skips (77) without f2fs-tools (mkfs.f2fs, sload.f2fs,
# fsck.f2fs), failing instead under F2FSCORE_REQUIRE_FSCK=1; the Linux part
# is skipped without the oracle unless F2FSCORE_REQUIRE_ORACLE=1.
set -uo pipefail
name=ro_image.sh
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
MKFS=${F2FSCORE_MKFS:?} FSCK=${F2FSCORE_FSCK:?} DUMP=${F2FSCORE_DUMP:?} SLOAD=${F2FSCORE_SLOAD:?}
for t in mkfs.f2fs sload.f2fs fsck.f2fs; do
  if ! command -v "$t" >/dev/null 2>&1 && [[ ! -x /usr/sbin/$t ]]; then
    if [[ "${F2FSCORE_REQUIRE_FSCK:-0}" == 1 ]]; then echo "$name: FAIL: $t not found" >&2; exit 1; fi
    echo "$name: SKIP: $t not found (install f2fs-tools)" >&2; exit 77
  fi
done
export PATH="$PATH:/usr/sbin:/sbin"
T=$(mktemp -d /tmp/f2fscore-ro-image.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "$name: FAIL: $*"; exit 1; }

# The source tree.
src=$T/src
mkdir -p "$src/system/bin" "$src/system/lib64" "$src/system/etc/init" "$src/apex/com.example"
printf 'inline\n' > "$src/system/etc/hosts"
: > "$src/system/etc/empty"
head -c 5000000 /dev/urandom > "$src/apex/com.example/big.apex"   # ~2.4 segments
for i in $(seq 1 40); do head -c $((i * 1000)) /dev/urandom > "$src/system/lib64/lib$i.so"; done
printf '#!/bin/sh\necho hi\n' > "$src/system/bin/sh"
chmod 755 "$src/system/bin/sh"
ln -s /system/bin/sh "$src/system/bin/toybox"
for i in $(seq 1 30); do echo "service s$i /system/bin/sh" > "$src/system/etc/init/s$i.rc"; done

# 1. mkfs.f2fs + sload.f2fs.
theirs=$T/theirs.img
truncate -s 64M "$theirs"
mkfs.f2fs -f -q -O ro "$theirs" >"$T/mkfs.log" 2>&1 || { cat "$T/mkfs.log"; fail "mkfs.f2fs -O ro"; }
sload.f2fs -f "$src" -T 1700000000 "$theirs" >"$T/sload.log" 2>&1 || { cat "$T/sload.log"; fail "sload.f2fs"; }
fsck.f2fs -f "$theirs" >"$T/ref-fsck.log" 2>&1 || { cat "$T/ref-fsck.log"; fail "fsck.f2fs rejects sload.f2fs's ro image"; }
"$FSCK" -f -n "$theirs" >"$T/fsck.log" 2>&1 || { cat "$T/fsck.log"; fail "our fsck -f -n exits $? on sload.f2fs's ro image"; }
"$DUMP" "$theirs" extract / "$T/out" >"$T/dump.log" 2>&1 || { cat "$T/dump.log"; fail "f2fscore-dump extract exits $?"; }
diff -r --no-dereference "$src" "$T/out" || fail "the extraction of sload.f2fs's ro image differs from the tree"
echo "$name: sload.f2fs's ro image: our fsck clean, extraction equal to the tree"

# 2. Ours.
ours=$T/ours.img
truncate -s 64M "$ours"
"$MKFS" -q -O ro,extra_attr,lost_found "$ours" || fail "f2fscore-mkfs -O ro exits $?"
cp --sparse=always "$ours" "$T/ours-copy.img"
fsck.f2fs -f "$T/ours-copy.img" >"$T/ours-fsck.log" 2>&1 || { cat "$T/ours-fsck.log"; fail "fsck.f2fs -f exits $? on our ro image"; }
if grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing' "$T/ours-fsck.log"; then cat "$T/ours-fsck.log"; fail "fsck.f2fs reports problems on our ro image"; fi
"$FSCK" -f -n "$ours" >"$T/fsck2.log" 2>&1 || { cat "$T/fsck2.log"; fail "our fsck on our ro image"; }
echo "$name: f2fscore-mkfs -O ro: clean under fsck.f2fs -f and ours"

# 3. Writing refused, nothing written.
for img in "$theirs" "$ours"; do
  before=$(sha256sum < "$img")
  "$SLOAD" -f "$src/system/etc" -t /more "$img" >"$T/sl.log" 2>&1; rc=$?
  [[ $rc -eq 1 ]] || { cat "$T/sl.log"; fail "f2fscore-sload onto an ro image exits $rc, not 1"; }
  grep -q "ro feature" "$T/sl.log" || { cat "$T/sl.log"; fail "the refusal does not name the ro feature"; }
  [[ $(sha256sum < "$img") == "$before" ]] || fail "a refused f2fscore-sload changed $(basename "$img")"
done
echo "$name: f2fscore-sload refuses both ro images (exit 1) and writes nothing"

# 4. Linux.
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then fail "Linux oracle not found at $oracle"; fi
  echo "$name: PASS (Linux part skipped: no oracle at $oracle)"; exit 0
fi
(cd "$src" && find . | LC_ALL=C sort > "$T/want.list" && find . -type f | LC_ALL=C sort | xargs sha256sum > "$T/want.sums")
mkdir -p "$T/guest-out"
cat > "$T/guest.sh" <<'GUEST'
# The kernel refuses a read-write mount (EROFS); busybox's mount then retries
# read-only, so what counts is the mount's state.
if mount -t f2fs /dev/vda /mnt 2>/dev/null; then
  opts=$(awk '$2 == "/mnt" { print $4 }' /proc/mounts)
  case ",$opts," in *,ro,*) ;; *) echo "FAIL: Linux mounted the ro image read-write ($opts)"; exit 1 ;; esac
  umount /mnt
fi
mount -t f2fs -o ro /dev/vda /mnt || { echo "FAIL: Linux does not mount sload.f2fs's ro image read-only"; exit 1; }
mount -t f2fs -o ro /dev/vdb /mnt2 || { echo "FAIL: Linux does not mount our ro image read-only"; exit 1; }
[ -d /mnt2/lost+found ] || { echo "FAIL: our ro image has no lost+found under Linux"; exit 1; }
cd /mnt && find . | LC_ALL=C sort > /out/got.list && find . -type f | LC_ALL=C sort | xargs sha256sum > /out/got.sums
echo "guest: both mounted read-only"
GUEST
"$oracle" --out "$T/guest-out" "$T/guest.sh" "$theirs" "$ours" > "$T/guest.log" 2>&1 || { cat "$T/guest.log"; fail "the Linux guest failed"; }
cmp -s "$T/want.list" "$T/guest-out/got.list" || { diff "$T/want.list" "$T/guest-out/got.list" | head; fail "Linux lists another tree"; }
cmp -s "$T/want.sums" "$T/guest-out/got.sums" || { diff "$T/want.sums" "$T/guest-out/got.sums" | head; fail "Linux reads other bytes"; }
echo "$name: PASS (Linux mounts both read-only, never read-write, reads the tree: $(wc -l < "$T/want.sums") files)"
