#!/usr/bin/env bash
# image_bench.sh: building an image from a directory tree, side by side in
# one run: f2fscore against f2fs-tools (mkfs.f2fs + sload.f2fs).
#
# Usage: bench/image_bench.sh [--runs N] [--trees "aosp small"] [--workdir DIR]
#                             [--aosp-mib M] [--small-files N] [--size SIZE]
#
# Trees (made once in WORKDIR with fixed contents, python3's random seeded):
#   aosp   an AOSP-like system tree of about M MiB (default 320): apex-like
#          files (6 of 24 MiB, 8 of 4 MiB), shared libraries and apks
#          (120 files of 256 KiB-1 MiB), and 3,000 small files (100 B-16 KiB)
#          under bin/ etc/ lib64/ framework/ app/*/ priv-app/*/, symlinks
#          and a hard link
#   small  N files (default 100,000) of 1-4 KiB in 1,000 directories
# Per tree and run, each command writes a fresh sparse image of SIZE
# (default 2 GiB), its page cache synced (sync IMG) inside the timed span:
#   pop    f2fscore-mkfs -f -q IMG --populate TREE
#   two    f2fscore-mkfs -f -q IMG; f2fscore-sload -q -f TREE IMG
#   ref    mkfs.f2fs -f -q IMG; sload.f2fs -f TREE IMG
# The same options for both (none but the tree: Debian's sload.f2fs 1.15
# ignores -C, so the Android rules are left out). sload.f2fs 1.15 runs its
# own fsck pass after the copy; that is part of the command and is timed.
# The order of the three changes every run (bench/order.sh's williams_row:
# over 6 runs each follows each other equally often); the trees stay warm
# in the page cache (read once, untimed); the page cache is not dropped
# (other jobs share this machine). Wall and CPU (user + system) times come
# from /usr/bin/time around the whole command (both tools of a pair).
# After the timed runs, once per tree and command (untimed):
#   bytes  under strace -f -P IMG -e trace=write,writev,pwrite64,pwritev,
#          pwritev2: the sum of the return values (bytes handed the kernel
#          for the image), as bench/mkfs_bench.sh counts them
#   calls  strace -c -f: every system call of the command (both tools)
#   clean  fsck.f2fs -f on a copy of the image (as ../shared/NOTES.md says)
# The timed runs also give each command's block output (/usr/bin/time %O,
# 512-byte units: the kernel's count of bytes dirtied in the page cache).
# Output: per tree, the median wall and CPU times, the median per-run ratio
# against ref (time of ours / time of ref in the same run), bytes, calls,
# the load average before and after.
#
# Environment: F2FSCORE_MKFS, F2FSCORE_SLOAD (default ../build/tools/...;
# copied to WORKDIR so that a rebuild during the runs changes nothing),
# MKFS_F2FS, SLOAD_F2FS, FSCK_F2FS (default /usr/sbin/...).
set -euo pipefail
export LC_ALL=C
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
trees="aosp small"
workdir=""
aosp_mib=320
nsmall=100000
size=2G
die() { echo "image_bench: $*" >&2; exit 1; }
note() { echo "image_bench: $*" >&2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --trees) trees=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --aosp-mib) aosp_mib=$2; shift 2 ;;
    --small-files) nsmall=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--trees \"aosp small\"] [--workdir DIR] [--aosp-mib M] [--small-files N] [--size SIZE]" >&2
       exit 2 ;;
  esac
done
mkfs_ours=${F2FSCORE_MKFS:-$script_dir/../build/tools/mkfs/f2fscore-mkfs}
sload_ours=${F2FSCORE_SLOAD:-$script_dir/../build/tools/sload/f2fscore-sload}
mkfs_ref=${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}
sload_ref=${SLOAD_F2FS:-/usr/sbin/sload.f2fs}
fsck_ref=${FSCK_F2FS:-/usr/sbin/fsck.f2fs}
for t in "$mkfs_ours" "$sload_ours" "$mkfs_ref" "$sload_ref" "$fsck_ref" /usr/bin/time; do
  [[ -x "$t" ]] || die "missing $t"
done
command -v strace >/dev/null || die "strace not found (package strace)"
command -v python3 >/dev/null || die "python3 not found"
[[ -n "$workdir" ]] || workdir=$(mktemp -d /var/tmp/f2fscore-image-bench.XXXXXX)
mkdir -p "$workdir"
[[ "$(stat -f -c %T "$workdir")" != tmpfs ]] || die "$workdir is tmpfs; give a disk-backed --workdir"
trap 'rm -rf "$workdir"' EXIT
cp "$mkfs_ours" "$workdir/f2fscore-mkfs"
cp "$sload_ours" "$workdir/f2fscore-sload"
mkfs_ours=$workdir/f2fscore-mkfs
sload_ours=$workdir/f2fscore-sload
img=$workdir/out.img
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "n/a"; exit } printf "%.3f\n", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

make_tree() {  # make_tree NAME DIR
  python3 - "$1" "$2" "$aosp_mib" "$nsmall" <<'PY'
import os, random, sys
kind, base, aosp_mib, nsmall = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(1)
def put(path, n):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        # Incompressible data; 1 MiB pieces keep the memory small.
        while n > 0:
            k = min(n, 1 << 20)
            f.write(rnd.randbytes(k))
            n -= k
if kind == "aosp":
    scale = aosp_mib / 320.0
    for i in range(6): put(f"{base}/apex/com.android.big{i}.apex", int(24 * scale * (1 << 20)))
    for i in range(8): put(f"{base}/apex/com.android.mod{i}.apex", int(4 * scale * (1 << 20)))
    for i in range(60): put(f"{base}/lib64/lib{i:03d}.so", rnd.randint(256 << 10, 1 << 20))
    for i in range(30): put(f"{base}/app/App{i:02d}/App{i:02d}.apk", rnd.randint(256 << 10, 1 << 20))
    for i in range(30): put(f"{base}/priv-app/Priv{i:02d}/Priv{i:02d}.apk", rnd.randint(256 << 10, 1 << 20))
    dirs = ["bin", "etc", "etc/init", "etc/permissions", "framework", "usr/share/zoneinfo", "fonts", "lib64/hw"]
    for i in range(3000):
        put(f"{base}/{dirs[i % len(dirs)]}/f{i:05d}", rnd.randint(100, 16 << 10))
    os.symlink("f00000", f"{base}/bin/sh")
    os.symlink("../lib64", f"{base}/lib")
    os.link(f"{base}/bin/f00008", f"{base}/bin/linked")
else:
    for i in range(nsmall):
        put(f"{base}/d{i % 1000:03d}/f{i:06d}", rnd.randint(1024, 4096))
PY
}

# Each command as one string run by bash -c (so /usr/bin/time covers both
# tools of a pair and sync).
cmd_of() {  # cmd_of TOOL TREEDIR [SLOAD-OPTION]
  case $1 in
    pop) echo "'$mkfs_ours' -f -q '$img' --populate '$2' && sync '$img'" ;;
    two) echo "'$mkfs_ours' -f -q '$img' && '$sload_ours' -q ${3:-} -f '$2' '$img' && sync '$img'" ;;
    # sload.f2fs 1.15 exits 1 after its own fsck pass on some trees: its
    # status is reported, not fatal.
    ref) echo "'$mkfs_ref' -f -q '$img' >/dev/null && { '$sload_ref' -f '$2' '$img' >/dev/null 2>&1; echo \$? > '$workdir/ref.rc'; } && sync '$img'" ;;
  esac
}
fresh() { rm -f "$img"; truncate -s "$size" "$img"; sync -f "$workdir"; }

note "workdir $workdir ($(stat -f -c %T "$workdir")), $(nproc) CPUs, $(uname -sr), image $size, $runs runs"
note "ours: $("$mkfs_ours" -V 2>&1 | head -n1) (git $(git -C "$script_dir" describe --always --dirty 2>/dev/null || echo unknown))"
note "ref:  $("$mkfs_ref" -V 2>&1 | head -n1)"
. "$script_dir/order.sh"
tools="pop two ref"
declare -A OUT WALL CPU RATIO_W RATIO_C BYTES CALLS CLEAN LOAD0 LOAD1 DESC
for tree in $trees; do
  src=$workdir/tree-$tree
  [[ -d $src ]] || make_tree "$tree" "$src"
  nfiles=$(find "$src" -type f | wc -l)
  mib=$(du -sb --apparent-size "$src" | awk '{ printf "%.0f", $1 / 1048576 }')
  DESC[$tree]="$nfiles files, $mib MiB"
  cat $(find "$src" -type f) >/dev/null 2>&1 || find "$src" -type f -exec cat {} + >/dev/null
  for t in $tools; do OUT[$tree,$t]=""; WALL[$tree,$t]=""; CPU[$tree,$t]=""; RATIO_W[$tree,$t]=""; RATIO_C[$tree,$t]=""; done
  LOAD0[$tree]=$(loadavg)
  for ((r = 0; r < runs; r++)); do
    read -r -a order <<< "$(williams_row "$r" $tools)"
    declare -A w=() c=()
    line="$tree run $((r + 1)):"
    for t in "${order[@]}"; do
      fresh
      /usr/bin/time -f '%e %U %S %O' -o "$workdir/time" bash -c "$(cmd_of "$t" "$src")" || die "$t failed on $tree"
      read -r e u s o < "$workdir/time"
      OUT[$tree,$t]+="$((o * 512)) "
      w[$t]=$e
      c[$t]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
      WALL[$tree,$t]+="${w[$t]} "; CPU[$tree,$t]+="${c[$t]} "
      line+=" $t ${w[$t]}s (cpu ${c[$t]}s)"
      [[ $t == ref ]] && line+=" [sload.f2fs exit $(cat "$workdir/ref.rc")]"
    done
    for t in pop two; do
      RATIO_W[$tree,$t]+="$(awk -v a="${w[$t]}" -v b="${w[ref]}" 'BEGIN { printf "%.4f", a / b }') "
      RATIO_C[$tree,$t]+="$(awk -v a="${c[$t]}" -v b="${c[ref]}" 'BEGIN { printf "%.4f", (b > 0) ? a / b : 0 }') "
    done
    note "$line; load $(loadavg)"
    unset w c
  done
  LOAD1[$tree]=$(loadavg)
  # Untimed: bytes written to the image, system calls, fsck.
  for t in $tools; do
    fresh
    # f2fscore-sload's default backend is io_uring, whose writes strace
    # does not see: here it writes through the POSIX one (the same bytes).
    strace -f -qq -P "$img" -e trace=write,writev,pwrite64,pwritev,pwritev2 -o "$workdir/strace" \
      bash -c "$(cmd_of "$t" "$src" "--backend posix")" >/dev/null 2>&1 || die "$t failed under strace on $tree"
    BYTES[$tree,$t]=$(awk 'match($0, /\) += [0-9]+/) { s = substr($0, RSTART); sub(/^\) += /, "", s); b += s }
                          END { printf "%.0f", b }' "$workdir/strace")
    fresh
    strace -c -f -o "$workdir/strace-c" bash -c "$(cmd_of "$t" "$src")" >/dev/null 2>&1 || die "$t failed under strace -c on $tree"
    # The total line: "100.00 SECONDS USECS/CALL CALLS [ERRORS] total".
    CALLS[$tree,$t]=$(awk '$NF == "total" { print $4; exit }' "$workdir/strace-c")
    cp --sparse=always "$img" "$workdir/copy.img"
    out=$("$fsck_ref" -f "$workdir/copy.img" </dev/null 2>&1) && rc=0 || rc=$?
    if [[ $rc -eq 0 ]] && ! grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' <<<"$out"; then
      CLEAN[$tree,$t]=clean
    else
      CLEAN[$tree,$t]="NOT clean"
    fi
    rm -f "$workdir/copy.img"
  done
done

echo
echo "Building images, $runs alternating runs, image $size (sparse file on $(stat -f -c %T "$workdir")), $(nproc) CPUs"
printf "%-6s %-5s %8s %8s %9s %9s %14s %14s %9s %10s\n" tree tool "wall s" "CPU s" "wall/ref" "CPU/ref" "bytes (strace)" "bytes (%O)" "syscalls" fsck
for tree in $trees; do
  for t in $tools; do
    mw=$(echo "${WALL[$tree,$t]}" | tr ' ' '\n' | awk NF | median)
    mc=$(echo "${CPU[$tree,$t]}" | tr ' ' '\n' | awk NF | median)
    rw=1; rc=1
    if [[ $t != ref ]]; then
      rw=$(echo "${RATIO_W[$tree,$t]}" | tr ' ' '\n' | awk NF | median)
      rc=$(echo "${RATIO_C[$tree,$t]}" | tr ' ' '\n' | awk NF | median)
    fi
    mo=$(echo "${OUT[$tree,$t]}" | tr ' ' '\n' | awk NF | median | awk '{ printf "%.0f", $1 }')
    printf "%-6s %-5s %8s %8s %9s %9s %14s %14s %9s %10s\n" "$tree" "$t" "$mw" "$mc" "$rw" "$rc" \
      "${BYTES[$tree,$t]}" "$mo" "${CALLS[$tree,$t]}" "${CLEAN[$tree,$t]}"
  done
  echo "  $tree: ${DESC[$tree]}; load average before ${LOAD0[$tree]}, after ${LOAD1[$tree]}"
done
echo "(wall/ref, CPU/ref: median over runs of the per-run ratio to ref; pop = f2fscore-mkfs --populate,"
echo " two = f2fscore-mkfs + f2fscore-sload, ref = mkfs.f2fs + sload.f2fs 1.15)"
