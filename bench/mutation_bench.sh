#!/usr/bin/env bash
# mutation_bench.sh: our checker and writer against fsck.f2fs on the same
# seeded mutants, figures side by side.
#
# Usage: bench/mutation_bench.sh [--mutants N] [--seed S] [--first F] [--build DIR] [--no-tools]
#
#   --mutants N   mutants (default 2000), spread over four templates: the
#                 rich images with checksums and quota, plain, with
#                 compression, and a volume our writer made
#   --seed S      first seed (default 1); the same N and S give the same mutants
#   --first F     only mutants F to N-1 of those N (default 0): runs of disjoint
#                 ranges, side by side, cover the whole set
#   --build DIR   the build tree holding tests/fsck/f2fscore_fsck_mutation_tests
#                 (default: build; an ASan+UBSan build counts sanitizer reports
#                 as crashes)
#   --no-tools    skip the second pass through the tool binaries
#
# Environment: FSCK_F2FS (default /usr/sbin/fsck.f2fs; "" to skip it),
# F2FSCORE_MUTATION_WORK (scratch directory for the images; default a
# fresh one under /tmp), F2FSCORE_MUTATION_FAILURES (a file that gets one
# line per failing mutant and figure, "INDEX FIGURE: EDITS", for
# MutationBench.DISABLED_Replay).
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
#
# Beside that pass (saved first, F2FSCORE_MUTATION_KEEP; its figures
# printed after it), the same mutants through the tool binaries of
# DIR/tools: per mutant `f2fscore-fsck -n -f
# --json` (the problem codes above info before), then on a copy each of
#   sload: f2fscore-sload -f SRC --target-dir /copied -T 1700000500 (a small tree)
#   io_fs: f2fscore-io fs -w smallfiles --dir /wl --files 30 --file-bytes 5000
# (timeout 120 s), its exit status, the sha256 of the image before and
# after, and, where the image changed, our fsck's codes after. Figures per
# tool: exit statuses; tools_refusal_changed_a_byte (exit status not 0
# and the image changed); tools_added_a_problem (a code after that was not
# reported before); crashes (a signal) and hangs (the timeout).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
mutants=2000 seed=1 first=0 build="$root/build" tools=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mutants) mutants="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --first) first="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --no-tools) tools=0; shift ;;
    -h|--help) sed -n '2,55p' "$0"; exit 0 ;;
    *) echo "mutation_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bin="$build/tests/fsck/f2fscore_fsck_mutation_tests"
[[ -x "$bin" ]] || { echo "mutation_bench.sh: $bin not built (cmake --build $build --target f2fscore_fsck_mutation_tests)" >&2; exit 1; }
fsck="${FSCK_F2FS-/usr/sbin/fsck.f2fs}"
if [[ -n "$fsck" && ! -x "$fsck" ]]; then echo "mutation_bench.sh: $fsck not found (FSCK_F2FS=\"\" to skip)" >&2; exit 1; fi
work="${F2FSCORE_MUTATION_WORK:-$(mktemp -d /tmp/f2fscore-mutation.XXXXXX)}"
mkdir -p "$work"
keep=""
if [[ $tools -eq 1 ]]; then
  for t in fsck/f2fscore-fsck sload/f2fscore-sload io/f2fscore-io; do
    [[ -x "$build/tools/$t" ]] || { echo "mutation_bench.sh: $build/tools/$t not built (or --no-tools)" >&2; exit 1; }
  done
  keep="$work/mutants"
  rm -rf "$keep"; mkdir -p "$keep"
fi
echo "mutation_bench: $mutants mutants (from #$first), seed $seed, $("$fsck" -V 2>/dev/null | head -1 || echo 'no fsck.f2fs'), $(nproc) cores, $(date -u +%FT%TZ)"
# The tool pass (bench/mutation_bench.sh --no-tools skips it).
tools_pass() {
  src="$work/src"
  rm -rf "$src"; mkdir -p "$src/sub"
  head -c 10000 /dev/zero | tr '\0' a > "$src/a"
  printf small > "$src/sub/b"
  head -c 70000 /dev/zero | tr '\0' c > "$src/sub/c"
  ln -sf a "$src/l"
  python3 - "$build/tools" "$keep" "$src" <<'PY'
import collections, hashlib, json, os, re, shutil, subprocess, sys, time
tools, keep, src = sys.argv[1:4]
fsck = os.path.join(tools, "fsck/f2fscore-fsck")
runs = {
    "sload": [os.path.join(tools, "sload/f2fscore-sload"), "-q", "-f", src, "--target-dir", "/copied", "-T", "1700000500"],
    "io_fs": [os.path.join(tools, "io/f2fscore-io"), "fs", "-w", "smallfiles", "--dir", "/wl", "--files", "30",
              "--file-bytes", "5000"],
}
def sha(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()
def codes(p):
    r = subprocess.run([fsck, "-n", "-f", "--json", p], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return {"ERROR(exit %d)" % r.returncode: "no JSON from f2fscore-fsck"}
    return {q["code"]: q.get("message", q.get("detail", "")) for q in j.get("problems", []) if q.get("severity") != "info"}
fig = collections.Counter()
ex = {}
def count(k, what):
    fig[k] += 1
    ex.setdefault(k, what)
t0 = time.time()
lines = [l.rstrip("\n").split(" ", 2) for l in open(os.path.join(keep, "list.txt"))]
copy = os.path.join(keep, "run.img")
for idx, path, what in lines:
    before = codes(path)
    h0 = sha(path)
    count("tools_mutants", what)
    for name, cmd in runs.items():
        # Sparse, as the mutant was saved (shutil.copyfile writes every zero).
        subprocess.run(["cp", "--sparse=always", path, copy], check=True)
        try:
            r = subprocess.run(cmd + [copy], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = "hang"
        count("tools_exit %s %s" % (name, rc), what)
        if rc != 0 and rc != "hang":
            # What refused, its message with numbers and quoted names elided.
            msg = (r.stderr.decode(errors="replace").strip().splitlines() or ["(no message)"])[0]
            if "writer: " in msg:
                msg = msg[msg.index("writer: ") + 8:]
            msg = re.sub(r"[0-9]+", "N", msg.replace(copy, "IMAGE"))
            count("tools_refused %s: %s" % (name, msg[:100]), what)
        if rc == "hang" or (isinstance(rc, int) and rc < 0):
            count("tools_%s %s" % ("hang" if rc == "hang" else "crash", name), what)
        changed = sha(copy) != h0
        if rc != 0 and changed:
            count("tools_refusal_changed_a_byte %s" % name, what + " (exit %s)" % rc)
        if changed:
            after = codes(copy)
            new = sorted(set(after) - set(before))
            if new:
                count("tools_added_a_problem %s" % name, what + " -> " + new[0] + ": " + str(after[new[0]]))
    os.remove(path)
if os.path.exists(copy):
    os.remove(copy)
print("tool binaries: %d mutants, %.0f s" % (fig["tools_mutants"], time.time() - t0))
for k in sorted(fig):
    e = ex[k] if k.startswith(("tools_refusal", "tools_added", "tools_crash", "tools_hang")) else ""
    print("  %-60s %d%s" % (k, fig[k], ("   e.g. " + e) if e else ""))
PY
}

if [[ $tools -eq 1 ]]; then
  # The mutants saved first; the tool pass (below, in the background) then
  # runs beside the library pass, its figures printed after it.
  F2FSCORE_MUTANTS="$mutants" F2FSCORE_MUTATION_FIRST="$first" F2FSCORE_MUTATION_SEED="$seed" F2FSCORE_MUTATION_KEEP="$keep" \
    F2FSCORE_MUTATION_KEEP_ONLY=1 FSCK_F2FS="" F2FSCORE_MUTATION_WORK="$work" F2FSCORE_MUTATION_FAILURES="" \
    "$bin" --gtest_also_run_disabled_tests --gtest_filter=MutationBench.DISABLED_Run > /dev/null 2>&1
  tools_pass > "$work/tools.txt" 2>&1 &
  tools_pid=$!
fi
F2FSCORE_MUTANTS="$mutants" F2FSCORE_MUTATION_FIRST="$first" F2FSCORE_MUTATION_SEED="$seed" FSCK_F2FS="$fsck" F2FSCORE_MUTATION_WORK="$work" \
  "$bin" --gtest_also_run_disabled_tests --gtest_filter=MutationBench.DISABLED_Run 2>&1 |
  grep -v '^\[ \|^\[==\|^\[--\|^Running main\|^Note: Google' || true
if [[ $tools -eq 1 ]]; then
  wait "$tools_pid" || true
  cat "$work/tools.txt"
fi
[[ -n "${F2FSCORE_MUTATION_WORK:-}" ]] || rm -rf "$work"
