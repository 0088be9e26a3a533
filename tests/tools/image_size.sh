#!/usr/bin/env bash
# The size of an image built from a tree (f2fscore-mkfs --populate):
#  1. --size-to-fit: the image file is created at the size --json reports
#     (stat), fsck.f2fs -f finds it clean, and it is the smallest: the same
#     tree into a file one segment smaller does not fit (our mkfs --populate
#     exits 1, no space). With a margin (--size-to-fit=4M), the free blocks
#     fsck.f2fs reads in the checkpoint (user_block_count -
#     valid_block_count) are at least 1024, and one segment less leaves
#     fewer (read the same way).
#  2. A tree bigger than the volume: exit 1, the message names the entry
#     that did not fit and says the image is incomplete, and the image is
#     what docs/man/f2fscore-mkfs.8.scd says: a consistent file system
#     (fsck.f2fs -f clean) holding what was copied before that entry.
#  3. Refusals that write nothing: --size-to-fit without --populate (exit
#     2), onto a file holding a file system without -f (exit 1, bytes
#     unchanged), onto a directory (exit 1).
#   image_size.sh MKFS
# fsck.f2fs (f2fs-tools) reads the images; skips (77) without it unless
# F2FSCORE_REQUIRE_FSCK=1.
set -uo pipefail
[[ $# -eq 1 ]] || { echo "usage: image_size.sh MKFS" >&2; exit 2; }
MKFS=$1
FSCK=${FSCK_F2FS:-/usr/sbin/fsck.f2fs}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
if [[ ! -x $FSCK ]]; then
  [[ ${F2FSCORE_REQUIRE_FSCK:-0} == 1 ]] && { echo "image_size.sh: FAIL: fsck.f2fs not installed"; exit 1; }
  echo "image_size.sh: SKIP: fsck.f2fs not installed"; exit 77
fi
command -v python3 >/dev/null || { echo "image_size.sh: SKIP: python3 not installed"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-size.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "image_size.sh: FAIL: $*"; fail=1; }
clean() {  # clean IMG WHAT
  FSCK_CLEAN_QUIET=1 "$repo_root/tests/interop/fsck_clean.sh" "$1" >"$T/fsck.log" 2>&1 ||
    { head -20 "$T/fsck.log"; bad "fsck.f2fs -f: $2 not clean"; }
}
# Free user blocks as fsck.f2fs reads them in the checkpoint (on a copy).
free_blocks() {
  cp --sparse=always "$1" "$T/copy.img"
  "$FSCK" -f -d 1 "$T/copy.img" </dev/null 2>&1 | awk '
    /^user_block_count/ { gsub(/[]\[]/, " "); u = $NF }
    /^valid_block_count/ { gsub(/[]\[]/, " "); v = $NF }
    END { print u - v }'
  rm -f "$T/copy.img"
}
json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)["size_to_fit"][sys.argv[1]])' "$1"; }

# A tree with large and small files, a sparse file, a hard link, symlinks,
# a directory of 2,000 names (several dentry levels) and xattrs.
python3 - "$T/tree" <<'PY'
import os, random, sys
b = sys.argv[1]
r = random.Random(7)
os.makedirs(b + "/many")
for i in range(2000):
    open(f"{b}/many/entry_with_a_long_name_{i:05d}", "wb").write(b"x" * r.randint(0, 5000))
for d in range(5):
    os.makedirs(f"{b}/d{d}")
    for i in range(40):
        open(f"{b}/d{d}/f{i}", "wb").write(r.randbytes(r.randint(1, 70000)))
open(b + "/big", "wb").write(r.randbytes(6 << 20))
os.link(b + "/big", b + "/big.link")
with open(b + "/sparse", "wb") as f:
    f.seek(20 << 20); f.write(b"end"); f.seek(5 << 20); f.write(b"mid" * 3000)
os.symlink("y" * 3900, b + "/long-link")
os.symlink("big", b + "/short-link")
try:
    os.setxattr(b + "/big", "user.large", b"v" * 300)
except OSError:
    pass
PY

# 1. --size-to-fit, and one segment less.
"$MKFS" --json "$T/fit.img" --populate "$T/tree" --size-to-fit -T 0 >"$T/fit.json" 2>"$T/err" ||
  { cat "$T/err"; bad "--size-to-fit exit $?"; }
size=$(json_field image_bytes <"$T/fit.json")
[[ $(stat -c %s "$T/fit.img") == "$size" ]] || bad "image file $(stat -c %s "$T/fit.img") bytes, --json says $size"
clean "$T/fit.img" "--size-to-fit image"
truncate -s $((size - (2 << 20))) "$T/less.img"
if "$MKFS" -q -f "$T/less.img" --populate "$T/tree" -T 0 2>"$T/err"; then
  bad "the tree fits one segment below the size found ($size bytes)"
else
  grep -q "no space" "$T/err" || { cat "$T/err"; bad "one segment less: not a no-space failure"; }
fi
"$MKFS" --json "$T/margin.img" --populate "$T/tree" --size-to-fit=4M -T 0 >"$T/margin.json" 2>"$T/err" ||
  { cat "$T/err"; bad "--size-to-fit=4M exit $?"; }
msize=$(json_field image_bytes <"$T/margin.json")
free=$(free_blocks "$T/margin.img")
((free >= 1024)) || bad "--size-to-fit=4M: $free blocks free, fewer than 1024"
truncate -s $((msize - (2 << 20))) "$T/mless.img"
if "$MKFS" -q -f "$T/mless.img" --populate "$T/tree" -T 0 2>/dev/null; then
  mfree=$(free_blocks "$T/mless.img")
  ((mfree < 1024)) || bad "--size-to-fit=4M: one segment less ($((msize - (2 << 20))) bytes) leaves $mfree blocks free"
fi

# 2. A tree bigger than the volume.
mkdir -p "$T/huge/a"
head -c $((30 << 20)) /dev/urandom >"$T/huge/a/first"
head -c $((60 << 20)) /dev/urandom >"$T/huge/a/second"
echo later >"$T/huge/b"
truncate -s $((96 << 20)) "$T/small.img"
"$MKFS" -q -f "$T/small.img" --populate "$T/huge" 2>"$T/err"
rc=$?
[[ $rc == 1 ]] || bad "a tree bigger than the volume: exit $rc, not 1"
grep -q "/a/second" "$T/err" || { cat "$T/err"; bad "the message does not name /a/second"; }
grep -q "INCOMPLETE" "$T/err" || { cat "$T/err"; bad "the message does not say the image is incomplete"; }
clean "$T/small.img" "the image left by a tree that does not fit"

# 3. Refusals.
"$MKFS" -q "$T/r.img" --size-to-fit 2>/dev/null
[[ $? == 2 ]] || bad "--size-to-fit without --populate: not a usage error"
[[ -e $T/r.img ]] && bad "--size-to-fit without --populate created the image"
sum=$(cksum <"$T/fit.img")
"$MKFS" -q "$T/fit.img" --populate "$T/tree" --size-to-fit 2>"$T/err"
[[ $? == 1 ]] || bad "--size-to-fit onto a file system without -f: not exit 1"
[[ $(cksum <"$T/fit.img") == "$sum" ]] || bad "--size-to-fit without -f changed the image"
mkdir "$T/dir"
"$MKFS" -q "$T/dir" --populate "$T/tree" --size-to-fit 2>/dev/null
[[ $? == 1 ]] || bad "--size-to-fit onto a directory: not exit 1"

[[ $fail == 0 ]] && echo "image_size.sh: PASS"
exit $fail
