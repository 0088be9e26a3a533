// Copy-on-write devices for tests: snapshots and clones of a device image,
// and overlays that never write the device below (the idea of dm-snapshot's
// COW device, in memory).
//
// A CowDevice keeps the blocks written to it in memory, in 4 KiB blocks
// (kBlockSize) aligned to the start of the device; every other block reads
// from its base device, or as zeroes when it has none. Its memory follows
// the blocks written, not the device size.
//
//   - CowDevice::memory(): a sparse memory device (like make_memory_device())
//     that can be cloned;
//   - CowDevice::overlay(): over any BlockDevice, which it only reads;
//   - CowDevice::copy_of(): a snapshot of a device's current contents (a
//     memory device, an image file), copied once into memory;
//   - clone(): a new device with the same contents now. Writes to a clone
//     never reach its base, its parent or its siblings; a clone of a clone
//     works the same way.
//
// How: the blocks a device writes are its own; clone() freezes them into
// an immutable layer that the device and the clone both read through (a
// chain of such layers down to the base), and each goes on writing blocks
// of its own. A clone costs a few allocations whatever the device holds,
// and its memory is the blocks it writes. Reads look a block up in the
// device's own blocks, then layer by layer; when a chain grows past 16
// layers, clone() merges it into one (for the devices cloned from then on).
//
// A crash harness formats once, takes copy_of() the formatted image (or
// formats a CowDevice::memory() directly), and starts each crash state from
// a clone().
//
// Requests complete at submission (the callback runs at the next poll()).
// Threading: one thread at a time per device, like every device; clone()
// is a call on the device cloned. Frozen layers are never written, so
// clones of a device without a base may be used on different threads;
// clones of an overlay share its base device, so all of them must be used
// from one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "f2fscore/device.hpp"
#include "f2fscore/result.hpp"

namespace f2fscore {

class CowDevice final : public BlockDevice {
 public:
  /// The unit of copy-on-write, bytes (the F2FS block size).
  static constexpr std::uint32_t kBlockSize = 4096;

  /// A sparse memory device of `size_bytes` bytes whose blocks read as
  /// zeroes until written. `logical_block_size` is 512, 1024, 2048 or 4096;
  /// `size_bytes` a multiple of it. Errors: Errc::invalid_argument for
  /// either rule broken.
  static Result<std::unique_ptr<CowDevice>> memory(std::uint64_t size_bytes,
                                                   std::uint32_t logical_block_size = 512,
                                                   std::string name = "cow memory");

  /// An overlay over `base`: reads of blocks not written through the overlay
  /// come from `base`; writes, write_zeroes and discards stay in the
  /// overlay; flush does nothing (nothing is durable below). The overlay's
  /// info() is the base's (size, logical block size, buffer alignment),
  /// writable and of kind DeviceKind::memory, even over a read-only base.
  /// Nothing may write `base` while the overlay or a clone of it is in use
  /// (their reads would see the change). `base` is shared by the clones.
  /// Errors: Errc::invalid_argument when `base` is null or its logical block
  /// size does not divide 4096.
  static Result<std::unique_ptr<CowDevice>> overlay(std::shared_ptr<BlockDevice> base, std::string name = {});
  /// As above over a device the caller keeps alive longer than the overlay
  /// and every clone of it.
  static Result<std::unique_ptr<CowDevice>> overlay(BlockDevice& base, std::string name = {});

  /// A snapshot of what `dev` holds now, copied into a new memory CowDevice
  /// of the same size and logical block size. Only ranges that may hold data
  /// are read (BlockDevice::next_data(); a backend without hole information
  /// is read whole), and 4 KiB blocks that read as zeroes are not stored,
  /// so the memory used follows the data. `dev` must have no request in
  /// flight. Errors: those of reading `dev` (Errc::io, ...), and
  /// Errc::invalid_argument as memory().
  static Result<std::unique_ptr<CowDevice>> copy_of(BlockDevice& dev, std::string name = {});

  ~CowDevice() override;

  /// A device with this one's contents now: same size, base and blocks.
  /// The two are independent from then on. `name` empty: this device's
  /// name with "+clone" appended. Freezes this device's own blocks into a
  /// layer both share (private_blocks() becomes 0). Throws std::bad_alloc
  /// only.
  std::unique_ptr<CowDevice> clone(std::string name = {});

  const DeviceInfo& info() const noexcept override { return info_; }
  void submit(IoRequest& req) noexcept override;
  std::size_t poll(bool wait) noexcept override;
  std::size_t in_flight() const noexcept override { return done_.size(); }
  /// Holes are reported for a device without a base only (4 KiB blocks never
  /// written, or zeroed or discarded whole); an overlay keeps the defaults.
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override;
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override;

  /// 4 KiB blocks of this device that hold data in memory (written to it
  /// or to the devices it was cloned from), shared ones included; blocks
  /// read from the base, and blocks zeroed or discarded, are not counted.
  /// Walks every layer: for tests.
  std::uint64_t stored_blocks() const;
  /// 4 KiB blocks written to this device since it was made or last cloned:
  /// the memory it alone holds is private_blocks() * kBlockSize bytes (plus
  /// a map entry each).
  std::uint64_t private_blocks() const noexcept;
  /// Frozen layers this device reads through (0 before its first clone()).
  std::uint32_t layers() const noexcept;
  /// The base device of an overlay (nullptr for memory devices).
  BlockDevice* base() const noexcept { return base_.get(); }

 private:
  struct Block {
    std::uint8_t bytes[kBlockSize];
  };
  // Block index -> contents; a null pointer: zeroes hiding what is below.
  using BlockMap = std::map<std::uint64_t, std::shared_ptr<Block>>;
  struct Layer;  // frozen blocks over a parent layer

  CowDevice(std::shared_ptr<BlockDevice> base, const DeviceInfo& info);
  void execute(IoRequest& req);
  std::uint32_t block_bytes(std::uint64_t idx) const noexcept;
  // The entry of block `idx` (own blocks, then the layers); nullptr when
  // none has one: the block reads from the base, or as zeroes.
  const std::shared_ptr<Block>* find(std::uint64_t idx) const noexcept;
  // The first block index >= idx with an entry anywhere; ~0 when none.
  std::uint64_t next_entry(std::uint64_t idx) const noexcept;
  Status read_base(std::uint64_t off, std::uint8_t* dst, std::uint64_t len);
  Result<Block*> writable_block(std::uint64_t idx, bool whole);
  Status write_piece(std::uint64_t off, const std::uint8_t* src, std::uint64_t len);
  Status zero_piece(std::uint64_t off, std::uint64_t len);
  Status read_range(std::uint64_t off, std::uint8_t* dst, std::uint64_t len);

  std::shared_ptr<BlockDevice> base_;
  DeviceInfo info_;
  std::shared_ptr<const Layer> frozen_;  // null before the first clone()
  BlockMap own_;                         // written since; never shared
  CompletionQueue done_;
};

}  // namespace f2fscore
