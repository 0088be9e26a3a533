#!/usr/bin/env bash
# The main job, end to end on a fresh Debian 12 machine: install, build,
# format a demo image with f2fscore-mkfs, check it with fsck.f2fs (until
# f2fscore's own fsck lands), and show its layout.
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
echo "== fsck.f2fs -f (on a copy)"
"$root/tests/interop/fsck_clean.sh" "$img"
echo "== layout (fsck.f2fs -l)"
cp --sparse=always "$img" "$out/demo-copy.img"
/usr/sbin/fsck.f2fs -l "$out/demo-copy.img" 2>/dev/null | grep -E "^(Filesystem|block_count|segment_count|segment0_blkaddr|cp_blkaddr|sit_blkaddr|nat_blkaddr|ssa_blkaddr|main_blkaddr|user_block_count|rsvd|overprov|ckpt_flags)" || true
rm -f "$out/demo-copy.img"
echo "== done: $img is a clean F2FS volume"
