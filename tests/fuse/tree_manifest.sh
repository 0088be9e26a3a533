# tree_manifest.sh DIR: a manifest of the tree under DIR, one sorted line per
# fact: directories, regular files (mode, owner, link count, size, SHA-256),
# FIFOs, device nodes and symlink targets. Plain POSIX sh over find, stat,
# sha256sum and readlink, so that busybox in the Linux oracle and GNU
# coreutils on the host print the same lines for the same tree (the top
# directory itself, times and directory sizes left out).
cd "$1" || exit 1
{
  find . -mindepth 1 -type d -exec stat -c 'd %n %a %u %g' {} +
  find . -type f -exec stat -c 'f %n %a %u %g %h %s' {} +
  find . -type f -exec sha256sum {} +
  find . -type p -exec stat -c 'p %n %a %u %g' {} +
  find . \( -type c -o -type b \) -exec stat -c 'c %n %a %u %g %t:%T' {} +
  find . -type l | while read -r l; do echo "l $l -> $(readlink "$l")"; done
} | LC_ALL=C sort
