#!/usr/bin/env bash
# encrypt_linux.sh TEST_BINARY: fscrypt v2 directories our writer made with
# the oracle's test key, read and changed by Linux, then read and changed by
# us again (one boot).
#
#   1. TEST_BINARY (f2fscore_writer_encrypt_interop_tests) runs
#      WriterEncryptOracle.DISABLED_WriteImage: /e with our v2 policy
#      (AES-256-XTS, AES-256-CTS, padding 32), files of 0 to 70,000 bytes, a
#      subdirectory past the inline dentries, a 200-byte name, a hard link,
#      symlinks inline and in a block; both checkers clean.
#   2. Linux 6.1 mounts it, adds the key (gtool encrypt-dir on an empty
#      directory), and prints the manifest of /e (type, size, sha256 of
#      every file, link targets): it must equal ours byte for byte. Linux
#      then writes a file, a directory, a symlink, appends, removes and
#      renames, and prints the manifest again. fsck.f2fs -f clean after.
#   3. TEST_BINARY runs WriterEncryptOracle.DISABLED_AfterLinux: our writer
#      with the key sees Linux's manifest, writes more, and reads it back
#      after a remount; both checkers clean.
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: encrypt_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup encrypt_linux.sh --fsck

if "$bin" --gtest_filter='FscryptLinux.KeyIdentifierIsTheOneLinuxStored' 2>&1 | grep -q 'SKIPPED'; then
  oracle_skip "the test binary has no fscrypt keys (built without OpenSSL)"
fi
oracle_workdir
img="$work/encrypt.img"
mkdir -p "$work/in" "$work/out"
WRITER_IMAGE="$img" "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterEncryptOracle.DISABLED_WriteImage" \
  > "$work/gen.log" 2>&1 || { tail -60 "$work/gen.log"; echo "encrypt_linux.sh: FAIL: WriteImage"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "encrypt_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
cp "$img.expect" "$work/in/expect"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -iE 'f2fs|fscrypt' | tail -20; exit 1; }
manifest() {
  find /mnt/e -mindepth 1 | while read -r p; do
    r="/e${p#/mnt/e}"
    if [ -L "$p" ]; then echo "L $r $(readlink "$p")"
    elif [ -d "$p" ]; then echo "D $r"
    else echo "F $r $(stat -c %s "$p") $(sha256sum "$p" | cut -d' ' -f1)"; fi
  done | LC_ALL=C sort
}
mount -t f2fs /dev/vda /mnt || fail "mount"
mkdir /mnt/k && gtool encrypt-dir /mnt/k || fail "adding the test key"
manifest > /tmp/m1
if ! cmp -s /tmp/m1 /in/expect; then diff /in/expect /tmp/m1 | head -20; fail "Linux reads /e otherwise than we wrote it"; fi
echo "GUEST OK: Linux reads our encrypted files, names and links ($(wc -l < /tmp/m1) entries)"
gtool pwrite /mnt/e/linux-file 0 12345 3 || fail "pwrite"
mkdir /mnt/e/linux-dir || fail "mkdir"
echo x > /mnt/e/linux-dir/x || fail "write x"
ln -s linux-file /mnt/e/linux-link || fail "symlink"
echo more >> /mnt/e/f4096 || fail "append"
rm /mnt/e/f0 || fail "rm"
mv /mnt/e/renamed /mnt/e/sub/renamed-by-linux || fail "mv"
manifest > /out/linux.manifest
umount /mnt || fail "umount"
if dmesg | grep -iE 'f2fs|fscrypt' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: Linux changed /e"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-300}" --in "$work/in" --out "$work/out" --dmesg "$work/guest.sh" "$img" > "$work/guest.log" 2>&1
orc=$?
set -e
grep -E 'GUEST|^[<>+-]' "$work/guest.log" || true
[[ $orc -eq 0 ]] || { tail -30 "$work/guest.log"; echo "encrypt_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "encrypt_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
WRITER_IMAGE="$img" WRITER_LINUX_MANIFEST="$work/out/linux.manifest" "$bin" --gtest_also_run_disabled_tests \
  --gtest_filter="WriterEncryptOracle.DISABLED_AfterLinux" > "$work/after.log" 2>&1 ||
  { tail -60 "$work/after.log"; echo "encrypt_linux.sh: FAIL: AfterLinux"; exit 1; }
echo "encrypt_linux.sh: PASS: Linux read our encrypted tree, changed it, and we read and wrote it again"
