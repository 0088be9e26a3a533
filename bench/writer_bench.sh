#!/usr/bin/env bash
# writer_bench.sh: writes through the engine (f2fscore-writer-bench) against
# fio on the same image file, side by side in one run, on both kinds of I/O
# submission: the engine on pread/pwrite against fio's psync engine, the
# engine on io_uring against fio's io_uring engine.
#
# Usage: bench/writer_bench.sh [--runs N] [--size BYTES] [--bs BYTES]
#                              [--rand-count N] [--image-size BYTES]
#                              [--workdir DIR] [--uring-backend NAME]
#                              [--no-strace]
#
# Setup (once): an image file of --image-size (default 3 GiB) in --workdir
# (default /tmp/f2fscore-writer-bench; use a disk file system, not tmpfs),
# preallocated and written once with zeroes so that every run overwrites
# allocated extents.
#
# The engine opens the image O_DIRECT (the engine bounces its own unaligned
# metadata buffers; data goes to the device from aligned page-cache or
# caller buffers) on the backend under test: "posix" (pread/pwrite) or
# --uring-backend (default "uring": io_uring through liburing; "io_uring":
# through Asio). Its time runs from the first write to the end of unmount()
# (every block and the checkpoint durable: the last flush done), as fio's
# --end_fsync=1. The data are stamped into one buffer per call (two stores
# per 4 KiB block); the driver times that generator alone, untimed, and
# prints it (gen_seconds) beside.
#
# Per run (the order of the engine and fio flips every run):
#   seq:  mkfs.f2fs -f -t 0 (no discard) before every engine test; the
#         engine writes /bench.dat of --size (default 1 GiB) in --bs writes
#         (default 1 MiB), buffered (through its page cache) and with
#         WriteFlags::direct. fio writes the same bytes to the same image
#         file, --end_fsync=1: psync (queue depth 1) and io_uring at queue
#         depth 8 (the engine's writeback keeps up to 8 in flight), each
#         --direct=1 and buffered (--direct=0: through the host kernel's
#         page cache). The engine's buffered writes are compared with both:
#         with fio's buffered writes (each byte copied into a page cache,
#         written back, the last flush waited for: the same work) and with
#         its direct ones (no copy); its direct writes with fio --direct=1.
#   rand: mkfs.f2fs; the engine writes /bench.dat of --size (untimed), then
#         --rand-count (default 32768) 4 KiB overwrites at random block
#         offsets, buffered, then as many direct; fio --rw=randwrite --bs=4k
#         over the same size of the image file, --direct=1 --end_fsync=1,
#         --number_ios=COUNT: psync, and io_uring at queue depth 1 (a direct
#         write waits for its block as a pwrite does).
# After the timed runs (unless --no-strace), each command once more under
# `strace -f -c`: system calls per operation (an operation: one write call
# of the test; all calls of the process, setup included, and the I/O calls
# alone: pwrite64, pwritev, pread64, io_uring_enter, fdatasync, fsync).
#
# Reported: per test the median MiB/s (IOPS for rand), CPU seconds per GiB
# written by the application (the process's user + system time in the timed
# window; fio: usr_cpu + sys_cpu of its job), system calls per operation,
# and the median of the per-run ratios engine / fio; the load average
# before every run.
#
# Environment: F2FSCORE_WRITER_BENCH (default ../build/bench/f2fscore-writer-bench
# relative to this script; build with -DF2FSCORE_BUILD_BENCH=ON), MKFS_F2FS, FIO.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
size=$((1 << 30))
bs=$((1 << 20))
rand_count=32768
image_size=$((3 << 30))
workdir=/tmp/f2fscore-writer-bench
uring_backend=uring
do_strace=1

die() { echo "writer_bench: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rand-count) rand_count=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --uring-backend) uring_backend=$2; shift 2 ;;
    --no-strace) do_strace=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done

engine=${F2FSCORE_WRITER_BENCH:-$script_dir/../build/bench/f2fscore-writer-bench}
mkfs=${MKFS_F2FS:-$(command -v mkfs.f2fs || echo /usr/sbin/mkfs.f2fs)}
fio=${FIO:-$(command -v fio || true)}
[[ -x $engine ]] || die "no $engine (build with -DF2FSCORE_BUILD_BENCH=ON, or set F2FSCORE_WRITER_BENCH)"
[[ -x $mkfs ]] || die "mkfs.f2fs not found"
[[ -n $fio ]] || die "fio not found"
if ((do_strace)) && ! command -v strace >/dev/null; then
  echo "writer_bench: strace not found: no system call counts" >&2
  do_strace=0
fi
mkdir -p "$workdir"
[[ $(stat -f -c %T "$workdir") != tmpfs ]] || die "$workdir is tmpfs: O_DIRECT and io_uring behave differently there"
img=$workdir/image
if [[ ! -f $img || $(stat -c %s "$img") -ne $image_size ]]; then
  rm -f "$img"
  fallocate -l "$image_size" "$img"
  dd if=/dev/zero of="$img" bs=4M count=$((image_size / (4 << 20))) oflag=direct conv=notrunc status=none
fi

fresh() { "$mkfs" -f -t 0 -q "$img" >/dev/null; sync -f "$img"; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }

declare -A res
add() { res[$1]="${res[$1]:-} $2"; }
# The commands of each test, as arrays: ENGINE_<backend>_<test> and FIO_<test>.
seq_ops=$((size / bs))
engine_args() {  # backend test -> the engine's arguments
  local be=$1 t=$2
  case $t in
    seq_buffered) echo "seq $size $bs --backend $be" ;;
    seq_direct) echo "seq $size $bs --direct --backend $be" ;;
    rand_buffered) echo "rand $size $rand_count --backend $be" ;;
    rand_direct) echo "rand $size $rand_count --direct --backend $be" ;;
  esac
}
fio_args() {  # fio test -> fio's arguments
  case $1 in
    seq_psync | seq_psync_buf) echo "--name=seq --rw=write --bs=$bs --size=$size --ioengine=psync" ;;
    seq_uring8 | seq_uring8_buf) echo "--name=seq --rw=write --bs=$bs --size=$size --ioengine=io_uring --iodepth=8" ;;
    rand_psync) echo "--name=rand --rw=randwrite --bs=4k --size=$size --ioengine=psync --number_ios=$rand_count --randrepeat=0" ;;
    rand_uring1) echo "--name=rand --rw=randwrite --bs=4k --size=$size --ioengine=io_uring --iodepth=1 --number_ios=$rand_count --randrepeat=0" ;;
  esac
}
prepare() {  # test: a fresh volume, with /bench.dat written for rand
  fresh
  [[ $1 == rand_* ]] && "$engine" "$img" prep "$size" >/dev/null
  return 0
}
# engine BACKEND TEST -> "mib_s iops cpu_seconds gen_seconds"
run_engine() {
  prepare "$2"
  # shellcheck disable=SC2046
  "$engine" "$img" $(engine_args "$1" "$2") |
    awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]} print v["mib_s"], v["iops"], v["cpu_seconds"], v["gen_seconds"]}'
}
# fio TEST -> "mib_s iops cpu_seconds"
run_fio() {
  local direct=1
  [[ $1 == *_buf ]] && direct=0
  # shellcheck disable=SC2046
  "$fio" --filename="$img" --direct=$direct --end_fsync=1 --output-format=json $(fio_args "$1") |
    python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; w=j['write']; rt=j['job_runtime']/1000.0; print(w['bw']/1024, w['iops'], (j['usr_cpu']+j['sys_cpu'])/100.0*rt)"
}
put() { local k=$1; set -- $2; add "$k" "$1"; add "${k}_iops" "$2"; add "${k}_cpu" "$3"; [[ -n ${4:-} ]] && add "${k}_gen" "$4"; return 0; }

engine_tests="seq_buffered seq_direct rand_buffered rand_direct"
backends="posix $uring_backend"
for ((r = 0; r < runs; r++)); do
  l=$(loadavg)
  add load "$l"
  echo "writer_bench: run $((r + 1))/$runs, load average $(cut -d' ' -f1-3 /proc/loadavg), order $( ((r % 2 == 0)) && echo engine-first || echo fio-first)" >&2
  seq_engine() { for be in $backends; do for t in seq_buffered seq_direct; do put "${t}_$be" "$(run_engine "$be" "$t")"; done; done; }
  seq_fio() { for t in seq_psync seq_uring8 seq_psync_buf seq_uring8_buf; do put "fio_$t" "$(run_fio "$t")"; done; }
  rand_engine() { for be in $backends; do for t in rand_buffered rand_direct; do put "${t}_$be" "$(run_engine "$be" "$t")"; done; done; }
  rand_fio() { for t in rand_psync rand_uring1; do put "fio_$t" "$(run_fio "$t")"; done; }
  if ((r % 2 == 0)); then seq_engine; seq_fio; rand_engine; rand_fio
  else seq_fio; seq_engine; rand_fio; rand_engine; fi
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# System calls: each command once under strace (untimed).
declare -A sc_all sc_io
strace_count() {  # key ops CMD... -> sc_all[key], sc_io[key] per op
  local key=$1 ops=$2 out
  shift 2
  out=$(mktemp)
  strace -f -c -o "$out" "$@" >/dev/null 2>&1 || true
  # strace -c columns: % time, seconds, usecs/call, calls, [errors,] syscall.
  sc_all[$key]=$(awk -v ops="$ops" '$NF == "total" {printf "%.2f", $4 / ops}' "$out")
  sc_io[$key]=$(awk -v ops="$ops" '$NF ~ /^(pwrite64|pwritev|pwritev2|pread64|io_uring_enter|fdatasync|fsync)$/ {n += $4} END {printf "%.2f", n / ops}' "$out")
  rm -f "$out"
}
if ((do_strace)); then
  echo "writer_bench: system call counts (strace -f -c, untimed)" >&2
  for be in $backends; do
    for t in $engine_tests; do
      ops=$seq_ops
      [[ $t == rand_* ]] && ops=$rand_count
      prepare "$t"
      # shellcheck disable=SC2046
      strace_count "${t}_$be" "$ops" "$engine" "$img" $(engine_args "$be" "$t")
    done
  done
  for t in seq_psync seq_uring8 seq_psync_buf seq_uring8_buf rand_psync rand_uring1; do
    ops=$seq_ops
    [[ $t == rand_* ]] && ops=$rand_count
    direct=1
    [[ $t == *_buf ]] && direct=0
    # shellcheck disable=SC2046
    strace_count "fio_$t" "$ops" "$fio" --filename="$img" --direct=$direct --end_fsync=1 $(fio_args "$t")
  done
fi

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() {  # median of per-run ratios $1/$2
  paste <(echo "${res[$1]}" | tr ' ' '\n' | grep -v '^$') <(echo "${res[$2]}" | tr ' ' '\n' | grep -v '^$') |
    awk '{print $1 / $2}' | median
}
gib() { awk -v b="$1" 'BEGIN {print b / 1073741824}'; }
seq_gib=$(gib "$size")
rand_gib=$(gib $((rand_count * 4096)))
echo "writer_bench: $runs runs; seq $size bytes in $bs-byte writes, rand $rand_count x 4 KiB; engine backends: $backends"
echo "writer_bench: $(uname -r), $(nproc) CPUs, fio $("$fio" --version), image $img ($(stat -f -c %T "$workdir"))"
printf '%-26s %10s %10s %10s %9s %9s   %s\n' test median unit "CPU s/GiB" "sc/op" "io sc/op" samples
row() {  # key unit gib
  local k=$1 unit=$2 g=$3 v
  if [[ $unit == IOPS ]]; then v="${res[${k}_iops]}"; else v="${res[$k]}"; fi
  printf '%-26s %10.1f %10s %10.3f %9s %9s   %s\n' "$k" "$(echo "$v" | median)" "$unit" \
    "$(awk -v c="$(echo "${res[${k}_cpu]}" | median)" -v g="$g" 'BEGIN {print c / g}')" "${sc_all[$k]:--}" "${sc_io[$k]:--}" "$v"
}
for be in $backends; do for t in seq_buffered seq_direct; do row "${t}_$be" MiB/s "$seq_gib"; done; done
for t in seq_psync seq_uring8 seq_psync_buf seq_uring8_buf; do row "fio_$t" MiB/s "$seq_gib"; done
for be in $backends; do for t in rand_buffered rand_direct; do row "${t}_$be" IOPS "$rand_gib"; done; done
for t in rand_psync rand_uring1; do row "fio_$t" IOPS "$rand_gib"; done
gen=$(echo "${res[seq_buffered_posix_gen]:-}" | median)
echo "generator (untimed, per seq test): median $gen s"
echo
printf '%-52s %6s\n' "ratio (median of per-run engine / fio)" ""
u=$uring_backend
printf '%-52s %6.3f\n' "seq buffered, posix / fio psync buffered" "$(ratio seq_buffered_posix fio_seq_psync_buf)"
printf '%-52s %6.3f\n' "seq buffered, posix / fio psync direct" "$(ratio seq_buffered_posix fio_seq_psync)"
printf '%-52s %6.3f\n' "seq direct, posix / fio psync direct" "$(ratio seq_direct_posix fio_seq_psync)"
printf '%-52s %6.3f\n' "seq buffered, $u / fio io_uring qd8 buffered" "$(ratio seq_buffered_$u fio_seq_uring8_buf)"
printf '%-52s %6.3f\n' "seq buffered, $u / fio io_uring qd8 direct" "$(ratio seq_buffered_$u fio_seq_uring8)"
printf '%-52s %6.3f\n' "seq direct, $u / fio io_uring qd8 direct" "$(ratio seq_direct_$u fio_seq_uring8)"
printf '%-52s %6.3f\n' "rand 4k buffered, posix / fio psync (IOPS)" "$(ratio rand_buffered_posix_iops fio_rand_psync_iops)"
printf '%-52s %6.3f\n' "rand 4k direct, posix / fio psync (IOPS)" "$(ratio rand_direct_posix_iops fio_rand_psync_iops)"
printf '%-52s %6.3f\n' "rand 4k buffered, $u / fio io_uring qd1 (IOPS)" "$(ratio rand_buffered_${u}_iops fio_rand_uring1_iops)"
printf '%-52s %6.3f\n' "rand 4k direct, $u / fio io_uring qd1 (IOPS)" "$(ratio rand_direct_${u}_iops fio_rand_uring1_iops)"
echo "load average before each run:${res[load]}; at the end: $load_end; $(nproc) CPUs"
