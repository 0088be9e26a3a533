#!/usr/bin/env bash
# fuse_bench.sh: f2fscore-fuse side by side with fuse2fs (e2fsprogs' FUSE
# mount of ext4) and with the raw disk (fio on a file in the same
# directory), both file systems on an image of the same size in the same
# directory (the same disk), the same workloads, one after the other,
# ROUNDS times alternating; prints each run and the median of each line,
# with the ratio ours / fuse2fs (for times: fuse2fs / ours, so above 1
# means ours is better everywhere) and ours / raw for sequential I/O.
#   seq_write    512 MiB of 1 MiB writes, then fsync                     MB/s
#   seq_read     that file after a remount, the host's page cache of the
#                image kept (measures the daemon)                        MB/s
#   seq_read_cold  the same after dropping the host's page cache (the
#                disk's speed; needs root, else not measured)            MB/s
#   rand_fsync   4 KiB writes at random offsets of a 64 MiB file, fsync
#                after each                                              IOPS
#   meta         create, stat and unlink 10,000 files (the three phases'
#                total)                                                   files/s
#   tar_x        tar -x of a source tree (this repository's libf2fscore
#                and tests)                                               s
#   sqlite       SQLite (Python's sqlite3 module) in rollback-journal mode,
#                synchronous=FULL: 400 transactions, each updating 4 random
#                rows of a 20,000-row table (16 MiB): transactions/s; for
#                ours under ipu_policy=0 (every overwrite out of place) and
#                ipu_policy=16 (F2FS_IPU_FSYNC, the kernel's default), each
#                with and without fdatasync_in_place; then the same in
#                WAL mode (journal_mode=WAL: no journal made and removed,
#                so no directory fsync, per transaction), ours with
#                ipu_policy=16
#   raw          fio --ioengine=psync on a file in DIR: 512 MiB of 1 MiB
#                writes and --end_fsync=1, then 1 MiB reads after dropping
#                the page cache                                          MB/s
#   null         seq_write on f2fscore-fuse-null (bench/fuse/fuse_null.cpp:
#                the same FUSE setup and request loop, no file system):
#                writes answered at once, and answered after one copy of
#                the data; what FUSE itself lets a daemon reach here     MB/s
# Both images are written whole and synced before each mkfs (no sparse
# file: see new_fs()), and both mkfs run without discard.
# usage: bench/fuse_bench.sh [ROUNDS (default 3)]
# Environment: BUILD (default build), DIR (default /tmp: where the images go),
# SIZE (default 2G), OURS_OPTS (more -o options for f2fscore-fuse, e.g.
# nopin_receiver).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build}"
rounds="${1:-3}"
dir="${DIR:-/tmp}"
size="${SIZE:-2G}"
size_bytes=$(numfmt --from=iec "$size")
fuse="$build/tools/fuse/f2fscore-fuse"
null="$build/bench/f2fscore-fuse-null"  # optional (a build with F2FSCORE_BUILD_BENCH=ON)
mkfs="$build/tools/mkfs/f2fscore-mkfs"
for t in "$fuse" "$mkfs"; do [[ -x "$t" ]] || { echo "missing $t (build first)" >&2; exit 1; }; done
command -v fuse2fs >/dev/null || { echo "fuse2fs not installed (apt-get install fuse2fs)" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio not installed (apt-get install fio)" >&2; exit 1; }
drop_caches() { sync; [[ -w /proc/sys/vm/drop_caches ]] && echo 3 >/proc/sys/vm/drop_caches; }
work=$(mktemp -d "$dir/fuse-bench.XXXXXX")
pid=
cleanup() {
  set +e
  mountpoint -q "$work/mnt" && fusermount3 -u "$work/mnt"
  [[ -n "$pid" ]] && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt"
(cd "$root" && tar -cf "$work/src.tar" libf2fscore tests)

seq_write() {  # file -> MB/s of 512 MiB of 1 MiB writes, then fsync
  python3 - "$1" <<'EOF'
import os, sys, time
b = b"\x5a" * (1 << 20)
t = time.monotonic()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for _ in range(512): os.write(fd, b)
os.fsync(fd); os.close(fd)
print("%.1f" % (512 / (time.monotonic() - t)))
EOF
}

null_one() {  # -> "no_op one_copy": seq_write on f2fscore-fuse-null, MB/s
  if [[ ! -x "$null" ]]; then echo "nan nan"; return; fi
  local out="" m
  for m in "" --copy; do
    "$null" $m "$work/mnt" 2>"$work/null.log" &
    pid=$!
    for _ in $(seq 1 200); do mountpoint -q "$work/mnt" && break; sleep 0.05; done
    out+=" $(seq_write "$work/mnt/f")"
    umount_fs
  done
  echo $out
}

mount_fs() {  # kind [ours' extra -o options]
  if [[ $1 == ours ]]; then
    "$fuse" -f -o "allow_other${OURS_OPTS:+,$OURS_OPTS}${2:+,$2}" "$work/ours.img" "$work/mnt" 2>"$work/ours.log" &
  else
    fuse2fs -f -o allow_other,fakeroot "$work/ext4.img" "$work/mnt" >"$work/ext4.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 200); do mountpoint -q "$work/mnt" && return 0; sleep 0.05; done
  echo "mount of $1 failed" >&2; exit 1
}
umount_fs() { fusermount3 -u "$work/mnt"; wait "$pid"; pid=; }

seq_read() {  # file -> MB/s of 1 MiB reads
  python3 - "$1" <<'EOF'
import os, sys, time
t = time.monotonic()
fd = os.open(sys.argv[1], os.O_RDONLY); n = 0
while True:
    r = os.read(fd, 1 << 20)
    if not r: break
    n += len(r)
os.close(fd)
print("%.1f" % (n / (1 << 20) / (time.monotonic() - t)))
EOF
}

# A fresh file system of KIND on an image of $size whose every block has
# been written and synced first, as a partition's are: in a sparse image
# file the host allocates blocks, and an fsync writes the host's metadata
# too, the first time each block is written, which a log-structured file
# system does far more often than one that rewrites in place. Neither mkfs
# discards (a discard punches the holes back into an image file).
new_fs() {  # kind
  rm -f "$work/ours.img" "$work/ext4.img"
  dd if=/dev/zero of="$work/$1.img" bs=4M count=$((size_bytes / (4 << 20))) conv=fsync status=none
  if [[ $1 == ours ]]; then "$mkfs" -t 0 "$work/ours.img" >/dev/null; else mkfs.ext4 -q -F -E nodiscard "$work/ext4.img"; fi
}

sqlite_tps() {  # kind journal_mode [ours' options] -> transactions/s
  new_fs "$1"
  mount_fs "$1" "${3:-}"
  python3 - "$work/mnt/bench.db" "$2" <<'EOF'
import random, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=" + sys.argv[2]); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
db.execute("BEGIN")
for i in range(20000): db.execute("INSERT INTO t VALUES (?, ?)", (i, bytes(700)))
db.execute("COMMIT")
r = random.Random(1); n = 400
t = time.monotonic()
for _ in range(n):
    db.execute("BEGIN")
    for _ in range(4): db.execute("UPDATE t SET v = ? WHERE id = ?", (r.randbytes(700), r.randrange(20000)))
    db.execute("COMMIT")
print("%.0f" % (n / (time.monotonic() - t)))
db.close()
EOF
  umount_fs
}

raw_one() {  # -> "seq_write seq_read_cold" of fio on a file in DIR, MB/s
  local w r
  rm -f "$work/raw.dat"
  w=$(fio --name=w --filename="$work/raw.dat" --rw=write --bs=1m --size=512m --ioengine=psync --end_fsync=1 \
        --output-format=json | python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]['write']; print('%.1f' % (j['bw_bytes'] / 2**20))")
  r=nan
  if [[ -w /proc/sys/vm/drop_caches ]]; then
    drop_caches
    r=$(fio --name=r --filename="$work/raw.dat" --rw=read --bs=1m --size=512m --ioengine=psync \
          --output-format=json | python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]['read']; print('%.1f' % (j['bw_bytes'] / 2**20))")
  fi
  rm -f "$work/raw.dat"
  echo "$w $r"
}

run_one() {  # kind -> "seq_write seq_read seq_read_cold rand_fsync meta tar_x"
  local kind=$1
  new_fs "$kind"
  mount_fs "$kind"
  local sw sr src rf meta tx
  sw=$(seq_write "$work/mnt/big")
  umount_fs
  mount_fs "$kind"
  sr=$(seq_read "$work/mnt/big")
  src=nan
  if [[ -w /proc/sys/vm/drop_caches ]]; then
    umount_fs
    drop_caches
    mount_fs "$kind"
    src=$(seq_read "$work/mnt/big")
  fi
  rf=$(python3 - "$work/mnt/rand" <<'EOF'
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"\0" * (64 << 20)); os.fsync(fd)
r = random.Random(1); b = b"\xa5" * 4096; n = 1000
t = time.monotonic()
for _ in range(n):
    os.pwrite(fd, b, r.randrange(0, 16384) * 4096); os.fsync(fd)
print("%.0f" % (n / (time.monotonic() - t)))
os.close(fd)
EOF
)
  meta=$(python3 - "$work/mnt/meta" <<'EOF'
import os, sys, time
d = sys.argv[1]; os.mkdir(d); n = 10000
t = time.monotonic()
for i in range(n): os.close(os.open("%s/f%05d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o644))
for i in range(n): os.stat("%s/f%05d" % (d, i))
for i in range(n): os.unlink("%s/f%05d" % (d, i))
print("%.0f" % (3 * n / (time.monotonic() - t)))
EOF
)
  mkdir -p "$work/mnt/tar"
  local t0 t1
  t0=$(date +%s.%N)
  tar -xf "$work/src.tar" -C "$work/mnt/tar"
  sync -f "$work/mnt/tar" 2>/dev/null || true
  t1=$(date +%s.%N)
  tx=$(python3 -c "print('%.2f' % ($t1 - $t0))")
  umount_fs
  echo "$sw $sr $src $rf $meta $tx"
}

echo "# $(date -u +%F) $(nproc) cores, $(uname -r), images of $size in $dir; rounds: $rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# fs: kind seq_write_MBps seq_read_MBps seq_read_cold_MBps rand4k_fsync_IOPS meta_files_per_s tar_x_s"
echo "# sqlite: ours ipu_policy=0 ipu_policy=0+fdatasync_in_place ipu_policy=16 ipu_policy=16+fdatasync_in_place; ext4 (tx/s)"
echo "# sqlitewal: ours ipu_policy=16; ext4 (tx/s, journal_mode=WAL)"
echo "# raw: seq_write_MBps seq_read_cold_MBps"
echo "# null: seq_write_MBps of f2fscore-fuse-null answering at once, after one copy"
: >"$work/results"
for r in $(seq 1 "$rounds"); do
  for kind in ours ext4; do
    line=$(run_one "$kind")
    echo "fs $kind $line" | tee -a "$work/results"
  done
  line=""
  for o in ipu_policy=0 ipu_policy=0,fdatasync_in_place ipu_policy=16 ipu_policy=16,fdatasync_in_place; do
    line+=" $(sqlite_tps ours DELETE "$o")"
  done
  echo "sqlite ours$line" | tee -a "$work/results"
  echo "sqlite ext4 $(sqlite_tps ext4 DELETE)" | tee -a "$work/results"
  echo "sqlitewal ext4 $(sqlite_tps ext4 WAL)" | tee -a "$work/results"
  echo "sqlitewal ours $(sqlite_tps ours WAL ipu_policy=16)" | tee -a "$work/results"
  echo "raw raw $(raw_one)" | tee -a "$work/results"
  echo "null null $(null_one)" | tee -a "$work/results"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/results" <<'EOF'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(group, kind, i):
    v = [float(r[2 + i]) for r in rows if r[0] == group and r[1] == kind]
    v = [x for x in v if not math.isnan(x)]
    return statistics.median(v) if v else float("nan")
names = ["seq_write MB/s", "seq_read MB/s (page cache warm)", "seq_read MB/s (cold)", "4k rand write+fsync IOPS",
         "create/stat/unlink files/s", "tar -x s"]
raw_w, raw_r = med("raw", "raw", 0), med("raw", "raw", 1)
print("# median ours, median fuse2fs, ratio (above 1: ours better), ours / raw disk")
for i, n in enumerate(names):
    o = med("fs", "ours", i); e = med("fs", "ext4", i)
    ratio = (e / o) if i == 5 else (o / e)
    raw = {0: raw_w, 2: raw_r}.get(i)
    print("%-34s %10.2f %10.2f %6.2f %s" % (n, o, e, ratio, ("%6.2f" % (o / raw)) if raw else ""))
e = med("sqlite", "ext4", 0)
for i, n in enumerate(["ipu_policy=0", "ipu_policy=0,fdatasync_in_place", "ipu_policy=16", "ipu_policy=16,fdatasync_in_place"]):
    o = med("sqlite", "ours", i)
    print("%-34s %10.2f %10.2f %6.2f" % ("sqlite tx/s " + n, o, e, o / e))
o = med("sqlitewal", "ours", 0); e = med("sqlitewal", "ext4", 0)
print("%-34s %10.2f %10.2f %6.2f" % ("sqlite WAL tx/s ipu_policy=16", o, e, o / e))
print("%-34s %10.2f %10.2f" % ("raw disk (fio) write / cold read", raw_w, raw_r))
n0, n1 = med("null", "null", 0), med("null", "null", 1)
print("# FUSE alone (f2fscore-fuse-null), seq_write MB/s and / raw disk: what any daemon can reach here")
print("%-34s %10.2f %6.2f" % ("answered at once", n0, n0 / raw_w))
print("%-34s %10.2f %6.2f" % ("answered after one copy", n1, n1 / raw_w))
EOF
