#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install, build,
# format a demo image with f2fscore-mkfs and write a tree into it through the
# library (f2fscore-mkfs --populate, then f2fscore-sload into a subdirectory:
# the read-write writer, libf2fscore/include/f2fscore/populate.hpp), check
# it with f2fscore-fsck and fsck.f2fs, and show it with f2fscore-dump.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
out="$root/out"
mkdir -p "$out"
img="$out/demo.img"
tree="$out/demo-tree"
bin="$root/build/tools"
echo "== a small host tree in $tree: the repository's docs/, a sparse file, a symlink, a hard link, an xattr"
rm -rf "$tree"
mkdir -p "$tree"
cp -a "$root/docs" "$tree/docs"
printf 'written by f2fscore\n' >"$tree/hello.txt"
truncate -s 64M "$tree/sparse.bin"
printf 'data in the middle of a hole\n' | dd of="$tree/sparse.bin" bs=1M seek=32 conv=notrunc status=none
ln -s docs/design.md "$tree/design-link.md"
ln "$tree/hello.txt" "$tree/hello-again.txt"
setfattr -n user.demo -v "an extended attribute" "$tree/hello.txt" 2>/dev/null ||
  python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.demo", b"an extended attribute")' "$tree/hello.txt" ||
  echo "(no user xattrs on this file system)"
rm -f "$img"
truncate -s 1G "$img"
echo "== f2fscore-mkfs --populate: a 1 GiB image $img holding the tree"
"$bin/mkfs/f2fscore-mkfs" -f -l demo \
  -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found \
  --populate "$tree" --preserve-owner "$img"
echo "== f2fscore-sload: the repository's tools/ sources into /src/tools of the same image"
"$bin/sload/f2fscore-sload" -f "$root/tools" --target-dir /src/tools -P "$img"
echo "== f2fscore-fsck -n -f (check only: writes nothing)"
"$bin/fsck/f2fscore-fsck" -n -f "$img"
echo "== fsck.f2fs -f (the reference, on a copy)"
"$root/tests/interop/fsck_clean.sh" "$img"
echo "== f2fscore-dump info"
"$bin/dump/f2fscore-dump" "$img" info
echo "== f2fscore-dump ls -l -R / (first 40 lines)"
"$bin/dump/f2fscore-dump" "$img" ls -l -R / | head -40
echo "== f2fscore-dump map /sparse.bin (holes kept: one data block in 64 MiB)"
"$bin/dump/f2fscore-dump" "$img" map /sparse.bin
echo "== f2fscore-dump space"
"$bin/dump/f2fscore-dump" "$img" space
echo "== done: $img is a clean F2FS volume holding $tree and tools/"
