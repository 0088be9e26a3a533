#!/usr/bin/env bash
# fuse_bench.sh: f2fscore-fuse side by side with fuse2fs (e2fsprogs' FUSE
# mount of ext4), both on an image of the same size in the same directory
# (the same disk), the same workloads, one after the other, ROUNDS times
# alternating; prints each run and the median ratio ours / fuse2fs (for
# times: fuse2fs / ours, so above 1 means ours is faster everywhere).
#   seq_write   dd 512 MiB of 1 MiB writes, then fsync      MB/s
#   seq_read    dd of that file after a remount               MB/s
#   rand_fsync  4 KiB writes at random offsets of a 64 MiB file, fsync after each  IOPS
#   meta        create, stat and unlink 10,000 files           files/s (the three phases' total)
#   tar_x       tar -x of a source tree (this repository's libf2fscore and tests)  s
# usage: bench/fuse_bench.sh [ROUNDS (default 3)]
# Environment: BUILD (default build), DIR (default /tmp: where the images go),
# SIZE (default 2G).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD:-$root/build}"
rounds="${1:-3}"
dir="${DIR:-/tmp}"
size="${SIZE:-2G}"
fuse="$build/tools/fuse/f2fscore-fuse"
mkfs="$build/tools/mkfs/f2fscore-mkfs"
for t in "$fuse" "$mkfs"; do [[ -x "$t" ]] || { echo "missing $t (build first)" >&2; exit 1; }; done
command -v fuse2fs >/dev/null || { echo "fuse2fs not installed (apt-get install fuse2fs)" >&2; exit 1; }
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

mount_fs() {  # kind
  if [[ $1 == ours ]]; then
    "$fuse" -f -o allow_other "$work/ours.img" "$work/mnt" 2>"$work/ours.log" &
  else
    fuse2fs -f -o allow_other,fakeroot "$work/ext4.img" "$work/mnt" >"$work/ext4.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 200); do mountpoint -q "$work/mnt" && return 0; sleep 0.05; done
  echo "mount of $1 failed" >&2; exit 1
}
umount_fs() { fusermount3 -u "$work/mnt"; wait "$pid"; pid=; }

run_one() {  # kind -> "seq_write seq_read rand_fsync meta tar_x"
  local kind=$1
  rm -f "$work/ours.img" "$work/ext4.img"
  truncate -s "$size" "$work/$kind.img"
  if [[ $kind == ours ]]; then "$mkfs" "$work/ours.img" >/dev/null; else mkfs.ext4 -q -F "$work/ext4.img"; fi
  mount_fs "$kind"
  local sw sr rf meta tx
  sw=$(python3 - "$work/mnt/big" <<'EOF'
import os, sys, time
b = b"\x5a" * (1 << 20)
t = time.monotonic()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for _ in range(512): os.write(fd, b)
os.fsync(fd); os.close(fd)
print("%.1f" % (512 / (time.monotonic() - t)))
EOF
)
  umount_fs
  mount_fs "$kind"
  sr=$(python3 - "$work/mnt/big" <<'EOF'
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
)
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
  echo "$sw $sr $rf $meta $tx"
}

echo "# $(date -u +%F) $(nproc) cores, $(uname -r), images of $size in $dir; rounds: $rounds"
echo "# kind seq_write_MBps seq_read_MBps rand4k_fsync_IOPS meta_files_per_s tar_x_s"
: >"$work/results"
for r in $(seq 1 "$rounds"); do
  for kind in ours ext4; do
    line=$(run_one "$kind")
    echo "$kind $line" | tee -a "$work/results"
  done
done
python3 - "$work/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
ours = [list(map(float, r[1:])) for r in rows if r[0] == "ours"]
ext4 = [list(map(float, r[1:])) for r in rows if r[0] == "ext4"]
names = ["seq_write MB/s", "seq_read MB/s", "4k rand write+fsync IOPS", "create/stat/unlink files/s", "tar -x s"]
print("# median ours, median fuse2fs, ratio (above 1: ours better)")
for i, n in enumerate(names):
    o = statistics.median(r[i] for r in ours); e = statistics.median(r[i] for r in ext4)
    ratio = (e / o) if i == 4 else (o / e)
    print("%-28s %10.2f %10.2f %6.2f" % (n, o, e, ratio))
EOF
