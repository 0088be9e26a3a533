// Superblock checks and helpers.
#include "f2fscore/disk/superblock.hpp"

#include <cstdio>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/disk/sit.hpp"
#include "util/text.hpp"

namespace f2fscore::disk {

std::uint32_t superblock_checksum(const SuperBlock& sb) noexcept {
  return f2fs_crc32(kSuperMagic, &sb, kSbChecksumOffset);
}

namespace {
using detail::fmt;
}  // namespace

Status validate_superblock(const SuperBlock& sb, std::uint64_t device_blocks, int which) {
  const std::uint64_t where = static_cast<std::uint64_t>(which) * kBlockSize + kSuperOffset;
  const std::string name = which == 0 ? "superblock #0: " : "superblock #1: ";
  auto bad = [&](std::string what) { return make_error(Errc::corrupt, name + what, where); };

  if (sb.magic.get() != kSuperMagic)
    return bad(fmt("magic 0x%llx is not 0xf2f52010", sb.magic.get()));
  if (sb.feature.get() & feature::sb_checksum) {
    if (sb.checksum_offset.get() != kSbChecksumOffset)
      return bad(fmt("checksum_offset %llu is not 3068", sb.checksum_offset.get()));
    const std::uint32_t want = superblock_checksum(sb);
    if (sb.crc.get() != want)
      return bad(fmt("crc 0x%llx does not match the contents (0x%llx)", sb.crc.get(), want));
  }
  const std::uint32_t log_bs = sb.log_blocksize.get();
  if (log_bs != kLogBlockSize) {
    if (log_bs == 13 || log_bs == 14)
      return make_error(Errc::unsupported,
                        name + fmt("block size %llu bytes: only 4096-byte blocks are supported", 1ull << log_bs),
                        where);
    return bad(fmt("log_blocksize %llu outside [12,12]", log_bs));
  }
  if (sb.log_blocks_per_seg.get() != kLogBlocksPerSeg)
    return bad(fmt("log_blocks_per_seg %llu is not 9", sb.log_blocks_per_seg.get()));
  const std::uint32_t log_ss = sb.log_sectorsize.get();
  if (log_ss < 9 || log_ss > 12)
    return bad(fmt("log_sectorsize %llu outside [9,12]", log_ss));
  if (log_ss + sb.log_sectors_per_block.get() != kLogBlockSize)
    return bad(fmt("log_sectorsize %llu + log_sectors_per_block %llu is not 12", log_ss,
                   sb.log_sectors_per_block.get()));
  const std::uint32_t spsec = sb.segs_per_sec.get(), spz = sb.secs_per_zone.get();
  const std::uint32_t seg_count = sb.segment_count.get();
  if (spsec == 0 || spsec > seg_count) return bad(fmt("segs_per_sec %llu out of range", spsec));
  if (spz == 0 || spz > sb.section_count.get())
    return bad(fmt("secs_per_zone %llu out of range", spz));
  if (seg_count > kMaxSegments || seg_count < kMinSegments)
    return bad(fmt("segment_count %llu outside [9,%llu]", seg_count, kMaxSegments));
  if (sb.segment_count_main.get() != static_cast<std::uint64_t>(sb.section_count.get()) * spsec)
    return bad(fmt("segment_count_main %llu is not section_count %llu x segs_per_sec %llu",
                   sb.segment_count_main.get(), sb.section_count.get(), spsec));
  if (sb.block_count.get() >> kLogBlocksPerSeg < seg_count)
    return bad(fmt("segment_count %llu exceeds block_count %llu", seg_count, sb.block_count.get()));
  // A device list (multi-device volumes): its devices' segments make up
  // the volume, as sanity_check_raw_super() in fs/f2fs/super.c requires
  // (also fsck/mount.c in f2fs-tools); a single device has none.
  if (sb.devs[0].path[0] != 0) {
    std::uint64_t dev_segs = sb.devs[0].total_segments.get();
    for (std::size_t i = 1; i < kMaxDevices && sb.devs[i].path[0] != 0; ++i) dev_segs += sb.devs[i].total_segments.get();
    if (dev_segs != seg_count)
      return bad(fmt("segment_count %llu is not the %llu segments of the device list (devs[0].path is set)", seg_count,
                     dev_segs));
  }
  if (sb.segment_count_ckpt.get() != kCheckpointPacks)
    return bad(fmt("segment_count_ckpt %llu is not 2", sb.segment_count_ckpt.get()));
  // Area boundaries, as sanity_check_area_boundary() in fs/f2fs/super.c.
  const std::uint64_t seg0 = sb.segment0_blkaddr.get();
  struct Area {
    const char* name;
    std::uint64_t start, segs;
  } areas[] = {
      {"cp_blkaddr", sb.cp_blkaddr.get(), sb.segment_count_ckpt.get()},
      {"sit_blkaddr", sb.sit_blkaddr.get(), sb.segment_count_sit.get()},
      {"nat_blkaddr", sb.nat_blkaddr.get(), sb.segment_count_nat.get()},
      {"ssa_blkaddr", sb.ssa_blkaddr.get(), sb.segment_count_ssa.get()},
      {"main_blkaddr", sb.main_blkaddr.get(), sb.segment_count_main.get()},
  };
  const std::uint64_t seg_end = seg0 + (static_cast<std::uint64_t>(seg_count) << kLogBlocksPerSeg);
  // A boundary that disagrees names the field the neighbours contradict:
  // the area's start when the previous area's end and the next area's
  // start both agree with the expected value; the previous area's segment
  // count (or segment0_blkaddr) when this start fits the next boundary
  // and the previous end does not.
  constexpr const char* kSegsName[] = {"segment_count_ckpt", "segment_count_sit", "segment_count_nat",
                                       "segment_count_ssa", "segment_count_main"};
  constexpr std::size_t kAreas = sizeof areas / sizeof areas[0];
  std::uint64_t expect = seg0;
  for (std::size_t i = 0; i < kAreas; ++i) {
    const Area& a = areas[i];
    if (a.start != expect) {
      const std::uint64_t end_if_right = expect + (a.segs << kLogBlocksPerSeg);
      const std::uint64_t end_as_is = a.start + (a.segs << kLogBlocksPerSeg);
      const std::uint64_t next = i + 1 < kAreas ? areas[i + 1].start : seg_end;
      if (end_as_is == next && end_if_right != next) {
        if (i == 0)
          return bad(fmt("segment0_blkaddr %llu disagrees with cp_blkaddr %llu (expected %llu)", seg0, a.start,
                         a.start));
        const Area& prev = areas[i - 1];
        if (a.start > prev.start && (a.start - prev.start) % kDefaultBlocksPerSeg == 0)
          return bad(std::string(kSegsName[i - 1]) + fmt(" is %llu, expected %llu", prev.segs,
                                                          (a.start - prev.start) >> kLogBlocksPerSeg) +
                     " (the segments from " + prev.name + fmt(" %llu to ", prev.start) + a.name +
                     fmt(" %llu; as written the area would end at %llu)", a.start, expect));
      }
      return bad(std::string(a.name) + fmt(" is %llu, expected %llu (", a.start, expect) +
                 (i == 0 ? std::string("segment0_blkaddr")
                         : std::string(areas[i - 1].name) + " + " + kSegsName[i - 1]) +
                 ")");
    }
    expect = a.start + (a.segs << kLogBlocksPerSeg);
  }
  if (expect > seg_end)
    return bad(fmt("main area ends at block %llu, past the last segment (%llu)", expect, seg_end));
  if (sb.segment_count_sit.get() == 0 || sb.segment_count_nat.get() == 0 ||
      sb.segment_count_sit.get() % 2 != 0 || sb.segment_count_nat.get() % 2 != 0)
    return bad(fmt("segment_count_sit %llu / segment_count_nat %llu must be even and non-zero",
                   sb.segment_count_sit.get(), sb.segment_count_nat.get()));
  // The SIT (one copy) must hold an entry for every main segment and the
  // SSA a summary block for each (the reader indexes both by segment).
  const Geometry geo(sb);
  if (static_cast<std::uint64_t>(geo.sit_blocks()) * kSitEntryPerBlock < geo.main_segments())
    return bad(fmt("segment_count_sit %llu cannot hold %llu main segments", sb.segment_count_sit.get(),
                   sb.segment_count_main.get()));
  // A read-only image (the ro feature) has no SSA: its active logs'
  // summaries live in the checkpoint pack alone, as mkfs.f2fs and
  // sload.f2fs write it (blocks_for_ssa 0 in f2fs_prepare_super_block()).
  const bool ro_without_ssa = (sb.feature.get() & feature::ro) && sb.segment_count_ssa.get() == 0;
  if (!ro_without_ssa &&
      static_cast<std::uint64_t>(sb.segment_count_ssa.get()) * kDefaultBlocksPerSeg < sb.segment_count_main.get())
    return bad(fmt("segment_count_ssa %llu cannot hold %llu main segments", sb.segment_count_ssa.get(),
                   sb.segment_count_main.get()));
  if (sb.cp_payload.get() >= (1u << kLogBlocksPerSeg) - kCheckpointPacks - kNrCursegType)
    return bad(fmt("cp_payload %llu too large", sb.cp_payload.get()));
  if (sb.node_ino.get() != kNodeIno || sb.meta_ino.get() != kMetaIno || sb.root_ino.get() != kRootIno)
    return bad(fmt("reserved inode numbers node %llu meta %llu root %llu are not 1, 2, 3",
                   sb.node_ino.get(), sb.meta_ino.get(), sb.root_ino.get()));
  if (static_cast<std::uint64_t>(sb.extension_count.get()) + sb.hot_ext_count > kMaxExtension)
    return bad(fmt("extension_count %llu + hot_ext_count %llu exceed 64", sb.extension_count.get(),
                   sb.hot_ext_count));
  if (device_blocks != 0 && sb.block_count.get() > device_blocks && sb.devs[0].path[0] == 0)
    return make_error(Errc::corrupt,
                      name + fmt("block_count %llu exceeds the device (%llu blocks): truncated image?",
                                 sb.block_count.get(), device_blocks),
                      where);
  if (sb.feature.get() & feature::blkzoned)
    return make_error(Errc::unsupported, name + "zoned block device volumes are not supported", where);
  if (sb.feature.get() & feature::packed_ssa)
    return make_error(Errc::unsupported, name + "packed_ssa volumes are not supported", where);
  return {};
}

std::string volume_label(const SuperBlock& sb) {
  std::string out;
  for (std::uint32_t i = 0; i < kMaxVolumeName; ++i) {
    std::uint32_t c = sb.volume_name[i].get();
    if (c == 0) break;
    if (c >= 0xD800 && c < 0xDC00 && i + 1 < kMaxVolumeName) {
      const std::uint32_t lo = sb.volume_name[i + 1].get();
      if (lo >= 0xDC00 && lo < 0xE000) {
        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
        ++i;
      }
    }
    detail::append_utf8(out, c);
  }
  return out;
}

Status set_volume_label(SuperBlock& sb, std::string_view label) {
  std::uint16_t units[kMaxVolumeName] = {};
  std::size_t n = 0;
  auto put = [&](std::uint32_t u) -> bool {
    if (n >= kMaxVolumeName) return false;
    units[n++] = static_cast<std::uint16_t>(u);
    return true;
  };
  for (std::size_t i = 0; i < label.size();) {
    const auto b0 = static_cast<unsigned char>(label[i]);
    std::uint32_t cp;
    std::size_t len;
    if (b0 < 0x80) { cp = b0; len = 1; }
    else if ((b0 & 0xE0) == 0xC0) { cp = b0 & 0x1Fu; len = 2; }
    else if ((b0 & 0xF0) == 0xE0) { cp = b0 & 0x0Fu; len = 3; }
    else if ((b0 & 0xF8) == 0xF0) { cp = b0 & 0x07u; len = 4; }
    else return make_error(Errc::invalid_argument, "volume label is not valid UTF-8");
    if (i + len > label.size()) return make_error(Errc::invalid_argument, "volume label is not valid UTF-8");
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(label[i + k]);
      if ((b & 0xC0) != 0x80) return make_error(Errc::invalid_argument, "volume label is not valid UTF-8");
      cp = (cp << 6) | (b & 0x3Fu);
    }
    // The shortest form only, no surrogate halves, nothing past U+10FFFF
    // (RFC 3629, section 3), and no NUL: volume_name ends at the first one.
    static constexpr std::uint32_t kMinOfLen[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinOfLen[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return make_error(Errc::invalid_argument, "volume label is not valid UTF-8");
    if (cp == 0) return make_error(Errc::invalid_argument, "volume label holds a NUL character");
    i += len;
    bool ok;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      ok = put(0xD800 + (cp >> 10)) && put(0xDC00 + (cp & 0x3FF));
    } else {
      ok = put(cp);
    }
    if (!ok) return make_error(Errc::invalid_argument, "volume label is longer than 512 UTF-16 units");
  }
  for (std::uint32_t i = 0; i < kMaxVolumeName; ++i) sb.volume_name[i].set(units[i]);
  return {};
}

std::string feature_names(std::uint32_t f) {
  static const struct {
    std::uint32_t bit;
    const char* name;
  } kNames[] = {
      {feature::encrypt, "encrypt"},
      {feature::blkzoned, "blkzoned"},
      {feature::extra_attr, "extra_attr"},
      {feature::project_quota, "project_quota"},
      {feature::inode_checksum, "inode_checksum"},
      {feature::flexible_inline_xattr, "flexible_inline_xattr"},
      {feature::quota_ino, "quota_ino"},
      {feature::inode_crtime, "inode_crtime"},
      {feature::lost_found, "lost_found"},
      {feature::verity, "verity"},
      {feature::sb_checksum, "sb_checksum"},
      {feature::casefold, "casefold"},
      {feature::compression, "compression"},
      {feature::ro, "ro"},
      {feature::device_alias, "device_alias"},
      {feature::packed_ssa, "packed_ssa"},
  };
  std::string out;
  for (const auto& n : kNames) {
    if (!(f & n.bit)) continue;
    if (!out.empty()) out += ' ';
    out += n.name;
  }
  return out;
}

}  // namespace f2fscore::disk
