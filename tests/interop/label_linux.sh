#!/usr/bin/env bash
# f2fscore-label and f2fscore-tune against Linux, in one guest:
#  /dev/vda: made by f2fscore-mkfs with sb_checksum and relabelled by
#   f2fscore-label: the kernel mounts it (the recomputed superblock crc passes
#   sanity_check_raw_super()), and busybox's findfs (volume_id, which reads
#   the F2FS volume_name) finds it under the new label, not the old one.
#  /dev/vdb: made by f2fscore-mkfs with no features, then f2fscore-tune -O
#   encrypt,verity,sb_checksum -C utf8 -U UUID: the kernel lists the four
#   features in sysfs and uses each (a casefolded directory found by another
#   case, an fscrypt v2 directory, an fs-verity file), findfs finds it by the
#   new uuid; after unmount fsck.f2fs -f and our fsck call it clean.
# Tools from the environment: F2FSCORE_MKFS, F2FSCORE_LABEL, F2FSCORE_TUNE,
# F2FSCORE_FSCK (the last two optional: without them only vda). Skips (77)
# without ../shared/oracle/linux-f2fs, fails instead under
# F2FSCORE_REQUIRE_ORACLE=1.
set -uo pipefail
name=label_linux.sh
repo_root=$(cd "$(dirname "$0")/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
MKFS=${F2FSCORE_MKFS:?} LABEL=${F2FSCORE_LABEL:?} TUNE=${F2FSCORE_TUNE:-} FSCK=${F2FSCORE_FSCK:-}
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
disks=("$T/vol.img")
uuid=5e1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b
if [[ -n "$TUNE" ]]; then
  truncate -s 128M "$T/tuned.img"
  "$MKFS" -q "$T/tuned.img" || { echo "$name: FAIL: mkfs (tuned)"; exit 1; }
  "$TUNE" -O encrypt,verity,sb_checksum -C utf8 -U "$uuid" "$T/tuned.img" ||
    { echo "$name: FAIL: f2fscore-tune exited $?"; exit 1; }
  disks+=("$T/tuned.img")
fi
cat > "$T/guest.sh" <<'GUEST'
found=$(busybox findfs "LABEL=new name 2") || { echo "FAIL: findfs finds no volume labelled 'new name 2'"; exit 1; }
[ "$found" = /dev/vda ] || { echo "FAIL: findfs LABEL='new name 2' gives '$found'"; exit 1; }
if busybox findfs LABEL=old-name >/dev/null 2>&1; then echo "FAIL: the old label is still found"; exit 1; fi
mount -t f2fs /dev/vda /mnt || { echo "FAIL: Linux does not mount the relabelled volume"; exit 1; }
echo data > /mnt/f && sync && umount /mnt || { echo "FAIL: write or unmount"; exit 1; }
echo "guest: findfs finds /dev/vda by the new label; mounted, written, unmounted"
[ -b /dev/vdb ] || exit 0
found=$(busybox findfs "UUID=$TUNED_UUID") || { echo "FAIL: findfs finds no volume with uuid $TUNED_UUID"; exit 1; }
[ "$found" = /dev/vdb ] || { echo "FAIL: findfs UUID=$TUNED_UUID gives '$found'"; exit 1; }
mount -t f2fs /dev/vdb /mnt2 || { echo "FAIL: Linux does not mount the tuned volume"; exit 1; }
feats=$(cat /sys/fs/f2fs/vdb/features)
for f in encryption verity casefold sb_checksum; do
  case ",$(echo "$feats" | tr -d ' ')," in *,$f,*) ;; *) echo "FAIL: sysfs features lack $f: $feats"; exit 1 ;; esac
done
mkdir /mnt2/cf && gtool set-flags /mnt2/cf 0x40000000 || { echo "FAIL: casefold flag on a directory"; exit 1; }
echo x > /mnt2/cf/MixedCase && [ -f /mnt2/cf/mixedcase ] || { echo "FAIL: casefolded lookup"; exit 1; }
mkdir /mnt2/enc && gtool encrypt-dir /mnt2/enc && echo secret > /mnt2/enc/f &&
  [ "$(cat /mnt2/enc/f)" = secret ] || { echo "FAIL: fscrypt directory"; exit 1; }
gtool pwrite /mnt2/v 0 20000 7 && gtool verity /mnt2/v && gtool pattern 0 20000 7 | cmp - /mnt2/v ||
  { echo "FAIL: fs-verity file"; exit 1; }
umount /mnt2 || { echo "FAIL: unmount of the tuned volume"; exit 1; }
echo "guest: the tuned volume: features in sysfs, casefold, fscrypt and fs-verity used, found by uuid"
GUEST
sed -i "1i TUNED_UUID=$uuid" "$T/guest.sh"
out=$("$oracle" --dmesg "$T/guest.sh" "${disks[@]}" 2>&1)
rc=$?
echo "$out"
if [[ $rc != 0 ]]; then echo "$name: FAIL: guest exited $rc"; exit 1; fi
# What Linux wrote kept the label.
got=$("$LABEL" "$T/vol.img")
[[ "$got" == "new name 2" ]] || { echo "$name: FAIL: after Linux's mount the label reads '$got'"; exit 1; }
if [[ -n "$TUNE" ]]; then
  if [[ -n "$FSCK" ]]; then
    "$FSCK" -f -n "$T/tuned.img" >"$T/ours.log" 2>&1 || { cat "$T/ours.log"; echo "$name: FAIL: our fsck after Linux"; exit 1; }
  fi
  "$repo_root/tests/interop/fsck_clean.sh" "$T/tuned.img"; rc=$?
  [[ $rc == 0 || $rc == 77 ]] || { echo "$name: FAIL: fsck.f2fs -f after Linux used the tuned volume"; exit 1; }
fi
echo "$name: PASS"
