# Shared by the tests of f2fscore-fuse (tests/fuse/*.sh): prerequisites,
# mounting and unmounting, the two checkers, manifests of a tree.
# Environment: F2FSCORE_MKFS, F2FSCORE_FUSE, F2FSCORE_FSCK, F2FSCORE_DUMP
# (the tools); F2FSCORE_REQUIRE_FUSE=1 (CI): a missing prerequisite fails
# instead of skipping (exit 77).

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MKFS="${F2FSCORE_MKFS:?F2FSCORE_MKFS names f2fscore-mkfs}"
FUSE="${F2FSCORE_FUSE:?F2FSCORE_FUSE names f2fscore-fuse}"
FSCK="${F2FSCORE_FSCK:?F2FSCORE_FSCK names f2fscore-fsck}"
DUMP="${F2FSCORE_DUMP:?F2FSCORE_DUMP names f2fscore-dump}"

skip() {
  if [[ "${F2FSCORE_REQUIRE_FUSE:-0}" == 1 || "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    echo "FAIL: $* (required: F2FSCORE_REQUIRE_FUSE/ORACLE=1)" >&2
    exit 1
  fi
  echo "SKIP: $*" >&2
  exit 77
}
# True when the daemon FUSE_PID has ended (gone, or a zombie not yet
# waited for).
fuse_daemon_dead() {
  [[ -n "${FUSE_PID:-}" ]] || return 1
  [[ -e "/proc/$FUSE_PID/stat" ]] || return 0
  [[ "$(awk '{print $3}' "/proc/$FUSE_PID/stat" 2>/dev/null)" == Z ]]
}
# A failure; when the daemon of the current mount has died, its log too
# (the signal and backtrace it printed).
fail() {
  echo "FAIL: $*" >&2
  if [[ -n "${FUSE_LOG:-}" ]] && fuse_daemon_dead; then
    local rc=0
    wait "$FUSE_PID" 2>/dev/null || rc=$?
    echo "f2fscore-fuse (pid $FUSE_PID) has ended (status $rc); the end of its log $FUSE_LOG:" >&2
    tail -60 "$FUSE_LOG" >&2 2>/dev/null || true
  fi
  exit 1
}

need_fuse() {
  [[ -c /dev/fuse ]] || skip "no /dev/fuse"
  [[ $(id -u) == 0 ]] || skip "needs root (allow_other, mknod, chown)"
  command -v fusermount3 >/dev/null || skip "fusermount3 not installed (apt-get install fuse3)"
  for p in "$@"; do command -v "$p" >/dev/null || skip "$p not installed"; done
}

# mount IMAGE DIR [OPTIONS]: in the foreground, in the background of this
# shell; FUSE_PID is the daemon. Waits until DIR is the mount.
fuse_mount() {
  local img="$1" dir="$2" opts="${3:-}"
  mkdir -p "$dir"
  "$FUSE" -f -o "allow_other${opts:+,$opts}" "$img" "$dir" 2>"$dir.log" &
  FUSE_PID=$!
  FUSE_LOG="$dir.log"
  for _ in $(seq 1 100); do
    if mountpoint -q "$dir"; then return 0; fi
    fuse_daemon_dead && fail "f2fscore-fuse exited before mounting $img"
    sleep 0.1
  done
  fail "$img did not mount on $dir"
}

# unmount DIR: fusermount3 -u, then the daemon's final checkpoint (its
# exit status must be 0).
fuse_umount() {
  local dir="$1"
  local tries=0
  # A program that just exited may still hold the mount for a moment.
  until fusermount3 -u "$dir" 2>/dev/null; do
    tries=$((tries + 1))
    [[ $tries -lt 50 ]] || { fusermount3 -u "$dir"; fail "fusermount3 -u $dir"; }
    sleep 0.2
  done
  local rc=0
  wait "$FUSE_PID" || rc=$?
  FUSE_LOG=
  [[ $rc == 0 ]] || { cat "$dir.log" >&2; fail "f2fscore-fuse exited $rc at unmount"; }
}

# Both checkers clean on IMAGE (fsck.f2fs -f on a copy).
check_clean() {
  local img="$1" what="$2"
  "$FSCK" "$img" >"$img.fsck.log" 2>&1 || { cat "$img.fsck.log" >&2; fail "$what: f2fscore-fsck not clean"; }
  if command -v fsck.f2fs >/dev/null; then
    FSCK_CLEAN_QUIET=0 "$here/../interop/fsck_clean.sh" "$img" >"$img.fsckf2fs.log" 2>&1 ||
      { tail -40 "$img.fsckf2fs.log" >&2; fail "$what: fsck.f2fs -f not clean"; }
  elif [[ "${F2FSCORE_REQUIRE_FSCK:-0}" == 1 ]]; then
    fail "fsck.f2fs not installed"
  fi
  echo "ok: $what: f2fscore-fsck and fsck.f2fs -f clean"
}

# A manifest of a tree: per entry its path, type, mode, size, link count
# (within the tree), symlink target, content hash, user xattrs. Times and
# inode numbers are left out; `dirsize` 0 leaves directory sizes out too.
manifest() {
  python3 - "$1" <<'EOF'
import hashlib, os, stat, sys
root = sys.argv[1]
links = {}
rows = []
for dp, dns, fns in os.walk(root):
    dns.sort()
    for n in sorted(dns + fns):
        p = os.path.join(dp, n)
        st = os.lstat(p)
        rel = os.path.relpath(p, root)
        row = [rel, oct(st.st_mode), str(st.st_uid), str(st.st_gid)]
        if stat.S_ISREG(st.st_mode):
            h = hashlib.sha256(open(p, 'rb').read()).hexdigest()[:16]
            row += [str(st.st_size), h, "nlink=%d" % st.st_nlink]
        elif stat.S_ISLNK(st.st_mode):
            row += ["->" + os.readlink(p)]
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            row += ["rdev=%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))]
        if not stat.S_ISLNK(st.st_mode):
            try:
                xs = sorted(x for x in os.listxattr(p) if x.startswith("user."))
                row += ["%s=%s" % (x, os.getxattr(p, x).hex()) for x in xs]
            except OSError:
                pass
        rows.append(" ".join(row))
print("\n".join(rows))
EOF
}
