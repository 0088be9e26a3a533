#!/usr/bin/env bash
# our_mkfs_linux.sh: images made by OUR mkfs (f2fscore-mkfs) under Linux.
#
# For each image of the matrix below:
#   1. create a sparse file of the given size and format it with f2fscore-mkfs
#      (no -f: the file is new);
#   2. fsck_clean.sh: the fresh image must be clean under fsck.f2fs -f;
#   3. linux_rw.sh IMAGE MOUNT_OPTS: Linux 6.1 mounts it, creates, writes,
#      reads back and deletes files and directories, remounts, unmounts; then
#      fsck.f2fs -f must call the result clean.
# Prints PASS/FAIL per image with its timing; an image's full log is printed
# when it fails (or always with OUR_MKFS_LINUX_VERBOSE=1).
#
# usage: our_mkfs_linux.sh [--mkfs PATH] [--jobs N] [--only NAME[,NAME...]] [WORKDIR]
#   --mkfs PATH  the mkfs binary (default: $F2FSCORE_MKFS, else
#                REPO/build/tools/mkfs/f2fscore-mkfs)
#   --jobs N     images processed at once (default: $OUR_MKFS_LINUX_JOBS, else 2;
#                each runs one qemu TCG guest)
#   --only LIST  run only the named images (see the matrix)
#   WORKDIR      where the images and logs go; kept afterwards. Default: a
#                temporary directory, removed afterwards.
# Exit: 0 all passed; 1 a failure; 2 usage; 77 skipped because the Linux
# oracle or fsck.f2fs is missing. With F2FSCORE_REQUIRE_ORACLE=1 a missing
# oracle is a failure (1), and so is a missing fsck.f2fs (F2FSCORE_REQUIRE_FSCK
# defaults to F2FSCORE_REQUIRE_ORACLE here: the check is Linux + fsck).
# Environment passed through: ORACLE, ORACLE_TIMEOUT, FSCK_F2FS, TMPDIR,
# LINUX_RW_DMESG (see linux_rw.sh and fsck_clean.sh).
# Takes about 2-3 minutes on 2 cores with --jobs 2.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

RICH=extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,compression
# name | size (truncate -s) | f2fscore-mkfs options | mount options
matrix=(
  "default_64g|64G||"
  "rich_zstd_7g|7838315315|-O $RICH|compress_algorithm=zstd"
  "default_52m|52M||"
  "rich_lz4_1g|1G|-O $RICH|compress_algorithm=lz4"
  "quota_256m|256M|-O extra_attr,quota,project_quota|usrquota,grpquota,prjquota"
  "verity_encrypt_256m|256M|-O verity,encrypt|"
  "casefold_256m|256M|-O casefold -C utf8|"
  "seg2_1g|1G|-s 2|"
)

usage() { echo "usage: our_mkfs_linux.sh [--mkfs PATH] [--jobs N] [--only NAME[,NAME...]] [WORKDIR]" >&2; exit 2; }
mkfs="${F2FSCORE_MKFS:-$repo_root/build/tools/mkfs/f2fscore-mkfs}"
jobs_max="${OUR_MKFS_LINUX_JOBS:-2}"
only=""
work=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mkfs) [[ $# -ge 2 ]] || usage; mkfs="$2"; shift 2 ;;
    --jobs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || usage; jobs_max="$2"; shift 2 ;;
    --only) [[ $# -ge 2 ]] || usage; only="$2"; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) usage ;;
    *) [[ -z "$work" ]] || usage; work="$1"; shift ;;
  esac
done

if [[ ! -x "$mkfs" ]]; then
  echo "our_mkfs_linux.sh: FAIL: f2fscore-mkfs not found at $mkfs (build it, or set F2FSCORE_MKFS / --mkfs)" >&2
  exit 1
fi

export F2FSCORE_REQUIRE_FSCK="${F2FSCORE_REQUIRE_FSCK:-${F2FSCORE_REQUIRE_ORACLE:-0}}"
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
fsck="${FSCK_F2FS:-/usr/sbin/fsck.f2fs}"
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    echo "our_mkfs_linux.sh: FAIL: Linux oracle not found at $oracle and F2FSCORE_REQUIRE_ORACLE=1" >&2; exit 1
  fi
  echo "our_mkfs_linux.sh: SKIP: Linux oracle not found at $oracle (set ORACLE=...)" >&2; exit 77
fi
if [[ ! -x "$fsck" ]]; then
  if [[ "$F2FSCORE_REQUIRE_FSCK" == 1 ]]; then
    echo "our_mkfs_linux.sh: FAIL: $fsck not found and F2FSCORE_REQUIRE_FSCK=1" >&2; exit 1
  fi
  echo "our_mkfs_linux.sh: SKIP: $fsck not found (install f2fs-tools)" >&2; exit 77
fi

if [[ -n "$only" ]]; then
  sel=()
  IFS=',' read -r -a wanted <<<"$only"
  for w in "${wanted[@]}"; do
    found=0
    for row in "${matrix[@]}"; do
      if [[ "${row%%|*}" == "$w" ]]; then sel+=("$row"); found=1; fi
    done
    [[ $found == 1 ]] || { echo "our_mkfs_linux.sh: no image named '$w' in the matrix" >&2; usage; }
  done
  matrix=("${sel[@]}")
fi

if [[ -n "$work" ]]; then mkdir -p "$work"; work=$(cd "$work" && pwd)
else work=$(mktemp -d "${TMPDIR:-/tmp}/our_mkfs_linux.XXXXXX"); trap 'rm -rf "$work"' EXIT; fi

# run_one NAME SIZE MKOPTS MNTOPTS: everything goes to $work/NAME.log; the
# exit status goes to $work/NAME.rc (0 pass, 77 skip, else fail).
run_one() {
  local name="$1" size="$2" mkopts="$3" mntopts="$4"
  local img="$work/$name.img" rc t0=$SECONDS
  {
    echo "=== $name: ${size} bytes; f2fscore-mkfs ${mkopts:-(defaults)}; mount -o ${mntopts:-(defaults)}"
    rm -f "$img"
    truncate -s "$size" "$img"
    set +e
    # shellcheck disable=SC2086  # mkopts is a word list on purpose
    "$mkfs" $mkopts "$img"; rc=$?
    if [[ $rc -ne 0 ]]; then
      echo "our_mkfs_linux.sh: FAIL: $name: f2fscore-mkfs ${mkopts} exited with $rc"
    else
      echo "--- $name: fresh image under fsck.f2fs -f"
      "$here/fsck_clean.sh" "$img"; rc=$?
      [[ $rc -eq 0 ]] || echo "our_mkfs_linux.sh: FAIL: $name: the image fresh from f2fscore-mkfs is not clean"
      if [[ $rc -eq 0 ]]; then
        echo "--- $name: Linux read/write, then fsck.f2fs -f"
        "$here/linux_rw.sh" "$img" "$mntopts"; rc=$?
      fi
    fi
    set -e
    echo "=== $name: status $rc after $((SECONDS - t0)) s"
  } > "$work/$name.log" 2>&1
  echo "$rc $((SECONDS - t0))" > "$work/$name.rc"
}

echo "our_mkfs_linux.sh: mkfs $mkfs; oracle $oracle; ${#matrix[@]} images, $jobs_max at a time; work dir $work"
t_all=$SECONDS
names=()
for row in "${matrix[@]}"; do
  IFS='|' read -r name size mkopts mntopts <<<"$row"
  names+=("$name")
  rm -f "$work/$name.rc"
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
  echo "our_mkfs_linux.sh: start $name"
  run_one "$name" "$size" "$mkopts" "$mntopts" &
done
wait || true

failed=() skipped=() summary=()
for name in "${names[@]}"; do
  if [[ -f "$work/$name.rc" ]]; then read -r rc secs < "$work/$name.rc"; else rc=1; secs='?'; fi
  case $rc in
    0) verdict=PASS ;;
    77) verdict=SKIP; skipped+=("$name") ;;
    *) verdict=FAIL; failed+=("$name") ;;
  esac
  if [[ $verdict != PASS || "${OUR_MKFS_LINUX_VERBOSE:-0}" == 1 ]]; then
    echo "----------------------------------------------------------------- $name"
    cat "$work/$name.log" 2>/dev/null || echo "(no log)"
  fi
  summary+=("$(printf '%-4s %-20s %5s s' "$verdict" "$name" "$secs")")
done

echo "================================================================ summary"
printf '%s\n' "${summary[@]}"
echo "total $((SECONDS - t_all)) s"
if [[ ${#failed[@]} -gt 0 ]]; then echo "our_mkfs_linux.sh: FAIL: ${failed[*]}"; exit 1; fi
if [[ ${#skipped[@]} -gt 0 ]]; then echo "our_mkfs_linux.sh: SKIP: ${skipped[*]}"; exit 77; fi
echo "our_mkfs_linux.sh: PASS: all ${#names[@]} images"
