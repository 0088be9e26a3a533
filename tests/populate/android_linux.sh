#!/usr/bin/env bash
# android_linux.sh SLOAD MKFS: Linux reads the Android rules our tools
# applied. The AOSP-like system tree of tests/tools/android_tree.sh is
# loaded with sload.f2fs's options (-C fs_config -s file_contexts -t
# /system -p) by f2fscore-sload, and with the same rules by f2fscore-mkfs
# --populate; Linux 6.1 mounts each image read-only (one boot) and stat
# (mode, uid, gid) and getxattr (security.capability as hex,
# security.selinux) of every entry equal the hand-written expect.txt; the
# kernel does not complain. (Debian's sload.f2fs is built without Android
# support and ignores -C and -s, so Linux is the reference here.)
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle, or no libselinux
# in the build), 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 2 && -x "$1" && -x "$2" ]] || { echo "usage: android_linux.sh SLOAD MKFS" >&2; exit 2; }
sload="$1"; mkfs="$2"
source "$repo_root/tests/support/oracle_common.sh"
source "$repo_root/tests/tools/android_tree.sh"
oracle_setup android_linux.sh
oracle_workdir

android_tree "$work/out"
msg=$("$sload" -q -f "$work/out/system" -s "$work/out/etc/file_contexts" "$work/none.img" 2>&1 || true)
[[ $msg == *"no libselinux"* ]] && oracle_skip "this build has no libselinux"
a="$work/a.img"; b="$work/b.img"
truncate -s 64M "$a" "$b"
"$mkfs" -q -f "$a"
"$sload" -q -C "$work/out/etc/fs_config" -f "$work/out/system" -p "$work/out" -s "$work/out/etc/file_contexts" \
  -t /system -T 1230768000 "$a" || { echo "android_linux.sh: FAIL: f2fscore-sload"; exit 1; }
"$mkfs" -q -f -O extra_attr,inode_checksum,flexible_inline_xattr,sb_checksum -T 1230768000 \
  --populate "$work/out/system" --fs-config "$work/out/etc/fs_config" \
  --file-contexts "$work/out/etc/file_contexts" --mount-point /system "$b" ||
  { echo "android_linux.sh: FAIL: f2fscore-mkfs --populate"; exit 1; }

mkdir -p "$work/in"
cp "$work/out/expect.txt" "$work/in/"
cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
check() {  # DEV
  mount -t f2fs -o ro "$1" /mnt || fail "mount $1"
  cd /mnt
  find . ! -name lost+found | while read -r p; do
    q=${p#.}; [ -n "$q" ] || q=/
    m=$(stat -c '%A %u %g' "$p")
    cap=$(gtool getxattr "$p" security.capability 2>/dev/null | od -An -v -tx1 | tr -d ' \n')
    cap=${cap%0a}; [ -n "$cap" ] || cap=-
    se=$(gtool getxattr "$p" security.selinux 2>/dev/null); [ -n "$se" ] || se=-
    echo "$q $m $cap $se"
  done | sort > /tmp/got.txt
  cd /
  sort /in/expect.txt > /tmp/want.txt
  cmp /tmp/want.txt /tmp/got.txt || { diff /tmp/want.txt /tmp/got.txt; fail "$1: modes, owners or xattrs differ"; }
  umount /mnt || fail "umount $1"
  echo "GUEST OK: $1: $(wc -l < /tmp/got.txt) entries as the rules say"
}
check /dev/vda
check /dev/vdb
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "$a" "$b"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "android_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
echo "android_linux.sh: PASS"
