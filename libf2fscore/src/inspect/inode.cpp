// Inode views: the node tree walk (block map), every inode field, a block's
// owner (reverse map) and the fsck -M style file-to-block map.
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <unordered_set>

#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"
#include "inspect/inspect_internal.hpp"

namespace f2fscore::inspect {

using namespace disk;
using namespace detail;

namespace {

/// The footer offset of xattr nodes (XATTR_NODE_OFFSET in fs/f2fs/node.h).
constexpr std::uint32_t kXattrNodeOffset = (1u << (32 - node_flag::offset_shift)) - 1;

bool real_addr(block_t a) { return a != kNullAddr && a != kNewAddr && a != kCompressAddr; }

std::string addr_name(block_t a) {
  if (a == kNewAddr) return "NEW_ADDR";
  if (a == kCompressAddr) return "COMPRESS_ADDR";
  if (a == kNullAddr) return "NULL_ADDR";
  return std::to_string(a);
}

// What a node is from its offset in the tree (get_node_path() numbering).
const char* node_kind_name(std::uint32_t ofs) {
  constexpr std::uint32_t n = kNidsPerBlock;
  if (ofs == 0) return "inode";
  if (ofs == kXattrNodeOffset) return "xattr node";
  if (ofs == 3 || ofs == 4 + n) return "indirect node";
  if (ofs == 5 + 2 * n) return "double indirect node";
  if (ofs > 5 + 2 * n) return (ofs - (6 + 2 * n)) % (n + 1) == 0 ? "indirect node" : "direct node";
  return "direct node";
}

std::string inode_ctx(nid_t ino) { return "inode " + std::to_string(ino); }

// Walks an inode's node tree in file order (get_node_path() layout).
class TreeWalker {
 public:
  TreeWalker(Volume& v, const InodeInfo& in, BlockMap& m) : v_(v), in_(in), m_(m) {}

  Status run() {
    const Inode& i = in_.raw.i;
    const std::uint64_t api = in_.addrs_per_inode, apb = in_.addrs_per_block;
    const std::uint32_t base = in_.extra_isize / 4;
    for (std::uint32_t k = 0; k < in_.addrs_per_inode && base + k < kDefAddrsPerInode; ++k) add(k, i.i_addr[base + k].get());
    const std::uint64_t npb = kNidsPerBlock;
    const std::uint64_t starts[5] = {api, api + apb, api + 2 * apb, api + 2 * apb + apb * npb,
                                     api + 2 * apb + 2 * apb * npb};
    const std::uint32_t offsets[5] = {1, 2, 3, 4 + kNidsPerBlock, 5 + 2 * kNidsPerBlock};
    for (int k = 0; k < 5; ++k) {
      const nid_t nid = i.i_nid[k].get();
      if (nid == 0) continue;
      if (k < 2) F2FSCORE_TRY(direct(nid, offsets[k], starts[k]));
      else if (k < 4) F2FSCORE_TRY(indirect(nid, offsets[k], starts[k], NodeRef::Kind::indirect));
      else F2FSCORE_TRY(double_indirect(nid, offsets[k], starts[k]));
    }
    return {};
  }

 private:
  void add(std::uint64_t fblk, block_t a) {
    if (a == kNullAddr) return;
    if (real_addr(a)) ++m_.mapped_blocks;
    if (!m_.runs.empty()) {
      BlockRun& r = m_.runs.back();
      if (r.file_block + r.len == fblk && r.len < 0xFFFFFFFFu &&
          ((real_addr(a) && real_addr(r.blkaddr) && static_cast<std::uint64_t>(r.blkaddr) + r.len == a) ||
           (!real_addr(a) && a == r.blkaddr))) {
        ++r.len;
        return;
      }
    }
    m_.runs.push_back({fblk, a, 1});
  }

  Result<Node> node(nid_t nid, std::uint32_t offset, NodeRef::Kind kind) {
    if (!seen_.insert(nid).second)
      return make_error(Errc::corrupt, inode_ctx(in_.ino) + ": node " + std::to_string(nid) + " appears twice in its node tree");
    block_t addr = 0;
    auto n = v_.read_node(nid, &addr);
    if (!n) return make_error(n.error().code, inode_ctx(in_.ino) + ": " + n.error().message, n.error().offset);
    if (n->footer.ino.get() != in_.ino)
      return make_error(Errc::corrupt,
                        inode_ctx(in_.ino) + ": its node " + std::to_string(nid) + " (block " + std::to_string(addr) +
                            ") belongs to inode " + std::to_string(n->footer.ino.get()),
                        static_cast<std::uint64_t>(addr) * kBlockSize);
    m_.nodes.push_back({nid, addr, offset, kind});
    return n;
  }

  Status direct(nid_t nid, std::uint32_t offset, std::uint64_t start) {
    auto n = node(nid, offset, NodeRef::Kind::direct);
    if (!n) return make_error(n.error());
    for (std::uint32_t k = 0; k < in_.addrs_per_block; ++k) add(start + k, n->dn.addr[k].get());
    return {};
  }

  Status indirect(nid_t nid, std::uint32_t offset, std::uint64_t start, NodeRef::Kind kind) {
    auto n = node(nid, offset, kind);
    if (!n) return make_error(n.error());
    const Node copy = *n;
    for (std::uint32_t k = 0; k < kNidsPerBlock; ++k) {
      const nid_t child = copy.in.nid[k].get();
      if (child == 0) continue;
      F2FSCORE_TRY(direct(child, offset + 1 + k, start + static_cast<std::uint64_t>(k) * in_.addrs_per_block));
    }
    return {};
  }

  Status double_indirect(nid_t nid, std::uint32_t offset, std::uint64_t start) {
    auto n = node(nid, offset, NodeRef::Kind::double_indirect);
    if (!n) return make_error(n.error());
    const Node copy = *n;
    const std::uint64_t span = static_cast<std::uint64_t>(in_.addrs_per_block) * kNidsPerBlock;
    for (std::uint32_t k = 0; k < kNidsPerBlock; ++k) {
      const nid_t child = copy.in.nid[k].get();
      if (child == 0) continue;
      F2FSCORE_TRY(indirect(child, offset + 1 + k * (kNidsPerBlock + 1), start + k * span, NodeRef::Kind::indirect));
    }
    return {};
  }

  Volume& v_;
  const InodeInfo& in_;
  BlockMap& m_;
  std::unordered_set<nid_t> seen_;
};

// Reads `len` bytes at `offset` of a file, past EOF too (verity metadata
// lives there); holes read as zeroes.
Result<std::string> read_raw(Volume& v, const InodeInfo& in, std::uint64_t offset, std::size_t len) {
  std::string out(len, '\0');
  std::vector<std::uint8_t> blk(kBlockSize);
  std::size_t done = 0;
  while (done < len) {
    const std::uint64_t pos = offset + done;
    const std::size_t in_blk = static_cast<std::size_t>(pos % kBlockSize);
    const std::size_t n = std::min<std::size_t>(kBlockSize - in_blk, len - done);
    auto a = v.map_block(in, pos / kBlockSize);
    if (!a) return make_error(a.error());
    if (real_addr(*a)) {
      if (!v.is_valid_main_addr(*a))
        return make_error(Errc::corrupt, inode_ctx(in.ino) + ": block address " + std::to_string(*a) + " outside the main area");
      F2FSCORE_TRY(v.read_block(*a, blk));
      std::memcpy(out.data() + done, blk.data() + in_blk, n);
    }
    done += n;
  }
  return out;
}

const char* crypt_mode_name(std::uint8_t m) {
  switch (m) {
    case 1: return "AES-256-XTS";
    case 4: return "AES-256-CTS-CBC";
    case 5: return "AES-128-CBC-ESSIV";
    case 6: return "AES-128-CTS-CBC";
    case 7: return "SM4-XTS";
    case 8: return "SM4-CTS-CBC";
    case 9: return "Adiantum";
    case 10: return "AES-256-HCTR2";
    default: return "unknown";
  }
}

// The fscrypt context (xattr index 9, name "c"): struct fscrypt_context_v1/v2.
Json encryption_json(const std::string& c) {
  Json j;
  if (c.empty()) return j;
  const auto* p = reinterpret_cast<const std::uint8_t*>(c.data());
  j["version"] = p[0];
  if ((p[0] == 1 && c.size() >= 28) || (p[0] == 2 && c.size() >= 40)) {
    j["contents_mode"] = p[1];
    j["contents_mode_name"] = crypt_mode_name(p[1]);
    j["filenames_mode"] = p[2];
    j["filenames_mode_name"] = crypt_mode_name(p[2]);
    j["flags"] = p[3];
    j["padding"] = 4u << (p[3] & 3);
    std::vector<std::string> fl;
    if (p[3] & 0x04) fl.emplace_back("direct_key");
    if (p[3] & 0x08) fl.emplace_back("iv_ino_lblk_64");
    if (p[3] & 0x10) fl.emplace_back("iv_ino_lblk_32");
    j["flag_names"] = fl;
    if (p[0] == 1) {
      j["master_key_descriptor"] = hex(p + 4, 8);
      j["nonce"] = hex(p + 12, 16);
    } else {
      j["master_key_identifier"] = hex(p + 8, 16);
      j["nonce"] = hex(p + 24, 16);
    }
  } else {
    j["raw"] = hex(c);
  }
  return j;
}

}  // namespace

Result<BlockMap> block_map(Volume& vol, const InodeInfo& in) {
  BlockMap m;
  if (!in.has_inline_data() && !in.has_inline_dentry()) {
    TreeWalker w(vol, in, m);
    F2FSCORE_TRY(w.run());
  }
  if (const nid_t x = in.raw.i.i_xattr_nid.get(); x != 0) {
    block_t addr = 0;
    if (auto n = vol.read_node(x, &addr)) m.nodes.push_back({x, addr, kXattrNodeOffset, NodeRef::Kind::xattr});
  }
  return m;
}

std::uint64_t file_block_of(const InodeInfo& in, std::uint32_t node_ofs, std::uint32_t ofs_in_node) {
  if (node_ofs == 0) return ofs_in_node;
  return start_bidx_of_node(node_ofs, in.addrs_per_inode, in.addrs_per_block) + ofs_in_node;
}

// ------------------------------------------------------------------ inode

Result<Output> render_inode(Volume& vol, const InodeInfo& in, Format f) {
  const Inode& i = in.raw.i;
  const NodeFooter& ft = in.raw.footer;
  Json j;
  std::string t;
  std::vector<std::string> problems;
  auto path = path_of(vol, in.ino);
  appendf(t, "Inode %u (%s) at block %u\n", in.ino, file_type_name(in.mode).c_str(), in.node_blkaddr);
  j["ino"] = in.ino;
  j["node_blkaddr"] = in.node_blkaddr;
  j["type"] = file_type_name(in.mode);
  if (path && *path) {
    j["path"] = json_string(**path);
    disp_str(t, "path", printable(**path));
  } else {
    j["path"] = nullptr;
  }
  auto u = [&](const char* name, std::uint64_t v, std::string_view note = {}) {
    j[name] = v;
    disp(t, name, v, note);
  };
  u("i_mode", in.mode, mode_string(in.mode));
  j["mode_string"] = mode_string(in.mode);
  const auto adv = advise_names(i.i_advise);
  u("i_advise", i.i_advise, join(adv));
  j["i_advise_names"] = adv;
  const auto inl = inline_names(i.i_inline);
  u("i_inline", i.i_inline, join(inl));
  j["i_inline_names"] = inl;
  u("i_uid", i.i_uid.get());
  u("i_gid", i.i_gid.get());
  u("i_links", i.i_links.get());
  u("i_size", i.i_size.get());
  u("i_blocks", i.i_blocks.get());
  u("i_atime", i.i_atime.get(), time_utc(i.i_atime.get()));
  u("i_atime_nsec", i.i_atime_nsec.get());
  u("i_ctime", i.i_ctime.get(), time_utc(i.i_ctime.get()));
  u("i_ctime_nsec", i.i_ctime_nsec.get());
  u("i_mtime", i.i_mtime.get(), time_utc(i.i_mtime.get()));
  u("i_mtime_nsec", i.i_mtime_nsec.get());
  u("i_generation", i.i_generation.get());
  if (in.is_dir()) u("i_current_depth", i.i_current_depth.get());
  else u("i_gc_failures", load_le16(&i.i_current_depth, 0));
  u("i_xattr_nid", i.i_xattr_nid.get());
  const auto fl = inode_flag_names(i.i_flags.get());
  u("i_flags", i.i_flags.get(), join(fl));
  j["i_flags_names"] = fl;
  u("i_pino", i.i_pino.get());
  u("i_namelen", i.i_namelen.get());
  const std::string name(reinterpret_cast<const char*>(i.i_name), std::min<std::uint32_t>(i.i_namelen.get(), kNameLen));
  j["i_name"] = json_string(name);
  disp_str(t, "i_name", printable(name));
  u("i_dir_level", i.i_dir_level);
  j["i_ext"] = {{"fofs", i.i_ext.fofs.get()}, {"blk_addr", i.i_ext.blk_addr.get()}, {"len", i.i_ext.len.get()}};
  appendf(t, "i_ext: fofs:%u blkaddr:%u len:%u\n", i.i_ext.fofs.get(), i.i_ext.blk_addr.get(), i.i_ext.len.get());
  // Extra attributes, as far as i_extra_isize covers them.
  if (in.inline_flags & inline_flag::extra_attr) {
    const std::uint32_t isz = in.extra_isize;
    const InodeExtra& x = i.extra;
    u("i_extra_isize", x.i_extra_isize.get());
    auto covers = [&](std::size_t end) { return isz >= end; };
    if (covers(offsetof(InodeExtra, i_projid))) u("i_inline_xattr_size", x.i_inline_xattr_size.get());
    if (covers(offsetof(InodeExtra, i_inode_checksum))) u("i_projid", x.i_projid.get());
    if (covers(offsetof(InodeExtra, i_crtime))) u("i_inode_checksum", x.i_inode_checksum.get());
    if (covers(offsetof(InodeExtra, i_compr_blocks))) {
      u("i_crtime", x.i_crtime.get(), time_utc(x.i_crtime.get()));
      u("i_crtime_nsec", x.i_crtime_nsec.get());
    }
    if (covers(sizeof(InodeExtra))) {
      u("i_compr_blocks", x.i_compr_blocks.get());
      static const char* kAlg[] = {"lzo", "lz4", "zstd", "lzo-rle"};
      u("i_compress_algorithm", x.i_compress_algorithm, x.i_compress_algorithm < 4 ? kAlg[x.i_compress_algorithm] : "unknown");
      u("i_log_cluster_size", x.i_log_cluster_size);
      std::string cf;
      if (x.i_compress_flag.get() & 1) cf = "chksum";
      appendf(cf, "%slevel %u", cf.empty() ? "" : " ", x.i_compress_flag.get() >> 8);
      u("i_compress_flag", x.i_compress_flag.get(), cf);
    }
  }
  Json nids = Json::array();
  for (int k = 0; k < 5; ++k) {
    nids.push_back(i.i_nid[k].get());
    disp(t, "i_nid[" + std::to_string(k) + "]", i.i_nid[k].get(), k < 2 ? "direct" : k < 4 ? "indirect" : "double indirect");
  }
  j["i_nid"] = nids;
  // Footer.
  const std::uint32_t flag = ft.flag.get();
  std::vector<std::string> fnames;
  if (flag & node_flag::cold) fnames.emplace_back("cold");
  if (flag & node_flag::fsync) fnames.emplace_back("fsync");
  if (flag & node_flag::dent) fnames.emplace_back("dent");
  j["footer"] = {{"nid", ft.nid.get()},       {"ino", ft.ino.get()},         {"flag", flag},
                 {"flag_names", fnames},      {"offset", flag >> node_flag::offset_shift},
                 {"cp_ver", ft.cp_ver.get()}, {"next_blkaddr", ft.next_blkaddr.get()}};
  disp(t, "footer.nid", ft.nid.get());
  disp(t, "footer.ino", ft.ino.get());
  disp(t, "footer.flag", flag, join(fnames));
  disp(t, "footer.cp_ver", ft.cp_ver.get());
  disp(t, "footer.next_blkaddr", ft.next_blkaddr.get());
  // Derived.
  j["addrs_per_inode"] = in.addrs_per_inode;
  j["inline_xattr_addrs"] = in.inline_xattr_addrs;
  appendf(t, "addrs_per_inode: %u, addrs_per_block: %u, inline xattr: %u bytes\n", in.addrs_per_inode,
          in.addrs_per_block, in.inline_xattr_addrs * 4);
  if (in.has_inline_data()) {
    j["inline_data_bytes"] = std::min<std::uint64_t>(in.size, in.max_inline_bytes());
    appendf(t, "inline data: %" PRIu64 " of %u bytes\n", std::min<std::uint64_t>(in.size, in.max_inline_bytes()),
            in.max_inline_bytes());
  }
  if (in.has_inline_dentry()) {
    const auto lay = inline_dentry_layout(in.max_inline_bytes());
    j["inline_dentry_slots"] = lay.nr_slots;
    appendf(t, "inline dentries: %u slots\n", lay.nr_slots);
  }
  const std::uint32_t type = in.mode & 0xF000;
  if (type == 0x2000 || type == 0x6000) {
    const auto d = device_number(in);
    j["rdev"] = {{"major", d.major}, {"minor", d.minor}};
    appendf(t, "device: %u, %u\n", d.major, d.minor);
  }
  if (in.is_symlink()) {
    if (auto l = vol.read_link(in)) {
      j["target"] = json_string(*l);
      appendf(t, "target: %s\n", printable(*l).c_str());
    } else {
      problems.push_back("symlink: " + describe(l.error()));
    }
  }
  // Xattrs, encryption, verity.
  std::string enc_ctx, verity_loc;
  Json xs = Json::array();
  if (auto x = vol.xattrs(in)) {
    for (const auto& e : *x) {
      xs.push_back({{"index", e.index}, {"name", json_string(e.full_name())}, {"value", json_string(e.value)},
                    {"value_hex", hex(e.value)}, {"size", e.value.size()}});
      const std::string shown = is_printable_utf8(e.value) ? "\"" + e.value + "\"" : "0x" + hex(e.value.substr(0, 64)) +
                                                                                      (e.value.size() > 64 ? "..." : "");
      appendf(t, "xattr %s (%zu bytes) = %s\n", printable(e.full_name()).c_str(), e.value.size(), shown.c_str());
      if (e.index == xattr_index::encryption && e.name == "c") enc_ctx = e.value;
      if (e.index == xattr_index::verity && e.name == "v") verity_loc = e.value;
    }
  } else {
    problems.push_back("xattrs: " + describe(x.error()));
  }
  j["xattr_entries"] = xs;
  if (in.is_encrypted()) {
    Json e = encryption_json(enc_ctx);
    j["encryption"] = e.is_null() ? Json::object() : e;
    appendf(t, "encrypted: %s\n", e.is_null() ? "yes (no context found)" : e.dump().c_str());
  }
  if (in.is_verity()) {
    Json v;
    if (verity_loc.size() >= 16) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(verity_loc.data());
      const std::uint32_t size = load_le32(p, 4);
      const std::uint64_t pos = load_le64(p, 8);
      v = {{"descriptor_version", load_le32(p, 0)}, {"descriptor_pos", pos}, {"descriptor_size", size}};
      if (size >= 256 && size <= 65536) {
        if (auto d = read_raw(vol, in, pos, 256)) {
          const auto* q = reinterpret_cast<const std::uint8_t*>(d->data());
          const std::uint8_t alg = q[1];
          v["version"] = q[0];
          v["hash_algorithm"] = alg == 1 ? "sha256" : alg == 2 ? "sha512" : std::to_string(alg);
          v["log_blocksize"] = q[2];
          v["salt_size"] = q[3];
          v["sig_size"] = load_le32(q, 4);
          v["data_size"] = load_le64(q, 8);
          v["root_hash"] = hex(q + 16, alg == 2 ? 64 : 32);
        } else {
          problems.push_back("verity descriptor: " + describe(d.error()));
        }
      }
    }
    j["verity"] = v.is_null() ? Json::object() : v;
    appendf(t, "fs-verity: %s\n", v.is_null() ? "yes (no descriptor location found)" : v.dump().c_str());
  }
  // Node tree and block map.
  auto bm = block_map(vol, in);
  if (bm) {
    Json nodes = Json::array(), runs = Json::array();
    static const char* kKind[] = {"direct", "indirect", "double_indirect", "xattr"};
    for (const auto& n : bm->nodes)
      nodes.push_back({{"nid", n.nid}, {"blkaddr", n.blkaddr}, {"offset", n.offset}, {"kind", kKind[static_cast<int>(n.kind)]}});
    for (const auto& r : bm->runs)
      runs.push_back({{"file_block", r.file_block}, {"blkaddr", r.blkaddr}, {"len", r.len}, {"addr", addr_name(r.blkaddr)}});
    j["node_blocks"] = nodes;
    j["block_map"] = runs;
    j["mapped_blocks"] = bm->mapped_blocks;
    if (!bm->nodes.empty()) {
      t += "Nodes:\n";
      for (const auto& n : bm->nodes)
        appendf(t, "  nid %-8u blkaddr %-10u offset %-8u %s\n", n.nid, n.blkaddr, n.offset, kKind[static_cast<int>(n.kind)]);
    }
    appendf(t, "Block map: %zu runs, %" PRIu64 " mapped blocks\n", bm->runs.size(), bm->mapped_blocks);
    for (const auto& r : bm->runs) {
      const std::uint64_t fe = r.file_block + r.len - 1;
      if (real_addr(r.blkaddr)) {
        if (r.len == 1) appendf(t, "  %" PRIu64 " -> %u\n", r.file_block, r.blkaddr);
        else appendf(t, "  %" PRIu64 "-%" PRIu64 " -> %u-%" PRIu64 " (%u blocks)\n", r.file_block, fe, r.blkaddr,
                     static_cast<std::uint64_t>(r.blkaddr) + r.len - 1, r.len);
      } else {
        if (r.len == 1) appendf(t, "  %" PRIu64 " -> %s\n", r.file_block, addr_name(r.blkaddr).c_str());
        else appendf(t, "  %" PRIu64 "-%" PRIu64 " -> %s (%u blocks)\n", r.file_block, fe, addr_name(r.blkaddr).c_str(), r.len);
      }
    }
  } else {
    problems.push_back("block map: " + describe(bm.error()));
  }
  Output o;
  if (f == Format::json) {
    if (!problems.empty()) j["problems"] = problems;
    o.text = json_text(j);
  } else {
    o.text = std::move(t);
  }
  o.problems = std::move(problems);
  return o;
}

// ------------------------------------------------------------ reverse map

Result<BlockOwner> block_owner(Volume& vol, block_t b) {
  const auto& sb = vol.superblock();
  const auto& cp = vol.checkpoint();
  BlockOwner o;
  o.blkaddr = b;
  const Geometry& geo = vol.geometry();
  const std::uint64_t main_end = geo.main_end();
  if (b >= main_end || b >= sb.block_count.get()) {
    o.area = "beyond";
    o.detail = "past the main area (it ends at block " + std::to_string(main_end) + ")";
    return o;
  }
  std::string d;
  if (b < sb.cp_blkaddr.get()) {
    o.area = "superblock";
    if (b < 2) appendf(d, "superblock copy %u (bytes 1024-4095 of the block)", b);
    else d = "reserved, before segment 0";
  } else if (b < sb.sit_blkaddr.get()) {
    o.area = "checkpoint";
    const std::uint32_t pack = b >= geo.cp_pack_start(1) ? 1 : 0;
    const auto k = static_cast<std::uint32_t>(b - geo.cp_pack_start(static_cast<int>(pack)));
    const bool current = static_cast<int>(pack) == vol.open_report().checkpoint_pack;
    appendf(d, "checkpoint pack %u (%s), block %u of the pack", pack, current ? "in use" : "not in use", k);
    if (current) {
      const std::uint32_t total = cp.cp_pack_total_block_count.get(), start_sum = cp.cp_pack_start_sum.get();
      const std::uint32_t payload = sb.cp_payload.get();
      const char* role = nullptr;
      if (k == 0) role = "checkpoint block";
      else if (k <= payload) role = "checkpoint payload (SIT bitmap)";
      else if (k < start_sum) role = "orphan inode block";
      else if (k + 1 < total) role = "summary block";
      else if (k + 1 == total) role = "closing checkpoint block";
      else if (cp.ckpt_flags.get() & cp_flag::nat_bits) {
        if (b >= geo.nat_bits_addr(static_cast<int>(pack))) role = "nat_bits";
      }
      if (role) appendf(d, ": %s", role);
    }
  } else if (b < sb.ssa_blkaddr.get()) {
    // A SIT or NAT block: its table, copy and block index.
    const bool sit = b < sb.nat_blkaddr.get();
    std::uint32_t blk = 0;
    int copy = 0;
    if (sit) geo.sit_index(b, &blk, &copy);
    else geo.nat_index(b, &blk, &copy);
    const std::uint32_t per = sit ? kSitEntryPerBlock : kNatEntryPerBlock;
    const int current = sit ? sit_copy(vol, blk) : nat_copy(vol, blk);
    o.area = sit ? "sit" : "nat";
    appendf(d, "%s copy %u, block %u: %s %u-", sit ? "SIT" : "NAT", static_cast<unsigned>(copy + 1), blk, sit ? "segments" : "nids", blk * per);
    appendf(d, "%u (%s)", blk * per + per - 1, current == copy ? "current copy" : "stale copy");
  } else if (b < vol.main_blkaddr()) {
    o.area = "ssa";
    const auto segno = static_cast<std::uint32_t>(b - geo.ssa_blkaddr());
    appendf(d, "summary block of segment %u", segno);
  }
  if (!o.area.empty()) {
    o.detail = d;
    return o;
  }
  // Main area.
  o.area = "main";
  o.segno = vol.segno_of(b);
  o.offset_in_segment = geo.blkoff_of(b);
  o.current_log = std::nullopt;
  for (std::uint8_t t = 0; t < 3; ++t)
    if (cp.cur_data_segno[t].get() == o.segno) o.current_log = t;
  for (std::uint8_t t = 0; t < 3; ++t)
    if (cp.cur_node_segno[t].get() == o.segno) o.current_log = static_cast<std::uint8_t>(3 + t);
  if (auto se = vol.segment(o.segno)) {
    o.seg_type = se->type;
    o.seg_valid_blocks = se->valid_blocks;
    o.valid = test_bit_msb(se->valid_map, o.offset_in_segment);
  } else {
    o.notes.push_back("SIT: " + describe(se.error()));
  }
  auto sum = vol.summary(o.segno);
  if (!sum) {
    o.notes.push_back("SSA: " + describe(sum.error()));
    return o;
  }
  const Summary& se = sum->entries[o.offset_in_segment];
  o.node = sum->footer.entry_type == kSumTypeNode;
  o.sum_nid = se.nid.get();
  o.sum_ofs_in_node = se.ofs_in_node.get();
  o.sum_version = se.version;
  if (o.node) {
    std::vector<std::uint8_t> blk(kBlockSize);
    F2FSCORE_TRY(vol.read_block(b, blk));
    const auto* n = reinterpret_cast<const Node*>(blk.data());
    o.nid = n->footer.nid.get();
    o.ino = n->footer.ino.get();
    o.node_offset = n->footer.flag.get() >> node_flag::offset_shift;
    if (o.nid == 0) {
      o.ino = 0;
      o.notes.push_back("no node here (footer nid 0): never written or cleared");
    } else if (o.sum_nid != o.nid) {
      o.notes.push_back("the SSA names nid " + std::to_string(o.sum_nid) + " but the block's footer says " + std::to_string(o.nid));
    }
    if (o.nid == 0) {
      // nothing to check in the NAT
    } else if (o.nid < vol.max_nid()) {
      if (auto ne = vol.nat_entry(o.nid)) {
        o.live = ne->block_addr.get() == b;
        if (!o.live) o.notes.push_back("stale: the NAT puts nid " + std::to_string(o.nid) + " at block " + std::to_string(ne->block_addr.get()));
      } else {
        o.notes.push_back("NAT: " + describe(ne.error()));
      }
    } else {
      o.notes.push_back("footer nid is past the NAT");
      o.ino = 0;
    }
  } else {
    o.nid = o.sum_nid;
    if (o.nid == 0 || o.nid >= vol.max_nid()) {
      o.notes.push_back(o.nid == 0 ? "no owner in the SSA (free block)" : "SSA owner nid is past the NAT");
    } else if (auto dn = vol.read_node(o.nid)) {
      o.ino = dn->footer.ino.get();
      o.node_offset = dn->footer.flag.get() >> node_flag::offset_shift;
      if (auto in = vol.read_inode(o.ino)) {
        o.file_block = file_block_of(*in, o.node_offset, o.sum_ofs_in_node);
        if (in->has_inline_data() || in->has_inline_dentry()) {
          o.notes.push_back("the owner keeps its data inline now");
        } else if (auto a = vol.map_block(*in, *o.file_block)) {
          o.live = *a == b;
          if (!o.live) o.notes.push_back("stale: file block " + std::to_string(*o.file_block) + " now maps to " + addr_name(*a));
        } else {
          o.notes.push_back("mapping: " + describe(a.error()));
        }
      } else {
        o.notes.push_back("inode " + std::to_string(o.ino) + ": " + describe(in.error()));
      }
    } else {
      o.notes.push_back("owner node " + std::to_string(o.nid) + ": " + describe(dn.error()));
    }
  }
  if (o.ino != 0 && o.ino < vol.max_nid()) {
    if (auto p = path_of(vol, o.ino)) o.path = *p;
  }
  return o;
}

Result<Output> render_block(Volume& vol, block_t b, Format f) {
  auto r = block_owner(vol, b);
  if (!r) return make_error(r.error());
  const BlockOwner& o = *r;
  // An address past the volume is a bad argument, as a segment past the
  // main area is for render_sit() and render_ssa().
  if (o.area == "beyond")
    return make_error(Errc::invalid_argument, "block " + std::to_string(b) + " is " + o.detail);
  Json j{{"blkaddr", o.blkaddr}, {"area", o.area}};
  std::string t;
  appendf(t, "Block %u (0x%x): ", o.blkaddr, o.blkaddr);
  if (o.area != "main") {
    j["detail"] = o.detail;
    t += o.area + ": " + o.detail + "\n";
  } else {
    j["segno"] = o.segno;
    j["offset_in_segment"] = o.offset_in_segment;
    j["seg_type"] = o.seg_type;
    j["seg_type_name"] = log_type_name(o.seg_type);
    j["seg_valid_blocks"] = o.seg_valid_blocks;
    j["valid"] = o.valid;
    j["current_log"] = o.current_log ? Json(log_type_name(*o.current_log)) : Json(nullptr);
    j["kind"] = o.node ? "node" : "data";
    j["node_kind"] = o.node && o.nid != 0 ? Json(node_kind_name(o.node_offset)) : Json(nullptr);
    j["summary"] = {{"nid", o.sum_nid}, {"ofs_in_node", o.sum_ofs_in_node}, {"version", o.sum_version}};
    j["nid"] = o.nid;
    j["ino"] = o.ino;
    j["node_offset"] = o.node_offset;
    j["file_block"] = o.file_block ? Json(*o.file_block) : Json(nullptr);
    j["file_offset"] = o.file_block ? Json(*o.file_block * kBlockSize) : Json(nullptr);
    j["live"] = o.live;
    j["path"] = o.path ? Json(json_string(*o.path)) : Json(nullptr);
    appendf(t, "main area, %s block\n", o.node ? "node" : "data");
    appendf(t, " - Segment           : %u, offset %u (0x%" PRIx64 " + %u * 0x200 + %u)\n", o.segno, o.offset_in_segment,
            vol.main_blkaddr(), o.segno, o.offset_in_segment);
    appendf(t, " - Segment type      : %s (%u), %u valid blocks%s%s\n", log_type_name(o.seg_type).c_str(), o.seg_type,
            o.seg_valid_blocks, o.current_log ? ", current " : "", o.current_log ? log_type_name(*o.current_log).c_str() : "");
    appendf(t, " - SIT valid bit     : %s\n", o.valid ? "set" : "clear");
    appendf(t, " - SSA entry         : nid %u, ofs_in_node %u, version %u\n", o.sum_nid, o.sum_ofs_in_node, o.sum_version);
    if (o.node) {
      appendf(t, " - Node              : nid %u, offset %u (%s)\n", o.nid, o.node_offset,
              o.nid == 0 ? "none" : node_kind_name(o.node_offset));
    } else if (o.nid) {
      appendf(t, " - Owner node        : nid %u, offset %u (%s)\n", o.nid, o.node_offset, node_kind_name(o.node_offset));
    }
    if (o.ino) appendf(t, " - Inode             : %u\n", o.ino);
    if (o.file_block)
      appendf(t, " - Data offset       : 0x%" PRIx64 " (4KB), %" PRIu64 " (bytes)\n", *o.file_block,
              *o.file_block * kBlockSize);
    if (o.path) appendf(t, " - Path              : %s\n", printable(*o.path).c_str());
    appendf(t, " - Live              : %s\n", o.live ? "yes" : "no");
  }
  j["notes"] = o.notes;
  for (const auto& n : o.notes) appendf(t, " - Note              : %s\n", printable(n).c_str());
  Output out;
  out.text = f == Format::json ? json_text(j) : t;
  return out;
}

// ------------------------------------------------------------------- map

Result<Output> render_map(Volume& vol, std::string_view path, Format f) {
  auto top = find_inode(vol, path.empty() ? std::string_view("/") : path);
  if (!top) return make_error(top.error());
  std::string top_path;
  if (path.empty() || path == "/") top_path = "/";
  else if (path[0] == '/') top_path = std::string(path);
  else if (auto p = path_of(vol, top->ino); p && *p) top_path = **p;
  else top_path = "/" + std::string(path);
  std::vector<std::string> files;
  std::string t;
  std::vector<std::string> problems;
  std::unordered_set<nid_t> dirs_seen;

  auto one = [&](const std::string& p, const InodeInfo& in) {
    const std::uint64_t nblocks = (in.size + kBlockSize - 1) / kBlockSize;
    Json jf{{"path", json_string(p)}, {"ino", in.ino}, {"size", in.size}};
    std::string line = printable(p);
    if (in.has_inline_data()) {
      jf["inline"] = true;
      jf["extents"] = Json::array();
      files.push_back(json_line(jf));
      t += line + "\n";
      return;
    }
    auto bm = block_map(vol, in);
    if (!bm) {
      problems.push_back(p + ": " + describe(bm.error()));
      return;
    }
    Json ext = Json::array();
    std::uint64_t pos = 0, holes = 0;
    auto flush_holes = [&] {
      if (holes == 1) line += " 0";
      else if (holes > 1) appendf(line, " 0*%" PRIu64, holes);
      holes = 0;
    };
    for (const auto& r : bm->runs) {
      if (r.file_block >= nblocks) break;
      holes += r.file_block - pos;
      const std::uint64_t len = std::min<std::uint64_t>(r.len, nblocks - r.file_block);
      if (real_addr(r.blkaddr)) {
        flush_holes();
        if (len == 1) appendf(line, " %u", r.blkaddr);
        else appendf(line, " %u-%" PRIu64, r.blkaddr, static_cast<std::uint64_t>(r.blkaddr) + len - 1);
        ext.push_back({{"file_block", r.file_block}, {"blkaddr", r.blkaddr}, {"len", len}});
      } else {
        holes += len;
      }
      pos = r.file_block + len;
    }
    if (pos < nblocks) holes += nblocks - pos;
    flush_holes();
    jf["inline"] = false;
    jf["extents"] = ext;
    files.push_back(json_line(jf));
    t += line + "\n";
  };

  std::function<void(const std::string&, const InodeInfo&, int)> walk = [&](const std::string& p, const InodeInfo& in,
                                                                             int depth) {
    if (in.is_reg()) {
      one(p, in);
      return;
    }
    if (!in.is_dir()) return;
    if (depth > 1024 || !dirs_seen.insert(in.ino).second) {
      problems.push_back(p + ": directory loop or too deep; not descended");
      return;
    }
    auto entries = list_dir(vol, in);
    if (!entries) {
      problems.push_back(p + ": " + describe(entries.error()));
      return;
    }
    for (const auto& e : *entries) {
      const std::string cp = child_path(p, e.dirent.name);
      if (!e.inode) {
        problems.push_back(cp + ": " + e.error);
        continue;
      }
      walk(cp, *e.inode, depth + 1);
    }
  };
  walk(top_path, *top, 0);
  Output o;
  o.text = f == Format::json ? json_with_list({{"path", json_string(top_path)}}, "entries", files, problems) : std::move(t);
  o.problems = std::move(problems);
  return o;
}

}  // namespace f2fscore::inspect
