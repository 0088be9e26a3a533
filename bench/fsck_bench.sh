#!/usr/bin/env bash
# The checker against fsck.f2fs -f on the same populated image, side by side
# in one run (issue 5, acceptance 6).
#
# Builds a source tree on a disk-backed directory (default 100,000 files of
# 1-80 KiB in 1,000 directories, about 4 GiB), loads it into an image with
# mkfs.f2fs + sload.f2fs, lets fsck.f2fs -f repair what sload leaves
# (F2FS-FACTS 3.6), then alternates
#   A  f2fscore-fsck -n -f IMG       (our full check, read-only)
#   B  fsck.f2fs -f IMG              (full check; it rewrites the checkpoint even when clean)
# with the page cache dropped before each run, and reports medians and the
# median of the per-run ratios A/B. Usage:
#   bench/fsck_bench.sh [--runs N] [--workdir DIR] [--files N] [--max-kib K]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
work=""
nfiles=100000
maxkib=80
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --workdir) work=$2; shift 2 ;;
    --files) nfiles=$2; shift 2 ;;
    --max-kib) maxkib=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--workdir DIR] [--files N] [--max-kib K]" >&2; exit 2 ;;
  esac
done
ours=${F2FSCORE_FSCK:-$root/build/tools/fsck/f2fscore-fsck}
for t in "$ours" /usr/sbin/mkfs.f2fs /usr/sbin/sload.f2fs /usr/sbin/fsck.f2fs; do
  [[ -x "$t" ]] || { echo "fsck_bench: missing $t" >&2; exit 1; }
done
[[ -n "$work" ]] || work=$(mktemp -d /var/tmp/f2fscore-fsck-bench.XXXXXX)
mkdir -p "$work"
if [[ "$(stat -f -c %T "$work")" == "tmpfs" ]]; then echo "fsck_bench: $work is tmpfs; use a disk-backed --workdir" >&2; exit 1; fi
keep=${KEEP:-0}
[[ "$keep" == 1 ]] || trap 'rm -rf "$work"' EXIT
drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
now() { echo "${EPOCHREALTIME/./}"; }  # microseconds

if [[ ! -f "$work/img.done" ]]; then
  echo "== building $nfiles files in $work/src"
  python3 - "$work/src" "$nfiles" "$maxkib" <<'PY'
import os, random, sys
base, n, maxkib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(1)
blob = os.urandom(1 << 20)
for i in range(n):
    d = os.path.join(base, "d%04d" % (i % 1000))
    os.makedirs(d, exist_ok=True)
    size = random.randint(1024, maxkib * 1024)
    off = random.randint(0, len(blob) - size)
    with open(os.path.join(d, "f%06d" % i), "wb") as f:
        f.write(blob[off:off + size])
PY
  bytes=$(du -sb --apparent-size "$work/src" | cut -f1)
  img_bytes=$(( (bytes * 3 / 2) / 1048576 * 1048576 + (1 << 30) ))
  truncate -s "$img_bytes" "$work/img"
  /usr/sbin/mkfs.f2fs -q -f "$work/img"
  /usr/sbin/sload.f2fs -f "$work/src" "$work/img" >/dev/null 2>&1 || true
  /usr/sbin/fsck.f2fs -f "$work/img" >/dev/null 2>&1 || true
  rm -rf "$work/src"
  echo "$bytes" > "$work/img.done"
fi
echo "== image: $(du -h --apparent-size "$work/img" | cut -f1), $(cat "$work/img.done") bytes of file data"
"$ours" -n -f "$work/img" | tail -2

ta=(); tb=(); ratios=()
for r in $(seq 1 "$runs"); do
  drop; s=$(now); "$ours" -n -f -q "$work/img" >/dev/null; e=$(now); a=$((e - s))
  drop; s=$(now); /usr/sbin/fsck.f2fs -f "$work/img" >/dev/null 2>&1 < /dev/null || true; e=$(now); b=$((e - s))
  ta+=("$a"); tb+=("$b"); ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", a/b}')")
  printf 'run %d: f2fscore-fsck %.3f s, fsck.f2fs -f %.3f s, ratio %s\n' "$r" "$(awk -v a="$a" 'BEGIN{print a/1e6}')" \
    "$(awk -v b="$b" 'BEGIN{print b/1e6}')" "${ratios[-1]}"
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ma=$(printf '%s\n' "${ta[@]}" | median); mb=$(printf '%s\n' "${tb[@]}" | median)
mr=$(printf '%s\n' "${ratios[@]}" | median)
printf 'median: f2fscore-fsck %.3f s, fsck.f2fs -f %.3f s, median ratio %s (goal <= 0.5)\n' \
  "$(awk -v a="$ma" 'BEGIN{print a/1e6}')" "$(awk -v b="$mb" 'BEGIN{print b/1e6}')" "$mr"
