#!/usr/bin/env bash
# Installs f2fscore from a build tree into a temporary prefix, builds
# examples/hello against it with find_package(f2fscore), runs it, and checks
# the layout it prints against what mkfs.f2fs 1.15 writes for 256 MiB; then
# that the manual page of every tool is installed and man finds it.
set -euo pipefail
build_dir=${1:?usage: example_test.sh BUILD_DIR}
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src_dir/examples/hello" -B "$tmp/build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
out=$("$tmp/build/f2fscore-hello")
echo "$out"
# mkfs.f2fs 1.15 on 256 MiB: segment0 at 512, CP 2 + SIT 2 + NAT 2 + SSA 1
# segments, so main starts at 512 + 7*512 = 4096 with 120 main segments.
expected="label=hello main_blkaddr=4096 segment_count_main=120"
case "$out" in
  "$expected"*) echo "PASS: example built against the installed package" ;;
  *) echo "FAIL: expected '$expected...'"; exit 1 ;;
esac
# Manual pages: built when scdoc is there (a missing scdoc fails under
# CI=true or F2FSCORE_REQUIRE_MAN=1, else skips this part).
if ! command -v scdoc >/dev/null || ! command -v man >/dev/null; then
  if [[ "${F2FSCORE_REQUIRE_MAN:-0}" == 1 || "${CI:-}" == "true" ]]; then
    echo "FAIL: scdoc or man missing: manual pages not checked"; exit 1
  fi
  echo "SKIP: scdoc or man missing: manual pages not checked"; exit 0
fi
for tool in mkfs fsck dump sload io label; do
  page="$tmp/prefix/share/man/man8/f2fscore-$tool.8"
  [[ -f "$page" ]] || { echo "FAIL: $page not installed"; exit 1; }
  text=$(MANPAGER=cat MANWIDTH=80 man -M "$tmp/prefix/share/man" "f2fscore-$tool" 2>&1) ||
    { echo "FAIL: man -M $tmp/prefix/share/man f2fscore-$tool: $text"; exit 1; }
  grep -q "^NAME" <<<"$text" && grep -q "f2fscore-$tool - " <<<"$text" ||
    { echo "FAIL: man f2fscore-$tool shows no NAME section: $text"; exit 1; }
done
echo "PASS: man -M <prefix>/share/man finds the page of every tool"
