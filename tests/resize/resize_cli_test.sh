#!/usr/bin/env bash
# f2fscore-resize's command line: -t values that are not a sector count from 1
# to 2^55-1 (negative, empty, zero, not decimal, past 64 bits of bytes) are
# usage errors (exit 2, prefixed with the tool's name), and the image is not
# changed; a valid -t with -n plans without writing; an encryption volume
# grows through the writer and checks clean.
set -uo pipefail
MKFS=${F2FSCORE_MKFS:?} RESIZE=${F2FSCORE_RESIZE:?} FSCK=${F2FSCORE_FSCK:?}
T=$(mktemp -d /tmp/f2fscore-resize-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
truncate -s 256M "$T/v.img"
"$MKFS" -q "$T/v.img" || { echo "FAIL: mkfs"; exit 1; }
before=$(sha256sum <"$T/v.img")
fail=0
for t in -1 "" 0 abc 12x 0x100 36028797018963968 18446744073709551616 99999999999999999999999; do
  out=$("$RESIZE" -s -t "$t" "$T/v.img" 2>&1); rc=$?
  if [[ $rc != 2 || "$out" != f2fscore-resize:* ]]; then
    echo "FAIL: -t '$t': exit $rc, expected 2 with the tool's name: $out"; fail=1
  fi
done
out=$("$RESIZE" -n -s -t 409600 "$T/v.img" 2>&1); rc=$?
[[ $rc == 0 ]] || { echo "FAIL: -n -s -t 409600: exit $rc: $out"; fail=1; }
[[ "$(sha256sum <"$T/v.img")" == "$before" ]] || { echo "FAIL: the image changed"; fail=1; }
# A grow that must move blocks (the metadata areas grow over the main
# area's start) of an encryption volume: the dry run writes nothing, the
# run grows it through the writer (encrypted blocks move as they are), and
# the result checks clean (fsck.f2fs -f too, where installed).
truncate -s 256M "$T/c.img"
"$MKFS" -q -O encrypt "$T/c.img" || { echo "FAIL: mkfs -O encrypt"; exit 1; }
truncate -s 1536M "$T/c.img"
cbefore=$(sha256sum <"$T/c.img")
out=$("$RESIZE" -n "$T/c.img" 2>&1); rc=$?
[[ $rc == 0 ]] || { echo "FAIL: resize -n of an encryption volume: exit $rc: $out"; fail=1; }
[[ "$(sha256sum <"$T/c.img")" == "$cbefore" ]] || { echo "FAIL: resize -n changed the encryption image"; fail=1; }
out=$("$RESIZE" "$T/c.img" 2>&1); rc=$?
if [[ $rc != 0 || "$out" != *"-> 393216 blocks"* ]]; then
  echo "FAIL: resize of an encryption volume to 1536 MiB: exit $rc, expected 0 and 393216 blocks: $out"; fail=1
fi
out=$("$FSCK" -n -f "$T/c.img" 2>&1) || { echo "FAIL: our fsck after growing the encryption volume: $out"; fail=1; }
if command -v fsck.f2fs >/dev/null; then
  fsck.f2fs -f "$T/c.img" >"$T/fsck.out" 2>&1 || { echo "FAIL: fsck.f2fs -f after growing the encryption volume"; cat "$T/fsck.out"; fail=1; }
fi
# A file system of another kind is named, not called a bad superblock.
if command -v mkfs.ext4 >/dev/null; then
  truncate -s 64M "$T/e.img" && mkfs.ext4 -q -F "$T/e.img"
  out=$("$RESIZE" "$T/e.img" 2>&1); rc=$?
  if [[ $rc != 1 || "$out" != *"another kind (ext4)"* ]]; then
    echo "FAIL: resize of an ext4 image: exit $rc, expected 1 naming ext4: $out"; fail=1
  fi
fi
((fail)) && exit 1
echo "PASS: f2fscore-resize -t refuses what is not a sector count, writes nothing"
