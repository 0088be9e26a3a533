#!/usr/bin/env bash
# f2fscore-label against Linux: a volume made by f2fscore-mkfs with
# sb_checksum and relabelled by f2fscore-label is mounted by the kernel (the
# recomputed superblock crc passes sanity_check_raw_super()), and busybox's
# findfs (volume_id, which reads the F2FS volume_name) finds it under the
# new label and not under the old one.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_LABEL. Skips (77)
# without ../shared/oracle/linux-f2fs, fails instead under
# F2FSCORE_REQUIRE_ORACLE=1.
set -uo pipefail
name=label_linux.sh
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
MKFS=${F2FSCORE_MKFS:?} LABEL=${F2FSCORE_LABEL:?}
if [[ ! -x "$oracle" ]]; then
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    echo "$name: FAIL: Linux oracle not found at $oracle and F2FSCORE_REQUIRE_ORACLE=1" >&2; exit 1
  fi
  echo "$name: SKIP: Linux oracle not found at $oracle" >&2; exit 77
fi
T=$(mktemp -d /tmp/f2fscore-label-linux.XXXXXX)
trap 'rm -rf "$T"' EXIT
truncate -s 128M "$T/vol.img"
"$MKFS" -q -O sb_checksum -l old-name "$T/vol.img" || { echo "$name: FAIL: mkfs"; exit 1; }
"$LABEL" "$T/vol.img" "new name 2" || { echo "$name: FAIL: f2fscore-label set exited $?"; exit 1; }
got=$("$LABEL" "$T/vol.img")
[[ "$got" == "new name 2" ]] || { echo "$name: FAIL: f2fscore-label reads back '$got'"; exit 1; }
cat > "$T/guest.sh" <<'GUEST'
found=$(busybox findfs "LABEL=new name 2") || { echo "FAIL: findfs finds no volume labelled 'new name 2'"; exit 1; }
[ "$found" = /dev/vda ] || { echo "FAIL: findfs LABEL='new name 2' gives '$found'"; exit 1; }
if busybox findfs LABEL=old-name >/dev/null 2>&1; then echo "FAIL: the old label is still found"; exit 1; fi
mount -t f2fs /dev/vda /mnt || { echo "FAIL: Linux does not mount the relabelled volume"; exit 1; }
echo data > /mnt/f && sync && umount /mnt || { echo "FAIL: write or unmount"; exit 1; }
echo "guest: findfs finds /dev/vda by the new label; mounted, written, unmounted"
GUEST
out=$("$oracle" --dmesg "$T/guest.sh" "$T/vol.img" 2>&1)
rc=$?
echo "$out"
if [[ $rc != 0 ]]; then echo "$name: FAIL: guest exited $rc"; exit 1; fi
# What Linux wrote kept the label.
got=$("$LABEL" "$T/vol.img")
[[ "$got" == "new name 2" ]] || { echo "$name: FAIL: after Linux's mount the label reads '$got'"; exit 1; }
echo "$name: PASS"
