#!/usr/bin/env bash
# Builds the libFuzzer target on the open-and-walk path (tests/fuzz: open,
# walk everything, and the dump tool's views) with clang-14, ASan and UBSan
# into build-fuzz/, and runs it for SECONDS (default 60) from a fresh seed
# corpus (one no-op patch per metadata block of each template image) and
# tests/fuzz/corpus. Fails on a crash, a sanitizer report, a leak, a timeout
# (a hang), an allocation past 1 GiB, or an error that does not name its
# structure and place; the reproducer (crash-*, timeout-*, oom-*) is left in
# build-fuzz/findings/. Needs clang-14 and libclang-rt-14-dev
# (scripts/setup.sh --test).
#   scripts/fuzz.sh [SECONDS]
# Reproduce a finding: build-fuzz/tests/fuzz/f2fscore_open_walk_fuzz FILE
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
build=${F2FSCORE_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${F2FSCORE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DF2FSCORE_FUZZ=ON -DF2FSCORE_BUILD_TOOLS=OFF -DF2FSCORE_WERROR=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target f2fscore_open_walk_fuzz >/dev/null
bin=$build/tests/fuzz/f2fscore_open_walk_fuzz
corpus=$build/corpus
mkdir -p "$corpus"
F2FSCORE_FUZZ_WRITE_SEEDS=$corpus "$bin"
findings=$build/findings
rm -rf "$findings"
mkdir -p "$findings"
echo "fuzz: open and walk for $secs s"
set +e
"$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=4096 \
  -seed="${F2FSCORE_FUZZ_SEED:-1}" -print_final_stats=1 -artifact_prefix="$findings/" \
  "$corpus" "$root/tests/fuzz/corpus" 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)\|^"\|^###\|NEW_FUNC'
status=${PIPESTATUS[0]}
set -e
if [[ $status -ne 0 ]] || compgen -G "$findings/*" >/dev/null; then
  echo "fuzz: FAILED (exit $status); reproducers:"
  ls "$findings"
  exit 1
fi
echo "fuzz: no findings"
