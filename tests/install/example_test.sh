#!/usr/bin/env bash
# Installs f2fscore from a build tree into a temporary prefix, builds
# examples/hello against it with find_package(f2fscore), runs it, and checks
# the layout it prints against what mkfs.f2fs 1.15 writes for 256 MiB;
# builds and runs examples/crash (a crash test through the installed
# package's file-handle API and test devices) the same way, and
# examples/crash.py through the installed Python bindings; then
# that the manual page of every tool is installed and man finds it.
set -euo pipefail
build_dir=${1:?usage: example_test.sh BUILD_DIR [PYTHON]}
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
# A build with F2FSCORE_SHARED: the same example linked with the shared
# library (f2fscore::shared), which it must load (its SONAME in the ELF
# dynamic section), printing the same line. No namelink is installed, so
# -lf2fscore (pkg-config) still finds the static archive.
so=$(find "$tmp/prefix" -name 'libf2fscore.so.*' -type f | head -n1)
if [[ -n "$so" ]]; then
  mkdir -p "$tmp/shared"
  printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "project(f2fscore_hello_shared LANGUAGES CXX)" \
    "find_package(f2fscore 0.1 REQUIRED)" "add_executable(f2fscore-hello \"$src_dir/examples/hello/main.cpp\")" \
    "target_link_libraries(f2fscore-hello PRIVATE f2fscore::shared)" > "$tmp/shared/CMakeLists.txt"
  cmake -S "$tmp/shared" -B "$tmp/build-shared" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
  cmake --build "$tmp/build-shared" >/dev/null
  out_so=$("$tmp/build-shared/f2fscore-hello")
  [[ "$out_so" == "$out" ]] || { echo "FAIL: shared build prints '$out_so', static build '$out'"; exit 1; }
  needed=$(readelf -d "$tmp/build-shared/f2fscore-hello" | grep -o 'libf2fscore\.so[.0-9]*' | head -n1)
  [[ -n "$needed" ]] || { echo "FAIL: the shared build does not load libf2fscore.so"; exit 1; }
  [[ ! -e "$(dirname "$so")/libf2fscore.so" ]] || { echo "FAIL: the namelink libf2fscore.so is installed"; exit 1; }
  echo "PASS: example built against f2fscore::shared (needs $needed, $(du -m "$so" | cut -f1) MB), same output"
fi
# examples/crash, against the same installed package: a workload through
# the file-handle API on a copy-on-write clone of a formatted memory device,
# power cut at every write with the reorder model, remount, fsck.
cmake -S "$src_dir/examples/crash" -B "$tmp/build-crash" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build-crash" >/dev/null
crash_out=$("$tmp/build-crash/f2fscore-crash-example") || { echo "$crash_out" | tail -5; echo "FAIL: examples/crash"; exit 1; }
echo "$crash_out" | tail -1
case "$crash_out" in
  *"PASS: "*" crash states"*) echo "PASS: examples/crash built against the installed package and passed" ;;
  *) echo "FAIL: examples/crash printed no PASS line"; exit 1 ;;
esac
# examples/crash.py, the same crash test through the installed Python
# bindings (PYTHON, the second argument, is the interpreter they were built
# for; empty when the build has no bindings). Both drive the same engine
# with the same seeds, so they see the same crash states.
python=${2:-}
if [[ -n "$python" ]]; then
  so=$(find "$tmp/prefix" -name '_f2fscore*.so' | head -n1)
  [[ -n "$so" ]] || { echo "FAIL: the Python module is not installed"; exit 1; }
  site=$(dirname "$(dirname "$so")")
  py_out=$(cd "$tmp" && PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "$python" "$src_dir/examples/crash.py") ||
    { echo "$py_out" | tail -5; echo "FAIL: examples/crash.py"; exit 1; }
  echo "$py_out" | tail -1
  [[ "$(echo "$py_out" | tail -1)" == "$(echo "$crash_out" | tail -1)" ]] ||
    { echo "FAIL: examples/crash.py and examples/crash disagree"; exit 1; }
  echo "PASS: examples/crash.py passed against the installed bindings (${site#"$tmp/prefix/"}), as examples/crash"
elif [[ "${CI:-}" == "true" || "${F2FSCORE_REQUIRE_PYTHON:-0}" == 1 ]]; then
  echo "FAIL: built without the Python bindings (pybind11-dev, python3-dev): examples/crash.py not run"; exit 1
else
  echo "SKIP: built without the Python bindings: examples/crash.py not run"
fi
# Every tool in one directory (sbin, as f2fs-tools and e2fsprogs install
# theirs), with its bash completion.
for tool in mkfs fsck dump sload io label tune resize; do
  [[ -x "$tmp/prefix/sbin/f2fscore-$tool" ]] || { echo "FAIL: sbin/f2fscore-$tool not installed"; exit 1; }
  [[ -f "$tmp/prefix/share/bash-completion/completions/f2fscore-$tool" ]] ||
    { echo "FAIL: no bash completion installed for f2fscore-$tool"; exit 1; }
done
if compgen -G "$tmp/prefix/bin/*" >/dev/null; then echo "FAIL: tools installed in bin/: $(ls "$tmp/prefix/bin")"; exit 1; fi
echo "PASS: every tool in sbin/, each with its bash completion"
# pkg-config: the same example built with the flags f2fscore.pc gives.
if command -v pkg-config >/dev/null; then
  pc_dir=$(dirname "$(find "$tmp/prefix" -name f2fscore.pc | head -n1)")
  [[ -f "$pc_dir/f2fscore-host.pc" ]] || { echo "FAIL: f2fscore-host.pc not installed"; exit 1; }
  flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs f2fscore) ||
    { echo "FAIL: pkg-config --cflags --libs f2fscore"; exit 1; }
  # shellcheck disable=SC2086  # flags is a word list
  c++ -o "$tmp/hello-pc" "$src_dir/examples/hello/main.cpp" $flags ||
    { echo "FAIL: the example does not build with pkg-config's flags: $flags"; exit 1; }
  out_pc=$("$tmp/hello-pc")
  [[ "$out_pc" == "$out" ]] || { echo "FAIL: pkg-config build prints '$out_pc', find_package build '$out'"; exit 1; }
  PKG_CONFIG_PATH="$pc_dir" pkg-config --exists f2fscore-host || { echo "FAIL: pkg-config f2fscore-host"; exit 1; }
  echo "PASS: example built with pkg-config's flags ($flags)"
elif [[ "${CI:-}" == "true" ]]; then
  echo "FAIL: pkg-config missing"; exit 1
fi
# Manual pages: built when scdoc is there (a missing scdoc fails under
# CI=true or F2FSCORE_REQUIRE_MAN=1, else skips this part).
if ! command -v scdoc >/dev/null || ! command -v man >/dev/null; then
  if [[ "${F2FSCORE_REQUIRE_MAN:-0}" == 1 || "${CI:-}" == "true" ]]; then
    echo "FAIL: scdoc or man missing: manual pages not checked"; exit 1
  fi
  echo "SKIP: scdoc or man missing: manual pages not checked"; exit 0
fi
for tool in mkfs fsck dump sload io label tune resize; do
  page="$tmp/prefix/share/man/man8/f2fscore-$tool.8"
  [[ -f "$page" ]] || { echo "FAIL: $page not installed"; exit 1; }
  text=$(MANPAGER=cat MANWIDTH=80 man -M "$tmp/prefix/share/man" "f2fscore-$tool" 2>&1) ||
    { echo "FAIL: man -M $tmp/prefix/share/man f2fscore-$tool: $text"; exit 1; }
  grep -q "^NAME" <<<"$text" && grep -q "f2fscore-$tool - " <<<"$text" ||
    { echo "FAIL: man f2fscore-$tool shows no NAME section: $text"; exit 1; }
done
echo "PASS: man -M <prefix>/share/man finds the page of every tool"
