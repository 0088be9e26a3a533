#!/usr/bin/env bash
# compress_bench.sh: compressed sequential writes, side by side with Linux:
# the same data set written into a compression volume by our writer
# (f2fscore-sload -c) and by Linux 6.1's f2fs in the oracle
# (../shared/oracle/linux-f2fs), per algorithm and cluster size; the
# throughput of each and the blocks each leaves on disk.
#
# Usage: bench/compress_bench.sh [--runs N] [--data-mib M] [--algs "lz4 zstd lzo lzo-rle"]
#                                [--logs "2 4"] [--size SIZE] [--workdir DIR] [--no-linux]
#
# Data set (made once in WORKDIR/data by bench/compress_gen_data.py, before
# any timed phase): about M MiB (default 64) of this machine's files, half
# ELF binaries and libraries from /usr, half text from /usr/share and
# /usr/include; already compressed files and files under 3,489 bytes
# (inline for sload) left out; deterministic on one machine
# (WORKDIR/data.manifest lists name and size).
#
# A baseline row, "none", writes the same files uncompressed (sload
# without -c; in Linux a directory without the flag).
# Ours, per run and per algorithm x log cluster size (the order of the
# combinations changes every run: bench/order.sh's williams_row): a fresh
# sparse image of SIZE (default 512M) made by `f2fscore-mkfs -O
# extra_attr,compression`, then timed: `f2fscore-sload -q -c -a ALG -L LOG -f
# DATA IMG` and `sync IMG` (wall: date +%s%N around it; CPU: user + system
# from /usr/bin/time). The data set is read once first and stays in the
# page cache.
# Linux, one boot for every combination (unless --no-linux): one image per
# algorithm made by `mkfs.f2fs -O extra_attr,compression`; in the guest it
# is mounted with compress_algorithm=ALG,compress_log_size=LOG once per LOG,
# a directory dLOG gets F2FS_COMPR_FL (chattr +c) and `cp -r` copies the
# data set (in guest memory) into it; timed from the copy's start to the end of
# umount (everything written back), /proc/uptime in centiseconds. The guest
# runs under qemu without KVM (TCG): its throughput is a VM's, printed
# beside ours with that caveat, not a ratio to read as ours against Linux.
#
# Blocks on disk, the same measure on both images: for every file the
# block addresses `f2fscore-dump IMG map` lists (real blocks only: not
# COMPRESS_ADDR, NEW_ADDR or holes), summed; also the blocks the data set
# takes uncompressed and the ratio. Every image is checked by
# `f2fscore-fsck -n` and by `fsck.f2fs -f` on a copy
# (tests/interop/fsck_clean.sh). Every file whose block count differs
# between the two is listed in WORKDIR/diff-ALG-LOG.txt. WORKDIR (default a
# new directory under /var/tmp) is kept: the data set, the images, the lists.
#
# Output: per combination, ours (median MiB/s and CPU s over the runs) and
# Linux's (MiB/s of the one guest run), data blocks of each, ours / Linux
# and the difference in percent; the load average before every run.
#
# Environment: F2FSCORE_MKFS, F2FSCORE_SLOAD, F2FSCORE_DUMP, F2FSCORE_FSCK
# (default ../build/tools/...; copied to WORKDIR), MKFS_F2FS, ORACLE
# (default ../../shared/oracle/linux-f2fs from this script).
set -euo pipefail
export LC_ALL=C
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=3
data_mib=64
algs="lz4 zstd lzo lzo-rle"
logs="2 4"
size=512M
workdir=""
linux=1
die() { echo "compress_bench: $*" >&2; exit 1; }
note() { echo "compress_bench: $*" >&2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --data-mib) data_mib=$2; shift 2 ;;
    --algs) algs=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --no-linux) linux=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "usage: $0 [--runs N] [--data-mib M] [--algs \"lz4 zstd lzo lzo-rle\"] [--logs \"2 4\"] [--size SIZE] [--workdir DIR] [--no-linux]" >&2
       exit 2 ;;
  esac
done
# shellcheck source=bench/order.sh
source "$script_dir/order.sh"
build=$script_dir/../build/tools
mkfs_ours=${F2FSCORE_MKFS:-$build/mkfs/f2fscore-mkfs}
sload_ours=${F2FSCORE_SLOAD:-$build/sload/f2fscore-sload}
dump_ours=${F2FSCORE_DUMP:-$build/dump/f2fscore-dump}
fsck_ours=${F2FSCORE_FSCK:-$build/fsck/f2fscore-fsck}
mkfs_ref=${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}
oracle=${ORACLE:-$script_dir/../../shared/oracle/linux-f2fs}
fsck_clean=$script_dir/../tests/interop/fsck_clean.sh
for t in "$mkfs_ours" "$sload_ours" "$dump_ours" "$fsck_ours" "$mkfs_ref" /usr/bin/time; do
  [[ -x "$t" ]] || die "missing $t"
done
((linux == 0)) || [[ -x "$oracle" ]] || die "no oracle at $oracle (or give --no-linux)"
command -v python3 >/dev/null || die "python3 not found"
[[ -n "$workdir" ]] || workdir=$(mktemp -d /var/tmp/f2fscore-compress-bench.XXXXXX)
mkdir -p "$workdir"
[[ "$(stat -f -c %T "$workdir")" != tmpfs ]] || die "$workdir is tmpfs; give a disk-backed --workdir"
for t in mkfs sload dump fsck; do
  v=${t}_ours
  cp "${!v}" "$workdir/f2fscore-$t"
  printf -v "$v" '%s' "$workdir/f2fscore-$t"
done

data=$workdir/data
if [[ ! -f $workdir/data.manifest || $(cat "$workdir/data.mib" 2>/dev/null) != "$data_mib" ]]; then
  note "making the data set ($data_mib MiB) in $data"
  python3 "$script_dir/compress_gen_data.py" "$data" "$data_mib" "$workdir/data.manifest" > "$workdir/data.txt"
  echo "$data_mib" > "$workdir/data.mib"
fi
read -r _ nfiles _ nbytes _ nblocks < "$workdir/data.txt"
note "data set: $nfiles files, $nbytes bytes, $nblocks blocks uncompressed"
cat "$data"/b/* "$data"/t/* > /dev/null  # warm

combos=(none:0)  # the baseline: the same files written uncompressed
for a in $algs; do for l in $logs; do combos+=("$a:$l"); done; done
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
declare -A wall cpu
loads=()
# file_blocks IMG [DIR] -> "path blocks" per file under DIR (default: all),
# the path without DIR; blocks: real block addresses
file_blocks() {
  "$dump_ours" "$1" map | python3 -c '
import sys
pre = sys.argv[1]
for line in sys.stdin:
    f = line.split()
    if not f or not f[0].startswith(pre): continue
    n = 0
    for r in f[1:]:
        if r.startswith("0"): continue
        a, _, b = r.partition("-")
        n += (int(b) - int(a) + 1) if b else 1
    print(f[0][len(pre):], n)' "${2:-}"
}
for ((r = 0; r < runs; r++)); do
  loads+=("$(loadavg)")
  # shellcheck disable=SC2207
  order=($(williams_row "$r" "${combos[@]}"))
  note "run $((r + 1))/$runs, load average ${loads[-1]}, order ${order[*]}"
  for c in "${order[@]}"; do
    a=${c%:*} l=${c#*:}
    img=$workdir/ours-$a-$l.img
    rm -f "$img"
    truncate -s "$size" "$img"
    "$mkfs_ours" -f -q -O extra_attr,compression "$img"
    copt=(-c -a "$a" -L "$l")
    [[ $a != none ]] || copt=()
    t0=$(date +%s%N)
    t=$( { /usr/bin/time -f "%U %S" sh -c 's=$1; shift; "$s" -q "$@" && sync "$1"' _ "$sload_ours" "$img" -f "$data" "${copt[@]}" \
             >/dev/null; } 2>&1 | tail -1)
    w=$(echo "($(date +%s%N) - $t0) / 1000000000" | bc -l)
    read -r u s <<< "$t"
    wall[$c]="${wall[$c]:-} $w"
    cpu[$c]="${cpu[$c]:-} $(echo "$u + $s" | bc -l)"
  done
done

declare -A lsec
if ((linux)); then
  mkdir -p "$workdir/in"
  rm -rf "$workdir/in/data"
  cp -r "$data" "$workdir/in/data"
  disks=()
  guest=$workdir/guest.sh
  {
    echo '#!/bin/sh'
    echo 'fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }'
    echo 'up() { cut -d" " -f1 /proc/uptime; }'
    echo 'cat /in/data/b/* /in/data/t/* > /dev/null'
  } > "$guest"
  # One image per algorithm (the oracle takes at most 7 besides the data
  # disk), a directory per log cluster size, each copied under a mount
  # with that size (a new file takes the mount's algorithm and size).
  i=0
  for a in none $algs; do
    img=$workdir/linux-$a.img
    rm -f "$img"
    truncate -s "$size" "$img"
    "$mkfs_ref" -q -f -O extra_attr,compression "$img" >/dev/null
    disks+=("$img")
    dev=/dev/vd$(printf "\\$(printf '%03o' $((97 + i)))")
    ls=$logs
    [[ $a != none ]] || ls=0
    for l in $ls; do
      if [[ $a == none ]]; then
        echo "mount -t f2fs $dev /mnt && mkdir /mnt/d0 || fail 'mount none'" >> "$guest"
      else
        echo "mount -t f2fs -o compress_algorithm=$a,compress_log_size=$l $dev /mnt || fail 'mount $a:$l'" >> "$guest"
        echo "mkdir /mnt/d$l && gtool set-flags /mnt/d$l 0x4 || fail 'chattr +c $a:$l'" >> "$guest"
      fi
      cat >> "$guest" <<EOF
t0=\$(up)
cp -r /in/data/b /in/data/t /mnt/d$l/ || fail "cp $a:$l"
umount /mnt || fail "umount $a:$l"
t1=\$(up)
echo "RESULT $a:$l \$t0 \$t1"
EOF
    done
    i=$((i + 1))
  done
  echo 'if dmesg | grep -i f2fs | grep -iE "error|corrupt|inconsistent"; then fail "kernel complained"; fi' >> "$guest"
  note "Linux: one boot, ${#disks[@]} images (load average $(loadavg))"
  out=$("$oracle" --timeout 3000 --mem 1536 --in "$workdir/in" "$guest" "${disks[@]}" 2>&1) || {
    echo "$out" | tail -30; die "the Linux run failed"; }
  while read -r _ c t0 t1; do
    lsec[$c]=$(echo "$t1 - $t0" | bc -l)
  done < <(echo "$out" | tr -d '\r' | grep '^RESULT ')
  echo "$out" > "$workdir/linux.log"
fi

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
mib=$(echo "$nbytes / 1048576" | bc -l)
printf "\ncompress_bench: %d files, %d bytes, %d blocks uncompressed; %d runs of ours; load average per run: %s\n" \
  "$nfiles" "$nbytes" "$nblocks" "$runs" "$(IFS=,; echo "${loads[*]}")"
printf "%-8s %3s | %9s %7s %8s | %9s %8s | %9s %7s %8s | %s\n" alg log "ours MB/s" "CPU s" blocks "Linux MB/s" blocks "ours/Linux" "diff %" "ratio" "fsck (ours, fsck.f2fs)"
for c in "${combos[@]}"; do
  a=${c%:*} l=${c#*:}
  ours=$workdir/ours-$a-$l.img lin=$workdir/linux-$a.img
  w=$(echo "${wall[$c]}" | median)
  cu=$(echo "${cpu[$c]}" | median)
  file_blocks "$ours" | sort > "$workdir/blocks-ours-$a-$l.txt"
  ob=$(awk '{s += $2} END {print s + 0}' "$workdir/blocks-ours-$a-$l.txt")
  checks() {
    local f=ok g=ok
    "$fsck_ours" -n -q "$1" >/dev/null 2>&1 || f=FAIL
    FSCK_CLEAN_QUIET=1 "$fsck_clean" "$1" >/dev/null 2>&1 || g=FAIL
    echo "$f,$g"
  }
  oc=$(checks "$ours")
  lb=- lm=- rel=- dif=- lc=-
  if ((linux)) && [[ -n ${lsec[$c]:-} ]]; then
    file_blocks "$lin" "/d$l" | sort > "$workdir/blocks-linux-$a-$l.txt"
    lb=$(awk '{s += $2} END {print s + 0}' "$workdir/blocks-linux-$a-$l.txt")
    lm=$(printf "%.1f" "$(echo "$mib / ${lsec[$c]}" | bc -l)")
    rel=$(printf "%.4f" "$(echo "$ob / $lb" | bc -l)")
    dif=$(printf "%+.2f" "$(echo "($ob - $lb) * 100 / $lb" | bc -l)")
    lc=$(checks "$lin")
    join "$workdir/blocks-ours-$a-$l.txt" "$workdir/blocks-linux-$a-$l.txt" |
      awk '$2 != $3 {print $1, "ours", $2, "linux", $3, "diff", $2 - $3}' > "$workdir/diff-$a-$l.txt"
  fi
  printf "%-8s %3s | %9.1f %7.2f %8d | %9s %8s | %9s %7s %8s | ours %s, Linux %s\n" "$a" "$l" \
    "$(echo "$mib / $w" | bc -l)" "$cu" "$ob" "$lm" "$lb" "$rel" "$dif" \
    "$(printf "%.3f" "$(echo "$nblocks / $ob" | bc -l)")" "$oc" "$lc"
done
echo "(MB/s: MiB of file data per second; ours median of $runs runs on this host, Linux one run in qemu TCG;"
echo " blocks: real data block addresses of the files, f2fscore-dump map; ratio: uncompressed blocks / ours;"
echo " per-file differences in $workdir/diff-ALG-LOG.txt)"
