// Resizing a volume with its metadata areas kept in place (f2fscore/resize.hpp).
#include "f2fscore/resize.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/meta_rebuild.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"
#include "mkfs/plan_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;
using detail::fmt;

namespace {

constexpr std::uint32_t kSeg = kBlocksPerSeg;
constexpr std::uint32_t kNoSeg = 0xFFFFFFFFu;

struct Loaded {
  std::unique_ptr<Volume> vol;
  ResizePlan plan;
  bool truncated = false;  ///< the device ends before the volume
};

// The segment numbers of the six active logs of a checkpoint.
std::array<std::uint32_t, kNrCursegType> curseg_segnos(const Checkpoint& cp) {
  std::array<std::uint32_t, kNrCursegType> s{};
  for (unsigned i = 0; i < 3; ++i) {
    s[i] = cp.cur_data_segno[i].get();
    s[3 + i] = cp.cur_node_segno[i].get();
  }
  return s;
}

// Fsynced node chains past the checkpoint, or a checkpoint not written by an
// unmount: the volume must be mounted (rolled forward) and unmounted first.
bool pending_or_dirty(const OpenReport& rep, const Checkpoint& cp) {
  return rep.pending_fsync_nodes != 0 || !(cp.ckpt_flags.get() & cp_flag::umount);
}

// Opens the volume; a truncated image (the device ends inside the main
// area) is opened as the checker opens it, the blocks past the device's end
// read as errors. `truncated` says which.
Result<std::unique_ptr<Volume>> open_volume(BlockDevice& dev, bool& truncated) {
  truncated = false;
  auto v = Volume::open(dev);
  if (v) return v;
  VolumeOpenOptions lo;
  lo.lenient_checkpoint = true;
  auto t = Volume::open(dev, lo);
  const std::uint64_t dev_blocks = dev.info().size_bytes / kBlockSize;
  // Only the truncation may be what the normal open refused: nothing the
  // lenient open clamps in the checkpoint.
  if (!t || (*t)->superblock().block_count.get() <= dev_blocks || (*t)->open_report().next_free_nid_clamped ||
      (*t)->open_report().nat_journal_claimed || (*t)->open_report().sit_journal_claimed)
    return make_error(v.error().code, "cannot open the volume: " + v.error().message);
  truncated = true;
  return t;
}

Result<Loaded> load_and_plan(BlockDevice& dev, const ResizeOptions& o) {
  bool truncated = false;
  auto v = open_volume(dev, truncated);
  if (!v) return make_error(v.error());
  Loaded l{std::move(*v), {}};
  l.truncated = truncated;
  Volume& vol = *l.vol;
  const SuperBlock& sb = vol.superblock();
  const Checkpoint& cp = vol.checkpoint();
  const Geometry& g = vol.geometry();
  const OpenReport& rep = vol.open_report();
  const std::uint32_t feat = sb.feature.get();
  if (feat & (feature::blkzoned | feature::ro))
    return make_error(Errc::unsupported, "zoned and read-only volumes cannot be resized");
  if (sb.devs[0].path[0] != 0)
    return make_error(Errc::unsupported, "multi-device volumes cannot be resized");
  if (pending_or_dirty(rep, cp))
    return make_error(Errc::unsupported,
                      "the volume was not cleanly unmounted (fsynced data to roll forward or no unmount checkpoint): "
                      "mount and unmount it, or run f2fscore-fsck, first");
  const std::uint32_t flags = cp.ckpt_flags.get();
  if (flags & (cp_flag::error | cp_flag::fsck | cp_flag::disabled | cp_flag::resizefs))
    return make_error(Errc::unsupported, fmt("the checkpoint asks for a check (ckpt_flags 0x%llx): run f2fscore-fsck first", flags));

  const std::uint64_t dev_bytes = dev.info().size_bytes;
  if (o.target_sectors > UINT64_MAX / 512)
    return make_error(Errc::invalid_argument, fmt("target size %llu sectors does not fit in 64 bits of bytes", o.target_sectors));
  const std::uint64_t target_bytes = o.target_sectors ? o.target_sectors * 512 : dev_bytes;
  if (target_bytes > dev_bytes)
    return make_error(Errc::invalid_argument, fmt("target size %llu bytes is larger than the device (%llu bytes)",
                                                  target_bytes, dev_bytes));
  ResizePlan& p = l.plan;
  p.old_block_count = sb.block_count.get();
  p.old_segment_count = sb.segment_count.get();
  p.old_main_segments = sb.segment_count_main.get();
  p.old_user_block_count = cp.user_block_count.get();
  p.valid_block_count = cp.valid_block_count.get();
  p.new_block_count = target_bytes / kBlockSize;
  const std::uint32_t segs_per_sec = g.segs_per_sec();
  const std::uint32_t segs_per_zone = segs_per_sec * sb.secs_per_zone.get();
  const std::uint64_t seg0 = sb.segment0_blkaddr.get();
  // The device's whole segments from segment0, and those in whole zones
  // (segment_count), as mkfs.f2fs counts them for a device of the new size.
  const std::uint64_t dev_segs = p.new_block_count > seg0 ? (p.new_block_count - seg0) / kSeg : 0;
  const std::uint64_t whole = dev_segs / segs_per_zone * segs_per_zone;
  const std::uint32_t meta = g.meta_segments();
  if (whole <= meta + kNrCursegType)
    return make_error(Errc::invalid_argument, fmt("target size %llu bytes leaves no room for the main area (%llu metadata segments)",
                                                  target_bytes, meta));
  if (whole > 0xFFFFFFFFull) return make_error(Errc::unsupported, "target size past 2^32 segments");
  p.new_segment_count = static_cast<std::uint32_t>(whole);
  p.new_main_segments = (p.new_segment_count - meta) / segs_per_sec * segs_per_sec;
  p.sit_capacity_segments = g.sit_blocks() * kSitEntryPerBlock;
  p.ssa_capacity_segments = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      0xFFFFFFFFull, static_cast<std::uint64_t>(sb.segment_count_ssa.get()) * kSeg));
  const bool smaller = p.new_main_segments < p.old_main_segments || p.new_block_count < p.old_block_count;
  if (smaller && !o.shrink && l.truncated)
    return make_error(Errc::invalid_argument,
                      fmt("the device (%llu bytes) ends before the volume (%llu bytes, a truncated image): fitting the "
                          "volume to it is a shrink: give --shrink",
                          dev_bytes, p.old_block_count * kBlockSize));
  if (smaller && !o.shrink)
    return make_error(Errc::invalid_argument,
                      fmt("target size %llu bytes is smaller than the volume (%llu bytes): shrinking needs --shrink",
                          target_bytes, p.old_block_count * kBlockSize));
  if (l.truncated) {
    // The SIT (before the device's end) says what the lost tail held: a
    // truncated image is fitted to the device only when none of the blocks
    // past the device's end is in use.
    const std::uint64_t dev_blocks = dev_bytes / kBlockSize;
    const std::uint64_t main0 = g.main_blkaddr();
    const auto first_lost = static_cast<std::uint32_t>(dev_blocks > main0 ? (dev_blocks - main0) / kSeg : 0);
    std::uint64_t lost = 0;
    if (first_lost < p.old_main_segments) {
      std::vector<SegmentInfo> segs;
      F2FSCORE_TRY(vol.segments(first_lost, p.old_main_segments - first_lost, segs));
      for (std::size_t i = 0; i < segs.size(); ++i)
        for (std::uint32_t b = 0; b < kSeg; ++b)
          if (((segs[i].valid_map[b / 8] >> (7 - b % 8)) & 1) &&
              main0 + (static_cast<std::uint64_t>(first_lost) + i) * kSeg + b >= dev_blocks)
            ++lost;
    }
    if (lost)
      return make_error(Errc::corrupt,
                        fmt("the device ends at block %llu, before the volume's %llu blocks (a truncated image), and ",
                            dev_blocks, p.old_block_count) +
                            fmt("%llu blocks in use lie past its end: they are lost; restore the image's tail or run "
                                "f2fscore-fsck",
                                lost));
  }
  const std::uint32_t cap = std::min(p.sit_capacity_segments, p.ssa_capacity_segments);
  if (p.new_main_segments > cap)
    return make_error(Errc::unsupported,
                      fmt("growing to %llu main segments needs larger SIT/SSA areas (they describe %llu segments, ",
                          p.new_main_segments, cap) +
                          fmt("at most %llu MiB of main area): moving the metadata areas and the main area could not "
                              "survive a power cut, so it is not done",
                              static_cast<unsigned long long>(cap) * 2));
  // Reserved and overprovision segments as mkfs.f2fs 1.15 computes them
  // for a device of the new size (f2fs_format.c): from the usable segments
  // (every whole segment of the device past the metadata zones, as
  // f2fs_get_usable_segments() counts them) and the average segments a
  // section (usable segments over sections, rounded up); user_block_count
  // is (usable - overprovision segments) x 512.
  const std::uint64_t meta_area_segs = (static_cast<std::uint64_t>(sb.main_blkaddr.get()) - seg0) / kSeg;
  const auto usable = static_cast<std::uint32_t>(dev_segs - std::min(dev_segs, meta_area_segs));
  const std::uint32_t sections = p.new_main_segments / segs_per_sec;
  const std::uint32_t segs_per_sec_avg = sections ? (usable + sections - 1) / sections : 1;
  p.overprovision = best_overprovision(p.new_main_segments, usable, segs_per_sec_avg);
  if (p.overprovision <= 0) return make_error(Errc::invalid_argument, "target size too small for an F2FS volume");
  p.reserved_segments = static_cast<std::uint32_t>((2 * (100 / p.overprovision + 1) + kNrCursegType) * segs_per_sec_avg);
  const auto ovp = static_cast<std::uint32_t>((usable - std::min(usable, p.reserved_segments)) * p.overprovision / 100);
  p.overprov_segments = ovp + p.reserved_segments;
  if (p.new_main_segments < kNrCursegType || p.new_main_segments - kNrCursegType < p.reserved_segments ||
      p.new_main_segments <= p.overprov_segments || usable <= p.overprov_segments)
    return make_error(Errc::invalid_argument,
                      fmt("target size too small: %llu main segments, %llu reserved", p.new_main_segments, p.reserved_segments));
  p.new_user_block_count = static_cast<std::uint64_t>(usable - p.overprov_segments) * kSeg;
  if (p.valid_block_count > p.new_user_block_count)
    return make_error(Errc::no_space, fmt("the data does not fit: %llu blocks in use, the new size holds %llu",
                                          p.valid_block_count, p.new_user_block_count));
  if (p.new_main_segments < p.old_main_segments) {
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(vol.segments(p.new_main_segments, p.old_main_segments - p.new_main_segments, segs));
    for (const auto& s : segs)
      if (s.valid_blocks) {
        ++p.segments_to_empty;
        p.blocks_to_move += s.valid_blocks;
      }
  }
  if (l.truncated) {
    if (p.segments_to_empty)
      return make_error(Errc::unsupported,
                        fmt("a truncated image with %llu blocks in use past the new end: grow the image back to %llu "
                            "bytes first (f2fscore-fsck -y does), then resize",
                            p.blocks_to_move, p.old_block_count * kBlockSize));
  }
  return l;
}

}  // namespace

Result<ResizePlan> plan_resize(BlockDevice& dev, const ResizeOptions& opts) {
  auto l = load_and_plan(dev, opts);
  if (!l) return make_error(l.error());
  return l->plan;
}

Result<ResizeReport> resize_volume(BlockDevice& dev, const ResizeOptions& opts) {
  auto l = load_and_plan(dev, opts);
  if (!l) return make_error(l.error());
  ResizeReport r;
  r.plan = l->plan;
  const ResizePlan& p = r.plan;
  if (p.unchanged()) return r;
  if (p.segments_to_empty) {
    // A shrink over data: the writer's GC moves the blocks below the new
    // end, each move committed by its checkpoints (the volume stays the old
    // one, with the same tree).
    l->vol.reset();
    MountOptions mo;
    mo.refuse_in_use = false;  // the caller opened the device (see resize.hpp)
    mo.checkpoint_interval_s = 0;
    mo.gc.background = false;
    mo.discard = false;
    auto w = Writer::mount(dev, mo);
    if (!w) return make_error(w.error().code, "mounting to move the blocks past the new end: " + w.error().message);
    auto left = (*w)->evacuate(p.new_main_segments);
    if (!left) return make_error(left.error().code, "moving the blocks past the new end: " + left.error().message);
    F2FSCORE_TRY((*w)->unmount());
    if (*left)
      return make_error(Errc::no_space, fmt("%llu valid blocks could not be moved below segment %llu", *left,
                                            p.new_main_segments));
    r.blocks_moved = p.blocks_to_move;
    auto again = load_and_plan(dev, opts);
    if (!again) return make_error(again.error());
    l = std::move(again);
    if (l->plan.segments_to_empty)
      return make_error(Errc::no_space, "blocks are still past the new end after moving them");
    r.plan = l->plan;
  }
  const bool grow = p.new_main_segments >= p.old_main_segments;
  const std::uint32_t keep = std::min(p.old_main_segments, p.new_main_segments);

  // 1. A checkpoint of the old layout from the truth: empty journals (every
  // SIT and NAT entry in its block, so none names a segment a shrink cuts),
  // the active logs below the new end.
  {
    Volume& vol = *l->vol;
    auto plan = meta::plan_from_volume(vol);
    if (!plan) return make_error(plan.error());
    const Checkpoint& cp = vol.checkpoint();
    std::array<meta::LogPosition, 6> logs{};
    for (unsigned i = 0; i < 3; ++i) {
      logs[i] = {cp.cur_data_segno[i].get(), cp.cur_data_blkoff[i].get(), cp.alloc_type[i]};
      logs[3 + i] = {cp.cur_node_segno[i].get(), cp.cur_node_blkoff[i].get(), cp.alloc_type[3 + i]};
    }
    // Segments in use, to find free ones for logs that must move: a whole
    // free section below the new end that no other log holds.
    const Geometry& g = vol.geometry();
    std::vector<SegmentInfo> segs;
    F2FSCORE_TRY(vol.segments(0, keep, segs));
    const std::uint32_t sps = g.segs_per_sec();
    auto sec_taken = [&](std::uint32_t sec) {
      for (const auto& lg : logs)
        if (lg.segno != kNoSeg && lg.segno < p.old_main_segments && lg.segno / sps == sec) return true;
      for (std::uint32_t s = sec * sps; s < (sec + 1) * sps; ++s)
        if (s >= keep || segs[s].valid_blocks) return true;
      return false;
    };
    std::uint32_t next_sec = 0;
    for (auto& lg : logs) {
      if (lg.segno < keep) continue;
      while (next_sec < keep / sps && sec_taken(next_sec)) ++next_sec;
      if (next_sec >= keep / sps)
        return make_error(Errc::no_space, "no free section below the new end for an active log");
      lg = {next_sec * sps, 0, 0};
      ++r.cursegs_moved;
    }
    plan->cursegs = logs;
    plan->umount = true;
    auto st = meta::rebuild(dev, vol, *plan);
    if (!st) return make_error(st.error().code, "checkpoint before the resize: " + st.error().message);
  }
  bool truncated = false;
  auto v = open_volume(dev, truncated);
  if (!v) return make_error(v.error().code, "reopening after the checkpoint: " + v.error().message);
  Volume& vol = **v;
  const SuperBlock& osb = vol.superblock();
  const Checkpoint& ocp = vol.checkpoint();
  const Geometry& g = vol.geometry();
  const int cur = vol.open_report().checkpoint_pack;

  // 2. The current pack as stored, and its nat_bits.
  const std::uint32_t nblocks = ocp.cp_pack_total_block_count.get();
  std::vector<std::uint8_t> pack(static_cast<std::size_t>(nblocks) * kBlockSize);
  F2FSCORE_TRY(read_at(dev, g.cp_pack_start(cur) * kBlockSize, pack));
  const bool nat_bits = ocp.ckpt_flags.get() & cp_flag::nat_bits;
  std::vector<std::uint8_t> nb;
  if (nat_bits) {
    nb.resize(static_cast<std::size_t>(g.nat_bits_layout().blocks) * kBlockSize);
    F2FSCORE_TRY(read_at(dev, g.nat_bits_addr(cur) * kBlockSize, nb));
  }

  // 3. Free segments of the new main area (no valid block, no active log).
  std::vector<SegmentInfo> segs;
  F2FSCORE_TRY(vol.segments(0, keep, segs));
  const auto logs = curseg_segnos(ocp);
  std::uint32_t free_segs = 0;
  for (std::uint32_t s = 0; s < p.new_main_segments; ++s) {
    if (s < keep && segs[s].valid_blocks) continue;
    if (std::find(logs.begin(), logs.end(), s) != logs.end()) continue;
    ++free_segs;
  }

  // 4. A grow: the added segments' SIT entries must read as free in the
  // current copy; stale ones (left by an earlier shrink) are zeroed in place
  // (the old volume does not read entries past its main area).
  if (grow) {
    const std::uint32_t first_blk = Geometry::sit_block_of(p.old_main_segments);
    const std::uint32_t last_blk = Geometry::sit_block_of(p.new_main_segments - 1);
    std::vector<std::uint8_t> b(kBlockSize);
    bool wrote = false;
    for (std::uint32_t idx = first_blk; idx <= last_blk; ++idx) {
      const std::uint64_t addr = g.current_sit_addr(idx, vol.version_bitmaps());
      F2FSCORE_TRY(read_at(dev, addr * kBlockSize, b));
      auto* blk = reinterpret_cast<SitBlock*>(b.data());
      bool dirty = false;
      for (std::uint32_t e = 0; e < kSitEntryPerBlock; ++e) {
        const std::uint32_t segno = idx * kSitEntryPerBlock + e;
        if (segno < p.old_main_segments || segno >= p.new_main_segments) continue;
        static const SitEntry zero{};
        if (std::memcmp(&blk->entries[e], &zero, sizeof zero) != 0) {
          std::memset(&blk->entries[e], 0, sizeof(SitEntry));
          dirty = true;
        }
      }
      if (!dirty) continue;
      F2FSCORE_TRY(write_at(dev, addr * kBlockSize, b));
      ++r.sit_blocks_zeroed;
      wrote = true;
    }
    if (wrote) F2FSCORE_TRY(flush(dev));
  }

  // 5. The new pack: the current one with the new size's counts, version + 1.
  Checkpoint ncp;
  std::memcpy(&ncp, pack.data(), sizeof ncp);
  ncp.checkpoint_ver.set(ocp.checkpoint_ver.get() + 1);
  ncp.user_block_count.set(p.new_user_block_count);
  ncp.rsvd_segment_count.set(p.reserved_segments);
  ncp.overprov_segment_count.set(p.overprov_segments);
  ncp.free_segment_count.set(free_segs);
  std::memcpy(pack.data(), &ncp, sizeof ncp);
  seal_checkpoint(pack.data());
  std::memcpy(pack.data() + static_cast<std::size_t>(nblocks - 1) * kBlockSize, pack.data(), kBlockSize);
  if (nat_bits) {
    const std::uint64_t h = nat_bits_header(pack.data());
    for (int i = 0; i < 8; ++i) nb[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(h >> (8 * i));
  }
  r.checkpoint_ver = ncp.checkpoint_ver.get();
  const int other = 1 - cur;
  auto write_pack = [&]() -> Status {
    F2FSCORE_TRY(write_at(dev, g.cp_pack_start(other) * kBlockSize,
                          std::span<const std::uint8_t>(pack).first(static_cast<std::size_t>(nblocks - 1) * kBlockSize)));
    if (nat_bits) F2FSCORE_TRY(write_at(dev, g.nat_bits_addr(other) * kBlockSize, nb));
    F2FSCORE_TRY(flush(dev));
    F2FSCORE_TRY(write_at(dev, (g.cp_pack_start(other) + nblocks - 1) * kBlockSize,
                          std::span<const std::uint8_t>(pack).last(kBlockSize)));
    return flush(dev);
  };

  // 6. The new superblock.
  SuperBlock nsb = osb;
  nsb.block_count.set(p.new_block_count);
  nsb.segment_count.set(p.new_segment_count);
  nsb.segment_count_main.set(p.new_main_segments);
  nsb.section_count.set(p.new_main_segments / g.segs_per_sec());
  if (nsb.feature.get() & feature::sb_checksum) nsb.crc.set(superblock_checksum(nsb));
  F2FSCORE_TRY(validate_superblock(nsb, dev.info().size_bytes / kBlockSize, 0));
  std::vector<std::uint8_t> sbb(2 * kBlockSize);
  F2FSCORE_TRY(read_at(dev, 0, sbb));
  auto write_sbs = [&]() -> Status {
    for (std::uint64_t slot : {1u, 0u}) {
      std::span<std::uint8_t> b(sbb.data() + slot * kBlockSize, kBlockSize);
      std::memcpy(b.data() + kSuperOffset, &nsb, sizeof nsb);
      F2FSCORE_TRY(write_at(dev, slot * kBlockSize, b));
      F2FSCORE_TRY(flush(dev));
    }
    return {};
  };
  // A grow: the superblocks first (a larger main area with the old pack's
  // smaller user_block_count is valid); a shrink: the pack first (its
  // smaller user_block_count is valid for the old main area).
  if (grow) {
    F2FSCORE_TRY(write_sbs());
    F2FSCORE_TRY(write_pack());
  } else {
    F2FSCORE_TRY(write_pack());
    F2FSCORE_TRY(write_sbs());
  }
  r.resized = true;
  return r;
}

}  // namespace f2fscore
