#!/usr/bin/env bash
# populate_linux.sh SLOAD MKFS: Linux reads trees our writer copied from the
# host (sload and mkfs --populate).
#
#   1. A host tree: files, a sparse file, a hard link, symlinks, a FIFO, a
#      character device, modes, owners, mtimes, a user xattr.
#   2. Image A: mkfs.f2fs, sload.f2fs -f TREE (fsck.f2fs -f afterwards, as a
#      user would if sload left work), then our f2fscore-sload -P copies the
#      tree again into /ours: our writer changing an sload.f2fs image.
#      Image B: f2fscore-mkfs --populate TREE --preserve-owner with the
#      checksum features. fsck.f2fs -f is clean on both.
#   3. Linux 6.1 mounts each image and lists the tree (type and mode, owner,
#      links, mtime, contents' md5, symlink targets, device numbers); the
#      list equals the host's; the hard link is one inode; the sparse file
#      holds at most a few blocks; the xattr reads back; the kernel does not
#      complain.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or f2fs-tools),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 2 && -x "$1" && -x "$2" ]] || { echo "usage: populate_linux.sh SLOAD MKFS" >&2; exit 2; }
sload="$1"; mkfs="$2"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup populate_linux.sh
for t in mkfs.f2fs sload.f2fs fsck.f2fs; do
  command -v "$t" >/dev/null || [[ -x /usr/sbin/$t ]] || oracle_skip "$t not installed"
done
PATH=$PATH:/usr/sbin

oracle_workdir
tree="$work/tree"
mkdir -p "$tree/dir/sub" "$tree/empty"
printf 'hello from the host\n' > "$tree/small.txt"
head -c 300000 /dev/urandom > "$tree/dir/random.bin"
truncate -s 40M "$tree/dir/sparse"
printf 'middle' | dd of="$tree/dir/sparse" bs=1M seek=20 conv=notrunc status=none
ln "$tree/small.txt" "$tree/dir/sub/hardlink"
ln -s ../small.txt "$tree/dir/rel-link"
ln -s "$(printf 'x%.0s' $(seq 1 2000))" "$tree/long-link"
mkfifo "$tree/dir/fifo"
mknod "$tree/dir/null" c 1 3 2>/dev/null || true
chmod 0640 "$tree/small.txt"; chmod 0700 "$tree/empty"; chmod 04711 "$tree/dir/random.bin"
chown 1000:1001 "$tree/dir/random.bin" 2>/dev/null || true
python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.origin", b"host")' "$tree/small.txt"
find "$tree" -mindepth 1 | while read -r p; do touch -h -d @1600000000 "$p"; done

# One line per entry, the same on the host (GNU) and in the guest (busybox).
cat > "$work/manifest.sh" <<'EOF2'
#!/bin/sh
# manifest.sh ROOT: the tree under ROOT, one sorted line per entry.
cd "$1" || exit 1
find . -mindepth 1 ! -name lost+found | sort | while read -r p; do
  if [ -h "$p" ]; then echo "$p link $(stat -c '%u %g %Y' "$p") -> $(readlink "$p" | md5sum | cut -c1-32)"
  elif [ -d "$p" ]; then echo "$p dir $(stat -c '%a %u %g %Y' "$p")"
  elif [ -f "$p" ]; then echo "$p file $(stat -c '%a %u %g %h %s %Y' "$p") $(md5sum < "$p" | cut -c1-32)"
  elif [ -c "$p" ] || [ -b "$p" ]; then echo "$p dev $(stat -c '%f %u %g %Y %t %T' "$p")"
  else echo "$p other $(stat -c '%f %u %g %Y' "$p")"; fi
done
EOF2
chmod +x "$work/manifest.sh"
"$work/manifest.sh" "$tree" > "$work/expect.txt"

a="$work/a.img"; b="$work/b.img"
truncate -s 256M "$a" "$b"
mkfs.f2fs -f -q "$a" >/dev/null
sload.f2fs -f "$tree" -P "$a" > "$work/sload.log" 2>&1 || true
fsck.f2fs -f "$a" > "$work/fsck-a.log" 2>&1 < /dev/null || true  # what a user does after sload
"$sload" -q -P -f "$tree" --target-dir /ours "$a" || { echo "populate_linux.sh: FAIL: f2fscore-sload on the sload.f2fs image"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$a" > "$work/clean-a.log" 2>&1 ||
  { cat "$work/clean-a.log"; echo "populate_linux.sh: FAIL: fsck.f2fs after our writer on sload.f2fs's image"; exit 1; }
"$mkfs" -q -f -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum \
  --populate "$tree" --preserve-owner "$b" || { echo "populate_linux.sh: FAIL: f2fscore-mkfs --populate"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$b" > "$work/clean-b.log" 2>&1 ||
  { cat "$work/clean-b.log"; echo "populate_linux.sh: FAIL: fsck.f2fs after mkfs --populate"; exit 1; }

mkdir -p "$work/in"
cp "$work/manifest.sh" "$work/expect.txt" "$work/in/"
cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
check() {  # DEV ROOT-IN-IMAGE
  mount -t f2fs "$1" /mnt || fail "mount $1"
  r="/mnt$2"
  sh /in/manifest.sh "$r" > /tmp/got.txt || fail "list $1"
  cmp /in/expect.txt /tmp/got.txt || { diff /in/expect.txt /tmp/got.txt | head -20; fail "$1$2 differs from the host tree"; }
  [ "$(stat -c %i "$r/small.txt")" = "$(stat -c %i "$r/dir/sub/hardlink")" ] || fail "$1: hard link is two inodes"
  blocks=$(stat -c %b "$r/dir/sparse")
  [ "$blocks" -le 64 ] || fail "$1: sparse file holds $blocks sectors: holes not kept"
  [ "$(gtool getxattr "$r/small.txt" user.origin)" = host ] || fail "$1: xattr"
  umount /mnt || fail "umount $1"
  echo "GUEST OK: $1$2: $(wc -l < /tmp/got.txt) entries equal, sparse file $blocks sectors"
}
check /dev/vda /ours
check /dev/vdb ""
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "$a" "$b"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "populate_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
echo "populate_linux.sh: PASS"
