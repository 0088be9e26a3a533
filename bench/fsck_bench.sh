#!/usr/bin/env bash
# fsck_bench.sh: our checker against fsck.f2fs -f on the same populated
# image, side by side in one run.
#
# Usage: bench/fsck_bench.sh [--runs N] [--no-strace] [--rebuild]
#
#   --runs N      timed runs of each tool, alternating (default 5, at least 1)
#   --no-strace   skip the system-call count (one extra run of each under strace -c -f)
#   --rebuild     make the image again even if a cached one exists
#
# Environment:
#   F2FSCORE_BENCH_DIR   where the image is made and cached (default
#                        /tmp/f2fscore-bench; must be a disk-backed file
#                        system, not tmpfs; needs about 2 x DATA + 2 GiB free)
#   F2FSCORE_FSCK        the checker under test (default: build/tools/fsck/
#                        f2fscore-fsck of this tree; fsck.f2fs itself when
#                        that is not built, which tests the harness: ratio ~1)
#   F2FSCORE_FSCK_ARGS   its options (default "-n -f"; "-f" for fsck.f2fs)
#   F2FSCORE_BENCH_REFLINK  cp's --reflink for the per-run copies: auto
#                        (default; a full copy on ext4, a shared-extent
#                        copy on XFS or btrfs) or never
#   FSCK_F2FS, MKFS_F2FS, SLOAD_F2FS   the reference tools (default /usr/sbin/...)
#   BENCH_FILES          regular files in the image (default 100000)
#   BENCH_DATA_GIB       GiB of file data (default 4)
#   BENCH_IMAGE_GIB      image size in GiB (default 8)
#
# The image (made once, cached as $F2FSCORE_BENCH_DIR/pristine-<params>.img):
# bench/fsck_gen_tree.py writes a deterministic host tree (about 1,800
# directories, BENCH_FILES files mostly small, 40 large ones, symlinks;
# BENCH_DATA_GIB GiB in all), mkfs.f2fs formats a sparse BENCH_IMAGE_GIB GiB
# file, sload.f2fs loads the tree, and fsck.f2fs -f runs once to repair what
# sload leaves (F2FS-FACTS.md 3.6); a second fsck.f2fs -f must then be clean
# (exit 0, no [Fail], [ASSERT], [FIX], Fixing, Reconnect or Move curseg:
# ../shared/NOTES.md), else the script stops. The host tree is deleted; the
# logs of sload and both fsck passes stay in $F2FSCORE_BENCH_DIR/logs.
#
# Each timed run: a fresh full copy of the pristine image (fsck.f2fs -f
# writes; cp --reflink=auto shares nothing on ext4, so every run reads its
# own blocks from the disk), sync, drop the page cache (echo 3 >
# /proc/sys/vm/drop_caches; root needed), then the tool with stdin closed.
# The order of the two tools alternates between runs. Measured per run:
# wall time, CPU user and system time, bytes read from storage
# (getrusage's ru_inblock via /usr/bin/time, x 512), the peak resident set
# (getrusage's ru_maxrss via /usr/bin/time %M: the largest of the tool's
# processes) and bytes through read calls (rchar of /proc/PID/io, counted
# for the waited-for tool). Reported: the median of each, the median of the
# per-run ratios ours/fsck.f2fs (wall), the load average before the first
# and after the last run, and, from one more run of each under strace -c
# -f, the system calls by name (total, and the three most frequent).
#
# Exit status: 0 when every run succeeded (fsck.f2fs clean, our checker
# exit 0), 1 otherwise, 2 for usage errors.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
with_strace=1
rebuild=0
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --no-strace) with_strace=0; shift ;;
    --rebuild) rebuild=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "fsck_bench: --runs needs a positive number" >&2; exit 2; }

die() { echo "fsck_bench: $*" >&2; exit 1; }
dir=${F2FSCORE_BENCH_DIR:-/tmp/f2fscore-bench}
ref=${FSCK_F2FS:-/usr/sbin/fsck.f2fs}
mkfs=${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}
sload=${SLOAD_F2FS:-/usr/sbin/sload.f2fs}
built="$script_dir/../build/tools/fsck/f2fscore-fsck"
if [[ -n ${F2FSCORE_FSCK:-} ]]; then
  ours=$F2FSCORE_FSCK
elif [[ -x $built ]]; then
  ours=$built
else
  ours=$ref
fi
if [[ -n ${F2FSCORE_FSCK_ARGS:-} ]]; then
  ours_args=$F2FSCORE_FSCK_ARGS
elif [[ $(basename "$ours") == fsck.f2fs ]]; then
  ours_args="-f"
else
  ours_args="-n -f"
fi
files=${BENCH_FILES:-100000}
data_gib=${BENCH_DATA_GIB:-4}
image_gib=${BENCH_IMAGE_GIB:-8}

[[ $(id -u) -eq 0 ]] || die "needs root (to drop the page cache)"
for t in "$ref" "$mkfs" "$sload" "$ours" /usr/bin/time python3; do
  command -v "$t" >/dev/null || die "missing $t"
done
[[ $with_strace -eq 0 ]] || command -v strace >/dev/null || die "missing strace (or pass --no-strace)"
mkdir -p "$dir"
[[ $(stat -f -c %T "$dir") != tmpfs ]] || die "$dir is on tmpfs: use a disk-backed F2FSCORE_BENCH_DIR"

reflink=${F2FSCORE_BENCH_REFLINK:-auto}
[[ $reflink == auto || $reflink == never ]] || die "F2FSCORE_BENCH_REFLINK must be auto or never"
# v1: the generator's shape; change it when fsck_gen_tree.py changes.
pristine=$dir/pristine-v1-f${files}-d${data_gib}g-i${image_gib}g.img
logs=$dir/logs
work=$dir/work.img
tmp=$(mktemp -d "$dir/run.XXXXXX")
trap 'rm -rf "$tmp" "$work"' EXIT

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# Clean as ../shared/NOTES.md defines it, from fsck.f2fs's output and status.
clean_output() {  # status logfile
  [[ $1 -eq 0 ]] && ! grep -Eq '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' "$2"
}

make_image() {
  local src=$dir/src.tmp img=$pristine.tmp t0 st=0
  rm -rf "$src" "$img"
  mkdir -p "$logs"
  t0=$SECONDS
  echo "fsck_bench: making the image ($files files, $data_gib GiB of data, $image_gib GiB image) in $dir" >&2
  python3 "$script_dir/fsck_gen_tree.py" "$src" "$files" $((data_gib << 30)) >&2
  echo "fsck_bench: tree written after $((SECONDS - t0)) s" >&2
  truncate -s "${image_gib}G" "$img"
  "$mkfs" -f -q "$img" >/dev/null
  # sload.f2fs 1.15 exits 1 when its own fsck pass fixed something, and 0
  # on some failures (F2FS-FACTS.md 1.4): its status says little; the
  # checks below decide.
  "$sload" -f "$src" "$img" >"$logs/sload.log" 2>&1 </dev/null || true
  echo "fsck_bench: loaded after $((SECONDS - t0)) s" >&2
  "$ref" -f "$img" >"$logs/fix.log" 2>&1 </dev/null || st=$?
  echo "fsck_bench: first fsck.f2fs -f (repairs what sload left): exit $st" >&2
  st=0
  "$ref" -f "$img" >"$logs/check.log" 2>&1 </dev/null || st=$?
  clean_output "$st" "$logs/check.log" || { tail -30 "$logs/check.log" >&2; die "the image is not clean after the repair pass (exit $st)"; }
  # What the image holds, from fsck.f2fs's own summary.
  # "[FSCK] valid_inode_count matched with CP [Ok..] [0x186c4]"
  local nodes inodes hex
  hex=$(grep -m1 'valid_inode_count' "$logs/check.log" | grep -o '0x[0-9a-fA-F]*' | tail -1 || true)
  inodes=${hex:+$((hex))}
  hex=$(grep -m1 'valid_node_count' "$logs/check.log" | grep -o '0x[0-9a-fA-F]*' | tail -1 || true)
  nodes=${hex:+$((hex))}
  local want=$((files * 9 / 10))
  [[ -z $inodes || $inodes -ge $want ]] || die "only $inodes inodes in the image (sload failed?): see $logs/sload.log"
  local used
  used=$(du -B1 "$img" | cut -f1)
  [[ $used -ge $(((data_gib << 30) * 95 / 100)) ]] || die "only $used bytes allocated in the image (sload failed?)"
  rm -rf "$src"
  mv "$img" "$pristine"
  echo "fsck_bench: image ready after $((SECONDS - t0)) s: $pristine (inodes ${inodes:-?}, nodes ${nodes:-?}, $((used >> 20)) MiB allocated)" >&2
}

if [[ $rebuild -eq 1 || ! -f $pristine ]]; then
  make_image
fi

fresh_copy() {
  rm -f "$work"
  cp --reflink="$reflink" --sparse=always "$pristine" "$work"
  drop_caches
}

# One timed run: tool label, then the command. Appends
# "label wall user sys inblock_bytes rchar status maxrss_kib" to $tmp/runs.
timed_run() {
  local label=$1; shift
  local st=0
  fresh_copy
  /usr/bin/time -f '%e %U %S %I %M' -o "$tmp/time" \
    bash -c '"$@" </dev/null >"'"$tmp"'/out.log" 2>&1; s=$?; awk "/^rchar:/ { print \$2 }" /proc/$$/io >"'"$tmp"'/rchar"; exit $s' _ "$@" || st=$?
  if [[ $label == ref ]] && ! clean_output "$st" "$tmp/out.log"; then
    tail -20 "$tmp/out.log" >&2
    echo "fsck_bench: fsck.f2fs -f was not clean on the fresh copy (exit $st)" >&2
    st=1
  fi
  # The last line: /usr/bin/time puts "Command terminated by signal N" or
  # "exited with non-zero status" before it.
  read -r wall user sys inblock maxrss < <(tail -1 "$tmp/time")
  echo "$label $wall $user $sys $((inblock * 512)) $(cat "$tmp/rchar") $st $maxrss" >>"$tmp/runs"
  [[ $st -eq 0 ]] || { mkdir -p "$logs"; cp "$tmp/out.log" "$logs/failed-$label.log"; }
  echo "fsck_bench: $label: ${wall} s (user $user, sys $sys, max RSS $((maxrss / 1024)) MiB), exit $st" >&2
}

: >"$tmp/runs"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
read -r -a ours_argv <<<"$ours_args"
for ((i = 1; i <= runs; i++)); do
  if ((i % 2 == 1)); then
    timed_run ref "$ref" -f "$work"
    timed_run ours "$ours" "${ours_argv[@]}" "$work"
  else
    timed_run ours "$ours" "${ours_argv[@]}" "$work"
    timed_run ref "$ref" -f "$work"
  fi
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$tmp/runs"; }
# Per-run ratio: the i-th run of ours over the i-th run of fsck.f2fs.
ratio=$(paste <(col ours 2) <(col ref 2) | awk '$2 > 0 { print $1 / $2 }' | median)
ratios=$(paste <(col ours 2) <(col ref 2) | awk '$2 > 0 { printf "%s%.2f", sep, $1 / $2; sep = " " }')

syscalls() {  # label command... -> "total (three most frequent)"
  local label=$1; shift
  fresh_copy
  strace -c -f -o "$tmp/strace.$label" "$@" </dev/null >/dev/null 2>&1 || true
  # strace -c: "% time seconds usecs/call calls [errors] syscall", between
  # two dashed lines, then the total line.
  local total top
  total=$(awk '$NF == "total" { print $4 }' "$tmp/strace.$label")
  top=$(awk '/^-+ / { sep++; next } sep == 1 && NF >= 5 { print $4, $NF }' "$tmp/strace.$label" |
    sort -k1,1nr | head -3 | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }')
  echo "${total:-?} ($top)"
}
sys_ref="not measured"
sys_ours="not measured"
if [[ $with_strace -eq 1 ]]; then
  sys_ref=$(syscalls ref "$ref" -f "$work")
  sys_ours=$(syscalls ours "$ours" "${ours_argv[@]}" "$work")
fi

human() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
echo
echo "fsck_bench: $(basename "$pristine"), $runs runs each, page cache dropped before each"
echo "ours: $ours $ours_args; reference: $ref -f"
echo "load average (1, 5, 15 min): $load_before before the first run, $load_after after the last ($(nproc) CPUs)"
echo
echo "| tool | wall s (median) | user s | sys s | max RSS | read from storage | read() bytes | system calls (strace -c -f, one run) | failed runs |"
echo "|---|--:|--:|--:|--:|--:|--:|---|--:|"
for l in ref ours; do
  name=$([[ $l == ref ]] && echo "fsck.f2fs -f" || echo "$(basename "$ours") $ours_args")
  s=$([[ $l == ref ]] && echo "$sys_ref" || echo "$sys_ours")
  printf '| %s | %.2f | %.2f | %.2f | %s | %s | %s | %s | %d |\n' "$name" "$(col "$l" 2 | median)" "$(col "$l" 3 | median)" \
    "$(col "$l" 4 | median)" "$(human "$(($(col "$l" 8 | median | cut -d. -f1) * 1024))")" \
    "$(human "$(col "$l" 5 | median)")" "$(human "$(col "$l" 6 | median)")" "$s" \
    "$(col "$l" 7 | awk '$1 != 0 { n++ } END { print n + 0 }')"
done
echo
echo "per run (wall s, ours then fsck.f2fs): $(paste -d/ <(col ours 2) <(col ref 2) | tr '\n' ' ')"
echo
echo "median of the per-run wall-time ratios ours/fsck.f2fs: $(printf '%.3f' "$ratio") (runs: $ratios; goal: <= 0.25)"
failed=$(awk '$7 != 0 { n++ } END { print n + 0 }' "$tmp/runs")
[[ $failed -eq 0 ]]
