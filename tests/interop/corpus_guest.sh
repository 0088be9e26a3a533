#!/bin/sh
# corpus_guest.sh: builds the Linux corpus and writes what Linux reads.
#
# Runs INSIDE the guest of ../shared/oracle/linux-f2fs (busybox sh + gtool),
# started by make_corpus.sh, which prepends `IMAGES='...'` (the names of the
# attached images, /dev/vda first) and passes corpus_tool in /in. Do not run
# it on the host.
#
#   /dev/vda  a fresh image (mkfs.f2fs with compression, encrypt, verity,
#             casefold): populated here through five mounts (one per
#             compression setting), then mounted read-only for the manifest;
#   /dev/vdb, /dev/vdc, ...  images made by mkfs.f2fs + sload.f2fs: only
#             mounted read-only for their manifests.
# For each image NAME it writes /out/NAME.manifest (corpus_tool manifest of
# the read-only mount; casefold lookups of the Linux image appended as
# `CASE|dir|name|ino=N or -`), and /out/dmesg.txt (the kernel's f2fs lines). Prints PASS:/FAIL: lines;
# exit status 0 only if every step worked and the kernel logged no f2fs error.
#
# Layout assumed for the boundaries (Linux 6.1, extra_attr: i_extra_isize 36
# = 9 slots; flexible_inline_xattr with the default inline_xattr_size 50):
#   ADDRS_PER_INODE = 923 - 9 - 50 = 864 data slots in i_addr,
#   MAX_INLINE_DATA = 4 * (923 - 9 - 50 - 1) = 3452 bytes,
#   ADDRS_PER_BLOCK = NIDS_PER_BLOCK = 1018, inline dentries: 180 slots,
#   "." and ".." in the first two.
#   File blocks: i_addr 0..863; direct nodes 864..1881, 1882..2899;
#   indirect 2900..1039223, 1039224..2075547; double indirect from 2075548.
# The corpus test checks these assumptions against the image.

IMAGES="${IMAGES-linux}"
T=/in/corpus_tool
M=/mnt
fails=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# r CMD...: run, count a failure
r() { "$@" || fail "$*"; }
die() { fail "$*"; finish; }
# The kernel must not complain while it builds and reads the Linux image;
# on the sload images its complaints are part of what it reads (logged).
check_dmesg() {
  if dmesg | grep -i f2fs | grep -iE 'error|corrupt|inconsisten|bug|call trace|invalid|mismatch' > /tmp/dmesg.bad; then
    fail "the kernel logged f2fs trouble:"; sed 's/^/    /' /tmp/dmesg.bad
  fi
}
finish() {
  dmesg | grep -i f2fs >> /out/dmesg.txt
  if [ "$fails" -ne 0 ]; then echo "RESULT: FAIL ($fails failure(s))"; exit 1; fi
  echo "RESULT: PASS"; exit 0
}

mnt() {  # mnt DEV OPTS
  if [ -n "$2" ]; then out=$(mount -t f2fs -o "$2" "$1" $M 2>&1)
  else out=$(mount -t f2fs "$1" $M 2>&1); fi
  [ $? -eq 0 ] || die "mount -o $2 $1: $out"
  pass "mount $1 -o ${2:-defaults}"
}
umnt() { sync; out=$(umount $M 2>&1) || die "umount: $out"; }

# rep STR N: STR repeated, cut to exactly N bytes
rep() { s=""; while [ ${#s} -lt "$2" ]; do s="$s$1"; done; printf '%s' "${s:0:$2}"; }
pw() { r gtool pwrite "$@"; }                      # FILE OFF LEN SEED
at_block() { r gtool pwrite "$1" $(($2 * 4096)) "${3:-10}" "${4:-7}"; }  # FILE BLOCK [LEN SEED]

# compressible text, made once in the guest's tmpfs
i=0; : > /tmp/t130k
while [ $i -lt 2000 ]; do echo "line $i: the quick brown fox jumps over the lazy dog, f2fscore corpus" >> /tmp/t130k; i=$((i + 1)); done
i=0; while [ $i -lt 48 ]; do cat /tmp/t130k; i=$((i + 1)); done > /tmp/t6m
cat /tmp/t6m /tmp/t6m > /tmp/t12m

# ------------------------------------------------------- compressed files
# comp_dir DIR: a +c directory filled under the current mount's algorithm
comp_dir() {
  d=$M/comp/$1
  mkdir -p "$d" || fail "mkdir $d"
  r gtool set-flags "$d" 0x4
  r cp /tmp/t6m "$d/text_6m"                        # past i_addr and the first direct node
  pw "$d/random" 0 300000 31                        # incompressible
  { head -c 131072 /tmp/t6m; gtool pattern 0 131072 32; head -c 50000 /tmp/t130k; } > "$d/mixed" || fail "$d/mixed"
  head -c 100 /tmp/t130k > "$d/small" || fail "$d/small"
  head -c 65536 /dev/zero > "$d/zeros" || fail "$d/zeros"
  r dd if=/tmp/t6m of="$d/sparse" bs=4096 seek=256 count=16 2>/dev/null
  head -c 262144 /tmp/t6m > "$d/overwrite" && pw "$d/overwrite" 70000 5000 33
  head -c 100000 /tmp/t6m > "$d/truncated" && r truncate -s 50001 "$d/truncated"
  fl=$(gtool ioctl-flags "$d/text_6m")
  case $((fl & 4)) in 4) pass "comp/$1: files inherit +c" ;; *) fail "comp/$1/text_6m flags $fl lack 0x4" ;; esac
}

# ------------------------------------------------------------- the image
populate() {
  cd $M || die "cd $M"

  # --- files sized around every boundary (dense)
  mkdir bound
  for s in 0 1 3451 3452 3453 4095 4096 4097 8192; do pw bound/size_$s 0 $s $s; done
  pw bound/iaddr_full 0 $((864 * 4096)) 11          # every i_addr slot used
  pw bound/iaddr_full_plus1 0 $((864 * 4096 + 1)) 12  # first block of the first direct node
  pw bound/dnode1_full 0 $((1882 * 4096)) 13        # last block of the first direct node
  pw bound/dnode1_full_plus1 0 $((1882 * 4096 + 1)) 14
  pw bound/dnode2_full_plus1 0 $((2900 * 4096 + 1)) 15  # first block under the first indirect node
  pw bound/shrunk 0 100000 16; r truncate -s 100 bound/shrunk       # no longer inline-sized, keeps blocks
  pw bound/inline_grown 0 100 17; r truncate -s 3452 bound/inline_grown
  pw bound/inline_converted 0 100 18; pw bound/inline_converted 10000 10 19
  pw bound/emptied 0 50000 20; r truncate -s 0 bound/emptied

  # --- sparse files: a few bytes at the boundary blocks
  mkdir sparse
  for b in 863 864 1881 1882 2899 2900; do at_block sparse/b$b $b; done
  r gtool pwrite sparse/straddle_864 $((864 * 4096 - 4)) 8 8
  for b in 0 863 864 1881 1882 2899 2900 3917 3918 1039223 1039224 2075547 2075548; do
    at_block sparse/all_boundaries $b 10 $b
  done
  at_block sparse/dind_only 2075548 10 9
  pw sparse/hole_start 1048576 5000 21
  pw sparse/hole_end 0 5000 22; r truncate -s 10485760 sparse/hole_end
  pw sparse/mid_block 5000 100 23
  r truncate -s 1073741824 sparse/empty_1g

  # --- fallocate, with and without KEEP_SIZE; collapse/insert/zero ranges
  mkdir falloc
  pw falloc/keep 0 10000 24; r $T fallocate falloc/keep 1 0 1048576
  pw falloc/keep_beyond 0 5000 25; r $T fallocate falloc/keep_beyond 1 65536 65536
  r $T fallocate falloc/mode0 0 0 1048576
  r $T fallocate falloc/mode0_write 0 0 1048576; pw falloc/mode0_write 8192 8192 26
  pw falloc/beyond 0 100 27; r $T fallocate falloc/beyond 0 2097152 65536
  pw falloc/zero_range 0 65536 28; r $T fallocate falloc/zero_range 0x10 5000 15000
  pw falloc/zero_extend 0 4096 29; r $T fallocate falloc/zero_extend 0x10 8192 8192
  pw falloc/collapse 0 262144 30; r $T fallocate falloc/collapse 8 65536 65536
  pw falloc/insert 0 131072 31; r $T fallocate falloc/insert 0x20 65536 65536

  # --- punched holes
  mkdir punch
  pw punch/aligned 0 1048576 40; r gtool punch punch/aligned 40960 40960
  pw punch/unaligned 0 1048576 41; r gtool punch punch/unaligned 100000 50001
  pw punch/tail 0 100000 42; r gtool punch punch/tail 98000 10000
  pw punch/whole 0 65536 43; r gtool punch punch/whole 0 65536
  pw punch/inline 0 3000 44; r gtool punch punch/inline 1000 500

  # --- a directory of 3,000 entries (multi-level hash), with holes left by deletions
  mkdir big
  pad=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ
  i=0
  while [ $i -lt 3100 ]; do
    name="entry_${i}_${pad:0:$((i % 48))}"
    if [ $((i % 250)) -eq 7 ]; then mkdir "big/$name"; else echo "$i" > "big/$name"; fi
    i=$((i + 1))
  done
  for k in 1 2 3 4 5; do echo "$k" > "big/$(rep "${k}long" 255)"; done
  i=0; while [ $i -lt 3100 ]; do
    [ $((i % 31)) -eq 5 ] && [ $((i % 250)) -ne 7 ] && rm "big/entry_${i}_${pad:0:$((i % 48))}"
    i=$((i + 1))
  done
  n=$(ls -A big | wc -l); [ "$n" -ge 3000 ] && pass "big/ holds $n entries" || fail "big/ holds only $n entries"

  # --- inline dentries: exactly full (180 slots: "." and ".." + 178) and one over
  mkdir inline_full inline_over
  i=1000; while [ $i -lt 1178 ]; do : > inline_full/e$i; i=$((i + 1)); done
  i=1000; while [ $i -lt 1179 ]; do : > inline_over/e$i; i=$((i + 1)); done

  # --- names: 255 bytes, non-ASCII, invalid UTF-8, odd characters
  mkdir names
  n255=$(rep N 255); pw "names/$n255" 0 300 50
  mkdir "names/$(rep D 255)"; ln -s target "names/$(rep S 255)"
  e=""; i=0; while [ $i -lt 85 ]; do e="${e}é"; i=$((i + 1)); done
  pw "names/${e}$(rep a 85)" 0 10 51              # 255 bytes of UTF-8
  for nm in "café" "日本語のファイル名" "Ελληνικά" "😀 emoji" "$(printf 'e\314\201 combining')" \
            "$(printf '\377\376invalid utf8')" " spaces and	tab" "-dash" "..." 'back\slash*?[x]'; do
    pw "names/$nm" 0 20 52
  done
  mkdir "names/répertoire"; echo inside > "names/répertoire/fichier"

  # --- a 30-level deep path
  p=deep; i=1; while [ $i -le 30 ]; do p="$p/d$i"; i=$((i + 1)); done
  r mkdir -p "$p"; pw "$p/leaf" 0 1000 53; ln -s ../../d2 "$p/up"

  # --- symlinks: inline (up to 3452 bytes) and in a block
  mkdir links
  ln -s a links/s1
  ln -s ../bound/size_4096 links/rel
  ln -s /mnt/bound/size_4096 links/abs
  ln -s nowhere/at/all links/dangling
  ln -s ../deep links/to_dir
  ln -s "$(rep 0123456789/ 3452)" links/s3452
  ln -s "$(rep 0123456789/ 3453)" links/s3453
  ln -s "$(rep 0123456789/ 4095)" links/s4095
  ln -s "$(printf 'caf\303\251/\377')" links/nonascii

  # --- hard links (a file with 3 names in 3 directories, a fifo, a symlink)
  mkdir -p hard/sub
  pw hard/orig 0 5000 54
  r ln hard/orig hard/sub/link2; r ln hard/orig names/link3
  r gtool mknod hard/fifo p 0 0; r ln hard/fifo hard/fifo_link
  ln -s orig hard/sym; r ln hard/sym hard/sym_link

  # --- fifos, sockets and device nodes (old and new dev_t encodings)
  mkdir special
  r gtool mknod special/fifo p 0 0
  r gtool mknod special/sock s 0 0
  r gtool mknod special/null c 1 3
  r gtool mknod special/sda1 b 8 1
  r gtool mknod special/chr_big c 300 70000
  r gtool mknod special/blk_max b 4095 1048575
  r chmod 0600 special/null; r chown 1000:1001 special/sda1

  # --- xattrs: inline, in the xattr node, namespaces, binary, ACLs
  mkdir xattr
  pw xattr/one 0 100 60; r gtool setxattr xattr/one user.small hello
  pw xattr/many 0 100 61
  i=10; while [ $i -lt 40 ]; do r gtool setxattr xattr/many user.attr_$i "$(rep "value$i-" 60)"; i=$((i + 1)); done
  pw xattr/large 0 5000 62; r gtool setxattr xattr/large user.large "$(rep 'large value ' 3000)"
  pw xattr/ns 0 10 63
  r gtool setxattr xattr/ns user.u1 uservalue
  r gtool setxattr xattr/ns trusted.t1 trustedvalue
  r gtool setxattr xattr/ns security.s1 securityvalue
  : > xattr/empty; r gtool setxattr xattr/empty user.empty ""
  : > xattr/binary; r $T setxattr xattr/binary user.bin 00ff00017f80fe0000
  mkdir xattr/dir; r gtool setxattr xattr/dir user.d dirvalue; r gtool setxattr xattr/dir trusted.d2 x
  ln -s one xattr/sym; r gtool setxattr xattr/sym trusted.sym symvalue
  r gtool mknod xattr/fifo p 0 0; r gtool setxattr xattr/fifo trusted.fifo fifovalue
  # POSIX ACLs (the xattr format: version 2, entries tag/perm/id):
  # user::rw- user:1000:r-- group::r-- mask::r-- other::r--
  pw xattr/acl_file 0 10 64
  r $T setxattr xattr/acl_file system.posix_acl_access \
    0200000001000600ffffffff02000400e803000004000400ffffffff10000400ffffffff20000400ffffffff
  mkdir xattr/acl_dir
  # default ACL: user::rwx user:1000:r-x group::r-x mask::r-x other::r-x
  r $T setxattr xattr/acl_dir system.posix_acl_default \
    0200000001000700ffffffff02000500e803000004000500ffffffff10000500ffffffff20000500ffffffff
  pw xattr/acl_dir/child 0 10 65                     # inherits an access ACL
  mkdir xattr/acl_dir/subdir                         # inherits both

  # --- timestamps (mtime seconds.nanoseconds), owners, modes
  mkdir times owners
  for t in "zero 0 0" "one_ns 1 999999999" "negative -1 500000000" "y2038 2147483648 0" \
           "y2106 4294967296 1" "y2100 4102444800 123456789"; do
    set -- $t; : > times/$1; r gtool settime times/$1 $2 $3
  done
  ln -s zero times/sym; r gtool settime times/sym 1234567890 987654321
  for u in "u1000 1000:1000" "nobody 65534:65534" "big 4000000000:4000000001"; do
    set -- $u; pw owners/$1 0 10 66; r chown $2 owners/$1
  done
  for m in 0000 0777 04755 02755 01644 0640; do pw owners/mode_$m 0 10 67; r chmod $m owners/mode_$m; done
  mkdir owners/sticky_dir; r chmod 01777 owners/sticky_dir; r chown 1000:1000 owners/sticky_dir

  # --- inode flags
  mkdir flags
  for f in "nodump 0x40" "noatime 0x80" "sync 0x8" "append 0x20" "immutable 0x10"; do
    set -- $f; pw flags/$1 0 100 68; r gtool set-flags flags/$1 $2
  done

  # --- an encrypted directory (fscrypt v2; the test sees only that it is encrypted)
  mkdir enc
  r gtool encrypt-dir enc
  pw enc/inline 0 3000 70
  pw enc/data 0 200000 71
  mkdir -p enc/a_rather_long_directory_name_past_one_crypto_block_of_name/sub
  ln -s ../inline enc/a_rather_long_directory_name_past_one_crypto_block_of_name/link
  mkdir enc/many; i=0; while [ $i -lt 60 ]; do echo $i > enc/many/file_$i; i=$((i + 1)); done

  # --- fs-verity
  mkdir verity
  pw verity/small 0 100 80; pw verity/one_mib 0 1048576 81; : > verity/empty
  for f in small one_mib empty; do r gtool verity verity/$f; done

  # --- a casefolded directory: mixed case, accents, ligature, invalid UTF-8
  mkdir cf
  r gtool set-flags cf 0x40000000
  pw "cf/MiXeD Case.TXT" 0 100 90
  pw "cf/ÉCOLE" 0 101 91
  pw "cf/straße" 0 102 92
  pw "cf/ΣΊΣΥΦΟΣ" 0 103 93
  pw "cf/ﬁle" 0 104 94
  pw "cf/$(printf 'U\314\210n\314\203i\314\210c\303\266d\303\251')" 0 105 95  # partly decomposed
  pw "cf/$(printf '\377bad')" 0 106 96
  mkdir cf/SubDir; pw cf/SubDir/Inner.File 0 107 97
  i=0; while [ $i -lt 300 ]; do echo $i > "cf/Entry_$i"; i=$((i + 1)); done

  # --- compressed by extension in a plain directory, and the first algorithm
  mkdir -p comp/ext
  head -c 200000 /tmp/t6m > comp/ext/data.cz; head -c 200000 /tmp/t6m > comp/ext/plain.txt
  comp_dir lz4
  r cp /tmp/t12m comp/lz4/text_12m                   # into the first indirect node

  # directory times last (adding entries changes them)
  r gtool settime times 1600000000 111111111
  r gtool settime times/../owners 1500000000 222222222
  cd /
}

casefold_lookups() {  # after the read-only mount: what Linux resolves in cf/
  for nm in "mixed case.txt" "MIXED CASE.TXT" "école" "ecole" "STRASSE" "strasse" "σίσυφος" \
            "FILE" "$(printf '\303\234\303\261\303\257c\303\266d\303\251')" \
            "$(printf '\303\274\303\221\303\217C\303\226D\303\211')" "$(printf '\377BAD')" "$(printf '\377bad')" \
            "subdir" "ENTRY_150" "entry_299" "Entry_300"; do
    echo "CASE|cf|$nm|ino=$($T ino "$M/cf/$nm")"
  done
  for nm in "subdir/inner.file" "SUBDIR/INNER.FILE"; do
    echo "CASE|cf|$nm|ino=$($T ino "$M/cf/$nm")"
  done
}

# (upper-case names: populate() and comp_dir() use lower-case globals)
set -- $IMAGES
FIRST=$1
IDX=0
for IMG in $IMAGES; do
  IDX=$((IDX + 1))
  DEV=/dev/vd$(echo "a b c d e f g h" | cut -d' ' -f$IDX)
  if [ "$IMG" = "$FIRST" ]; then
    mnt $DEV compress_algorithm=lz4,compress_extension=cz
    populate
    umnt
    mnt $DEV compress_algorithm=zstd,compress_log_size=6; comp_dir zstd; umnt
    mnt $DEV compress_algorithm=lzo; comp_dir lzo; umnt
    mnt $DEV compress_algorithm=lzo-rle; comp_dir lzo-rle; umnt
    mnt $DEV compress_algorithm=lz4,compress_log_size=4,compress_chksum; comp_dir lz4_chksum; umnt
    pass "populated $IMG"
  fi
  mnt $DEV ro
  if $T manifest $M > /out/$IMG.manifest 2> /tmp/manifest.err; then
    pass "$IMG: manifest of $(wc -l < /out/$IMG.manifest) entries"
  else
    fail "$IMG: corpus_tool manifest:"; sed 's/^/    /' /tmp/manifest.err
  fi
  [ "$IMG" = "$FIRST" ] && casefold_lookups >> /out/$IMG.manifest
  umnt
  if [ "$IMG" = "$FIRST" ]; then check_dmesg; else
    dmesg | grep -i f2fs | grep -v 'Mounted with checkpoint' | sed "s/^/INFO: $IMG: kernel: /" | head -20; fi
  dmesg -c | grep -i f2fs | sed "s/^/$IMG: /" >> /out/dmesg.txt
done
finish
