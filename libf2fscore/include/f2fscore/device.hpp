// The storage seam: every byte f2fscore reads or writes goes through a
// BlockDevice. Backends (memory; files and block devices through io_uring,
// uring_device.hpp, or plain POSIX calls) implement it; layers (iostat,
// failure injection) wrap it.
//
// Requests are asynchronous. A caller fills an IoRequest it owns, calls
// submit(), and later calls poll() to run completions. The request carries
// everything the device needs (including scratch space for layers), so a
// submission and its completion allocate nothing. The synchronous helpers at
// the end of this header are built on submit() and poll().
//
// Threading: one thread at a time may call submit() and poll() on a device
// (callers serialise; the engine does this per volume). Completion callbacks
// run inside poll(), on the polling thread, never inside submit().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "f2fscore/result.hpp"

namespace f2fscore {

enum class IoOp : std::uint8_t {
  read,          ///< read `length` bytes at `offset` into `buf`
  write,         ///< write `length` bytes from `buf` at `offset`
  flush,         ///< make every completed write durable (offset/length ignored)
  discard,       ///< hint that the range is unused: later reads return anything
  write_zeroes,  ///< later reads of the range return zeroes, guaranteed
};

std::string_view io_op_name(IoOp op) noexcept;

/// Request flags (IoRequest::flags).
namespace io_flag {
inline constexpr std::uint8_t sync = 0x1;  ///< the submitter waits for it (REQ_SYNC)
inline constexpr std::uint8_t fua = 0x2;   ///< durable on completion (REQ_FUA)
}  // namespace io_flag

struct IoRequest;
/// Completion callback: runs once per request, inside BlockDevice::poll().
using IoCallback = void (*)(IoRequest& req) noexcept;

/// One I/O request, owned by the submitter until its callback has run.
/// Offsets and lengths are in bytes and must be multiples of the device's
/// logical block size (DeviceInfo::logical_block_size); with a direct-I/O
/// backend `buf` must be aligned to DeviceInfo::buffer_alignment as well.
struct IoRequest {
  IoOp op = IoOp::read;
  std::uint8_t flags = 0;
  std::uint16_t tag = 0;     ///< the engine's classification (iostat type, io_tag() in iostat.hpp); devices ignore it
  std::uint64_t offset = 0;  ///< bytes from the start of the device
  std::uint64_t length = 0;  ///< bytes
  void* buf = nullptr;       ///< read/write only
  IoCallback on_complete = nullptr;
  void* user = nullptr;      ///< for the submitter

  // Set by the device before on_complete runs.
  Errc status = Errc::ok;
  int sys_errno = 0;
  std::uint64_t transferred = 0;  ///< bytes moved (read/write)

  // Space for backends and layers, so that nothing allocates per request.
  IoRequest* link = nullptr;  ///< intrusive queue link, owned by the device
  std::uint64_t scratch[4] = {0, 0, 0, 0};

  bool ok() const noexcept { return status == Errc::ok; }
  /// The failure as an Error naming the op and the offset.
  Error error() const;
};

enum class DeviceKind : std::uint8_t { memory, regular_file, block_device, other };

struct DeviceInfo {
  std::uint64_t size_bytes = 0;
  std::uint32_t logical_block_size = 512;  ///< bytes; offsets/lengths are multiples of it
  std::uint32_t buffer_alignment = 1;      ///< bytes; 1 unless direct I/O
  DeviceKind kind = DeviceKind::other;
  bool read_only = false;
  bool direct = false;  ///< O_DIRECT or equivalent
  /// write_zeroes is done without writing zero buffers (punched hole,
  /// FALLOC_FL_ZERO_RANGE, BLKZEROOUT, or dropped memory).
  bool cheap_write_zeroes = false;
  /// A block device opened with O_EXCL: this open holds the claim.
  bool exclusive = false;
  /// bytes; 0: none. Writes of at least this many bytes whose offset,
  /// length and buffer address are multiples of 4096 go through a second
  /// descriptor opened with O_DIRECT, past the host's page cache
  /// (OpenOptions::direct_large_writes).
  std::uint32_t direct_write_min = 0;
  std::string name;  ///< path or a description, for messages
};

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;

  virtual const DeviceInfo& info() const noexcept = 0;

  /// Queues `req`. Never runs the callback itself; a request that fails
  /// validation (out of range, unaligned, read-only) completes with that
  /// error at the next poll(). `req` must stay alive until its callback ran.
  virtual void submit(IoRequest& req) noexcept = 0;

  /// Runs the callbacks of finished requests. With `wait`, blocks until at
  /// least one request finishes when any is in flight. Returns how many
  /// callbacks ran.
  virtual std::size_t poll(bool wait) noexcept = 0;

  /// Requests submitted whose callbacks have not yet run.
  virtual std::size_t in_flight() const noexcept = 0;

  // ---- Optional: holes (allocated extents of a range) ----
  // Byte offsets, offset <= end <= info().size_bytes. They reflect completed
  // writes only: call them with no write in flight to the range. A backend
  // that cannot tell keeps the defaults (everything may hold data), which
  // are always correct; a layer that changes what reads return (failure
  // injection, a volatile cache) keeps them too.

  /// The first byte at or after `offset`, before `end`, that may hold data:
  /// [offset, result) reads as zeroes (a hole of a sparse file, SEEK_DATA);
  /// `end` when the whole range does. Not aligned to the block size.
  virtual std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept {
    (void)end;
    return offset;
  }
  /// The first byte at or after `offset`, before `end`, where a range that
  /// reads as zeroes starts (SEEK_HOLE); `end` when none does. Not aligned
  /// to the block size.
  virtual std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept {
    (void)offset;
    return end;
  }

  // ---- Optional: the host file behind the device ----

  /// A POSIX file descriptor whose byte at every offset is the device's
  /// byte at that offset (the image file or block device a file backend
  /// reads), for host-side copies that bypass the engine's buffers
  /// (copy_file_range(2) in extraction); -1 when there is none. Owned by
  /// the device (valid while it lives; never close it); read it only with
  /// no write in flight. Backends without a POSIX descriptor (memory,
  /// Win32) and layers that change what reads return (failure injection,
  /// a copy-on-write overlay, a recorder) keep the default -1; layers that
  /// only count or tag requests forward the device below's.
  virtual int host_descriptor() const noexcept { return -1; }
};

/// Checks a request against a device's size, alignment and mode. Backends
/// call it at submission; Errc::ok when acceptable.
Errc check_request(const DeviceInfo& info, const IoRequest& req) noexcept;

/// The finished requests of a device that completes them at submission
/// (memory, POSIX pread/pwrite, the fault injector), in submission order:
/// submit() push()es, poll() run()s. Not thread-safe: one thread owns the
/// device. A callback may submit again; what it pushes runs in the same
/// run() call, after what was queued before it.
class CompletionQueue {
 public:
  /// Appends `req` (its `link` field is the queue's until its callback runs).
  void push(IoRequest& req) noexcept {
    req.link = nullptr;
    if (tail_ != nullptr) tail_->link = &req; else head_ = &req;
    tail_ = &req;
    ++size_;
  }
  /// Runs the callbacks of every queued request, each dequeued first (so
  /// size() no longer counts it). Returns how many ran.
  std::size_t run() noexcept {
    std::size_t n = 0;
    while (head_ != nullptr) {
      IoRequest* r = head_;
      head_ = r->link;
      if (head_ == nullptr) tail_ = nullptr;
      --size_;
      ++n;
      if (r->on_complete != nullptr) r->on_complete(*r);
    }
    return n;
  }
  bool empty() const noexcept { return head_ == nullptr; }
  /// Requests queued whose callbacks have not yet run.
  std::size_t size() const noexcept { return size_; }

 private:
  IoRequest* head_ = nullptr;
  IoRequest* tail_ = nullptr;
  std::size_t size_ = 0;
};

// ---- Synchronous helpers (submit one request, poll until it completes) ----

/// Reads `buf.size()` bytes at byte `offset`. Errors: Errc::out_of_range,
/// Errc::unaligned, Errc::io, Errc::short_io (with the offset).
Status read_at(BlockDevice& dev, std::uint64_t offset, std::span<std::uint8_t> buf,
               std::uint16_t tag = 0);
/// Writes `buf` at byte `offset`. Errors as read_at, plus Errc::read_only.
Status write_at(BlockDevice& dev, std::uint64_t offset, std::span<const std::uint8_t> buf,
                std::uint16_t tag = 0);
/// Makes completed writes durable.
Status flush(BlockDevice& dev);
/// Discards `length` bytes at `offset` (contents undefined afterwards).
Status discard(BlockDevice& dev, std::uint64_t offset, std::uint64_t length);
/// Zeroes `length` bytes at `offset`, guaranteed to read back as zeroes.
Status write_zeroes(BlockDevice& dev, std::uint64_t offset, std::uint64_t length);
/// Waits until every request in flight on `dev` has completed.
void drain(BlockDevice& dev) noexcept;

// ---- Backends ----

/// A device in memory, sparse (unwritten ranges read as zeroes; 64 KiB
/// chunks are allocated on first write). `size_bytes` must be a multiple of
/// `logical_block_size` (512 or 4096). write_zeroes and discard free chunks.
std::unique_ptr<BlockDevice> make_memory_device(std::uint64_t size_bytes,
                                                std::uint32_t logical_block_size = 512,
                                                std::string name = "memory");

// ---- In use ----

/// What holds a device or image file (check_in_use()).
enum class InUseKind : std::uint8_t {
  none,
  mounted,            ///< mounted, or an image file whose loop device is mounted
  swap,               ///< an active swap area (/proc/swaps)
  held_exclusively,   ///< a block device another open holds with O_EXCL (EBUSY)
  other_file_system,  ///< holds a file system that is not F2FS (asked for raw writes)
  being_written,      ///< an image file an f2fscore tool holds its lock on (asked for reads)
};
std::string_view in_use_kind_name(InUseKind k) noexcept;

struct InUse {
  InUseKind kind = InUseKind::none;
  /// For people: "/dev/loop3 is mounted on /mnt (ext4)", "img backs
  /// /dev/loop3, which is held open exclusively (O_EXCL) by another program".
  std::string detail;
  explicit operator bool() const noexcept { return kind != InUseKind::none; }
};

struct InUseCheck {
  /// Probe block devices with an O_EXCL open. False where this process
  /// holds the device exclusively itself (DeviceInfo::exclusive): its own
  /// claim would answer EBUSY. Loop devices behind an image are always probed.
  bool exclusive = true;
  /// Also report a file system of another kind than F2FS on it (libblkid's
  /// superblock probe where the build has it, else the magic numbers of
  /// ext2/3/4, XFS, btrfs and swap): for raw writes, which would destroy it.
  bool other_file_system = false;
  /// With other_file_system: an F2FS volume counts too (its superblock
  /// magic 0xF2F52010 at byte 1024 of block 0 or 1), for raw writes.
  bool f2fs_too = false;
  /// Also report an image file whose lock a writing f2fscore tool holds
  /// (open_device()'s exclusive flock(2), probed with a shared lock taken
  /// and dropped at once), for readers: what they read may be behind that
  /// tool's next checkpoint or in the middle of it (an f2fscore-fuse
  /// finishing its unmount). Not for a process that holds the lock itself:
  /// its own lock answers. Linux and other flock(2) platforms only.
  bool writer_lock = false;
};

/// Whether `path` (a block device or an image file) is in use, with the
/// rules of e2fsprogs' ext2fs_check_mount_point() (lib/ext2fs/ismounted.c):
/// mounted (/proc/self/mountinfo, by device number or by a source path
/// naming the same block device), an active swap area, or held with O_EXCL
/// by another open; an image file when a mount's source names it (a FUSE
/// mount of the image: same device and inode number) and through every
/// loop device it backs (/sys/block/loopN/loop/backing_file). The
/// first finding is returned; InUseKind::none when nothing holds it and
/// when `path` does not exist (opening it reports that). Reads /proc and
/// /sys; writes nothing. On platforms other than Linux only the file-system
/// probe (InUseCheck::other_file_system) is made, on the first 68 KiB read
/// through open_posix_device(); mounts and other opens are the backend's
/// (the Win32 backend's share modes and FSCTL_LOCK_VOLUME).
InUse check_in_use(const std::string& path, const InUseCheck& what = {});

struct OpenOptions {
  bool read_only = false;
  bool direct = false;     ///< O_DIRECT where the platform has it
  bool exclusive = false;  ///< O_EXCL on block devices: fail if in use (Errc::busy)
  /// For a writable open: refuse with Errc::busy, naming what holds it, a
  /// device or image that check_in_use() reports in use, before anything is
  /// opened for writing; a block device is then opened with O_EXCL too, so
  /// that nothing else claims it while it is open (DeviceInfo::exclusive).
  bool refuse_in_use = false;
  /// With refuse_in_use: refuse a device holding a file system too, F2FS
  /// included (InUseCheck::other_file_system and f2fs_too), for raw writes.
  bool refuse_other_file_system = false;
  /// The caller reads in requests of its own size at scattered offsets
  /// (the checker's scans): the page cache reads no more than each request
  /// asks for (posix_fadvise(POSIX_FADV_RANDOM), which turns the kernel's
  /// read-ahead off for this open; read-ahead would read the data blocks
  /// between the metadata, up to read_ahead_kb per jump). A hint: ignored
  /// where the platform lacks it, and with `direct`.
  bool random_access = false;
  /// An Android sparse image (f2fscore/sparse_image.hpp) is opened as the
  /// image it describes when read-only, and refused (Errc::unsupported)
  /// when writable: nothing writes inside the container. With this set, the
  /// file's own bytes are the device (a tool that replaces the whole file,
  /// as mkfs -f does). Regular files only; with `direct`, the sparse image
  /// is opened buffered (its chunks start at any byte).
  bool sparse_as_raw = false;
  /// A writable, buffered open of a regular file or a block device also
  /// opens the same file with O_DIRECT (checked to be the same inode), and
  /// writes of at least kDirectWriteMin bytes with offset, length and
  /// buffer multiples of 4096 go through it (DeviceInfo::direct_write_min):
  /// a caller with a page cache of its own (the writer's) then does not fill
  /// the host's with a second copy, and on a virtual disk the host copies
  /// the data while this process goes on. Linux keeps the two descriptors
  /// coherent: a direct write first writes back, and afterwards drops, the
  /// host's cached pages of its range (generic_file_direct_write() in
  /// mm/filemap.c). The caller must not have a buffered write and a direct
  /// write of one block in flight at once (the writer waits for a block's
  /// write before it writes or reads the block again). Where O_DIRECT is
  /// refused (tmpfs, platforms without it) or an aligned 4 KiB read through
  /// it fails, every write stays buffered and OpenedDevice::note says so.
  /// POSIX and io_uring backends; ignored with `direct`, `read_only` and
  /// sparse images.
  bool direct_large_writes = false;
};

/// The smallest write that OpenOptions::direct_large_writes sends past the
/// page cache, bytes: below it the copy into the host's page cache costs
/// less than waiting for the device.
inline constexpr std::uint32_t kDirectWriteMin = 64u << 10;

/// Opens a regular file or a block device with plain pread/pwrite (the
/// portable backend; open_device() with Backend::posix). Size from stat or
/// BLKGETSIZE64, logical block size from BLKSSZGET (512 for files); with
/// `direct`, max(4096, BLKSSZGET) for both the block size and the buffer
/// alignment. flush is fdatasync; discard a punched hole or BLKDISCARD;
/// write_zeroes BLKZEROOUT, or a punched hole, or FALLOC_FL_ZERO_RANGE,
/// falling back to writing zeroes from a buffer aligned for O_DIRECT. A
/// write with io_flag::fua is followed by fdatasync before it completes
/// (the guarantee of an O_DSYNC write).
/// Errors: Errc::not_found, Errc::read_only (EROFS/EACCES/EPERM for writing,
/// or a block device that BLKROGET reports read-only opened for writing),
/// Errc::busy (EBUSY with exclusive; in use with refuse_in_use), Errc::unsupported (not a file or
/// block device; O_DIRECT refused by the file system), Errc::io.
Result<std::unique_ptr<BlockDevice>> open_posix_device(const std::string& path,
                                                       const OpenOptions& opts);

}  // namespace f2fscore
