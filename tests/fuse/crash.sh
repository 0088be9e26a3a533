#!/usr/bin/env bash
# crash.sh: kill -9 of f2fscore-fuse in the middle of a workload with
# fsyncs. A writer process makes files, writes them (some rewritten, some
# appended), fsyncs or fdatasyncs each and records it in a log on the host
# only after the call returned; the daemon is killed with SIGKILL while it
# runs (no checkpoint). Then, for several rounds: a new mount (which rolls
# the fsynced node chains forward), every file the log names holds exactly
# its recorded content, f2fscore-fsck and fsck.f2fs -f are clean. With the
# Linux oracle (../shared/oracle/linux-f2fs), Linux mounts a copy of the
# killed image (rolling it forward itself) and its tree's checksums equal
# ours.
# Exit: 0 pass; 1 fail; 77 skip (fails under F2FSCORE_REQUIRE_FUSE=1 or
# F2FSCORE_REQUIRE_ORACLE=1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_fuse python3

work=$(mktemp -d "${TMPDIR:-/tmp}/f2fscore-fuse-crash.XXXXXX")
FUSE_PID=
cleanup() {
  set +e
  mountpoint -q "$work/mnt" 2>/dev/null && fusermount3 -u "$work/mnt" 2>/dev/null
  [[ -n "$FUSE_PID" ]] && { kill -9 "$FUSE_PID" 2>/dev/null; wait "$FUSE_PID" 2>/dev/null; }
  rm -rf "$work"
}
trap cleanup EXIT
img="$work/img"
mnt="$work/mnt"
oracle="${F2FSCORE_ORACLE:-$here/../../../shared/oracle/linux-f2fs}"
truncate -s 256M "$img"
"$MKFS" "$img" >/dev/null

# The workload: file i of generation g (a new name, a deterministic
# pattern, never changed afterwards) is fsynced (even i) or fdatasynced
# (odd i); the log line is written after the call returned.
cat >"$work/load.py" <<'EOF'
import os, sys, random
root, log, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
def content(i, g):
    n = (i * 7919 + g * 104729) % 60000 + 1
    unit = ("%d:%d;" % (i, g)).encode()
    return (unit * (n // len(unit) + 1))[:n]
os.makedirs(os.path.join(root, "d%d" % seed), exist_ok=True)
with open(log, "a") as lg:
    g = 0
    while True:
        g += 1
        for i in range(40):
            p = os.path.join(root, "d%d" % seed, "f%03d.g%d" % (i, g))
            data = content(i, g)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, data)
            if i % 2 == 0: os.fsync(fd)
            else: os.fdatasync(fd)
            os.close(fd)
            lg.write("%s %d %d\n" % (os.path.relpath(p, root), i, g)); lg.flush()
EOF
cat >"$work/verify.py" <<'EOF'
import os, sys
root, log = sys.argv[1], sys.argv[2]
def content(i, g):
    n = (i * 7919 + g * 104729) % 60000 + 1
    unit = ("%d:%d;" % (i, g)).encode()
    return (unit * (n // len(unit) + 1))[:n]
last = {}
for line in open(log):
    parts = line.split()
    if len(parts) != 3: continue
    last[parts[0]] = (int(parts[1]), int(parts[2]))
bad = 0
for rel, (i, g) in sorted(last.items()):
    p = os.path.join(root, rel)
    try: got = open(p, "rb").read()
    except OSError as e:
        print("missing %s (generation %d fsynced): %s" % (rel, g, e)); bad += 1; continue
    if got != content(i, g):
        print("%s: %d bytes, not what was fsynced (%d bytes)" % (rel, len(got), len(content(i, g)))); bad += 1
print("verified %d files" % len(last))
sys.exit(1 if bad else 0)
EOF

for round in 1 2 3; do
  log="$work/log"
  fuse_mount "$img" "$mnt"
  python3 "$work/load.py" "$mnt" "$log" "$round" 2>"$work/load.err" &
  load=$!
  sleep "$((2 + round))"
  kill -9 "$FUSE_PID"
  wait "$FUSE_PID" 2>/dev/null || true
  FUSE_LOG=
  kill "$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
  fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
  [[ $(wc -l <"$log") -gt 0 ]] || fail "round $round: the workload recorded no fsync before the kill"
  cp --sparse=always "$img" "$work/killed.img"
  # A new mount rolls the fsynced chains forward.
  fuse_mount "$img" "$mnt"
  python3 "$work/verify.py" "$mnt" "$log" || fail "round $round: an fsynced file is not intact after the remount"
  fuse_umount "$mnt"
  check_clean "$img" "round $round (killed after $(wc -l <"$log") fsyncs in all)"
done

# Linux rolls the last killed image forward: the same files, the same bytes.
if [[ -x "$oracle" ]]; then
  cat >"$work/guest.sh" <<'EOF'
mount -t f2fs /dev/vda /mnt || exit 3
cd /mnt && find . -type f | sort | while read f; do echo "$(md5sum < "$f" | cut -c1-32) $f"; done
cd /; umount /mnt
EOF
  "$oracle" --timeout 300 "$work/guest.sh" "$work/killed.img" >"$work/linux.out" 2>&1 || { tail -20 "$work/linux.out" >&2; fail "Linux could not mount the killed image"; }
  cp --sparse=always "$work/killed.img" "$work/ours.img"
  fuse_mount "$work/ours.img" "$mnt"
  (cd "$mnt" && find . -type f | sort | while read -r f; do echo "$(md5sum <"$f" | cut -c1-32) $f"; done) >"$work/ours.out"
  fuse_umount "$mnt"
  grep -E '^[0-9a-f]{32} \./' "$work/linux.out" >"$work/linux.sums" || true
  diff "$work/linux.sums" "$work/ours.out" >"$work/sums.diff" || { head -20 "$work/sums.diff" >&2; fail "Linux's roll-forward and ours differ"; }
  echo "ok: Linux rolls the killed image forward to the same $(wc -l <"$work/ours.out") files"
elif [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
  fail "the Linux oracle is missing: $oracle"
else
  echo "SKIP (part): no Linux oracle at $oracle"
fi
echo "PASS: kill -9 of f2fscore-fuse"
