#!/usr/bin/env bash
# writer_bench.sh: the writer (f2fscore-writer-bench) against fio on the same
# image file, side by side in one run.
#
# Usage: bench/writer_bench.sh [--runs N] [--size BYTES] [--bs BYTES]
#                              [--rand-count N] [--image-size BYTES] [--workdir DIR]
#
# Setup (once): an image file of --image-size (default 3 GiB) in --workdir
# (default /tmp/f2fscore-writer-bench; use a disk file system, not tmpfs),
# preallocated and written once with zeroes so that every run overwrites
# allocated extents.
#
# Per run (the order of the engine and fio flips every run):
#   seq:  mkfs.f2fs -f -t 0 (no discard); the engine writes /bench.dat of
#         --size (default 1 GiB) in --bs writes (default 1 MiB), buffered
#         (through the page cache) and, on a fresh image, with
#         WriteFlags::direct; the device is the image opened O_DIRECT
#         (pread/pwrite backend; --uring for io_uring: on this VM a 4 KiB
#         io_uring write at queue depth 1 takes 4x a pwrite, fio shows the
#         same). Timed from the first write to the end of unmount (the
#         checkpoint's last flush). fio writes the same amount to the same
#         image file, O_DIRECT, --end_fsync=1: psync (queue depth 1) and
#         io_uring at queue depth 8 (the writer keeps up to 8 in flight).
#   rand: mkfs.f2fs; the engine writes /bench.dat of --size (untimed), then
#         --rand-count (default 65536) 4 KiB overwrites at random block
#         offsets, buffered, then as many direct; fio --rw=randwrite
#         --bs=4k over the same size of the image file, O_DIRECT, psync,
#         --number_ios=COUNT, --end_fsync=1.
# Reported: per test the median MiB/s (IOPS for rand), the median CPU
# seconds the process used in the timed window (fio: usr_cpu + sys_cpu of
# its job), and the median of the per-run ratios engine/fio.
# WRITER_BENCH_URING=1 runs the engine on io_uring instead of pread/pwrite.
#
# Environment: F2FSCORE_WRITER_BENCH (default ../build/bench/f2fscore-writer-bench
# relative to this script; build with -DF2FSCORE_BUILD_BENCH=ON), MKFS_F2FS, FIO.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
size=$((1 << 30))
bs=$((1 << 20))
rand_count=65536
image_size=$((3 << 30))
workdir=/tmp/f2fscore-writer-bench

die() { echo "writer_bench: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --bs) bs=$2; shift 2 ;;
    --rand-count) rand_count=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
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
mkdir -p "$workdir"
[[ $(stat -f -c %T "$workdir") != tmpfs ]] || die "$workdir is tmpfs: O_DIRECT and io_uring behave differently there"
img=$workdir/image
if [[ ! -f $img || $(stat -c %s "$img") -ne $image_size ]]; then
  rm -f "$img"
  fallocate -l "$image_size" "$img"
  dd if=/dev/zero of="$img" bs=4M count=$((image_size / (4 << 20))) oflag=direct conv=notrunc status=none
fi

fresh() { "$mkfs" -f -t 0 -q "$img" >/dev/null; sync -f "$img"; }
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p"; }
fio_json() { python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]['write']; print(j['$1'])"; }

declare -A res
add() { res[$1]="${res[$1]:-} $2"; }
uring=""
[[ ${WRITER_BENCH_URING:-0} == 1 ]] && uring=--uring
# engine ARGS... -> "mib_s iops cpu_seconds"
run_engine() { "$engine" "$img" "$@" $uring | awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]} print v["mib_s"], v["iops"], v["cpu_seconds"]}'; }
# fio ARGS... -> "mib_s iops cpu_seconds"
run_fio() {
  "$fio" --filename="$img" --direct=1 --end_fsync=1 --output-format=json "$@" |
    python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; w=j['write']; rt=j['job_runtime']/1000.0; print(w['bw']/1024, w['iops'], (j['usr_cpu']+j['sys_cpu'])/100.0*rt)"
}
put() { local k=$1; set -- $2; add "$k" "$1"; add "${k}_iops" "$2"; add "${k}_cpu" "$3"; }

for ((r = 0; r < runs; r++)); do
  echo "writer_bench: run $((r + 1))/$runs" >&2
  seq_engine() {
    fresh; put seq_buffered "$(run_engine seq "$size" "$bs")"
    fresh; put seq_direct "$(run_engine seq "$size" "$bs" --direct)"
  }
  seq_fio() {
    put fio_seq_psync "$(run_fio --name=seq --rw=write --bs="$bs" --size="$size" --ioengine=psync)"
    put fio_seq_uring8 "$(run_fio --name=seq --rw=write --bs="$bs" --size="$size" --ioengine=io_uring --iodepth=8)"
  }
  rand_engine() {
    fresh
    "$engine" "$img" prep "$size" >/dev/null
    put rand_buffered "$(run_engine rand "$size" "$rand_count" --seed $((r + 1)))"
    put rand_direct "$(run_engine rand "$size" "$rand_count" --direct --seed $((r + 7)))"
  }
  rand_fio() {
    put fio_rand_psync "$(run_fio --name=rand --rw=randwrite --bs=4k --size="$size" --ioengine=psync \
      --number_ios="$rand_count" --randrepeat=0)"
  }
  if ((r % 2 == 0)); then seq_engine; seq_fio; rand_engine; rand_fio
  else seq_fio; seq_engine; rand_fio; rand_engine; fi
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() {  # median of per-run ratios $1/$2
  paste <(echo "${res[$1]}" | tr ' ' '\n' | grep -v '^$') <(echo "${res[$2]}" | tr ' ' '\n' | grep -v '^$') |
    awk '{print $1 / $2}' | median
}
printf '%-34s %12s %12s   %s\n' test median "cpu s (med)" samples
for k in seq_buffered seq_direct fio_seq_psync fio_seq_uring8; do
  printf '%-34s %12.1f %12.3f   %s\n' "$k (MiB/s)" "$(echo "${res[$k]}" | median)" "$(echo "${res[${k}_cpu]}" | median)" "${res[$k]}"
done
for k in rand_buffered rand_direct fio_rand_psync; do
  printf '%-34s %12.0f %12.3f   %s\n' "$k (IOPS)" "$(echo "${res[${k}_iops]}" | median)" "$(echo "${res[${k}_cpu]}" | median)" "${res[${k}_iops]}"
done
echo
printf '%-48s %6.3f\n' "seq buffered / fio psync" "$(ratio seq_buffered fio_seq_psync)"
printf '%-48s %6.3f\n' "seq direct / fio psync" "$(ratio seq_direct fio_seq_psync)"
printf '%-48s %6.3f\n' "seq buffered / fio io_uring qd8" "$(ratio seq_buffered fio_seq_uring8)"
printf '%-48s %6.3f\n' "seq direct / fio io_uring qd8" "$(ratio seq_direct fio_seq_uring8)"
printf '%-48s %6.3f\n' "rand buffered / fio randwrite psync (IOPS)" "$(ratio rand_buffered_iops fio_rand_psync_iops)"
printf '%-48s %6.3f\n' "rand direct / fio randwrite psync (IOPS)" "$(ratio rand_direct_iops fio_rand_psync_iops)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
