#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14, ASan and UBSan into
# build-fuzz/ and runs each for its share of SECONDS (default 60: half each)
# from a fresh seed corpus (one no-op patch per metadata block of each
# template image) and tests/fuzz/corpus. With F2FSCORE_JOBS (default: the
# number of cores) at least the number of targets, the targets run at the
# same time, each for its share (60 s: both for 30 s, side by side, in 30 s
# of wall time); their output follows, one target after the other:
#   open_walk: open, walk everything, and the dump tool's views (tests/fuzz/open_walk_fuzz.cpp)
#   fsck:      the checker, check-only and repair-then-recheck (tests/fuzz/fsck_fuzz.cpp)
# Fails on a crash, a sanitizer report, a leak, a timeout (a hang), an
# allocation past 1 GiB, a write in check-only mode, an error that does
# not name its structure and place, or a unit that still takes 10 s when
# run again alone (libFuzzer's slow-unit-*); the reproducer (crash-*,
# timeout-*, oom-*, slow-unit-*) is left in build-fuzz/findings/<target>/. Needs clang-14 and
# libclang-rt-14-dev (scripts/setup.sh --test).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (TARGET: open_walk, fsck; default both)
# Reproduce a finding: build-fuzz/tests/fuzz/f2fscore_<target>_fuzz FILE
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(open_walk fsck)
build=${F2FSCORE_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${F2FSCORE_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DF2FSCORE_FUZZ=ON -DF2FSCORE_BUILD_TOOLS=OFF -DF2FSCORE_WERROR=OFF >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=("f2fscore_${t}_fuzz"); done
cmake --build "$build" -j "$jobs" --target "${build_targets[@]}" >/dev/null
share=$((secs / ${#targets[@]}))
[[ $share -lt 1 ]] && share=1
# run_target T: seeds, then the fuzzer; output to $build/fuzz-T.log, exit
# status (0: no finding) to $build/fuzz-T.rc.
run_target() {
  local t=$1 bin=$build/tests/fuzz/f2fscore_${1}_fuzz corpus=$build/corpus-$1 findings=$build/findings/$1 status
  {
    mkdir -p "$corpus"
    F2FSCORE_FUZZ_WRITE_SEEDS=$corpus "$bin"
    rm -rf "$findings"
    mkdir -p "$findings"
    echo "fuzz: $t for $share s"
    set +e
    "$bin" -max_total_time="$share" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=4096 \
      -seed="${F2FSCORE_FUZZ_SEED:-1}" -print_final_stats=1 -artifact_prefix="$findings/" \
      "$corpus" "$root/tests/fuzz/corpus" 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)\|^"\|^###\|NEW_FUNC'
    status=${PIPESTATUS[0]}
    # libFuzzer keeps a unit slower than 10 s of wall time as slow-unit-*;
    # on a shared machine a stall can make any unit slow. Each is run
    # again alone: a finding only when it crashes or still takes 10 s.
    local f ms t0
    for f in "$findings"/slow-unit-*; do
      [[ -e $f ]] || continue
      t0=$(date +%s%N)
      if "$bin" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 "$f" >/dev/null 2>&1; then
        ms=$((($(date +%s%N) - t0) / 1000000))
        if ((ms < 10000)); then
          echo "fuzz: $t: ${f##*/} ran alone in $ms ms (start-up included): slow only under load, not a finding"
          rm -f "$f"
        fi
      fi
    done
    set -e
    if [[ $status -ne 0 ]] || compgen -G "$findings/*" >/dev/null; then
      echo "fuzz: $t FAILED (exit $status); reproducers:"
      ls "$findings"
      [[ $status -ne 0 ]] || status=1
    fi
    echo "$status" > "$build/fuzz-$t.rc"
  } > "$build/fuzz-$t.log" 2>&1
}
for t in "${targets[@]}"; do rm -f "$build/fuzz-$t.rc"; done
if [[ $jobs -ge ${#targets[@]} ]]; then
  for t in "${targets[@]}"; do run_target "$t" & done
  wait
else
  for t in "${targets[@]}"; do run_target "$t"; done
fi
failed=0
for t in "${targets[@]}"; do
  cat "$build/fuzz-$t.log"
  [[ "$(cat "$build/fuzz-$t.rc" 2>/dev/null)" == 0 ]] || failed=1
done
[[ $failed -ne 0 ]] && exit 1
echo "fuzz: no findings"
