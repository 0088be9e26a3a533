#!/usr/bin/env bash
# ipu_linux.sh TEST_BINARY [basic|fsync]: the IPU scenarios run in Linux 6.1
# and in our writer from the same image; for every step the choice (same
# block address after the rewrite, or a new one) must agree, and match the
# kernel's rule (the plan's last column).
#
#   1. mkfs.f2fs (256 MiB; Linux picks ipu_policy 0x81 on it), Linux writes
#      /f (3072 blocks, 12 MiB: utilization about 6%) and unmounts: the base.
#   2. Linux, on a copy, runs the plan: per step it sets
#      /sys/fs/f2fs/vda/{ipu_policy,min_ipu_util,min_ssr_sections},
#      overwrites blocks of /f (each step its own blocks) and runs sync,
#      fsync or fdatasync; it also reports the default ipu_policy.
#   3. Block addresses come from the images before and after (TEST_BINARY's
#      WriterIpuOracle.DISABLED_Bmap, a read-only mount of ours).
#   4. Our writer runs the same plan on another copy (DISABLED_Run).
# Sets: basic = FORCE, no bit, UTIL (min_ipu_util 0 and 100), SSR and
# SSR_UTIL (min_ssr_sections 100000 and 0), FSYNC with sync(); fsync = the
# FSYNC bit under fsync/fdatasync (needs our page cache and fsync path).
# Exit: 0 agreed; 1 disagreed or failed; 2 usage; 77 skipped (no oracle or
# mkfs.f2fs, or our side lacks what the set needs), 1 instead with
# F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -ge 1 && -x "$1" ]] || { echo "usage: ipu_linux.sh TEST_BINARY [basic|fsync]" >&2; exit 2; }
bin="$1"
set_name="${2:-basic}"
mkfs="${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup ipu_linux.sh
[[ -x "$mkfs" ]] || oracle_skip "$mkfs not found"

oracle_workdir

# name policy min_ipu_util min_ssr_sections step index nblocks expect
case "$set_name" in
  basic) cat > "$work/plan" <<'PLAN'
force      0x01 70  0      sync      100 1 same
none       0x00 70  0      sync      110 1 new
util0      0x04 0   0      sync      120 1 same
util100    0x04 100 0      sync      130 1 new
ssr_on     0x02 70  100000 sync      140 1 same
ssr_off    0x02 70  0      sync      150 1 new
ssrutil_on 0x08 0   100000 sync      160 1 same
ssrutil_u  0x08 100 100000 sync      170 1 new
ssrutil_s  0x08 0   0      sync      180 1 new
fsync_sync 0x10 70  0      sync      190 1 new
PLAN
  ;;
  fsync) cat > "$work/plan" <<'PLAN'
fsync_1        0x10 70 0 fsync     200 1 same
fsync_9        0x10 70 0 fsync     220 9 new
fdatasync_9    0x10 70 0 fdatasync 240 9 same
fdatasync_none 0x00 70 0 fdatasync 260 1 new
fdatasync_su   0x08 70 0 fdatasync 270 1 new
PLAN
  ;;
  *) echo "ipu_linux.sh: unknown set $set_name" >&2; exit 2 ;;
esac

base="$work/base.img"
truncate -s 256M "$base"
"$mkfs" -q -f "$base" > /dev/null
cat > "$work/prep.sh" <<'GUEST'
#!/bin/sh
mount -t f2fs -o background_gc=off /dev/vda /mnt || exit 1
echo "default_ipu_policy=$(cat /sys/fs/f2fs/vda/ipu_policy)"
gtool pwrite /mnt/f 0 12582912 1 || exit 1
sync
umount /mnt || exit 1
GUEST
"$oracle" "$work/prep.sh" "$base" > "$work/prep.out" 2>&1 || { cat "$work/prep.out"; echo "ipu_linux.sh: FAIL: Linux could not write the base image"; exit 1; }
grep -q '^default_ipu_policy=129$' "$work/prep.out" || {
  cat "$work/prep.out"; echo "ipu_linux.sh: FAIL: Linux's default ipu_policy on 256 MiB is not 0x81 (129)"; exit 1; }

cp --sparse=always "$base" "$work/linux.img"
cp --sparse=always "$base" "$work/ours.img"
mkdir -p "$work/in"
cp "$work/plan" "$work/in/plan"
cat > "$work/run.sh" <<'GUEST'
#!/bin/sh
mount -t f2fs -o background_gc=off /dev/vda /mnt || exit 1
d=/sys/fs/f2fs/vda
while read -r name policy util ssr step index n expect; do
  [ -n "$name" ] || continue
  echo "$policy" > $d/ipu_policy || exit 1
  echo "$util" > $d/min_ipu_util || exit 1
  echo "$ssr" > $d/min_ssr_sections || exit 1
  gtool pwrite /mnt/f $((index * 4096)) $((n * 4096)) 99 || exit 1
  case "$step" in
    sync) sync ;;
    *) gtool "$step" /mnt/f || exit 1 ;;
  esac
  echo "step $name done (ipu_policy=$(cat $d/ipu_policy))"
done < /in/plan
umount /mnt || exit 1
GUEST
"$oracle" --in "$work/in" "$work/run.sh" "$work/linux.img" > "$work/run.out" 2>&1 || {
  cat "$work/run.out"; echo "ipu_linux.sh: FAIL: Linux could not run the plan"; exit 1; }

indices=$(awk '{print $6}' "$work/plan" | tr '\n' ' ')
bmap() {  # image out
  IPU_IMAGE="$1" IPU_FILE=/f IPU_INDICES="$indices" IPU_OUT="$2" \
    "$bin" --gtest_also_run_disabled_tests --gtest_filter=WriterIpuOracle.DISABLED_Bmap > "$2.log" 2>&1 || {
    cat "$2.log"; echo "ipu_linux.sh: FAIL: reading block addresses of $1"; exit 1; }
}
bmap "$base" "$work/before"
bmap "$work/linux.img" "$work/after"
IPU_IMAGE="$work/ours.img" IPU_FILE=/f IPU_PLAN="$work/plan" IPU_OUT="$work/ours" \
  "$bin" --gtest_also_run_disabled_tests --gtest_filter=WriterIpuOracle.DISABLED_Run > "$work/ours.log" 2>&1 || {
  cat "$work/ours.log"; echo "ipu_linux.sh: FAIL: our writer could not run the plan"; exit 1; }

fail=0 skipped=0
printf '%-15s %-6s %-8s %-8s %-6s %-6s\n' step policy expect linux ours result
while read -r name policy util ssr step index n expect; do
  b=$(awk -v i="$index" '$1==i {print $2}' "$work/before")
  a=$(awk -v i="$index" '$1==i {print $2}' "$work/after")
  lin=new; [[ "$a" == "$b" ]] && lin=same
  o=$(awk -v s="$name" '$1==s' "$work/ours")
  if [[ "$o" == "$name skip" ]]; then ours=skip
  else read -r _ ob oa <<< "$o"; ours=new; [[ "$ob" == "$oa" ]] && ours=same; fi
  res=ok
  if [[ "$ours" == skip ]]; then res=SKIP; skipped=1
  elif [[ "$lin" != "$ours" || "$lin" != "$expect" ]]; then res=DIFFER; fail=1; fi
  printf '%-15s %-6s %-8s %-8s %-6s %-6s\n' "$name" "$policy" "$expect" "$lin($b->$a)" "$ours" "$res"
done < "$work/plan"
if [[ $fail -ne 0 ]]; then echo "ipu_linux.sh: FAIL: the choices differ"; cat "$work/run.out"; exit 1; fi
if [[ $skipped -ne 0 ]]; then oracle_skip "our writer lacks the page cache or fsync path for the $set_name set (Linux's choices above)"; fi
echo "ipu_linux.sh: PASS ($set_name): Linux and our writer agree on every step"
