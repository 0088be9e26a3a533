#!/usr/bin/env bash
# programs.sh: real programs on an f2fscore-fuse mount. Each phase mounts a
# volume f2fscore-mkfs made, runs programs, unmounts (the daemon's final
# checkpoint), and checks that f2fscore-fsck and fsck.f2fs -f find it clean
# and that the tree read back by f2fscore-dump (not through the daemon)
# equals a reference made by the same programs on the host's file system:
#   1. tar: extract a source tarball, re-archive it; cp -a of a tree with
#      hard links, symlinks, user xattrs, a FIFO and a device node;
#   2. git init/add/commit of 3,000 files, a branch, checkouts back and
#      forth, then git fsck and a clean git status after a remount;
#   3. sqlite3: transactions in WAL and in rollback-journal mode, then
#      PRAGMA integrity_check and the sums after a remount;
#   4. stress-ng --class filesystem for a bounded time (when installed);
#   5. dbench with two clients for a bounded time, its files kept;
#   6. fio on files in the mount, the jobs side by side: random 4 KiB
#      writes with fsyncs, buffered; sequential O_DIRECT writes; sequential
#      buffered 1 MiB writes (whose buffers the daemon lends to the
#      writer's cache); each verified (crc32c) after writing and again
#      after a remount.
# Every phase's volume is then mounted by Linux in the oracle, read-only,
# and the tree Linux reads (tree_manifest.sh: types, modes, owners, link
# counts, sizes, SHA-256 of every file, symlink targets) must equal the
# tree f2fscore-dump extracts from the same image.
# First, the refusals: a second mount and fsck -y of the mounted image, a
# write on a read-only mount, an unknown mount option, --device before the
# operands; then a mount with no change leaves the image's bytes as they
# were. F2FSCORE_FUSE_PHASES
# picks phases by name: refusals tar git sqlite stress-ng dbench fio linux.
# Exit: 0 pass; 1 fail; 77 skip (a prerequisite missing; fails under
# F2FSCORE_REQUIRE_FUSE=1 or F2FSCORE_REQUIRE_ORACLE=1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_fuse tar git sqlite3 python3
oracle="${F2FSCORE_ORACLE:-$here/../../../shared/oracle/linux-f2fs}"
# F2FSCORE_FUSE_PHASES: the phases to run (default all of them).
phases="${F2FSCORE_FUSE_PHASES:-refusals tar git sqlite stress-ng dbench fio linux}"
want() { [[ " $phases " == *" $1 "* ]]; }

work=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-fuse-programs.XXXXXX")
FUSE_PID=
cleanup() {
  set +e
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && wait "$FUSE_PID" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
img="$work/img"
mnt="$work/mnt"
ref="$work/ref"
mkdir -p "$ref"

new_volume() {
  rm -f "$img"
  truncate -s "$1" "$img"
  "$MKFS" -q "$img" >/dev/null 2>&1 || "$MKFS" "$img" >/dev/null
}

# Compares the image's tree (extracted by f2fscore-dump) with `ref`.
compare_tree() {
  local what="$1"
  rm -rf "$work/out"
  mkdir -p "$work/out"
  "$DUMP" "$img" extract / "$work/out/root" >/dev/null 2>"$work/dump.log" || { cat "$work/dump.log" >&2; fail "$what: f2fscore-dump extract"; }
  manifest "$work/out/root" >"$work/m.img"
  manifest "$ref" >"$work/m.ref"
  if ! diff -u "$work/m.ref" "$work/m.img" >"$work/m.diff"; then
    head -40 "$work/m.diff" >&2
    fail "$what: the tree in the image differs from the reference"
  fi
  echo "ok: $what: the image's tree equals the reference ($(wc -l <"$work/m.ref") entries)"
}

# keep_for_linux NAME: keeps a copy of the (unmounted, checked) image for
# Linux to read at the end, with the manifest of the tree f2fscore-dump
# extracts from it.
mkdir -p "$work/linux" "$work/linux-out"
linux_images=()
keep_for_linux() {
  local name="$1"
  cp --sparse=always "$img" "$work/linux/$name.img"
  rm -rf "$work/out" && mkdir -p "$work/out"
  "$DUMP" "$img" extract / "$work/out/root" >/dev/null 2>"$work/dump.log" || { cat "$work/dump.log" >&2; fail "$name: f2fscore-dump extract"; }
  sh "$here/tree_manifest.sh" "$work/out/root" >"$work/linux/$name.ours" || fail "$name: the manifest of the extracted tree"
  rm -rf "$work/out"
  linux_images+=("$name")
}

# ---- 0. refusals: a mounted image, a read-only mount, a bad option ----------------------
if want refusals; then
  new_volume 128M
  fuse_mount "$img" "$mnt"
  mkdir -p "$work/mnt2"
  if "$FUSE" -f "$img" "$work/mnt2" 2>"$work/second.log"; then fail "a second mount of a mounted image was accepted"; fi
  grep -q "is mounted on" "$work/second.log" || { cat "$work/second.log" >&2; fail "the second mount's refusal does not say why"; }
  if "$FSCK" -y "$img" >"$work/fsck-y.log" 2>&1; then fail "f2fscore-fsck -y repaired a mounted image"; fi
  grep -q "is mounted on" "$work/fsck-y.log" || { cat "$work/fsck-y.log" >&2; fail "fsck -y's refusal does not name the mount"; }
  echo data >"$mnt/f"
  fuse_umount "$mnt"
  fuse_mount "$img" "$mnt" ro
  if (echo x >"$mnt/g") 2>/dev/null; then fail "a write on a read-only mount succeeded"; fi
  [[ "$(cat "$mnt/f")" == data ]] || fail "the read-only mount does not show the file"
  fuse_umount "$mnt"
  rc=0; "$FUSE" -f -o bogus "$img" "$mnt" 2>/dev/null || rc=$?
  [[ $rc == 2 ]] || fail "an unknown mount option exits $rc, not 2"
  # --device takes one path: the operands after it stay DEVICE and
  # MOUNTPOINT (this one-device volume then refuses the extra device).
  rc=0; "$FUSE" -f --device "$work/other.img" "$img" "$mnt" 2>"$work/device.log" || rc=$?
  grep -q "is a single-device volume" "$work/device.log" ||
    { cat "$work/device.log" >&2; fail "--device before the operands: exit $rc"; }
  check_clean "$img" "refusals"
  # A mount with no change (listing, reading, statfs) writes nothing at
  # fusermount3 -u: the image's bytes stay (the unmount checkpoint is
  # written only when something changed, as f2fs_put_super()).
  sum=$(cksum <"$img")
  fuse_mount "$img" "$mnt"
  ls -la "$mnt" >/dev/null
  [[ "$(cat "$mnt/f")" == data ]] || fail "the file reads otherwise after a remount"
  stat -f "$mnt" >/dev/null
  fuse_umount "$mnt"
  [[ "$(cksum <"$img")" == "$sum" ]] || fail "a mount with no change changed the image"
  echo "ok: a mount with no change left the image's bytes as they were"
fi

# ---- 1. tar and cp -a ------------------------------------------------------------------
if want tar; then
  new_volume 512M
  src="$work/src"
  mkdir -p "$src/tree"
  python3 - "$src/tree" <<'EOF'
import os, random, sys
r = random.Random(7)
root = sys.argv[1]
for d in range(30):
    dp = os.path.join(root, "d%02d" % d, "sub%d" % (d % 4))
    os.makedirs(dp, exist_ok=True)
    for f in range(25):
        size = r.choice([0, 1, 100, 3000, 4096, 5000, 70000, 300000])
        with open(os.path.join(dp, "f%03d.c" % f), "wb") as fh:
            fh.write(bytes(r.getrandbits(8) for _ in range(min(size, 2000))) * (size // 2000 + 1))
            fh.truncate(size)
EOF
  ln "$src/tree/d00/sub0/f000.c" "$src/tree/d01/hardlink"
  ln "$src/tree/d00/sub0/f000.c" "$src/tree/d02/hardlink2"
  ln -s ../d00/sub0/f001.c "$src/tree/d01/symlink"
  ln -s "$(printf 'x%.0s' $(seq 1 300))" "$src/tree/d01/long_symlink"
  mkfifo "$src/tree/d03/fifo"
  mknod "$src/tree/d03/chardev" c 1 3
  python3 -c "import os; os.setxattr('$src/tree/d00/sub0/f002.c', 'user.test', b'value'); os.setxattr('$src/tree/d04', 'user.dir', b'x'*200)"
  chmod 4755 "$src/tree/d00/sub0/f003.c"
  chown 1000:1000 "$src/tree/d00/sub0/f004.c"
  (cd "$src" && tar -cf "$work/src.tar" tree)
  # POSIX ACLs for cp -a (tar without --acls leaves them out): an access ACL
  # with a named user and group, a directory's default and access ACLs.
  python3 - "$src/tree" <<'EOF'
import os, struct, sys
def acl(*es):
    return struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, p, i & 0xffffffff) for t, p, i in es)
root = sys.argv[1]
os.setxattr(os.path.join(root, 'd05/sub1/f001.c'), 'system.posix_acl_access',
            acl((1, 6, -1), (2, 6, 1000), (4, 4, -1), (8, 4, 1001), (0x10, 6, -1), (0x20, 0, -1)))
os.setxattr(os.path.join(root, 'd06'), 'system.posix_acl_default',
            acl((1, 7, -1), (2, 5, 1000), (4, 5, -1), (0x10, 5, -1), (0x20, 0, -1)))
os.setxattr(os.path.join(root, 'd06'), 'system.posix_acl_access',
            acl((1, 7, -1), (2, 7, 1002), (4, 5, -1), (0x10, 7, -1), (0x20, 5, -1)))
EOF
  # Every entry's ACLs (hex), for comparing a tree on the mount with the host's.
  acl_manifest() {
    python3 - "$1" <<'EOF'
import os, sys
root = sys.argv[1]
for dp, dns, fns in sorted(os.walk(root)):
    for n in sorted(dns + fns):
        p = os.path.join(dp, n)
        if os.path.islink(p):
            continue
        for a in ('system.posix_acl_access', 'system.posix_acl_default'):
            try:
                print(os.path.relpath(p, root), a, os.getxattr(p, a).hex())
            except OSError:
                pass
EOF
  }

  fuse_mount "$img" "$mnt"
  (cd "$mnt" && tar -xpf "$work/src.tar") || fail "tar -x on the mount"
  (cd "$mnt" && tar -cf "$work/re.tar" tree) || fail "tar -c on the mount"
  cp -a "$src/tree" "$mnt/copy" || fail "cp -a to the mount"
  acl_manifest "$src/tree" >"$work/acl.src"
  acl_manifest "$mnt/copy" >"$work/acl.mnt"
  [[ $(wc -l <"$work/acl.src") -ge 3 ]] || fail "the source tree holds $(wc -l <"$work/acl.src") ACLs, not 3"
  diff -u "$work/acl.src" "$work/acl.mnt" >&2 || fail "cp -a: the ACLs on the mount differ from the source's"
  echo "ok: cp -a: $(wc -l <"$work/acl.src") POSIX ACLs on the mount equal the source's"
  fuse_umount "$mnt"
  (cd "$ref" && tar -xpf "$work/src.tar") && cp -a "$src/tree" "$ref/copy"
  # The re-archive holds the same tree as the original.
  mkdir -p "$work/re" && (cd "$work/re" && tar -xpf "$work/re.tar")
  diff <(manifest "$work/re/tree") <(manifest "$ref/tree") >/dev/null || fail "tar: the re-archived tree differs"
  echo "ok: tar: extracted and re-archived $(tar -tf "$work/src.tar" | wc -l) entries"
  check_clean "$img" "tar and cp -a"
  compare_tree "tar and cp -a"
  keep_for_linux tar
fi

# ---- 2. git --------------------------------------------------------------------------------
if want git; then
  new_volume 512M
  rm -rf "$ref" && mkdir -p "$ref"
  export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e
  export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
  gen_repo_files() {
    python3 - "$1" "$2" <<'EOF'
import os, sys
root, gen = sys.argv[1], int(sys.argv[2])
for i in range(3000):
    d = os.path.join(root, "m%02d" % (i % 60))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "file%04d.txt" % i), "w") as f:
        f.write(("line %d of file %d generation %d\n" % (0, i, gen)) * (1 + i % 40))
EOF
  }
  git_work() {
    local d="$1"
    mkdir -p "$d/repo"
    (
      cd "$d/repo"
      git init -q -b main .
      git config core.fsyncMethod fsync 2>/dev/null || true
      git config gc.auto 0  # no detached gc holding the mount busy
      git config maintenance.auto false
      gen_repo_files . 0
      git add -A && git commit -qm first
      git checkout -q -b second
      gen_repo_files . 1
      git rm -q -r -f m00 && git add -A && git commit -qm second
      git checkout -q main
      git checkout -q second
      git checkout -q main
    )
  }
  fuse_mount "$img" "$mnt"
  git_work "$mnt" || fail "git on the mount"
  fuse_umount "$mnt"
  fuse_mount "$img" "$mnt"
  (cd "$mnt/repo" && git fsck --full --no-progress >/dev/null) || fail "git fsck on the remounted volume"
  [[ -z "$(cd "$mnt/repo" && git status --porcelain)" ]] || fail "git status is not clean after a remount"
  [[ "$(cd "$mnt/repo" && git rev-parse main second)" == "$(git_work "$ref" >/dev/null; cd "$ref/repo" && git rev-parse main second)" ]] ||
    fail "git: commit ids differ from the reference"
  fuse_umount "$mnt"
  check_clean "$img" "git"
  # The work tree (.git holds stat data, inode numbers and times).
  rm -rf "$ref/repo/.git"
  compare_tree_git() {
    rm -rf "$work/out" && mkdir -p "$work/out"
    "$DUMP" "$img" extract /repo "$work/out/repo" >/dev/null 2>"$work/dump.log" || fail "git: f2fscore-dump extract"
    rm -rf "$work/out/repo/.git"
    diff <(manifest "$work/out/repo") <(manifest "$ref/repo") >"$work/m.diff" || { head -20 "$work/m.diff" >&2; fail "git: work tree differs"; }
    echo "ok: git: 3,000-file work tree in the image equals the reference"
  }
  compare_tree_git
  keep_for_linux git
fi

# ---- 3. sqlite3 ---------------------------------------------------------------------------------
if want sqlite; then
  new_volume 256M
  sql_work() {
    local db="$1" mode="$2"
    {
      echo "PRAGMA journal_mode=$mode;"
      echo "PRAGMA synchronous=FULL;"
      echo "CREATE TABLE t(id INTEGER PRIMARY KEY, x INTEGER, s TEXT);"
      for b in $(seq 0 199); do
        echo "BEGIN;"
        for i in $(seq 0 9); do echo "INSERT INTO t(x, s) VALUES ($((b * 10 + i)), printf('%0200d', $b));"; done
        echo "UPDATE t SET x = x + 1 WHERE id % 7 = $((b % 7));"
        [[ $((b % 10)) == 9 ]] && echo "DELETE FROM t WHERE id % 13 = 0;"
        echo "COMMIT;"
      done
      echo "BEGIN; INSERT INTO t(x, s) VALUES (-1, 'rolled back'); ROLLBACK;"
    } | sqlite3 "$db" >/dev/null
  }
  fuse_mount "$img" "$mnt"
  sql_work "$mnt/wal.db" WAL || fail "sqlite3 (WAL) on the mount"
  sql_work "$mnt/journal.db" DELETE || fail "sqlite3 (rollback journal) on the mount"
  fuse_umount "$mnt"
  sql_work "$work/ref-wal.db" WAL
  sql_work "$work/ref-journal.db" DELETE
  check_clean "$img" "sqlite3"
  fuse_mount "$img" "$mnt" ro
  for m in wal journal; do
    got=$(sqlite3 "file:$mnt/$m.db?immutable=1" "PRAGMA integrity_check; SELECT count(*), sum(x), sum(length(s)) FROM t;")
    want=$(sqlite3 "$work/ref-$m.db" "PRAGMA integrity_check; SELECT count(*), sum(x), sum(length(s)) FROM t;")
    [[ "$got" == "$want" ]] || fail "sqlite3 $m: '$got' after a remount, '$want' on the host"
    echo "ok: sqlite3 $m: integrity ok and the same rows as the reference ($(echo "$got" | tail -1))"
  done
  fuse_umount "$mnt"
  keep_for_linux sqlite
fi

# ---- 4. stress-ng ---------------------------------------------------------------------------------
if want stress-ng; then
  if command -v stress-ng >/dev/null; then
    new_volume 512M
    fuse_mount "$img" "$mnt"
    mkdir -p "$mnt/stress"
    # The filesystem class's stressors that run on any file system (no
    # inode flags, FIEMAP, notify or locks), 2 s each, one after another.
    (cd "$mnt/stress" && timeout 300 stress-ng --temp-path "$mnt/stress" --sequential 1 --timeout 2 \
        --dir 1 --dentry 1 --link 1 --symlink 1 --rename 1 --hdd 1 --hdd-bytes 16M --fallocate 1 --fallocate-bytes 16M \
        --seek 1 --seek-size 16M --utime 1 --filename 1 --xattr 1 --fsize 1 --chmod 1 --chown 1 --open 1 \
        --sync-file 1 --sync-file-bytes 16M >"$work/stress.log" 2>&1) || true
    if fuse_daemon_dead; then
      tail -20 "$work/stress.log" >&2
      fail "f2fscore-fuse died during stress-ng"
    fi
    rm -rf "$mnt/stress"
    fuse_umount "$mnt"
    if grep -qE 'fail:|unsuccessful run' "$work/stress.log" || ! grep -q 'successful run completed' "$work/stress.log"; then
      grep -E 'fail|error' "$work/stress.log" | head -20 >&2
      fail "stress-ng reported failures"
    fi
    echo "ok: stress-ng: $(grep -o 'successful run completed.*' "$work/stress.log")"
    check_clean "$img" "stress-ng"
    keep_for_linux stress-ng
  elif [[ "${F2FSCORE_REQUIRE_FUSE:-0}" == 1 ]]; then
    fail "stress-ng not installed"
  fi
fi

# ---- 5. dbench ----------------------------------------------------------------------------------
if want dbench; then
  if command -v dbench >/dev/null; then
    new_volume 512M
    fuse_mount "$img" "$mnt"
    # Two clients of the NetBench load for 8 s; --skip-cleanup keeps their
    # files for the checkers and for Linux.
    timeout 120 dbench -D "$mnt" -t 8 --skip-cleanup 2 >"$work/dbench.log" 2>&1 || { tail -20 "$work/dbench.log" >&2; fail "dbench on the mount"; }
    fuse_daemon_dead && fail "f2fscore-fuse died during dbench"
    fuse_umount "$mnt"
    grep -q '^Throughput' "$work/dbench.log" || { tail -20 "$work/dbench.log" >&2; fail "dbench did not finish"; }
    echo "ok: dbench: $(grep '^Throughput' "$work/dbench.log")"
    check_clean "$img" "dbench"
    keep_for_linux dbench
  elif [[ "${F2FSCORE_REQUIRE_FUSE:-0}" == 1 ]]; then
    fail "dbench not installed"
  fi
fi

# ---- 6. fio -------------------------------------------------------------------------------------
if want fio; then
  if command -v fio >/dev/null; then
    new_volume 512M
    # fio_jobs [--verify_only]: the jobs, each verifying its blocks (crc32c
    # headers with the offset and the job's seed) after writing them.
    fio_jobs() {
      fio --output="$work/fio.log" --directory="$mnt" --verify=crc32c --verify_fatal=1 --verify_state_save=0 --ioengine=psync "$@" \
        --name=randfsync --filename=rand.dat --size=48m --bs=4k --rw=randwrite --fsync=32 --randrepeat=1 \
        --name=seqdirect --filename=seq.dat --size=64m --bs=256k --rw=write --direct=1 --end_fsync=1 \
        --name=seqbuffered --filename=big.dat --size=96m --bs=1m --rw=write --end_fsync=1 2>>"$work/fio.log"
    }
    fuse_mount "$img" "$mnt"
    fio_jobs || { tail -30 "$work/fio.log" >&2; fail "fio on the mount"; }
    fuse_umount "$mnt"
    # (fio opens the files read-write also to verify them)
    fuse_mount "$img" "$mnt"
    fio_jobs --verify_only || { tail -30 "$work/fio.log" >&2; fail "fio: the data read after a remount fails verification"; }
    fuse_umount "$mnt"
    echo "ok: fio: random 4 KiB writes with fsyncs, O_DIRECT and buffered 1 MiB sequential writes verified, also after a remount"
    check_clean "$img" "fio"
    keep_for_linux fio
  elif [[ "${F2FSCORE_REQUIRE_FUSE:-0}" == 1 ]]; then
    fail "fio not installed"
  fi
fi

# ---- Linux reads every volume ---------------------------------------------------------------------
if want linux && [[ ${#linux_images[@]} -gt 0 ]]; then
  if [[ -x "$oracle" ]]; then
    mkdir -p "$work/in"
    cp "$here/tree_manifest.sh" "$work/in/"
    {
      echo 'set -e'
      letters=abcdefghijklmnop
      i=0
      for name in "${linux_images[@]}"; do
        dev=/dev/vd${letters:$i:1}
        echo "mount -t f2fs -o ro $dev /mnt"
        echo "sh /in/tree_manifest.sh /mnt >/out/$name.linux"
        echo "umount /mnt"
        i=$((i + 1))
      done
      echo 'echo linux-manifests-done'
    } >"$work/guest.sh"
    imgs=()
    for name in "${linux_images[@]}"; do imgs+=("$work/linux/$name.img"); done
    "$oracle" --in "$work/in" --out "$work/linux-out" --timeout 600 "$work/guest.sh" "${imgs[@]}" >"$work/linux.log" 2>&1 &&
      grep -q linux-manifests-done "$work/linux.log" || { tail -20 "$work/linux.log" >&2; fail "Linux could not mount and read the volumes"; }
    for name in "${linux_images[@]}"; do
      diff -u "$work/linux/$name.ours" "$work/linux-out/$name.linux" >"$work/linux.diff" ||
        { head -40 "$work/linux.diff" >&2; fail "$name: the tree Linux reads differs from the one f2fscore-dump extracts"; }
      echo "ok: Linux reads the $name volume as we do ($(wc -l <"$work/linux/$name.ours") manifest lines)"
    done
  elif [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    fail "the Linux oracle is missing: $oracle"
  else
    echo "SKIP (part): no Linux oracle at $oracle"
  fi
fi

echo "PASS: programs on f2fscore-fuse"
