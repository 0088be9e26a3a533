#!/usr/bin/env python3
"""Every tool's --json output validated against its schema in docs/json/.

Runs f2fscore-mkfs, -fsck, -sload, -label, -tune, -io and -dump (every
command) on scratch images, the successful runs and the failures and usage
errors that print JSON, parses each output and
validates it with the JSON Schema subset the schemas use (type, required,
properties, additionalProperties: false, items, enum; draft 2020-12
meanings). Then checks that a field name has one type across all schemas
and the type docs/json/fields.json gives for the names tools share.

Usage: json_schema_test.py SOURCE_DIR BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def type_ok(v, t):
    if t == "string": return isinstance(v, str)
    if t == "integer": return isinstance(v, int) and not isinstance(v, bool)
    if t == "number": return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "boolean": return isinstance(v, bool)
    if t == "object": return isinstance(v, dict)
    if t == "array": return isinstance(v, list)
    if t == "null": return v is None
    raise ValueError("schema type not in the subset: " + t)


KNOWN = {"$schema", "$id", "title", "description", "type", "required", "properties",
         "additionalProperties", "items", "enum"}


def validate(v, s, where, errs):
    unknown = set(s) - KNOWN
    if unknown:
        errs.append(f"{where}: schema keyword(s) outside the subset: {sorted(unknown)}")
    if "type" in s and not type_ok(v, s["type"]):
        errs.append(f"{where}: {json.dumps(v)[:80]} is not of type {s['type']}")
        return
    if "enum" in s and v not in s["enum"]:
        errs.append(f"{where}: {json.dumps(v)[:80]} not one of {s['enum']}")
    if isinstance(v, dict):
        for r in s.get("required", []):
            if r not in v: errs.append(f"{where}: required field {r!r} missing")
        props = s.get("properties", {})
        for k, x in v.items():
            if k in props: validate(x, props[k], f"{where}.{k}", errs)
            elif s.get("additionalProperties", True) is False: errs.append(f"{where}: field {k!r} not in the schema")
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v): validate(x, s["items"], f"{where}[{i}]", errs)


def self_test():
    """The validator rejects what it must (so a pass means something)."""
    s = {"type": "object", "required": ["a"], "additionalProperties": False,
         "properties": {"a": {"type": "integer"}, "b": {"type": "array", "items": {"enum": ["x"]}}}}
    cases = [({"a": 1, "b": ["x"]}, 0), ({"b": []}, 1), ({"a": True}, 1), ({"a": 1.5}, 1),
             ({"a": 1, "c": 0}, 1), ({"a": 1, "b": ["y"]}, 1), ([], 1)]
    for doc, nerr in cases:
        errs = []
        validate(doc, s, "$", errs)
        if (len(errs) > 0) != (nerr > 0): fail(f"validator self-test: {doc} gave {errs}")


def run(cmd, expect_rc):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != expect_rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect_rc}: {p.stderr.strip()[:300]}")
    return p.stdout


def check(name, schemas, cmd, expect_rc):
    out = run(cmd, expect_rc)
    try:
        doc = json.loads(out)
    except ValueError as e:
        fail(f"{name}: {' '.join(cmd)} printed no JSON ({e}): {out[:200]!r}")
        return None
    errs = []
    validate(doc, schemas[name], name, errs)
    # An object that states its exit code states the process's.
    if isinstance(doc, dict) and "exit_code" in doc and doc["exit_code"] != expect_rc:
        errs.append(f"exit_code {doc['exit_code']} but the process exited {expect_rc}")
    for e in errs: fail(f"{' '.join(cmd)}: {e}")
    if not errs: print(f"ok: {name}: {' '.join(cmd[1:])}")
    return doc


def field_types(s, path, acc):
    for k, x in s.get("properties", {}).items():
        if "type" in x: acc.setdefault(k, set()).add((x["type"], path + "." + k))
        field_types(x, path + "." + k, acc)
    if "items" in s: field_types(s["items"], path + "[]", acc)


def main():
    src, build = sys.argv[1], sys.argv[2]
    jdir = os.path.join(src, "docs", "json")
    schemas = {f[:-len(".schema.json")]: json.load(open(os.path.join(jdir, f)))
               for f in sorted(os.listdir(jdir)) if f.endswith(".schema.json")}
    fields = json.load(open(os.path.join(jdir, "fields.json")))["fields"]
    tool = lambda t: os.path.join(build, "tools", t, "f2fscore-" + t)
    self_test()

    with tempfile.TemporaryDirectory() as t:
        img = os.path.join(t, "v.img")
        with open(img, "wb") as f: f.truncate(256 << 20)
        tree = os.path.join(t, "tree")
        os.makedirs(os.path.join(tree, "d"))
        with open(os.path.join(tree, "d", "f"), "w") as f: f.write("x" * 5000)
        check("mkfs", schemas, [tool("mkfs"), "--json", "-l", "lab\"el", "-O", "extra_attr,inode_checksum", img], 0)
        pop = os.path.join(t, "p.img")
        with open(pop, "wb") as f: f.truncate(128 << 20)
        check("mkfs", schemas, [tool("mkfs"), "--json", "--populate", tree, pop], 0)
        check("sload", schemas, [tool("sload"), "--json", "-f", tree, "--target-dir", "/in", img], 0)
        check("sload-error", schemas, [tool("sload"), "--json", "-f", tree, os.path.join(t, "missing.img")], 1)
        check("fsck", schemas, [tool("fsck"), "-n", "--json", img], 0)
        check("fsck", schemas, [tool("fsck"), "-p", "-f", "--json", img], 0)
        junk = os.path.join(t, "junk.img")
        with open(junk, "wb") as f: f.truncate(64 << 20)
        check("fsck-error", schemas, [tool("fsck"), "-n", "--json", junk], 8)
        check("label", schemas, [tool("label"), "--json", img], 0)
        check("label", schemas, [tool("label"), "--json", img, "new"], 0)
        check("label-error", schemas, [tool("label"), "--json", junk], 1)
        tuned = os.path.join(t, "tuned.img")
        with open(tuned, "wb") as f: f.truncate(64 << 20)
        subprocess.run([tool("mkfs"), "-q", tuned], check=True)
        check("tune-show", schemas, [tool("tune"), "--json", tuned], 0)
        check("tune", schemas, [tool("tune"), "--json", "-O", "verity", "-C", "utf8", "-l", "t", tuned], 0)
        check("tune", schemas, [tool("tune"), "--json", "-n", "-O", "encrypt", tuned], 0)
        check("tune-error", schemas, [tool("tune"), "--json", "-O", "compression", tuned], 1)
        # Usage errors under --json: the failure object, exit_code the usage code.
        check("tune-error", schemas, [tool("tune"), "--json", "-O", "encrypt,,casefold", tuned], 2)
        check("tune-error", schemas, [tool("tune"), "--json", "--bogus", tuned], 2)
        check("label-error", schemas, [tool("label"), "--json", "--bogus", tuned], 2)
        check("sload-error", schemas, [tool("sload"), "--json", "--bogus", img], 2)
        check("fsck-error", schemas, [tool("fsck"), "--json", "-n", "-y", img], 16)
        check("fsck-error", schemas, [tool("fsck"), "--json", "--bogus", img], 16)
        check("mkfs-error", schemas, [tool("mkfs"), "--json", os.path.join(t, "no", "dir", "x.img")], 1)
        check("mkfs-error", schemas, [tool("mkfs"), "--json", "--bogus", img], 2)
        check("mkfs-error", schemas, [tool("mkfs"), "--json", "--bogus"], 2)
        check("resize", schemas, [tool("resize"), "--json", "-n", tuned], 0)
        grow = os.path.join(t, "grow.img")
        with open(grow, "wb") as f: f.truncate(128 << 20)
        subprocess.run([tool("mkfs"), "-q", grow], check=True)
        with open(grow, "r+b") as f: f.truncate(192 << 20)
        doc = check("resize", schemas, [tool("resize"), "--json", grow], 0)
        if doc is not None and doc.get("resized") is not True: fail(f"resize of {grow}: resized is not true: {doc}")
        check("resize-error", schemas, [tool("resize"), "--json", junk], 1)
        check("resize-error", schemas, [tool("resize"), "--json", "--bogus", tuned], 2)

        # f2fscore-dump: every command, on the populated image (/d/f).
        dump = lambda *a: [tool("dump"), "--json", pop] + list(a)
        sb = check("dump-sb", schemas, dump("sb"), 0)
        check("dump-sb", schemas, dump("sb", "--copy", "1"), 0)
        check("dump-info", schemas, dump("info"), 0)
        check("dump-cp", schemas, dump("cp"), 0)
        check("dump-nat", schemas, dump("nat", "0~20"), 0)
        check("dump-sit", schemas, dump("sit", "0~3"), 0)
        check("dump-ssa", schemas, dump("ssa", "0~1"), 0)
        check("dump-inode", schemas, dump("inode", "/d/f"), 0)
        check("dump-inode", schemas, dump("inode", "/"), 0)
        check("dump-block", schemas, dump("block", "0"), 0)
        if sb is not None and isinstance(sb.get("main_blkaddr"), int):
            check("dump-block", schemas, dump("block", str(sb["main_blkaddr"])), 0)
        check("dump-ls", schemas, dump("ls", "-l", "-R", "/"), 0)
        check("dump-ls-entry", schemas, dump("ls", "-l", "/d/f"), 0)
        check("dump-cat", schemas, dump("cat", "/d/f"), 0)
        check("dump-map", schemas, dump("map", "/"), 0)
        check("dump-space", schemas, dump("space"), 0)
        check("dump-ipu", schemas, dump("ipu", "--segments"), 0)
        check("dump-extract", schemas, dump("extract", "/", os.path.join(t, "out")), 0)
        check("dump-error", schemas, dump("cat", "/missing"), 1)
        check("dump-error", schemas, dump("bogus"), 2)
        check("dump-error", schemas, dump("block", str(1 << 40)), 2)
        check("dump-error", schemas, [tool("dump"), "--json", junk, "info"], 1)

        # -V with --json: the version object, also where the operand is missing.
        for t_name in ("mkfs", "fsck", "dump", "sload", "label", "tune", "resize", "io"):
            for argv in (["-V", "--json", img], ["--json", "-V"]):
                doc = check("version", schemas, [tool(t_name)] + argv, 0)
                if isinstance(doc, dict) and doc.get("tool") != "f2fscore-" + t_name:
                    fail(f"f2fscore-{t_name} {' '.join(argv)}: tool {doc.get('tool')!r}")

        raw = os.path.join(t, "raw")
        with open(raw, "wb") as f: f.write(b"\0" * (4 << 20))
        check("io", schemas, [tool("io"), raw, "--rw", "read", "--bs", "4k", "--size", "4m", "--buffered",
                              "--backend", "posix", "--iostat", "--json"], 0)
        check("io-fs", schemas, [tool("io"), "fs", img, "-w", "smallfiles", "--files", "20", "--file-bytes", "100",
                                 "--iostat", "--json"], 0)
        check("io-error", schemas, [tool("io"), "--json", os.path.join(t, "no", "raw"), "--rw", "read", "--size", "4m"], 1)
        check("io-error", schemas, [tool("io"), "--json", "--bogus", raw], 2)
        check("io-error", schemas, [tool("io"), "fs", "--json", img, "-w", "bogus"], 2)
        check("io-error", schemas, [tool("io"), "fs", "--json", "--bogus", img], 2)

    # One name, one type, across every schema; the shared names as fields.json says.
    acc = {}
    for n, s in schemas.items(): field_types(s, n, acc)
    for k, ts in sorted(acc.items()):
        types = {x for x, _ in ts}
        if len(types) > 1: fail(f"field {k!r} has types {sorted(types)}: {sorted(p for _, p in ts)}")
    for k, f in fields.items():
        if k not in acc: fail(f"fields.json names {k!r}, which no schema has")
        elif {x for x, _ in acc[k]} != {f["type"]}: fail(f"field {k!r}: fields.json says {f['type']}, schemas say {acc[k]}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all tool JSON valid against docs/json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
