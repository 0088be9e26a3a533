#!/usr/bin/env python3
"""android_manifest.py DUMP IMAGE: the image's entries as tests/tools/android_tree.sh
writes expect.txt, read through f2fscore-dump --json (ls -R for the paths, inode for
each one's i_mode, i_uid, i_gid and xattrs): "PATH MODE UID GID CAPABILITY-HEX|- CONTEXT|-"."""
import json
import stat
import subprocess
import sys


def dump(*args):
    out = subprocess.run([sys.argv[1], "--json", sys.argv[2], *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def paths(entries, parent):
    for e in entries:
        if e["name"] == "lost+found":
            continue
        p = parent.rstrip("/") + "/" + e["name"]
        yield p
        yield from paths(e.get("entries", []), p)


def main():
    listing = dump("ls", "-R", "/")
    for p in ["/"] + sorted(paths(listing["entries"], "/")):
        ino = dump("inode", p)
        x = {e["name"]: e for e in ino.get("xattr_entries", [])}
        cap = x["security.capability"]["value_hex"] if "security.capability" in x else "-"
        se = bytes.fromhex(x["security.selinux"]["value_hex"]).decode() if "security.selinux" in x else "-"
        print(p, stat.filemode(ino["i_mode"]), ino["i_uid"], ino["i_gid"], cap, se)


main()
