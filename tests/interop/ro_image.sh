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
#  3. f2fscore-sload fills ro images at build time (the writer's
#     build_ro_image mode): ours with compression, sload.f2fs's -c, -a, -L,
#     -i, -m, -r (lz4 files released, a zstd tree added by a second run
#     under --target-dir), and a copy of sload.f2fs's image with more files; both
#     checkers clean, the extraction equal to the trees. Refused, with
#     nothing written (cksum before = after): compression options on a
#     volume without the compression feature (exit 1; sload.f2fs returns 0
#     there), and with F2FSCORE_FUSE and /dev/fuse, f2fscore-fuse read-write
#     (its -o ro reads the tree).
#  4. With the Linux oracle, one boot: Linux 6.1 mounts all three
#     read-only; the sha256 of every file of sload.f2fs's and of our
#     compressed image and their listings equal the source trees'; a
#     read-write mount ends read-only.
# Debian's sload.f2fs 1.15 is built without LZO and LZ4: its -c fails ("The
# selected compression algorithm is not supported", exit 0), so no
# compressed image of sload.f2fs is compared.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_FSCK, F2FSCORE_DUMP,
# F2FSCORE_SLOAD (F2FSCORE_FUSE optional). Skips (77) without f2fs-tools
# (mkfs.f2fs, sload.f2fs, fsck.f2fs), failing instead under
# F2FSCORE_REQUIRE_FSCK=1; the Linux part is skipped without the oracle
# unless F2FSCORE_REQUIRE_ORACLE=1.
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
seq 1 60000 > "$src/system/lib64/libseq.so"                          # compressible: clusters saved
seq 1 90000 > "$src/apex/com.example/seq.txt"

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

# 3. Filled at build time.
fsck_both() {  # IMAGE WHAT: both checkers clean
  "$FSCK" -f -n "$1" >"$T/f.log" 2>&1 || { cat "$T/f.log"; fail "our fsck on $2 exits $?"; }
  cp --sparse=always "$1" "$T/copy.img"
  fsck.f2fs -f "$T/copy.img" >"$T/rf.log" 2>&1 || { cat "$T/rf.log"; fail "fsck.f2fs -f exits $? on $2"; }
  if grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' "$T/rf.log"; then
    cat "$T/rf.log"; fail "fsck.f2fs reports problems on $2"
  fi
}
comp=$T/comp.img
truncate -s 64M "$comp"
"$MKFS" -q -O ro,extra_attr,compression "$comp" || fail "f2fscore-mkfs -O ro,extra_attr,compression exits $?"
"$SLOAD" -q -f "$src" -T 1700000000 -c -a lz4 -i so -i rc -r "$comp" || fail "f2fscore-sload -c -a lz4 -i so -i rc -r exits $?"
"$SLOAD" -q -f "$src/apex" --target-dir /zstd -T 1700000000 -c -a zstd -L 4 -m 2 "$comp" ||
  fail "f2fscore-sload --target-dir /zstd -c -a zstd -L 4 -m 2 exits $?"
fsck_both "$comp" "our compressed ro image"
"$DUMP" "$comp" inode /system/lib64/libseq.so > "$T/i.log" 2>&1 || { cat "$T/i.log"; fail "dump inode libseq.so"; }
grep -q compress_released "$T/i.log" || { cat "$T/i.log"; fail "libseq.so (-i so -r) is not released"; }
grep -qE 'i_compr_blocks[[:space:]]+\[0x +0 ' "$T/i.log" || { cat "$T/i.log"; fail "released libseq.so keeps i_compr_blocks"; }
"$DUMP" "$comp" inode /zstd/com.example/big.apex > "$T/i.log" 2>&1 || { cat "$T/i.log"; fail "dump inode big.apex"; }
grep -q zstd "$T/i.log" || { cat "$T/i.log"; fail "/zstd/com.example/big.apex is not zstd-compressed"; }
"$DUMP" "$comp" inode /zstd/com.example/seq.txt > "$T/i.log" 2>&1 || { cat "$T/i.log"; fail "dump inode seq.txt"; }
grep -qE 'i_compr_blocks[[:space:]]+\[0x +[1-9a-f]' "$T/i.log" || { cat "$T/i.log"; fail "/zstd/com.example/seq.txt saves no block"; }
rm -rf "$T/out2" && "$DUMP" "$comp" extract / "$T/out2" >/dev/null 2>&1 || fail "f2fscore-dump extract of our compressed image"
mv "$T/out2/zstd" "$T/zstd-out"
diff -r --no-dereference "$src" "$T/out2" || fail "our compressed ro image: / differs from the tree"
diff -r --no-dereference "$src/apex" "$T/zstd-out" || fail "our compressed ro image: /zstd differs from the tree"
cp --sparse=always "$theirs" "$T/theirs-more.img"
"$SLOAD" -q -f "$src/system/etc" --target-dir /more "$T/theirs-more.img" || fail "f2fscore-sload onto sload.f2fs's ro image exits $?"
fsck_both "$T/theirs-more.img" "sload.f2fs's ro image with our /more"
echo "$name: f2fscore-sload fills ro images (compressed, released, and sload.f2fs's): both checkers clean, trees equal"

# Refusals, nothing written.
plain=$T/plain.img
truncate -s 64M "$plain"
"$MKFS" -q -O ro "$plain" || fail "f2fscore-mkfs -O ro exits $?"
before=$(cksum < "$plain")
"$SLOAD" -f "$src" -c "$plain" >"$T/sl.log" 2>&1; rc=$?
[[ $rc -eq 1 ]] || { cat "$T/sl.log"; fail "f2fscore-sload -c without the compression feature exits $rc, not 1"; }
grep -q "compression feature" "$T/sl.log" || { cat "$T/sl.log"; fail "the refusal does not name the compression feature"; }
[[ $(cksum < "$plain") == "$before" ]] || fail "a refused f2fscore-sload -c changed the image"
if [[ -n "${F2FSCORE_FUSE:-}" && -c /dev/fuse ]] && command -v fusermount3 >/dev/null; then
  before=$(cksum < "$comp")
  mkdir -p "$T/mnt"
  timeout 30 "$F2FSCORE_FUSE" -f "$comp" "$T/mnt" >"$T/fu.log" 2>&1; rc=$?
  [[ $rc -eq 1 ]] || { cat "$T/fu.log"; fusermount3 -u "$T/mnt" 2>/dev/null; fail "f2fscore-fuse read-write on an ro image exits $rc, not 1"; }
  grep -q "ro feature" "$T/fu.log" || { cat "$T/fu.log"; fail "the fuse refusal does not name the ro feature"; }
  "$F2FSCORE_FUSE" -f -o ro "$comp" "$T/mnt" >"$T/fu.log" 2>&1 &
  fpid=$!
  for _ in $(seq 1 100); do mountpoint -q "$T/mnt" && break; sleep 0.1; done
  diff -r --no-dereference "$src/system" "$T/mnt/system"; drc=$?
  fusermount3 -u "$T/mnt"; wait "$fpid"
  [[ $drc -eq 0 ]] || fail "f2fscore-fuse -o ro reads another tree"
  [[ $(cksum < "$comp") == "$before" ]] || fail "f2fscore-fuse changed the ro image"
  echo "$name: f2fscore-fuse refuses the ro image read-write (nothing written) and reads it with -o ro"
fi
echo "$name: compression options without the feature refused (exit 1), nothing written"

# 4. Linux.
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then fail "Linux oracle not found at $oracle"; fi
  echo "$name: PASS (Linux part skipped: no oracle at $oracle)"; exit 0
fi
(cd "$src" && find . | LC_ALL=C sort > "$T/want.list" && find . -type f | LC_ALL=C sort | xargs sha256sum > "$T/want.sums")
# Our compressed image: the tree at / and src/apex again at /zstd.
rm -rf "$T/want3" && mkdir -p "$T/want3" && cp -a "$src/." "$T/want3/" && cp -a "$src/apex" "$T/want3/zstd"
(cd "$T/want3" && find . | LC_ALL=C sort > "$T/want3.list" && find . -type f | LC_ALL=C sort | xargs sha256sum > "$T/want3.sums")
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
mkdir -p /mnt3
mount -t f2fs -o ro /dev/vdc /mnt3 || { echo "FAIL: Linux does not mount our compressed ro image read-only"; exit 1; }
cd /mnt && find . | LC_ALL=C sort > /out/got.list && find . -type f | LC_ALL=C sort | xargs sha256sum > /out/got.sums
cd /mnt3 && find . | LC_ALL=C sort > /out/got3.list && find . -type f | LC_ALL=C sort | xargs sha256sum > /out/got3.sums
echo "guest: all three mounted read-only"
GUEST
"$oracle" --out "$T/guest-out" "$T/guest.sh" "$theirs" "$ours" "$comp" > "$T/guest.log" 2>&1 || { cat "$T/guest.log"; fail "the Linux guest failed"; }
cmp -s "$T/want.list" "$T/guest-out/got.list" || { diff "$T/want.list" "$T/guest-out/got.list" | head; fail "Linux lists another tree"; }
cmp -s "$T/want.sums" "$T/guest-out/got.sums" || { diff "$T/want.sums" "$T/guest-out/got.sums" | head; fail "Linux reads other bytes"; }
cmp -s "$T/want3.list" "$T/guest-out/got3.list" || { diff "$T/want3.list" "$T/guest-out/got3.list" | head; fail "Linux lists another tree in our compressed image"; }
cmp -s "$T/want3.sums" "$T/guest-out/got3.sums" || { diff "$T/want3.sums" "$T/guest-out/got3.sums" | head; fail "Linux reads other bytes from our compressed image"; }
echo "$name: PASS (Linux mounts all three read-only, never read-write, reads the trees: $(wc -l < "$T/want.sums") and $(wc -l < "$T/want3.sums") files)"
