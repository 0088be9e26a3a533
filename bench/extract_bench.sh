#!/usr/bin/env bash
# Extraction time against `cp -a` of the source tree, side by side in one run.
#
# Builds two source trees on a disk-backed directory -- LARGE: 100 random
# files of 8 MiB; SMALL: 10,000 random files of 1-8 KiB in 100 directories
# (sizes and counts are options) -- loads each into a fresh 2 GiB image with
# mkfs.f2fs + sload.f2fs, then alternates, in the work directory's file
# system (give --workdir on Btrfs or XFS to measure reflinks):
#   ours  f2fscore-dump IMG extract / OUT     (our extraction)
#   cp    cp -a SRC OUT                        (copying the same tree on the host)
#   ours  is --host-copy copy (the default: copy_file_range, as cp -a: a
#         reflink where the host file system can, an in-kernel copy
#         elsewhere); --modes adds
#   read     f2fscore-dump IMG extract --host-copy off / OUT      (every block read)
#   reflink  f2fscore-dump IMG extract --host-copy reflink / OUT  (FICLONERANGE, else reads)
#   base  a second f2fscore-dump (--baseline BIN: another build, same runs)
#   dumpf2fs  dump.f2fs -i INO IMG per file    (--dump-f2fs, LARGE only: dump.f2fs
#                                               1.15 extracts one inode per call
#                                               and prompts; answered "y")
# The tools' order changes from run to run so that each follows every other
# equally often (a Williams square: give --runs a multiple of the number of
# tools, e.g. 8 with --modes). Each run starts with `sync` and the page cache dropped (as root; stated in
# the output) and ends with `sync`, inside the timed span. Reports median
# times, MiB/s, and the median of the per-run ratios TOOL time / cp time
# (below 1: faster than cp -a), with the load average before each set.
# Usage:
#   bench/extract_bench.sh [--runs N] [--workdir DIR] [--large-files N]
#       [--large-mib M] [--small-files N] [--modes] [--baseline BIN] [--dump-f2fs]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
work=""
nlarge=100
large_mib=8
nsmall=10000
baseline=""
with_dumpf2fs=0
with_read=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --workdir) work=$2; shift 2 ;;
    --large-files) nlarge=$2; shift 2 ;;
    --large-mib) large_mib=$2; shift 2 ;;
    --small-files) nsmall=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --dump-f2fs) with_dumpf2fs=1; shift ;;
    --modes) with_read=1; shift ;;
    *) echo "usage: $0 [--runs N] [--workdir DIR] [--large-files N] [--large-mib M] [--small-files N]" \
            "[--modes] [--baseline BIN] [--dump-f2fs]" >&2; exit 2 ;;
  esac
done
dump=${F2FSCORE_DUMP:-$root/build/tools/dump/f2fscore-dump}
for t in "$dump" ${baseline:+"$baseline"} /usr/sbin/mkfs.f2fs /usr/sbin/sload.f2fs; do
  [[ -x "$t" ]] || { echo "extract_bench: missing $t" >&2; exit 1; }
done
[[ $with_dumpf2fs == 0 || -x /usr/sbin/dump.f2fs ]] || { echo "extract_bench: missing /usr/sbin/dump.f2fs" >&2; exit 1; }
[[ -n "$work" ]] || work=$(mktemp -d /var/tmp/f2fscore-extract-bench.XXXXXX)
mkdir -p "$work"
if [[ "$(stat -f -c %T "$work")" == "tmpfs" ]]; then echo "extract_bench: $work is tmpfs; use a disk-backed --workdir" >&2; exit 1; fi
trap 'rm -rf "$work"' EXIT
cache="dropped before each run (echo 3 > /proc/sys/vm/drop_caches)"
if ! { sync; echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
  cache="NOT dropped (not root): warm for every tool"
fi
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

echo "== building source trees in $work ($(stat -f -c %T "$work"))"
mkdir -p "$work/large" "$work/small"
for i in $(seq 1 "$nlarge"); do head -c $((large_mib << 20)) /dev/urandom > "$work/large/f$i.bin"; done
python3 - "$work/small" "$nsmall" <<'PY'
import os, random, sys
base, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
for i in range(n):
    d = os.path.join(base, "d%03d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(random.randint(1024, 8192)))
PY
for set in large small; do
  truncate -s 2G "$work/$set.img"
  /usr/sbin/mkfs.f2fs -q -f "$work/$set.img"
  /usr/sbin/sload.f2fs -f "$work/$set" "$work/$set.img" >/dev/null 2>&1 || true  # 1.15 exits 1 after its own fsck pass
done
bytes_large=$(du -sb --apparent-size "$work/large" | cut -f1)
bytes_small=$(du -sb --apparent-size "$work/small" | cut -f1)
# Our extraction must give the source tree back before anything is timed.
for set in large small; do
  for how in reflink off copy; do
    rm -rf "$work/out"
    "$dump" "$work/$set.img" extract --host-copy $how / "$work/out" >/dev/null
    diff -r "$work/$set" "$work/out" >/dev/null ||
      { echo "extract_bench: $set extracts differently from its source (--host-copy $how)" >&2; exit 1; }
  done
done

. "$root/bench/order.sh"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
inos() { "$dump" --json "$work/large.img" ls / | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(str(e["ino"]) for e in d["entries"] if e["name"].endswith(".bin")))'; }
# One timed run: set tool -> microseconds.
run_case() {
    local set=$1 tool=$2 out="$work/out"
    rm -rf "$out"; drop
    local t0; t0=$(now)
    case "$tool" in
      ours) "$dump" "$work/$set.img" extract / "$out" >/dev/null ;;
      read) "$dump" "$work/$set.img" extract --host-copy off / "$out" >/dev/null ;;
      reflink) "$dump" "$work/$set.img" extract --host-copy reflink / "$out" >/dev/null ;;
      base) "$baseline" "$work/$set.img" extract / "$out" >/dev/null ;;
      cp) cp -a "$work/$set" "$out" ;;
      dumpf2fs) mkdir -p "$out"; (cd "$out" && for ino in $(inos); do echo y | /usr/sbin/dump.f2fs -i "$ino" "$work/$set.img" >/dev/null 2>&1; done) ;;
    esac
    sync
    echo $(( $(now) - t0 ))
}

echo "page cache: $cache; $runs alternating runs; $(nproc) CPUs; $(uname -sr)"
echo "LARGE: $nlarge x $large_mib MiB; SMALL: $nsmall files of 1-8 KiB"
for set in large small; do
  tools="cp ours"; [[ $with_read == 1 ]] && tools="$tools read reflink"; [[ -n "$baseline" ]] && tools="$tools base"
  [[ $set == large && $with_dumpf2fs == 1 ]] && tools="$tools dumpf2fs"
  for tool in $tools; do : > "$work/t.$set.$tool"; : > "$work/r.$set.$tool"; done
  load=$(loadavg)
  for r in $(seq 1 "$runs"); do
    # The run's order: bench/order.sh.
    read -r -a order <<< "$(williams_row $((r - 1)) $tools)"
    declare -A took=()
    line="$set run $r:"
    for tool in "${order[@]}"; do
      took[$tool]=$(run_case $set $tool)
      echo "${took[$tool]}" >> "$work/t.$set.$tool"
      line+=" $tool $((${took[$tool]} / 1000)) ms,"
    done
    echo "${line%,}; load $(loadavg)"
    for tool in $tools; do
      [[ $tool == cp ]] && continue
      awk -v c="${took[cp]}" -v b="${took[$tool]}" 'BEGIN {printf "%.3f\n", b / c}' >> "$work/r.$set.$tool"
    done
    unset took
  done
  echo "$set: load average before the runs $load"
done
printf "\n%-6s %-9s %11s %9s %15s %5s\n" set tool "median ms" "MiB/s" "ratio vs cp -a" runs
for set in large small; do
  tools="cp ours"; [[ $with_read == 1 ]] && tools="$tools read reflink"; [[ -n "$baseline" ]] && tools="$tools base"
  [[ $set == large && $with_dumpf2fs == 1 ]] && tools="$tools dumpf2fs"
  bytes=$bytes_large; [[ $set == small ]] && bytes=$bytes_small
  for tool in $tools; do
    m=$(median < "$work/t.$set.$tool")
    ratio="1.000"; [[ $tool != cp ]] && ratio=$(median < "$work/r.$set.$tool")
    awk -v s=$set -v t=$tool -v m="$m" -v b="$bytes" -v r="$ratio" -v n="$runs" \
      'BEGIN {printf "%-6s %-9s %11.1f %9.1f %15s %5d\n", s, t, m/1000, b/1048576/(m/1e6), r, n}'
  done
done
echo "load average at the end: $(loadavg)"
echo "(ratio = median over runs of tool time / cp -a time in the same run; at most 1 means as fast as cp -a or faster)"
