#!/usr/bin/env python3
"""Generates the host directory tree that bench/fsck_bench.sh loads into an
F2FS image with sload.f2fs: a deterministic, realistic tree (many
directories, mostly small files, some large ones).

Usage: fsck_gen_tree.py DIR FILES DATA_BYTES [SEED]

  DIR         created; must not exist
  FILES       number of regular files (at least 1,000)
  DATA_BYTES  total bytes of file data (the large files make up what the
              small ones leave)

Shape (fixed by SEED, default 1):
  - directories: 24 top-level, each with 2..12 subdirectories, each with
    0..10 more (about 1,800 in all), and a few deep chains (12 levels);
  - small files, FILES - 40 of them: sizes log-normal around 6 KiB
    (median), 5% empty, about 30% under 3 KiB (inline-data candidates),
    capped at 2 MiB; placed in directories weighted towards a few busy ones;
  - large files, 40 of them: 8 MiB to a few hundred MiB, sharing what is
    left of DATA_BYTES;
  - symbolic links: one per 200 files, relative, pointing at files.
Contents are pseudo-random bytes (no runs of zeroes: sload.f2fs would not
keep holes anyway). Prints a one-line summary.
"""
import os
import random
import sys


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    files = int(sys.argv[2])
    data = int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if files < 1000:
        print("fsck_gen_tree: FILES must be at least 1000", file=sys.stderr)
        return 2
    rnd = random.Random(seed)
    os.makedirs(root)

    # Directories.
    dirs = []
    for t in range(24):
        top = os.path.join(root, f"d{t:02d}")
        os.mkdir(top)
        dirs.append(top)
        for s in range(rnd.randint(2, 12)):
            sub = os.path.join(top, f"s{s:02d}")
            os.mkdir(sub)
            dirs.append(sub)
            for u in range(rnd.randint(0, 10)):
                leaf = os.path.join(sub, f"u{u:02d}")
                os.mkdir(leaf)
                dirs.append(leaf)
    for c in range(4):
        p = os.path.join(root, f"deep{c}")
        for level in range(12):
            p = os.path.join(p, f"l{level:02d}")
            os.makedirs(p)
            dirs.append(p)
    # Busy directories: a few hold thousands of entries (multi-level
    # dentry hash tables), most hold tens.
    weights = [rnd.paretovariate(1.2) for _ in dirs]

    n_large = 40
    n_small = files - n_large
    sizes = []
    for _ in range(n_small):
        r = rnd.random()
        if r < 0.05:
            sizes.append(0)
        else:
            sizes.append(min(int(rnd.lognormvariate(8.7, 1.3)), 2 << 20))
    small_total = sum(sizes)
    left = max(data - small_total, n_large * (8 << 20))
    # Large files: random shares of what is left, at least 8 MiB each,
    # whole 4 KiB blocks.
    shares = [rnd.random() + 0.2 for _ in range(n_large)]
    total_share = sum(shares)
    large = [max(8 << 20, int(left * s / total_share) // 4096 * 4096) for s in shares]

    pool = os.urandom(8 << 20)
    pool_len = len(pool)

    def write_file(path: str, size: int) -> None:
        with open(path, "wb") as f:
            off = rnd.randrange(0, pool_len - 4096)
            left_bytes = size
            while left_bytes > 0:
                n = min(left_bytes, pool_len - off)
                f.write(pool[off:off + n])
                left_bytes -= n
                off = 0

    chosen = rnd.choices(range(len(dirs)), weights=weights, k=n_small)
    made = []
    for i, size in enumerate(sizes):
        d = dirs[chosen[i]]
        ext = ("c", "h", "txt", "json", "png", "so", "conf", "md")[i % 8]
        p = os.path.join(d, f"f{i:06d}.{ext}")
        write_file(p, size)
        made.append(p)
    big_dir = os.path.join(root, "large")
    os.mkdir(big_dir)
    for i, size in enumerate(large):
        d = big_dir if i % 2 == 0 else dirs[rnd.randrange(len(dirs))]
        p = os.path.join(d, f"big{i:02d}.bin")
        write_file(p, size)
    links = 0
    for i in range(0, len(made), 200):
        target = made[i]
        link = target + ".lnk"
        os.symlink(os.path.basename(target), link)
        links += 1
    total = small_total + sum(large)
    print(f"fsck_gen_tree: {len(dirs) + 1} directories, {n_small} small files "
          f"({small_total / 2**30:.2f} GiB), {n_large} large files ({sum(large) / 2**30:.2f} GiB), "
          f"{links} symlinks, {total / 2**30:.2f} GiB of data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
