#!/usr/bin/env bash
# Android sparse images against the reference tools of the format,
# img2simg and simg2img (Debian: android-sdk-libsparse-utils), and
# fsck.f2fs:
#  1. f2fscore-mkfs -S SIZE, expanded by simg2img, is byte for byte the raw
#     image f2fscore-mkfs makes with the same options.
#  2. img2simg of a populated raw image: f2fscore-fsck -n -f, f2fscore-dump
#     info and extraction read the sparse image directly with the results
#     of the raw one; the Linux-made images of ../shared/images/syzkaller,
#     as img2simg makes them sparse, extract as Linux reads them.
#  3. f2fscore-sload -S into the sparse image, expanded by simg2img, is byte
#     for byte f2fscore-sload into the raw image, and fsck.f2fs -f finds it
#     clean.
#  4. Refusals, each leaving the file as it was: sload without -S onto a
#     sparse image, mkfs without -f onto one, mkfs -S onto an existing file
#     without -f, sload -S onto a raw image, sload -S of a tree that does not
#     fit; a truncated and a mangled sparse image give a clear error from
#     fsck and dump (no crash).
#   sparse_images.sh MKFS SLOAD FSCK DUMP
# Skips (77) without img2simg/simg2img or a build without libsparse, unless
# F2FSCORE_REQUIRE_SPARSE=1.
set -uo pipefail
MKFS=$1 SLOAD=$2 FSCK=$3 DUMP=$4
skip() {
  if [[ ${F2FSCORE_REQUIRE_SPARSE:-0} == 1 ]]; then echo "FAIL: $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
command -v img2simg >/dev/null && command -v simg2img >/dev/null ||
  skip "img2simg/simg2img not installed (android-sdk-libsparse-utils)"
T=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-sparse.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
opts=(-q -l sparse -U 5a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9 -T 1700000000 -O extra_attr,inode_checksum,sb_checksum)
size=$((256 << 20))

# A source tree: a file with a hole, small files, a symlink, a directory.
src=$T/src
mkdir -p "$src/etc/init" "$src/bin"
head -c 300000 /dev/urandom >"$src/bin/app"
truncate -s 2M "$src/bin/sparse" && printf 'tail' >>"$src/bin/sparse"
for i in $(seq 1 50); do echo "line $i" >"$src/etc/init/f$i.rc"; done
ln -s ../bin/app "$src/etc/link"

# 1. mkfs -S against the raw image.
truncate -s $size "$T/raw.img"
"$MKFS" "${opts[@]}" "$T/raw.img" || bad "mkfs raw"
out=$("$MKFS" "${opts[@]}" -S $size "$T/s.simg" 2>&1)
if [[ $out == *"without libsparse"* ]]; then skip "this build writes no sparse images: $out"; fi
[[ -z $out ]] || bad "mkfs -S printed: $out"
simg2img "$T/s.simg" "$T/s.expanded" || bad "simg2img of our mkfs -S output"
cmp -s "$T/raw.img" "$T/s.expanded" || bad "mkfs -S, expanded, differs from the raw mkfs image"
echo "1. mkfs -S: $(stat -c %s "$T/s.simg") bytes, expanded equal to the raw image"

# 2. img2simg of a populated raw image, read directly.
truncate -s $size "$T/pop.img"
"$MKFS" "${opts[@]}" --populate "$src" "$T/pop.img" || bad "mkfs --populate"
img2simg "$T/pop.img" "$T/pop.simg" || bad "img2simg"
"$FSCK" -n -f "$T/pop.simg" >"$T/fsck.simg.txt" 2>&1 || bad "fsck -n -f of the sparse image: $(cat "$T/fsck.simg.txt")"
"$FSCK" -n -f "$T/pop.img" >"$T/fsck.raw.txt" 2>&1
# The same report but the path and the time taken.
diff <(sed "s|$T/pop.simg|IMG|g; s/; [0-9.]* s\$//" "$T/fsck.simg.txt") \
     <(sed "s|$T/pop.img|IMG|g; s/; [0-9.]* s\$//" "$T/fsck.raw.txt") ||
  bad "fsck's report of the sparse image differs from the raw one's"
"$DUMP" "$T/pop.simg" info | sed "s|$T/pop.simg|IMG|" >"$T/info.simg" || bad "dump info of the sparse image"
"$DUMP" "$T/pop.img" info | sed "s|$T/pop.img|IMG|" >"$T/info.raw"
diff -u "$T/info.raw" "$T/info.simg" || bad "dump info of the sparse image differs from the raw one's"
mkdir "$T/x.simg" "$T/x.raw"
"$DUMP" "$T/pop.simg" extract / "$T/x.simg" >/dev/null || bad "extract from the sparse image"
"$DUMP" "$T/pop.img" extract / "$T/x.raw" >/dev/null
diff -r --no-dereference "$T/x.raw" "$T/x.simg" || bad "the trees extracted from the sparse and raw images differ"
diff -r --no-dereference "$src" "$T/x.simg" || bad "the tree extracted from the sparse image differs from the source"
echo "2. img2simg image: fsck, dump info and extraction as from the raw image"
# The Linux-made images of ../shared/images/syzkaller as sparse images:
# what dump extracts from each equals what Linux reads from the raw image.
shared=${F2FSCORE_SHARED_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}
n=0
for z in "$shared"/images/syzkaller/seed_*.img.zst; do
  [[ -f $z ]] || continue
  base=$(basename "$z" .img.zst)
  zstd -q -d -f "$z" -o "$T/$base.img" && img2simg "$T/$base.img" "$T/$base.simg" && rm -f "$T/$base.img" ||
    { bad "$base: zstd or img2simg failed"; continue; }
  mkdir -p "$T/$base.out"
  "$DUMP" "$T/$base.simg" extract / "$T/$base.out" >"$T/$base.extract.txt" 2>&1
  # Types, modes, sizes, link counts, sha256 and symlink targets (the
  # manifest's xattr lines aside: the host tree's manifest has none).
  python3 "$(dirname "$0")/../../scripts/compare-extract.py" --manifest "$T/$base.out" | sort >"$T/$base.ours"
  grep -v '^X|' "${z%.img.zst}.linux-manifest" | sort >"$T/$base.linux"
  diff "$T/$base.linux" "$T/$base.ours" >"$T/$base.diff" ||
    bad "$base: extracted from its sparse image, differs from what Linux reads: $(head -5 "$T/$base.diff")"
  rm -rf "$T/$base.simg" "$T/$base.out"
  n=$((n + 1))
done
echo "2b. $n Linux-made images, as sparse images, extracted as Linux reads them"

# 3. sload -S against sload onto the raw image.
cp --sparse=always "$T/raw.img" "$T/sl.img"
"$SLOAD" -q -T 1700000000 -f "$src" "$T/sl.img" || bad "sload raw"
"$SLOAD" -q -S -T 1700000000 -f "$src" "$T/s.simg" || bad "sload -S"
simg2img "$T/s.simg" "$T/sl.expanded" || bad "simg2img of our sload -S output"
cmp -s "$T/sl.img" "$T/sl.expanded" || bad "sload -S, expanded, differs from sload into the raw image"
if command -v fsck.f2fs >/dev/null; then
  fsck.f2fs -f "$T/sl.expanded" >"$T/fsck.f2fs.txt" 2>&1 &&
    ! grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect' "$T/fsck.f2fs.txt" ||
    bad "fsck.f2fs -f: $(cat "$T/fsck.f2fs.txt")"
elif [[ ${F2FSCORE_REQUIRE_FSCK:-0} == 1 ]]; then
  bad "fsck.f2fs not installed and F2FSCORE_REQUIRE_FSCK=1"
fi
echo "3. sload -S: expanded equal to sload into the raw image; fsck.f2fs -f clean"

# 4. Refusals and damaged sparse images.
unchanged() {  # NAME FILE SUM
  [[ $(cksum <"$2") == "$3" ]] || bad "$1: $2 changed"
}
expect() {  # NAME RC PATTERN CMD...
  local name=$1 rc_want=$2 pat=$3 out rc; shift 3
  out=$("$@" 2>&1); rc=$?
  [[ $rc == "$rc_want" ]] || bad "$name: exit $rc, expected $rc_want: $out"
  [[ $out == *$pat* ]] || bad "$name: \"$out\" does not say \"$pat\""
}
sum=$(cksum <"$T/s.simg")
expect "sload without -S onto a sparse image" 1 "is an Android sparse image" "$SLOAD" -f "$src" "$T/s.simg"
unchanged "sload without -S" "$T/s.simg" "$sum"
expect "mkfs without -f onto a sparse image" 1 "is an Android sparse image" "$MKFS" -q "$T/s.simg"
unchanged "mkfs without -f" "$T/s.simg" "$sum"
expect "mkfs -S onto an existing file without -f" 1 "use -f to replace it" "$MKFS" -q -S $size "$T/s.simg"
unchanged "mkfs -S without -f" "$T/s.simg" "$sum"
rsum=$(cksum <"$T/raw.img")
expect "sload -S onto a raw image" 1 "not an Android sparse image" "$SLOAD" -S -f "$src" "$T/raw.img"
unchanged "sload -S onto a raw image" "$T/raw.img" "$rsum"
head -c 80M /dev/urandom >"$T/src/big"  # more than the 64 MiB image below holds
truncate -s 64M "$T/small.img" && "$MKFS" -q "$T/small.img" && img2simg "$T/small.img" "$T/small.simg"
ssum=$(cksum <"$T/small.simg")
expect "sload -S of a tree that does not fit" 1 "unchanged" "$SLOAD" -S -f "$src" "$T/small.simg"
unchanged "sload -S without space" "$T/small.simg" "$ssum"
ls -a "$T" | grep -q "f2fscore-" && bad "temporary files left beside the images: $(ls -a "$T" | grep f2fscore-)"
head -c 100000 "$T/pop.simg" >"$T/cut.simg"
expect "fsck of a truncated sparse image" 8 "Android sparse image: the file ends inside chunk" "$FSCK" -n "$T/cut.simg"
expect "dump of a truncated sparse image" 1 "Android sparse image: the file ends inside chunk" "$DUMP" "$T/cut.simg" info
cp "$T/pop.simg" "$T/mangled.simg"
printf '\xff\xff' | dd of="$T/mangled.simg" bs=1 seek=28 conv=notrunc status=none  # the first chunk's type
expect "fsck of a sparse image with an unknown chunk type" 8 "unknown chunk type 0xffff" "$FSCK" -n "$T/mangled.simg"
echo "4. refusals leave the files unchanged; damaged sparse images named"

((fail)) && exit 1
echo "PASS: sparse images equal to simg2img/img2simg's, read directly, refusals unchanged"
