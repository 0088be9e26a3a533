#!/usr/bin/env bash
# quota_linux.sh TEST_BINARY: Linux keeps the quota usage our writer wrote;
# we keep the usage Linux wrote.
#
#   1. TEST_BINARY (f2fscore_writer_quota_interop_tests) runs
#      WriterQuotaOracle.DISABLED_WriteImage: our mkfs with quota and
#      project_quota, files of users 1000-1002 (data past the inode's slots,
#      an xattr node), project 77 with PROJINHERIT on /p; both checkers clean.
#   2. Linux 6.1 mounts it with usrquota,grpquota,prjquota: the owners and
#      i_blocks (stat %b, 512-byte units: the space its dquots charge) are
#      the hand-computed ones; then, as root, it chowns /u/a to 3000:3000,
#      writes /linux1 (3 blocks) and chowns it to 3001:3002, makes /p/ldir
#      and /p/ldir/f (2 blocks), removes /u/b, unmounts (its dquot code
#      writes the usage it kept, starting from ours); no kernel complaint.
#   3. fsck.f2fs -f on Linux's image is clean: it recounts the usage and
#      compares it with the quota files Linux left.
#   4. WriterQuotaOracle.DISABLED_AfterLinux: our writer reads the usage
#      Linux wrote (hand counts), project 77 inherited by Linux's new
#      inodes, changes owners and projects, writes and removes files; both
#      checkers clean.
#   5. Linux mounts the result again, reads the owners we set, enforces the
#      hard limit we set for user 1000 (a write as that user through
#      busybox su stops with EDQUOT), writes under /p/ldir, unmounts;
#      fsck.f2fs -f clean (Linux kept the usage we wrote).
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: quota_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup quota_linux.sh --fsck

oracle_workdir
img="$work/q.img"
QUOTA_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=WriterQuotaOracle.DISABLED_WriteImage \
  > "$work/gen.log" 2>&1 || { cat "$work/gen.log"; echo "quota_linux.sh: FAIL: could not write the image"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "quota_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -iE 'f2fs|quota' | tail -20; exit 1; }
mount -t f2fs -o usrquota,grpquota,prjquota /dev/vda /mnt || fail "mount"
want() { got=$(stat -c '%u:%g %s %b' "$1") || fail "stat $1"; [ "$got" = "$2" ] || fail "$1: '$got', want '$2'"; }
want /mnt/u/a "1000:100 20480 40"
want /mnt/u/b "1000:101 4198400 24"
want /mnt/p/c "1001:100 8192 16"
want /mnt/x "1002:101 0 8"
[ "$(tr -d a < /mnt/u/a | wc -c)" = 0 ] || fail "/u/a content"
chown 3000:3000 /mnt/u/a || fail "chown"
dd if=/dev/zero of=/mnt/linux1 bs=4096 count=3 2>/dev/null || fail "write linux1"
chown 3001:3002 /mnt/linux1 || fail "chown linux1"
mkdir /mnt/p/ldir || fail "mkdir"
dd if=/dev/zero of=/mnt/p/ldir/f bs=4096 count=2 2>/dev/null || fail "write f"
rm /mnt/u/b || fail "rm"
sync
umount /mnt || fail "umount"
if dmesg | grep -iE 'f2fs|quota' | grep -iE 'error|corrupt|inconsistent|fsck|fail'; then fail "kernel complained"; fi
echo "GUEST OK: our owners and i_blocks as counted; Linux changed owners and files"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" "$work/guest.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "quota_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "quota_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
QUOTA_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter=WriterQuotaOracle.DISABLED_AfterLinux \
  > "$work/back.log" 2>&1 || { cat "$work/back.log"; echo "quota_linux.sh: FAIL: our writer on Linux's image"; exit 1; }

cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -iE 'f2fs|quota' | tail -20; exit 1; }
mount -t f2fs -o usrquota,grpquota,prjquota /dev/vda /mnt || fail "mount"
want() { got=$(stat -c '%u:%g %s %b' "$1") || fail "stat $1"; [ "$got" = "$2" ] || fail "$1: '$got', want '$2'"; }
want /mnt/u/a "1000:100 20480 40"
want /mnt/after "3001:3002 8192 16"
want /mnt/p/ldir/ours "0:0 4096 8"
[ ! -e /mnt/linux1 ] || fail "/linux1 is back"
# The hard limit of 7 blocks we set for user 1000: a write of 4 more blocks
# as that user (busybox su, no CAP_SYS_RESOURCE) stops after 2 with EDQUOT
# (root would ignore the limit).
mkdir -p /etc && echo 'u1000:x:1000:100::/tmp:/bin/sh' >> /etc/passwd && echo 'g100:x:100:' >> /etc/group
if su -s /bin/sh u1000 -c true 2>/dev/null; then
  su -s /bin/sh u1000 -c 'dd if=/dev/zero of=/mnt/u/a bs=4096 count=4 seek=5 conv=notrunc' 2>/tmp/dd.err &&
    fail "user 1000 wrote past its hard limit"
  grep -qi quota /tmp/dd.err || { cat /tmp/dd.err; fail "the write failed, but not with EDQUOT"; }
  want /mnt/u/a "1000:100 28672 56"
  echo "GUEST: Linux enforces the limit we set: $(head -1 /tmp/dd.err)"
else
  fail "su as user 1000 does not work in the guest"
fi
dd if=/dev/zero of=/mnt/p/ldir/linux2 bs=4096 count=1 2>/dev/null || fail "write linux2"
umount /mnt || fail "umount"
if dmesg | grep -iE 'f2fs|quota' | grep -iE 'error|corrupt|inconsistent|fsck|fail'; then fail "kernel complained"; fi
echo "GUEST OK: Linux reads our owners and keeps our usage"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" "$work/guest2.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "quota_linux.sh: FAIL: Linux on our second image (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "quota_linux.sh: FAIL: fsck.f2fs after Linux's second mount"; exit 1; }
echo "quota_linux.sh: PASS"
