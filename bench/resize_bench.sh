#!/bin/sh
# Resize side by side: f2fscore-resize and resize.f2fs (f2fs-tools) on the same
# images. For each size (GiB) and fill (percent of the volume, files of 8 MiB
# copied in by sload.f2fs; sload writes them from the start of the main area,
# so a shrink to 60% of a 50% fill moves few blocks):
#   shrink to 60%      resize.f2fs -s -t   vs  f2fscore-resize --shrink -t
#   grow back to 100%  resize.f2fs -s      vs  f2fscore-resize
#   grow to 200%       resize.f2fs         vs  f2fscore-resize   (the metadata must move)
# Each result is checked with fsck.f2fs -f (clean as ../shared/NOTES.md says)
# and f2fscore-fsck -f. Prints one line per run: tool, operation, exit code,
# seconds, the volume's block_count after it, both verdicts, the tool's first
# error line. Images live in $TMPDIR
# (ext4 /tmp: sparse files).
#
#   bench/resize_bench.sh BUILD_DIR [SIZES_GIB] [FILLS]
#   bench/resize_bench.sh build "1 4 16 64" "0 50"
#
# FILL_WITH=io fills each tool's image instead with f2fscore-io fs -w fill
# (files of 8 MiB of a fixed pattern written through f2fscore's writer, the
# same for both tools: sload.f2fs writes ~8 MB/s here, CPU-bound, so a 64 GiB
# image half full would take over an hour), makes each tool's image anew from
# mkfs.f2fs (no base image is kept) and runs fsck.f2fs -f --dry-run on the
# image itself (no copy): the scratch space is one image's data.
set -eu
BUILD=${1:?build directory}
SIZES=${2:-"1 4 16 64"}
FILLS=${3:-"0 50"}
OURS=$BUILD/tools/resize/f2fscore-resize
OURFSCK=$BUILD/tools/fsck/f2fscore-fsck
OURDUMP=$BUILD/tools/dump/f2fscore-dump
FILL_WITH=${FILL_WITH:-sload}
OURIO=$BUILD/tools/io/f2fscore-io
for t in mkfs.f2fs resize.f2fs fsck.f2fs sload.f2fs; do
  command -v $t >/dev/null || { echo "needs $t (apt-get install f2fs-tools)"; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/resize_bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

clean() {  # fsck.f2fs -f on a copy (FILL_WITH=io: --dry-run in place): "clean" or the first problem line
  if [ "$FILL_WITH" = io ]; then
    out=$(fsck.f2fs -f --dry-run "$1" </dev/null 2>&1 || true)
  else
    cp --sparse=always "$1" "$W/check.img"
    out=$(fsck.f2fs -f "$W/check.img" </dev/null 2>&1 || true)
    rm -f "$W/check.img"
  fi
  bad=$(printf '%s\n' "$out" | grep -E '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' | head -1 || true)
  [ -z "$bad" ] && echo clean || echo "NOT CLEAN: $bad"
}
ours_clean() { "$OURFSCK" -f "$1" >/dev/null 2>&1 && echo clean || echo "NOT CLEAN (f2fscore-fsck $?)"; }

run() {  # label image command...
  label=$1; img=$2; shift 2
  s=$(date +%s.%N)
  set +e
  "$@" >"$W/out.log" 2>&1
  rc=$?
  set -e
  e=$(date +%s.%N)
  secs=$(echo "$e - $s" | bc)
  msg=$(grep -iE "error|refus|not |nothing" "$W/out.log" | head -1 | cut -c1-90 || true)
  blocks=$("$OURDUMP" --json "$img" sb 2>/dev/null | sed -n 's/.*"block_count": *\([0-9]*\).*/\1/p' | head -1)
  printf '%-28s rc=%-3s %8.2f s  %9s blocks  fsck.f2fs: %-12s ours: %-10s %s\n' "$label" "$rc" "$secs" "${blocks:-?}" \
    "$(clean "$img")" "$(ours_clean "$img")" "$msg"
}

for g in $SIZES; do
  for fill in $FILLS; do
    bytes=$((g * 1024 * 1024 * 1024))
    base="$W/base.img"
    rm -f "$base"
    if [ "$FILL_WITH" = sload ]; then
      truncate -s $bytes "$base"
      mkfs.f2fs -q -f "$base" >/dev/null
    fi
    if [ "$FILL_WITH" = sload ] && [ "$fill" -gt 0 ]; then
      rm -rf "$W/src"; mkdir -p "$W/src"
      n=$((bytes * fill / 100 / 8388608))
      head -c 8388608 /dev/urandom >"$W/chunk"
      i=0
      while [ $i -lt $n ]; do
        d="$W/src/d$((i % 16))"; mkdir -p "$d"
        { printf '%08d' $i; cat "$W/chunk"; } | head -c 8388608 >"$d/f$i"
        i=$((i + 1))
      done
      sload.f2fs -f "$W/src" "$base" >/dev/null
      rm -rf "$W/src"
    fi
    echo "== ${g} GiB, ${fill}% full"
    small=$((bytes * 60 / 100 / 512))
    for tool in resize.f2fs f2fscore-resize; do
      img="$W/$tool.img"
      if [ "$FILL_WITH" = io ]; then
        rm -f "$img"
        truncate -s $bytes "$img"
        mkfs.f2fs -q -f "$img" >/dev/null
        if [ "$fill" -gt 0 ]; then
          s=$(date +%s)
          "$OURIO" fs "$img" -w fill --fill "$fill" --size 8m >/dev/null
          echo "   (filled to $fill% by f2fscore-io fs -w fill in $(( $(date +%s) - s )) s)"
        fi
      else
        cp --sparse=always "$base" "$img"
      fi
      if [ $tool = resize.f2fs ]; then
        run "$tool shrink 60%" "$img" resize.f2fs -s -t $small "$img"
        run "$tool grow back" "$img" resize.f2fs -s "$img"
        truncate -s $((bytes * 2)) "$img"
        run "$tool grow 200%" "$img" resize.f2fs "$img"
      else
        run "$tool shrink 60%" "$img" "$OURS" --shrink -t $small "$img"
        run "$tool grow back" "$img" "$OURS" "$img"
        truncate -s $((bytes * 2)) "$img"
        run "$tool grow 200%" "$img" "$OURS" "$img"
      fi
      rm -f "$img"
    done
  done
done
