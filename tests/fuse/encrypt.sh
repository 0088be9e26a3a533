#!/usr/bin/env bash
# fscrypt through f2fscore-fuse on the image Linux 6.1 wrote with the
# oracle's test key (tests/data/linux61-encrypt.img.zst): with -o key=FILE
# /enc lists its plaintext names, its files have the sha256 Linux read
# (tests/data/linux61-encrypt.out) and take new files, which read back after
# a remount; without the key the names are Linux's no-key names ("N" lines)
# and a create there fails with ENOKEY ("Required key not available", as
# Linux's touch); a key file of the wrong size refuses the mount. Both
# checkers clean. Skips (77) without root, /dev/fuse, fuse3, zstd or python3.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_fuse zstd python3

data="$here/../data"
work=$(mktemp -d "${TMPDIR:-/tmp}/fuse_encrypt.XXXXXX")
FUSE_PID=""
cleanup() {
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && wait "$FUSE_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
img="$work/img"
mnt="$work/mnt"
zstd -q -d "$data/linux61-encrypt.img.zst" -o "$img"
python3 -c "import sys; sys.stdout.buffer.write(bytes(0x5a ^ i for i in range(64)))" > "$work/key"

if ! "$DUMP" "$img" extract --key "$work/key" /plain "$work/probe" >"$work/probe.log" 2>&1 && grep -q 'no OpenSSL' "$work/probe.log"; then
  echo "SKIP: built without OpenSSL (no fscrypt keys)" >&2
  exit 77
fi
fuse_mount "$img" "$mnt" "key=$work/key"
while read -r tag p size sha; do
  [[ $tag == F ]] || continue
  [[ $(sha256sum < "$mnt/enc/$p" | cut -d' ' -f1) == "$sha" ]] || fail "/enc/$p: sha256 differs from Linux's"
done < "$data/linux61-encrypt.out"
[[ $(readlink "$mnt/enc/sl") == small ]] || fail "/enc/sl target"
seq 1 5000 > "$mnt/enc/from-fuse"
mkdir "$mnt/enc/fuse-dir"
cp "$mnt/enc/big" "$mnt/enc/fuse-dir/copy"
fuse_umount "$mnt"
check_clean "$img" "after writing with the key"

fuse_mount "$img" "$mnt"
ls "$mnt/enc" | LC_ALL=C sort > "$work/nokey"
grep '^N ' "$data/linux61-encrypt.out" | awk '$3 != "." && $3 != ".." {print $3}' > "$work/linux-names"
[[ $(grep -cFxf "$work/linux-names" "$work/nokey") -eq $(wc -l < "$work/linux-names") ]] ||
  fail "without the key, Linux's no-key names are not all listed"
[[ $(wc -l < "$work/nokey") -eq $(( $(wc -l < "$work/linux-names") + 2 )) ]] || fail "without the key: $(cat "$work/nokey")"
if touch "$mnt/enc/new" 2>"$work/touch.err"; then fail "a create without the key succeeded"; fi
grep -q 'Required key not available' "$work/touch.err" || fail "without the key: $(cat "$work/touch.err")"
fuse_umount "$mnt"

fuse_mount "$img" "$mnt" "key=$work/key"
cmp <(seq 1 5000) "$mnt/enc/from-fuse" || fail "from-fuse after a remount"
[[ $(sha256sum < "$mnt/enc/fuse-dir/copy" | cut -d' ' -f1) == $(grep '^F big ' "$data/linux61-encrypt.out" | cut -d' ' -f4) ]] ||
  fail "fuse-dir/copy after a remount"
fuse_umount "$mnt"
check_clean "$img" "after the remounts"

head -c 10 "$work/key" > "$work/short"
if "$FUSE" -f "$img" "$mnt" -o "key=$work/short" 2>"$work/short.err"; then fail "a 10-byte key mounted"; fi
grep -q "64 bytes" "$work/short.err" || fail "short key: $(cat "$work/short.err")"
echo "fuse encrypt: PASS"
