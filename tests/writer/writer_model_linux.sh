#!/usr/bin/env bash
# writer_model_linux.sh TEST_BINARY: the model-based random test against
# Linux.
#
#   1. TEST_BINARY (f2fscore_writer_ns_interop_tests) runs
#      WriterModelOracle.DISABLED_WriteImage: three sessions of random
#      operations of every kind on our mkfs's image (checked against the model,
#      our checker and fsck.f2fs -f after each), then a few fixed entries;
#      writes the image and its manifest (path, st_mode, uid, gid, size, links,
#      mtime, sha256 of contents / symlink target / device numbers, xattrs).
#   2. Linux 6.1 mounts it and makes the same manifest with busybox and gtool:
#      it must equal ours. Then Linux changes the tree (a file written and
#      punched, fallocate, rename of a file and of a directory across
#      parents, a hard link, a symlink, an xattr, a device node, chmod,
#      utimes, unlink, an inline directory grown past its inline area) and
#      writes the manifest again.
#   3. fsck.f2fs -f is clean on Linux's image; WriterModelOracle.DISABLED_AfterLinux:
#      our reader's manifest equals Linux's, then the model is read from the
#      volume and two more sessions of random operations run on it (each
#      checked by our reader, our checker and fsck.f2fs -f).
#   4. Linux mounts the result: its manifest equals ours.
# In the boot of step 2 Linux also reads two more model runs' images (three
# sessions each, both checkers clean): the compression set's (zstd, clusters
# of 16 blocks; mounted with the same compress options), whose manifest,
# F2FS_COMPR_FL of every file and directory (FS_IOC_GETFLAGS) must equal the
# model's, and the verity set's, whose manifest (every verity file read
# whole: fs-verity checks each block against our tree), verity flags and
# FS_IOC_MEASURE_VERITY digests (verity_measure.c, built statically here;
# against verity_reference.hpp over the model's data) must too; fsck.f2fs
# -f is clean on both after.
# xattrs: user.* and trusted.* with printable values (gtool in the guest).
# Exit: 0 passed; 1 failed; 2 usage; 77 skipped (no oracle or fsck.f2fs),
# 1 instead with F2FSCORE_REQUIRE_ORACLE=1 (resp. F2FSCORE_REQUIRE_FSCK=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
[[ $# -eq 1 && -x "$1" ]] || { echo "usage: writer_model_linux.sh TEST_BINARY" >&2; exit 2; }
bin="$1"
source "$repo_root/tests/support/oracle_common.sh"
oracle_setup writer_model_linux.sh --fsck

oracle_workdir
img="$work/m.img"
run_test() {  # NAME LOG
  "$bin" --gtest_also_run_disabled_tests --gtest_filter="WriterModelOracle.DISABLED_$1" > "$work/$2" 2>&1 || {
    tail -60 "$work/$2"; echo "writer_model_linux.sh: FAIL: WriterModelOracle.DISABLED_$1"; exit 1; }
}
WRITER_IMAGE="$img" run_test WriteImage gen.log
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_model_linux.sh: FAIL: fsck.f2fs after our writer"; exit 1; }
mkdir -p "$work/in" "$work/out"
cp "$img.manifest" "$work/in/expect.manifest"
for set in c v; do
  [[ $set == c ]] && t=WriteCompressImage || t=WriteVerityImage
  WRITER_IMAGE="$work/$set.img" run_test "$t" "gen-$set.log"
  for x in manifest flags verity; do cp "$work/$set.img.$x" "$work/in/$set.$x"; done
done
if ! gcc -O2 -static -o "$work/in/verity_measure" "$here/verity_measure.c" 2>"$work/cc.log"; then
  [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]] && { echo "writer_model_linux.sh: FAIL: cannot build verity_measure.c statically"; exit 1; }
  echo "writer_model_linux.sh: note: no static verity_measure, digests not measured in Linux"
fi

# The manifest, as DISABLED_* make it from our reader (writer_test_util.hpp).
cat > "$work/in/manifest.sh" <<'MANIFEST'
#!/bin/sh
# manifest.sh MOUNTPOINT: one line per path, sorted.
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
chmod +x "$work/in/manifest.sh"

cat > "$work/guest.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
sh /in/manifest.sh /mnt > /tmp/before || fail "manifest"
if ! cmp -s /in/expect.manifest /tmp/before; then
  diff /in/expect.manifest /tmp/before | head -40; fail "Linux reads a tree different from the model's"
fi
echo "GUEST: $(wc -l < /tmp/before) paths read as the model says"
# The compression and verity sets' images: read, flags, digests.
feature_image() {  # DEV SET MOUNT-OPTIONS
  mount -t f2fs ${3:+-o "$3"} "$1" /mnt2 || fail "mount $2 image"
  sh /in/manifest.sh /mnt2 > /tmp/$2 || fail "manifest of the $2 image"
  if ! cmp -s /in/$2.manifest /tmp/$2; then
    diff /in/$2.manifest /tmp/$2 | head -40; fail "Linux reads the $2 image otherwise than the model"
  fi
  while read -r p c v; do
    f=$(gtool ioctl-flags "/mnt2$p") || fail "FS_IOC_GETFLAGS $p"
    [ "$(( (f >> 2) & 1 )) $(( (f >> 20) & 1 ))" = "$c $v" ] || fail "$2 image, $p: flags $f, the model says compr $c verity $v"
  done < /in/$2.flags
  n=0
  if [ -x /in/verity_measure ]; then
    while read -r p d; do
      [ "$(/in/verity_measure "/mnt2$p")" = "$d" ] || fail "$p: Linux measures $(/in/verity_measure "/mnt2$p"), the model $d"
      n=$((n+1))
    done < /in/$2.verity
  fi
  umount /mnt2 || fail "umount $2 image"
  echo "GUEST: $2 image: $(wc -l < /tmp/$2) paths, $(wc -l < /in/$2.flags) flags, $n digests as the model says"
}
feature_image /dev/vdb c compress_algorithm=zstd,compress_log_size=4,compress_chksum,compress_extension=txt,nocompress_extension=raw
feature_image /dev/vdc v ""
# Linux's changes.
mkdir /mnt/linux || fail mkdir
gtool pwrite /mnt/linux/p 0 300000 7 || fail pwrite
gtool punch /mnt/linux/p 4096 12288 || fail punch
gtool fallocate /mnt/linux/fa 0 20000 || fail fallocate
mv /mnt/fixed/a /mnt/fixed/dir/a2 || fail "mv file"
ln /mnt/fixed/dir/a2 /mnt/fixed/hard || fail ln
ln -s ../fixed/dir/a2 /mnt/linux/sym || fail "ln -s"
gtool setxattr /mnt/fixed/x user.linux fromlinux || fail setxattr
gtool mknod /mnt/linux/dev c 8 1 || fail mknod
rm /mnt/fixed/rm-me || fail rm
chmod 600 /mnt/fixed/x || fail chmod
gtool settime /mnt/fixed/x 1500000000 5 || fail settime
mkdir -p /mnt/linux/d1/d2 || fail "mkdir -p"
echo small > /mnt/linux/d1/d2/s || fail small
mv /mnt/fixed/dir /mnt/linux/d1/moved || fail "mv dir"
for i in $(seq 1 250); do : > /mnt/linux-many/entry-$i || fail "many $i"; done
sync
sh /in/manifest.sh /mnt > /out/after.manifest || fail "manifest after"
umount /mnt || fail umount
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: changes made, $(wc -l < /out/after.manifest) paths"
GUEST

set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-400}" --in "$work/in" --out "$work/out" "$work/guest.sh" "$img" "$work/c.img" "$work/v.img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_model_linux.sh: FAIL: Linux (status $orc)"; exit 1; }
for set in c v; do
  "$repo_root/tests/interop/fsck_clean.sh" "$work/$set.img" || { echo "writer_model_linux.sh: FAIL: fsck.f2fs on the $set image after Linux"; exit 1; }
done
[[ -s "$work/out/after.manifest" ]] || { echo "writer_model_linux.sh: FAIL: no manifest from Linux"; exit 1; }
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_model_linux.sh: FAIL: fsck.f2fs after Linux"; exit 1; }
WRITER_IMAGE="$img" WRITER_LINUX_MANIFEST="$work/out/after.manifest" run_test AfterLinux back.log
"$repo_root/tests/interop/fsck_clean.sh" "$img" || { echo "writer_model_linux.sh: FAIL: fsck.f2fs after our writer on Linux's image"; exit 1; }

rm -rf "$work/in2" && mkdir -p "$work/in2"
cp "$work/in/manifest.sh" "$work/in2/"
cp "$img.final.manifest" "$work/in2/expect.manifest"
cat > "$work/guest2.sh" <<'GUEST'
#!/bin/sh
fail() { echo "GUEST FAIL: $*"; dmesg | grep -i f2fs | tail -20; exit 1; }
mount -t f2fs /dev/vda /mnt || fail "mount"
sh /in/manifest.sh /mnt > /tmp/final || fail "manifest"
if ! cmp -s /in/expect.manifest /tmp/final; then
  diff /in/expect.manifest /tmp/final | head -40; fail "Linux reads our last sessions differently"
fi
umount /mnt || fail umount
if dmesg | grep -i 'f2fs' | grep -iE 'error|corrupt|inconsistent|fsck'; then fail "kernel complained"; fi
echo "GUEST OK: $(wc -l < /tmp/final) paths read as our writer left them"
GUEST
set +e
"$oracle" --timeout "${ORACLE_TIMEOUT:-400}" --in "$work/in2" "$work/guest2.sh" "$img"
orc=$?
set -e
[[ $orc -eq 0 ]] || { echo "writer_model_linux.sh: FAIL: Linux on the final image (status $orc)"; exit 1; }
echo "writer_model_linux.sh: PASS"
