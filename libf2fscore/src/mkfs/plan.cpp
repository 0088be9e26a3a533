// The mkfs layout planner: pure arithmetic from device sizes and options to
// a superblock and a checkpoint header. The rules are those of mkfs.f2fs
// 1.15 (f2fs_prepare_super_block() and f2fs_write_check_point_pack() in
// f2fs-tools mkfs/f2fs_format.c), restated here; docs/format.md explains them.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/node.hpp"
#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/nat.hpp"
#include "f2fscore/disk/geometry.hpp"
#include "f2fscore/mkfs.hpp"
#include "mkfs/plan_internal.hpp"

namespace f2fscore {

using namespace disk;

namespace {


std::uint64_t div_up(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::uint32_t log2u(std::uint32_t v) {
  std::uint32_t l = 0;
  while ((1u << (l + 1)) <= v) ++l;
  return l;
}

std::string msg(const char* f, unsigned long long a = 0, unsigned long long b = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// The default extension lists of mkfs.f2fs 1.15 (cold media and hot files).
constexpr const char* kColdExtensions[] = {
    "mp", "wm", "og", "jp", "avi", "m4v", "m4p", "mkv", "mov", "webm", "wav", "m4a",
    "3gp", "opus", "flac", "gif", "png", "svg", "webp", "jar", "deb", "iso", "gz", "xz",
    "zst", "pdf", "pyc", "ttc", "ttf", "exe", "apk", "cnt", "exo", "odex", "vdex", "so"};
constexpr const char* kHotExtensions[] = {"db", "vmdk", "vdi", "qcow2"};

Status fill_extensions(SuperBlock& sb, const MkfsOptions& o) {
  std::uint32_t pos = 0;
  auto exists = [&](std::string_view e) {
    for (std::uint32_t i = 0; i < pos; ++i) {
      const char* s = reinterpret_cast<const char*>(sb.extension_list[i]);
      if (std::string_view(s, strnlen(s, kExtensionLen)) == e) return true;
    }
    return false;
  };
  auto add = [&](std::string_view e) -> Status {
    if (e.empty() || exists(e)) return {};
    if (e.size() >= kExtensionLen)
      return make_error(Errc::invalid_argument,
                        "extension \"" + std::string(e) + "\" is longer than 7 bytes");
    if (pos >= kMaxExtension)
      return make_error(Errc::invalid_argument, "more than 64 file extensions");
    std::memcpy(sb.extension_list[pos++], e.data(), e.size());
    return {};
  };
  for (const char* e : kColdExtensions) F2FSCORE_TRY(add(e));
  for (const auto& e : o.cold_extensions) F2FSCORE_TRY(add(e));
  const std::uint32_t cold = pos;
  for (const char* e : kHotExtensions) F2FSCORE_TRY(add(e));
  for (const auto& e : o.hot_extensions) F2FSCORE_TRY(add(e));
  sb.extension_count.set(cold);
  sb.hot_ext_count = static_cast<std::uint8_t>(pos - cold);
  return {};
}

}  // namespace

// get_best_overprovision() of f2fs-tools 1.15: scan candidate percentages
// and keep the one leaving the most usable space. The floating-point steps
// are kept exactly (accumulated candidate, double arithmetic) so that the
// choice matches bit for bit.
double best_overprovision(std::uint32_t segment_count_main, std::uint32_t usable,
                          std::uint32_t segs_per_sec_avg) {
  double candidate, end, diff;
  if (segment_count_main < 256) {
    candidate = 10; end = 95; diff = 5;
  } else {
    candidate = 0.01; end = 10; diff = 0.01;
  }
  double max_ovp = 0, max_space = 0;
  for (; candidate <= end; candidate += diff) {
    const double reserved = (2 * (100 / candidate + 1) + 6) * segs_per_sec_avg;
    const double ovp = (usable - reserved) * candidate / 100;
    const double space = usable - reserved - ovp;
    if (max_space < space) {
      max_space = space;
      max_ovp = candidate;
    }
  }
  return max_ovp;
}

namespace {

}  // namespace

Result<MkfsPlan> plan_mkfs(std::span<const MkfsTarget> targets, const MkfsOptions& o) {
  if (targets.empty() || targets[0].device == nullptr)
    return make_error(Errc::invalid_argument, "no device given");
  if (targets.size() > kMaxDevices)
    return make_error(Errc::invalid_argument, msg("%llu devices: at most 8 are supported", targets.size()));
  const std::uint32_t feat = o.features;
  const std::uint32_t needs_extra = feature::project_quota | feature::inode_checksum |
                                    feature::flexible_inline_xattr | feature::inode_crtime |
                                    feature::compression;
  if ((feat & needs_extra) && !(feat & feature::extra_attr))
    return make_error(Errc::invalid_argument,
                      "features " + feature_names(feat & needs_extra) + " need extra_attr (-O extra_attr)");
  if (feat & (feature::blkzoned | feature::device_alias | feature::packed_ssa | feature::atomic_write))
    return make_error(Errc::unsupported, "features " +
                                             feature_names(feat & (feature::blkzoned | feature::device_alias |
                                                                   feature::packed_ssa | feature::atomic_write)) +
                                             " cannot be set by this mkfs");
  // A read-only image (the ro feature): two active logs, no SSA, no
  // overprovision or reserved segments, segment 0 right after the two
  // superblock blocks, as f2fs_prepare_super_block() of mkfs.f2fs 1.15
  // lays it out. mkfs.f2fs 1.15 with sections of several segments writes a
  // user_block_count past the main area, which its own fsck and the
  // kernel refuse: refused here.
  const bool ro = feat & feature::ro;
  if (ro && o.segs_per_sec != 1)
    return make_error(Errc::invalid_argument,
                      "a read-only image (-O ro) needs one segment per section (mkfs.f2fs 1.15 writes a volume "
                      "the kernel refuses otherwise)");
  if (ro && targets.size() > 1)
    return make_error(Errc::unsupported, "a read-only image (-O ro) is a single device");
  if ((feat & feature::casefold) && o.encoding != kEncodingUtf8_12_1)
    return make_error(Errc::invalid_argument, "casefold needs an encoding (-C utf8)");
  if (o.segs_per_sec == 0 || o.secs_per_zone == 0 || o.segs_per_sec > (1u << 16) ||
      o.secs_per_zone > (1u << 16))
    return make_error(Errc::invalid_argument, "segments per section and sections per zone must be 1 to 65536");
  if (static_cast<std::uint64_t>(o.segs_per_sec) * o.secs_per_zone > 0xFFFFFFFFull)
    return make_error(Errc::invalid_argument,
                      msg("%llu segments per section x %llu sections per zone: a zone of 2^32 segments or more",
                          o.segs_per_sec, o.secs_per_zone));
  if (o.overprovision < 0 || o.overprovision >= 100)
    return make_error(Errc::invalid_argument, "overprovision must be a percentage below 100");
  if (targets.size() > 1 && o.wanted_sectors != 0)
    return make_error(Errc::invalid_argument, "a sector count cannot be given for a multi-device volume");

  MkfsPlan p;
  SuperBlock& sb = p.sb;
  const std::uint32_t sector_size = targets[0].device->info().logical_block_size;
  for (const auto& t : targets) {
    if (t.device == nullptr) return make_error(Errc::invalid_argument, "missing device");
    if (t.device->info().logical_block_size != sector_size)
      return make_error(Errc::invalid_argument, "devices have different sector sizes");
    if (targets.size() > 1 && t.path.size() >= kMaxPathLen)
      return make_error(Errc::invalid_argument, "device path \"" + t.path + "\" is longer than 63 bytes");
  }
  if (sector_size < 512 || sector_size > kBlockSize || (sector_size & (sector_size - 1)) != 0)
    return make_error(Errc::unsupported, msg("sector size %llu is not a power of two from 512 to 4096", sector_size));
  p.sector_size = sector_size;
  const std::uint32_t sectors_per_blk = kBlockSize / sector_size;

  // Sector counts per device, with the optional size limit on device 0.
  std::vector<std::uint64_t> sectors;
  for (const auto& t : targets) sectors.push_back(t.device->info().size_bytes / sector_size);
  if (o.wanted_sectors != 0) {
    const std::uint64_t unit = o.wanted_sector_size ? o.wanted_sector_size : sector_size;
    const std::uint64_t want = o.wanted_sectors * unit / sector_size;
    if (want > sectors[0])
      return make_error(Errc::invalid_argument,
                        msg("%llu sectors requested but the device has only %llu", want, sectors[0]));
    sectors[0] = want;
  }
  std::uint64_t total_sectors = 0;
  for (auto s : sectors) total_sectors += s;
  if (total_sectors * sector_size > static_cast<std::uint64_t>(kMaxSegments) * 2 * 1024 * 1024)
    return make_error(Errc::unsupported, "F2FS volumes are at most 16 TiB");

  const std::uint32_t segs_per_zone = o.segs_per_sec * o.secs_per_zone;
  const std::uint64_t zone_bytes = static_cast<std::uint64_t>(kBlockSize) * kBlocksPerSeg * segs_per_zone;
  const std::uint64_t seg_bytes = static_cast<std::uint64_t>(kBlockSize) * kBlocksPerSeg;

  sb.magic.set(kSuperMagic);
  sb.major_ver.set(kMajorVersion);
  sb.minor_ver.set(kMinorVersion);
  const std::uint32_t log_ss = log2u(sector_size);
  sb.log_sectorsize.set(log_ss);
  sb.log_sectors_per_block.set(kLogBlockSize - log_ss);
  sb.log_blocksize.set(kLogBlockSize);
  sb.log_blocks_per_seg.set(kLogBlocksPerSeg);
  sb.segs_per_sec.set(o.segs_per_sec);
  sb.secs_per_zone.set(o.secs_per_zone);
  sb.block_count.set(total_sectors / sectors_per_blk);

  // segment0 is aligned to a zone, past the two superblock blocks.
  const std::uint64_t start_bytes = o.start_sector * 512;
  const std::uint64_t align_ofs =
      ro ? 2 * kBlockSize : div_up(start_bytes + 2 * kBlockSize, zone_bytes) * zone_bytes - start_bytes;
  sb.segment0_blkaddr.set(static_cast<std::uint32_t>(align_ofs / kBlockSize));
  sb.cp_blkaddr = sb.segment0_blkaddr.get();
  if (sectors[0] * sector_size < align_ofs)
    return make_error(Errc::no_space, "device size is not sufficient for an F2FS volume");

  std::uint64_t total_segments = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    MkfsPlan::DeviceExtent d{};
    d.sectors = sectors[i];
    if (i == 0) {
      d.total_segments = (sectors[i] * sector_size - align_ofs) / seg_bytes;
      d.start_blkaddr = 0;
      d.end_blkaddr = d.total_segments * kBlocksPerSeg - 1 + sb.segment0_blkaddr.get();
    } else {
      d.total_segments = sectors[i] / (sectors_per_blk * kBlocksPerSeg);
      d.start_blkaddr = p.devices[i - 1].end_blkaddr + 1;
      d.end_blkaddr = d.start_blkaddr + d.total_segments * kBlocksPerSeg - 1;
    }
    if (targets.size() > 1) {
      std::memcpy(sb.devs[i].path, targets[i].path.data(), targets[i].path.size());
      sb.devs[i].total_segments.set(static_cast<std::uint32_t>(d.total_segments));
    }
    total_segments += d.total_segments;
    p.devices.push_back(d);
  }
  if (total_segments > kMaxSegments) return make_error(Errc::unsupported, "F2FS volumes are at most 16 TiB");
  const auto seg_count = static_cast<std::uint32_t>(total_segments / segs_per_zone * segs_per_zone);
  sb.segment_count.set(seg_count);
  sb.segment_count_ckpt.set(kCheckpointPacks);
  sb.sit_blkaddr.set(sb.segment0_blkaddr.get() + kCheckpointPacks * kBlocksPerSeg);

  const auto blocks_for_sit = div_up(seg_count, kSitEntryPerBlock);
  const auto sit_segments = static_cast<std::uint32_t>(div_up(blocks_for_sit, kBlocksPerSeg));
  sb.segment_count_sit.set(sit_segments * 2);
  sb.nat_blkaddr.set(sb.sit_blkaddr.get() + sb.segment_count_sit.get() * kBlocksPerSeg);

  std::uint64_t avail_blocks =
      static_cast<std::uint64_t>(seg_count - (kCheckpointPacks + sb.segment_count_sit.get())) * kBlocksPerSeg;
  const auto blocks_for_nat = div_up(avail_blocks, kNatEntryPerBlock);
  std::uint32_t nat_segs = static_cast<std::uint32_t>(div_up(blocks_for_nat, kBlocksPerSeg));
  std::uint32_t max_nat_bitmap = 0;
  if (o.large_nat_bitmap) {
    nat_segs = nat_segs * kDefaultNatEntryRatio / 100;
    if (nat_segs == 0) nat_segs = 1;
    max_nat_bitmap = (nat_segs << kLogBlocksPerSeg) / 8;
  }
  // The SIT and NAT version bitmaps share the CP block; a large SIT bitmap
  // moves to cp_payload blocks and the NAT is capped to what still fits.
  constexpr std::uint32_t kMaxSitBitmapSize =
      static_cast<std::uint32_t>((kMaxSegments + kSitEntryPerBlock - 1) / kSitEntryPerBlock + kBlocksPerSeg - 1) /
      kBlocksPerSeg * kBlocksPerSeg / 8;
  static_assert(kMaxSitBitmapSize == 19072);
  const std::uint32_t sit_bitmap = Geometry(sb).sit_bitmap_bytes();
  const std::uint32_t max_sit_bitmap = std::min(sit_bitmap, kMaxSitBitmapSize);
  std::uint32_t cp_payload = 0;
  if (o.large_nat_bitmap) {
    if (max_sit_bitmap + max_nat_bitmap > kMaxBitmapSizeInCkpt)
      cp_payload = static_cast<std::uint32_t>(div_up(max_sit_bitmap + max_nat_bitmap - kMaxBitmapSizeInCkpt, kBlockSize));
  } else {
    if (max_sit_bitmap > kMaxSitBitmapSizeInCkpt) {
      max_nat_bitmap = kMaxBitmapSizeInCkpt;
      cp_payload = static_cast<std::uint32_t>(div_up(max_sit_bitmap, kBlockSize));
    } else {
      max_nat_bitmap = kMaxBitmapSizeInCkpt - max_sit_bitmap;
    }
    const std::uint32_t max_nat_segs = (max_nat_bitmap * 8) >> kLogBlocksPerSeg;
    nat_segs = std::min(nat_segs, max_nat_segs);
  }
  sb.cp_payload.set(cp_payload);
  sb.segment_count_nat.set(nat_segs * 2);
  sb.ssa_blkaddr.set(sb.nat_blkaddr.get() + sb.segment_count_nat.get() * kBlocksPerSeg);

  avail_blocks = static_cast<std::uint64_t>(seg_count - (kCheckpointPacks + sb.segment_count_sit.get() +
                                                         sb.segment_count_nat.get())) *
                 kBlocksPerSeg;
  const std::uint64_t blocks_for_ssa = ro ? 0 : avail_blocks / kBlocksPerSeg + 1;
  sb.segment_count_ssa.set(static_cast<std::uint32_t>(div_up(blocks_for_ssa, kBlocksPerSeg)));
  const std::uint64_t meta_segs = kCheckpointPacks + sb.segment_count_sit.get() +
                                  sb.segment_count_nat.get() + sb.segment_count_ssa.get();
  if (meta_segs % segs_per_zone != 0)
    sb.segment_count_ssa.set(sb.segment_count_ssa.get() +
                             static_cast<std::uint32_t>(segs_per_zone - meta_segs % segs_per_zone));
  const std::uint64_t meta_zones = div_up(meta_segs * kBlocksPerSeg, static_cast<std::uint64_t>(kBlocksPerSeg) * segs_per_zone);
  sb.main_blkaddr.set(static_cast<std::uint32_t>(sb.segment0_blkaddr.get() + meta_zones * segs_per_zone * kBlocksPerSeg));

  if (seg_count / segs_per_zone < meta_zones)
    return make_error(Errc::no_space, "device size is not sufficient for an F2FS volume");
  const auto total_zones = static_cast<std::uint32_t>(seg_count / segs_per_zone - meta_zones);
  sb.section_count.set(total_zones * o.secs_per_zone);
  sb.segment_count_main.set(sb.section_count.get() * o.segs_per_sec);

  // Usable main segments as f2fs_get_usable_segments() of a 1.15 build with
  // zone-capacity support computes them: every device's whole segments,
  // less the metadata segments.
  const std::uint32_t usable = static_cast<std::uint32_t>(
      total_segments - ((sb.main_blkaddr.get() - sb.segment0_blkaddr.get()) >> kLogBlocksPerSeg));
  const std::uint32_t segs_per_sec_avg =
      sb.section_count.get() ? static_cast<std::uint32_t>(div_up(usable, sb.section_count.get())) : 1;
  const std::uint32_t logs = ro ? 2 : kNrCursegType;
  if (!ro) {
    p.overprovision = o.overprovision > 0 ? o.overprovision
                                          : best_overprovision(sb.segment_count_main.get(), usable, segs_per_sec_avg);
    if (p.overprovision > 0)
      p.reserved_segments =
          static_cast<std::uint32_t>((2 * (100 / p.overprovision + 1) + kNrCursegType) * segs_per_sec_avg);
  }
  if ((!ro && p.overprovision == 0) || total_segments < kMinSegments || sb.segment_count_main.get() < logs ||
      sb.segment_count_main.get() - logs < p.reserved_segments)
    return make_error(Errc::no_space,
                      msg("device size is not sufficient for an F2FS volume (%llu main segments, %llu reserved)",
                          sb.segment_count_main.get(), p.reserved_segments));
  if (total_zones <= logs)
    return make_error(Errc::no_space, msg("%llu zones: an F2FS volume needs more than %llu (shrink the zone size)",
                                          total_zones, logs));

  // uuid, checksum seed, label.
  if (o.uuid) std::memcpy(sb.uuid, o.uuid->data(), 16);
  else {
    std::uint64_t x = o.random_seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (int i = 0; i < 16; ++i) {
      x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 29;
      sb.uuid[i] = static_cast<std::uint8_t>(x >> 24);
    }
    sb.uuid[6] = static_cast<std::uint8_t>((sb.uuid[6] & 0x0F) | 0x40);  // version 4
    sb.uuid[8] = static_cast<std::uint8_t>((sb.uuid[8] & 0x3F) | 0x80);  // RFC 4122 variant
  }
  if (feat & feature::inode_checksum) p.chksum_seed = inode_checksum_seed(sb.uuid);
  F2FSCORE_TRY(set_volume_label(sb, o.label));
  sb.node_ino.set(kNodeIno);
  sb.meta_ino.set(kMetaIno);
  sb.root_ino.set(kRootIno);
  std::uint32_t next_nid = kRootIno + 1;
  std::uint32_t quota_types = 0;
  if (feat & (feature::quota_ino | feature::project_quota)) quota_types = 2;  // user, group
  if (feat & feature::project_quota) quota_types = 3;
  for (std::uint32_t q = 0; q < quota_types; ++q) sb.qf_ino[q].set(next_nid++);
  p.quota_inodes = quota_types;
  p.quota_blocks = quota_types * 2;
  if (feat & feature::lost_found) p.lpf_ino = next_nid++;

  // Active logs.
  auto& cs = p.cur_seg;
  const auto HD = static_cast<int>(CursegType::hot_data), WD = static_cast<int>(CursegType::warm_data),
             CD = static_cast<int>(CursegType::cold_data), HN = static_cast<int>(CursegType::hot_node),
             WN = static_cast<int>(CursegType::warm_node), CN = static_cast<int>(CursegType::cold_node);
  auto last_zone = [&](std::uint32_t z) { return (z - 1) * segs_per_zone; };
  if (ro) {
    // Hot node at 0, hot data next; the unused logs name segment 0.
    cs[HN] = cs[WN] = cs[CN] = cs[CD] = cs[WD] = 0;
    cs[HD] = 1;
  } else if (o.heap) {
    cs[HN] = last_zone(total_zones) + (o.secs_per_zone - 1) * o.segs_per_sec;
    cs[WN] = cs[HN] - segs_per_zone;
    cs[CN] = cs[WN] - segs_per_zone;
    cs[HD] = cs[CN] - segs_per_zone;
    cs[CD] = 0;
    cs[WD] = cs[CD] + segs_per_zone;
  } else {
    cs[HN] = 0;
    cs[WN] = cs[HN] + segs_per_zone;
    cs[CN] = cs[WN] + segs_per_zone;
    cs[HD] = cs[CN] + segs_per_zone;
    cs[CD] = std::max(last_zone(total_zones >> 2), cs[HD] + segs_per_zone);
    cs[WD] = std::max(last_zone(total_zones >> 1), cs[CD] + segs_per_zone);
  }
  bool dup = false;
  for (int i = 0; i < 6 && !ro; ++i)
    for (int j = i + 1; j < 6; ++j) dup |= cs[i] == cs[j];
  if (dup) {
    cs[0] = 0;
    for (int i = 1; i < 6; ++i) cs[i] = cs[i - 1] + segs_per_zone;
  }

  F2FSCORE_TRY(fill_extensions(sb, o));
  const std::size_t vlen = std::min<std::size_t>(o.version.size(), kVersionLen - 1);
  std::memcpy(sb.version, o.version.data(), vlen);
  std::memcpy(sb.init_version, o.version.data(), vlen);
  if (feat & feature::casefold) {
    sb.s_encoding.set(o.encoding);
    sb.s_encoding_flags.set(o.encoding_flags);
  }
  sb.feature.set(feat);
  if (feat & feature::sb_checksum) {
    sb.checksum_offset.set(kSbChecksumOffset);
    sb.crc.set(superblock_checksum(sb));
  }

  // The checkpoint header.
  Checkpoint& cp = p.cp;
  p.timestamp = o.timestamp ? *o.timestamp : 0;
  {
    // checkpoint_ver: random and odd, as mkfs.f2fs; derived from the uuid
    // and timestamp when both are fixed, so the image is reproducible.
    std::uint8_t seed[24];
    std::memcpy(seed, sb.uuid, 16);
    store_le64(seed, 16, o.timestamp ? *o.timestamp : o.random_seed);
    const std::uint32_t r = f2fs_crc32(0xFFFFFFFFu, seed, sizeof seed) & 0x7FFFFFFFu;
    cp.checkpoint_ver.set(r | 1u);
  }
  for (int i = 0; i < 3; ++i) {
    cp.cur_node_segno[i].set(cs[HN + i]);
    cp.cur_data_segno[i].set(cs[HD + i]);
  }
  for (unsigned i = 3; i < kMaxActiveNodeLogs; ++i) {
    cp.cur_node_segno[i].set(0xFFFFFFFFu);
    cp.cur_data_segno[i].set(0xFFFFFFFFu);
  }
  const std::uint32_t lpf_inum = p.lpf_ino ? 1 : 0;
  cp.cur_node_blkoff[0].set(static_cast<std::uint16_t>(1 + p.quota_inodes + lpf_inum));
  cp.cur_data_blkoff[0].set(static_cast<std::uint16_t>(1 + p.quota_blocks + lpf_inum));
  cp.valid_block_count.set(2 + p.quota_inodes + p.quota_blocks + 2 * lpf_inum);
  cp.rsvd_segment_count.set(p.reserved_segments);
  const auto ovp_segs = static_cast<std::uint32_t>((usable - p.reserved_segments) * p.overprovision / 100);
  cp.overprov_segment_count.set(ovp_segs + p.reserved_segments);
  if (usable <= cp.overprov_segment_count.get())
    return make_error(Errc::no_space, "not enough segments for an F2FS volume after overprovisioning");
  cp.free_segment_count.set(usable - logs);
  cp.user_block_count.set(static_cast<std::uint64_t>(cp.free_segment_count.get() + logs -
                                                     cp.overprov_segment_count.get()) *
                          kBlocksPerSeg);
  cp.cp_pack_total_block_count.set(6 + cp_payload);
  const NatBitsLayout nb = Geometry(sb).nat_bits_layout();
  std::uint32_t flags = cp_flag::umount | cp_flag::compact_sum;
  if (cp.cp_pack_total_block_count.get() <= kBlocksPerSeg - nb.blocks) {
    flags |= cp_flag::nat_bits;
    p.nat_bits_blocks = nb.blocks;
  }
  if (o.discard) flags |= cp_flag::trimmed;
  if (o.large_nat_bitmap) flags |= cp_flag::large_nat_bitmap;
  cp.ckpt_flags.set(flags);
  cp.cp_pack_start_sum.set(1 + cp_payload);
  cp.valid_node_count.set(1 + p.quota_inodes + lpf_inum);
  cp.valid_inode_count.set(1 + p.quota_inodes + lpf_inum);
  cp.next_free_nid.set(next_nid);
  cp.sit_ver_bitmap_bytesize.set(Geometry(sb).sit_bitmap_bytes());
  cp.nat_ver_bitmap_bytesize.set(Geometry(sb).nat_bitmap_bytes());
  cp.checksum_offset.set(o.large_nat_bitmap ? kCpMinChecksumOffset : kCpChecksumOffset);
  return p;
}

}  // namespace f2fscore
