#!/usr/bin/env bash
# Re-makes linux61-compress.img.zst: a 64 MiB f2fs image (mkfs.f2fs -O
# extra_attr,compression) in which Linux 6.1 (../shared/oracle/linux-f2fs)
# wrote the compressed files of linux61-compress.recipe, one mount per
# algorithm and cluster size. The same files are then built on the host with
# the same commands (gtool compiled from the oracle's guest-tool.c, seq,
# head, dd, truncate) and their sha256 must equal what the guest read back
# after a remount, so the recipe describes exactly the bytes Linux wrote.
#
#   tests/data/make_linux61_compress.sh [OUTPUT.img.zst]
#
# Needs the oracle, mkfs.f2fs, gcc and zstd. Linux's output is not
# byte-reproducible (checkpoint versions, timestamps), so a re-made image
# differs from the committed one but holds the same files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
recipe=$here/linux61-compress.recipe
out=${1:-$here/linux61-compress.img.zst}
shared=${F2FSCORE_SHARED_DIR:-$here/../../../shared}
oracle=$shared/oracle/linux-f2fs
[[ -x $oracle ]] || { echo "no oracle at $oracle" >&2; exit 1; }
mkfs=$(command -v mkfs.f2fs || echo /usr/sbin/mkfs.f2fs)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/gtool" "$shared/oracle/guest-tool.c"

dirs=() opts=() files=() steps=()
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  read -r kind rest <<<"$line"
  case $kind in
    mount) dirs+=("${rest%% *}"); opts+=("${rest#* }") ;;
    file) files+=("${rest%% *}"); steps+=("${rest#* }") ;;
    *) echo "bad recipe line: $line" >&2; exit 1 ;;
  esac
done <"$recipe"

# Shell commands making file $1 from the steps $2 (GTOOL names gtool).
make_file() {
  local f=$1 step
  echo ": > '$f'"
  IFS=';' read -ra parts <<<"$2"
  for step in "${parts[@]}"; do
    set -- $step
    case $1 in
      seq) echo "seq 1 $2 >> '$f'" ;;
      zero) echo "head -c $2 /dev/zero >> '$f'" ;;
      rand) echo "\$GTOOL pattern 0 $2 $3 >> '$f'" ;;
      rep) echo "i=0; while [ \$i -lt $4 ]; do \$GTOOL pattern 0 $2 $3; i=\$((i+1)); done >> '$f'" ;;
      sync) echo "sync" ;;
      poke) echo "printf %s '$3' | dd of='$f' bs=1 seek=$2 conv=notrunc 2>/dev/null" ;;
      truncate) echo "truncate -s $2 '$f'" ;;
      *) echo "bad step '$step' for $f" >&2; exit 1 ;;
    esac
  done
}

# The files of each mount: DIR/NAME pairs.
paths_of() {
  local d=$1 i
  for i in "${!files[@]}"; do
    case ${files[$i]} in
      "*/"*) echo "$i $d/${files[$i]#\*/}" ;;
      "$d/"*) echo "$i ${files[$i]}" ;;
    esac
  done
}

guest=$tmp/guest.sh
{
  echo 'set -e; GTOOL=gtool'
  for k in "${!dirs[@]}"; do
    d=${dirs[$k]}
    echo "mount -t f2fs -o compress_extension=*,${opts[$k]} /dev/vda /mnt"
    echo "mkdir /mnt/$d"
    while read -r i p; do make_file "/mnt/$p" "${steps[$i]}"; done < <(paths_of "$d")
    echo "sync; umount /mnt"
  done
  echo 'mount -t f2fs -o ro /dev/vda /mnt'
  for d in "${dirs[@]}"; do
    while read -r i p; do
      echo "echo \"M|$p|\$(stat -c %s /mnt/$p)|\$(sha256sum < /mnt/$p | cut -d' ' -f1)|\$(gtool ioctl-flags /mnt/$p)\""
    done < <(paths_of "$d")
  done
  echo 'umount /mnt'
} >"$guest"

img=$tmp/linux61-compress.img
truncate -s 64M "$img"
"$mkfs" -q -f -l compress -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 -O extra_attr,compression "$img"
"$oracle" --timeout 3000 --dmesg "$guest" "$img" >"$tmp/guest.out"

# The same files on the host.
host=$tmp/host.sh
{
  echo "set -e; GTOOL='$tmp/gtool'"
  for d in "${dirs[@]}"; do
    echo "mkdir -p '$tmp/files/$d'"
    while read -r i p; do make_file "$tmp/files/$p" "${steps[$i]}"; done < <(paths_of "$d")
  done
} >"$host"
bash "$host"
bad=0 n=0
while IFS='|' read -r tag p size sum flags; do
  [[ $tag == M ]] || continue
  n=$((n + 1))
  want_size=$(stat -c %s "$tmp/files/$p")
  want_sum=$(sha256sum <"$tmp/files/$p" | cut -d' ' -f1)
  if [[ $size != "$want_size" || $sum != "$want_sum" ]]; then
    echo "MISMATCH $p: guest $size $sum, host $want_size $want_sum" >&2
    bad=1
  fi
  # FS_COMPR_FL (0x4) must be set: the file really is compressed.
  (( (flags & 4) != 0 )) || { echo "NOT COMPRESSED $p: flags $flags" >&2; bad=1; }
done <"$tmp/guest.out"
((n > 0)) || { echo "the guest listed no files" >&2; cat "$tmp/guest.out" >&2; exit 1; }
((bad == 0)) || exit 1
zstd -q -19 --long=26 -f "$img" -o "$out"
echo "made $out ($(stat -c %s "$out") bytes): $n files, same bytes on Linux and host"
