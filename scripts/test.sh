#!/usr/bin/env bash
# Installs everything, builds, and runs every test: unit, interop with
# f2fs-tools, the installed-package example, the Linux oracle, the
# sanitizer build, and the big-endian and 32-bit cross builds under qemu-user.
# In CI (CI=true) a test that lacks what it needs fails instead of skipping.
# Ends with the wall time of each phase and the disk space left after it.
# Each phase runs with TMPDIR set to a directory of its own, removed when the
# phase ends, so what one phase leaves in it cannot fill the disk for the next.
# In CI (or with F2FSCORE_PRUNE=1) a phase's own build directory (sanitizer,
# fuzz and cross builds) is removed once the phase is done with it.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
phases=()
t_phase=$SECONDS
# free_gib DIR: the space available to DIR's filesystem, in GiB.
free_gib() { df -Pk "$1" | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }
# phase_done NAME: records the seconds since the previous phase ended and the
# space left.
phase_done() {
  phases+=("$(printf '%-28s %5d s  %6s GiB free' "$1" $((SECONDS - t_phase)) "$(free_gib "$root")")")
  t_phase=$SECONDS
}
# prune DIR...: removes build directories no later phase uses (CI only).
prune() {
  [[ "${CI:-}" == "true" || "${F2FSCORE_PRUNE:-}" == "1" ]] || return 0
  rm -rf --one-file-system "$@"
}
# Each phase's output is kept in $logs too; a phase that fails is named at
# the end with its failure lines, so the tail of a long CI log says which.
logs=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-test-logs.XXXXXX")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/f2t.XXXXXX")  # short: some tests name paths below 64 bytes
chmod 1777 "$scratch"  # as /tmp: tests that drop to nobody write there too
trap 'rm -rf --one-file-system "$scratch"' EXIT
echo "== disk: $(free_gib "$root") GiB free for the build, $(free_gib "$scratch") GiB for temporary files"
failed=()
# phase NAME CMD...: runs CMD with TMPDIR a fresh directory (removed after),
# its output to the terminal and $logs/NAME.
phase() {
  local name=$1 rc=0 tmp
  shift
  tmp="$scratch/${name//[^a-zA-Z0-9]/_}"
  mkdir -p -m 1777 "$tmp"
  (export TMPDIR="$tmp"; "$@") 2>&1 | tee "$logs/${name//[^a-zA-Z0-9]/_}.log" || rc=$?
  rm -rf --one-file-system "$tmp"
  if [[ $rc != 0 ]]; then
    failed+=("$name")
    status=1
  fi
  return $rc
}
# side_by_side LOG_PREFIX CMD... (one command per argument, run with bash -c):
# runs the commands at the same time, then prints their output one after the
# other; fails when one of them fails.
side_by_side() {
  local prefix=$1 i=0 rc=0 pids=()
  shift
  for cmd in "$@"; do
    bash -c "$cmd" > "$prefix.$i.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  i=0
  for cmd in "$@"; do
    wait "${pids[$i]}" || rc=1
    echo "-- $cmd"
    cat "$prefix.$i.log"
    i=$((i + 1))
  done
  return $rc
}

"$root/scripts/setup.sh" --test || exit 1
phase_done "setup"
if [[ "${CI:-}" == "true" || "${F2FSCORE_STRICT:-}" == "1" ]]; then
  export F2FSCORE_REQUIRE_ORACLE=1 F2FSCORE_REQUIRE_FSCK=1 F2FSCORE_REQUIRE_SHARED=1 F2FSCORE_REQUIRE_MAN=1 F2FSCORE_REQUIRE_FUSE=1 F2FSCORE_REQUIRE_SPARSE=1 F2FSCORE_REQUIRE_SELINUX=1 F2FSCORE_REQUIRE_FSVERITY=1
fi
status=0
"$root/scripts/build.sh" || exit 1
phase_done "build (native)"

echo "== sanitizers (ASan + UBSan): unit tests, the checker on seeded mutations"
asan="$root/build-asan"
if cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DF2FSCORE_SANITIZE=ON >/dev/null &&
   cmake --build "$asan" -j "$jobs" --target f2fscore_unit_tests f2fscore_fsck_mutation_tests >/dev/null; then
  phase_done "sanitizers: build"
  # Both single-threaded: side by side on the cores.
  phase "sanitizers" side_by_side "$asan/run" \
    "'$asan/tests/f2fscore_unit_tests' --gtest_brief=1" \
    "'$asan/tests/fsck/f2fscore_fsck_mutation_tests' --gtest_brief=1"
else
  failed+=("sanitizers (build)")
  status=1
fi
prune "$asan"
phase_done "sanitizers: tests"

echo "== ThreadSanitizer: f2fscore-fuse's worker threads under git, stress-ng and fio"
# The daemon serves requests on several threads; a race there corrupts the
# heap far from its cause. The git and stress-ng phases of the programs
# test, with a TSan build of the daemon that stops at its first report.
tsan="$root/build-tsan"
if cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
     -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_C_FLAGS="-fsanitize=thread" \
     -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DF2FSCORE_WERROR=OFF >/dev/null &&
   cmake --build "$tsan" -j "$jobs" --target f2fscore-fuse >/dev/null; then
  phase_done "tsan: build"
  # TSan needs a memory layout some kernels' ASLR settings refuse.
  if ! "$tsan/tools/fuse/f2fscore-fuse" --version >/dev/null 2>"$logs/tsan-probe.log"; then
    echo "SKIP: ThreadSanitizer cannot run here: $(head -1 "$logs/tsan-probe.log")"
  else
    phase "tsan" env TSAN_OPTIONS="halt_on_error=1" F2FSCORE_FUSE_PHASES="git stress-ng fio" \
      F2FSCORE_FUSE="$tsan/tools/fuse/f2fscore-fuse" F2FSCORE_MKFS="$root/build/tools/mkfs/f2fscore-mkfs" \
      F2FSCORE_FSCK="$root/build/tools/fsck/f2fscore-fsck" F2FSCORE_DUMP="$root/build/tools/dump/f2fscore-dump" \
      bash "$root/tests/fuse/programs.sh"
  fi
else
  failed+=("tsan (build)")
  status=1
fi
prune "$tsan"
phase_done "tsan: git, stress-ng, fio"

echo "== fuzz: open and walk, and the checker (libFuzzer, ASan + UBSan)"
phase "fuzz" "$root/scripts/fuzz.sh" "${F2FSCORE_FUZZ_SECONDS:-60}"
prune "${F2FSCORE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
phase_done "fuzz (build + run)"

echo "== cross builds: s390x (big-endian) and i686 (32-bit) under qemu-user"
phase "cross" "$root/scripts/cross-test.sh" all
prune "${F2FSCORE_CROSS_BUILD_ROOT:-$root}"/build-cross-*
phase_done "cross builds + tests"

echo "== ctest: unit, interop, install, oracle"
phase "ctest" bash -c "cd '$root/build' && ctest --output-on-failure -j 2 --timeout 1800"
phase_done "ctest (native)"

echo "== wall time per phase"
printf '%s\n' "${phases[@]}"
printf '%-28s %5d s\n' "total" "$SECONDS"
if [[ $(free_gib "$root" | cut -d. -f1) -lt 1 ]]; then
  echo "== the disk is nearly full ($(free_gib "$root") GiB free): a failure above may be only that"
fi
for name in "${failed[@]}"; do
  log="$logs/${name//[^a-zA-Z0-9]/_}.log"
  echo "== FAILED: $name"
  [[ -f "$log" ]] || continue
  # The lines that name a failure (with a sanitizer report's frames in the
  # project's sources), else the end of the phase's output.
  pat='FAIL|Failed|^\*\*\*|\*\*\*[A-Z]|ERROR|error:|Sanitizer|crash-|Illegal|Segmentation|Aborted|freed by|allocated by'
  pat+='|#[0-9]+ 0x[0-9a-f]+ in .* /[^ ]*/(libf2fscore|tools|tests)/[^ ]*:[0-9]+'
  if grep -nE "$pat" "$log" | tail -60 | grep -q .; then
    grep -nE "$pat" "$log" | tail -60
  else
    tail -40 "$log"
  fi
done
[[ $status == 0 ]] && echo "== all phases passed"
exit $status
