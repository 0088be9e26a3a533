#!/usr/bin/env bash
# make_corpus.sh [--timeout S] OUTDIR: the reader's corpus, built by Linux and
# by f2fs-tools, with what Linux 6.1 reads from each image.
#
# Writes into OUTDIR:
#   linux.img        512 MiB, mkfs.f2fs -O extra_attr,inode_checksum,
#                    flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,
#                    compression,encrypt,verity,casefold -C utf8, populated by
#                    Linux (corpus_guest.sh: boundary sizes, sparse, fallocated
#                    and punched files, 3,000 entries, long and non-ASCII
#                    names, a 30-level path, symlinks, hard links, fifos,
#                    sockets, devices, xattrs and ACLs, times, owners, flags,
#                    lz4/zstd/lzo/lzo-rle compression, casefold, fscrypt, verity)
#   sload.img        256 MiB, mkfs.f2fs (extra_attr, inode_checksum,
#                    flexible_inline_xattr, inode_crtime, sb_checksum,
#                    lost_found, compression) + sload.f2fs -P of a host tree
#   sload_plain.img  256 MiB, mkfs.f2fs with default features + sload.f2fs -P
#   NAME.manifest    what Linux reads from NAME.img mounted read-only (format
#                    at the top of corpus_tool.c); linux.manifest also holds
#                    `CASE|cf|name|ino=N` casefold lookups
#   guest.log, sload*.log, fsck-*.log   logs; stamp (written last: the
#                    corpus is complete and was made by these scripts)
# The sload tree (OUTDIR/sload-src) has what sload.f2fs 1.15 can load: no
# fifos, sockets or devices (it refuses them), no compression (Debian's build
# has neither lz4 nor lzo), no fallocate/punch, no encryption or verity.
# sload.f2fs 1.15 writes i_inline_xattr_size 0 with flexible_inline_xattr and
# its own fsck pass then sets it to 50 over i_addr slots already in use: on
# sload.img Linux lists the xattrs of 6 inodes as corrupted (EUCLEAN, in the
# manifest as ERR:EUCLEAN), and the reader must refuse the same.
# Every image is also checked with fsck_clean.sh; that verdict is logged
# (fsck-NAME.log) and printed but does not fail the script.
#
# Exit: 0 done; 1 failure; 2 usage; 77 skipped: no Linux oracle, mkfs.f2fs,
# sload.f2fs or static gcc (1 instead with F2FSCORE_REQUIRE_ORACLE=1).
# Environment: ORACLE (default REPO/../shared/oracle/linux-f2fs), MKFS_F2FS,
# SLOAD_F2FS, TMPDIR. Takes about 2 minutes (one guest boot under TCG:
# 75-165 s on 2 busy cores, plus 10-20 s on the host).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
mkfs="${MKFS_F2FS:-/usr/sbin/mkfs.f2fs}"
sload="${SLOAD_F2FS:-/usr/sbin/sload.f2fs}"
timeout_s=1800

usage() { echo "usage: make_corpus.sh [--timeout SECONDS] OUTDIR" >&2; exit 2; }
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --timeout) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || usage; timeout_s="$2"; shift 2 ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    -*) usage ;;
    *) [[ -z "$out" ]] || usage; out="$1"; shift ;;
  esac
done
[[ -n "$out" ]] || usage

skip() {
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then echo "make_corpus.sh: FAIL: $* (F2FSCORE_REQUIRE_ORACLE=1)" >&2; exit 1; fi
  echo "make_corpus.sh: SKIP: $*" >&2; exit 77
}
[[ -x "$oracle" ]] || skip "Linux oracle not found at $oracle (set ORACLE=...)"
[[ -x "$mkfs" ]] || skip "$mkfs not found (install f2fs-tools)"
[[ -x "$sload" ]] || skip "$sload not found (install f2fs-tools)"
command -v gcc >/dev/null || skip "gcc not found"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/in" "$out/out" "$out/sload-src" "$out/stamp"
mkdir -p "$out/in" "$out/out"
t0=$SECONDS
stamp=$(cat "$here/make_corpus.sh" "$here/corpus_guest.sh" "$here/corpus_tool.c" | sha256sum | cut -c1-16)

gcc -O2 -static -o "$out/in/corpus_tool" "$here/corpus_tool.c" || skip "cannot build corpus_tool.c statically"
tool="$out/in/corpus_tool"

# ------------------------------------------------------------ linux.img
rm -f "$out/linux.img"
truncate -s 512M "$out/linux.img"
"$mkfs" -f -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,compression,encrypt,verity,casefold \
  -C utf8 "$out/linux.img" > "$out/mkfs-linux.log" 2>&1 || { cat "$out/mkfs-linux.log"; echo "make_corpus.sh: FAIL: mkfs.f2fs"; exit 1; }

# ------------------------------------------------------- the sload tree
src="$out/sload-src"
rep() { local s=""; while [[ ${#s} -lt $2 ]]; do s+="$1"; done; printf '%s' "${s:0:$2}"; }
make_tree() (
  set -e
  cd "$src"
  export LC_ALL=C  # byte lengths
  mkdir bound sparse big names deep links hard xattr owners times
  # boundaries: extra_attr images (36-byte extra, 50 inline xattr slots)
  # and the default layout (no extra attributes): inline 3452 / 3488 bytes
  for s in 0 1 3451 3452 3453 3487 3488 3489 4095 4096 4097; do "$tool" pwrite bound/size_$s 0 $s $s; done
  "$tool" pwrite bound/iaddr_full 0 $((864 * 4096)) 11
  "$tool" pwrite bound/iaddr_full_plus1 0 $((864 * 4096 + 1)) 12
  "$tool" pwrite bound/plain_iaddr_full_plus1 0 $((873 * 4096 + 1)) 13
  "$tool" pwrite bound/dnode2_full_plus1 0 $((2900 * 4096 + 1)) 15
  for b in 863 864 1881 1882 2899 2900; do "$tool" pwrite sparse/b$b $((b * 4096)) 10 $b; done
  "$tool" pwrite sparse/hole_start 1048576 5000 21
  "$tool" pwrite sparse/hole_end 0 5000 22; truncate -s 10485760 sparse/hole_end
  pad=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ
  for ((i = 0; i < 3050; i++)); do
    name="entry_${i}_${pad:0:$((i % 48))}"
    if ((i % 250 == 7)); then mkdir "big/$name"; else echo "$i" > "big/$name"; fi
  done
  for k in 1 2 3; do echo "$k" > "big/$(rep "${k}long" 255)"; done
  "$tool" pwrite "names/$(rep N 255)" 0 300 50
  mkdir "names/$(rep D 255)"; ln -s target "names/$(rep S 255)"
  e=""; for ((i = 0; i < 85; i++)); do e+="é"; done
  "$tool" pwrite "names/${e}$(rep a 85)" 0 10 51
  for nm in "café" "日本語のファイル名" "Ελληνικά" "😀 emoji" $'e\xcc\x81 combining' \
            $'\xff\xfeinvalid utf8' $' spaces and\ttab' "-dash" "..." 'back\slash*?[x]'; do
    "$tool" pwrite "names/$nm" 0 20 52
  done
  p=deep; for ((i = 1; i <= 30; i++)); do p+="/d$i"; done
  mkdir -p "$p"; "$tool" pwrite "$p/leaf" 0 1000 53; ln -s ../../d2 "$p/up"
  ln -s a links/s1
  ln -s ../bound/size_4096 links/rel
  ln -s /mnt/bound/size_4096 links/abs
  ln -s nowhere/at/all links/dangling
  ln -s "$(rep 0123456789/ 3452)" links/s3452
  ln -s "$(rep 0123456789/ 3453)" links/s3453
  ln -s "$(rep 0123456789/ 3489)" links/s3489
  ln -s "$(rep 0123456789/ 4095)" links/s4095
  mkdir hard/sub
  "$tool" pwrite hard/orig 0 5000 54; ln hard/orig hard/sub/link2; ln hard/orig names/link3
  "$tool" pwrite xattr/one 0 100 60; "$tool" setxattr xattr/one user.small 68656c6c6f
  "$tool" pwrite xattr/large 0 100 62; "$tool" setxattr xattr/large user.large "$(rep 6c61726765 4000)"
  "$tool" pwrite xattr/trusted 0 10 63; "$tool" setxattr xattr/trusted trusted.t1 7472757374
  for u in "u1000 1000:1000" "nobody 65534:65534" "big 4000000000:4000000001"; do
    set -- $u; "$tool" pwrite "owners/$1" 0 10 66; chown "$2" "owners/$1"
  done
  for m in 0000 0777 04755 02755 01644 0640; do "$tool" pwrite "owners/mode_$m" 0 10 67; chmod "$m" "owners/mode_$m"; done
  mkdir owners/sticky_dir; chmod 01777 owners/sticky_dir; chown 1000:1000 owners/sticky_dir
  for t in "zero @0" "old @1000000000.5" "y2038 @2147483648" "y2100 @4102444800.123456789"; do
    set -- $t; : > "times/$1"; touch -d "$2" "times/$1"
  done
  touch -d @1600000000.25 times
)
mkdir -p "$src"
make_tree || { echo "make_corpus.sh: FAIL: building the sload tree"; exit 1; }

sload_image() {  # NAME MKFS-OPTIONS...
  local name="$1"; shift
  local img="$out/$name.img"
  rm -f "$img"; truncate -s 256M "$img"
  "$mkfs" -f "$@" "$img" > "$out/$name.log" 2>&1 || { cat "$out/$name.log"; echo "make_corpus.sh: FAIL: mkfs.f2fs $*"; exit 1; }
  # sload.f2fs 1.15 exits 1 after its own fsck pass repaired what it wrote
  # (inline_xattr_size 0 with flexible_inline_xattr); the image is checked below.
  set +e
  "$sload" -f "$src" -P "$img" >> "$out/$name.log" 2>&1
  local rc=$?
  set -e
  if [[ $rc -gt 1 ]]; then tail -30 "$out/$name.log"; echo "make_corpus.sh: FAIL: sload.f2fs exited with $rc"; exit 1; fi
  echo "make_corpus.sh: $name.img: mkfs.f2fs $* + sload.f2fs -P (exit $rc)"
}
sload_image sload -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,compression
sload_image sload_plain

# ------------------------------------------------------------ the guest
{
  echo "#!/bin/sh"
  echo "# generated by make_corpus.sh from corpus_guest.sh"
  echo "IMAGES='linux sload sload_plain'"
  cat "$here/corpus_guest.sh"
} > "$out/in/guest.sh"
echo "make_corpus.sh: images ready after $((SECONDS - t0)) s; running the Linux oracle (timeout ${timeout_s}s)"
t1=$SECONDS
set +e
"$oracle" --timeout "$timeout_s" --in "$out/in" --out "$out/out" \
  "$out/in/guest.sh" "$out/linux.img" "$out/sload.img" "$out/sload_plain.img" > "$out/guest.log" 2>&1
orc=$?
set -e
echo "make_corpus.sh: the guest took $((SECONDS - t1)) s (status $orc)"
if [[ $orc -ne 0 ]]; then
  grep -v '^PASS:' "$out/guest.log" | tail -60
  echo "make_corpus.sh: FAIL: the Linux guest failed (status $orc); full log: $out/guest.log"
  exit 1
fi
grep -E '^(FAIL|INFO)' "$out/guest.log" || true
for name in linux sload sload_plain; do
  [[ -s "$out/out/$name.manifest" ]] || { echo "make_corpus.sh: FAIL: no manifest for $name"; exit 1; }
  mv "$out/out/$name.manifest" "$out/$name.manifest"
done
mv "$out/out/dmesg.txt" "$out/dmesg.txt" 2>/dev/null || true

for name in linux sload sload_plain; do
  if FSCK_CLEAN_QUIET=1 "$here/fsck_clean.sh" "$out/$name.img" > "$out/fsck-$name.log" 2>&1; then
    echo "make_corpus.sh: $name.img is clean under fsck.f2fs -f"
  else
    echo "make_corpus.sh: NOTE: $name.img is not clean under fsck.f2fs -f (see $out/fsck-$name.log):"
    head -8 "$out/fsck-$name.log" | sed 's/^/    /'
  fi
done
rm -rf "$src" "$out/out"
echo "$stamp" > "$out/stamp"
echo "make_corpus.sh: PASS: corpus in $out after $((SECONDS - t0)) s"
