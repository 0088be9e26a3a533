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
#
# DATA=stamped (with FILL_WITH=io) writes compressible blocks (16 bytes of
# pattern seed and index, zeros after: f2fscore-io fs --data stamped): on a
# TMPDIR of btrfs mounted compress-force=zstd, a 64 GiB image 90% full takes
# about 2 GB of disk. LINUX=1 (needs DATA=stamped and ../shared/oracle/linux-f2fs)
# has Linux 6.1 mount each of f2fscore-resize's results read-only after every
# step, list the root, every file of /fill with its size and sha256 a sample
# of about 64 of them; all are compared with the tree the fill wrote,
# computed from the pattern alone (bench/stamped_manifest.py), not read from
# the image (an empty volume: an empty root).
# REFERENCE=0 runs f2fscore-resize only (rows resize.f2fs already has).
set -eu
BUILD=${1:?build directory}
SIZES=${2:-"1 4 16 64"}
FILLS=${3:-"0 50"}
OURS=$BUILD/tools/resize/f2fscore-resize
OURFSCK=$BUILD/tools/fsck/f2fscore-fsck
OURDUMP=$BUILD/tools/dump/f2fscore-dump
FILL_WITH=${FILL_WITH:-sload}
OURIO=$BUILD/tools/io/f2fscore-io
DATA=${DATA:-random}
LINUX=${LINUX:-0}
REFERENCE=${REFERENCE:-1}
ORACLE=${ORACLE:-$(cd "$(dirname "$0")/.." && pwd)/../shared/oracle/linux-f2fs}
if [ "$LINUX" = 1 ]; then
  [ "$FILL_WITH" = io ] && [ "$DATA" = stamped ] || { echo "LINUX=1 needs FILL_WITH=io DATA=stamped"; exit 1; }
  [ -x "$ORACLE" ] || { echo "LINUX=1 needs the oracle at $ORACLE"; exit 1; }
fi
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
# linux_reads IMAGE: Linux mounts it read-only, lists /fill with sizes and
# hashes the sample; compared with $W/expect (the pattern's tree).
linux_reads() {
  rm -rf "$W/lout"; mkdir -p "$W/lout" "$W/lin"
  cp "$W/expect/sample" "$W/lin/sample"
  cat > "$W/guest.sh" <<'GUEST'
mount -t f2fs -o ro /dev/vda /mnt || { echo "FAIL: Linux does not mount it"; exit 1; }
: > /out/sizes; : > /out/sums
if [ -d /mnt/fill ]; then
  cd /mnt/fill
  for f in *; do echo "$f $(stat -c %s "$f")"; done | sort > /out/sizes
  while read f; do sha256sum "$f"; done < /in/sample > /out/sums
  cd /
fi
ls -A /mnt > /out/root
umount /mnt || { echo "FAIL: umount"; exit 1; }
GUEST
  s=$(date +%s)
  if ! "$ORACLE" --timeout 1800 --in "$W/lin" --out "$W/lout" "$W/guest.sh" "$1" >"$W/linux.log" 2>&1; then
    echo "   LINUX FAILED: $(grep -m1 FAIL "$W/linux.log" || tail -1 "$W/linux.log")"; return
  fi
  if ! sort "$W/lout/sizes" | cmp -s - "$W/expect/sizes"; then
    echo "   LINUX DIFFERS: the file list or sizes ($(wc -l < "$W/lout/sizes") files listed)"; return
  fi
  if ! cmp -s "$W/lout/sums" "$W/expect/sums"; then echo "   LINUX DIFFERS: a sampled file's content"; return; fi
  if ! cmp -s "$W/lout/root" "$W/expect/root"; then echo "   LINUX DIFFERS: the root holds $(tr '\n' ' ' < "$W/lout/root")"; return; fi
  echo "   linux: mounts, $(wc -l < "$W/expect/sizes") files with their sizes and $(wc -l < "$W/expect/sums") sampled sha256 equal to the fill's ($(( $(date +%s) - s )) s)"
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
    tools="resize.f2fs f2fscore-resize"
    [ "$REFERENCE" = 0 ] && tools=f2fscore-resize
    for tool in $tools; do
      img="$W/$tool.img"
      if [ "$FILL_WITH" = io ]; then
        rm -f "$img"
        truncate -s $bytes "$img"
        mkfs.f2fs -q -f "$img" >/dev/null
        if [ "$fill" -gt 0 ]; then
          s=$(date +%s)
          "$OURIO" fs "$img" -w fill --fill "$fill" --size 8m --data "$DATA" >/dev/null
          echo "   (filled to $fill% by f2fscore-io fs -w fill --data $DATA in $(( $(date +%s) - s )) s)"
          if [ "$LINUX" = 1 ] && [ $tool = f2fscore-resize ]; then
            n=$("$OURDUMP" "$img" ls /fill | wc -l)
            python3 "$(dirname "$0")/stamped_manifest.py" "$n" 8388608 1048576 $(( n / 64 > 0 ? n / 64 : 1 )) "$W/expect"
            echo fill > "$W/expect/root"
          fi
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
        check=:
        [ "$LINUX" = 1 ] && check=linux_reads
        if [ "$LINUX" = 1 ] && [ "$fill" = 0 ]; then
          rm -rf "$W/expect"; mkdir -p "$W/expect"
          : > "$W/expect/sizes"; : > "$W/expect/sums"; : > "$W/expect/sample"; : > "$W/expect/root"
        fi
        run "$tool shrink 60%" "$img" "$OURS" --shrink -t $small "$img"; $check "$img"
        run "$tool grow back" "$img" "$OURS" "$img"; $check "$img"
        truncate -s $((bytes * 2)) "$img"
        run "$tool grow 200%" "$img" "$OURS" "$img"; $check "$img"
      fi
      rm -f "$img"
    done
  done
done
