#!/usr/bin/env bash
# populate_bench.sh: populating an image from a host directory, side by side
# in one run: f2fscore-sload against sload.f2fs (f2fs-tools) and against
# `tar -cf` into a file on the same disk, on the same trees.
#
# Usage: bench/populate_bench.sh [--runs N] [--trees "small large"] [--workdir DIR]
#                                [--features LIST] [--keep] [--json FILE|-]
#
# --features LIST is given to both mkfs tools as -O LIST (for example
# extra_attr,inode_checksum,flexible_inline_xattr, where sload.f2fs 1.15
# leaves inodes its own fsck pass must fix).
#
# Trees (generated once in WORKDIR, deterministic contents):
#   small  10,000 files of 1..16 KiB (mean 8.5 KiB) in 100 directories
#   large  100 files of 8 MiB
# Per tree and run, each of the three commands writes a fresh output:
#   ours   f2fscore-sload -q -f TREE IMG   (IMG: fresh sparse file made by
#          f2fscore-mkfs, untimed)
#   sload  sload.f2fs -f TREE IMG          (IMG: fresh sparse file made by
#          mkfs.f2fs, untimed; sload.f2fs then runs its own fsck pass, timed
#          as part of it since that is what the command does)
#   tar    tar -cf OUT.tar -C TREE .
# Each time is the wall time (and the CPU time, user + system, from
# /usr/bin/time) of the command plus `sync OUT` (fsync of the
# output file), so every tool's data is on the disk at the end; the time of
# the command alone is reported too. The order of the three changes every
# run (bench/order.sh: over 6 runs each follows each other equally often). The trees stay warm in the page cache for all three (each run reads
# the tree first, untimed); the page cache is not dropped (other jobs share
# this machine).
# After the runs: the image of the last run of ours and of sload.f2fs is
# checked with `fsck.f2fs -f` on a copy, and "clean" is decided as
# ../shared/NOTES.md says (exit 0, no [Fail]/[ASSERT]/[FIX]/Fixing/...).
#
# Output: a table of medians and of the median per-run ratios ours/tar and
# ours/sload, and JSON with every sample (--json FILE, or - for stdout).
#
# Environment: F2FSCORE_SLOAD, F2FSCORE_MKFS (default ../build/tools/...),
#              SLOAD_F2FS, MKFS_F2FS, FSCK_F2FS (default on PATH or /usr/sbin).
set -euo pipefail
export LC_ALL=C

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$script_dir/order.sh"
runs=5
trees="small large"
workdir=""
keep=0
features=""
json_out=""

die() { echo "populate_bench: $*" >&2; exit 1; }
note() { echo "populate_bench: $*" >&2; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) [[ $# -ge 2 ]] || die "--runs needs a value"; runs=$2; shift 2 ;;
    --trees) [[ $# -ge 2 ]] || die "--trees needs a value"; trees=$2; shift 2 ;;
    --workdir) [[ $# -ge 2 ]] || die "--workdir needs a value"; workdir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --features) [[ $# -ge 2 ]] || die "--features needs a value"; features=$2; shift 2 ;;
    --json) [[ $# -ge 2 ]] || die "--json needs a file name (or -)"; json_out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

find_tool() {  # env value, name
  if [[ -n "$1" ]]; then echo "$1"; return; fi
  command -v "$2" 2>/dev/null || { [[ -x /usr/sbin/$2 ]] && echo /usr/sbin/$2; } || true
}
ours=${F2FSCORE_SLOAD:-$script_dir/../build/tools/sload/f2fscore-sload}
our_mkfs=${F2FSCORE_MKFS:-$script_dir/../build/tools/mkfs/f2fscore-mkfs}
ref=$(find_tool "${SLOAD_F2FS:-}" sload.f2fs)
ref_mkfs=$(find_tool "${MKFS_F2FS:-}" mkfs.f2fs)
ref_fsck=$(find_tool "${FSCK_F2FS:-}" fsck.f2fs)
[[ -x "$ours" ]] || die "f2fscore-sload not found at $ours (set F2FSCORE_SLOAD)"
[[ -x "$our_mkfs" ]] || die "f2fscore-mkfs not found at $our_mkfs (set F2FSCORE_MKFS)"
[[ -n "$ref" && -n "$ref_mkfs" && -n "$ref_fsck" ]] || die "f2fs-tools (sload.f2fs, mkfs.f2fs, fsck.f2fs) not found"

if [[ -z "$workdir" ]]; then workdir=$(mktemp -d /var/tmp/populate_bench.XXXXXX); fi
mkdir -p "$workdir"
[[ $keep -eq 1 ]] || trap 'rm -rf "$workdir"' EXIT

make_tree() {  # name dir
  local name=$1 dir=$2
  [[ -f "$dir/.done" ]] && return
  rm -rf "$dir"; mkdir -p "$dir"
  python3 - "$name" "$dir" <<'EOF'
import os, random, sys
name, root = sys.argv[1], sys.argv[2]
rnd = random.Random(42)
if name == "small":
    for d in range(100):
        os.makedirs(f"{root}/d{d:03}", exist_ok=True)
        for f in range(100):
            size = rnd.randint(1, 16) * 1024
            with open(f"{root}/d{d:03}/f{f:03}", "wb") as fh:
                fh.write(rnd.randbytes(size))
else:
    block = rnd.randbytes(1 << 20)
    for f in range(100):
        with open(f"{root}/big{f:03}", "wb") as fh:
            for m in range(8):
                fh.write(bytes([f, m]) + block[2:])
EOF
  touch "$dir/.done"
}

image_bytes() {  # tree -> image size
  case "$1" in small) echo $((512 << 20)) ;; large) echo $((1536 << 20)) ;; esac
}

now() { echo "$EPOCHREALTIME"; }
[[ -x /usr/bin/time ]] || die "/usr/bin/time (package time) is needed for CPU times"
timed=(/usr/bin/time -f "%U %S" -o "$workdir/cpu")
declare -A samples  # key "tree tool field" -> space-separated values

run_one() {  # tree tool run
  local tree=$1 tool=$2 src=$workdir/tree-$1 out t0 t1 t2 rc=0
  local size; size=$(image_bytes "$tree")
  case $tool in
    ours)
      out=$workdir/ours-$tree.img; rm -f "$out"; truncate -s "$size" "$out"
      "$our_mkfs" -q -f ${features:+-O "$features"} "$out" >/dev/null
      sync -f "$out"
      t0=$(now); "${timed[@]}" "$ours" -q -f "$src" "$out" || rc=$?; t1=$(now); sync "$out"; t2=$(now) ;;
    sload)
      out=$workdir/sload-$tree.img; rm -f "$out"; truncate -s "$size" "$out"
      "$ref_mkfs" -q -f ${features:+-O "$features"} "$out" >/dev/null
      sync -f "$out"
      t0=$(now); "${timed[@]}" "$ref" -f "$src" "$out" >"$workdir/sload.log" 2>&1 || rc=$?; t1=$(now); sync "$out"; t2=$(now) ;;
    tar)
      out=$workdir/tar-$tree.tar; rm -f "$out"
      sync -f "$workdir"
      t0=$(now); "${timed[@]}" tar -cf "$out" -C "$src" . || rc=$?; t1=$(now); sync "$out"; t2=$(now) ;;
  esac
  local cmd total cpu
  cpu=$(tail -n 1 "$workdir/cpu" | awk '{ printf "%.3f", $1 + $2 }')  # after "Command exited with ..."
  samples["$tree $tool cpu"]+="$cpu "
  cmd=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  total=$(awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.3f", b - a }')
  samples["$tree $tool cmd"]+="$cmd "
  samples["$tree $tool total"]+="$total "
  samples["$tree $tool rc"]+="$rc "
  if [[ $tool == sload ]]; then  # what sload.f2fs's own fsck pass repaired in the image it wrote
    tr '\r' '\n' <"$workdir/sload.log" | grep -E '\[FIX\]|Fixing|\[ASSERT\]' >"$workdir/sload-fixes-$tree.txt" || true
    samples["$tree sload fixes"]+="$(wc -l <"$workdir/sload-fixes-$tree.txt") "
  fi
  note "$tree run $3 $tool: ${cmd}s command, ${total}s with fsync, ${cpu}s CPU (exit $rc)"
}

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Clean as ../shared/NOTES.md defines it: on a copy; exit 0, no finding lines.
fsck_verdict() {  # image
  local copy=$workdir/fsck-copy.img out rc=0
  cp --sparse=always "$1" "$copy"
  out=$("$ref_fsck" -f "$copy" </dev/null 2>&1) || rc=$?
  rm -f "$copy"
  if [[ $rc -ne 0 ]] || grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' <<<"$out"; then
    echo "not clean (exit $rc): $(grep -E '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' <<<"$out" | head -3 | tr '\n' ';')"
  else
    echo "clean"
  fi
}

tools=(ours sload tar)
declare -A verdict
for tree in $trees; do
  note "generating tree $tree in $workdir/tree-$tree"
  make_tree "$tree" "$workdir/tree-$tree"
  for ((r = 0; r < runs; r++)); do
    tar -cf - -C "$workdir/tree-$tree" . >/dev/null  # warm the tree, untimed
    for tool in $(williams_row "$r" "${tools[@]}"); do run_one "$tree" "$tool" "$r"; done  # bench/order.sh
  done
  # sload.f2fs's image as sload left it (it runs its own fsck pass): does
  # fsck.f2fs -f find anything?
  verdict["$tree ours"]=$(fsck_verdict "$workdir/ours-$tree.img")
  verdict["$tree sload"]="$(fsck_verdict "$workdir/sload-$tree.img") after its own fsck pass, which repaired $(tr ' ' '\n' <<<"${samples["$tree sload fixes"]}" | awk 'NF' | paste -sd/) things (exit $(tr ' ' '\n' <<<"${samples["$tree sload rc"]}" | awk 'NF' | paste -sd/))"
  if [[ -s "$workdir/sload-fixes-$tree.txt" ]]; then
    note "sload.f2fs's own fsck pass on $tree (last run): $(head -n 3 "$workdir/sload-fixes-$tree.txt" | tr '\n' ';')"
  fi
done

printf '\n%-6s %-6s %8s %9s %8s %8s %8s %8s %8s   %s\n' tree tool "cmd s" "+fsync s" "/tar" "/sload" "CPU s" "CPU/tar" "CPU/sl" "fsck.f2fs -f"
declare -A med
for tree in $trees; do
  for tool in "${tools[@]}"; do
    for f in cmd total cpu; do med["$tree $tool $f"]=$(median <<<"${samples["$tree $tool $f"]}"); done
  done
  for tool in "${tools[@]}"; do
    # median of per-run ratios (runs alternate, so ratios pair runs)
    rt=$(paste <(tr ' ' '\n' <<<"${samples["$tree $tool total"]}") <(tr ' ' '\n' <<<"${samples["$tree tar total"]}") |
         awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | median)
    rs=$(paste <(tr ' ' '\n' <<<"${samples["$tree $tool total"]}") <(tr ' ' '\n' <<<"${samples["$tree sload total"]}") |
         awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | median)
    ratio() {  # field other-tool
      paste <(tr ' ' '\n' <<<"${samples["$tree $tool $1"]}") <(tr ' ' '\n' <<<"${samples["$tree $2 $1"]}") |
        awk 'NF == 2 && $2 > 0 { print $1 / $2 }' | median
    }
    ct=$(ratio cpu tar); cs=$(ratio cpu sload)
    printf '%-6s %-6s %8s %9s %8.2f %8.2f %8s %8.2f %8.2f   %s\n' "$tree" "$tool" "${med["$tree $tool cmd"]}" \
      "${med["$tree $tool total"]}" "$rt" "$rs" "${med["$tree $tool cpu"]}" "$ct" "$cs" "${verdict["$tree $tool"]:--}"
  done
done

if [[ -n "$json_out" ]]; then
  {
    echo "{\"runs\":$runs,\"results\":["
    first=1
    for tree in $trees; do
      for tool in "${tools[@]}"; do
        [[ $first -eq 1 ]] || echo ","
        first=0
        printf '{"tree":"%s","tool":"%s","cpu_s":[%s],"cmd_s":[%s],"total_s":[%s],"exit":[%s],"fsck":"%s"}' "$tree" "$tool" \
          "$(tr ' ' '\n' <<<"${samples["$tree $tool cpu"]}" | awk 'NF' | paste -sd,)" \
          "$(tr ' ' '\n' <<<"${samples["$tree $tool cmd"]}" | awk 'NF' | paste -sd,)" \
          "$(tr ' ' '\n' <<<"${samples["$tree $tool total"]}" | awk 'NF' | paste -sd,)" \
          "$(tr ' ' '\n' <<<"${samples["$tree $tool rc"]}" | awk 'NF' | paste -sd,)" \
          "${verdict["$tree $tool"]:--}"
      done
    done
    echo "]}"
  } >"${json_out/#-//dev/stdout}"
fi
