// Views of the metadata areas: the open report, superblock, checkpoint,
// NAT, SIT, SSA and the space summary.
#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "f2fscore/disk/superblock.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/mkfs.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

namespace {

const char* kRule = "+--------------------------------------------------------+\n";

void banner(std::string& out, const char* title) {
  out += kRule;
  appendf(out, "| %-55s|\n", title);
  out += kRule;
}

std::string cstr(const std::uint8_t* p, std::size_t max) {
  std::size_t n = 0;
  while (n < max && p[n] != 0) ++n;
  return std::string(reinterpret_cast<const char*>(p), n);
}

std::vector<std::string> extensions(const SuperBlock& sb, bool hot) {
  const std::uint32_t cold = std::min<std::uint32_t>(sb.extension_count.get(), kMaxExtension);
  const std::uint32_t nhot = std::min<std::uint32_t>(sb.hot_ext_count, kMaxExtension - cold);
  std::vector<std::string> out;
  const std::uint32_t from = hot ? cold : 0, to = hot ? cold + nhot : cold;
  for (std::uint32_t i = from; i < to; ++i) out.push_back(printable(cstr(sb.extension_list[i], kExtensionLen)));
  return out;
}

// Feature names as a list, unknown bits as hex.
std::vector<std::string> feature_list(std::uint32_t feature) {
  std::vector<std::string> list;
  const std::string names = feature_names(feature);
  std::size_t p = 0;
  while (p < names.size()) {
    const auto e = names.find(' ', p);
    list.push_back(names.substr(p, e == std::string::npos ? std::string::npos : e - p));
    if (e == std::string::npos) break;
    p = e + 1;
  }
  if (const std::uint32_t unknown = feature & ~0x1FFFFu) {
    std::string s;
    appendf(s, "0x%x", unknown);
    list.push_back(s);
  }
  return list;
}

std::string encoding_name(std::uint16_t e) {
  if (e == 0) return "none";
  if (e == kEncodingUtf8_12_1) return "utf8-12.1";
  return "unknown(" + std::to_string(e) + ")";
}

std::vector<std::string> encoding_flag_names(std::uint16_t f) {
  static constexpr BitName kNames[] = {{kEncStrictModeFl, "strict"}, {kEncNoCompatFallbackFl, "no_compat_fallback"}};
  return bit_names(f, kNames);
}

// Which active log (CursegType) is writing `segno`, if any.
std::optional<std::uint8_t> current_log_of(const Checkpoint& cp, std::uint32_t segno) {
  for (std::uint8_t t = 0; t < 3; ++t)
    if (cp.cur_data_segno[t].get() == segno) return t;
  for (std::uint8_t t = 0; t < 3; ++t)
    if (cp.cur_node_segno[t].get() == segno) return static_cast<std::uint8_t>(3 + t);
  return std::nullopt;
}

Output done(Json& j, Format f, std::string text, std::vector<std::string> problems = {}) {
  Output o;
  if (f == Format::json) {
    if (!problems.empty()) j["problems"] = problems;
    o.text = json_text(j);
  } else {
    o.text = std::move(text);
  }
  o.problems = std::move(problems);
  return o;
}

Output done_list(const Json& head, std::string_view key, const std::vector<std::string>& items, Format f,
                 std::string text, std::vector<std::string> problems) {
  Output o;
  o.text = f == Format::json ? json_with_list(head, key, items, problems) : std::move(text);
  o.problems = std::move(problems);
  return o;
}

}  // namespace

// ------------------------------------------------------------------ info

Result<Output> render_info(Volume& vol, Format f) {
  const auto& sb = vol.superblock();
  const auto& cp = vol.checkpoint();
  const auto& rep = vol.open_report();
  auto orphans = vol.orphans();
  Json j;
  j["device"] = vol.device().info().name;
  j["label"] = json_string(volume_label(sb));
  j["uuid"] = format_uuid(sb.uuid);
  j["block_count"] = sb.block_count.get();
  j["block_size"] = kBlockSize;
  j["features"] = feature_list(sb.feature.get());
  j["superblock_copy"] = rep.superblock_copy;
  j["checkpoint_pack"] = rep.checkpoint_pack;
  j["checkpoint_ver"] = rep.checkpoint_ver;
  j["ckpt_flags"] = cp.ckpt_flags.get();
  j["ckpt_flag_names"] = checkpoint_flag_names(cp.ckpt_flags.get());
  j["clean_unmount"] = rep.clean_unmount;
  j["pending_fsync_nodes"] = rep.pending_fsync_nodes;
  j["roll_forward_pending"] = rep.pending_fsync_nodes > 0;
  j["nat_bits_valid"] = vol.nat_bits_valid();
  std::vector<std::string> problems;
  if (orphans) j["orphans"] = *orphans;
  else problems.push_back("orphans: " + describe(orphans.error()));
  j["warnings"] = rep.warnings;

  std::string t;
  appendf(t, "Device:          %s\n", printable(vol.device().info().name).c_str());
  appendf(t, "Label:           %s\n", printable(volume_label(sb)).c_str());
  appendf(t, "UUID:            %s\n", format_uuid(sb.uuid).c_str());
  appendf(t, "Size:            %" PRIu64 " blocks of 4096 bytes (%" PRIu64 " MiB)\n", sb.block_count.get(),
          sb.block_count.get() / 256);
  appendf(t, "Features:        %s\n", feature_names(sb.feature.get()).c_str());
  appendf(t, "Superblock:      copy %d in use\n", rep.superblock_copy);
  appendf(t, "Checkpoint:      pack %d, version %" PRIu64 " (0x%" PRIx64 ")\n", rep.checkpoint_pack,
          rep.checkpoint_ver, rep.checkpoint_ver);
  appendf(t, "Checkpoint state: 0x%x : %s\n", cp.ckpt_flags.get(), join(checkpoint_flag_names(cp.ckpt_flags.get())).c_str());
  if (rep.clean_unmount) t += "Unmount:         clean\n";
  else t += "Unmount:         not clean (sudden power-off)\n";
  if (rep.pending_fsync_nodes > 0)
    appendf(t, "Roll-forward:    pending: %u fsynced node blocks after the checkpoint (shown as checkpointed)\n",
            rep.pending_fsync_nodes);
  else
    t += "Roll-forward:    nothing pending\n";
  if (orphans) appendf(t, "Orphan inodes:   %zu\n", orphans->size());
  appendf(t, "nat_bits:        %s\n", (cp.ckpt_flags.get() & cp_flag::nat_bits) ? (vol.nat_bits_valid() ? "valid" : "stale") : "absent");
  if (rep.warnings.empty()) t += "Warnings:        none\n";
  for (const auto& w : rep.warnings) appendf(t, "Warning:         %s\n", printable(w).c_str());
  return done(j, f, std::move(t), std::move(problems));
}

// ------------------------------------------------------------ superblock

Output render_superblock(const SuperBlock& sb, Format f) {
  Json j;
  std::string t;
  banner(t, "Super block");
  auto u = [&](const char* name, std::uint64_t v, std::string_view note = {}) {
    j[name] = v;
    disp(t, name, v, note);
  };
  u("magic", sb.magic.get());
  u("major_ver", sb.major_ver.get());
  u("minor_ver", sb.minor_ver.get());
  u("log_sectorsize", sb.log_sectorsize.get());
  u("log_sectors_per_block", sb.log_sectors_per_block.get());
  u("log_blocksize", sb.log_blocksize.get());
  u("log_blocks_per_seg", sb.log_blocks_per_seg.get());
  u("segs_per_sec", sb.segs_per_sec.get());
  u("secs_per_zone", sb.secs_per_zone.get());
  u("checksum_offset", sb.checksum_offset.get());
  u("block_count", sb.block_count.get());
  u("section_count", sb.section_count.get());
  u("segment_count", sb.segment_count.get());
  u("segment_count_ckpt", sb.segment_count_ckpt.get());
  u("segment_count_sit", sb.segment_count_sit.get());
  u("segment_count_nat", sb.segment_count_nat.get());
  u("segment_count_ssa", sb.segment_count_ssa.get());
  u("segment_count_main", sb.segment_count_main.get());
  u("segment0_blkaddr", sb.segment0_blkaddr.get());
  u("cp_blkaddr", sb.cp_blkaddr.get());
  u("sit_blkaddr", sb.sit_blkaddr.get());
  u("nat_blkaddr", sb.nat_blkaddr.get());
  u("ssa_blkaddr", sb.ssa_blkaddr.get());
  u("main_blkaddr", sb.main_blkaddr.get());
  u("root_ino", sb.root_ino.get());
  u("node_ino", sb.node_ino.get());
  u("meta_ino", sb.meta_ino.get());
  j["uuid"] = format_uuid(sb.uuid);
  disp_str(t, "uuid", format_uuid(sb.uuid));
  const std::string label = volume_label(sb);
  j["volume_name"] = json_string(label);
  disp_str(t, "volume_name", printable(label));
  u("extension_count", sb.extension_count.get());
  const auto cold = extensions(sb, false), hot = extensions(sb, true);
  j["cold_extensions"] = cold;
  j["hot_extensions"] = hot;
  disp_str(t, "extension_list (cold)", join(cold, ","));
  disp_str(t, "extension_list (hot)", join(hot, ","));
  u("cp_payload", sb.cp_payload.get());
  const std::string version = cstr(sb.version, kVersionLen), init_version = cstr(sb.init_version, kVersionLen);
  j["version"] = json_string(version);
  j["init_version"] = json_string(init_version);
  disp_str(t, "version", printable(version));
  disp_str(t, "init_version", printable(init_version));
  const std::string fnames = feature_names(sb.feature.get());
  u("feature", sb.feature.get(), fnames);
  j["features"] = feature_list(sb.feature.get());
  u("encryption_level", sb.encryption_level);
  j["encrypt_pw_salt"] = hex(sb.encrypt_pw_salt, sizeof sb.encrypt_pw_salt);
  disp_str(t, "encrypt_pw_salt", hex(sb.encrypt_pw_salt, sizeof sb.encrypt_pw_salt));
  j["devs"] = Json::array();
  for (std::uint32_t i = 0; i < kMaxDevices; ++i) {
    const std::string path = cstr(sb.devs[i].path, kMaxPathLen);
    if (path.empty() && sb.devs[i].total_segments.get() == 0) continue;
    j["devs"].push_back({{"index", i}, {"path", json_string(path)}, {"total_segments", sb.devs[i].total_segments.get()}});
    std::string name;
    appendf(name, "devs[%u]", i);
    std::string v;
    appendf(v, "%s : %u segments", printable(path).c_str(), sb.devs[i].total_segments.get());
    disp_str(t, name, v);
  }
  j["qf_ino"] = {sb.qf_ino[0].get(), sb.qf_ino[1].get(), sb.qf_ino[2].get()};
  for (int i = 0; i < 3; ++i) {
    std::string name;
    appendf(name, "qf_ino[%d]", i);
    disp(t, name, sb.qf_ino[i].get(), i == 0 ? "usrquota" : i == 1 ? "grpquota" : "prjquota");
  }
  u("hot_ext_count", sb.hot_ext_count);
  u("s_encoding", sb.s_encoding.get(), encoding_name(sb.s_encoding.get()));
  u("s_encoding_flags", sb.s_encoding_flags.get(), join(encoding_flag_names(sb.s_encoding_flags.get())));
  j["s_encoding_name"] = encoding_name(sb.s_encoding.get());
  j["s_encoding_flag_names"] = encoding_flag_names(sb.s_encoding_flags.get());
  j["s_stop_reason"] = std::vector<unsigned>(sb.s_stop_reason, sb.s_stop_reason + kMaxStopReason);
  j["s_errors"] = hex(sb.s_errors, kMaxErrors);
  disp_str(t, "s_stop_reason", hex(sb.s_stop_reason, kMaxStopReason));
  disp_str(t, "s_errors", hex(sb.s_errors, kMaxErrors));
  u("crc", sb.crc.get());
  appendf(t, "Info: superblock features = %x : %s\n", sb.feature.get(), fnames.c_str());
  return done(j, f, std::move(t));
}

Result<SuperBlock> raw_superblock(BlockDevice& dev, int copy) {
  if (copy != 0 && copy != 1) return make_error(Errc::invalid_argument, "superblock copy must be 0 or 1");
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(read_at(dev, static_cast<std::uint64_t>(copy) * kBlockSize, b));
  SuperBlock sb;
  std::memcpy(&sb, b.data() + kSuperOffset, sizeof sb);
  return sb;
}

// ------------------------------------------------------------ checkpoint

Result<Output> render_checkpoint(Volume& vol, Format f) {
  const auto& cp = vol.checkpoint();
  const auto& rep = vol.open_report();
  Json j;
  std::string t;
  banner(t, "Checkpoint");
  auto u = [&](const std::string& name, std::uint64_t v, std::string_view note = {}) {
    disp(t, name, v, note);
  };
  j["checkpoint_pack"] = rep.checkpoint_pack;
  j["checkpoint_ver"] = cp.checkpoint_ver.get();
  j["user_block_count"] = cp.user_block_count.get();
  j["valid_block_count"] = cp.valid_block_count.get();
  j["rsvd_segment_count"] = cp.rsvd_segment_count.get();
  j["overprov_segment_count"] = cp.overprov_segment_count.get();
  j["free_segment_count"] = cp.free_segment_count.get();
  u("checkpoint_ver", cp.checkpoint_ver.get());
  u("user_block_count", cp.user_block_count.get());
  u("valid_block_count", cp.valid_block_count.get());
  u("rsvd_segment_count", cp.rsvd_segment_count.get());
  u("overprov_segment_count", cp.overprov_segment_count.get());
  u("free_segment_count", cp.free_segment_count.get());
  static const char* kCurseg[] = {"CURSEG_HOT_DATA", "CURSEG_WARM_DATA", "CURSEG_COLD_DATA",
                                  "CURSEG_HOT_NODE", "CURSEG_WARM_NODE", "CURSEG_COLD_NODE"};
  for (int i = 3; i < 6; ++i) u(std::string("alloc_type[") + kCurseg[i] + "]", cp.alloc_type[i]);
  for (unsigned i = 0; i < kMaxActiveNodeLogs; ++i)
    if (i < 3 || (cp.cur_node_segno[i].get() != 0 && cp.cur_node_segno[i].get() != 0xFFFFFFFFu)) u("cur_node_segno[" + std::to_string(i) + "]", cp.cur_node_segno[i].get());
  for (unsigned i = 0; i < kMaxActiveNodeLogs; ++i)
    if (i < 3 || cp.cur_node_blkoff[i].get() != 0) u("cur_node_blkoff[" + std::to_string(i) + "]", cp.cur_node_blkoff[i].get());
  for (int i = 0; i < 3; ++i) u(std::string("alloc_type[") + kCurseg[i] + "]", cp.alloc_type[i]);
  for (unsigned i = 0; i < kMaxActiveDataLogs; ++i)
    if (i < 3 || (cp.cur_data_segno[i].get() != 0 && cp.cur_data_segno[i].get() != 0xFFFFFFFFu)) u("cur_data_segno[" + std::to_string(i) + "]", cp.cur_data_segno[i].get());
  for (unsigned i = 0; i < kMaxActiveDataLogs; ++i)
    if (i < 3 || cp.cur_data_blkoff[i].get() != 0) u("cur_data_blkoff[" + std::to_string(i) + "]", cp.cur_data_blkoff[i].get());
  for (unsigned i = 6; i < kMaxActiveLogs; ++i)
    if (cp.alloc_type[i] != 0) u("alloc_type[" + std::to_string(i) + "]", cp.alloc_type[i]);
  Json segno = Json::array(), blkoff = Json::array(), dsegno = Json::array(), dblkoff = Json::array(), alloc = Json::array();
  for (unsigned i = 0; i < kMaxActiveNodeLogs; ++i) {
    segno.push_back(cp.cur_node_segno[i].get());
    blkoff.push_back(cp.cur_node_blkoff[i].get());
  }
  for (unsigned i = 0; i < kMaxActiveDataLogs; ++i) {
    dsegno.push_back(cp.cur_data_segno[i].get());
    dblkoff.push_back(cp.cur_data_blkoff[i].get());
  }
  for (unsigned i = 0; i < kMaxActiveLogs; ++i) alloc.push_back(cp.alloc_type[i]);
  j["cur_node_segno"] = segno;
  j["cur_node_blkoff"] = blkoff;
  j["cur_data_segno"] = dsegno;
  j["cur_data_blkoff"] = dblkoff;
  j["alloc_type"] = alloc;
  const auto flags = checkpoint_flag_names(cp.ckpt_flags.get());
  u("ckpt_flags", cp.ckpt_flags.get(), join(flags));
  j["ckpt_flags"] = cp.ckpt_flags.get();
  j["ckpt_flag_names"] = flags;
  auto both = [&](const char* name, std::uint64_t v) {
    j[name] = v;
    u(name, v);
  };
  both("cp_pack_total_block_count", cp.cp_pack_total_block_count.get());
  both("cp_pack_start_sum", cp.cp_pack_start_sum.get());
  both("valid_node_count", cp.valid_node_count.get());
  both("valid_inode_count", cp.valid_inode_count.get());
  both("next_free_nid", cp.next_free_nid.get());
  both("sit_ver_bitmap_bytesize", cp.sit_ver_bitmap_bytesize.get());
  both("nat_ver_bitmap_bytesize", cp.nat_ver_bitmap_bytesize.get());
  both("checksum_offset", cp.checksum_offset.get());
  both("elapsed_time", cp.elapsed_time.get());
  const auto blocks = vol.checkpoint_blocks();
  u("sit_nat_version_bitmap[0]", blocks.size() > kCpBitmapOffset ? blocks[kCpBitmapOffset] : 0);
  const std::uint32_t cofs = std::min<std::uint32_t>(cp.checksum_offset.get(), kCpChecksumOffset);
  const std::uint32_t crc = load_le32(blocks.data(), cofs);
  both("checksum", crc);
  const auto sitbm = sit_version_bitmap(vol), natbm = nat_version_bitmap(vol);
  j["sit_version_bitmap"] = hex(sitbm.data(), sitbm.size());
  j["nat_version_bitmap"] = hex(natbm.data(), natbm.size());
  disp_str(t, "sit_version_bitmap", hex(sitbm.data(), sitbm.size()));
  disp_str(t, "nat_version_bitmap", hex(natbm.data(), natbm.size()));
  j["nat_bits_valid"] = vol.nat_bits_valid();
  std::vector<std::string> problems;
  auto orphans = vol.orphans();
  if (orphans) {
    j["orphans"] = *orphans;
    std::string list;
    for (auto o : *orphans) list += (list.empty() ? "" : " ") + std::to_string(o);
    disp_str(t, "orphan inodes", list);
  } else {
    problems.push_back("orphans: " + describe(orphans.error()));
  }
  appendf(t, "Info: checkpoint state = %x : %s\n", cp.ckpt_flags.get(), join(flags).c_str());
  appendf(t, "Info: checkpoint pack %d in use%s\n", rep.checkpoint_pack,
          (cp.ckpt_flags.get() & cp_flag::nat_bits) ? (vol.nat_bits_valid() ? ", nat_bits valid" : ", nat_bits stale") : "");
  return done(j, f, std::move(t), std::move(problems));
}

// ------------------------------------------------------------------- NAT

Result<Output> render_nat(Volume& vol, Range r, Format f) {
  const nid_t max = vol.max_nid();
  if (r.first >= max)
    return make_error(Errc::invalid_argument, "nid " + std::to_string(r.first) + " is past the NAT (" + std::to_string(max) + " nids)");
  const std::uint64_t last = std::min<std::uint64_t>(r.last, max - 1);
  const auto& sb = vol.superblock();
  std::vector<std::string> entries;
  std::string t;
  std::vector<std::string> problems;
  std::vector<std::uint8_t> natblk(kBlockSize), node(kBlockSize);
  std::uint64_t cached = ~std::uint64_t{0};
  std::uint64_t used = 0;
  for (std::uint64_t n = r.first; n <= last; ++n) {
    const auto nid = static_cast<nid_t>(n);
    auto ne = vol.nat_entry(nid);
    if (!ne) {
      problems.push_back("nid " + std::to_string(nid) + ": " + describe(ne.error()));
      continue;
    }
    const block_t addr = ne->block_addr.get();
    const nid_t ino = ne->ino.get();
    if (addr == 0 && ino == 0) continue;
    ++used;
    // Where the entry lives: the current NAT block copy, or the journal.
    const std::uint32_t block_off = Geometry::nat_block_of(nid);
    const int copy = nat_copy(vol, block_off);
    const std::uint64_t nat_addr = vol.geometry().nat_addr(block_off, copy);
    bool journal = false;
    if (cached != nat_addr) {
      if (vol.read_block(static_cast<block_t>(nat_addr), natblk)) cached = nat_addr;
      else std::fill(natblk.begin(), natblk.end(), 0);
    }
    NatEntry disk_e;
    std::memcpy(&disk_e, natblk.data() + (nid % kNatEntryPerBlock) * sizeof(NatEntry), sizeof disk_e);
    journal = std::memcmp(&disk_e, &*ne, sizeof disk_e) != 0;
    Json e{{"nid", nid}, {"ino", ino}, {"block_addr", addr}, {"version", ne->version},
           {"pack", copy + 1}, {"nat_blkaddr", nat_addr}, {"source", journal ? "journal" : "nat"}};
    std::uint32_t offset = 0;
    std::uint64_t cp_ver = 0;
    std::string note;
    if (nid == sb.node_ino.get() || nid == sb.meta_ino.get()) {
      note = nid == sb.node_ino.get() ? "node_ino" : "meta_ino";
    } else if (addr == kNewAddr) {
      note = "NEW_ADDR";
    } else if (!vol.is_valid_main_addr(addr)) {
      note = "block_addr outside the main area";
      problems.push_back("nid " + std::to_string(nid) + ": block_addr " + std::to_string(addr) + " is outside the main area");
    } else if (auto st = vol.read_block(addr, node); !st) {
      note = "unreadable";
      problems.push_back("nid " + std::to_string(nid) + ": " + describe(st.error()));
    } else {
      const auto* nb = reinterpret_cast<const Node*>(node.data());
      offset = nb->footer.flag.get() >> node_flag::offset_shift;
      cp_ver = nb->footer.cp_ver.get();
      e["offset"] = offset;
      e["cp_ver"] = cp_ver;
      e["footer_nid"] = nb->footer.nid.get();
      e["footer_ino"] = nb->footer.ino.get();
      if (nb->footer.nid.get() != nid) note = "footer nid " + std::to_string(nb->footer.nid.get());
    }
    if (!note.empty()) e["note"] = note;
    entries.push_back(json_line(e));
    appendf(t, "nid:%5u\tino:%5u\toffset:%5u\tblkaddr:%10u\tpack:%d\tcp_ver:0x%" PRIx64 "\tversion:%u%s%s%s\n", nid, ino,
            offset, addr, copy + 1, cp_ver, ne->version, journal ? "\tjournal" : "", note.empty() ? "" : "\t",
            note.c_str());
  }
  appendf(t, "%" PRIu64 " used entries among nids %" PRIu64 "..%" PRIu64 "\n", used, r.first, last);
  Json j{{"first", r.first}, {"last", last}, {"used", used}};
  return done_list(j, "entries", entries, f, std::move(t), std::move(problems));
}

// ------------------------------------------------------------------- SIT

Result<Output> render_sit(Volume& vol, Range r, Format f) {
  const std::uint32_t segs = vol.main_segments();
  if (r.first >= segs)
    return make_error(Errc::invalid_argument, "segment " + std::to_string(r.first) + " is past the main area (" +
                                                  std::to_string(segs) + " segments)");
  const std::uint64_t last = std::min<std::uint64_t>(r.last, segs - 1);
  std::vector<std::string> entries;
  std::string t = "segment_type(0:HD, 1:WD, 2:CD, 3:HN, 4:WN, 5:CN)\n";
  std::vector<std::string> problems;
  std::vector<std::uint8_t> sitblk(kBlockSize);
  std::uint64_t cached = ~std::uint64_t{0};
  std::uint64_t valid = 0;
  std::uint32_t free_segs = 0, count = 0;
  for (std::uint64_t s = r.first; s <= last; ++s) {
    const auto segno = static_cast<std::uint32_t>(s);
    ++count;
    auto se = vol.segment(segno);
    if (!se) {
      problems.push_back("segment " + std::to_string(segno) + ": " + describe(se.error()));
      continue;
    }
    const std::uint32_t blk = segno / kSitEntryPerBlock;
    const int copy = sit_copy(vol, blk);
    const std::uint64_t sit_addr = vol.geometry().sit_addr(blk, copy);
    if (cached != sit_addr) {
      if (vol.read_block(static_cast<block_t>(sit_addr), sitblk)) cached = sit_addr;
      else std::fill(sitblk.begin(), sitblk.end(), 0);
    }
    SitEntry disk_e;
    std::memcpy(&disk_e, sitblk.data() + (segno % kSitEntryPerBlock) * sizeof(SitEntry), sizeof disk_e);
    const bool journal = sit_vblocks(disk_e) != se->valid_blocks || sit_type(disk_e) != se->type ||
                         std::memcmp(disk_e.valid_map, se->valid_map, sizeof disk_e.valid_map) != 0 ||
                         disk_e.mtime.get() != se->mtime;
    const auto cur = current_log_of(vol.checkpoint(), segno);
    Json e{{"segno", segno},
           {"start_blkaddr", vol.segment_start(segno)},
           {"valid_blocks", se->valid_blocks},
           {"type", se->type},
           {"type_name", log_type_name(se->type)},
           {"mtime", se->mtime},
           {"sit_pack", copy + 1},
           {"source", journal ? "journal" : "sit"},
           {"current_log", cur ? Json(log_type_name(*cur)) : Json(nullptr)},
           {"valid_map", hex(se->valid_map, sizeof se->valid_map)}};
    entries.push_back(json_line(e));
    appendf(t, "\nsegno:%8u\tvblocks:%3u\tseg_type:%d\tsit_pack:%d\tmtime:%" PRIu64 "%s%s%s\n\n", segno,
            se->valid_blocks, se->type, copy + 1, se->mtime, journal ? "\tjournal" : "", cur ? "\tcurrent " : "",
            cur ? log_type_name(*cur).c_str() : "");
    if (se->valid_blocks == 0) {
      ++free_segs;
      continue;
    }
    valid += se->valid_blocks;
    for (std::size_t i = 0; i < kSitVblockMapSize; ++i) {
      appendf(t, "  %02x", se->valid_map[i]);
      if ((i + 1) % 16 == 0) t += '\n';
    }
  }
  appendf(t, "valid_blocks:[0x%" PRIx64 "]\tvalid_segs:%u\t free_segs:%u\n", valid, count - free_segs, free_segs);
  Json j{{"first", r.first}, {"last", last}, {"valid_blocks", valid}, {"valid_segments", count - free_segs},
         {"free_segments", free_segs}};
  return done_list(j, "entries", entries, f, std::move(t), std::move(problems));
}

// ------------------------------------------------------------------- SSA

Result<Output> render_ssa(Volume& vol, Range r, Format f) {
  const std::uint32_t segs = vol.main_segments();
  if (r.first >= segs)
    return make_error(Errc::invalid_argument, "segment " + std::to_string(r.first) + " is past the main area (" +
                                                  std::to_string(segs) + " segments)");
  const std::uint64_t last = std::min<std::uint64_t>(r.last, segs - 1);
  std::vector<std::string> segments;
  std::string t;
  appendf(t, "Note: blkaddr = 0x%" PRIx64 " + segno * 0x200 + offset\n", vol.main_blkaddr());
  std::vector<std::string> problems;
  for (std::uint64_t s = r.first; s <= last; ++s) {
    const auto segno = static_cast<std::uint32_t>(s);
    auto sum = vol.summary(segno);
    if (!sum) {
      problems.push_back("segment " + std::to_string(segno) + ": " + describe(sum.error()));
      continue;
    }
    auto se = vol.segment(segno);
    const auto cur = current_log_of(vol.checkpoint(), segno);
    const bool node = sum->footer.entry_type == kSumTypeNode;
    appendf(t, "\nsegno: %u (0x%x), %s%s%s, blocks %" PRIu64 "-%" PRIu64 "\n", segno, segno, cur ? "Current " : "",
            node ? "Node" : "Data", cur ? (" (" + log_type_name(*cur) + ")").c_str() : "", vol.segment_start(segno),
            vol.segment_start(segno) + kBlocksPerSeg - 1);
    Json ents = Json::array();
    for (std::uint32_t i = 0; i < kEntriesInSum; ++i) {
      const Summary& e = sum->entries[i];
      if (e.nid.get() == 0) continue;
      const bool valid = se && test_bit_msb(se->valid_map, i);
      ents.push_back({{"offset", i},
                      {"blkaddr", vol.segment_start(segno) + i},
                      {"nid", e.nid.get()},
                      {"ofs_in_node", e.ofs_in_node.get()},
                      {"version", e.version},
                      {"valid", valid}});
      appendf(t, "[%3u] blkaddr %-10" PRIu64 " nid %-8u ofs_in_node %-5u version %-3u %s\n", i,
              vol.segment_start(segno) + i, e.nid.get(), e.ofs_in_node.get(), e.version, valid ? "valid" : "-");
    }
    segments.push_back(json_line({{"segno", segno},
                                  {"type", node ? "node" : "data"},
                                  {"entry_type", sum->footer.entry_type},
                                  {"current_log", cur ? Json(log_type_name(*cur)) : Json(nullptr)},
                                  {"entries", ents}}));
  }
  Json j{{"first", r.first}, {"last", last}};
  return done_list(j, "segments", segments, f, std::move(t), std::move(problems));
}

// ----------------------------------------------------------------- space

Result<SpaceSummary> space_summary(Volume& vol) {
  const auto& cp = vol.checkpoint();
  SpaceSummary s;
  s.main_segments = vol.main_segments();
  s.segs_per_sec = vol.geometry().segs_per_sec();
  s.user_block_count = cp.user_block_count.get();
  s.valid_block_count = cp.valid_block_count.get();
  s.valid_node_count = cp.valid_node_count.get();
  s.valid_inode_count = cp.valid_inode_count.get();
  s.cp_free_segments = cp.free_segment_count.get();
  s.rsvd_segments = cp.rsvd_segment_count.get();
  s.overprov_segments = cp.overprov_segment_count.get();
  for (int t = 0; t < 3; ++t) {
    s.logs[static_cast<std::size_t>(t)].current_segno = cp.cur_data_segno[t].get();
    s.logs[static_cast<std::size_t>(t)].current_blkoff = cp.cur_data_blkoff[t].get();
    s.logs[static_cast<std::size_t>(3 + t)].current_segno = cp.cur_node_segno[t].get();
    s.logs[static_cast<std::size_t>(3 + t)].current_blkoff = cp.cur_node_blkoff[t].get();
  }
  const Geometry& g = vol.geometry();
  constexpr std::uint32_t kBps = Geometry::blocks_per_seg();
  std::uint32_t sec_free_segs = 0;
  // The SIT in batches of segments (one read per run of SIT blocks).
  constexpr std::uint32_t kBatch = 64 * kSitEntryPerBlock;
  std::vector<SegmentInfo> batch;
  std::uint32_t batch_first = 0;
  for (std::uint32_t segno = 0; segno < s.main_segments; ++segno) {
    if (segno == 0 || segno - batch_first >= batch.size()) {
      batch_first = segno;
      F2FSCORE_TRY(vol.segments(segno, std::min(kBatch, s.main_segments - segno), batch));
    }
    const SegmentInfo* se = &batch[segno - batch_first];
    const auto cur = current_log_of(cp, segno);
    const std::uint32_t v = se->valid_blocks;
    s.sit_valid_blocks += v;
    bool is_free = false;
    if (cur) {
      ++s.current_segments;
    } else if (v == 0) {
      ++s.free_segments;
      is_free = true;
    } else if (v >= kBps) {
      ++s.full_segments;
    } else {
      ++s.dirty_segments;
      s.reclaimable_blocks += kBps - v;
    }
    if (is_free) ++sec_free_segs;
    if (segno + 1 == g.first_seg_of_sec(g.sec_of_seg(segno) + 1)) {
      if (sec_free_segs == s.segs_per_sec) ++s.free_sections;
      sec_free_segs = 0;
    }
    if (v > 0) {
      const std::size_t bucket = std::min<std::size_t>(9, static_cast<std::size_t>(v) * 10 / kBps);
      ++s.histogram[bucket];
    }
    if (v == 0 && !cur) continue;
    if (se->type >= 6) {
      ++s.other_type_segments;
      continue;
    }
    auto& lg = s.logs[se->type];
    ++lg.segments;
    lg.valid_blocks += v;
    if (!cur && v >= kBps) ++lg.full;
    else if (!cur) ++lg.dirty;
  }
  return s;
}

Result<Output> render_space(Volume& vol, Format f) {
  auto sr = space_summary(vol);
  if (!sr) return make_error(sr.error());
  const SpaceSummary& s = *sr;
  Json logs = Json::object();
  std::string t;
  const std::uint64_t free_blocks = s.user_block_count > s.valid_block_count ? s.user_block_count - s.valid_block_count : 0;
  appendf(t, "Main area:          %u segments of %u blocks (%u per section)\n", s.main_segments, s.blocks_per_segment,
          s.segs_per_sec);
  appendf(t, "User blocks:        %" PRIu64 " (%" PRIu64 " MiB)\n", s.user_block_count, s.user_block_count / 256);
  appendf(t, "Valid blocks:       %" PRIu64 " (checkpoint), %" PRIu64 " (SIT)%s\n", s.valid_block_count,
          s.sit_valid_blocks, s.valid_block_count == s.sit_valid_blocks ? "" : "  MISMATCH");
  appendf(t, "Free blocks:        %" PRIu64 " (%.1f%% of user blocks)\n", free_blocks,
          s.user_block_count ? 100.0 * static_cast<double>(free_blocks) / static_cast<double>(s.user_block_count) : 0.0);
  appendf(t, "Valid nodes:        %u, inodes %u\n", s.valid_node_count, s.valid_inode_count);
  appendf(t, "Segments:           %u free (checkpoint: %u), %u full, %u dirty, %u current\n", s.free_segments,
          s.cp_free_segments, s.full_segments, s.dirty_segments, s.current_segments);
  appendf(t, "Free sections:      %u\n", s.free_sections);
  appendf(t, "Reserved/overprov:  %u / %u segments\n", s.rsvd_segments, s.overprov_segments);
  appendf(t, "Reclaimable:        %" PRIu64 " invalid blocks in dirty segments\n", s.reclaimable_blocks);
  appendf(t, "\n%-10s %9s %6s %6s %12s %10s %7s\n", "log", "segments", "full", "dirty", "valid_blocks", "current",
          "blkoff");
  for (std::uint8_t i = 0; i < 6; ++i) {
    const auto& lg = s.logs[i];
    appendf(t, "%-10s %9u %6u %6u %12" PRIu64 " %10u %7u\n", log_type_name(i).c_str(), lg.segments, lg.full, lg.dirty,
            lg.valid_blocks, lg.current_segno, lg.current_blkoff);
    logs[log_type_name(i)] = {{"segments", lg.segments},          {"full", lg.full},
                              {"dirty", lg.dirty},                {"valid_blocks", lg.valid_blocks},
                              {"current_segno", lg.current_segno}, {"current_blkoff", lg.current_blkoff}};
  }
  if (s.other_type_segments) appendf(t, "%-10s %9u\n", "other", s.other_type_segments);
  t += "\nUtilization of segments holding valid blocks:\n";
  std::uint32_t maxb = 1;
  for (auto b : s.histogram) maxb = std::max(maxb, b);
  Json hist = Json::array();
  for (std::size_t i = 0; i < 10; ++i) {
    const unsigned bar = static_cast<unsigned>(static_cast<std::uint64_t>(s.histogram[i]) * 40 / maxb);
    appendf(t, "  %3zu-%3zu%% %8u %s\n", i * 10, i * 10 + 10, s.histogram[i], std::string(bar, '#').c_str());
    hist.push_back({{"from_percent", i * 10}, {"to_percent", i * 10 + 10}, {"segments", s.histogram[i]}});
  }
  Json j{{"main_segments", s.main_segments},
         {"segs_per_sec", s.segs_per_sec},
         {"blocks_per_segment", s.blocks_per_segment},
         {"user_block_count", s.user_block_count},
         {"valid_block_count", s.valid_block_count},
         {"sit_valid_blocks", s.sit_valid_blocks},
         {"free_blocks", free_blocks},
         {"valid_node_count", s.valid_node_count},
         {"valid_inode_count", s.valid_inode_count},
         {"free_segments", s.free_segments},
         {"cp_free_segment_count", s.cp_free_segments},
         {"free_sections", s.free_sections},
         {"full_segments", s.full_segments},
         {"dirty_segments", s.dirty_segments},
         {"current_segments", s.current_segments},
         {"rsvd_segment_count", s.rsvd_segments},
         {"overprov_segment_count", s.overprov_segments},
         {"reclaimable_blocks", s.reclaimable_blocks},
         {"logs", logs},
         {"other_type_segments", s.other_type_segments},
         {"histogram", hist}};
  return done(j, f, std::move(t));
}

}  // namespace f2fscore::inspect
