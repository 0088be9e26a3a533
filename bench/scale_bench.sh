#!/usr/bin/env bash
# scale_bench.sh: what loading a volume costs as the volume grows, ours
# against fsck.f2fs, side by side in one run.
#
# Usage: bench/scale_bench.sh [--preset ci|bench] [--sizes "16G 256G 1T"]
#                             [--runs N] [--files N] [--no-small]
#                             [--no-writer] [--no-fsck] [--keep-populated IMG]
#                             [--mem-limit-gib G]
#
#   --preset P       ci (default): sizes "16G 256G 1T", 1 run, 20,000 files
#                    (a few minutes); bench: sizes "16G 256G 1T 4T 16T",
#                    3 runs, 1,000,000 files (about an hour, 10 GB of disk
#                    for the source tree and the image). Later options
#                    override the preset's values.
#   --sizes S        empty volumes to measure; 16T is made 2 MiB short of
#                    16 TiB (ext4's file size cap)
#   --runs N         timed runs of each command per point, the two fsck tools
#                    alternating; the median is reported
#   --files N        the populated case: a sparse 1 TiB volume holding N
#                    files of 4 KiB made by f2fscore-mkfs --populate (its
#                    time and peak RSS are reported; 0 skips it)
#   --no-small       skip the 20 GiB volume with 30,000 files (its goal is
#                    time alone: at most half of fsck.f2fs's)
#   --no-writer      skip the writer column (f2fscore-io fs --workload
#                    smallfiles --files 10: pre-mount check, mount, create,
#                    sync, unmount; O_DIRECT, as the tool's default)
#   --no-fsck        skip the checker columns (ours and fsck.f2fs): the
#                    dump and writer columns alone
#   --keep-populated IMG
#                    keep the populated 1 TiB image at IMG (with IMG.files
#                    naming its file count) and, when IMG exists with the
#                    same count, measure it again instead of populating
#   --mem-limit-gib  address-space limit of every measured command
#                    (ulimit -v; default 20): an oversized allocation aborts
#                    with an exit status instead of swapping the machine
#
# Environment:
#   F2FSCORE_BENCH_DIR  where images are made (default /tmp/f2fscore-scale;
#                       disk-backed, not tmpfs; the sparse images take little
#                       room, the populated ones about 5 KiB per file, twice)
#   F2FSCORE_BUILD      the build tree (default build/ of this tree)
#   FSCK_F2FS           the reference checker (default /usr/sbin/fsck.f2fs)
#
# Each point: a sparse file (truncate -s), formatted by f2fscore-mkfs -f -q
# (or with --populate), then per run: ours -f -n; ours -p (a clean volume:
# preen's fast check); fsck.f2fs -f on a sparse copy (it rewrites the
# checkpoint; the copy is made before the timed run, cp --sparse=always);
# f2fscore-dump info and space; the writer on another copy (made before
# each timed run).
# Wall time and peak RSS from /usr/bin/time -f '%e %M'. A command that
# fails (non-zero exit, e.g. killed by the memory limit) shows its status in
# the table as "exit N".
#
# Output: one table, a row per point: ours -f -n, ours -p, fsck.f2fs -f (s,
# MB), the ratios ours/fsck.f2fs (time and memory, -f -n), dump info, dump
# space and the writer; then whether the goals hold (fsck -f -n and -p at most
# half of fsck.f2fs's time and at most its peak memory at every point).
# Exit status: 0 when every command succeeded, 1 otherwise, 2 usage.
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sizes="16G 256G 1T"
runs=1
files=20000
small=1
writer=1
fsck=1
keep=""
mem_gib=20
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --preset)
      case "$2" in
        ci) sizes="16G 256G 1T"; runs=1; files=20000 ;;
        bench) sizes="16G 256G 1T 4T 16T"; runs=3; files=1000000 ;;
        *) usage >&2; exit 2 ;;
      esac
      shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --no-small) small=0; shift ;;
    --no-writer) writer=0; shift ;;
    --no-fsck) fsck=0; shift ;;
    --keep-populated) keep=$2; shift 2 ;;
    --mem-limit-gib) mem_gib=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scale_bench: --runs needs a positive number" >&2; exit 2; }
[[ $files =~ ^[0-9]+$ ]] || { echo "scale_bench: --files needs a number" >&2; exit 2; }
[[ $mem_gib =~ ^[1-9][0-9]*$ ]] || { echo "scale_bench: --mem-limit-gib needs a positive number" >&2; exit 2; }

die() { echo "scale_bench: $*" >&2; exit 1; }
build=${F2FSCORE_BUILD:-$script_dir/../build}
ours=$build/tools/fsck/f2fscore-fsck
mkfs=$build/tools/mkfs/f2fscore-mkfs
dump=$build/tools/dump/f2fscore-dump
io=$build/tools/io/f2fscore-io
ref=${FSCK_F2FS:-/usr/sbin/fsck.f2fs}
for t in "$ours" "$mkfs" "$dump"; do [[ -x $t ]] || die "$t is not built"; done
[[ -x $ref ]] || die "$ref is missing (apt-get install f2fs-tools)"
if [[ $writer == 1 && ! -x $io ]]; then
  echo "scale_bench: $io is not built: no writer column" >&2
  writer=0
fi
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time)"
dir=${F2FSCORE_BENCH_DIR:-/tmp/f2fscore-scale}
mkdir -p "$dir"
[[ $(stat -f -c %T "$dir") != tmpfs ]] || die "$dir is on tmpfs"
mem_kib=$((mem_gib * 1024 * 1024))
failed=0

bytes_of() {
  case "$1" in
    16T) echo $((16 * 1024 ** 4 - 2 * 1024 ** 2)) ;;
    *T) echo $((${1%T} * 1024 ** 4)) ;;
    *G) echo $((${1%G} * 1024 ** 3)) ;;
    *) die "size $1: give it as NG or NT" ;;
  esac
}

# measure CMD...: runs it under the memory limit with stdin closed; prints
# "SECONDS MAXRSS_KB" or "exit N".
measure() {
  local out rc
  out=$(mktemp)
  set +e
  (ulimit -v "$mem_kib"; /usr/bin/time -o "$out" -f '%e %M' "$@" </dev/null >/dev/null 2>&1)
  rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then
    echo "exit $rc"
  else
    tail -1 "$out"
  fi
  rm -f "$out"
}

# median of numbers on stdin ("exit N" entries make the result that entry).
median() {
  awk '/exit/ { bad = $0 } !/exit/ { v[n++] = $1; m[n - 1] = $2 }
       END { if (bad != "") { print bad; exit }
             for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
             for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (m[j] < m[i]) { t = m[i]; m[i] = m[j]; m[j] = t }
             print v[int((n - 1) / 2)], m[int((n - 1) / 2)] }'
}

fmt() {  # "S KB" -> "S s / M MB"
  if [[ $1 == skipped ]]; then
    echo "-"
  elif [[ $1 == exit* ]]; then
    failed=1
    echo "$1"
  else
    awk -v s="${1% *}" -v k="${1#* }" 'BEGIN { printf "%.2f s %6.0f MB", s, k / 1000 }'
  fi
}

ratio() {  # ours ref -> "t× m×"
  if [[ $1 == exit* || $2 == exit* || $1 == skipped ]]; then echo "-"; return; fi
  awk -v a="${1% *}" -v b="${2% *}" -v c="${1#* }" -v d="${2#* }" \
    'BEGIN { printf "%.2f / %.2f", (b > 0 ? a / b : 0), (d > 0 ? c / d : 0) }'
}

# goal OURS REF [time]: ok|MISS (time <= ref/2 and rss <= ref; with "time",
# the time alone: the goal of the small populated image)
goal() {
  if [[ $1 == skipped ]]; then echo "-"; return; fi
  if [[ $1 == exit* || $2 == exit* ]]; then echo MISS; return; fi
  awk -v a="${1% *}" -v b="${2% *}" -v c="${1#* }" -v d="${2#* }" -v t="${3:-}" \
    'BEGIN { print ((a <= b / 2 && (t == "time" || c <= d)) ? "ok" : "MISS") }'
}

writer_goal() {  # writer -> ok|MISS (an empty volume: under 1 s and 256 MB)
  if [[ $1 == exit* ]]; then echo MISS; return; fi
  awk -v a="${1% *}" -v c="${1#* }" 'BEGIN { print ((a < 1 && c < 256000) ? "ok" : "MISS") }'
}

rows=()
goals=()
made=()
# point NAME IMAGE: measures everything on a formatted IMAGE.
# point NAME IMAGE [time]: measures one volume; "time" gives it the
# time-only goal.
point() {
  local name=$1 img=$2 kind=${3:-} copy="$dir/copy.img" i
  local n_list=() p_list=() r_list=()
  for ((i = 0; i < runs * fsck; i++)); do
    rm -f "$copy"
    cp --sparse=always "$img" "$copy"
    sync
    if ((i % 2 == 0)); then
      n_list+=("$(measure "$ours" -f -n "$img")")
      r_list+=("$(measure "$ref" -f "$copy")")
    else
      r_list+=("$(measure "$ref" -f "$copy")")
      n_list+=("$(measure "$ours" -f -n "$img")")
    fi
    p_list+=("$(measure "$ours" -p "$img")")
  done
  local n="skipped" p="skipped" r="skipped" info space w="-"
  if [[ $fsck == 1 ]]; then
    n=$(printf '%s\n' "${n_list[@]}" | median)
    p=$(printf '%s\n' "${p_list[@]}" | median)
    r=$(printf '%s\n' "${r_list[@]}" | median)
  fi
  local i_list=() s_list=() w_list=()
  for ((i = 0; i < runs; i++)); do
    i_list+=("$(measure "$dump" "$img" info)")
    s_list+=("$(measure "$dump" "$img" space)")
    if [[ $writer == 1 ]]; then
      rm -f "$copy"
      cp --sparse=always "$img" "$copy"
      sync
      w_list+=("$(measure "$io" fs "$copy" --workload smallfiles --files 10)")
    fi
  done
  info=$(printf '%s\n' "${i_list[@]}" | median)
  space=$(printf '%s\n' "${s_list[@]}" | median)
  [[ $writer == 0 ]] || w=$(fmt "$(printf '%s\n' "${w_list[@]}" | median)")
  rm -f "$copy"
  rows+=("$(printf '%-22s | %-18s | %-18s | %-18s | %-13s | %-18s | %-18s | %s' "$name" "$(fmt "$n")" "$(fmt "$p")" \
    "$(fmt "$r")" "$(ratio "$n" "$r")" "$(fmt "$info")" "$(fmt "$space")" "$w")")
  local wg="-"
  [[ $writer == 0 || $name != empty* ]] || wg=$(writer_goal "$(printf '%s\n' "${w_list[@]}" | median)")
  goals+=("$(printf '%-22s  -f -n: %-4s  -p: %-4s  writer: %s%s' "$name" "$(goal "$n" "$r" "$kind")" \
    "$(goal "$p" "$r" "$kind")" "$wg" "${kind:+  (goal: time only)}")")
  echo "scale_bench: $name done" >&2
}

img="$dir/vol.img"
for s in $sizes; do
  rm -f "$img"
  truncate -s "$(bytes_of "$s")" "$img"
  "$mkfs" -f -q "$img" >/dev/null || die "f2fscore-mkfs failed on $s"
  point "empty $s" "$img"
done
rm -f "$img"

# A tree of N files of 4 KiB, 1,000 to a directory.
make_tree() {
  local root=$1 n=$2
  python3 - "$root" "$n" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
block = bytes((i * 131 + 7) & 0xFF for i in range(4096))
for i in range(n):
    d = os.path.join(root, "d%05d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%07d" % i), "wb") as f:
        f.write(block)
EOF
}

if [[ $small == 1 ]]; then
  tree="$dir/tree-small"
  rm -rf "$tree"
  make_tree "$tree" 30000
  rm -f "$img"
  truncate -s $((20 * 1024 ** 3)) "$img"
  made+=("$(printf '%-22s %s' "20G, 30000 files" "$(fmt "$(measure "$mkfs" -f -q --populate "$tree" "$img")")")")
  [[ ${made[-1]} != *exit* ]] || die "f2fscore-mkfs --populate failed (20 GiB)"
  rm -rf "$tree"
  point "20G, 30000 files" "$img" time
  rm -f "$img"
fi

if [[ $files -gt 0 ]]; then
  big=${keep:-$img}
  if [[ -n $keep && -f $keep && $(cat "$keep.files" 2>/dev/null) == "$files" ]]; then
    made+=("$(printf '%-22s %s' "1T, $files files" "kept from an earlier run ($keep)")")
  else
    tree="$dir/tree-big"
    rm -rf "$tree"
    make_tree "$tree" "$files"
    rm -f "$big" "$big.files"
    truncate -s $((1024 ** 4)) "$big"
    made+=("$(printf '%-22s %s' "1T, $files files" "$(fmt "$(measure "$mkfs" -f -q --populate "$tree" "$big")")")")
    [[ ${made[-1]} != *exit* ]] || die "f2fscore-mkfs --populate failed (1 TiB)"
    rm -rf "$tree"
    [[ -z $keep ]] || echo "$files" >"$keep.files"
  fi
  point "1T, $files files" "$big"
  [[ -n $keep ]] || rm -f "$big"
fi

echo
echo "Median of $runs runs (time / peak RSS; \"-\": not measured); ratio = ours -f -n / fsck.f2fs -f (time / memory); limit ulimit -v ${mem_gib} GiB"
printf '%-22s | %-18s | %-18s | %-18s | %-13s | %-18s | %-18s | %s\n' volume "ours -f -n" "ours -p" "fsck.f2fs -f" \
  "ratio t / m" "dump info" "dump space" "writer smallfiles 10"
for r in "${rows[@]}"; do echo "$r"; done
if [[ ${#made[@]} -gt 0 ]]; then
  echo
  echo "Populated images made by f2fscore-mkfs --populate (one run, source tree just written: in the page cache):"
  for m in "${made[@]}"; do echo "$m"; done
fi
echo
echo "Goals (fsck: time at most half of fsck.f2fs -f, peak memory at most its, the 20 GiB image with"
echo "30,000 files the time alone; writer on an empty volume: under 1 s and 256 MB):"
for g in "${goals[@]}"; do echo "$g"; done
exit $failed
