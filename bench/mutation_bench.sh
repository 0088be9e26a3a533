#!/usr/bin/env bash
# mutation_bench.sh: our checker and writer against fsck.f2fs on the same
# seeded mutants (issue 12, acceptance 2), figures side by side.
#
# Usage: bench/mutation_bench.sh [--mutants N] [--seed S] [--build DIR]
#
#   --mutants N   mutants (default 2000), spread over four templates: the
#                 rich images with checksums and quota, plain, with
#                 compression, and a volume our writer made
#   --seed S      first seed (default 1); the same N and S give the same mutants
#   --build DIR   the build tree holding tests/fsck/f2fscore_fsck_mutation_tests
#                 (default: build; an ASan+UBSan build counts sanitizer reports
#                 as crashes)
#
# Environment: FSCK_F2FS (default /usr/sbin/fsck.f2fs; "" to skip it),
# F2FSCORE_MUTATION_WORK (scratch directory for the images; default a
# fresh one under /tmp).
#
# Mutations (tests/fsck/fsck_mutation_test.cpp, mutate_any()): raw bytes of
# blocks in use (superblock, checkpoint, NAT, SIT, SSA, node, dentry, data
# blocks), typed edits of every metadata area through tests/fsck/corrupt.hpp
# (superblock and checkpoint fields, NAT, SIT, SSA entries, inode fields and
# node footers, dentries, xattr entries, journals, orphans, added dentries),
# checksums re-sealed or not, and one mutant in twelve truncated.
# Per mutant, in a child process (a crash or a 120 s hang is counted):
#   our fsck -n (must not write), -y then -y again (the second must be
#   clean: converged; a truncated mutant is repaired in an image file the
#   repair may grow back, as f2fscore-fsck does, and one whose lost tail
#   held blocks in use is counted apart: left, exit 4, the loss
#   reported), the writer mounting it as f2fscore-sload
#   (populate()) and `f2fscore-io fs` (run_workload(), smallfiles) do: a
#   refusal must change no byte, an accepted mutant must not be left with a
#   problem code our checker did not report before; then fsck.f2fs -f on
#   our repaired image (clean, as ../shared/NOTES.md defines it, or
#   rejects) and on the mutant itself (its crashes and hangs).
# Output: one line per figure with an example mutant (its edits); the
# "class_left_after_two_passes CODE" lines are the repair classes that
# did not converge.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
mutants=2000 seed=1 build="$root/build"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mutants) mutants="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "mutation_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build/tests/fsck/f2fscore_fsck_mutation_tests"
[[ -x "$bin" ]] || { echo "mutation_bench.sh: $bin not built (cmake --build $build --target f2fscore_fsck_mutation_tests)" >&2; exit 1; }
fsck="${FSCK_F2FS-/usr/sbin/fsck.f2fs}"
if [[ -n "$fsck" && ! -x "$fsck" ]]; then echo "mutation_bench.sh: $fsck not found (FSCK_F2FS=\"\" to skip)" >&2; exit 1; fi
work="${F2FSCORE_MUTATION_WORK:-$(mktemp -d /tmp/f2fscore-mutation.XXXXXX)}"
mkdir -p "$work"
echo "mutation_bench: $mutants mutants, seed $seed, $("$fsck" -V 2>/dev/null | head -1 || echo 'no fsck.f2fs'), $(nproc) cores, $(date -u +%FT%TZ)"
F2FSCORE_MUTANTS="$mutants" F2FSCORE_MUTATION_SEED="$seed" FSCK_F2FS="$fsck" F2FSCORE_MUTATION_WORK="$work" \
  "$bin" --gtest_also_run_disabled_tests --gtest_filter=MutationBench.DISABLED_Run 2>&1 |
  grep -v '^\[ \|^\[==\|^\[--\|^Running main\|^Note: Google' || true
[[ -n "${F2FSCORE_MUTATION_WORK:-}" ]] || rm -rf "$work"
