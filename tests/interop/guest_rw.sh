#!/bin/sh
# guest_rw.sh: read/write smoke test of an f2fs image under the Linux oracle.
#
# Runs INSIDE the guest of ../shared/oracle/linux-f2fs (busybox sh + gtool),
# against /dev/vda. Do not run it on the host; use linux_rw.sh, which makes a
# per-run copy of this script with a first line `MOUNT_OPTS='...'` prepended
# (the guest sees no host environment) and runs that copy through the oracle.
#
# What it does (every step prints PASS: or FAIL:, the last line is
# "RESULT: PASS" or "RESULT: FAIL"; exit status 0 only if everything passed):
#   1. mount -t f2fs [-o $MOUNT_OPTS] /dev/vda /mnt (failure is fatal)
#   2. nested directories; files of 0 B, 1 B, 3 KiB (inline data), 100 KiB,
#      5 MiB (written back to front; 1.25 MiB when under 32 MiB is free), a sparse file, a symlink (short and
#      long targets), a hard link, an xattr, a directory of 300 entries with
#      long names (dentries over several blocks), a tree to delete later;
#      plus, when the superblock has them: an fscrypt v2 directory
#      (encryption), an fs-verity file (verity), a casefolded directory
#      (casefold), a compressed directory (compression)
#   3. verify sha256 (expected values computed in the guest from gtool's
#      pattern generator, independently of the files), sizes, link targets,
#      link counts and the 300-entry listing: before unmount, then after
#      umount + mount
#   4. delete some files (one name of the hard link, some of the 300 entries)
#      and one directory tree; write one more file; gtool fsync/syncfs;
#      verify; umount (must succeed)
#   5. mount read-only once more, verify the final state, umount
# The kernel log is checked for f2fs errors after every mount; on any failure
# the `dmesg | grep -i f2fs` lines are printed.
#
# Knobs (set by the prepended header): MOUNT_OPTS (comma list, may be empty),
# SHOW_DMESG=1 (always print the f2fs kernel log lines).

MOUNT_OPTS="${MOUNT_OPTS-}"
SHOW_DMESG="${SHOW_DMESG-0}"
DEV=/dev/vda
MNT=/mnt
T=/tmp/guest_rw
MAN=$T/manifest      # path|sha256|size   (regular files that must exist)
GONE=$T/gone         # paths that must not exist
fails=0
mounted=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
info() { echo "INFO: $*"; }

show_dmesg() {
  echo "---- dmesg | grep -i f2fs ----"
  dmesg | grep -i f2fs
  echo "------------------------------"
}

finish() {
  if [ "$mounted" = 1 ]; then umount "$MNT" 2>/dev/null && mounted=0; fi
  if [ "$fails" -ne 0 ]; then
    show_dmesg
    echo "RESULT: FAIL ($fails failure(s))"
    exit 1
  fi
  [ "$SHOW_DMESG" = 1 ] && show_dmesg
  echo "RESULT: PASS"
  exit 0
}

die() { fail "$*"; finish; }

# sha256 of gtool's pattern stream: pat_sum LEN SEED
pat_sum() { gtool pattern 0 "$1" "$2" | sha256sum | cut -d' ' -f1; }
file_sum() { sha256sum < "$1" | cut -d' ' -f1; }

# add PATH SHA SIZE to the manifest (PATH relative to $MNT)
expect() { echo "$1|$2|$3" >> "$MAN"; }

# kernel log lines since the last check that look like trouble
dmesg_seen=0
check_dmesg() {
  dmesg | grep -i f2fs > $T/dmesg.now
  n=$(wc -l < $T/dmesg.now)
  tail -n +$((dmesg_seen + 1)) $T/dmesg.now > $T/dmesg.new
  dmesg_seen=$n
  # anything beyond the routine mount lines is worth a look (e.g. an option ignored)
  grep -vE 'Found nat_bits in checkpoint|Mounted with checkpoint version|recover fsync data on readonly fs' \
    $T/dmesg.new | sed "s/^/INFO: $1: kernel: /"
  grep -iE 'error|corrupt|inconsisten|fsck|bug|fail|invalid|mismatch|wrong|warn|call trace' $T/dmesg.new > $T/dmesg.bad
  if [ -s $T/dmesg.bad ]; then
    fail "$1: kernel log reports f2fs trouble:"
    sed 's/^/    /' $T/dmesg.bad
  fi
}

do_mount() {   # do_mount PHASE [EXTRA_OPT]
  o="$MOUNT_OPTS"
  [ -n "${2-}" ] && o="${o:+$o,}$2"
  if [ -n "$o" ]; then
    out=$(mount -t f2fs -o "$o" "$DEV" "$MNT" 2>&1)
  else
    out=$(mount -t f2fs "$DEV" "$MNT" 2>&1)
  fi
  rc=$?
  if [ $rc -ne 0 ]; then
    die "$1: mount -t f2fs ${o:+-o $o }$DEV $MNT failed (rc=$rc): $out"
  fi
  mounted=1
  line=$(grep " $MNT f2fs " /proc/mounts)
  [ -n "$line" ] || die "$1: $MNT is not an f2fs mount after mount"
  if [ -n "$o" ]; then pass "$1: mount -o $o"; else pass "$1: mount (default options)"; fi
  info "$1: /proc/mounts: $line"
  check_dmesg "$1"
}

do_umount() {  # do_umount PHASE
  out=$(umount "$MNT" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then die "$1: umount failed (rc=$rc): $out"; fi
  mounted=0
  pass "$1: umount"
  check_dmesg "$1: umount"
}

# ------------------------------------------------------------------ verify
verify_all() {  # verify_all PHASE
  ph=$1
  bad0=$fails
  nfiles=0
  while IFS='|' read -r p sum size; do
    nfiles=$((nfiles + 1))
    f="$MNT/$p"
    if [ ! -f "$f" ]; then fail "$ph: missing regular file $p"; continue; fi
    s=$(stat -c %s "$f")
    [ "$s" = "$size" ] || fail "$ph: $p size $s, expected $size"
    got=$(file_sum "$f")
    [ "$got" = "$sum" ] || fail "$ph: $p sha256 $got, expected $sum"
  done < "$MAN"
  [ "$fails" -eq "$bad0" ] && pass "$ph: sha256 and size of $nfiles files"

  b=$fails
  while read -r p; do
    if [ -e "$MNT/$p" ] || [ -L "$MNT/$p" ]; then fail "$ph: $p still exists after deletion"; fi
  done < "$GONE"
  [ "$fails" -eq "$b" ] && pass "$ph: $(wc -l < "$GONE") deleted paths are absent"

  # symlinks
  b=$fails
  t=$(readlink "$MNT/d1/sym_short"); [ "$t" = "d2/inline3k" ] || fail "$ph: sym_short -> '$t'"
  t=$(readlink "$MNT/d1/sym_long"); [ "$t" = "$LONG_TARGET" ] || fail "$ph: sym_long target differs ('$t')"
  t=$(readlink "$MNT/d1/sym_abs"); [ "$t" = "/mnt/d1/d2/d3/f100k" ] || fail "$ph: sym_abs -> '$t'"
  [ -L "$MNT/d1/sym_short" ] || fail "$ph: sym_short is not a symlink"
  got=$(file_sum "$MNT/d1/sym_short"); [ "$got" = "$SUM_3K" ] || fail "$ph: read through sym_short: wrong sha256"
  [ "$fails" -eq "$b" ] && pass "$ph: symlinks"

  # hard link (before deletion: 2 names; after: 1)
  b=$fails
  n=$(stat -c %h "$MNT/d1/hardlink100k")
  [ "$n" = "$NLINK" ] || fail "$ph: hardlink100k has $n links, expected $NLINK"
  if [ "$NLINK" = 2 ]; then
    i1=$(stat -c %i "$MNT/d1/hardlink100k"); i2=$(stat -c %i "$MNT/d1/d2/d3/f100k")
    [ "$i1" = "$i2" ] || fail "$ph: hard link inodes differ ($i1 vs $i2)"
  fi
  [ "$fails" -eq "$b" ] && pass "$ph: hard link count $NLINK"

  # xattr
  v=$(gtool getxattr "$MNT/d1/one" user.f2fscore 2>&1)
  if [ "$NLINK" = 2 ]; then
    if [ "$v" = "interop-xattr-value" ]; then pass "$ph: xattr"; else fail "$ph: xattr user.f2fscore = '$v'"; fi
  fi

  # the big directory
  ls -A "$MNT/d1/many" | sort > $T/ls.got
  n=$(wc -l < $T/ls.got)
  if cmp -s $T/ls.got $T/many.expected; then
    pass "$ph: d1/many lists exactly the $n expected entries"
  else
    fail "$ph: d1/many listing differs ($n entries, expected $(wc -l < $T/many.expected)):"
    diff $T/many.expected $T/ls.got | head -20
  fi
  sz=$(stat -c %s "$MNT/d1/many")
  if [ "$sz" -ge 12288 ]; then pass "$ph: d1/many spans $((sz / 4096)) dentry blocks"
  else fail "$ph: d1/many is only $sz bytes: its dentries should span several blocks"; fi
  # lookups by name, not only readdir
  b=$fails
  while read -r e; do [ -e "$MNT/d1/many/$e" ] || fail "$ph: lookup d1/many/$e failed"; done < $T/many.expected
  [ "$fails" -eq "$b" ] && pass "$ph: lookup of every d1/many entry"
  n=$(stat -c %h "$MNT/d1"); [ "$n" = "$D1_NLINK" ] || fail "$ph: d1 has link count $n, expected $D1_NLINK"

  feature_verify "$ph"
}

# ----------------------------------------------------------- feature parts
has() { case ",$FEATURES," in *",$1,"*) return 0 ;; esac; return 1; }

feature_write() {
  if has encryption; then
    mkdir "$MNT/d1/enc" || fail "encryption: mkdir d1/enc"
    if [ "$DUMMY_ENC" = 1 ]; then
      info "encryption: test_dummy_encryption: d1/enc (like every new directory) uses the dummy key"
    else
      gtool encrypt-dir "$MNT/d1/enc" || fail "encryption: gtool encrypt-dir"
    fi
    mkdir -p "$MNT/d1/enc/sub/a_rather_long_file_name_to_get_past_one_crypto_block_of_name"
    gtool pattern 0 3000 41 > "$MNT/d1/enc/inline" || fail "encryption: write inline"
    expect d1/enc/inline "$(pat_sum 3000 41)" 3000
    gtool pwrite "$MNT/d1/enc/sub/data" 0 200000 42 || fail "encryption: write data"
    expect d1/enc/sub/data "$(pat_sum 200000 42)" 200000
    ln -s ../inline "$MNT/d1/enc/sub/link" || fail "encryption: symlink"
    pass "encryption: wrote an fscrypt v2 directory"
  fi
  if has verity; then
    gtool pwrite "$MNT/d1/verity" 0 1048576 51 || fail "verity: write"
    gtool fsync "$MNT/d1/verity"
    if gtool verity "$MNT/d1/verity"; then pass "verity: enabled fs-verity"; else fail "verity: gtool verity"; fi
    expect d1/verity "$(pat_sum 1048576 51)" 1048576
  fi
  if has casefold; then
    mkdir "$MNT/d1/cf"
    if gtool set-flags "$MNT/d1/cf" 0x40000000; then pass "casefold: set +F on d1/cf"; else fail "casefold: set +F"; fi
    gtool pattern 0 100 61 > "$MNT/d1/cf/MiXeD Case.TXT"
    gtool pattern 0 200 62 > "$MNT/d1/cf/$SZ_NAME"
    expect "d1/cf/MiXeD Case.TXT" "$(pat_sum 100 61)" 100
    expect "d1/cf/$SZ_NAME" "$(pat_sum 200 62)" 200
    # same name in another case must be refused as existing
    if mkdir "$MNT/d1/cf/mixed case.txt" 2>/dev/null; then fail "casefold: created a case-duplicate"; else pass "casefold: case-duplicate refused"; fi
  fi
  if has compression; then
    mkdir "$MNT/d1/comp"
    if gtool set-flags "$MNT/d1/comp" 0x4; then pass "compression: set +c on d1/comp"; else fail "compression: set +c"; fi
    i=0; : > $T/text
    while [ $i -lt 2000 ]; do echo "line $i: the quick brown fox jumps over the lazy dog, f2fscore" >> $T/text; i=$((i + 1)); done
    i=0; while [ $i -lt 8 ]; do cat $T/text; i=$((i + 1)); done > $T/comp.txt
    cp $T/comp.txt "$MNT/d1/comp/text" || fail "compression: write text"
    expect d1/comp/text "$(file_sum $T/comp.txt)" "$(stat -c %s $T/comp.txt)"
    gtool pwrite "$MNT/d1/comp/random" 0 300000 71 || fail "compression: write random"
    expect d1/comp/random "$(pat_sum 300000 71)" 300000
    fl=$(gtool ioctl-flags "$MNT/d1/comp/text")
    case $((fl & 4)) in 4) pass "compression: new file inherits +c ($fl)" ;; *) fail "compression: d1/comp/text flags $fl lack 0x4" ;; esac
    gtool fsync "$MNT/d1/comp/text"
    gtool fsync "$MNT/d1/comp/random"
    w=$(cat /sys/fs/f2fs/vda/compr_written_block); sv=$(cat /sys/fs/f2fs/vda/compr_saved_block)
    info "compression: compr_written_block=$w compr_saved_block=$sv"
    case ",$MOUNT_OPTS," in
      *,compress_mode=user,*) info "compression: compress_mode=user: nothing is compressed unless asked" ;;
      *) if [ "$sv" -gt 0 ]; then pass "compression: the kernel compressed d1/comp/text"
         else fail "compression: compr_saved_block is 0 after writing compressible data"; fi ;;
    esac
  fi
}

feature_after_mount() {   # feature_after_mount [ro]: re-add the fscrypt key (it lives per mount)
  if has encryption && [ -d "$MNT/d1/enc" ] && [ "$DUMMY_ENC" = 0 ]; then
    if [ "${1-}" = ro ]; then
      # adds the key, then setting the (identical) policy fails with EROFS: fine
      gtool encrypt-dir "$MNT/d1/enc" 2>/dev/null
    else
      gtool encrypt-dir "$MNT/d1/enc" || fail "encryption: re-adding the key after mount"
    fi
  fi
}

feature_verify() {
  ph=$1
  if has encryption; then
    t=$(readlink "$MNT/d1/enc/sub/link"); [ "$t" = "../inline" ] || fail "$ph: encrypted symlink -> '$t'"
    [ -d "$MNT/d1/enc/sub/a_rather_long_file_name_to_get_past_one_crypto_block_of_name" ] ||
      fail "$ph: encrypted long-named directory missing"
  fi
  if has verity; then
    if (echo x >> "$MNT/d1/verity") 2>/dev/null; then fail "$ph: verity file is writable"; else pass "$ph: verity file refuses writes"; fi
  fi
  if has casefold; then
    b=$fails
    got=$(file_sum "$MNT/d1/cf/mixed case.txt" 2>/dev/null); [ "$got" = "$(pat_sum 100 61)" ] || fail "$ph: casefold lookup 'mixed case.txt'"
    got=$(file_sum "$MNT/d1/cf/STRASSE.TXT" 2>/dev/null); [ "$got" = "$(pat_sum 200 62)" ] || fail "$ph: casefold lookup STRASSE.TXT for $SZ_NAME"
    [ "$fails" -eq "$b" ] && pass "$ph: casefolded lookups"
  fi
}

# =================================================================== main
rm -rf $T; mkdir -p $T; : > "$MAN"; : > "$GONE"
info "kernel $(uname -r); MOUNT_OPTS='${MOUNT_OPTS}'"
case ",$MOUNT_OPTS," in *,test_dummy_encryption*) DUMMY_ENC=1 ;; *) DUMMY_ENC=0 ;; esac
[ -b "$DEV" ] || die "no block device $DEV"

do_mount "mount-1"
FEATURES=$(tr -d ' \n' < /sys/fs/f2fs/vda/features 2>/dev/null)
info "superblock features: $FEATURES"
# The smallest volumes (52 MiB: 8 MiB for users) cannot hold the full-size
# workload (about 9 MiB of data and nodes): scale the two big files down.
AVAIL_KB=$(df -k "$MNT" | awk 'NR == 2 { print $4 }')
if [ "${AVAIL_KB:-0}" -lt 32768 ]; then PIECE=262144; else PIECE=1048576; fi
info "free space ${AVAIL_KB} KiB: big5m is 5 x $PIECE bytes, doomed/x/big 2 x $PIECE"

# --- write phase
LONG_TARGET=$(i=0; while [ $i -lt 30 ]; do printf 'long-target-%02d/' $i; i=$((i + 1)); done; printf end)
SZ_NAME="Stra$(printf '\303\237')e.txt"   # 'Straße.txt': casefolds to 'strasse.txt'
SUM_3K=$(pat_sum 3072 3)
b=$fails
mkdir -p "$MNT/d1/d2/d3/d4/d5" "$MNT/d1/doomed/x/y/z" "$MNT/d1/many" || fail "mkdir"
true > "$MNT/d1/empty" || fail "create d1/empty"; expect d1/empty "$(pat_sum 0 1)" 0
gtool pattern 0 1 2 > "$MNT/d1/one";                 expect d1/one "$(pat_sum 1 2)" 1
gtool pattern 0 3072 3 > "$MNT/d1/d2/inline3k";      expect d1/d2/inline3k "$SUM_3K" 3072
gtool pattern 0 102400 4 > $T/f100k
cp $T/f100k "$MNT/d1/d2/d3/f100k";                   expect d1/d2/d3/f100k "$(pat_sum 102400 4)" 102400
# 5 pieces of $PIECE bytes (5 MiB, or 1.25 MiB when space is short) written back to front
for k in 4 3 2 1 0; do
  gtool pwrite "$MNT/d1/d2/d3/d4/big5m" $((k * PIECE)) $PIECE 5 || fail "pwrite big5m at $((k * PIECE))"
done
expect d1/d2/d3/d4/big5m "$(pat_sum $((5 * PIECE)) 5)" $((5 * PIECE))
# sparse: 4 MiB hole, 4 KiB of data, then a hole to 6 MiB
gtool pwrite "$MNT/d1/d2/d3/d4/d5/sparse" 4194304 4096 6 && truncate -s 6291456 "$MNT/d1/d2/d3/d4/d5/sparse" ||
  fail "write sparse"
expect d1/d2/d3/d4/d5/sparse "$( { dd if=/dev/zero bs=1048576 count=4 2>/dev/null; gtool pattern 4194304 4096 6;
  dd if=/dev/zero bs=4096 count=511 2>/dev/null; } | sha256sum | cut -d' ' -f1)" 6291456
ln -s d2/inline3k "$MNT/d1/sym_short"
ln -s "$LONG_TARGET" "$MNT/d1/sym_long"
ln -s /mnt/d1/d2/d3/f100k "$MNT/d1/sym_abs"
ln "$MNT/d1/d2/d3/f100k" "$MNT/d1/hardlink100k";     expect d1/hardlink100k "$(pat_sum 102400 4)" 102400
gtool setxattr "$MNT/d1/one" user.f2fscore interop-xattr-value || fail "setxattr"
for i in 1 2 3 4 5 6 7 8; do gtool pattern 0 $((i * 1000)) $((100 + i)) > "$MNT/d1/doomed/x/y/z/f$i"; done
gtool pwrite "$MNT/d1/doomed/x/big" 0 $((2 * PIECE)) 99
ln -s ../x "$MNT/d1/doomed/x/y/loop"
# 300 entries, long names (6 dentry slots each), every 30th with content
: > $T/many.expected
i=0
while [ $i -lt 300 ]; do
  name=$(printf 'entry_with_a_rather_long_name_for_slots_%03d' $i)
  echo "$name" >> $T/many.expected
  if [ $((i % 30)) -eq 0 ]; then
    gtool pattern 0 $((i + 10)) $((1000 + i)) > "$MNT/d1/many/$name"
    expect "d1/many/$name" "$(pat_sum $((i + 10)) $((1000 + i)))" $((i + 10))
  else
    true > "$MNT/d1/many/$name" || fail "create d1/many/$name"
  fi
  i=$((i + 1))
done
sort -o $T/many.expected $T/many.expected
[ "$fails" -eq "$b" ] && pass "write phase: directories, files, links, xattr, 300 entries"
D1_NLINK=5   # d1: ., its entry in /, and subdirectories d2 doomed many
feature_write
has casefold && D1_NLINK=$((D1_NLINK + 1))
has compression && D1_NLINK=$((D1_NLINK + 1))
has encryption && D1_NLINK=$((D1_NLINK + 1))
NLINK=2

verify_all "before-umount"
gtool syncfs "$MNT" || fail "syncfs"
do_umount "umount-1"

# --- remount and verify
do_mount "mount-2"
feature_after_mount
verify_all "after-remount"

# --- delete, fsync, umount
b=$fails
rm -rf "$MNT/d1/doomed" || fail "rm -rf d1/doomed"
echo d1/doomed >> "$GONE"
rm "$MNT/d1/one" "$MNT/d1/d2/d3/f100k" || fail "rm files"
echo d1/one >> "$GONE"; echo d1/d2/d3/f100k >> "$GONE"
grep -v -e '^d1/one|' -e '^d1/d2/d3/f100k|' "$MAN" > $T/man.new && mv $T/man.new "$MAN"
NLINK=1
# delete every 7th entry of the big directory
: > $T/many.keep
while read -r e; do
  n=${e##*_}; n=$(expr "$n" + 0)   # not $((n)): 008 would be bad octal
  if [ $((n % 7)) -eq 3 ]; then
    rm "$MNT/d1/many/$e" || fail "rm d1/many/$e"
    echo "d1/many/$e" >> "$GONE"
    grep -v "^d1/many/$e|" "$MAN" > $T/man.new; mv $T/man.new "$MAN"
  else
    echo "$e" >> $T/many.keep
  fi
done < $T/many.expected
mv $T/many.keep $T/many.expected
D1_NLINK=$((D1_NLINK - 1))
[ "$fails" -eq "$b" ] && pass "delete phase: 2 files, d1/doomed tree, $(grep -c '^d1/many/' "$GONE") entries of d1/many"
# write after delete, then fsync file and directories
gtool pwrite "$MNT/d1/d2/after_delete" 0 40000 81 || fail "write after_delete"
expect d1/d2/after_delete "$(pat_sum 40000 81)" 40000
b=$fails
gtool fsync "$MNT/d1/d2/after_delete" || fail "gtool fsync after_delete"
gtool fsync "$MNT/d1/d2" || fail "gtool fsync d1/d2"
gtool fsync "$MNT/d1/many" || fail "gtool fsync d1/many"
gtool fsync "$MNT/d1" || fail "gtool fsync d1"
gtool syncfs "$MNT" || fail "gtool syncfs"
[ "$fails" -eq "$b" ] && pass "gtool fsync (file, directories) and syncfs"
verify_all "after-delete"
do_umount "umount-2"

# --- read-only check of the final state
do_mount "mount-3-ro" ro
feature_after_mount ro
verify_all "final-ro"
do_umount "umount-3"

finish
