#!/usr/bin/env bash
# wine_backends.sh: 4 KiB random reads of an image file through the two
# Windows backends of f2fscore-io.exe under wine, overlapped I/O (the
# default) and sync, at queue depth 1 and 32, alternated REPS times; prints
# each run's IOPS, the medians, and the median of the per-round ratios.
#
# Usage: bench/io/wine_backends.sh [BUILD_DIR] [REPS] [FILE]
#
#   BUILD_DIR  a Windows cross build (default: build-cross-windows beside
#              this repository, as scripts/cross-test.sh windows makes it)
#   REPS       rounds (default 5); each runs the four configurations for 3 s
#   FILE       the image read (default /var/tmp/f2fscore-bench/wine256m,
#              made with 256 MiB of random writes when missing; not tmpfs)
#
# Direct I/O (FILE_FLAG_NO_BUFFERING), the job's defaults otherwise. The
# wine prefix is BUILD_DIR/wineprefix, as the cross test's.
set -euo pipefail
SRC_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
BDIR=${1:-$SRC_DIR/build-cross-windows}
REPS=${2:-5}
FILE=${3:-/var/tmp/f2fscore-bench/wine256m}
IO="$BDIR/tools/io/f2fscore-io.exe"
[[ -x $IO || -f $IO ]] || { echo "error: no $IO (build f2fscore-io in $BDIR)" >&2; exit 1; }
export WINEPREFIX="$BDIR/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver -p </dev/null >/dev/null 2>&1 || true
# The prefix's server and services would hold this script's output open.
trap 'wineserver -k 2>/dev/null' EXIT
mkdir -p "$(dirname "$FILE")"
[[ -s $FILE ]] || wine "$IO" --rw randwrite --bs 4k --iodepth 32 --size 256M --create "Z:$FILE" </dev/null >/dev/null
declare -A runs
for ((r = 1; r <= REPS; r++)); do
  for b in overlapped sync; do
    for d in 1 32; do
      iops=$(wine "$IO" --rw randread --bs 4k --iodepth "$d" --size 256M --runtime 3 --backend "$b" --json \
               "Z:$FILE" </dev/null | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["job"]["iops"]))')
      echo "round $r: $b depth $d: $iops IOPS"
      runs[$b.$d]+="$iops "
    done
  done
done
python3 - "${runs[overlapped.1]}" "${runs[overlapped.32]}" "${runs[sync.1]}" "${runs[sync.32]}" <<'PY'
import statistics, sys
o1, o32, s1, s32 = ([float(x) for x in a.split()] for a in sys.argv[1:])
med = statistics.median
print(f"median IOPS: overlapped d1 {med(o1):.0f}, overlapped d32 {med(o32):.0f}, sync d1 {med(s1):.0f}, sync d32 {med(s32):.0f}")
ratio = lambda a, b: med([x / y for x, y in zip(a, b)])
print(f"median per-round ratios: overlapped d32/d1 {ratio(o32, o1):.2f}, sync d32/d1 {ratio(s32, s1):.2f}, "
      f"overlapped/sync d1 {ratio(o1, s1):.2f}, d32 {ratio(o32, s32):.2f}")
PY
