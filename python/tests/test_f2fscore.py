"""Unit tests of the Python bindings. Expected values come from references:
mkfs.f2fs 1.15's layout (and its output, when f2fs-tools is installed),
the kernel's rules for errno, need_do_checkpoint() and the IPU policy, and
what the crash models keep by construction.

F2FSCORE_REQUIRE_FSCK=1 (CI) turns a missing mkfs.f2fs into a failure."""
import errno
import os
import shutil
import subprocess
import tempfile
import unittest

import f2fscore as f

MIB = 1 << 20
ROOT_INO = 3  # F2FS_ROOT_INO(sbi): mkfs.f2fs's root_ino


def formatted(size=64 * MIB, **kw):
    dev = f.CowDevice.memory(size)
    f.format(dev, timestamp=0, **kw)
    return dev


class Format(unittest.TestCase):
    def test_layout_as_mkfs_f2fs_1_15(self):
        # mkfs.f2fs 1.15 on 256 MiB: segment0 at 512, CP 2 + SIT 2 + NAT 2 +
        # SSA 1 segments, so main starts at 512 + 7 * 512 = 4096, with 120
        # main segments (as tests/install/example_test.sh).
        rep = f.format(f.CowDevice.memory(256 * MIB), label="hello", timestamp=0)
        sb = rep.superblock
        self.assertEqual(sb["segment0_blkaddr"], 512)
        self.assertEqual(sb["main_blkaddr"], 4096)
        self.assertEqual(sb["segment_count_main"], 120)
        self.assertEqual(sb["root_ino"], ROOT_INO)

    def test_superblock_equals_mkfs_f2fs(self):
        mkfs = shutil.which("mkfs.f2fs")
        if not mkfs:
            if os.environ.get("F2FSCORE_REQUIRE_FSCK") == "1":
                self.fail("mkfs.f2fs missing (F2FSCORE_REQUIRE_FSCK=1)")
            self.skipTest("mkfs.f2fs missing")
        with tempfile.TemporaryDirectory() as tmp:
            img = os.path.join(tmp, "img")
            with open(img, "wb") as out:
                out.truncate(200 * MIB)
            subprocess.run([mkfs, "-f", "-q", "-l", "x", "-O", "extra_attr,inode_checksum,sb_checksum", img],
                           check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            theirs = f.Volume.open(f.open_file(img, read_only=True)).superblock(json=True)
        ours = f.format(f.CowDevice.memory(200 * MIB), label="x", features="extra_attr,inode_checksum,sb_checksum",
                        timestamp=0).superblock
        for key in ("block_count", "segment_count", "segment_count_ckpt", "segment_count_sit", "segment_count_nat",
                    "segment_count_ssa", "segment_count_main", "section_count", "cp_blkaddr", "sit_blkaddr",
                    "nat_blkaddr", "ssa_blkaddr", "main_blkaddr", "root_ino", "node_ino", "meta_ino",
                    "feature", "extension_count"):
            self.assertEqual(ours[key], theirs[key], key)

    def test_bad_options_raise_einval(self):
        with self.assertRaises(f.Error) as c:
            f.format(f.CowDevice.memory(64 * MIB), features="extra_attr,nonsense")
        self.assertEqual(c.exception.errno, errno.EINVAL)
        self.assertEqual(c.exception.code, "invalid_argument")
        self.assertIn("nonsense", c.exception.strerror)


class Files(unittest.TestCase):
    def setUp(self):
        self.dev = formatted()
        self.w = f.Writer.mount(self.dev, f.MountOptions.test_profile())

    def tearDown(self):
        if self.w.mounted:
            self.w.abandon()

    def test_round_trip_and_positions(self):
        data = bytes(range(256)) * 24  # 6144 bytes
        with self.w.open("/a", f.O_RDWR | f.O_CREAT | f.O_EXCL, 0o640) as h:
            self.assertEqual(h.write(data), 6144)
            self.assertEqual(h.position, 6144)
            self.assertEqual(h.seek(-100, f.SEEK_END), 6044)
            self.assertEqual(h.read(), data[6044:])
            self.assertEqual(h.read(10), b"")
            self.assertEqual(h.pread(4, 256), bytes([0, 1, 2, 3]))
            self.assertEqual(h.pwrite(b"xyz", 1), 3)
            self.assertEqual(h.position, 6144)
            st = h.stat()
        self.assertEqual(st.size, 6144)
        self.assertEqual(st.mode, 0o100640)
        # i_blocks in 4 KiB blocks counts the inode block: 2 data + 1.
        self.assertEqual(st.blocks, 3)
        self.assertEqual(st.mtime_ns, f.MountOptions.TEST_PROFILE_TIME * 10**9)
        with self.w.open("/a") as h:
            self.assertEqual(h.read(5), bytes([0]) + b"xyz" + bytes([4]))

    def test_readdir_as_getdents(self):
        self.w.open("/a", f.O_WRONLY | f.O_CREAT).close()
        d = self.w.mkdir("/d")
        es = self.w.readdir("/")
        self.assertEqual([(e.name, e.ino, e.type) for e in es[:2]], [(".", ROOT_INO, f.DT_DIR), ("..", ROOT_INO, f.DT_DIR)])
        self.assertEqual(sorted((e.name, e.type) for e in es[2:]), [("a", f.DT_REG), ("d", f.DT_DIR)])
        self.assertEqual([e.ino for e in es if e.name == "d"], [d])

    def test_errno_of_posix_errors(self):
        # The errno open(2) and friends give on Linux for the same calls.
        cases = [
            (lambda: self.w.open("/missing"), errno.ENOENT, FileNotFoundError),
            (lambda: self.w.open("/", f.O_WRONLY), errno.EISDIR, IsADirectoryError),
            (lambda: self.w.open("/a", f.O_WRONLY | f.O_CREAT | f.O_EXCL), errno.EEXIST, FileExistsError),
            (lambda: self.w.open("/a", f.O_RDONLY | f.O_DIRECTORY), errno.ENOTDIR, NotADirectoryError),
            (lambda: self.w.open("/a/x"), errno.ENOTDIR, NotADirectoryError),
            (lambda: self.w.open("/" + "n" * 256), errno.ENAMETOOLONG, f.Error),
            (lambda: self.w.getxattr("/a", "user.none"), errno.ENODATA, f.Error),
            (lambda: self.w.setxattr("/a", "bogus.k", b"v"), errno.EOPNOTSUPP, f.Error),
            (lambda: self.w.rmdir("/"), errno.EBUSY, f.Error),
        ]
        self.w.open("/a", f.O_WRONLY | f.O_CREAT).close()
        for call, want, cls in cases:
            with self.assertRaises(cls) as c:
                call()
            self.assertIsInstance(c.exception, f.Error)
            self.assertIsInstance(c.exception, OSError)
            self.assertEqual(c.exception.errno, want, c.exception)
        with self.w.open("/a", f.O_WRONLY) as h:
            with self.assertRaises(f.Error) as c:
                h.read(1)  # vfs_read() without FMODE_READ
            self.assertEqual(c.exception.errno, errno.EBADF)

    def test_xattrs_by_full_name(self):
        self.w.open("/a", f.O_WRONLY | f.O_CREAT).close()
        self.w.setxattr("/a", "user.k", b"v1")
        self.w.setxattr("/a", "trusted.t", b"v2")
        self.assertEqual(sorted(self.w.listxattr("/a")), ["trusted.t", "user.k"])
        self.assertEqual(self.w.getxattr("/a", "user.k"), b"v1")
        with self.assertRaises(FileExistsError):
            self.w.setxattr("/a", "user.k", b"v", f.XATTR_CREATE)
        self.w.removexattr("/a", "user.k")
        self.assertEqual(self.w.listxattr("/a"), ["trusted.t"])

    def test_fsync_reports_checkpoint_as_need_do_checkpoint(self):
        # A new file with one link under a checkpointed directory: an
        # fsync-marked node chain; with two links (i_nlink != 1):
        # need_do_checkpoint() takes a checkpoint.
        with self.w.open("/a", f.O_WRONLY | f.O_CREAT) as h:
            h.write(b"x" * 5000)
            self.assertFalse(h.fsync())
            self.w.link("/a", "/b")
            h.write(b"y")
            self.assertTrue(h.fsync())
        self.assertEqual(self.w.stats().ipu.fsync_checkpoints, 1)

    def test_ipu_stats_follow_the_fsync_policy(self):
        # The test profile's ipu_policy is F2FS_IPU_FSYNC: first writes go
        # out of place (new blocks), a rewrite of at most min_fsync_blocks
        # (8) dirty pages inside fsync goes in place.
        self.assertEqual(self.w.ipu_options().ipu_policy, 0x10)
        with self.w.open("/a", f.O_RDWR | f.O_CREAT) as h:
            h.write(b"a" * 8192)
            h.fsync()
            self.assertEqual(self.w.stats().ipu.data_blocks["opu_new_block"], 2)
            h.pwrite(b"b" * 8192, 0)
            h.fsync()
        ipu = self.w.stats().ipu
        self.assertEqual(ipu.data_blocks["ipu_fsync"], 2)
        self.assertEqual(ipu.in_place, 2)
        self.assertEqual(ipu.fsyncs, 2)

    def test_abandon_is_a_power_cut(self):
        with self.w.open("/kept", f.O_WRONLY | f.O_CREAT) as h:
            h.write(b"k" * 100)
            h.fsync()
        h = self.w.open("/lost", f.O_WRONLY | f.O_CREAT)
        h.write(b"l")
        self.w.abandon()
        with self.assertRaises(f.Error) as c:
            h.write(b"more")
        self.assertEqual(c.exception.errno, errno.EBADF)
        with self.assertRaises(f.Error):
            self.w.stat("/kept")
        with f.Writer.mount(self.dev, f.MountOptions.test_profile()) as w2:
            self.assertEqual(w2.stat("/kept").size, 100)  # rolled forward
            self.assertNotIn("lost", [e.name for e in w2.readdir("/")])
            self.assertEqual(w2.stats().recovered_nodes > 0, True)
        self.assertTrue(f.fsck(self.dev).clean)


class Devices(unittest.TestCase):
    def test_cow_isolation_and_clone_of_clone(self):
        base = f.CowDevice.memory(1 * MIB)
        base.write(0, b"x" * 4096)
        a = base.clone()
        self.assertEqual(base.private_blocks, 0)  # frozen into the shared layer
        a.write(0, b"y" * 4096)
        b = a.clone()
        b.write(0, b"z" * 4096)
        b.write(4096, b"w" * 512)
        self.assertEqual(base.read(0, 4096), b"x" * 4096)
        self.assertEqual(a.read(0, 4096), b"y" * 4096)
        self.assertEqual(b.read(0, 4096), b"z" * 4096)
        self.assertEqual(a.read(4096, 512), bytes(512))
        self.assertEqual(b.read(4096, 1024), b"w" * 512 + bytes(512))

    def test_fault_device_drop_keep_tear(self):
        def fresh():
            inner = f.CowDevice.memory(1 * MIB)
            dev = f.FaultDevice(inner, f.FaultPlan(drop_unflushed=True))
            dev.write(0, b"A" * 4096)
            dev.flush()
            dev.write(4096, b"B" * 8192)  # unflushed write 0: blocks 1, 2
            dev.write(16384, b"C" * 4096)  # unflushed write 1: block 4
            return inner, dev

        inner, dev = fresh()
        self.assertEqual(dev.unflushed_bytes, 12288)
        self.assertEqual([(w["offset"], w["length"]) for w in dev.unflushed_writes()], [(4096, 8192), (16384, 4096)])
        self.assertEqual(dev.read(4096, 4096), b"B" * 4096)  # the cache reads back
        dev.power_cut()
        self.assertEqual(inner.read(0, 20480), b"A" * 4096 + bytes(16384))

        inner, dev = fresh()
        self.assertEqual(dev.crash_units(f.CrashUnit.request), [f.KeptPart(0, 0, 8192), f.KeptPart(1, 0, 4096)])
        self.assertEqual(dev.crash_units(f.CrashUnit.block),
                         [f.KeptPart(0, 0, 4096), f.KeptPart(0, 4096, 4096), f.KeptPart(1, 0, 4096)])
        self.assertEqual(len(dev.crash_units(f.CrashUnit.sector)), 24)  # 12 KiB / 512
        dev.power_cut_keep([f.KeptPart(0, 4096, 4096), f.KeptPart(1)])
        self.assertEqual(inner.read(4096, 16384), bytes(4096) + b"B" * 4096 + bytes(4096) + b"C" * 4096)

        inner, dev = fresh()
        dev.power_cut_torn(1, 3)  # write 0 whole, the first 3 sectors of write 1
        self.assertEqual(inner.read(4096, 16384), b"B" * 8192 + bytes(4096) + b"C" * 1536 + bytes(2560))

        inner, dev = fresh()
        self.assertEqual(len(dev.power_cut_random(7, f.CrashUnit.block, 100)), 3)
        inner, dev = fresh()
        self.assertEqual(dev.power_cut_random(7, f.CrashUnit.block, 0), [])
        self.assertEqual(inner.read(4096, 4096), bytes(4096))

    def test_fault_device_fails_from_request_n(self):
        dev = f.FaultDevice(f.CowDevice.memory(1 * MIB), f.FaultPlan(fail_after=1))
        dev.write(0, b"a" * 512)
        with self.assertRaises(f.Error) as c:
            dev.write(512, b"b" * 512)
        self.assertEqual(c.exception.errno, errno.EIO)
        self.assertEqual(c.exception.code, "io")
        self.assertEqual((dev.counted, dev.failed), (2, 1))

    def test_recorder_replays_a_prefix(self):
        base = f.CowDevice.memory(1 * MIB)
        rec = f.RecorderDevice(base.clone(), record_reads=False)
        for i in range(3):
            rec.write(i * 4096, bytes([65 + i]) * 4096)
        rec.flush()
        self.assertEqual(len(rec), 4)
        self.assertEqual((rec[0].op, rec[0].offset, rec[0].length), (f.IoOp.write, 0, 4096))
        self.assertEqual(rec[-1].op, f.IoOp.flush)
        self.assertEqual(rec.logged_bytes, 3 * 4096)
        img = base.clone()
        f.replay(img, rec, 2)
        self.assertEqual(img.read(0, 12288), b"A" * 4096 + b"B" * 4096 + bytes(4096))

    def test_iostat_counts_as_the_kernel(self):
        # Untagged requests: a write counts as app direct data, a flush as
        # "fs flush" with 0 bytes (f2fs_update_iostat()).
        dev = f.IostatDevice(f.memory_device(1 * MIB))
        dev.write(0, b"d" * 8192)
        dev.flush()
        t = dev.iostat()["types"]
        self.assertEqual((t["app_direct_io"]["bytes"], t["app_direct_io"]["count"]), (8192, 1))
        self.assertEqual((t["fs_flush_io"]["bytes"], t["fs_flush_io"]["count"]), (0, 1))
        self.assertIn("app direct data", dev.iostat_info())
        dev.enabled = False
        self.assertEqual(dev.iostat()["types"]["app_direct_io"]["bytes"], 0)


class Checks(unittest.TestCase):
    def test_fsck_clean_then_bad_superblock(self):
        dev = formatted()
        with f.Writer.mount(dev, f.MountOptions.test_profile()) as w:
            with w.open("/a", f.O_WRONLY | f.O_CREAT) as h:
                h.write(b"z" * 10000)
        rep = f.fsck(dev)
        self.assertTrue(rep.clean, [str(p) for p in rep.problems])
        self.assertEqual(rep.exit_code, 0)
        sector = bytearray(dev.read(1024, 512))
        sector[0:4] = bytes(4)  # superblock #0's magic, 0xF2F52010 at byte 1024
        dev.write(1024, sector)
        rep = f.fsck(dev)
        self.assertIn("SB_PRIMARY_BAD", [p.code for p in rep.problems])
        self.assertEqual(f.raw_superblock(dev, 0)["magic"], 0)
        self.assertEqual(f.raw_superblock(dev, 1)["magic"], 0xF2F52010)
        self.assertEqual(rep.exit_code, 4)
        rep = f.fsck(dev, mode="repair_all")
        self.assertEqual(rep.exit_code, 1)
        self.assertTrue(f.fsck(dev).clean)

    def test_dump_views(self):
        dev = formatted()
        with f.Writer.mount(dev, f.MountOptions.test_profile()) as w:
            with w.open("/a", f.O_WRONLY | f.O_CREAT) as h:
                h.write(b"q" * 6000)
            w.mkdir("/d")
        v = f.Volume.open(dev)
        self.assertEqual(v.ls("/").split(), ["a", "d"])
        self.assertEqual(v.cat("/a"), b"q" * 6000)
        self.assertEqual(v.inode("/a", json=True)["i_size"], 6000)
        self.assertEqual(v.superblock(json=True)["root_ino"], ROOT_INO)
        self.assertIn("unmount", v.checkpoint())


if __name__ == "__main__":
    unittest.main()
