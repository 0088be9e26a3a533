#!/usr/bin/env bash
# Compressed files through f2fscore-fuse: the f2fs compression ioctls
# (tests/writer/compress_ioctl.c, built here) and the compression mount
# options, with counts hand-computed from Linux 6.1's rules (the same the
# Linux oracle confirms in tests/writer/writer_compress_linux.sh): a 64 KiB
# file of zeroes in lz4 clusters of 4 blocks is 4 clusters that each
# compress to one block, so COMPRESS_FILE saves 12 blocks, RELEASE gives
# 12 back and RESERVE takes 12 again. Errno values are Linux's
# (f2fs_ioc_compress_file(), f2fs_release_compress_blocks(),
# f2fs_reserve_compress_blocks(), f2fs_get_compress_blocks()): EOPNOTSUPP
# (95) for COMPRESS_FILE outside compress_mode=user, EINVAL (22) for a file
# that is not compressed or not released, EBUSY (16) for RELEASE while
# another descriptor writes, EPERM on writing a released file. Both
# checkers are clean after each mount.
# Skips (77) without root, /dev/fuse, fuse3, chattr or a C compiler.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_fuse chattr cc

work=$(mktemp -d "${TMPDIR:-/tmp}/fuse_compress.XXXXXX")
FUSE_PID=""
cleanup() {
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && wait "$FUSE_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
img="$work/img"
mnt="$work/mnt"
C="$work/compress_ioctl"
cc -O2 -o "$C" "$here/../writer/compress_ioctl.c" || skip "cannot build compress_ioctl.c"
truncate -s 256M "$img"
"$MKFS" -q -O extra_attr,compression "$img" >/dev/null
expect() {  # WHAT WANT CMD...: CMD prints WANT
  local what="$1" want="$2"; shift 2
  local got
  got=$("$@" 2>&1) || true
  [[ "$got" == "$want" ]] || fail "$what: got '$got', want '$want'"
}

fuse_mount "$img" "$mnt" "compress_algorithm=lz4,compress_log_size=2,compress_mode=user"
mkdir "$mnt/c"
chattr +c "$mnt/c" || fail "chattr +c"
head -c 65536 /dev/zero > "$mnt/c/z"
head -c 65536 /dev/zero > "$mnt/p"
sync "$mnt/c/z"
expect "GET after a user-mode write" 0 "$C" get "$mnt/c/z"
expect "COMPRESS_FILE" ok "$C" compress "$mnt/c/z"
expect "GET after COMPRESS_FILE" 12 "$C" get "$mnt/c/z"
expect "COMPRESS_FILE of a plain file" "errno 22" "$C" compress "$mnt/p"
expect "GET of a plain file" "errno 22" "$C" get "$mnt/p"
expect "RESERVE before RELEASE" "errno 22" "$C" reserve "$mnt/c/z"
exec 3>>"$mnt/c/z"
expect "RELEASE while another descriptor writes" "errno 16" "$C" release "$mnt/c/z"
exec 3>&-
expect "RELEASE" 12 "$C" release "$mnt/c/z"
expect "GET after RELEASE" 0 "$C" get "$mnt/c/z"
if (echo x >> "$mnt/c/z") 2>/dev/null; then fail "a released file took a write"; fi
expect "RESERVE" 12 "$C" reserve "$mnt/c/z"
expect "GET after RESERVE" 12 "$C" get "$mnt/c/z"
printf 'after the reserve' | dd of="$mnt/c/z" bs=1 seek=5000 conv=notrunc 2>/dev/null || fail "write after RESERVE"
expect "DECOMPRESS_FILE" ok "$C" decompress "$mnt/c/z"
expect "GET after DECOMPRESS_FILE" 0 "$C" get "$mnt/c/z"
{ head -c 5000 /dev/zero; printf 'after the reserve'; head -c $((65536 - 5017)) /dev/zero; } > "$work/want"
cmp "$work/want" "$mnt/c/z" || fail "z reads back differently"
echo "ok: COMPRESS_FILE, RELEASE, RESERVE, DECOMPRESS_FILE and their refusals"
fuse_umount "$mnt"
check_clean "$img" "after the compression ioctls"

fuse_mount "$img" "$mnt" "compress_algorithm=lz4,compress_log_size=2"
expect "COMPRESS_FILE in compress_mode=fs" "errno 95" "$C" compress "$mnt/c/z"
cmp "$work/want" "$mnt/c/z" || fail "z after a remount"
fuse_umount "$mnt"
if "$FUSE" -f -o compress_mode=bogus "$img" "$mnt" 2>/dev/null; then fail "compress_mode=bogus accepted"; fi
plain="$work/plain"
truncate -s 256M "$plain"
"$MKFS" -q "$plain" >/dev/null
if "$FUSE" -f -o compress_mode=user "$plain" "$mnt" 2>"$work/nofeat.err"; then fail "compress_mode on a volume without compression"; fi
grep -q "no compression feature" "$work/nofeat.err" || fail "no clear error: $(cat "$work/nofeat.err")"
echo "PASS: fuse compress"
