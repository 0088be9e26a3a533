#!/usr/bin/env bash
# completion_test.sh BUILD_DIR: the bash completion of the tools
# (tools/completion/f2fscore.bash) against the tools built in BUILD_DIR:
# options from --help, the value sets of options that list them, dump's
# subcommands after the image, and files for positionals.
set -uo pipefail
build_dir=${1:?usage: completion_test.sh BUILD_DIR}
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
for t in mkfs fsck dump sload io label tune resize; do PATH="$build_dir/tools/$t:$PATH"; done
export PATH
# shellcheck source=../../tools/completion/f2fscore.bash
source "$src_dir/tools/completion/f2fscore.bash"
fail=0
# complete WORD... : the candidates for the last word, one per line, sorted.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _f2fscore
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect_has() {  # DESCRIPTION WANT CANDIDATES
  if ! grep -qxF -- "$2" <<<"$3"; then
    echo "FAIL: $1: '$2' not offered (got: $(tr '\n' ' ' <<<"$3"))"; fail=1
  fi
}
expect_not() {
  if grep -qxF -- "$2" <<<"$3"; then echo "FAIL: $1: '$2' offered"; fail=1; fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
touch "$tmp/disk.img"

got=$(complete_words f2fscore-fsck --j)
expect_has "fsck --j" --json "$got"
got=$(complete_words f2fscore-fsck -)
for o in -n -p -a -y -f -C --json -V --version; do expect_has "fsck -" "$o" "$got"; done
# Every option of every tool's --help is offered after "-".
for t in mkfs fsck dump sload io label tune resize; do
  got=$(complete_words "f2fscore-$t" -)
  while read -r o; do
    expect_has "$t -" "$o" "$got"
  done < <("f2fscore-$t" --help | sed -n '/^Options:/,/^[^ ]/p' | grep -oE '^  -[^ ]+' | tr -d ' ' | tr ',' '\n')
done
got=$(complete_words f2fscore-sload --backend "")
for b in auto posix io_uring uring; do expect_has "sload --backend" "$b" "$got"; done
got=$(complete_words f2fscore-sload --backend i)
expect_has "sload --backend i" io_uring "$got"
expect_not "sload --backend i" posix "$got"
got=$(complete_words f2fscore-dump "$tmp/disk.img" "")
for s in info sb cp nat sit ssa inode block ls cat map space ipu extract; do expect_has "dump IMAGE" "$s" "$got"; done
got=$(complete_words f2fscore-dump "$tmp/disk.img" sp)
expect_has "dump IMAGE sp" space "$got"
got=$(complete_words f2fscore-dump "$tmp/di")
expect_has "dump (image)" "$tmp/disk.img" "$got"
got=$(complete_words f2fscore-mkfs -f "$tmp/d")
expect_has "mkfs -f (device)" "$tmp/disk.img" "$got"
got=$(complete_words f2fscore-sload --backend=u)
expect_has "sload --backend=u" uring "$got"
got=$(complete_words f2fscore-tune -O "")
for f in encrypt casefold verity sb_checksum; do expect_has "tune -O" "$f" "$got"; done
expect_not "tune -O (only what tune turns on)" extra_attr "$got"
got=$(complete_words f2fscore-mkfs -O extra_attr,inode_c)
expect_has "mkfs -O LIST,PARTIAL" extra_attr,inode_checksum "$got"
got=$(complete_words f2fscore-tune -C "")
expect_has "tune -C" utf8:strict "$got"
got=$(complete_words f2fscore-io --rw rand)
expect_has "io --rw rand" randwrite "$got"
got=$(complete_words f2fscore-fsck -C "")
expect_not "fsck -C (a number, not options)" --json "$got"
if ((fail)); then exit 1; fi
echo "PASS: bash completion of the tools"
