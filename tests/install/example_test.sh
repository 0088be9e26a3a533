#!/usr/bin/env bash
# Installs f2fscore from a build tree into a temporary prefix, builds
# examples/hello against it with find_package(f2fscore), runs it, and checks
# the layout it prints against what mkfs.f2fs 1.15 writes for 256 MiB.
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
