#!/usr/bin/env bash
# f2fscore-dump extract --key on the image Linux 6.1 wrote with the oracle's
# test key (tests/data/linux61-encrypt.img.zst): every file under /enc has
# the size and sha256 Linux read (tests/data/linux61-encrypt.out, "F"
# lines), the symlinks Linux's targets ("L" lines); without --key /enc is
# listed as encrypted and not extracted; a key file of the wrong size is an
# error naming the file (exit 2, nothing extracted); a directory as the key
# file is an error naming it (exit 1, no abort), and /dev/zero a key of more
# than 64 bytes (exit 2, read no further: no unbounded read).
#   dump_extract_key.sh DUMP
# Skips (77) without zstd or python3.
set -uo pipefail
[[ $# -eq 1 ]] || { echo "usage: dump_extract_key.sh DUMP" >&2; exit 2; }
DUMP=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data="$here/../data"
command -v zstd >/dev/null || { echo "dump_extract_key.sh: SKIP: zstd not installed"; exit 77; }
command -v python3 >/dev/null || { echo "dump_extract_key.sh: SKIP: python3 not installed"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/dump_extract_key.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "dump_extract_key.sh: FAIL: $*"; exit 1; }
zstd -q -d "$data/linux61-encrypt.img.zst" -o "$work/img" || fail "unzstd"
python3 -c "import sys; sys.stdout.buffer.write(bytes(0x5a ^ i for i in range(64)))" > "$work/key" || fail "key"
mkdir "$work/out" "$work/nokey" "$work/bad"
if ! "$DUMP" "$work/img" extract --key "$work/key" / "$work/out" > "$work/log" 2>&1; then
  grep -q 'no OpenSSL' "$work/log" && { echo "dump_extract_key.sh: SKIP: built without OpenSSL"; exit 77; }
  cat "$work/log"; fail "extract --key"
fi
n=0
while read -r tag p size sha; do
  case $tag in
    F) [[ $(stat -c %s "$work/out/enc/$p") == "$size" ]] || fail "$p: size"
       [[ $(sha256sum < "$work/out/enc/$p" | cut -d' ' -f1) == "$sha" ]] || fail "$p: sha256 differs from Linux's"
       n=$((n + 1)) ;;
    L) [[ $(readlink "$work/out/enc/$p") == "$size" ]] || fail "$p: link target differs from Linux's"
       n=$((n + 1)) ;;
  esac
done < "$data/linux61-encrypt.out"
[[ $n -eq 8 ]] || fail "checked $n entries, want 8"
[[ $(ls "$work/out/enc/many" | wc -l) -eq 120 ]] || fail "/enc/many: not 120 names"
"$DUMP" --json "$work/img" extract / "$work/nokey" > "$work/nokey.json" 2>&1 || fail "extract without a key"
grep -q '"/enc"' "$work/nokey.json" || fail "without --key, /enc is not listed as encrypted"
[[ ! -e "$work/nokey/enc" ]] || fail "without --key, /enc was extracted"
head -c 32 "$work/key" > "$work/short"
"$DUMP" "$work/img" extract --key "$work/short" / "$work/bad" > "$work/bad.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "a 32-byte key: exit $rc, want 2 (bad input)"
grep -q "$work/short" "$work/bad.log" || fail "the error does not name the key file: $(cat "$work/bad.log")"
[[ -z $(ls "$work/bad") ]] || fail "a refused key extracted something"
mkdir "$work/keydir"
"$DUMP" "$work/img" extract --key "$work/keydir" / "$work/bad" > "$work/dir.log" 2>&1
rc=$?
[[ $rc -eq 1 ]] || fail "a directory as the key file: exit $rc, want 1: $(cat "$work/dir.log")"
grep -q "$work/keydir: cannot read the key file" "$work/dir.log" || fail "the error does not name the key directory: $(cat "$work/dir.log")"
if [[ -c /dev/zero ]]; then
  timeout 20 "$DUMP" "$work/img" extract --key /dev/zero / "$work/bad" > "$work/zero.log" 2>&1
  rc=$?
  [[ $rc -eq 2 ]] || fail "/dev/zero as the key file: exit $rc, want 2: $(cat "$work/zero.log")"
  grep -q "more than 64" "$work/zero.log" || fail "/dev/zero: the error does not say the key is too long: $(cat "$work/zero.log")"
fi
[[ -z $(ls "$work/bad") ]] || fail "a refused key extracted something"
echo "dump_extract_key.sh: PASS: $n files and links as Linux read them"
