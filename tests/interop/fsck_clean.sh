#!/usr/bin/env bash
# fsck_clean.sh IMAGE: is IMAGE clean under `fsck.f2fs -f`?
#
# Runs fsck.f2fs -f on a sparse COPY of IMAGE (fsck.f2fs -f rewrites the
# checkpoint and nat_bits even of a clean image; IMAGE is never touched), with
# stdin from /dev/null, and applies the definition of "clean" from
# ../shared/NOTES.md:
#   - exit status 0;
#   - every `[FSCK] ...` summary line (one carrying a [Ok..]/[Fail] verdict)
#     says [Ok..], and the last one, "other corrupted bugs", is present;
#   - no line containing [Fail], [ASSERT], [FIX], Fixing, Reconnect or
#     Move curseg.
#   `Info: Force to fix corruption`, `[FSCK] Max image size ...` and
#   `[FSCK] fixing SIT types` are printed by clean runs and are not findings.
#   Any other `[FSCK]` line without a verdict is treated as a finding, so a
#   new kind of message fails loudly instead of passing silently.
#
# Exit: 0 clean; 1 not clean (offending lines printed, then the
# first 400 lines of the log);
# 2 usage; 77 fsck.f2fs not installed (1 instead if F2FSCORE_REQUIRE_FSCK=1).
# Environment: FSCK_F2FS (default /usr/sbin/fsck.f2fs), FSCK_TIMEOUT seconds
# (default 1800), TMPDIR (where the copy goes), FSCK_CLEAN_QUIET=1 (do not
# print the log on failure).
set -euo pipefail

usage() { echo "usage: fsck_clean.sh IMAGE" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
image="$1"
[[ -f "$image" ]] || { echo "fsck_clean.sh: no such image file: $image" >&2; exit 2; }

fsck="${FSCK_F2FS:-/usr/sbin/fsck.f2fs}"
if [[ ! -x "$fsck" ]]; then
  if [[ "${F2FSCORE_REQUIRE_FSCK:-0}" == 1 ]]; then
    echo "fsck_clean.sh: FAIL: $fsck not found and F2FSCORE_REQUIRE_FSCK=1" >&2
    exit 1
  fi
  echo "fsck_clean.sh: SKIP: $fsck not found (install f2fs-tools)" >&2
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fsck_clean.XXXXXX")
trap 'rm -rf "$work"' EXIT
copy="$work/image"
cp --sparse=always -- "$image" "$copy"

set +e
timeout "${FSCK_TIMEOUT:-1800}" "$fsck" -f "$copy" </dev/null >"$work/log" 2>&1
rc=$?
set -e

problems=()
if [[ $rc -ne 0 ]]; then
  if [[ $rc -eq 124 ]]; then problems+=("fsck.f2fs timed out after ${FSCK_TIMEOUT:-1800}s")
  else problems+=("fsck.f2fs exit status $rc (expected 0)"); fi
fi
# lines that are findings wherever they appear
while IFS= read -r line; do problems+=("$line"); done < <(
  grep -F -e '[Fail]' -e '[ASSERT]' -e '[FIX]' -e 'Fixing' -e 'Reconnect' -e 'Move curseg' "$work/log" || true)
# [FSCK] lines: verdict [Ok..] or one of the two known informational lines
while IFS= read -r line; do
  case "$line" in
    *'[Ok..]'*) ;;
    *'[Fail]'*) ;;   # already reported above
    '[FSCK] Max image size:'*) ;;
    '[FSCK] fixing SIT types'*) ;;
    '[FSCK] Check node '*) ;;  # progress of large images: "Check node 401 / 4003 (10.02%)"
    *) problems+=("unexpected: $line") ;;
  esac
done < <(grep -F '[FSCK]' "$work/log" || true)
if ! grep -q '^\[FSCK\] other corrupted bugs .*\[Ok\.\.\]' "$work/log"; then
  problems+=("no '[FSCK] other corrupted bugs ... [Ok..]' line: the final verdict line is missing or not Ok")
fi

if [[ ${#problems[@]} -eq 0 ]]; then
  echo "fsck_clean.sh: PASS: $image is clean under fsck.f2fs -f"
  exit 0
fi
echo "fsck_clean.sh: FAIL: $image is not clean under fsck.f2fs -f:"
printf '  %s\n' "${problems[@]}"
if [[ "${FSCK_CLEAN_QUIET:-0}" != 1 ]]; then
  echo "---- fsck.f2fs -f output ----"
  head -n 400 "$work/log"
  [[ $(wc -l < "$work/log") -le 400 ]] || echo "... ($(wc -l < "$work/log") lines in all)"
  echo "-----------------------------"
fi
exit 1
