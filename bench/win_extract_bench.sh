#!/usr/bin/env bash
# Extraction under wine against the native build: what the Windows path
# costs. Two trees copied in by the native f2fscore-mkfs --populate: small
# files (/usr/share/doc) and large files (4 x 64 MiB of random bytes,
# generated before any timing); each extracted by the native f2fscore-dump
# and by the mingw-w64 build's f2fscore-dump.exe under wine, into fresh
# directories, the two alternating RUNS times (default 5); the medians of the
# wall-clock seconds and their ratio, with the load average before and after.
#
#   bench/win_extract_bench.sh NATIVE_BUILD WINDOWS_BUILD [RUNS]
#
# NATIVE_BUILD is a build directory of scripts/build.sh (tools/dump,
# tools/mkfs); WINDOWS_BUILD is build-cross-windows of
# `scripts/cross-test.sh windows`. Wine's start-up (a persistent wineserver,
# started once before the runs) is inside the wine times.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 NATIVE_BUILD WINDOWS_BUILD [RUNS]" >&2; exit 2; }
native=$(cd "$1" && pwd) win=$(cd "$2" && pwd) runs=${3:-5}
work=$(mktemp -d)
trap 'wineserver -k 2>/dev/null || true; rm -rf "$work"' EXIT
export WINEPREFIX=${WINEPREFIX:-$win/wineprefix} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver -p 2>/dev/null || true
wine wineboot >/dev/null 2>&1 </dev/null || true
mkdir -p "$work/large"
for i in 1 2 3 4; do head -c $((64 << 20)) /dev/urandom >"$work/large/f$i"; done

once() {  # wall seconds of "$@" into a fresh $dest
  rm -rf "$dest" && mkdir -p "$dest"
  local t0 t1
  t0=$(date +%s.%N)
  # Exit status 1 with entries left out is expected on Windows where two
  # names of a directory differ only in case (/usr/share/doc has some).
  if ! "$@" >"$work/run.log" 2>&1 && ! grep -q "incomplete" "$work/run.log"; then
    echo "error: $* failed:" >&2
    cat "$work/run.log" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $runs alternating runs each, medians"
printf '%-7s %6s %8s %10s %10s %8s\n' tree files MiB native wine ratio
for tree in small large; do
  src=/usr/share/doc
  [[ $tree == small ]] || src="$work/large"
  img="$work/$tree.img"
  truncate -s 1G "$img"
  "$native/tools/mkfs/f2fscore-mkfs" -q -f --populate "$src" "$img" >/dev/null
  files=$(find "$src" -type f | wc -l)
  mib=$(($(du -sk --apparent-size "$src" | cut -f1) / 1024))
  dest="$work/out"
  ns=() ws=()
  for ((r = 0; r < runs; r++)); do
    ns+=("$(once "$native/tools/dump/f2fscore-dump" "$img" extract / "$dest")")
    ws+=("$(once wine "$win/tools/dump/f2fscore-dump.exe" "Z:$img" extract / "Z:$dest")")
  done
  n=$(median "${ns[@]}") w=$(median "${ws[@]}")
  printf '%-7s %6d %8d %9.2fs %9.2fs %7.2fx\n' "$tree" "$files" "$mib" "$n" "$w" "$(echo "$w / $n" | bc -l)"
  rm -f "$img"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
