#!/usr/bin/env bash
# writer_casefold_linux.sh TEST_BINARY: casefolded directories our writer
# made, read and changed by Linux, then changed by our writer again.
#
#   1. TEST_BINARY (f2fscore_writer_casefold_interop_tests) runs
#      WriterCasefoldOracle.DISABLED_WriteImage: a casefold volume (our mkfs,
#      -O casefold -C utf8) where the writer sets +F on /cf and fills it (mixed
#      case, ß, KELVIN SIGN, É, an invalid UTF-8 name, 300 entries, a
#      subdirectory with a 100 KiB file); the image, its manifest and the
#      lookups by other cases Linux must answer (path, inode, casefold flag).
#   2. fsck.f2fs -f on a copy is clean.
#   3. Linux 6.1 mounts it: its manifest (every file's sha256, modes, sizes,
#      links) equals ours; `stat` by the other cases finds our inodes; the
#      casefold flag (FS_IOC_GETFLAGS) is where we set it; a case variant of
#      an entry cannot be made (mkdir: EEXIST). Then Linux creates, renames
#      by another case, removes by another case, makes a directory (its own
#      inheritance of +F) and 100 entries; its manifest goes back.
#   4. fsck.f2fs -f is clean; WriterCasefoldOracle.DISABLED_AfterLinux: our
#      reader's manifest equals Linux's, Linux's entries are found by other
#      cases and carry the hashes of their folded names, its new directory is
#      casefolded and its new file not; our writer then creates, renames,
#      exchanges and unlinks by other cases; both checkers clean.
#   5. Linux mounts the result: manifest and lookups by other cases as ours.
#   6. A strict-mode volume (-C utf8:strict) our writer made: Linux refuses
#      in a casefolded directory the invalid UTF-8 name ours refused (EINVAL),
#      takes it elsewhere, finds our names by other cases; fsck.f2fs clean.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: writer_casefold_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup writer_casefold_linux.sh --fsck

oracle_workdir
img="$work/cf.img"
run_test() {  # NAME LOG
  "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterCasefoldOracle.DISABLED_$1" > "$work/$2" 2>&1 || {
    tail -60 "$work/$2"; echo "writer_casefold_linux.sh: FAIL: WriterCasefoldOracle.DISABLED_$1"; exit 1; }
  if grep -q '\[  SKIPPED \]' "$work/$2"; then
    oracle_skip "WriterCasefoldOracle.DISABLED_$1 skipped (a build without casefolding)"
  fi
}
WRITER_IMAGE="$img" run_test WriteImage gen.log
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_casefold_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
mkdir -p "$work/in" "$work/out"
cp "$img.manifest" "$work/in/expect.manifest"
cp "$img.lookups" "$work/in/expect.lookups"

# The manifest, as writer_model_linux.sh makes it (writer_test_util.hpp's manifest()).
cat > "$work/in/manifest.sh" <<'MANIFEST'
#!/bin/sh
cd "$1" || exit 1
find . | grep -vE '^\./lost\+found(/|$)' | sed -e 's/^\.//' | grep -v '^$' | while IFS= read -r p; do
  f="$1$p"
  st=$(stat -c '%f|%u|%g|%s|%h|%Y' "$f")
  if [ -L "$f" ]; then c="->$(readlink "$f")"
  elif [ -f "$f" ]; then c=$(sha256sum "$f" | cut -d' ' -f1)
  elif [ -c "$f" ] || [ -b "$f" ]; then c=$(stat -c '%t,%T' "$f")
  else c=-; fi
  x=$(gtool listxattr "$f" | sort | while IFS= read -r n; do printf '%s=%s\n' "$n" "$(gtool getxattr "$f" "$n")"; done | tr '\n' ',' | sed -e 's/,$//')
  printf '%s|%s|%s|%s\n' "$p" "$st" "$c" "$x"
done | sort
MANIFEST
# The lookups: "PATH<TAB>ino<TAB>casefold bit" answered by stat and FS_IOC_GETFLAGS.
cat > "$work/in/lookups.sh" <<'LOOKUPS'
#!/bin/sh
# lookups.sh MOUNTPOINT FILE: every line's path, looked up by Linux, is that inode with that flag.
bad=0
tab=$(printf '\t')
while IFS="$tab" read -r p ino cf; do
  got=$(stat -c %i "$1$p" 2>&1) || { echo "lookup of '$p' failed: $got"; bad=1; continue; }
  [ "$got" = "$ino" ] || { echo "lookup of '$p': inode $got, ours $ino"; bad=1; }
  fl=$(gtool ioctl-flags "$1$p") || { echo "flags of '$p' failed"; bad=1; continue; }
  bit=$(( (fl >> 30) & 1 ))
  [ "$bit" = "$cf" ] || { echo "casefold flag of '$p': $bit, ours $cf ($fl)"; bad=1; }
done < "$2"
exit $bad
LOOKUPS

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
sh /in/manifest.sh /mnt > /tmp/got.manifest || fail "manifest"
cmp /in/expect.manifest /tmp/got.manifest || { diff /in/expect.manifest /tmp/got.manifest | head -20; fail "Linux's manifest differs from ours"; }
sh /in/lookups.sh /mnt /in/expect.lookups || fail "lookups by other cases"
mkdir "/mnt/cf/MIXED CASE.TXT" 2>/dev/null && fail "Linux made a case variant of 'Mixed Case.TXT'"
mkdir "/mnt/cf/entry-7-x" 2>/dev/null && fail "Linux made a case variant of 'Entry-7-X'"
# Linux changes the casefolded directory.
printf 'linux wrote this\n' > /mnt/cf/Linux-New.txt || fail "create"
mv /mnt/cf/STRASSE.TXT /mnt/cf/Renamed-By-Linux.txt || fail "rename by another case"
rm "/mnt/cf/CAF$(printf '\303\251')" || fail "unlink by another case"
mkdir /mnt/cf/LinuxDir || fail "mkdir"
printf 'x\n' > /mnt/cf/linuxdir/Inner || fail "create in Linux's directory by another case"
mv /mnt/cf/entry-5-x /mnt/cf/ENTRY-5-MOVED || fail "rename to a new name"
i=0
while [ $i -lt 100 ]; do printf '%s\n' $i > /mnt/cf/Linux-$i || fail "Linux-$i"; i=$((i + 1)); done
printf 'sz\n' > "/mnt/cf/Linux-Stra$(printf '\303\237')e-42" || fail "Straße"
[ "$(cat /mnt/cf/LINUX-STRASSE-42)" = sz ] || fail "lookup of Linux's Straße by another case"
sync
sh /in/manifest.sh /mnt > /out/linux.manifest || fail "manifest after"
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /tmp/got.manifest) paths equal, $(wc -l < /in/expect.lookups) lookups by other cases as ours"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" --out "$work/out" "$work/guest.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_casefold_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
[[ -s "$work/out/linux.manifest" ]] || { echo "writer_casefold_linux.sh: FAIL: Linux's manifest did not come back"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_casefold_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
WRITER_IMAGE="$img" WRITER_LINUX_MANIFEST="$work/out/linux.manifest" run_test AfterLinux back.log

cp "$img.final.manifest" "$work/in/expect.manifest"
cp "$img.final.lookups" "$work/in/expect.lookups"
cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
sh /in/manifest.sh /mnt > /tmp/got.manifest || fail "manifest"
cmp /in/expect.manifest /tmp/got.manifest || { diff /in/expect.manifest /tmp/got.manifest | head -20; fail "Linux's manifest differs from ours"; }
sh /in/lookups.sh /mnt /in/expect.lookups || fail "lookups by other cases"
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: Linux reads our writer's changes: $(wc -l < /tmp/got.manifest) paths equal"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" "$work/guest2.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_casefold_linux.sh: FAIL: Linux on our second image (status $orc)"; exit 1; }

# 6. Strict mode: Linux refuses in /cf the invalid name our writer refused
#    (EINVAL), takes it in /plain, and finds our names by other cases.
simg="$work/strict.img"
WRITER_IMAGE="$simg" run_test WriteStrictImage strict.log
cat > "$work/guest3.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
bad="linux$(printf '\377')"
err=$(touch "/mnt/cf/$bad" 2>&1) && fail "Linux made an invalid UTF-8 name in a casefolded directory of a strict volume"
echo "$err" | grep -q 'Invalid argument' || fail "refused with '$err', not EINVAL"
touch "/mnt/plain/$bad" || fail "invalid UTF-8 name in a directory without +F"
[ -f "/mnt/plain/ours$(printf '\377')" ] || fail "our invalid name in /plain"
[ "$(cat /mnt/cf/VALID-NAME)" = strict ] || fail "lookup by another case"
[ -f /mnt/cf/STRASSE ] || fail "lookup of Straße as STRASSE"
umount /mnt || fail "umount"
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: strict mode refuses what ours refuses (EINVAL)"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" "$work/guest3.sh" "$simg"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_casefold_linux.sh: FAIL: Linux on the strict image (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$simg" || { echo "writer_casefold_linux.sh: FAIL: fsck.f2fs after Linux on the strict image"; exit 1; }
echo "writer_casefold_linux.sh: PASS"
