#!/usr/bin/env bash
# conformance.sh: the same sequence of system calls and error cases
# (conformance.c: open flags, truncate, chmod/chown, links, symlinks, FIFOs
# and device nodes, rename/renameat2 between every pair of kinds with
# RENAME_NOREPLACE and RENAME_EXCHANGE, name and target lengths, setgid
# directories, pread/pwrite, SEEK_DATA/SEEK_HOLE, fallocate modes, fsync,
# O_APPEND, O_TRUNC, files unlinked while open, xattrs, utimensat with
# nanoseconds and UTIME_OMIT, and permission checks as uid 1000) on an
# f2fscore-fuse mount and on Linux's f2fs in the oracle; every line
# (return value, errno, stat fields) must be equal. Then the volume is
# unmounted and both checkers must find it clean.
# Exit: 0 pass; 1 fail; 77 skip (fails under F2FSCORE_REQUIRE_FUSE=1 or
# F2FSCORE_REQUIRE_ORACLE=1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_fuse gcc
oracle="${F2FSCORE_ORACLE:-$here/../../../shared/oracle/linux-f2fs}"
[[ -x "$oracle" ]] || skip "no Linux oracle at $oracle"

work=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-fuse-conf.XXXXXX")
FUSE_PID=
cleanup() {
  set +e
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && wait "$FUSE_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/in"
gcc -O1 -static -o "$work/in/conf" "$here/conformance.c" 2>"$work/cc.log" || { cat "$work/cc.log" >&2; skip "cannot build a static conformance.c (glibc static libraries)"; }

for side in ours linux; do
  truncate -s 256M "$work/$side.img"
  "$MKFS" "$work/$side.img" >/dev/null
done
fuse_mount "$work/ours.img" "$work/mnt"
mkdir "$work/mnt/t"
"$work/in/conf" "$work/mnt/t" >"$work/ours.out"
fuse_umount "$work/mnt"
check_clean "$work/ours.img" "conformance run"

printf 'mount -t f2fs /dev/vda /mnt || exit 3\nmkdir /mnt/t\n/in/conf /mnt/t\numount /mnt\n' >"$work/guest.sh"
"$oracle" --in "$work/in" --timeout 300 "$work/guest.sh" "$work/linux.img" >"$work/linux.raw" 2>&1 ||
  { tail -20 "$work/linux.raw" >&2; fail "the oracle run failed"; }
grep -E '^[0-9]{3,} |^---|^===' "$work/linux.raw" >"$work/linux.out" || true
n=$(grep -cE '^[0-9]{3,} ' "$work/linux.out" || true)
[[ $n -ge 300 ]] || { tail -20 "$work/linux.raw" >&2; fail "Linux ran only $n cases"; }
if ! diff -u "$work/linux.out" "$work/ours.out" >"$work/diff"; then
  grep -c '^-[0-9]' "$work/diff" >&2 || true
  head -60 "$work/diff" >&2
  fail "the results on f2fscore-fuse differ from Linux f2fs"
fi
echo "ok: $n system call cases, the same results on f2fscore-fuse and on Linux f2fs"
echo "PASS: conformance"
