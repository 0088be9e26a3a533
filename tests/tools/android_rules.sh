#!/usr/bin/env bash
# sload.f2fs's Android options in f2fscore-sload and f2fscore-mkfs --populate:
#  1. An AOSP-like system tree (tests/tools/android_tree.sh) loaded as the
#     Android build calls sload.f2fs (mkf2fsuserimg.sh: -C fs_config -f DIR
#     -p PRODUCT_OUT -s file_contexts -t /system -T TIME; the file_contexts
#     split in two files, -s A,B), and by
#     f2fscore-mkfs --populate with the long options: every entry's mode,
#     owner, security.capability and security.selinux, read back with
#     f2fscore-dump, equal the hand-written expect.txt; fsck.f2fs -f finds
#     both images clean.
#  2. Bad inputs into an image that holds a tree already, each exit status 1
#     (2 for usage), the error naming what is wrong, and the image's bytes
#     unchanged (cksum): a malformed fs_config line (FILE:LINE), an entry
#     without a rule (its path), a malformed file_contexts (the file, with
#     libselinux's message), a path without a context, -p without -C; and a
#     source file that cannot be read (named; the rest copied).
#  3. Reproducible images: the same content created in another order (files
#     made in reverse, other mtimes, a hard link made from the other side)
#     gives a byte-identical image with mkfs -U -T --populate, and with mkfs
#     -U -T then sload -T.
#   android_rules.sh MKFS SLOAD DUMP
# Skips (77) without python3, or without libselinux in the build unless
# F2FSCORE_REQUIRE_SELINUX=1.
set -uo pipefail
[[ $# -eq 3 ]] || { echo "usage: android_rules.sh MKFS SLOAD DUMP" >&2; exit 2; }
MKFS=$1 SLOAD=$2 DUMP=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
source "$here/android_tree.sh"
skip() {
  if [[ ${F2FSCORE_REQUIRE_SELINUX:-0} == 1 ]]; then echo "android_rules.sh: FAIL: $*"; exit 1; fi
  echo "android_rules.sh: SKIP: $*"; exit 77
}
command -v python3 >/dev/null || skip "python3 not installed"
T=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-android.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "android_rules.sh: FAIL: $*"; fail=1; }
fsck_clean() {
  if [[ -x "${FSCK_F2FS:-/usr/sbin/fsck.f2fs}" ]]; then
    FSCK_CLEAN_QUIET=1 "$repo_root/tests/interop/fsck_clean.sh" "$1" >"$T/fsck.log" 2>&1 ||
      { head -20 "$T/fsck.log"; bad "fsck.f2fs -f: $2 not clean"; }
  elif [[ ${F2FSCORE_REQUIRE_FSCK:-0} == 1 ]]; then
    bad "fsck.f2fs not installed"
  fi
}

android_tree "$T/out"
out=$("$SLOAD" -q -f "$T/out/system" -s "$T/out/etc/file_contexts" "$T/none.img" 2>&1)
[[ $out == *"no libselinux"* ]] && skip "this build has no libselinux: $out"
size=$((64 << 20))

# 1. As the Android build calls sload.f2fs, and as mkfs --populate.
truncate -s $size "$T/sload.img" "$T/mkfs.img"
"$MKFS" -q -f "$T/sload.img" || bad "mkfs"
# sload gets the file_contexts as two files (-s A,B), read as one list.
head -3 "$T/out/etc/file_contexts" >"$T/fc_a"
tail -n +4 "$T/out/etc/file_contexts" >"$T/fc_b"
"$SLOAD" -q -C "$T/out/etc/fs_config" -f "$T/out/system" -p "$T/out" -s "$T/fc_a,$T/fc_b" -t /system \
  -T 1230768000 "$T/sload.img" || bad "sload with sload.f2fs's Android options (exit $?)"
"$MKFS" -q -f -T 1230768000 --populate "$T/out/system" --fs-config "$T/out/etc/fs_config" \
  --file-contexts "$T/out/etc/file_contexts" --mount-point /system --product-out "$T/out" "$T/mkfs.img" ||
  bad "mkfs --populate with the Android options (exit $?)"
for img in sload mkfs; do
  python3 "$here/android_manifest.py" "$DUMP" "$T/$img.img" >"$T/$img.txt" 2>&1 || bad "$img: reading the image back"
  diff -u "$T/out/expect.txt" "$T/$img.txt" || bad "$img: modes, owners or xattrs differ from the rules"
  fsck_clean "$T/$img.img" "$img image"
done

# 2. Bad inputs into an image that holds the tree already: nothing written.
cp "$T/sload.img" "$T/held.img"
before=$(cksum <"$T/held.img")
expect_refused() {  # WANTED-EXIT WANTED-TEXT WHAT ARGS...
  local want=$1 text=$2 what=$3
  shift 3
  local msg rc
  msg=$("$SLOAD" -q "$@" "$T/held.img" 2>&1)
  rc=$?
  [[ $rc -eq $want ]] || bad "$what: exit $rc, wanted $want ($msg)"
  [[ $msg == *"$text"* ]] || bad "$what: message \"$msg\" does not say \"$text\""
  [[ $(cksum <"$T/held.img") == "$before" ]] || bad "$what: the image changed"
}
src=(-f "$T/out/system" -t /system)
{ head -3 "$T/out/etc/fs_config"; echo "system/bin/sh 0 two 0755"; tail -n +4 "$T/out/etc/fs_config"; } >"$T/fs_config.bad"
expect_refused 1 "$T/fs_config.bad:4: gid \"two\" is not a decimal number" "malformed fs_config line" \
  -C "$T/fs_config.bad" "${src[@]}"
grep -v '^system/lib/libc.so ' "$T/out/etc/fs_config" >"$T/fs_config.short"
expect_refused 1 "fs_config $T/fs_config.short: no rule for system/lib/libc.so; nothing written" "missing rule" \
  -C "$T/fs_config.short" "${src[@]}"
{ cat "$T/out/etc/file_contexts"; echo "/system/xbin"; } >"$T/file_contexts.bad"
expect_refused 1 "file_contexts $T/file_contexts.bad: $T/file_contexts.bad:  line 7 is missing fields" \
  "malformed file_contexts" -s "$T/file_contexts.bad" "${src[@]}"
expect_refused 1 "no SELinux context for /vendor in file_contexts" "a path without a context" \
  -s "$T/out/etc/file_contexts" -f "$T/out/system" -t /vendor
expect_refused 2 "-p: the product-out directory serves Android's built-in fs_config tables" "-p without -C" \
  -p "$T/out" "${src[@]}"
expect_refused 1 "fs_config $T/nope: cannot open it" "a missing fs_config file" -C "$T/nope" "${src[@]}"

# mkfs --populate checks the rules before the format: the file keeps its bytes.
msg=$("$MKFS" -q -f --populate "$T/out/system" --fs-config "$T/fs_config.short" --mount-point /system \
  "$T/held.img" 2>&1)
rc=$?
[[ $rc -eq 1 && $msg == *"no rule for system/lib/libc.so"* ]] || bad "mkfs --populate, a missing rule: exit $rc, \"$msg\""
[[ $(cksum <"$T/held.img") == "$before" ]] || bad "mkfs --populate, a missing rule: the image changed"
msg=$("$MKFS" -q -f --populate "$T/out/system" --file-contexts "$T/file_contexts.bad" "$T/held.img" 2>&1)
rc=$?
[[ $rc -eq 1 && $msg == *"$T/file_contexts.bad:  line 7 is missing fields"* ]] ||
  bad "mkfs --populate, a malformed file_contexts: exit $rc, \"$msg\""
[[ $(cksum <"$T/held.img") == "$before" ]] || bad "mkfs --populate, a malformed file_contexts: the image changed"
msg=$("$MKFS" -q -f --fs-config "$T/out/etc/fs_config" "$T/held.img" 2>&1)
[[ $? -eq 2 ]] || bad "mkfs --fs-config without --populate: not a usage error ($msg)"
msg=$("$MKFS" -q -f --populate "$T/out/system" --product-out "$T/out" "$T/held.img" 2>&1)
[[ $? -eq 2 ]] || bad "mkfs --product-out without --fs-config: not a usage error ($msg)"
[[ $(cksum <"$T/held.img") == "$before" ]] || bad "mkfs usage errors: the image changed"

# A source file that cannot be read: named, exit 1, the rest copied.
u=$T/unread
mkdir -p "$u/src"
printf 'secret\n' >"$u/src/locked"
printf 'open\n' >"$u/src/open"
chmod 000 "$u/src/locked"
truncate -s $size "$u/u.img"
"$MKFS" -q -f "$u/u.img"
run=()
if [[ $(id -u) -eq 0 ]]; then  # root reads any file: load as nobody
  chmod 0755 "$T" "$u" "$u/src" && chmod 0666 "$u/u.img"
  run=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
msg=$("${run[@]}" "$SLOAD" -q -f "$u/src" "$u/u.img" 2>&1)
rc=$?
[[ $rc -eq 1 && $msg == *"$u/src/locked -> /locked"* ]] || bad "unreadable source file: exit $rc, \"$msg\""
[[ $("$DUMP" "$u/u.img" cat /open 2>&1) == open ]] || bad "unreadable source file: the readable one not copied"

# 3. Reproducible: the same content made in another order and at other times.
make_tree() {  # DIR ORDER(forward|reverse) MTIME
  local d=$1 order=$2 t=$3 names=(a b c d e f g h)
  mkdir -p "$d"
  [[ $order == reverse ]] && names=(h g f e d c b a)
  for n in "${names[@]}"; do
    mkdir -p "$d/dir$n"
    printf 'file %s\n' "$n" >"$d/dir$n/$n.txt"
    printf 'top %s\n' "$n" >"$d/$n"
  done
  if [[ $order == reverse ]]; then ln "$d/h" "$d/dira/link"; ln -s a "$d/sym"
  else ln -s a "$d/sym"; ln "$d/h" "$d/dira/link"; fi
  find "$d" -exec touch -h -d "@$t" {} +
}
# On tmpfs readdir returns the newest entry first (on ext4, hash order
# whatever the order of creation), so there the two trees list differently.
trees=$T
if [[ -d /dev/shm && -w /dev/shm ]] && shm=$(mktemp -d /dev/shm/f2fscore-android.XXXXXX); then
  trees=$shm
  trap 'rm -rf "$T" "$shm"' EXIT
fi
make_tree "$trees/r1" forward 1600000000
make_tree "$trees/r2" reverse 1700000000
[[ $(ls -f "$trees/r1" | tr '\n' ' ') != $(ls -f "$trees/r2" | tr '\n' ' ') ]] ||
  echo "android_rules.sh: note: both trees list in the same order here"
ids=(-U 5a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9 -T 1500000000)
for n in 1 2; do
  truncate -s $size "$T/p$n.img" "$T/s$n.img"
  "$MKFS" -q -f "${ids[@]}" --populate "$trees/r$n" "$T/p$n.img" || bad "mkfs --populate r$n"
  "$MKFS" -q -f "${ids[@]}" "$T/s$n.img" && "$SLOAD" -q -T 1500000000 -f "$trees/r$n" "$T/s$n.img" || bad "sload r$n"
done
cmp -s "$T/p1.img" "$T/p2.img" || bad "mkfs --populate of the same content in another order: images differ"
cmp -s "$T/s1.img" "$T/s2.img" || bad "sload of the same content in another order: images differ"

[[ $fail -eq 0 ]] && echo "android_rules.sh: PASS"
exit $fail
