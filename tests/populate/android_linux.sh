#!/usr/bin/env bash
# android_linux.sh SLOAD MKFS: Linux reads the Android images our tools
# build. The AOSP-like system tree of tests/tools/android_tree.sh (binaries,
# a setuid one, capability-carrying ones, libraries, symlinks, an apex/
# directory of large files) goes into four images:
#   a  f2fscore-sload with sload.f2fs's options (-C fs_config -s
#      file_contexts -t /system -p -T) into an f2fscore-mkfs image;
#   b  f2fscore-mkfs --populate with the same rules;
#   c  a compressed read-only system image: f2fscore-mkfs -O
#      ro,compression,extra_attr, then f2fscore-sload -C -s -t -p -T -c -a
#      lz4 -r (the large files compressed, their blocks released), which
#      fsck.f2fs -f must call clean without repairing;
#   d  the same read-only image as the Android build makes it with
#      f2fs-tools: mkfs.f2fs -O ro,compression,extra_attr, sload.f2fs -C -s
#      -t -p -T. Debian's sload.f2fs 1.15 is built without Android's
#      libcutils (it ignores -C) and without compression (with -c it loads
#      nothing, says "not supported" and exits 0), so d is loaded without -c
#      and its modes and owners are the host's.
# Linux 6.1 mounts each read-only (one boot). For a, b and c: stat (mode,
# uid, gid) and getxattr (security.capability as hex, security.selinux) of
# every entry equal the hand-written expect.txt. For all four: every
# file's contents (sha256) and every link's target equal the source tree's.
# For d: each entry's security.selinux equals expect.txt's (sload.f2fs
# applies -s). The kernel does not complain.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle, or no libselinux
# in the build), 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 2 && -x "$1" && -x "$2" ]] || { echo "usage: android_linux.sh SLOAD MKFS" >&2; exit 2; }
sload="$1"; mkfs="$2"
source "$repo_root/tests/support/oracle_common.sh"
source "$repo_root/tests/tools/android_tree.sh"
oracle_setup android_linux.sh --fsck
oracle_workdir
mkfs_f2fs=${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}
sload_f2fs=${SLOAD_F2FS:-/usr/sbin/sload.f2fs}
[[ -x $mkfs_f2fs && -x $sload_f2fs ]] || oracle_skip "mkfs.f2fs or sload.f2fs not found"

android_tree "$work/out"
msg=$("$sload" -q -f "$work/out/system" -s "$work/out/etc/file_contexts" "$work/none.img" 2>&1 || true)
[[ $msg == *"no libselinux"* ]] && oracle_skip "this build has no libselinux"
a="$work/a.img"; b="$work/b.img"; c="$work/c.img"; d="$work/d.img"
truncate -s 64M "$a" "$b" "$c" "$d"
"$mkfs" -q -f "$a"
"$sload" -q -C "$work/out/etc/fs_config" -f "$work/out/system" -p "$work/out" -s "$work/out/etc/file_contexts" \
  -t /system -T 1230768000 "$a" || { echo "android_linux.sh: FAIL: f2fscore-sload"; exit 1; }
"$mkfs" -q -f -O extra_attr,inode_checksum,flexible_inline_xattr,sb_checksum -T 1230768000 \
  --populate "$work/out/system" --fs-config "$work/out/etc/fs_config" \
  --file-contexts "$work/out/etc/file_contexts" --mount-point /system "$b" ||
  { echo "android_linux.sh: FAIL: f2fscore-mkfs --populate"; exit 1; }

rules=(-C "$work/out/etc/fs_config" -s "$work/out/etc/file_contexts" -t /system -p "$work/out" -T 1230768000)
"$mkfs" -q -f -O ro,compression,extra_attr "$c"
"$sload" -q "${rules[@]}" -c -a lz4 -r -f "$work/out/system" "$c" ||
  { echo "android_linux.sh: FAIL: f2fscore-sload -c -r into a read-only image"; exit 1; }
cp "$c" "$work/c-copy.img"
out=$("$fsck" -f "$work/c-copy.img" </dev/null 2>&1) && rc=0 || rc=$?
if [[ $rc -ne 0 ]] || grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' <<<"$out"; then
  echo "$out" | tail -20
  echo "android_linux.sh: FAIL: fsck.f2fs -f on our read-only image (exit $rc)"; exit 1
fi
rm -f "$work/c-copy.img"
"$mkfs_f2fs" -q -f -O ro,compression,extra_attr "$d" >/dev/null
"$sload_f2fs" "${rules[@]}" -f "$work/out/system" "$d" >"$work/sload.log" 2>&1 || true  # 1.15 exits 1 after its own repairs
# The contents and link targets every image must show.
(cd "$work/out/system" && find . ! -name . | sort | while read -r p; do
   if [[ -L $p ]]; then echo "${p#.} -> $(readlink "$p")"
   elif [[ -f $p ]]; then echo "${p#.} $(sha256sum < "$p" | cut -d' ' -f1)"
   fi
 done) > "$work/contents.txt"

mkdir -p "$work/in"
cp "$work/out/expect.txt" "$work/contents.txt" "$work/in/"
cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
contents() {  # DEV (mounted on /mnt)
  cd /mnt
  find . ! -name . ! -name lost+found | while read -r p; do
    if [ -L "$p" ]; then echo "${p#.} -> $(readlink "$p")"
    elif [ -f "$p" ]; then echo "${p#.} $(sha256sum < "$p" | cut -d' ' -f1)"
    fi
  done | sort > /tmp/cgot.txt
  cd /
  sort /in/contents.txt > /tmp/cwant.txt
  cmp /tmp/cwant.txt /tmp/cgot.txt || { diff /tmp/cwant.txt /tmp/cgot.txt; fail "$1: contents or link targets differ"; }
}
labels() {  # DEV (mounted on /mnt): PATH CONTEXT of every entry
  cd /mnt
  find . ! -name lost+found | while read -r p; do
    q=${p#.}; [ -n "$q" ] || q=/
    se=$(gtool getxattr "$p" security.selinux 2>/dev/null); [ -n "$se" ] || se=-
    echo "$q $se"
  done | sort
  cd /
}
check() {  # DEV
  mount -t f2fs -o ro "$1" /mnt || fail "mount $1"
  contents "$1"
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
  echo "GUEST OK: $1: $(wc -l < /tmp/got.txt) entries as the rules say, contents as the tree"
}
check /dev/vda
check /dev/vdb
check /dev/vdc
mount -t f2fs -o ro /dev/vdd /mnt || fail "mount /dev/vdd (sload.f2fs's image)"
contents /dev/vdd
labels /dev/vdd > /tmp/lgot.txt
awk '{ print $1, $6 }' /in/expect.txt | sort > /tmp/lwant.txt
cmp /tmp/lwant.txt /tmp/lgot.txt || { diff /tmp/lwant.txt /tmp/lgot.txt; fail "sload.f2fs's image: labels differ from ours"; }
umount /mnt || fail "umount /dev/vdd"
echo "GUEST OK: /dev/vdd (sload.f2fs): contents and labels as ours"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest.sh" "$a" "$b" "$c" "$d"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "android_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
echo "android_linux.sh: PASS"
