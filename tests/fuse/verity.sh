#!/usr/bin/env bash
# fs-verity through f2fscore-fuse: fsverity-utils' `fsverity enable` and
# `fsverity measure` on the mount (FS_IOC_ENABLE_VERITY and
# FS_IOC_MEASURE_VERITY, which FUSE passes to the daemon since Linux 6.9)
# against `fsverity digest` of the same bytes in a host file (the
# reference), with and without a salt; the file reads back, refuses writes
# (EPERM) and is verity after a remount; both checkers are clean.
# Skips (77) without root, /dev/fuse, fuse3 or fsverity, or on a kernel
# whose FUSE does not pass these ioctls (before 6.9).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_fuse fsverity python3

work=$(mktemp -d "${TMPDIR:-/tmp}/fuse_verity.XXXXXX")
FUSE_PID=""
cleanup() {
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && wait "$FUSE_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
img="$work/img"
mnt="$work/mnt"
truncate -s 256M "$img"
"$MKFS" -q -O extra_attr,verity "$img" >/dev/null

python3 -c "import os,sys; sys.stdout.buffer.write(bytes((i * 7 + i // 4096) & 255 for i in range(300000)))" > "$work/a"
head -c 5000 "$work/a" > "$work/b"
want_a=$(fsverity digest "$work/a" | cut -d" " -f1)
want_b=$(fsverity digest --salt=0102030405 "$work/b" | cut -d" " -f1)

fuse_mount "$img" "$mnt"
cp "$work/a" "$mnt/a"
cp "$work/b" "$mnt/b"
if ! fsverity enable "$mnt/a" 2>"$work/enable.err"; then
  if grep -qiE 'inappropriate ioctl|not supported|not a tty' "$work/enable.err"; then
    fuse_umount "$mnt"
    echo "SKIP: this kernel's FUSE does not pass FS_IOC_ENABLE_VERITY ($(uname -r)): $(cat "$work/enable.err")" >&2
    exit 77
  fi
  fail "fsverity enable: $(cat "$work/enable.err")"
fi
fsverity enable --salt=0102030405 "$mnt/b" || fail "fsverity enable --salt"
got_a=$(fsverity measure "$mnt/a" | cut -d" " -f1) || fail "fsverity measure a"
got_b=$(fsverity measure "$mnt/b" | cut -d" " -f1) || fail "fsverity measure b"
[[ "$got_a" == "$want_a" ]] || fail "a: measured $got_a, fsverity digest $want_a"
[[ "$got_b" == "$want_b" ]] || fail "b (salt): measured $got_b, fsverity digest $want_b"
echo "ok: fsverity measure on the mount equals fsverity digest (with and without a salt)"
if fsverity enable "$mnt/a" 2>/dev/null; then fail "enabling twice succeeded"; fi
if (echo x >> "$mnt/a") 2>/dev/null; then fail "a verity file took a write"; fi
if truncate -s 0 "$mnt/a" 2>/dev/null; then fail "a verity file was truncated"; fi
cmp "$work/a" "$mnt/a" || fail "a reads back differently"
echo "ok: refuses a second enable, writes and truncate; reads back"
fuse_umount "$mnt"
check_clean "$img" "after fsverity enable"
fuse_mount "$img" "$mnt"
[[ "$(fsverity measure "$mnt/a" | cut -d" " -f1)" == "$want_a" ]] || fail "a after a remount"
cmp "$work/b" "$mnt/b" || fail "b after a remount"
fuse_umount "$mnt"
echo "PASS: fuse verity"
