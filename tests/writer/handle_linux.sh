#!/usr/bin/env bash
# handle_linux.sh TEST_BINARY: the handle API's results (return values,
# errno, what was read) against Linux's for the same calls.
#
#   1. TEST_BINARY (f2fscore_handle_tests) runs HandleOracle.DISABLED_Run:
#      our mkfs (256 MiB), the image saved, then handle_cases.txt through
#      Writer::open(), the calls by path and FileHandle; its output and the
#      image after unmount saved.
#   2. handle_cases.c, built static, runs the same script as system calls
#      on Linux 6.1's f2fs in the oracle, on the saved fresh image.
#   3. Every output line must be equal, and both images clean under
#      fsck.f2fs -f.
# With HANDLE_UPDATE_GOLDEN=1 Linux's output replaces
# tests/writer/handle_cases.linux.out (what the unit test compares with).
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle, fsck.f2fs or
# static gcc), 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: handle_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup handle_linux.sh --fsck
command -v gcc >/dev/null || oracle_skip "gcc not found"

oracle_workdir
mkdir -p "$work/in"
gcc -O1 -static -o "$work/in/hc" "$here/handle_cases.c" 2>"$work/cc.log" ||
  { cat "$work/cc.log" >&2; oracle_skip "cannot build a static handle_cases.c (glibc static libraries)"; }
cp "$here/handle_cases.txt" "$work/in/"

HANDLE_FRESH="$work/linux.img" HANDLE_OUT="$work/ours.out" HANDLE_FINAL="$work/ours.img" \
  "$bin" --gtest_also_run_disabled_tests --gtest_filter=HandleOracle.DISABLED_Run >"$work/gen.log" 2>&1 ||
  { cat "$work/gen.log"; echo "handle_linux.sh: FAIL: our run failed"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$work/ours.img" ||
  { echo "handle_linux.sh: FAIL: fsck.f2fs after our run"; exit 1; }

printf 'mount -t f2fs /dev/vda /mnt || exit 3\nmkdir /mnt/t\n/in/hc /in/handle_cases.txt /mnt/t\numount /mnt\n' >"$work/guest.sh"
"$oracle" --in "$work/in" --timeout 300 "$work/guest.sh" "$work/linux.img" >"$work/linux.raw" 2>&1 ||
  { tail -20 "$work/linux.raw" >&2; echo "handle_linux.sh: FAIL: the oracle run failed"; exit 1; }
grep -E '^[0-9]{3} |^=== ' "$work/linux.raw" >"$work/linux.out" || true
n=$(grep -cE '^[0-9]{3} ' "$work/linux.out" || true)
[[ $n -ge 300 ]] || { tail -20 "$work/linux.raw" >&2; echo "handle_linux.sh: FAIL: Linux ran only $n cases"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$work/linux.img" ||
  { echo "handle_linux.sh: FAIL: fsck.f2fs after Linux's run"; exit 1; }
if [[ "${HANDLE_UPDATE_GOLDEN:-0}" == 1 ]]; then
  cp "$work/linux.out" "$here/handle_cases.linux.out"
  echo "handle_linux.sh: wrote $here/handle_cases.linux.out"
fi
if ! diff -u "$work/linux.out" "$work/ours.out" >"$work/diff"; then
  echo "handle_linux.sh: $(grep -c '^-[0-9]' "$work/diff" || true) of $n cases differ (- Linux, + ours):" >&2
  head -80 "$work/diff" >&2
  [[ -n "${HANDLE_KEEP:-}" ]] && cp "$work/linux.out" "$work/ours.out" "$HANDLE_KEEP/"
  echo "handle_linux.sh: FAIL: the handle API's results differ from Linux f2fs"
  exit 1
fi
echo "handle_linux.sh: ok: $n cases, the same results through the handle API and on Linux f2fs"
echo "PASS: handle_linux"
