#!/usr/bin/env bash
# mkfs_bench.sh: f2fscore-mkfs against mkfs.f2fs (f2fs-tools) on the same
# sparse image files, side by side in one run.
#
# Usage: bench/mkfs_bench.sh [--runs N] [--sizes "256M 64G 1T"] [--workdir DIR]
#                            [--json FILE|-] [--allow-tmpfs]
#
# For every size and run, each tool formats a fresh sparse file
# (truncate -s SIZE) with default options: `TOOL -f -q IMG`. The two tools
# alternate, and the order flips every run (ref,ours / ours,ref / ...), so
# that neither always runs on a warmer machine.
#
# Per tool and run, three invocations, each on a fresh file:
#   1. timed:      the bare command, wall time from bash's $EPOCHREALTIME
#                  (no wrapper process inside the timed window). The image's
#                  allocated bytes (st_blocks * st_blksize unit, `stat -c
#                  '%b %B'`) are taken from this image afterwards.
#   2. syscalls:   under `strace -f -P IMG -e trace=write,pwrite64,...`: the sum
#                  of the return values of every write-family call on the
#                  image, i.e. the bytes the process handed the kernel for
#                  the image. Exact and deterministic; fallocate calls
#                  (hole punching / zero ranges) are counted separately: they
#                  move no data.
#   3. block I/O:  under `/usr/bin/time -f %O`: the kernel's per-process count
#                  of file-system output blocks (512 bytes; the write_bytes of
#                  /proc/PID/io, charged when page-cache pages are dirtied),
#                  a cross-check of (2) that needs no tracing.
# Between invocations the file system is synced (`sync -f`, untimed) so that
# one run's write-back does not land in the next run's window.
#
# Results: a table on stdout (medians, min/max, and the median of the per-run
# ratios ours/reference), and JSON with every sample when --json is given
# (--json - prints it to stdout after the table).
#
# Environment:
#   F2FSCORE_MKFS  our mkfs (default: ../build/tools/mkfs/f2fscore-mkfs
#                  relative to this script)
#   MKFS_F2FS      the reference (default: mkfs.f2fs on PATH, else
#                  /usr/sbin/mkfs.f2fs)
# Needs: bash >= 5, strace, /usr/bin/time (package `time`), coreutils, awk.
set -euo pipefail
export LC_ALL=C  # $EPOCHREALTIME and printf use the locale's decimal point

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
sizes="256M 64G 1T"
workdir=""
json_out=""
allow_tmpfs=0

die() { echo "mkfs_bench: $*" >&2; exit 1; }
note() { echo "mkfs_bench: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) [[ $# -ge 2 ]] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --sizes) [[ $# -ge 2 ]] || die "--sizes needs a value"; sizes=$2; shift 2 ;;
    --workdir) [[ $# -ge 2 ]] || die "--workdir needs a value"; workdir=$2; shift 2 ;;
    --json) [[ $# -ge 2 ]] || die "--json needs a file name (or -)"; json_out=$2; shift 2 ;;
    --allow-tmpfs) allow_tmpfs=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, not '$runs'"
[[ ${BASH_VERSINFO[0]} -ge 5 ]] || die "bash 5 or later is needed (for \$EPOCHREALTIME)"

# ---- tools ------------------------------------------------------------------
ours=${F2FSCORE_MKFS:-$script_dir/../build/tools/mkfs/f2fscore-mkfs}
if [[ -z "${MKFS_F2FS:-}" ]]; then
  MKFS_F2FS=$(command -v mkfs.f2fs 2>/dev/null || true)
  [[ -n "$MKFS_F2FS" ]] || MKFS_F2FS=/usr/sbin/mkfs.f2fs
fi
ref=$MKFS_F2FS
[[ -x "$ours" ]] || die "our mkfs not found or not executable: $ours
  build it with: ninja -C build f2fscore-mkfs   (or set F2FSCORE_MKFS=/path/to/f2fscore-mkfs)"
[[ -x "$ref" ]] || die "reference mkfs.f2fs not found or not executable: $ref
  install f2fs-tools (e.g. apt-get install f2fs-tools) or set MKFS_F2FS=/path/to/mkfs.f2fs"
command -v strace >/dev/null 2>&1 || die "strace not found (package strace); it counts the bytes written"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package time); it gives the block output count (%O)"
ours=$(readlink -f "$ours")
ref=$(readlink -f "$ref")
ours_version=$("$ours" -V 2>&1 | head -n1 || true)
ref_version=$("$ref" -V 2>&1 | head -n1 || true)
# Which source the binary claims to be from (the build may lag the tree).
ours_git=$(git -C "$script_dir" describe --always --dirty 2>/dev/null || echo unknown)
ours_built=$(date -u -r "$ours" +%Y-%m-%dT%H:%M:%SZ)

# ---- work directory ---------------------------------------------------------
created_workdir=0
owns_img=0
scratch=""
cleanup() {
  if [[ -n "$scratch" ]]; then rm -rf "$scratch"; fi
  if [[ $owns_img -eq 1 ]]; then rm -f "$workdir"/bench.img; fi
  if [[ $created_workdir -eq 1 ]]; then rmdir "$workdir" 2>/dev/null || true; fi
}
trap cleanup EXIT
if [[ -z "$workdir" ]]; then
  base=/var/tmp
  [[ -d "$base" && -w "$base" ]] || base=/tmp
  workdir=$(mktemp -d "$base/mkfs_bench.XXXXXX")
  created_workdir=1
elif [[ ! -d "$workdir" ]]; then
  mkdir -p "$workdir" || die "cannot create $workdir"
  created_workdir=1
fi
workdir=$(readlink -f "$workdir")
fstype=$(df --output=fstype "$workdir" | tail -n1 | tr -d ' ')
if [[ "$fstype" == tmpfs || "$fstype" == ramfs ]]; then
  [[ $allow_tmpfs -eq 1 ]] || die "$workdir is on $fstype, not on a disk; choose --workdir on a disk-backed file system (or pass --allow-tmpfs)"
fi
[[ -e "$workdir/bench.img" ]] && die "$workdir/bench.img exists; choose another --workdir (the benchmark overwrites and deletes that file)"
owns_img=1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mkfs_bench_scratch.XXXXXX")  # strace logs, small files
img=$workdir/bench.img

# ---- one invocation ---------------------------------------------------------
fresh_image() {  # fresh_image SIZE
  rm -f "$img"
  truncate -s "$1" "$img" || die "cannot create a sparse file of $1 in $workdir (does the file system allow files this large?)"
  sync -f "$workdir"
}

run_checked() {  # run_checked LABEL CMD...: run, die with its output on failure
  local label=$1; shift
  if ! "$@" >"$scratch/out" 2>"$scratch/err"; then
    cat "$scratch/out" "$scratch/err" >&2
    die "$label failed: $*"
  fi
}

# Sets R_MS, R_ALLOC, R_SYSBYTES, R_FALLOC_CALLS, R_FALLOC_BYTES, R_OUBYTES.
measure() {  # measure TOOLPATH SIZE
  local tool=$1 size=$2 t0 t1 rc
  # 1. timed, bare
  fresh_image "$size"
  t0=$EPOCHREALTIME
  rc=0
  "$tool" -f -q "$img" >"$scratch/out" 2>"$scratch/err" || rc=$?
  t1=$EPOCHREALTIME
  if [[ $rc -ne 0 ]]; then
    cat "$scratch/out" "$scratch/err" >&2
    die "$tool -f -q $img failed with status $rc"
  fi
  R_MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')
  R_ALLOC=$(stat -c '%b %B' "$img" | awk '{ printf "%.0f", $1 * $2 }')

  # 2. write-family syscalls on the image, under strace
  fresh_image "$size"
  run_checked "strace of $tool" strace -f -qq -y -P "$img" \
    -e trace=write,writev,pwrite64,pwritev,pwritev2,fallocate -o "$scratch/strace" \
    "$tool" -f -q "$img"
  # Lines: "PID call(fd<path>, ...) = N"; with -f a call may be split into
  # "<unfinished ...>" and "<... call resumed> ...) = N".
  read -r R_SYSBYTES R_FALLOC_CALLS R_FALLOC_BYTES < <(awk '
    function ret(line,  i) { i = match(line, /\) += -?[0-9]+/); if (!i) return -1;
                             line = substr(line, i); sub(/^\) += /, "", line); return line + 0 }
    /(^|[ >])(write|writev|pwrite64|pwritev|pwritev2)\(/ || /<\.\.\. (write|writev|pwrite64|pwritev|pwritev2) resumed>/ {
      r = ret($0); if (r > 0) w += r; next }
    /fallocate\(/ && !/unfinished/ {
      # fallocate(fd<path>, MODE, OFFSET, LEN) = 0
      s = $0; sub(/^.*fallocate\(/, "", s); n = split(s, f, ", ");
      len = f[4]; sub(/\).*$/, "", len);
      if (ret($0) == 0) { c++; b += len } }
    END { printf "%.0f %d %.0f\n", w, c, b }' "$scratch/strace")

  # 3. kernel block-output accounting (%O, 512-byte units)
  fresh_image "$size"
  run_checked "/usr/bin/time of $tool" /usr/bin/time -f '%O' -o "$scratch/time" "$tool" -f -q "$img"
  R_OUBYTES=$(awk 'NF { v = $1 } END { printf "%.0f", v * 512 }' "$scratch/time")
  rm -f "$img"
}

# ---- statistics helpers -----------------------------------------------------
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "null"; exit } m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
  if (m == int(m)) printf "%.0f\n", m; else printf "%.6g\n", m }'; }
minof() { tr ' ' '\n' | awk 'NF' | sort -g | head -n1; }
maxof() { tr ' ' '\n' | awk 'NF' | sort -g | tail -n1; }
ratios() {  # ratios "a1 a2 ..." "b1 b2 ...": a_i / b_i (b_i == 0: skipped)
  awk -v A="$1" -v B="$2" 'BEGIN { n = split(A, a, " "); split(B, b, " ");
    for (i = 1; i <= n; i++) if (b[i] + 0 != 0) printf "%s%.6g", (o++ ? " " : ""), a[i] / b[i]; print "" }'
}
human() { awk -v v="$1" 'BEGIN { if (v == "null" || v == "") { print "n/a"; exit }
  if (v >= 1048576) printf "%.1f MiB\n", v / 1048576; else if (v >= 1024) printf "%.0f KiB\n", v / 1024;
  else printf "%d B\n", v }'; }
jarr() { local s; s=$(echo "$1" | awk '{ $1 = $1; gsub(/ /, ","); print }'); echo "[$s]"; }
jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }

# ---- main loop --------------------------------------------------------------
note "reference: $ref ($ref_version)"
note "ours:      $ours ($ours_version)"
note "workdir:   $workdir ($fstype), $runs runs per size, sizes: $sizes"

declare -A MS ALLOC SYSB OUB FCALLS FBYTES
for size in $sizes; do
  for tag in ref ours; do MS[$size,$tag]=""; ALLOC[$size,$tag]=""; SYSB[$size,$tag]=""; OUB[$size,$tag]=""; FCALLS[$size,$tag]=""; FBYTES[$size,$tag]=""; done
  for ((i = 1; i <= runs; i++)); do
    if (( i % 2 )); then order="ref ours"; else order="ours ref"; fi
    for tag in $order; do
      if [[ $tag == ref ]]; then tool=$ref; else tool=$ours; fi
      measure "$tool" "$size"
      MS[$size,$tag]+="$R_MS "; ALLOC[$size,$tag]+="$R_ALLOC "; SYSB[$size,$tag]+="$R_SYSBYTES "
      OUB[$size,$tag]+="$R_OUBYTES "; FCALLS[$size,$tag]+="$R_FALLOC_CALLS "; FBYTES[$size,$tag]+="$R_FALLOC_BYTES "
      note "$size run $i $tag: ${R_MS} ms, write syscalls $R_SYSBYTES B, %O $R_OUBYTES B, allocated $R_ALLOC B, fallocate $R_FALLOC_CALLS calls"
    done
  done
done

# ---- table ------------------------------------------------------------------
echo
echo "mkfs benchmark: $runs alternating runs per size; host $(hostname 2>/dev/null || echo ?), $(nproc) CPUs, kernel $(uname -r), workdir $fstype"
echo "reference: $ref_version   ours: $ours_version (tree $ours_git, binary built $ours_built)"
printf '%-6s %-12s %10s %10s %10s %12s %12s %12s %12s\n' \
  size tool "median ms" "min ms" "max ms" written "%O output" allocated "time ratio"
declare -A RT RB
for size in $sizes; do
  RT[$size]=$(ratios "${MS[$size,ours]}" "${MS[$size,ref]}")
  RB[$size]=$(ratios "${SYSB[$size,ours]}" "${SYSB[$size,ref]}")
  for tag in ref ours; do
    name=mkfs.f2fs; [[ $tag == ours ]] && name=f2fscore-mkfs
    med=$(echo "${MS[$size,$tag]}" | median)
    mn=$(echo "${MS[$size,$tag]}" | minof)
    mx=$(echo "${MS[$size,$tag]}" | maxof)
    ratio=""
    [[ $tag == ours ]] && ratio=$(echo "${RT[$size]}" | median | awk '{ printf "%.3fx", $1 }')
    printf '%-6s %-12s %10.1f %10.1f %10.1f %12s %12s %12s %12s\n' "$size" "$name" "$med" "$mn" "$mx" \
      "$(human "$(echo "${SYSB[$size,$tag]}" | median)")" "$(human "$(echo "${OUB[$size,$tag]}" | median)")" \
      "$(human "$(echo "${ALLOC[$size,$tag]}" | median)")" "$ratio"
  done
done
echo "written: bytes passed to write-family syscalls on the image (strace); %O output: kernel block-output"
echo "count (/usr/bin/time %O x 512); allocated: the image's st_blocks x 512 afterwards; time ratio:"
echo "median of the per-run ratios f2fscore-mkfs / mkfs.f2fs (below 1: ours is faster). All medians."

# ---- JSON -------------------------------------------------------------------
if [[ -n "$json_out" ]]; then
  {
    printf '{"benchmark":"mkfs","date":%s,"runs":%d,"host":{"cpus":%d,"kernel":%s,"workdir":%s,"fstype":%s},' \
      "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" "$runs" "$(nproc)" "$(jstr "$(uname -r)")" "$(jstr "$workdir")" "$(jstr "$fstype")"
    printf '"reference":{"path":%s,"version":%s},"ours":{"path":%s,"version":%s,"tree":%s,"built":%s},"command":"TOOL -f -q IMG","sizes":[' \
      "$(jstr "$ref")" "$(jstr "$ref_version")" "$(jstr "$ours")" "$(jstr "$ours_version")" \
      "$(jstr "$ours_git")" "$(jstr "$ours_built")"
    first=1
    for size in $sizes; do
      [[ $first -eq 1 ]] || printf ','
      first=0
      printf '{"size":%s,"bytes":%s,' "$(jstr "$size")" "$(numfmt --from=iec "$size" 2>/dev/null || echo null)"
      for tag in ref ours; do
        printf '"%s":{"wall_ms":%s,"median_ms":%s,"min_ms":%s,"max_ms":%s,"write_syscall_bytes":%s,"median_write_syscall_bytes":%s,' \
          "$tag" "$(jarr "${MS[$size,$tag]}")" "$(echo "${MS[$size,$tag]}" | median)" \
          "$(echo "${MS[$size,$tag]}" | minof)" "$(echo "${MS[$size,$tag]}" | maxof)" \
          "$(jarr "${SYSB[$size,$tag]}")" "$(echo "${SYSB[$size,$tag]}" | median)"
        printf '"oublock_bytes":%s,"median_oublock_bytes":%s,"allocated_bytes":%s,"median_allocated_bytes":%s,"fallocate_calls":%s,"fallocate_bytes":%s},' \
          "$(jarr "${OUB[$size,$tag]}")" "$(echo "${OUB[$size,$tag]}" | median)" \
          "$(jarr "${ALLOC[$size,$tag]}")" "$(echo "${ALLOC[$size,$tag]}" | median)" \
          "$(jarr "${FCALLS[$size,$tag]}")" "$(jarr "${FBYTES[$size,$tag]}")"
      done
      printf '"time_ratios":%s,"time_ratio_median":%s,"write_bytes_ratio_median":%s}' \
        "$(jarr "${RT[$size]}")" "$(echo "${RT[$size]}" | median)" "$(echo "${RB[$size]}" | median)"
    done
    printf ']}\n'
  } > "$scratch/json"
  if [[ "$json_out" == - ]]; then cat "$scratch/json"; else cp "$scratch/json" "$json_out"; note "JSON written to $json_out"; fi
fi
