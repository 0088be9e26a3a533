#!/usr/bin/env bash
# mkfs_matrix.sh: Linux read/write + fsck on images made by mkfs.f2fs (f2fs-tools).
#
# For each feature set below: mkfs.f2fs a fresh 256 MiB sparse image, check
# that the fresh image is clean (fsck_clean.sh), then run linux_rw.sh on it
# with the mount options that feature set wants under Linux 6.1.
# It checks the test harness and the Linux oracle against the reference
# mkfs, the baseline our own mkfs and engine are compared with.
#
# usage: mkfs_matrix.sh [WORKDIR]   (WORKDIR default: a temporary directory,
#                                    removed afterwards; images are kept
#                                    when WORKDIR is given)
# Exit: 0 all passed; 1 a failure; 77 skipped (no oracle or no mkfs.f2fs),
# unless F2FSCORE_REQUIRE_ORACLE=1 / F2FSCORE_REQUIRE_FSCK=1 (then 1).
# Takes about 1 minute (5 guest boots of ~11 s).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkfs="${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}"

if [[ ! -x "$mkfs" ]]; then
  if [[ "${F2FSCORE_REQUIRE_FSCK:-0}" == 1 ]]; then echo "mkfs_matrix.sh: FAIL: $mkfs not found" >&2; exit 1; fi
  echo "mkfs_matrix.sh: SKIP: $mkfs not found (install f2fs-tools)" >&2; exit 77
fi

if [[ $# -ge 1 ]]; then work="$1"; mkdir -p "$work"
else work=$(mktemp -d "${TMPDIR:-/tmp}/mkfs_matrix.XXXXXX"); trap 'rm -rf "$work"' EXIT; fi

# name | mkfs.f2fs options | mount options
matrix=(
  "default||"
  "compression|-O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,compression|compress_algorithm=lz4"
  "quota|-O extra_attr,quota,project_quota|usrquota,grpquota,prjquota"
  "verity_encrypt|-O verity,encrypt|"
  "casefold|-O casefold -C utf8|"
)

failed=() skipped=()
for row in "${matrix[@]}"; do
  IFS='|' read -r name mkopts mntopts <<<"$row"
  img="$work/$name.img"
  echo "=== $name: mkfs.f2fs $mkopts; mount -o ${mntopts:-(defaults)}"
  rm -f "$img"; truncate -s 256M "$img"
  # shellcheck disable=SC2086  # mkopts is a word list on purpose
  if ! "$mkfs" -f $mkopts "$img" >"$work/$name.mkfs.log" 2>&1; then
    echo "mkfs_matrix.sh: FAIL: mkfs.f2fs $mkopts"; cat "$work/$name.mkfs.log"; failed+=("$name"); continue
  fi
  set +e
  "$here/fsck_clean.sh" "$img"; rc=$?
  if [[ $rc -eq 0 ]]; then "$here/linux_rw.sh" "$img" "$mntopts"; rc=$?; fi
  set -e
  case $rc in
    0) ;;
    77) skipped+=("$name") ;;
    *) failed+=("$name") ;;
  esac
done

if [[ ${#failed[@]} -gt 0 ]]; then echo "mkfs_matrix.sh: FAIL: ${failed[*]}"; exit 1; fi
if [[ ${#skipped[@]} -gt 0 ]]; then echo "mkfs_matrix.sh: SKIP: ${skipped[*]}"; exit 77; fi
echo "mkfs_matrix.sh: PASS: all ${#matrix[@]} feature sets"
