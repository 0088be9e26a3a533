#!/usr/bin/env python3
"""A crash-consistency test as an outside program writes one with f2fscore's
Python bindings (the same test as examples/crash/main.cpp):

  1. format a 64 MiB memory device (CowDevice) and take it as the base;
  2. for n = 0, 1, 2, ...: a copy-on-write clone of the base behind a
     FaultDevice that holds writes until a flush and fails every write or
     flush from the n-th on (the moment power is lost); mount with the test
     profile, run the workload through file handles;
  3. cut power keeping a random half of the unflushed 4 KiB blocks (the
     reorder model, seeded with n), remount (roll-forward), and check that
     every file whose fsync returned has what was fsynced (a block of a
     later, unconfirmed write over it may be new); unmount and run the
     library's checker: it must find the volume clean;
  4. stop after the first n at which the workload ran to its end.

Run against an installed package:
  PYTHONPATH=<prefix>/lib/python3.X/site-packages python3 examples/crash.py
Exit 0 when every crash state passed, 1 otherwise.
"""
import sys

import f2fscore as f


def content(i, n):
    """File i's bytes: each a function of (i, offset)."""
    return bytes(ord("a") + (k * 7 + i * 13) % 26 for k in range(n))


def workload(w, synced, pending):
    """Four files written and fsynced, a fifth never synced, the first
    rewritten in place and fsynced again. Raises f2fscore.Error when power
    goes out under a call."""
    for i in range(5):
        path, data = "/f%d" % i, content(i, 6000 * (i + 1))
        with w.open(path, f.O_WRONLY | f.O_CREAT | f.O_TRUNC, 0o644) as h:
            h.write(data)
            if i < 4:
                h.fsync()
                synced[path] = data
    pending["/f0"] = content(9, 6000)
    with w.open("/f0", f.O_WRONLY) as h:
        h.pwrite(pending["/f0"], 0)
        h.fsync()
    synced["/f0"] = pending.pop("/f0")


def block_wise_one_of(got, synced, pending):
    """Each 4 KiB block of `got` is that block of `synced` or of `pending`."""
    if len(got) != len(synced):
        return False
    for off in range(0, len(got), 4096):
        block = got[off:off + 4096]
        if block != synced[off:off + 4096] and (pending is None or block != pending[off:off + 4096]):
            return False
    return True


def main():
    base = f.CowDevice.memory(64 << 20)
    f.format(base, timestamp=0)
    states = bad = kept_blocks = 0
    n = 0
    while True:
        img = base.clone()
        dev = f.FaultDevice(img, f.FaultPlan(drop_unflushed=True, fail_after=n,
                                             ops=f.io_op_bit(f.IoOp.write) | f.io_op_bit(f.IoOp.flush)))
        synced, pending = {}, {}
        finished = False
        try:
            w = f.Writer.mount(dev, f.MountOptions.test_profile())
            try:
                workload(w, synced, pending)
                w.unmount()
                finished = True
            finally:
                w.abandon()  # after unmount: nothing; else as a power cut
        except f.Error:
            pass
        kept_blocks += len(dev.power_cut_random(n, f.CrashUnit.block, 50))
        dev.set_plan(f.FaultPlan())
        states += 1
        why = ""
        try:
            with f.Writer.mount(dev, f.MountOptions.test_profile()) as w:
                for path, data in synced.items():
                    with w.open(path, f.O_RDONLY) as h:
                        if not block_wise_one_of(h.read(), data, pending.get(path)):
                            why = path + " lost what its fsync returned"
                            break
            if not why:
                report = f.fsck(img)
                if not report.clean:
                    why = "fsck: %d problems, e.g. %s" % (len(report.problems), report.problems[0])
        except f.Error as e:
            why = str(e)
        if why:
            bad += 1
            print("state %d (cut at write %d): FAIL: %s" % (n, n, why))
        elif n % 16 == 0:
            print("state %d: %d fsynced files intact, clean" % (n, len(synced)))
        if finished:
            break
        n += 1
    print("%s: %d crash states (power cut at every write, half the unflushed blocks kept: %d kept in all), %d failed"
          % ("FAIL" if bad else "PASS", states, kept_blocks, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
