#!/usr/bin/env bash
# One phrase for "read-only": every tool that writes, given an image it may
# not write (chattr +i: open(O_RDWR) fails with EPERM even for root), says
# "TOOL: cannot open IMAGE for writing: it is read-only" once, exits with its
# failure code and leaves the image as it was; fsck -p checks it as -n.
# Needs chattr on the scratch file system (root on ext4): skips (77) without.
#   read_only_phrase.sh MKFS SLOAD LABEL TUNE RESIZE FSCK
set -uo pipefail
MKFS=$1 SLOAD=$2 LABEL=$3 TUNE=$4 RESIZE=$5 FSCK=$6
T=$(mktemp -d /tmp/f2fscore-ro.XXXXXX)
img=$T/ro.img
trap 'chattr -i "$img" 2>/dev/null; rm -rf "$T"' EXIT
truncate -s 64M "$img"
"$MKFS" -q "$img" || { echo "FAIL: mkfs"; exit 1; }
mkdir -p "$T/src" && echo x >"$T/src/f"
chattr +i "$img" 2>/dev/null || { echo "SKIP: chattr +i does not work here"; exit 77; }
before=$(sha256sum <"$img")
fail=0
want() {  # NAME EXPECTED_RC TOOL ARGS...
  local name=$1 rc_want=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  local phrase="${name}: cannot open $img for writing: it is read-only"
  if [[ $rc != "$rc_want" ]]; then echo "FAIL: $name: exit $rc, expected $rc_want: $out"; fail=1; fi
  if [[ "$out" != "$phrase" ]]; then echo "FAIL: $name printed \"$out\", expected \"$phrase\""; fail=1; fi
}
want f2fscore-mkfs 1 "$MKFS" -f "$img"
want f2fscore-sload 1 "$SLOAD" -f "$T/src" "$img"
want f2fscore-label 1 "$LABEL" "$img" new
want f2fscore-tune 1 "$TUNE" -l new "$img"
want f2fscore-resize 1 "$RESIZE" -t 200000 "$img"
want f2fscore-fsck 8 "$FSCK" -y "$img"
out=$("$FSCK" -p "$img" 2>&1); rc=$?
[[ $rc == 0 && "$out" == *"$img is read-only: checking it without repairs (as -n)"* ]] ||
  { echo "FAIL: f2fscore-fsck -p: exit $rc: $out"; fail=1; }
[[ "$(sha256sum <"$img")" == "$before" ]] || { echo "FAIL: the image changed"; fail=1; }
((fail)) && exit 1
echo "PASS: every writing tool says \"cannot open IMAGE for writing: it is read-only\""
