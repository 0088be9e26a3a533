#!/usr/bin/env bash
# Extraction under wine against the native build: the cost of the Windows
# path (issue 16). Two trees copied in by the native f2fscore-mkfs
# --populate: small files (/usr/share/doc) and large files (4 x 64 MiB of
# random bytes); each extracted by the native f2fscore-dump and by the
# mingw-w64 build's f2fscore-dump.exe under wine, into fresh directories,
# best of RUNS (default 3) wall-clock seconds.
#
#   bench/win_extract_bench.sh NATIVE_BUILD WINDOWS_BUILD [RUNS]
set -euo pipefail
native=$(cd "$1" && pwd) win=$(cd "$2" && pwd) runs=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WINEPREFIX=${WINEPREFIX:-$win/wineprefix} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver -p 2>/dev/null || true
mkdir -p "$work/large"
for i in 1 2 3 4; do head -c $((64 << 20)) /dev/urandom >"$work/large/f$i"; done
best() {  # best wall time of "$@" with a fresh destination $dest
  local b="" t0 t1 s
  for ((r = 0; r < runs; r++)); do
    rm -rf "$dest" && mkdir -p "$dest"
    t0=$(date +%s.%N)
    # Exit status 1 with entries left out is expected on Windows where two
    # names of a directory differ only in case (/usr/share/doc has two).
    if ! "$@" >"$work/run.log" 2>&1 && ! grep -q "incomplete" "$work/run.log"; then
      echo "error: $* failed:" >&2
      cat "$work/run.log" >&2
      exit 1
    fi
    t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc)
    if [[ -z $b ]] || (($(echo "$s < $b" | bc))); then b=$s; fi
  done
  echo "$b"
}
printf '%-12s %10s %10s %8s\n' tree native wine ratio
for tree in small large; do
  src=/usr/share/doc
  [[ $tree == small ]] || src="$work/large"
  img="$work/$tree.img"
  truncate -s 1G "$img"
  "$native/tools/mkfs/f2fscore-mkfs" -q -f --populate "$src" "$img" >/dev/null
  dest="$work/out"
  n=$(best "$native/tools/dump/f2fscore-dump" "$img" extract / "$dest")
  w=$(best wine "$win/tools/dump/f2fscore-dump.exe" "Z:$img" extract / "Z:$dest")
  printf '%-12s %9.2fs %9.2fs %7.2fx\n' "$tree" "$n" "$w" "$(echo "$w / $n" | bc -l)"
  rm -f "$img"
done
wineserver -k 2>/dev/null || true
