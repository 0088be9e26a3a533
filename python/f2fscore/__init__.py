"""f2fscore: a portable F2FS engine, from Python.

Format a device, mount it read-write, work on files through handles,
check it, read the dump tool's views, and cut power under it with the
test devices (docs/embedding.md, "Python"):

    import f2fscore as f
    base = f.CowDevice.memory(64 << 20)
    f.format(base, timestamp=0)
    dev = f.FaultDevice(base.clone(), f.FaultPlan(drop_unflushed=True))
    with f.Writer.mount(dev, f.MountOptions.test_profile()) as w:
        with w.open("/a", f.O_WRONLY | f.O_CREAT) as h:
            h.write(b"hello")
            took_checkpoint = h.fsync()
    assert f.fsck(dev).clean

Errors raise f2fscore.Error, an OSError with the errno Linux's f2fs
returns for the same call (FileNotFoundError, FileExistsError, ... where
Python has a subclass for it), the library's message, and the
attributes `code` (the library's error class, "not_found") and `offset`.
"""
from ._f2fscore import *  # noqa: F401,F403
