#!/usr/bin/env bash
# fsync_linux.sh TEST_BINARY: fsync and roll-forward between our writer and
# Linux 6.1.
#
#   1. TEST_BINARY (f2fscore_writer_fsync_interop_tests) runs
#      FsyncOracle.DISABLED_WriteImage: our writer writes and fsyncs files
#      (appends, overwrites, fdatasync, new files, a sparse file with a
#      direct node, a truncate, a file in a new directory), syncs once, and
#      stops without a checkpoint; the image holds a fsynced node chain.
#   (at most 7 images: the oracle attaches 8 disks, /in among them)
#   2. FsyncOracle.DISABLED_RandomImage: the last phase of a seeded random
#      workload (fsyncs of files with direct and indirect nodes, truncates,
#      unlinks) stopped without a checkpoint.
#      FsyncOracle.DISABLED_LongChainImage: 700 fsyncs of one file, a chain
#      that crosses from one segment of the warm node log to the next.
#      FsyncOracle.DISABLED_CutImages: the power-cut workload cut at some
#      writes n (raw images with a chain, before any recovery), with the tree
#      each must read as.
#   3. One Linux boot: it mounts each image (roll-forward recovery), compares
#      every path and the sha256 of every file with the expected tree,
#      unmounts (the kernel must not complain). Then, on a fresh image of
#      mkfs.f2fs, it makes a directory, syncs, writes and fsyncs files
#      (a new file in a checkpointed directory with an xattr node, an inline
#      file with an inline xattr, a new file taking a checkpointed file's
#      name, an append, a file with a direct node, an fdatasync) and cuts
#      the power
#      (echo b > /proc/sysrq-trigger).
#   4. fsck.f2fs -f is clean on every image Linux recovered and unmounted.
#   5. FsyncOracle.DISABLED_RecoverLinuxImage: our writer mounts Linux's
#      power-cut image (rolls it forward), reads every fsynced file, writes
#      one more, unmounts; our checker and fsck.f2fs -f are clean.
#   6. A second boot: Linux mounts that image and reads the same files.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle, fsck.f2fs or
# mkfs.f2fs), 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: fsync_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
export F2FSCORE_REQUIRE_FSCK="${F2FSCORE_REQUIRE_FSCK:-${F2FSCORE_REQUIRE_ORACLE:-0}}"
fsck="${FSCK_F2FS:-/usr/sbin/fsck.f2fs}"
mkfs="${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup fsync_linux.sh
[[ -x "$fsck" ]] || oracle_skip "$fsck not found"
[[ -x "$mkfs" ]] || oracle_skip "$mkfs not found"

oracle_workdir
fail() { echo "fsync_linux.sh: FAIL: $*"; exit 1; }

# 1-2. Our images.
FSYNC_IMAGE="$work/ours.img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_WriteImage \
  > "$work/gen.log" 2>&1 || { cat "$work/gen.log"; fail "could not write our fsynced image"; }
mkdir -p "$work/cuts"
FSYNC_CUTS="$work/cuts" "$bin" --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_CutImages \
  > "$work/cuts.log" 2>&1 || { cat "$work/cuts.log"; fail "could not make the cut images"; }
FSYNC_RANDOM_OUT="$work/random.img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_RandomImage \
  > "$work/random.log" 2>&1 || { cat "$work/random.log"; fail "could not make the random workload's image"; }
FSYNC_LONG_OUT="$work/long.img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=FsyncOracle.DISABLED_LongChainImage \
  > "$work/long.log" 2>&1 || { cat "$work/long.log"; fail "could not make the long chain's image"; }
imgs=("$work/ours.img" "$work/random.img" "$work/long.img")
names=(ours random long)
for c in "$work"/cuts/cut*.img; do
  [[ -f "$c" ]] || continue
  imgs+=("$c")
  names+=("$(basename "$c" .img)")
done
[[ ${#imgs[@]} -ge 5 ]] || fail "only $((${#imgs[@]} - 3)) cut images with a chain"

# The expected trees: every path (find order) and the sha256 of every file.
mkdir -p "$work/in/c"
listing() { (cd "$1" && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort); }
sums() { (cd "$1" && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done); }
for i in "${!imgs[@]}"; do
  tree="${imgs[$i]%.img}.tree"
  [[ "${names[$i]}" == ours || "${names[$i]}" == random || "${names[$i]}" == long ]] && tree="${imgs[$i]}.tree"
  listing "$tree" > "$work/in/${names[$i]}.list"
  sums "$tree" > "$work/in/${names[$i]}.sha"
done
printf '%s\n' "${names[@]}" > "$work/in/names"

# Linux's own power cut: files to write, on a fresh mkfs.f2fs image.
head -c 300000 /dev/urandom > "$work/in/c/new1"
head -c 3000 /dev/urandom > "$work/in/c/small"        # inline data
head -c 4500000 /dev/urandom > "$work/in/c/big"       # past the inode's pointers: a direct node
head -c 50000 /dev/urandom > "$work/in/c/base"
head -c 20000 /dev/urandom > "$work/in/c/append"
head -c 8192 /dev/urandom > "$work/in/c/dsync"
head -c 1500 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 1500 > "$work/in/c/xbig"   # an xattr node
linux_img="$work/linux.img"
truncate -s 128M "$linux_img"
"$mkfs" -f -q -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime "$linux_img" > /dev/null || fail "mkfs.f2fs"
imgs+=("$linux_img")

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
n=0
for name in $(cat /in/names); do
  dev=/dev/vd$(echo abcdefghij | cut -c$((n + 1)))
  n=$((n + 1))
  mount -t f2fs "$dev" /mnt || fail "$name: mount"
  (cd /mnt && find . -mindepth 1 ! -path './lost+found' ! -path './lost+found/*' | sort) > /tmp/got.list
  cmp /in/$name.list /tmp/got.list || { diff /in/$name.list /tmp/got.list | head; fail "$name: paths differ"; }
  (cd /mnt && find . -type f ! -path './lost+found/*' | sort | while read -r f; do sha256sum "$f"; done) > /tmp/got.sha
  cmp /in/$name.sha /tmp/got.sha || { diff /in/$name.sha /tmp/got.sha | head; fail "$name: contents differ"; }
  umount /mnt || fail "$name: umount"
  echo "GUEST-OK $name $(wc -l < /tmp/got.sha) files"
done
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck|loop'; then fail "kernel complained"; fi
echo "GUEST-READ-ALL-OK"
# Linux's power cut on the last disk.
dev=/dev/vd$(echo abcdefghij | cut -c$((n + 1)))
mount -t f2fs "$dev" /mnt || fail "linux image: mount"
mkdir /mnt/d || fail mkdir
cp /in/c/base /mnt/d/base && cp /in/c/append /mnt/d/append && cp /in/c/small /mnt/d/taken || fail "base files"
sync
cp /in/c/new1 /mnt/d/new1 && gtool setxattr /mnt/d/new1 user.big "$(cat /in/c/xbig)" && gtool fsync /mnt/d/new1 || fail "new1"
cp /in/c/small /mnt/d/small && gtool setxattr /mnt/d/small user.s inline-value && gtool fsync /mnt/d/small || fail "small"
rm /mnt/d/taken && cp /in/c/new1 /mnt/d/taken && gtool fsync /mnt/d/taken || fail "taken"
cp /in/c/big /mnt/d/big && gtool fsync /mnt/d/big || fail "big"
cat /in/c/new1 >> /mnt/d/append && gtool fsync /mnt/d/append || fail "append"
dd if=/in/c/dsync of=/mnt/d/base bs=4096 seek=3 conv=notrunc 2>/dev/null && gtool fdatasync /mnt/d/base || fail "fdatasync"
cp /in/c/new1 /mnt/d/lost   # never fsynced
echo "GUEST-CUT"
echo b > /proc/sysrq-trigger
sleep 5
fail "still running after the power cut"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-400}" --in "$work/in" "$work/guest.sh" "${imgs[@]}" > "$work/linux.log" 2>&1
orc=$?
set -e
cat "$work/linux.log"
grep -q GUEST-READ-ALL-OK "$work/linux.log" || fail "Linux did not read our images right (status $orc)"
grep -q GUEST-CUT "$work/linux.log" || fail "Linux's power-cut run did not reach the cut (status $orc)"
[[ $orc -eq 125 || $orc -eq 0 ]] || fail "oracle status $orc"

# 4. fsck.f2fs -f after Linux's recovery and unmount.
for i in "${!names[@]}"; do
  "$repo_root/tests/interop/fsck_clean.sh" "${imgs[$i]}" > "$work/fsck.log" 2>&1 || {
    cat "$work/fsck.log"; fail "fsck.f2fs -f after Linux recovered ${names[$i]}"; }
done

# 5. We recover Linux's power-cut image. What it must hold: the fsynced files.
mkdir -p "$work/expect/d"
cp "$work/in/c/new1" "$work/in/c/small" "$work/in/c/big" "$work/expect/d/"
cp "$work/in/c/new1" "$work/expect/d/taken"
cat "$work/in/c/append" "$work/in/c/new1" > "$work/expect/d/append"
cp "$work/in/c/base" "$work/expect/d/base"
dd if="$work/in/c/dsync" of="$work/expect/d/base" bs=4096 seek=3 conv=notrunc 2>/dev/null
FSYNC_IMAGE="$linux_img" FSYNC_EXPECT="$work/expect" "$bin" --gtest_also_run_disabled_tests \
  --gtest_filter=FsyncOracle.DISABLED_RecoverLinuxImage > "$work/back.log" 2>&1 || {
  cat "$work/back.log"; fail "our writer on Linux's power-cut image"; }
grep -E "Linux's chain" "$work/back.log" || true

# 6. Linux reads what our recovery left.
rm -rf "$work/in2"; mkdir -p "$work/in2"
sums "$work/expect" > "$work/in2/expect.sha"
cp "$work/in/c/xbig" "$work/in2/xbig"
cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
(cd /mnt && for f in $(cd /in && sed 's/^[^ ]* *//' expect.sha); do sha256sum "$f"; done) > /tmp/got.sha
cmp /in/expect.sha /tmp/got.sha || { diff /in/expect.sha /tmp/got.sha | head; fail "fsynced files differ after our recovery"; }
[ "$(stat -c %s /mnt/after-recovery)" = 10000 ] || fail "/after-recovery"
[ "$(gtool getxattr /mnt/d/new1 user.big)" = "$(cat /in/xbig)" ] || fail "the xattr node of d/new1"
[ "$(gtool getxattr /mnt/d/small user.s)" = inline-value ] || fail "the inline xattr of d/small"
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: Linux reads the image our roll-forward left"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in2" "$work/guest2.sh" "$linux_img"
orc=$?
set -e
[[ $orc -eq 0 ]] || fail "Linux on the image we recovered (status $orc)"
"$repo_root/tests/interop/fsck_clean.sh" "$linux_img" > "$work/fsck.log" 2>&1 || { cat "$work/fsck.log"; fail "fsck.f2fs -f at the end"; }
echo "fsync_linux.sh: PASS (${#names[@]} images of ours recovered by Linux, Linux's power cut recovered by us)"
