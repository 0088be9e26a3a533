#!/usr/bin/env bash
# ipu_bench.sh DRIVER [ROUNDS] [OPS]: the SQLite-like workload of
# f2fscore-ipu-sqlite (bench/ipu/ipu_sqlite.cpp: one random 4 KiB page of a
# 64 MiB database overwritten, then fdatasync, per operation) on a 1 GiB
# volume 75% full, under three policies side by side:
#   FSYNC (0x10, the kernel's default above 16 GiB), SSR_UTIL (0x08), and
#   SSR_UTIL with the fdatasync option (IpuOptions::fdatasync_in_place).
# Two devices: an image file in $TMPDIR (flush = fdatasync of the file, so
# the disk's cache flush counts) and memory (the engine alone). The three
# runs alternate ROUNDS times (default 5) and the medians are reported, as
# docs/benchmarks.md asks on this shared machine. Prints a Markdown table.
# Exit 0; 1 if a run failed; 2 usage.
set -euo pipefail
[[ $# -ge 1 && -x "$1" ]] || { echo "usage: ipu_bench.sh DRIVER [ROUNDS] [OPS]" >&2; exit 2; }
drv="$1"
rounds="${2:-5}"
ops="${3:-1000}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ipu_bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

configs=("0x10:" "0x08:" "0x08:--fdatasync-in-place")
names=("FSYNC (0x10)" "SSR_UTIL (0x08)" "SSR_UTIL + fdatasync option")
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

for dev in file memory; do
  for ((r = 0; r < rounds; r++)); do
    for i in 0 1 2; do
      pol="${configs[$i]%%:*}" opt="${configs[$i]#*:}"
      img=()
      [[ $dev == file ]] && img=(--image "$work/v.img")
      "$drv" "${img[@]}" --ops "$ops" --policy "$pol" $opt --seed $((r + 1)) >> "$work/$dev.$i" || {
        echo "ipu_bench.sh: FAIL: $dev ${names[$i]}" >&2; exit 1; }
      rm -f "$work/v.img"
    done
  done
done

echo "| device | policy | ops/s (median of $rounds) | data blocks in place | node blocks per fdatasync | meta blocks per fdatasync | checkpoints |"
echo "|---|---|---:|---:|---:|---:|---:|"
for dev in file memory; do
  for i in 0 1 2; do
    f="$work/$dev.$i"
    ops_s=$(field ops_per_s < "$f" | median)
    inp=$(field in_place < "$f" | median)
    node=$(field node_per_fdatasync < "$f" | median)
    meta=$(field meta_per_fdatasync < "$f" | median)
    cps=$(field checkpoints < "$f" | median)
    printf '| %s | %s | %.0f | %s of %s | %.3f | %.3f | %s |\n' "$dev" "${names[$i]}" "$ops_s" "$inp" "$ops" "$node" "$meta" "$cps"
  done
done
