// f2fscore-dump and the inspect module: JSON views against hand-computed
// layouts, extraction against Linux's manifests of ../shared/images and
// against a crafted image (holes, hard links, symlinks, devices, xattrs,
// encrypted and verity files, hostile names), exit statuses.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/dentry.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/extract.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/uring_device.hpp"
#include "f2fscore/volume.hpp"
#include "support/test_support.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const std::string kDump = F2FSCORE_DUMP_BIN;

std::string q(const fs::path& p) { return f2fstest::shell_quote(p.string()); }

// Runs the tool; stdout only (stderr dropped) unless `with_stderr`.
f2fstest::CommandResult dump(const std::string& args, bool with_stderr = false) {
  return f2fstest::run(kDump + " " + args + (with_stderr ? "" : " 2>/dev/null"));
}

Json dump_json(const std::string& image, const std::string& args) {
  auto r = dump(q(image) + " --json " + args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.output;
  Json j = Json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << args << ": not JSON: " << r.output.substr(0, 400);
  return j;
}

std::string sha256_file(const fs::path& p) {
  auto r = f2fstest::run("sha256sum " + q(p));
  return r.output.substr(0, 64);
}

std::string octal(std::uint32_t v) {
  std::ostringstream o;
  o << std::oct << v;
  return o.str();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Manifest lines (../shared/images/README.md format) of a host tree.
void host_manifest(const fs::path& root, const fs::path& dir, std::vector<std::string>& out) {
  std::vector<fs::path> kids;
  for (const auto& e : fs::directory_iterator(dir)) kids.push_back(e.path());
  std::sort(kids.begin(), kids.end());
  for (const auto& p : kids) {
    const std::string rel = fs::relative(p, root).string();
    struct stat st {};
    ASSERT_EQ(::lstat(p.c_str(), &st), 0) << p;
    const std::string perm = octal(st.st_mode & 07777);
    if (S_ISDIR(st.st_mode)) {
      out.push_back("D|" + rel + "|" + perm);
      host_manifest(root, p, out);
    } else if (S_ISREG(st.st_mode)) {
      out.push_back("F|" + rel + "|" + perm + "|" + std::to_string(st.st_size) + "|" + std::to_string(st.st_nlink) +
                    "|" + sha256_file(p));
    } else if (S_ISLNK(st.st_mode)) {
      out.push_back("L|" + rel + "|" + fs::read_symlink(p).string());
    }
    char names[4096];
    const ssize_t n = ::llistxattr(p.c_str(), names, sizeof names);
    if (n > 0) {
      std::vector<std::string> v;
      for (ssize_t i = 0; i < n;) {
        std::string name(names + i);
        i += static_cast<ssize_t>(name.size()) + 1;
        if (name.rfind("security.", 0) == 0 && name != "security.test") continue;  // host LSM labels
        v.push_back(name);
      }
      std::sort(v.begin(), v.end());
      if (!v.empty()) {
        std::string l = "X|" + rel + "|";
        for (const auto& s : v) l += s + ",";
        out.push_back(l);
      }
    }
  }
}

// ----------------------------------------------------------------------------
// A tiny writer for test images: adds inodes, dentries and data blocks to a
// freshly formatted volume through raw block writes (NAT entries in both
// copies; SIT and SSA untouched: the reader does not need them).
class Recipe {
 public:
  explicit Recipe(BlockDevice& dev) : dev_(dev) {
    auto vol = Volume::open(dev);
    if (!vol) throw std::runtime_error(vol.error().to_string());
    sb_ = (*vol)->superblock();
    ver_ = (*vol)->checkpoint().checkpoint_ver.get();
    next_nid_ = (*vol)->checkpoint().next_free_nid.get();
    // Two free segments near the end of the main area: data, then nodes.
    data_seg_ = (*vol)->main_segments() - 3;
    next_blk_ = static_cast<block_t>((*vol)->segment_start(data_seg_));
    next_node_ = static_cast<block_t>((*vol)->segment_start(data_seg_ + 1));
    main_ = static_cast<block_t>((*vol)->main_blkaddr());
    auto root = (*vol)->read_inode(kRootIno);
    if (!root) throw std::runtime_error(root.error().to_string());
    auto a = (*vol)->map_block(*root, 0);
    if (!a) throw std::runtime_error(a.error().to_string());
    root_dentry_ = *a;
    features_ = sb_.feature.get();
    base_ = (features_ & feature::extra_attr) ? extra_isize_for_features(features_) / 4 : 0;
    xattr_addrs_ = (features_ & feature::flexible_inline_xattr) ? kDefaultInlineXattrAddrs : 0;
  }

  nid_t nid() { return next_nid_++; }
  block_t block() { return next_blk_++; }
  block_t node_block() { return next_node_++; }

  // Records the owner of a main-area block in its segment's SSA block.
  void summary(block_t a, nid_t nid, std::uint32_t ofs_in_node, bool node) {
    const std::uint32_t segno = (a - main_) / kDefaultBlocksPerSeg;
    const block_t ssa = sb_.ssa_blkaddr.get() + segno;
    auto b = read(ssa);
    auto* sum = reinterpret_cast<SummaryBlock*>(b.data());
    Summary& e = sum->entries[(a - main_) % kDefaultBlocksPerSeg];
    e.nid.set(nid);
    e.ofs_in_node.set(static_cast<std::uint16_t>(ofs_in_node));
    sum->footer.entry_type = node ? kSumTypeNode : kSumTypeData;
    write(ssa, b.data());
  }

  void write(block_t addr, const void* data) {
    auto st = write_at(dev_, static_cast<std::uint64_t>(addr) * kBlockSize,
                       std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(data), kBlockSize));
    if (!st) throw std::runtime_error(st.error().to_string());
  }
  std::vector<std::uint8_t> read(block_t addr) {
    std::vector<std::uint8_t> b(kBlockSize);
    auto st = read_at(dev_, static_cast<std::uint64_t>(addr) * kBlockSize, b);
    if (!st) throw std::runtime_error(st.error().to_string());
    return b;
  }
  block_t data(const std::string& content) {
    std::vector<std::uint8_t> b(kBlockSize, 0);
    std::memcpy(b.data(), content.data(), std::min<std::size_t>(content.size(), kBlockSize));
    const block_t a = block();
    write(a, b.data());
    return a;
  }

  void set_nat(nid_t nid, nid_t ino, block_t addr) {
    const std::uint32_t blk = nid / kNatEntryPerBlock;
    for (std::uint32_t copy = 0; copy < 2; ++copy) {
      const block_t a = sb_.nat_blkaddr.get() + copy * kDefaultBlocksPerSeg + blk;
      auto b = read(a);
      NatEntry e{};
      e.ino.set(ino);
      e.block_addr.set(addr);
      std::memcpy(b.data() + (nid % kNatEntryPerBlock) * sizeof(NatEntry), &e, sizeof e);
      write(a, b.data());
    }
  }

  Node inode(nid_t ino, std::uint16_t mode, std::uint64_t size, std::uint32_t links) {
    Node n{};
    Inode& i = n.i;
    i.i_mode.set(mode);
    i.i_links.set(links);
    i.i_size.set(size);
    i.i_blocks.set(1);
    i.i_atime.set(1600000001);
    i.i_ctime.set(1600000002);
    i.i_mtime.set(1600000000);
    i.i_mtime_nsec.set(123456789);
    i.i_generation.set(ino * 7);
    i.i_pino.set(kRootIno);
    if (features_ & feature::extra_attr) {
      i.i_inline |= inline_flag::extra_attr;
      i.extra.i_extra_isize.set(static_cast<std::uint16_t>(base_ * 4));
      if (xattr_addrs_) i.extra.i_inline_xattr_size.set(static_cast<std::uint16_t>(xattr_addrs_));
    }
    if (xattr_addrs_) i.i_inline |= inline_flag::xattr;
    n.footer.nid.set(ino);
    n.footer.ino.set(ino);
    n.footer.cp_ver.set(ver_);
    return n;
  }
  void name(Node& n, const std::string& nm, nid_t pino) {
    n.i.i_namelen.set(static_cast<std::uint32_t>(nm.size()));
    std::memcpy(n.i.i_name, nm.data(), nm.size());
    n.i.i_pino.set(pino);
  }
  void addr(Node& n, std::uint32_t index, block_t a) {
    n.i.i_addr[base_ + index].set(a);
    if (a >= main_) summary(a, n.footer.nid.get(), index, false);
  }
  std::uint8_t* inline_area(Node& n) {
    return reinterpret_cast<std::uint8_t*>(&n) + offsetof(Inode, i_addr) + 4 * (base_ + kDefInlineReservedSize);
  }
  std::uint32_t inline_bytes() const { return 4 * (kDefAddrsPerInode - base_ - xattr_addrs_ - kDefInlineReservedSize); }
  void inline_data(Node& n, const std::string& d) {
    n.i.i_inline |= inline_flag::data | inline_flag::data_exist;
    std::memcpy(inline_area(n), d.data(), d.size());
  }
  // Inline xattrs: header then entries, zero-terminated.
  void xattrs(Node& n, const std::vector<std::tuple<std::uint8_t, std::string, std::string>>& xs) {
    auto* p = reinterpret_cast<std::uint8_t*>(&n.i.i_addr[kDefAddrsPerInode - xattr_addrs_]);
    store_le32(p, 0, kXattrMagic);
    store_le32(p, 4, 1);
    std::size_t off = sizeof(XattrHeader);
    for (const auto& [idx, nm, val] : xs) {
      p[off] = idx;
      p[off + 1] = static_cast<std::uint8_t>(nm.size());
      p[off + 2] = static_cast<std::uint8_t>(val.size());
      p[off + 3] = 0;
      std::memcpy(p + off + 4, nm.data(), nm.size());
      std::memcpy(p + off + 4 + nm.size(), val.data(), val.size());
      off += xattr_entry_size(static_cast<std::uint32_t>(nm.size()), static_cast<std::uint32_t>(val.size()));
    }
    if (off + 4 > xattr_addrs_ * 4) throw std::runtime_error("inline xattrs do not fit");
  }
  // Writes an inode (sealing its checksum) and its NAT entry.
  block_t put(Node& n) {
    const nid_t ino = n.footer.nid.get();
    if (features_ & feature::inode_checksum) {
      const std::uint32_t c = inode_checksum(inode_checksum_seed(sb_.uuid), reinterpret_cast<const std::uint8_t*>(&n));
      n.i.extra.i_inode_checksum.set(c);
    }
    const block_t a = node_block();
    write(a, &n);
    set_nat(ino, ino, a);
    summary(a, ino, 0, true);
    return a;
  }
  // A direct node of `ino` at tree offset `ofs` with addresses at `addrs`.
  nid_t direct(nid_t ino, std::uint32_t ofs, const std::vector<std::pair<std::uint32_t, block_t>>& addrs) {
    Node n{};
    const nid_t id = nid();
    for (const auto& [k, a] : addrs) {
      n.dn.addr[k].set(a);
      summary(a, id, k, false);
    }
    n.footer.nid.set(id);
    n.footer.ino.set(ino);
    n.footer.flag.set(ofs << node_flag::offset_shift);
    n.footer.cp_ver.set(ver_);
    const block_t a = node_block();
    write(a, &n);
    set_nat(id, ino, a);
    summary(a, id, 0, true);
    return id;
  }

  static void add_entry(std::uint8_t* bitmap, DirEntry* de, std::uint8_t (*names)[kSlotLen], std::uint32_t slots,
                        const std::string& nm, nid_t ino, FileType type) {
    const std::uint32_t need = static_cast<std::uint32_t>((nm.size() + kSlotLen - 1) / kSlotLen);
    for (std::uint32_t s = 0; s + need <= slots; ++s) {
      bool free = true;
      for (std::uint32_t k = 0; k < need; ++k) free = free && !test_bit_le(bitmap, s + k);
      if (!free) continue;
      DirEntry e{};
      e.hash_code.set(dentry_hash(nm));
      e.ino.set(ino);
      e.name_len.set(static_cast<std::uint16_t>(nm.size()));
      e.file_type = static_cast<std::uint8_t>(type);
      std::memcpy(&de[s], &e, sizeof e);
      std::memcpy(names[s], nm.data(), nm.size());
      for (std::uint32_t k = 0; k < need; ++k) set_bit_le(bitmap, s + k);
      return;
    }
    throw std::runtime_error("directory full");
  }
  void link_root(const std::string& nm, nid_t ino, FileType type) {
    auto b = read(root_dentry_);
    auto* d = reinterpret_cast<DentryBlock*>(b.data());
    add_entry(d->dentry_bitmap, d->dentry, d->filename, kNrDentryInBlock, nm, ino, type);
    write(root_dentry_, b.data());
  }
  void link_inline(Node& dir, const std::string& nm, nid_t ino, FileType type) {
    dir.i.i_inline |= inline_flag::dentry;
    const auto lay = inline_dentry_layout(inline_bytes());
    std::uint8_t* area = inline_area(dir);
    add_entry(area, reinterpret_cast<DirEntry*>(area + lay.dentry_offset()),
              reinterpret_cast<std::uint8_t(*)[kSlotLen]>(area + lay.filename_offset()), lay.nr_slots, nm, ino, type);
  }

  const SuperBlock& sb() const { return sb_; }

 private:
  BlockDevice& dev_;
  SuperBlock sb_{};
  std::uint64_t ver_ = 0;
  nid_t next_nid_ = 0;
  block_t next_blk_ = 0, next_node_ = 0, main_ = 0;
  std::uint32_t data_seg_ = 0;
  block_t root_dentry_ = 0;
  std::uint32_t features_ = 0, base_ = 0, xattr_addrs_ = 0;
};

constexpr std::uint32_t kFeatures = feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr |
                                    feature::sb_checksum | feature::inode_crtime | feature::verity |
                                    feature::encrypt;

std::unique_ptr<BlockDevice> format_file(const fs::path& img, std::uint64_t bytes, std::uint32_t features) {
  f2fstest::make_sparse_file(img, bytes);
  OpenOptions oo;
  auto dev = open_posix_device(img.string(), oo);
  if (!dev) throw std::runtime_error(dev.error().to_string());
  MkfsTarget t{dev->get(), img.string()};
  MkfsOptions o;
  o.features = features;
  o.timestamp = 1700000000;
  o.uuid = parse_uuid("0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5").value();
  auto r = format_volume(std::span<const MkfsTarget>(&t, 1), o);
  if (!r) throw std::runtime_error(r.error().to_string());
  return std::move(*dev);
}

// The crafted image: see the layout in the test below.
struct Crafted {
  nid_t sparse = 0, links = 0, dir = 0, secret = 0, verity = 0;
  block_t sparse_blocks[4] = {};
};

Crafted craft(const fs::path& img) {
  auto dev = format_file(img, 256ull << 20, kFeatures);
  Recipe r(*dev);
  Crafted c;
  // /sparse: 1200 blocks + 100 bytes; data at blocks 0, 200, 1000 (through a
  // direct node), block 300 mapped but all zeroes; owner 1234:5678, 0640.
  c.sparse = r.nid();
  Node sp = r.inode(c.sparse, 0100640, 1200ull * 4096 + 100, 1);
  r.name(sp, "sparse", kRootIno);
  sp.i.i_uid.set(1234);
  sp.i.i_gid.set(5678);
  c.sparse_blocks[0] = r.data(std::string(4096, 'A'));
  c.sparse_blocks[1] = r.data(std::string(4096, 'B'));
  c.sparse_blocks[2] = r.data(std::string());
  c.sparse_blocks[3] = r.data(std::string(4096, 'C'));
  r.addr(sp, 0, c.sparse_blocks[0]);
  r.addr(sp, 200, c.sparse_blocks[1]);
  r.addr(sp, 300, c.sparse_blocks[2]);
  const std::uint32_t api = kDefAddrsPerInode - extra_isize_for_features(kFeatures) / 4 - kDefaultInlineXattrAddrs;
  sp.i.i_nid[0].set(r.direct(c.sparse, 1, {{1000 - api, c.sparse_blocks[3]}}));
  sp.i.i_blocks.set(6);
  r.put(sp);
  r.link_root("sparse", c.sparse, FileType::reg_file);
  // /hl1, /hl2 and /dir/hl3: one inode, three links.
  c.links = r.nid();
  Node hl = r.inode(c.links, 0100600, 9, 3);
  r.name(hl, "hl1", kRootIno);
  r.addr(hl, 0, r.data("link data"));
  r.put(hl);
  r.link_root("hl1", c.links, FileType::reg_file);
  r.link_root("hl2", c.links, FileType::reg_file);
  // /sym -> sparse (inline); /fifo; /chr (1, 3); /empty; /naïve.
  const nid_t sym = r.nid();
  Node sy = r.inode(sym, 0120777, 6, 1);
  r.name(sy, "sym", kRootIno);
  r.inline_data(sy, "sparse");
  r.put(sy);
  r.link_root("sym", sym, FileType::symlink);
  const nid_t fifo = r.nid();
  Node ff = r.inode(fifo, 010644, 0, 1);
  r.put(ff);
  r.link_root("fifo", fifo, FileType::fifo);
  const nid_t chr = r.nid();
  Node ch = r.inode(chr, 020600, 0, 1);
  r.addr(ch, 0, (1u << 8) | 3u);
  r.put(ch);
  r.link_root("chr", chr, FileType::chrdev);
  const nid_t empty = r.nid();
  Node em = r.inode(empty, 0100644, 0, 1);
  r.put(em);
  r.link_root("empty", empty, FileType::reg_file);
  const nid_t naive = r.nid();
  Node na = r.inode(naive, 0100644, 3, 1);
  r.inline_data(na, "abc");
  r.put(na);
  r.link_root("na\xc3\xafve", naive, FileType::reg_file);
  // /dir (inline dentries): inner (inline data, user.note = v1), hl3.
  c.dir = r.nid();
  const nid_t inner = r.nid();
  Node in = r.inode(inner, 0100644, 6, 1);
  r.name(in, "inner", c.dir);
  r.inline_data(in, "hello\n");
  r.xattrs(in, {{xattr_index::user, "note", "v1"}, {xattr_index::trusted, "t", "tv"}});
  r.put(in);
  Node d = r.inode(c.dir, 040750, 3488, 2);
  r.name(d, "dir", kRootIno);
  d.i.i_current_depth.set(1);
  r.link_inline(d, "inner", inner, FileType::reg_file);
  r.link_inline(d, "hl3", c.links, FileType::reg_file);
  r.put(d);
  r.link_root("dir", c.dir, FileType::dir);
  // /secret: encrypted (v2 context), not extractable.
  c.secret = r.nid();
  Node se = r.inode(c.secret, 0100600, 10, 1);
  se.i.i_advise |= advise::encrypt;
  std::string ctx(40, '\0');
  ctx[0] = 2;
  ctx[1] = 1;  // AES-256-XTS
  ctx[2] = 4;  // AES-256-CTS-CBC
  ctx[3] = 2;  // padding 16
  for (int k = 0; k < 16; ++k) ctx[static_cast<std::size_t>(8 + k)] = static_cast<char>(0xA0 + k);
  r.xattrs(se, {{xattr_index::encryption, "c", ctx}});
  r.addr(se, 0, r.data("ciphertext"));
  r.put(se);
  r.link_root("secret", c.secret, FileType::reg_file);
  // /verity: 5000 bytes, Merkle block at 64 KiB, descriptor at block 17.
  c.verity = r.nid();
  Node ve = r.inode(c.verity, 0100444, 5000, 1);
  ve.i.i_advise |= advise::verity;
  r.addr(ve, 0, r.data(std::string(4096, 'v')));
  r.addr(ve, 1, r.data(std::string(904, 'w') + std::string(3192, 'X')));  // past EOF: not content
  r.addr(ve, 16, r.data(std::string(4096, 'M')));
  std::string desc(256, '\0');
  desc[0] = 1;
  desc[1] = 1;  // sha256
  desc[2] = 12;
  store_le64(desc.data(), 8, 5000);
  for (int k = 0; k < 32; ++k) desc[static_cast<std::size_t>(16 + k)] = static_cast<char>(k);
  r.addr(ve, 17, r.data(desc));
  std::string loc(16, '\0');
  store_le32(loc.data(), 0, 1);
  store_le32(loc.data(), 4, 256);
  store_le64(loc.data(), 8, 17 * 4096);
  r.xattrs(ve, {{xattr_index::verity, "v", loc}});
  r.put(ve);
  r.link_root("verity", c.verity, FileType::reg_file);
  // For looking at the image by hand: F2FSCORE_DUMP_TEST_KEEP=DIR keeps a copy.
  if (const char* keep = std::getenv("F2FSCORE_DUMP_TEST_KEEP"))
    fs::copy_file(img, fs::path(keep) / img.filename(), fs::copy_options::overwrite_existing);
  return c;
}

struct Stat {
  struct stat st {};
  bool ok = false;
};
Stat lstat_of(const fs::path& p) {
  Stat s;
  s.ok = ::lstat(p.c_str(), &s.st) == 0;
  return s;
}

}  // namespace

// --------------------------------------------------------------------------

TEST(Dump, JsonOfADefaultGiBVolumeMatchesTheHandComputedLayout) {
  f2fstest::TempDir t;
  const auto img = t / "g.img";
  format_file(img, 1ull << 30, 0);
  // 262144 blocks; segment 0 at 512; CP 2, SIT 2, NAT 4, SSA 1 segments;
  // main at 512 + 9 * 512 = 5120 with 511 - 9 = 502 segments; 68 overprov.
  Json sb = dump_json(img.string(), "sb");
  EXPECT_EQ(sb["magic"], 0xF2F52010u);
  EXPECT_EQ(sb["block_count"], 262144u);
  EXPECT_EQ(sb["segment0_blkaddr"], 512u);
  EXPECT_EQ(sb["cp_blkaddr"], 512u);
  EXPECT_EQ(sb["sit_blkaddr"], 1536u);
  EXPECT_EQ(sb["nat_blkaddr"], 2560u);
  EXPECT_EQ(sb["ssa_blkaddr"], 4608u);
  EXPECT_EQ(sb["main_blkaddr"], 5120u);
  EXPECT_EQ(sb["segment_count_main"], 502u);
  EXPECT_EQ(sb["root_ino"], 3u);
  EXPECT_EQ(sb["uuid"], "0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5");
  EXPECT_TRUE(sb["features"].empty());
  Json cp = dump_json(img.string(), "cp");
  EXPECT_EQ(cp["user_block_count"], 222208u);  // (502 - 68) * 512
  EXPECT_EQ(cp["overprov_segment_count"], 68u);
  EXPECT_EQ(cp["valid_block_count"], 2u);  // root inode and its dentry block
  EXPECT_EQ(cp["free_segment_count"], 496u);
  EXPECT_EQ(cp["cur_node_segno"][0], 0u);
  EXPECT_EQ(cp["cur_data_segno"][0], 3u);
  const auto names = cp["ckpt_flag_names"].get<std::vector<std::string>>();
  for (const char* n : {"unmount", "compacted_summary", "nat_bits"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  Json info = dump_json(img.string(), "info");
  EXPECT_EQ(info["superblock_copy"], 0);
  EXPECT_EQ(info["clean_unmount"], true);
  EXPECT_EQ(info["pending_fsync_nodes"], 0u);
  EXPECT_EQ(info["nat_bits_valid"], true);
  EXPECT_TRUE(info["warnings"].empty());
  // Root inode: block 0 of the hot node log (5120); its dentry block is
  // block 0 of the hot data log (5120 + 3 * 512).
  Json nat = dump_json(img.string(), "nat 3");
  ASSERT_EQ(nat["entries"].size(), 1u);
  EXPECT_EQ(nat["entries"][0]["block_addr"], 5120u);
  Json ino = dump_json(img.string(), "inode /");
  EXPECT_EQ(ino["ino"], 3u);
  EXPECT_EQ(ino["type"], "directory");
  EXPECT_EQ(ino["path"], "/");
  ASSERT_EQ(ino["block_map"].size(), 1u);
  EXPECT_EQ(ino["block_map"][0]["blkaddr"], 6656u);
  Json blk = dump_json(img.string(), "block 6656");
  EXPECT_EQ(blk["area"], "main");
  EXPECT_EQ(blk["segno"], 3u);
  EXPECT_EQ(blk["seg_type_name"], "hot_data");
  EXPECT_EQ(blk["ino"], 3u);
  EXPECT_EQ(blk["file_block"], 0u);
  EXPECT_EQ(blk["path"], "/");
  EXPECT_EQ(blk["live"], true);
  Json node_blk = dump_json(img.string(), "block 5120");
  EXPECT_EQ(node_blk["kind"], "node");
  EXPECT_EQ(node_blk["node_kind"], "inode");
  EXPECT_EQ(node_blk["live"], true);
  EXPECT_EQ(dump_json(img.string(), "block 600")["area"], "checkpoint");
  EXPECT_EQ(dump_json(img.string(), "block 1600")["area"], "sit");
  EXPECT_EQ(dump_json(img.string(), "block 3000")["area"], "nat");
  EXPECT_EQ(dump_json(img.string(), "block 4700")["area"], "ssa");
  EXPECT_EQ(dump_json(img.string(), "block 1")["area"], "superblock");
  Json space = dump_json(img.string(), "space");
  EXPECT_EQ(space["main_segments"], 502u);
  EXPECT_EQ(space["free_segments"], 496u);
  EXPECT_EQ(space["current_segments"], 6u);
  EXPECT_EQ(space["sit_valid_blocks"], 2u);
  EXPECT_EQ(space["logs"]["hot_node"]["valid_blocks"], 1u);
  EXPECT_EQ(space["logs"]["hot_data"]["valid_blocks"], 1u);
  EXPECT_EQ(space["histogram"][0]["segments"], 2u);
  Json sit = dump_json(img.string(), "sit 0~3");
  ASSERT_EQ(sit["entries"].size(), 4u);
  EXPECT_EQ(sit["entries"][0]["valid_blocks"], 1u);
  EXPECT_EQ(sit["entries"][0]["type_name"], "hot_node");
  EXPECT_EQ(sit["entries"][0]["valid_map"].get<std::string>().substr(0, 2), "80");
  Json ssa = dump_json(img.string(), "ssa 3");
  ASSERT_EQ(ssa["segments"].size(), 1u);
  ASSERT_EQ(ssa["segments"][0]["entries"].size(), 1u);
  EXPECT_EQ(ssa["segments"][0]["entries"][0]["nid"], 3u);
  Json ls = dump_json(img.string(), "ls -l /");
  EXPECT_TRUE(ls["entries"].empty());
  Json map = dump_json(img.string(), "map");
  EXPECT_TRUE(map["entries"].empty());
  // Text forms of the same views print too.
  for (const char* c : {"info", "sb", "cp", "nat 0~-1", "sit 0~", "ssa 0~5", "inode 3", "block 6656", "ls -lR",
                        "space"}) {
    auto r = dump(q(img) + " " + c);
    EXPECT_EQ(r.exit_code, 0) << c << ": " << r.output;
    EXPECT_FALSE(r.output.empty()) << c;
  }
  auto sbt = dump(q(img) + " sb");
  EXPECT_NE(sbt.output.find("main_blkaddr" + std::string(18, ' ') + "\t\t[0x    1400 : 5120]\n"), std::string::npos)
      << sbt.output;
}

TEST(Dump, ExtractionOfTheCraftedImageKeepsEverything) {
  f2fstest::TempDir t;
  const auto img = t / "c.img";
  const Crafted c = craft(img);
  const auto out = t / "out";
  auto r = dump(q(img) + " --json extract / " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Json rep = Json::parse(r.output);
  EXPECT_EQ(rep["encrypted"], Json::array({"/secret"}));
  EXPECT_TRUE(rep["problems"].empty()) << rep.dump(2);
  EXPECT_EQ(rep["hard_links"], 2u);
  // Holes stay holes: 3 data blocks written (0, 200, 1000; 300 is zeroes).
  const auto sp = lstat_of(out / "sparse");
  ASSERT_TRUE(sp.ok);
  EXPECT_EQ(sp.st.st_size, 1200 * 4096 + 100);
  EXPECT_LE(sp.st.st_blocks * 512, 4 * 4096) << "holes were filled";
  const std::string data = slurp(out / "sparse");
  ASSERT_EQ(data.size(), 1200u * 4096 + 100);
  EXPECT_EQ(data.substr(0, 4096), std::string(4096, 'A'));
  EXPECT_EQ(data.substr(200 * 4096, 4096), std::string(4096, 'B'));
  EXPECT_EQ(data.substr(1000 * 4096, 4096), std::string(4096, 'C'));
  EXPECT_EQ(data.substr(300 * 4096, 4096), std::string(4096, '\0'));
  EXPECT_EQ(data.substr(4096, 4096), std::string(4096, '\0'));
  EXPECT_EQ(sp.st.st_mode & 07777, 0640u);
  EXPECT_EQ(sp.st.st_mtim.tv_sec, 1600000000);
  EXPECT_EQ(sp.st.st_mtim.tv_nsec, 123456789);
  EXPECT_EQ(sp.st.st_atim.tv_sec, 1600000001);
  if (::geteuid() == 0) {
    EXPECT_EQ(sp.st.st_uid, 1234u);
    EXPECT_EQ(sp.st.st_gid, 5678u);
  }
  // Hard links stay linked, across directories.
  const auto h1 = lstat_of(out / "hl1"), h2 = lstat_of(out / "hl2"), h3 = lstat_of(out / "dir" / "hl3");
  ASSERT_TRUE(h1.ok && h2.ok && h3.ok);
  EXPECT_EQ(h1.st.st_ino, h2.st.st_ino);
  EXPECT_EQ(h1.st.st_ino, h3.st.st_ino);
  EXPECT_EQ(h1.st.st_nlink, 3u);
  EXPECT_EQ(slurp(out / "hl2"), "link data");
  // Symlinks as symlinks; fifos; devices as root.
  const auto sy = lstat_of(out / "sym");
  ASSERT_TRUE(sy.ok);
  EXPECT_TRUE(S_ISLNK(sy.st.st_mode));
  EXPECT_EQ(fs::read_symlink(out / "sym"), "sparse");
  EXPECT_TRUE(S_ISFIFO(lstat_of(out / "fifo").st.st_mode));
  if (::geteuid() == 0) {
    const auto ch = lstat_of(out / "chr");
    ASSERT_TRUE(ch.ok);
    EXPECT_TRUE(S_ISCHR(ch.st.st_mode));
    EXPECT_EQ(major(ch.st.st_rdev), 1u);
    EXPECT_EQ(minor(ch.st.st_rdev), 3u);
  } else {
    EXPECT_FALSE(rep["skipped"].empty());
  }
  EXPECT_EQ(lstat_of(out / "empty").st.st_size, 0);
  EXPECT_EQ(slurp(out / "na\xc3\xafve"), "abc");
  // Inline data and xattrs; directory mode applied last.
  EXPECT_EQ(slurp(out / "dir" / "inner"), "hello\n");
  char v[16] = {};
  const ssize_t n = ::getxattr((out / "dir" / "inner").c_str(), "user.note", v, sizeof v);
  if (n >= 0) EXPECT_EQ(std::string(v, static_cast<std::size_t>(n)), "v1");
  else EXPECT_GT(rep["xattrs_unsupported"].get<int>(), 0);
  EXPECT_EQ(lstat_of(out / "dir").st.st_mode & 07777, 0750u);
  // Encrypted: not extracted. Verity: contents only.
  EXPECT_FALSE(lstat_of(out / "secret").ok);
  EXPECT_EQ(slurp(out / "verity"), std::string(4096, 'v') + std::string(904, 'w'));

  // The same image through the views.
  Json in = dump_json(img.string(), "inode /sparse");
  EXPECT_EQ(in["i_uid"], 1234u);
  EXPECT_EQ(in["mapped_blocks"], 4u);
  ASSERT_EQ(in["block_map"].size(), 4u);
  EXPECT_EQ(in["block_map"][3]["file_block"], 1000u);
  EXPECT_EQ(in["block_map"][3]["blkaddr"], c.sparse_blocks[3]);
  ASSERT_EQ(in["node_blocks"].size(), 1u);
  EXPECT_EQ(in["node_blocks"][0]["offset"], 1u);
  EXPECT_EQ(in["node_blocks"][0]["kind"], "direct");
  Json sec = dump_json(img.string(), "inode /secret");
  EXPECT_EQ(sec["encryption"]["version"], 2);
  EXPECT_EQ(sec["encryption"]["contents_mode_name"], "AES-256-XTS");
  EXPECT_EQ(sec["encryption"]["master_key_identifier"], "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
  Json ver = dump_json(img.string(), "inode /verity");
  EXPECT_EQ(ver["verity"]["hash_algorithm"], "sha256");
  EXPECT_EQ(ver["verity"]["data_size"], 5000u);
  EXPECT_EQ(ver["verity"]["root_hash"].get<std::string>().substr(0, 8), "00010203");
  Json chr = dump_json(img.string(), "inode /chr");
  EXPECT_EQ(chr["rdev"]["major"], 1u);
  EXPECT_EQ(chr["rdev"]["minor"], 3u);
  // The data block at file block 1000 maps back through the direct node.
  Json blk = dump_json(img.string(), "block " + std::to_string(c.sparse_blocks[3]));
  EXPECT_EQ(blk["ino"], c.sparse);
  EXPECT_EQ(blk["file_block"], 1000u);
  EXPECT_EQ(blk["path"], "/sparse");
  EXPECT_EQ(blk["live"], true);
  // fsck -M style map: runs, one hole, "0*N" for longer holes.
  auto map = dump(q(img) + " map /sparse");
  EXPECT_EQ(map.output, "/sparse " + std::to_string(c.sparse_blocks[0]) + " 0*199 " +
                            std::to_string(c.sparse_blocks[1]) + " 0*99 " + std::to_string(c.sparse_blocks[2]) +
                            " 0*699 " + std::to_string(c.sparse_blocks[3]) + " 0*200\n");
  // ls -lR lists the tree; cat streams contents; cat refuses the encrypted file.
  auto ls = dump(q(img) + " ls -lR /");
  EXPECT_EQ(ls.exit_code, 0);
  EXPECT_NE(ls.output.find("sym -> sparse"), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("/dir:\n"), std::string::npos) << ls.output;
  {
    const auto at = ls.output.find(" chr\n");
    ASSERT_NE(at, std::string::npos) << ls.output;
    const std::string line = ls.output.substr(ls.output.rfind('\n', at) + 1, at - ls.output.rfind('\n', at));
    EXPECT_EQ(line.rfind("crw-------", 0), 0u) << line;
    EXPECT_NE(line.find("1, 3"), std::string::npos) << line;
  }
  Json lsj = dump_json(img.string(), "ls -R /");
  bool found_inner = false;
  for (const auto& e : lsj["entries"])
    if (e["name"] == "dir")
      for (const auto& k : e["entries"]) found_inner = found_inner || k["name"] == "inner";
  EXPECT_TRUE(found_inner) << lsj.dump(1);
  EXPECT_EQ(dump(q(img) + " cat /dir/inner").output, "hello\n");
  Json catj = dump_json(img.string(), "cat /hl1");
  EXPECT_EQ(catj["data"], "bGluayBkYXRh");  // base64("link data")
  auto secret = dump(q(img) + " cat /secret", true);
  EXPECT_EQ(secret.exit_code, 1);
  EXPECT_NE(secret.output.find("encrypted"), std::string::npos);

  // One file into an existing directory lands under its own name.
  const auto one = t / "one";
  fs::create_directory(one);
  ASSERT_EQ(dump(q(img) + " extract /dir/inner " + q(one)).exit_code, 0);
  EXPECT_EQ(slurp(one / "inner"), "hello\n");
}

// 4096 bytes, different for every (tag, index), none of them zero.
std::string block_pattern(int tag, std::uint32_t index) {
  std::mt19937 rng(static_cast<std::uint32_t>(tag) * 100003u + index);
  std::string b(4096, '\0');
  for (auto& ch : b) ch = static_cast<char>(rng() % 255 + 1);
  return b;
}

// Whether the host takes a block of one file of `dir` into another: shares
// it (FICLONERANGE: Btrfs, XFS with reflink) with `reflink`, else copies it
// with copy_file_range(2) (Linux 4.5 and later unless a seccomp filter
// refuses it).
bool host_copies_files(const fs::path& dir, bool reflink) {
  const fs::path a = dir / ".probe-a", b = dir / ".probe-b";
  { std::ofstream(a, std::ios::binary) << std::string(4096, 'p'); }
  const int in = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
  const int out = ::open(b.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ssize_t n = -1;
  if (in >= 0 && out >= 0 && reflink) {
    struct file_clone_range r {};
    r.src_fd = in;
    r.src_length = 4096;
    n = ::ioctl(out, FICLONERANGE, &r) == 0 ? 4096 : -1;
  } else if (in >= 0 && out >= 0) {
    n = ::copy_file_range(in, nullptr, out, nullptr, 4096, 0);
  }
  if (in >= 0) ::close(in);
  if (out >= 0) ::close(out);
  fs::remove(a);
  fs::remove(b);
  return n == 4096;
}

// Extents shared with the image file (--host-copy reflink, where the host
// file system can: the test's temporary directory decides), copied from it
// (copy_file_range) and read through the device give the same bytes, which are the bytes the recipe
// put in the blocks: fragmented files (one-block extents interleaved with
// another file's), an extent crossing from the inode into a direct node,
// holes, a mapped zero block, a tail block holding bytes past the end of
// the file, inline data. host_copied_bytes counts exactly the mapped blocks
// inside the files' sizes (hand-counted below) when the host shares or
// copies, and nothing with --host-copy off.
// The extents image: /frag and /other (fragmented, a hole, a zero block,
// a tail block with bytes past the end of the file), /cross (an extent
// from the inode into a direct node), /long (one extent of 400 blocks),
// /inl (inline data). Fills `want`
// with each file's expected contents and returns the mapped blocks inside
// the files' sizes, both from what the recipe wrote.
std::uint64_t craft_extents(const fs::path& img, std::map<std::string, std::string>& want) {
  std::uint64_t mapped = 0;
  {
    auto dev = format_file(img, 256ull << 20, kFeatures);
    Recipe r(*dev);
    const std::uint32_t api = kDefAddrsPerInode - extra_isize_for_features(kFeatures) / 4 - kDefaultInlineXattrAddrs;
    // /frag and /other: blocks 0..15 of each interleaved on disk; /frag then
    // has blocks 16..31 contiguous, a hole at 32..39, a zero block at 40,
    // blocks 41..63 contiguous, and block 64 holding 123 bytes of the file
    // and non-zero bytes past its end.
    const nid_t frag = r.nid(), other = r.nid();
    Node fr = r.inode(frag, 0100644, 64ull * 4096 + 123, 1), ot = r.inode(other, 0100600, 16ull * 4096, 1);
    r.name(fr, "frag", kRootIno);
    r.name(ot, "other", kRootIno);
    std::string f(64ull * 4096 + 123, '\0'), o;
    for (std::uint32_t i = 0; i < 16; ++i) {
      r.addr(fr, i, r.data(block_pattern(1, i)));
      f.replace(i * 4096ull, 4096, block_pattern(1, i));
      r.addr(ot, i, r.data(block_pattern(2, i)));
      o += block_pattern(2, i);
    }
    for (std::uint32_t i = 16; i < 65; ++i) {
      if (i >= 32 && i < 40) continue;
      const std::string b = i == 40 ? std::string() : block_pattern(1, i);
      r.addr(fr, i, r.data(b));
      if (i < 64) f.replace(i * 4096ull, 4096, i == 40 ? std::string(4096, '\0') : b);
      else f.replace(i * 4096ull, 123, b.substr(0, 123));
    }
    fr.i.i_blocks.set(1 + 16 + 16 + 24 + 1);
    r.put(fr);
    r.link_root("frag", frag, FileType::reg_file);
    ot.i.i_blocks.set(17);
    r.put(ot);
    r.link_root("other", other, FileType::reg_file);
    want["frag"] = f;
    want["other"] = o;
    mapped += 57 + 16;
    // /cross: a hole, then four contiguous blocks, two in the inode's last
    // addresses and two at the start of its first direct node.
    const nid_t cross = r.nid();
    Node cr = r.inode(cross, 0100644, (api + 2ull) * 4096, 1);
    r.name(cr, "cross", kRootIno);
    std::string c((api + 2ull) * 4096, '\0');
    std::vector<block_t> blks;
    for (std::uint32_t i = 0; i < 4; ++i) {
      blks.push_back(r.data(block_pattern(3, i)));
      c.replace((api - 2ull + i) * 4096, 4096, block_pattern(3, i));
    }
    r.addr(cr, api - 2, blks[0]);
    r.addr(cr, api - 1, blks[1]);
    cr.i.i_nid[0].set(r.direct(cross, 1, {{0, blks[2]}, {1, blks[3]}}));
    cr.i.i_blocks.set(6);
    r.put(cr);
    r.link_root("cross", cross, FileType::reg_file);
    want["cross"] = c;
    mapped += 4;
    // /long: 400 contiguous blocks, more than one 1 MiB read of the device
    // (the recipe's data segment holds 512 blocks: 77 used above).
    const nid_t lng = r.nid();
    Node lo = r.inode(lng, 0100644, 400ull * 4096, 1);
    r.name(lo, "long", kRootIno);
    std::string l;
    for (std::uint32_t i = 0; i < 400; ++i) {
      r.addr(lo, i, r.data(block_pattern(4, i)));
      l += block_pattern(4, i);
    }
    lo.i.i_blocks.set(401);
    r.put(lo);
    r.link_root("long", lng, FileType::reg_file);
    want["long"] = l;
    mapped += 400;
    // /inl: inline data, never copied from the image file.
    const nid_t inl = r.nid();
    Node in = r.inode(inl, 0100644, 11, 1);
    r.name(in, "inl", kRootIno);
    r.inline_data(in, "inline data");
    r.put(in);
    r.link_root("inl", inl, FileType::reg_file);
    want["inl"] = "inline data";
  }
  return mapped;
}

TEST(Dump, ExtractionCopiesExtentsFromTheImageFileAsTheyAreMapped) {
  f2fstest::TempDir t;
  const auto img = t / "x.img";
  std::map<std::string, std::string> want;  // name -> expected contents
  const std::uint64_t mapped = craft_extents(img, want);
  const bool reflinks = host_copies_files(t.path(), true), copies = host_copies_files(t.path(), false);
  for (const std::string mode : {"reflink", "copy", "off"}) {
    SCOPED_TRACE("--host-copy " + mode);
    const auto out = t / ("out-" + mode);
    auto r = dump(q(img) + " --json extract --host-copy " + mode + " / " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = Json::parse(r.output);
    EXPECT_TRUE(rep["problems"].empty()) << rep.dump(2);
    EXPECT_EQ(rep["files"], want.size());
    const bool taken = mode == "reflink" ? reflinks : mode == "copy" ? copies : false;
    EXPECT_EQ(rep["host_copied_bytes"], taken ? mapped * 4096 : 0u);
    for (const auto& [name, contents] : want) {
      const std::string got = slurp(out / name);
      ASSERT_EQ(got.size(), contents.size()) << name;
      const auto diff = std::mismatch(got.begin(), got.end(), contents.begin()).first - got.begin();
      EXPECT_TRUE(got == contents) << name << ": first difference at byte " << diff;
    }
    // Unmapped blocks are holes either way: at most the mapped blocks hold space.
    EXPECT_LE(lstat_of(out / "cross").st.st_blocks * 512, 4 * 4096 + 4096);
  }
  if (!copies) GTEST_SKIP() << "copy_file_range does not copy files here; only the read path ran";
  RecordProperty("reflink", reflinks ? "shared" : "not supported by the temporary directory's file system");
}

// The read path through an asynchronous backend (io_uring where the
// kernel has it): several reads in flight, completed in any order, each
// written at its own offset, give the recipe's bytes.
TEST(Dump, ExtractionReadsThroughTheAsynchronousBackend) {
  f2fstest::TempDir t;
  const auto img = t / "x.img";
  std::map<std::string, std::string> want;
  craft_extents(img, want);
  OpenOptions oo;
  oo.read_only = true;
  auto opened = open_device(img.string(), oo);
  ASSERT_TRUE(opened) << opened.error().to_string();
  RecordProperty("backend", std::string(backend_name(opened->backend)));
  auto vol = Volume::open(*opened->device);
  ASSERT_TRUE(vol) << vol.error().to_string();
  for (const auto mode : {inspect::HostCopy::off, inspect::HostCopy::reflink}) {
    const auto out = t / (mode == inspect::HostCopy::off ? "out-off" : "out-reflink");
    inspect::ExtractOptions o;
    o.host_copy = mode;
    auto rep = inspect::extract(**vol, "/", out.string(), o);
    ASSERT_TRUE(rep) << rep.error().to_string();
    EXPECT_TRUE(rep->problems.empty());
    EXPECT_EQ(rep->files, want.size());
    if (mode == inspect::HostCopy::off) EXPECT_EQ(rep->host_copied_bytes, 0u);
    for (const auto& [name, contents] : want) EXPECT_TRUE(slurp(out / name) == contents) << name;
  }
}

// Compressed files (Linux 6.1's lzo, lz4, zstd and lzo-rle clusters) are
// extracted through the reader, never copied as the blocks they are stored
// in: every extracted file equals what Volume::read gives for it (the
// reader LinuxCompressed checks against what Linux wrote), and
// host_copied_bytes stays 0 with --host-copy copy (every file of that
// image is compressed).
TEST(Dump, CompressedFilesExtractAsTheReaderReadsThem) {
  auto img = f2fstest::unzstd(f2fstest::data_dir() / "linux61-compress.img.zst");
  if (!img) GTEST_SKIP() << "zstd is not available to unpack the fixture";
  f2fstest::TempDir t;
  const auto out = t / "out";
  // copy_file_range copies on every Linux file system, so a compressed
  // file wrongly taken from the image file would show here.
  auto r = dump(q(*img) + " --json extract --host-copy copy / " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Json rep = Json::parse(r.output);
  EXPECT_TRUE(rep["problems"].empty()) << rep.dump(2);
  EXPECT_EQ(rep["host_copied_bytes"], 0u);
  auto dev = f2fstest::load_image(*img);
  auto vol = Volume::open(*dev);
  ASSERT_TRUE(vol);
  int files = 0, compressed = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), out).string();
    SCOPED_TRACE(rel);
    auto in = (*vol)->resolve("/" + rel);
    ASSERT_TRUE(in);
    compressed += in->is_compressed() ? 1 : 0;
    std::vector<std::uint8_t> buf(in->size + 1);
    auto n = (*vol)->read(*in, 0, buf);
    ASSERT_TRUE(n);
    ASSERT_EQ(*n, in->size);
    const std::string got = slurp(e.path());
    EXPECT_TRUE(got == std::string(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*n)));
    ++files;
  }
  EXPECT_GE(files, 50);
  EXPECT_EQ(compressed, files);
}

// extract --progress FD: e2fsck -C lines, pass 1, non-decreasing, the last
// one complete; none on stdout.
TEST(Dump, ExtractProgressLines) {
  f2fstest::TempDir t;
  const auto img = t / "c.img";
  craft(img);
  const auto out = t / "out";
  const auto log = t / "progress";
  auto r = dump(q(img) + " extract --progress 3 / " + q(out) + " 3>" + q(log));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(" 0 "), std::string::npos) << r.output;
  std::ifstream in(log);
  std::string line, last;
  unsigned long long prev = 0, max0 = 0;
  int lines = 0;
  while (std::getline(in, line)) {
    unsigned pass = 0;
    unsigned long long cur = 0, max = 0;
    char dev[4096] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "%u %llu %llu %4095s", &pass, &cur, &max, dev), 4) << line;
    EXPECT_EQ(pass, 1u) << line;
    if (lines++ == 0) {
      EXPECT_EQ(cur, 0u) << line;
      max0 = max;
    }
    EXPECT_EQ(max, max0) << line;
    EXPECT_GE(cur, prev) << line;
    EXPECT_EQ(std::string(dev), img.string()) << line;
    prev = cur;
    last = line;
  }
  EXPECT_GE(lines, 2);
  EXPECT_EQ(last, "1 " + std::to_string(max0) + " " + std::to_string(max0) + " " + img.string());
}

TEST(Dump, ExtractionRefusesHostileNamesAndNeverFollowsSymlinks) {
  f2fstest::TempDir t;
  const auto img = t / "h.img";
  const auto outside = t / "outside";
  fs::create_directory(outside);
  {
    auto dev = format_file(img, 128ull << 20, feature::extra_attr | feature::flexible_inline_xattr);
    Recipe r(*dev);
    const nid_t f = r.nid();
    Node fn = r.inode(f, 0100644, 5, 1);
    r.inline_data(fn, "pwned");
    r.put(fn);
    r.link_root("a/b", f, FileType::reg_file);
    r.link_root("..", f, FileType::reg_file);  // a second ".."
    r.link_root("ok", f, FileType::reg_file);
    // "esc" twice: a symlink to a host directory, and a directory holding a
    // file. Whatever the order, nothing may land in `outside`.
    const nid_t s = r.nid();
    Node sn = r.inode(s, 0120777, outside.string().size(), 1);
    r.inline_data(sn, outside.string());
    r.put(sn);
    r.link_root("esc", s, FileType::symlink);
    const nid_t d = r.nid();
    Node dn = r.inode(d, 040755, 3488, 2);
    r.link_inline(dn, "pwned", f, FileType::reg_file);
    r.put(dn);
    r.link_root("esc", d, FileType::dir);
  }
  const auto out = t / "out";
  auto r = dump(q(img) + " --json extract / " + q(out));
  EXPECT_EQ(r.exit_code, 1) << r.output;  // refused entries are failures
  Json rep = Json::parse(r.output, nullptr, false);
  ASSERT_FALSE(rep.is_discarded()) << r.output;
  bool slash = false, dotdot = false;
  for (const auto& p : rep["problems"]) {
    slash = slash || p.get<std::string>().find("/a/b: refused") != std::string::npos;
    dotdot = dotdot || p.get<std::string>().find("name \"..\"") != std::string::npos;
  }
  EXPECT_TRUE(slash) << rep.dump(2);
  EXPECT_TRUE(dotdot) << rep.dump(2);
  EXPECT_TRUE(fs::is_empty(outside)) << "extraction wrote through a symlink";
  EXPECT_FALSE(fs::exists(out / "a"));
  EXPECT_EQ(slurp(out / "ok"), "pwned");
}

TEST(Dump, SharedImagesExtractAsLinuxReadsThem) {
  auto dir = f2fstest::shared_images_dir();
  if (!dir) {
    if (f2fstest::required("SHARED")) FAIL() << "../shared/images is missing";
    GTEST_SKIP() << "../shared/images is not present";
  }
  int images = 0;
  for (const auto& si : f2fstest::shared_syzkaller_images(*dir)) {
    SCOPED_TRACE(si.stem);
    auto img = f2fstest::unzstd(si.image_zst);
    ASSERT_TRUE(img);
    f2fstest::TempDir t;
    const auto out = t / "out";
    auto r = dump(q(*img) + " --json extract / " + q(out));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Json rep = Json::parse(r.output, nullptr, false);
    ASSERT_FALSE(rep.is_discarded());
    EXPECT_EQ(rep["xattrs_unsupported"], 0u);
    std::vector<std::string> got;
    host_manifest(out, out, got);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, si.manifest);
    // Times and owners as in the inodes.
    auto dev = f2fstest::load_image(*img);
    auto vol = Volume::open(*dev);
    ASSERT_TRUE(vol);
    for (const auto& l : si.manifest) {
      if (l.rfind("F|", 0) != 0) continue;
      const std::string rel = l.substr(2, l.find('|', 2) - 2);
      auto in = (*vol)->resolve("/" + rel);
      ASSERT_TRUE(in) << rel;
      const auto st = lstat_of(out / rel);
      ASSERT_TRUE(st.ok) << rel;
      EXPECT_EQ(static_cast<std::uint64_t>(st.st.st_mtim.tv_sec), in->raw.i.i_mtime.get()) << rel;
      EXPECT_EQ(static_cast<std::uint32_t>(st.st.st_mtim.tv_nsec), in->raw.i.i_mtime_nsec.get()) << rel;
      if (::geteuid() == 0) EXPECT_EQ(st.st.st_uid, in->uid) << rel;
    }
    // Every view runs and every JSON form parses.
    for (const char* c : {"info", "sb", "cp", "nat 0~-1", "sit 0~-1", "ssa 0~-1", "inode 3", "ls -lR", "map", "space"}) {
      auto j = dump(q(*img) + " --json " + c);
      EXPECT_EQ(j.exit_code, 0) << c;
      EXPECT_FALSE(Json::parse(j.output, nullptr, false).is_discarded()) << c;
    }
    ++images;
  }
  EXPECT_EQ(images, 16);
}

TEST(Dump, UsageErrorsExitTwo) {
  f2fstest::TempDir t;
  const auto img = t / "u.img";
  format_file(img, 64ull << 20, 0);
  EXPECT_EQ(dump("").exit_code, 2);
  EXPECT_EQ(dump(q(img)).exit_code, 2);                    // no command
  EXPECT_EQ(dump(q(img) + " frobnicate").exit_code, 2);    // unknown command
  EXPECT_EQ(dump(q(img) + " nat").exit_code, 2);           // missing range
  EXPECT_EQ(dump(q(img) + " nat x~y").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " sit 5~2").exit_code, 2);       // end before start
  EXPECT_EQ(dump(q(img) + " block nine").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " block 0x100000000").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " ls --bogus").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " extract /").exit_code, 2);     // missing destination
  EXPECT_EQ(dump(q(img) + " nat 99999999").exit_code, 2);  // past the NAT
  EXPECT_EQ(dump("--help").exit_code, 0);
  auto help = dump("--help");
  EXPECT_NE(help.output.find("Exit status"), std::string::npos);
  EXPECT_EQ(dump("--version").exit_code, 0);
  // Failures, not usage errors: a missing path, a directory to cat.
  EXPECT_EQ(dump(q(img) + " inode /missing").exit_code, 1);
  EXPECT_EQ(dump(q(img) + " cat /").exit_code, 1);
  EXPECT_EQ(dump(q(t / "no-such.img") + " sb").exit_code, 1);
}

TEST(Dump, BlockPastTheVolumeIsAUsageErrorAsSit) {
  f2fstest::TempDir t;
  const auto img = t / "b.img";
  format_file(img, 64ull << 20, 0);
  // 64 MiB hold blocks 0 to 16383: 16384 is past the device, so past the
  // main area; a segment past the main area exits 2 too.
  auto b = dump(q(img) + " block 16384", true);
  EXPECT_EQ(b.exit_code, 2) << b.output;
  EXPECT_NE(b.output.find("block 16384 is past the main area"), std::string::npos) << b.output;
  EXPECT_EQ(dump(q(img) + " --json block 0xffffffff").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " sit 99999").exit_code, 2);
  EXPECT_EQ(dump(q(img) + " block 0").exit_code, 0);  // superblock copy 0
}

TEST(Dump, ForeignFileSystemNamed) {
  if (f2fstest::run("command -v mkfs.ext4").exit_code != 0) GTEST_SKIP() << "mkfs.ext4 not installed";
  f2fstest::TempDir t;
  const auto img = t / "ext.img";
  f2fstest::make_sparse_file(img, 32ull << 20);
  ASSERT_EQ(f2fstest::run("mkfs.ext4 -q -F " + q(img) + " >/dev/null 2>&1").exit_code, 0);
  for (const char* c : {"info", "sb", "ls /"}) {
    auto r = dump(q(img) + " " + c, true);
    EXPECT_EQ(r.exit_code, 1) << c;
    EXPECT_NE(r.output.find("holds a file system of another kind (ext4), not F2FS"), std::string::npos)
        << c << ": " << r.output;
    EXPECT_EQ(r.output.find("corrupt"), std::string::npos) << c << ": " << r.output;
  }
}

TEST(Dump, ExtractNamesTheHostPathAndTheOsErrorOnce) {
  f2fstest::TempDir t;
  const auto img = t / "e.img";
  craft(img);
  // A directory where /sparse goes on the host: the problem names that path.
  fs::create_directories(t / "dest" / "sparse");
  auto r = dump(q(img) + " extract /sparse " + q(t / "dest"), true);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find((t / "dest" / "sparse").string() + ": a directory is in the way (extracting /sparse)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Extracted "), std::string::npos) << r.output;
  // A missing parent: the OS's text once.
  auto m = dump(q(img) + " extract /sparse " + q(t / "no" / "such"), true);
  EXPECT_EQ(m.exit_code, 1);
  const auto first = m.output.find("No such file or directory");
  ASSERT_NE(first, std::string::npos) << m.output;
  EXPECT_EQ(m.output.find("No such file or directory", first + 1), std::string::npos) << m.output;
  // Success: the line names the destination.
  auto ok = dump(q(img) + " extract /sparse " + q(t / "copy"), true);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("Extracted /sparse to " + (t / "copy").string() + ": 1 files"), std::string::npos)
      << ok.output;
}

TEST(Dump, DamagedImagesFailWithTheStructureNamed) {
  f2fstest::TempDir t;
  const auto img = t / "d.img";
  Crafted c;
  c = craft(img);
  auto patch = [&](std::uint64_t offset, const std::vector<std::uint8_t>& bytes) {
    auto dev = open_posix_device(img.string(), OpenOptions{});
    ASSERT_TRUE(dev);
    std::vector<std::uint8_t> b(4096);
    const std::uint64_t blk = offset / 4096 * 4096;
    ASSERT_TRUE(read_at(**dev, blk, b));
    std::memcpy(b.data() + offset % 4096, bytes.data(), bytes.size());
    ASSERT_TRUE(write_at(**dev, blk, b));
  };
  // A corrupt inode (checksum mismatch): the inode view fails naming it,
  // ls -l lists the rest and exits 1.
  auto in = dump_json(img.string(), "inode /sparse");
  const std::uint64_t node_blk = in["node_blkaddr"].get<std::uint64_t>();
  patch(node_blk * 4096 + 100, {0xEE});
  auto bad = dump(q(img) + " inode /sparse", true);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("inode " + std::to_string(c.sparse) + " (block " + std::to_string(node_blk) + ")"),
            std::string::npos)
      << bad.output;
  auto ls = dump(q(img) + " ls -l /", true);
  EXPECT_EQ(ls.exit_code, 1);
  EXPECT_NE(ls.output.find("hl1"), std::string::npos);
  EXPECT_NE(ls.output.find("checksum"), std::string::npos) << ls.output;
  auto ex = dump(q(img) + " extract / " + q(t / "x"), true);
  EXPECT_EQ(ex.exit_code, 1);
  EXPECT_TRUE(fs::exists(t / "x" / "hl1"));
  // No success line for an extraction that lost an entry: the line names
  // the destination and says it is incomplete.
  EXPECT_EQ(ex.output.find("Extracted "), std::string::npos) << ex.output;
  EXPECT_NE(ex.output.find("Extraction of / to " + (t / "x").string() + " incomplete: 1 entry not extracted"),
            std::string::npos)
      << ex.output;
  // Superblock #0 zeroed: the volume opens from copy 1 and says so; each
  // copy can be shown as stored.
  patch(1024, std::vector<std::uint8_t>(64, 0));
  Json info = dump_json(img.string(), "info");
  EXPECT_EQ(info["superblock_copy"], 1);
  ASSERT_FALSE(info["warnings"].empty());
  EXPECT_NE(info["warnings"][0].get<std::string>().find("superblock #0: magic"), std::string::npos) << info.dump(1);
  auto sb0 = dump(q(img) + " sb --copy 0", true);
  EXPECT_EQ(sb0.exit_code, 1);
  EXPECT_NE(sb0.output.find("magic                         \t\t[0x       0 : 0]"), std::string::npos) << sb0.output;
  EXPECT_EQ(dump_json(img.string(), "sb --copy 1")["magic"], 0xF2F52010u);
  // Both checkpoint packs broken: the checkpoint is named; sb still shows
  // the superblock.
  patch(512ull * 4096 + 8, {1, 2, 3, 4});
  patch(1024ull * 4096 + 8, {1, 2, 3, 4});
  auto cp = dump(q(img) + " sb", true);
  EXPECT_EQ(cp.exit_code, 1);
  EXPECT_NE(cp.output.find("no valid checkpoint"), std::string::npos) << cp.output;
  EXPECT_NE(cp.output.find("(block 512)"), std::string::npos) << cp.output;
  EXPECT_NE(cp.output.find("main_blkaddr"), std::string::npos) << cp.output;
  // Both superblocks zeroed: the superblocks are named, with the address.
  patch(4096 + 1024, std::vector<std::uint8_t>(64, 0));
  auto sb = dump(q(img) + " info", true);
  EXPECT_EQ(sb.exit_code, 1);
  EXPECT_NE(sb.output.find("superblock #0: magic"), std::string::npos) << sb.output;
  EXPECT_NE(sb.output.find("at byte 1024"), std::string::npos) << sb.output;
}

TEST(Dump, DamagedImagesNeverCrashOrHangTheTool) {
  // Seeded random damage to the metadata areas and the crafted files' node
  // and data segments, a garbage NAT block and a truncated image: every
  // command must end with 0 or 1 (sanitizer reports: 98/99, signals: -1).
  f2fstest::TempDir t;
  const auto pristine = t / "p.img";
  craft(pristine);
  const std::string env = "ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=98 ";
  const std::vector<std::string> cmds = {"info", "sb", "cp", "nat 0~-1", "sit 0~-1", "ssa 0~-1", "space",
                                         "ls -lR /", "map", "inode 4", "inode /dir", "block 64000", "block 64512",
                                         "cat /sparse", "extract / " + q(t / "x")};
  auto check_all = [&](const fs::path& img, const std::string& what) {
    for (const auto& c : cmds) {
      for (const char* fmt : {"", " --json"}) {
        fs::remove_all(t / "x");
        auto r = f2fstest::run(env + kDump + " " + q(img) + fmt + " " + c + " >/dev/null");
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << what << ": " << c << fmt << " exited " << r.exit_code
                                                          << "\n" << r.output.substr(0, 2000);
      }
    }
  };
  std::mt19937 rng(20261129);
  const std::string base = slurp(pristine);
  const auto img = t / "d.img";
  for (int round = 0; round < 8; ++round) {
    std::string b = base;
    const int flips = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < flips; ++k) {
      std::uint64_t off;
      switch (rng() % 3) {
        case 0: off = rng() % (4096ull * 4096); break;                     // SB, CP, SIT, NAT, SSA
        case 1: off = 4096ull * 4096 + rng() % (4096ull * 3 * 512); break;  // the first main segments
        default: off = 64000ull * 4096 + rng() % (4096ull * 530); break;   // the crafted files
      }
      b[off] = static_cast<char>(b[off] ^ (1 << (rng() % 8)));
    }
    std::ofstream(img, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
    check_all(img, "round " + std::to_string(round));
  }
  {  // NAT block 0, both copies, full of 0xff.
    std::string b = base;
    Json sb = dump_json(pristine.string(), "sb");
    const std::uint64_t nat = sb["nat_blkaddr"].get<std::uint64_t>();
    for (std::uint64_t copy : {0ull, 512ull}) std::fill_n(b.begin() + static_cast<std::ptrdiff_t>((nat + copy) * 4096), 4096, '\xff');
    std::ofstream(img, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
    check_all(img, "garbage NAT");
  }
  {  // Truncated to 40 MiB.
    std::ofstream(img, std::ios::binary | std::ios::trunc).write(base.data(), 40 << 20);
    check_all(img, "truncated");
  }
}

TEST(Dump, LibraryParsesRangesAndNumbers) {
  using inspect::parse_range;
  auto r = parse_range("0x10~0x20");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 16u);
  EXPECT_EQ(r->last, 32u);
  r = parse_range("7");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 7u);
  EXPECT_EQ(r->last, 7u);
  r = parse_range("3~-1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->last, ~std::uint64_t{0});
  EXPECT_FALSE(parse_range("~3"));
  EXPECT_FALSE(parse_range("3~2"));
  EXPECT_FALSE(inspect::parse_number("99999999999999999999"));
  EXPECT_EQ(inspect::checkpoint_flag_names(0x185),
            (std::vector<std::string>{"trimmed", "nat_bits", "compacted_summary", "unmount"}));
  EXPECT_EQ(inspect::checkpoint_flag_names(0x4).back(), "sudden-power-off");
  EXPECT_EQ(inspect::mode_string(0104755), "-rwsr-xr-x");
  EXPECT_EQ(inspect::mode_string(041777), "drwxrwxrwt");
}

// Every error line carries the tool's name (CLI11's parse errors included),
// an unknown command is named as one, and under --json a failure or a
// usage error prints the object {"device", "error", "exit_code"} on stdout.
TEST(Dump, ErrorsNameTheToolAndPrintJson) {
  f2fstest::TempDir t;
  const auto img = t / "e.img";
  format_file(img, 64ull << 20, 0);
  auto r = f2fstest::run(kDump + " " + q(img) + " bogus 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("f2fscore-dump: unknown command \"bogus\" (commands: info, sb,", 0), 0u) << r.output;
  r = f2fstest::run(kDump + " " + q(img) + " ls --frob 2>&1 >/dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("f2fscore-dump: ", 0), 0u) << r.output;
  struct Case {
    std::string args;
    int code;
  };
  for (const Case& c : {Case{"cat /missing", 1}, Case{"bogus", 2}, Case{"inode /nowhere", 1}, Case{"block nine", 2}}) {
    r = dump("--json " + q(img) + " " + c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args;
    nlohmann::json doc;
    ASSERT_NO_THROW(doc = nlohmann::json::parse(r.output)) << c.args << ": " << r.output;
    EXPECT_EQ(doc["exit_code"], c.code) << c.args;
    EXPECT_EQ(doc["device"], img.string()) << c.args;
    EXPECT_TRUE(doc["error"].is_string()) << c.args;
  }
}
