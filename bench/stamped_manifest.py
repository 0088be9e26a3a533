#!/usr/bin/env python3
"""Expected tree of `f2fscore-io fs -w fill --data stamped`, computed from the
documented pattern alone (not read from any image).

  stamped_manifest.py COUNT FILE_SIZE BLOCK_SIZE STEP OUTDIR

The fill writes /fill/f0 .. /fill/f{COUNT-1}, each FILE_SIZE bytes, in calls
of BLOCK_SIZE bytes; the call at offset `off` of file i has the pattern seed
i * 131 + off // BLOCK_SIZE, and each 4 KiB block of the call starts with the
seed and the block's index in the call (64-bit little-endian each), zeros
after them (WorkloadSpec::Data::stamped). Writes OUTDIR/sizes ("name size",
sorted by name) and OUTDIR/sums (sha256sum lines "HASH  name" of every STEP-th
file and the last one), OUTDIR/sample (their names).
"""
import hashlib
import os
import struct
import sys


def content(i, size, bs):
    h = hashlib.sha256()
    off = 0
    while off < size:
        n = min(bs, size - off)
        seed = i * 131 + off // bs
        call = bytearray(n)
        for b in range(0, n, 4096):
            head = struct.pack('<QQ', seed, b // 4096)
            call[b:b + min(16, n - b)] = head[:min(16, n - b)]
        h.update(call)
        off += n
    return h.hexdigest()


def main():
    count, size, bs, step = (int(a) for a in sys.argv[1:5])
    out = sys.argv[5]
    os.makedirs(out, exist_ok=True)
    names = sorted('f%d' % i for i in range(count))
    with open(os.path.join(out, 'sizes'), 'w') as f:
        for n in names:
            f.write('%s %d\n' % (n, size))
    picks = sorted(set(list(range(0, count, step)) + [count - 1]), key=lambda i: 'f%d' % i)
    with open(os.path.join(out, 'sums'), 'w') as f, open(os.path.join(out, 'sample'), 'w') as s:
        for i in picks:
            f.write('%s  f%d\n' % (content(i, size, bs), i))
            s.write('f%d\n' % i)


if __name__ == '__main__':
    main()
