#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install, build,
# format a demo image with f2fscore-mkfs, check it with f2fscore-fsck and
# fsck.f2fs, and show its layout with f2fscore-dump.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
out="$root/out"
mkdir -p "$out"
img="$out/demo.img"
rm -f "$img"
truncate -s 1G "$img"
echo "== f2fscore-mkfs: 1 GiB image $img"
"$root/build/tools/mkfs/f2fscore-mkfs" -f -l demo \
  -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,quota,compression "$img"
echo "== f2fscore-fsck -n -f (check only: writes nothing)"
"$root/build/tools/fsck/f2fscore-fsck" -n -f "$img"
echo "== fsck.f2fs -f (the reference, on a copy)"
"$root/tests/interop/fsck_clean.sh" "$img"
echo "== f2fscore-dump info"
"$root/build/tools/dump/f2fscore-dump" "$img" info
echo "== f2fscore-dump space"
"$root/build/tools/dump/f2fscore-dump" "$img" space
echo "== done: $img is a clean F2FS volume"
