#!/usr/bin/env python3
"""Compares a tree extracted by f2fscore-dump.exe (Windows, under wine) with
what Linux reads from the same image.

    compare-extract.py LINUX_MANIFEST EXTRACTED_DIR [EXTRACT_REPORT]

LINUX_MANIFEST holds one entry a line (../shared/images/README.md):
F|path|mode|size|nlink|sha256, D|path|mode, L|path|target,
S|path|type|major:minor, X|path|xattr names. Files must match by size and
sha256, directories by path, symlinks by target (from the extraction's
.f2fscore-links); special files must be absent (Windows has none); modes,
link counts and xattrs are not kept on Windows and not compared. Names are
decoded from the Windows mapping of docs/design.md (%XX is the byte XX).
Entries the report lists as "encrypted, not extracted" are left out.
Exit status 0 when equal, 1 with the differences listed otherwise.

    compare-extract.py --manifest DIR

prints the manifest of a POSIX host tree (the source of an image made
with f2fscore-mkfs --populate) in the same form.
"""
import hashlib
import os
import re
import sys

LINKS = ".f2fscore-links"


def decode(s):
    return re.sub(rb"%([0-9A-F]{2})", lambda m: bytes([int(m.group(1), 16)]), s)


def manifest_of(root):
    """The manifest lines of a POSIX host tree, in the Linux manifest's form."""
    broot = os.fsencode(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(broot):
        rel_dir = os.path.relpath(dirpath, broot)
        rel_dir = b"" if rel_dir == b"." else rel_dir
        for n in dirnames + filenames:
            full = os.path.join(dirpath, n)
            rel = os.path.join(rel_dir, n) if rel_dir else n
            st = os.lstat(full)
            mode = b"%o" % (st.st_mode & 0o7777)
            if os.path.islink(full):
                out.append(b"L|" + rel + b"|" + os.readlink(full))
            elif os.path.isdir(full):
                out.append(b"D|" + rel + b"|" + mode)
            else:
                with open(full, "rb") as f:
                    sha = hashlib.sha256(f.read()).hexdigest().encode()
                out.append(b"F|%s|%s|%d|%d|%s" % (rel, mode, st.st_size, st.st_nlink, sha))
    sys.stdout.buffer.write(b"".join(sorted(x + b"\n" for x in out)))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--manifest":
        return manifest_of(sys.argv[2])
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    manifest, root = sys.argv[1], sys.argv[2]
    encrypted = []
    if len(sys.argv) == 4:
        with open(sys.argv[3], "rb") as f:
            for line in f.read().replace(b"\r", b"").split(b"\n"):
                m = re.match(rb"encrypted, not extracted: /(.*)$", line)
                if m:
                    encrypted.append(m.group(1))

    def left_out(p):
        return any(p == e or p.startswith(e + b"/") for e in encrypted)

    want = {}
    with open(manifest, "rb") as f:
        for line in f.read().split(b"\n"):
            if not line:
                continue
            kind, rest = line[:1], line[2:]
            if kind == b"F":
                path, _mode, size, _nlink, sha = rest.rsplit(b"|", 4)
                want[path] = ("F", int(size), sha.decode())
            elif kind == b"D":
                path, _mode = rest.rsplit(b"|", 1)
                want[path] = ("D",)
            elif kind == b"L":
                path, target = rest.split(b"|", 1)
                want[path] = ("L", target)
            elif kind == b"S":
                pass  # no special files on Windows: must be absent (not in `got`)
    want = {p: v for p, v in want.items() if not left_out(p)}

    got = {}
    broot = os.fsencode(root)
    for dirpath, dirnames, filenames in os.walk(broot):
        rel_dir = os.path.relpath(dirpath, broot)
        rel_dir = b"" if rel_dir == b"." else rel_dir
        for d in dirnames:
            got[decode(os.path.join(rel_dir, d) if rel_dir else d)] = ("D",)
        for n in filenames:
            full = os.path.join(dirpath, n)
            if not rel_dir and n == LINKS.encode():
                with open(full, "rb") as f:
                    for line in f.read().split(b"\n"):
                        if line:
                            p, t = line.split(b"\t", 1)
                            got[decode(p)] = ("L", decode(t))
                continue
            h = hashlib.sha256()
            with open(full, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            got[decode(os.path.join(rel_dir, n) if rel_dir else n)] = ("F", os.path.getsize(full), h.hexdigest())

    bad = 0
    for p in sorted(set(want) | set(got)):
        w, g = want.get(p), got.get(p)
        if w != g:
            bad += 1
            print(f"{p.decode(errors='backslashreplace')}: Linux reads {w}, extracted {g}")
    print(f"{len(want)} entries from Linux, {len(got)} extracted, {bad} differ"
          + (f" ({len(encrypted)} encrypted left out)" if encrypted else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
