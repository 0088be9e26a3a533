#!/usr/bin/env bash
# Extraction throughput, side by side in one run (issue 4, acceptance 4).
#
# Builds two source trees on a disk-backed directory -- LARGE: 1 GiB in
# eight 128 MiB files; SMALL: 20,000 files of 1-8 KiB in 100 directories --
# loads each into a fresh image with mkfs.f2fs + sload.f2fs, then alternates
#   A  f2fscore-dump IMG extract / OUT        (our extraction)
#   B  cp -r SRC OUT                          (reading the same bytes from the source tree)
#   C  dump.f2fs -i INO IMG, once per file    (LARGE only: dump.f2fs 1.15 extracts one
#                                              inode per call and prompts; answered "y")
# with the page cache dropped before each run, and reports medians and the
# median of the per-run ratios. Usage:
#   bench/extract_bench.sh [--runs N] [--workdir DIR] [--small-files N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
work=""
nsmall=20000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --workdir) work=$2; shift 2 ;;
    --small-files) nsmall=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--workdir DIR] [--small-files N]" >&2; exit 2 ;;
  esac
done
dump=${F2FSCORE_DUMP:-$root/build/tools/dump/f2fscore-dump}
for t in "$dump" /usr/sbin/mkfs.f2fs /usr/sbin/sload.f2fs /usr/sbin/dump.f2fs; do
  [[ -x "$t" ]] || { echo "extract_bench: missing $t" >&2; exit 1; }
done
[[ -n "$work" ]] || work=$(mktemp -d /var/tmp/f2fscore-extract-bench.XXXXXX)
mkdir -p "$work"
if [[ "$(stat -f -c %T "$work")" == "tmpfs" ]]; then echo "extract_bench: $work is tmpfs; use a disk-backed --workdir" >&2; exit 1; fi
trap 'rm -rf "$work"' EXIT
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds

echo "== building source trees in $work"
mkdir -p "$work/large" "$work/small"
for i in $(seq 1 8); do head -c $((128 << 20)) /dev/urandom > "$work/large/f$i.bin"; done
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
bytes_large=$(du -sb "$work/large" | cut -f1)
bytes_small=$(du -sb --apparent-size "$work/small" | cut -f1)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
inos() { "$dump" --json "$work/large.img" ls / | python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(str(e["ino"]) for e in d["entries"] if e["name"].endswith(".bin")))'; }
# One timed run: set tool -> microseconds.
run_case() {
    local set=$1 tool=$2 out="$work/out"
    rm -rf "$out"; drop
    local t0; t0=$(now)
    case "$tool" in
      ours) "$dump" "$work/$set.img" extract / "$out" >/dev/null ;;
      cp) cp -r "$work/$set" "$out" ;;
      dumpf2fs) mkdir -p "$out"; (cd "$out" && for ino in $(inos); do echo y | /usr/sbin/dump.f2fs -i "$ino" "$work/$set.img" >/dev/null 2>&1; done) ;;
    esac
    sync
    echo $(( $(now) - t0 ))
}

printf "\n%-6s %-10s %12s %12s %14s %10s\n" set tool "median ms" "MiB/s" "ratio vs ours" "runs"
for set in large small; do
  tools="ours cp"; [[ $set == large ]] && tools="ours cp dumpf2fs"
  for tool in $tools; do : > "$work/t.$set.$tool"; done
  : > "$work/r.$set.cp"; : > "$work/r.$set.dumpf2fs"
  for r in $(seq 1 "$runs"); do
    a=$(run_case $set ours); echo "$a" >> "$work/t.$set.ours"
    for tool in $tools; do
      [[ $tool == ours ]] && continue
      b=$(run_case $set $tool); echo "$b" >> "$work/t.$set.$tool"
      awk -v a="$a" -v b="$b" 'BEGIN {printf "%.3f\n", b / a}' >> "$work/r.$set.$tool"
    done
  done
  bytes=$bytes_large; [[ $set == small ]] && bytes=$bytes_small
  for tool in $tools; do
    m=$(median < "$work/t.$set.$tool")
    ratio="1.000"; [[ $tool != ours ]] && ratio=$(median < "$work/r.$set.$tool")
    awk -v s=$set -v t=$tool -v m="$m" -v b="$bytes" -v r="$ratio" -v n="$runs" \
      'BEGIN {printf "%-6s %-10s %12.1f %12.1f %14s %10d\n", s, t, m/1000, b/1048576/(m/1e6), r, n}'
  done
done
echo "(ratio = tool time / our time for the same run; above 1 means we are faster)"
