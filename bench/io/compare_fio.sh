#!/usr/bin/env bash
# compare_fio.sh: f2fscore-io against fio (io_uring engine) on the same fully
# written file, side by side in one run.
#
# Usage: bench/io/compare_fio.sh [--runs N] [--runtime S] [--file PATH] [--size SIZE]
#                                [--cases "c1 c2 ..."] [--control] [--uring] [--allow-tmpfs]
#
# Cases (default: all six), each as the issue states them for fio:
#   randread-qd1   fio --rw=randread  --bs=4k   --iodepth=1
#   randread-qd32  fio --rw=randread  --bs=4k   --iodepth=32
#   randwrite-qd1  fio --rw=randwrite --bs=4k   --iodepth=1
#   randwrite-qd32 fio --rw=randwrite --bs=4k   --iodepth=32
#   read-qd8       fio --rw=read      --bs=128k --iodepth=8
#   write-qd8      fio --rw=write     --bs=128k --iodepth=8
# always with --name=b --filename=F --size=1G --direct=1 --ioengine=io_uring
# --runtime=S --time_based, and f2fscore-io with the same pattern, block size,
# depth, size and runtime (O_DIRECT, io_uring backend, iostat off). At depth
# 32 f2fscore-io also runs with --iostat, to price iostat when it is on.
#
# Every run executes each case once per tool, back to back; the order of the
# tools changes from run to run (bench/order.sh), so that none always runs
# first on a cold or warm device or always after the same tool. Reported per
# case: median IOPS of each tool, the median of the per-run ratios (ours/fio,
# and iostat on/off), and the CPU time (user + system, from bash's `time`)
# per I/O of each tool. Goals: ours/fio
# >= 0.95 in every case; iostat on/off >= 0.97 at depth 32.
#
# --uring adds f2fscore-io on the direct liburing backend (--backend uring)
# to every run, in the same order scheme: its IOPS, its ratio to fio and its CPU
# time per I/O get columns of their own.
#
# --control adds a second fio to every run and reports fio/fio, the noise
# floor of the method on this machine: a shared disk and CPU make single
# 5-second runs vary by 2x and more, so a ratio is only meaningful next to it.
#
# The file (default /var/tmp/f2fscore-bench/f1g) must be on a disk-backed file
# system: io_uring on tmpfs punts every request to a kernel worker, so tmpfs
# is refused unless --allow-tmpfs. It is written in full once, with fio.
#
# Environment: F2FSCORE_IO (default: build/tools/io/f2fscore-io beside this
# repository), FIO (default: fio). Needs: bash, fio, awk, sort.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/../.." && pwd)
. "$root/bench/order.sh"
runs=5
runtime=5
file=/var/tmp/f2fscore-bench/f1g
size=1G
cases="randread-qd1 randread-qd32 randwrite-qd1 randwrite-qd32 read-qd8 write-qd8"
allow_tmpfs=0
control=0
uring=0
ours=${F2FSCORE_IO:-$root/build/tools/io/f2fscore-io}
fio=${FIO:-fio}

die() { echo "compare_fio: $*" >&2; exit 1; }
note() { echo "compare_fio: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --allow-tmpfs) allow_tmpfs=1; shift ;;
    --control) control=1; shift ;;
    --uring) uring=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[[ -x $ours ]] || die "f2fscore-io not found at $ours (build it, or set F2FSCORE_IO)"
command -v "$fio" >/dev/null || die "fio not found (Debian: apt-get install fio)"

mkdir -p "$(dirname "$file")"
fstype=$(df -T "$(dirname "$file")" | awk 'NR == 2 { print $2 }')
if [[ $fstype == tmpfs && $allow_tmpfs -eq 0 ]]; then
  die "$(dirname "$file") is on tmpfs: io_uring punts to workers there; use --file on a disk (or --allow-tmpfs)"
fi

bytes=$(numfmt --from=iec "${size%B}")
if [[ ! -f $file || $(stat -c %s "$file") -ne $bytes || $(( $(stat -c %b "$file") * 512 )) -lt $bytes ]]; then
  note "writing $size to $file"
  rm -f "$file"
  "$fio" --name=fill --filename="$file" --size="$size" --rw=write --bs=1M --direct=1 \
    --ioengine=io_uring --iodepth=8 --output-format=terse >/dev/null
fi
sync -f "$file" 2>/dev/null || sync

params() {  # case -> "rw bs depth"
  case "$1" in
    randread-qd1) echo "randread 4k 1" ;;
    randread-qd32) echo "randread 4k 32" ;;
    randwrite-qd1) echo "randwrite 4k 1" ;;
    randwrite-qd32) echo "randwrite 4k 32" ;;
    read-qd8) echo "read 128k 8" ;;
    write-qd8) echo "write 128k 8" ;;
    *) die "unknown case $1" ;;
  esac
}

# Each runner prints "IOPS CPU-microseconds-per-I/O".
timed() {  # command... -> its stdout to $tmp/out, "user sys" seconds on stdout
  local TIMEFORMAT='%U %S'
  { time "$@" >"$tmp/out"; } 2>&1
}

run_fio() {  # rw bs depth
  local rw=$1 bs=$2 qd=$3 cpu
  cpu=$(timed "$fio" --name=b --filename="$file" --size="$size" --direct=1 --ioengine=io_uring --rw="$rw" \
    --bs="$bs" --iodepth="$qd" --runtime="$runtime" --time_based --output-format=terse --terse-version=3)
  # terse v3: fields 6 and 8 are the read KiB and IOPS, 47 and 49 the write ones
  awk -F';' -v cpu="$cpu" -v bs="$(numfmt --from=iec "${bs^^}")" -v rd="$([[ $rw == *read ]] && echo 1)" '
    { kb = rd ? $6 : $47; iops = rd ? $8 : $49; split(cpu, c, " ");
      printf "%s %.2f\n", iops, (c[1] + c[2]) * 1e6 / (kb * 1024 / bs) }' "$tmp/out"
}

run_ours() {  # rw bs depth backend [--iostat]
  local rw=$1 bs=$2 qd=$3 be=$4 extra=${5:-} cpu
  cpu=$(timed "$ours" "$file" --rw "$rw" --bs "$bs" --iodepth "$qd" --size "$size" --runtime "$runtime" \
    --backend "$be" --json $extra)
  awk -v cpu="$cpu" '{ match($0, /"ios": [0-9]+/); ios = substr($0, RSTART + 7, RLENGTH - 7);
    match($0, /"iops": [0-9.]+/); iops = substr($0, RSTART + 8, RLENGTH - 8); split(cpu, c, " ");
    printf "%s %.2f\n", iops, (c[1] + c[2]) * 1e6 / ios }' "$tmp/out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
started=$(date -u '+%Y-%m-%d %H:%M UTC')
note "$("$fio" --version), $("$ours" --version); file $file ($fstype); $runs runs of ${runtime}s per case and tool"
for ((run = 1; run <= runs; run++)); do
  for c in $cases; do
    read -r rw bs qd <<<"$(params "$c")"
    tools=(fio ours)
    [[ $qd -eq 32 ]] && tools+=(ours-iostat)
    [[ $control -eq 1 ]] && tools+=(fio2)
    [[ $uring -eq 1 ]] && tools+=(ours-uring)
    n=${#tools[@]}
    for t in $(williams_row $((run - 1)) "${tools[@]}"); do  # bench/order.sh
      case $t in
        fio|fio2) v=$(run_fio "$rw" "$bs" "$qd") ;;
        ours) v=$(run_ours "$rw" "$bs" "$qd" io_uring) ;;
        ours-iostat) v=$(run_ours "$rw" "$bs" "$qd" io_uring --iostat) ;;
        ours-uring) v=$(run_ours "$rw" "$bs" "$qd" uring) ;;
      esac
      read -r iops cpu <<<"$v"
      echo "$iops" >>"$tmp/$c.$t"
      echo "$cpu" >>"$tmp/$c.$t.cpu"
      echo "$iops" >"$tmp/last.$t"
    done
    ratio() { awk -v a="$(cat "$tmp/last.$1")" -v b="$(cat "$tmp/last.$2")" 'BEGIN { print a / b }'; }
    ratio ours fio >>"$tmp/$c.ratio"
    [[ $qd -eq 32 ]] && ratio ours-iostat ours >>"$tmp/$c.iostat"
    [[ $control -eq 1 ]] && ratio fio2 fio >>"$tmp/$c.control"
    [[ $uring -eq 1 ]] && ratio ours-uring fio >>"$tmp/$c.uring"
    line="run $run $c:"
    for t in "${tools[@]}"; do line+=" $t $(cat "$tmp/last.$t")"; done
    note "$line"
  done
done

range() { sort -g "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f..%.2f", lo, hi }'; }
echo
echo "| case | fio IOPS | f2fscore-io IOPS | ours/fio | (range) |$([[ $control -eq 1 ]] && echo " fio/fio (noise) | (range) |") ours + iostat IOPS | iostat on/off | (range) | CPU us/IO fio | CPU us/IO ours |$([[ $uring -eq 1 ]] && echo " uring IOPS | uring/fio | (range) | CPU us/IO uring |")"
echo "|---|---:|---:|---:|---:|$([[ $control -eq 1 ]] && echo "---:|---:|")---:|---:|---:|---:|---:|$([[ $uring -eq 1 ]] && echo "---:|---:|---:|---:|")"
for c in $cases; do
  row="| $c | $(median <"$tmp/$c.fio" | xargs printf '%.0f') | $(median <"$tmp/$c.ours" | xargs printf '%.0f')"
  row+=" | $(median <"$tmp/$c.ratio" | xargs printf '%.3f') | $(range "$tmp/$c.ratio")"
  if [[ $control -eq 1 ]]; then
    row+=" | $(median <"$tmp/$c.control" | xargs printf '%.3f') | $(range "$tmp/$c.control")"
  fi
  if [[ -f $tmp/$c.iostat ]]; then
    row+=" | $(median <"$tmp/$c.ours-iostat" | xargs printf '%.0f') | $(median <"$tmp/$c.iostat" | xargs printf '%.3f') | $(range "$tmp/$c.iostat")"
  else
    row+=" | | | "
  fi
  row+=" | $(median <"$tmp/$c.fio.cpu" | xargs printf '%.2f') | $(median <"$tmp/$c.ours.cpu" | xargs printf '%.2f') |"
  if [[ $uring -eq 1 ]]; then
    row+=" $(median <"$tmp/$c.ours-uring" | xargs printf '%.0f') | $(median <"$tmp/$c.uring" | xargs printf '%.3f') | $(range "$tmp/$c.uring")"
    row+=" | $(median <"$tmp/$c.ours-uring.cpu" | xargs printf '%.2f') |"
  fi
  echo "$row"
done
echo
echo "Medians over $runs runs of ${runtime}s; ratios are medians of the per-run ratios of back-to-back runs."
# The conditions, so that a table can be read against the machine it ran on.
echo "Conditions: $started, $(uname -sr), $(nproc) CPUs, load average $load_start at the start and" \
  "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?") at the end; $("$fio" --version); file $file ($fstype)."
if [[ $control -eq 1 ]]; then
  # The noise floor over every case: a ratio inside it does not separate the tools.
  cat "$tmp"/*.control | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END {
    printf "Noise (fio against itself, every run of every case): %.2f..%.2f; an IOPS ratio inside this range is not a difference.\n", lo, hi }'
fi
