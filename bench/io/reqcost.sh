#!/usr/bin/env bash
# reqcost.sh: user-space instructions per 4 KiB request (submit plus
# completion), counted by callgrind, for the I/O pipeline with the iostat
# layer present but off, and for a build with the layer compiled out.
#
# Usage: bench/io/reqcost.sh [--build DIR] [--file PATH] [--n N] [--backends "B ..."] [--fio] [--job]
#
#   --build DIR  a build with -DF2FSCORE_BUILD_BENCH=ON (default: build-bench
#                beside this repository; configured and built when missing)
#   --file PATH  the file to read and write (default
#                /var/tmp/f2fscore-bench/f1g, as compare_fio.sh; must not be
#                on tmpfs, where io_uring punts to workers)
#   --n N        requests in the measured window (default 5000)
#   --backends   the backends to measure (default "io_uring uring": through
#                Asio, and liburing directly)
#   --fio        also count fio's instructions per I/O (the whole process,
#                startup removed by running N and 2N I/Os and differencing)
#   --job        also count the requests of run_io_job() (f2fscore-reqcost-job:
#                the job behind f2fscore-io, handed a BlockDevice&) on the
#                backend's device itself and on an IostatDevice off and on,
#                the same differencing (N and 2N requests)
#   --job-only   only that table
#
# f2fscore-reqcost and f2fscore-reqcost-noiostat (bench/io/reqcost.cpp) run
# a warm-up, then toggle callgrind's collection around exactly N requests,
# so the count has no start-up or tear-down in it. Callgrind counts are exact
# and repeatable (this machine has no hardware counters); kernel time is not
# counted. Goals: the layer, off, within 1% of compiled out; ours
# at most 2x the floor (f2fscore-reqcost-raw, liburing driven directly, the
# same reads or writes) at QD 1 and 32 with the layer off, and iostat on at
# most +150 instructions over off: the last table.
#
# Needs: valgrind, cmake and ninja (for --build), fio (for --fio), awk.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/../.." && pwd)
build=$root/build-bench
file=/var/tmp/f2fscore-bench/f1g
n=5000
with_fio=0
with_job=0
job_only=0
backends="io_uring uring"

die() { echo "reqcost: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --fio) with_fio=1; shift ;;
    --job) with_job=1; shift ;;
    --job-only) with_job=1; job_only=1; shift ;;
    --backends) backends=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || die "valgrind not found (Debian: apt-get install valgrind)"
if [[ ! -x $build/bench/io/f2fscore-reqcost ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DF2FSCORE_BUILD_BENCH=ON \
    -DF2FSCORE_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j 2 --target f2fscore-reqcost f2fscore-reqcost-noiostat >/dev/null
  cmake --build "$build" -j 2 --target f2fscore-reqcost-raw >/dev/null 2>&1 || true  # needs liburing
fi
if [[ $with_job -eq 1 && ! -x $build/bench/io/f2fscore-reqcost-job ]]; then
  cmake --build "$build" -j 2 --target f2fscore-reqcost-job >/dev/null || die "cannot build f2fscore-reqcost-job"
fi
mkdir -p "$(dirname "$file")"
[[ $(df -T "$(dirname "$file")" | awk 'NR == 2 { print $2 }') != tmpfs ]] || die "$file is on tmpfs"
if [[ ! -f $file ]]; then
  fio --name=fill --filename="$file" --size=1G --rw=write --bs=1M --direct=1 --ioengine=io_uring \
    --iodepth=8 --output-format=terse >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count1() {  # binary backend qd op [on] -> "instructions-per-request gate-instructions-per-request", one run
  local bin=$1 be=$2 qd=$3 op=$4 on=${5:-} out=$tmp/cg.out
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" \
    "$build/bench/io/$bin" "$file" "$qd" "$n" "$op" "$be" $on >/dev/null 2>"$tmp/vg.log" ||
    { cat "$tmp/vg.log" >&2; die "$bin failed"; }
  # The gate's own instructions: the exclusive cost of IostatDevice's
  # out-of-line functions, exact. The harness holds the IostatDevice
  # itself, whose submit() and poll() are inline: their one load is
  # counted in the caller, so this is 0 unless a call goes through
  # BlockDevice& (the virtual forward).
  local gate
  gate=$(callgrind_annotate --inclusive=no --threshold=100 --auto=no "$out" 2>/dev/null |
    awk '/IostatDevice::/ && !/=>/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
  awk -v n="$n" -v g="$gate" '/^totals:/ { printf "%.1f %.2f\n", $2 / n, g / n }' "$out"
}
# The total is exact for one execution, but how many completions one wake-up
# reaps depends on the device's timing, so at depth 32 it moves by a few
# percent between runs: the median of five, the two variants interleaved.
# The gate's own count does not move.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

have_raw=0
[[ -x $build/bench/io/f2fscore-reqcost-raw && $job_only -eq 0 ]] && have_raw=1
declare -A floor
if [[ $have_raw -eq 1 ]]; then
  for op in read write; do
    for qd in 1 32; do
      : >"$tmp/r"
      for i in 1 2 3; do
        valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/raw.out" \
          "$build/bench/io/f2fscore-reqcost-raw" "$file" "$qd" "$n" "$op" >/dev/null 2>&1 || die "reqcost-raw failed"
        awk -v n="$n" '/^totals:/ { printf "%.1f\n", $2 / n }' "$tmp/raw.out" >>"$tmp/r"
      done
      floor[$op$qd]=$(median <"$tmp/r")
    done
  done
fi

: >"$tmp/summary"
[[ $job_only -eq 1 ]] || {
echo "| backend | requests | iostat layer, off | iostat compiled out | difference | layer/compiled out | the gate itself | iostat on |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for be in $backends; do
  for op in read write; do
    for qd in 1 32; do
      : >"$tmp/a"; : >"$tmp/b"; : >"$tmp/g"; : >"$tmp/on"
      for i in 1 2 3 4 5; do
        read -r t g <<<"$(count1 f2fscore-reqcost "$be" "$qd" "$op")"
        echo "$t" >>"$tmp/a"
        echo "$g" >>"$tmp/g"
        count1 f2fscore-reqcost-noiostat "$be" "$qd" "$op" | awk '{ print $1 }' >>"$tmp/b"
        count1 f2fscore-reqcost "$be" "$qd" "$op" on | awk '{ print $1 }' >>"$tmp/on"
      done
      a=$(median <"$tmp/a")
      b=$(median <"$tmp/b")
      g=$(median <"$tmp/g")
      o=$(median <"$tmp/on")
      awk -v be="$be" -v op="$op" -v qd="$qd" -v a="$a" -v b="$b" -v g="$g" -v o="$o" \
        'BEGIN { printf "| %s | 4 KiB %s, QD %d | %.1f | %.1f | %+.1f | %.4f | %.2f (%.2f%%) | %.1f (%+.1f) |\n", be, op, qd, a, b, a - b, a / b, g, 100 * g / b, o, o - a }'
      echo "$be $op $qd $a $o ${floor[$op$qd]:-0}" >>"$tmp/summary"
    done
  done
done
}

if [[ $have_raw -eq 1 ]]; then
  echo
  echo "| backend | requests | ours, iostat off | the floor: liburing directly | ours / floor (goal <= 2) | iostat on - off (goal <= +150) |"
  echo "|---|---|---:|---:|---:|---:|"
  awk '{ printf "| %s | 4 KiB %s, QD %d | %.1f | %.1f | %.2fx | %+.1f |\n", $1, $2, $3, $4, $6, $4 / $6, $5 - $4 }' "$tmp/summary"
fi

if [[ $with_fio -eq 1 ]]; then
  fio_count() {  # rw qd ios -> total instructions
    valgrind --tool=callgrind --callgrind-out-file="$tmp/fio.out" fio --name=b --filename="$file" \
      --size=1G --direct=1 --ioengine=io_uring --rw="$1" --bs=4k --iodepth="$2" --number_ios="$3" \
      --thread --output-format=terse >/dev/null 2>&1
    awk '/^totals:/ { print $2 }' "$tmp/fio.out"
  }
  echo
  echo "| fio (whole process, per I/O) | instructions |"
  echo "|---|---:|"
  for rw in randread randwrite; do
    for qd in 1 32; do
      a=$(fio_count "$rw" "$qd" "$n")
      b=$(fio_count "$rw" "$qd" $((2 * n)))
      awk -v rw="$rw" -v qd="$qd" -v a="$a" -v b="$b" -v n="$n" \
        'BEGIN { printf "| 4 KiB %s, QD %d | %.1f |\n", rw, qd, (b - a) / n }'
    done
  done
fi

if [[ $with_job -eq 1 ]]; then
  job_total() {  # backend qd op variant ios -> total instructions of the run
    valgrind --tool=callgrind --callgrind-out-file="$tmp/job.out" "$build/bench/io/f2fscore-reqcost-job" \
      "$file" "$2" "$5" "$3" "$1" "$4" >/dev/null 2>"$tmp/vg.log" || { cat "$tmp/vg.log" >&2; die "reqcost-job failed"; }
    awk '/^totals:/ { print $2 }' "$tmp/job.out"
  }
  echo
  echo "| backend | requests, through run_io_job() | no layer | layer off | off - no layer | off / no layer | layer on | on - off |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  for be in $backends; do
    for op in read write; do
      for qd in 1 32; do
        declare -A per=()
        for v in bare off on; do
          : >"$tmp/j"
          for i in 1 2 3; do
            a=$(job_total "$be" "$qd" "$op" "$v" "$n")
            b=$(job_total "$be" "$qd" "$op" "$v" $((2 * n)))
            awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f\n", (b - a) / n }' >>"$tmp/j"
          done
          per[$v]=$(median <"$tmp/j")
        done
        awk -v be="$be" -v op="$op" -v qd="$qd" -v x="${per[bare]}" -v a="${per[off]}" -v o="${per[on]}" \
          'BEGIN { printf "| %s | 4 KiB rand%s, QD %d | %.1f | %.1f | %+.1f | %.4f | %.1f | %+.1f |\n", be, op, qd, x, a, a - x, a / x, o, o - a }'
      done
    done
  done
fi
