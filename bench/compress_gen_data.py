#!/usr/bin/env python3
"""compress_gen_data.py OUT MIB MANIFEST: the data set of bench/compress_bench.sh.

Copies about MIB MiB of this machine's own files into OUT, half of the bytes
text and half binaries, so that the compressors see what a system image
holds:
  OUT/b/NNNNN-NAME  ELF files from /usr/bin, /usr/sbin, /usr/lib/x86_64-linux-gnu
                    (and the other /usr/lib/*-linux-gnu)
  OUT/t/NNNNN-NAME  text from /usr/share and /usr/include (no NUL byte in the
                    first 4 KiB)
Files already compressed (gzip, xz, bzip2, zstd, zip, PNG, JPEG by their
magic bytes) are left out, and so are files under 3,489 bytes (f2fscore-sload
keeps those inline, where Linux writes a block for a compressed file: the
two writers would store them differently for reasons outside compression)
and over 4 MiB. The choice is deterministic on one machine: the candidates
are ordered by the SHA-1 of their path and taken in that order until each
half is full. Prints "files N bytes B blocks K" (K: 4 KiB blocks the files
take uncompressed) and writes MANIFEST (one "name size" line per file).
"""
import hashlib
import os
import shutil
import sys

MAGIC = (b"\x1f\x8b", b"\xfd7zXZ", b"BZh", b"\x28\xb5\x2f\xfd", b"PK\x03\x04", b"\x89PNG", b"\xff\xd8\xff")
MIN_SIZE = 3489
MAX_SIZE = 4 << 20


def candidates(roots, want_elf):
    out = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for f in sorted(files):
                p = os.path.join(d, f)
                try:
                    if os.path.islink(p) or not os.path.isfile(p):
                        continue
                    size = os.path.getsize(p)
                    if size < MIN_SIZE or size > MAX_SIZE:
                        continue
                    with open(p, "rb") as fh:
                        head = fh.read(4096)
                except OSError:
                    continue
                if any(head.startswith(m) for m in MAGIC):
                    continue
                is_elf = head.startswith(b"\x7fELF")
                if want_elf != is_elf:
                    continue
                if not want_elf and b"\x00" in head:
                    continue
                out.append((hashlib.sha1(p.encode()).hexdigest(), p, size))
    out.sort()
    return out


def main():
    if len(sys.argv) != 4:
        print("usage: compress_gen_data.py OUT MIB MANIFEST", file=sys.stderr)
        return 2
    out, mib, manifest_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    half = (mib << 20) // 2
    libs = ["/usr/lib/" + d for d in sorted(os.listdir("/usr/lib")) if d.endswith("-linux-gnu")]
    pools = {
        "b": candidates(["/usr/bin", "/usr/sbin"] + libs, True),
        "t": candidates(["/usr/share", "/usr/include"], False),
    }
    if os.path.exists(out):
        shutil.rmtree(out)
    manifest = []
    n = 0
    for sub, pool in pools.items():
        os.makedirs(os.path.join(out, sub))
        got = 0
        for _, p, size in pool:
            if got >= half:
                break
            name = "%05d-%s" % (n, os.path.basename(p))
            shutil.copyfile(p, os.path.join(out, sub, name))
            manifest.append(("%s/%s" % (sub, name), size))
            got += size
            n += 1
        if got < half:
            print("compress_gen_data.py: only %d bytes of %s files found" % (got, sub), file=sys.stderr)
    with open(manifest_path, "w") as fh:
        for name, size in manifest:
            fh.write("%s %d\n" % (name, size))
    total = sum(s for _, s in manifest)
    blocks = sum((s + 4095) // 4096 for _, s in manifest)
    print("files %d bytes %d blocks %d" % (len(manifest), total, blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
