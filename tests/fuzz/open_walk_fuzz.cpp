// libFuzzer target on the open-and-walk path: the input patches one of a
// few small valid images (support/rich_image.hpp: our mkfs with a file of
// every kind written in), which then is opened and walked
// (support/volume_walk.hpp). Patching a valid image rather than taking the
// input as the image lets short inputs reach deep code: the checkpoint,
// NAT, node trees, dentries and xattrs. With the re-seal bit the checksums
// the patch broke are recomputed, so damage gets past them.
//
// Input:
//   byte 0   flags: bit 0 re-seal checksums; bits 1-2 template (checksums,
//            plain, large NAT bitmap, compression);
//            bit 3 truncate: the next 2 bytes (LE) give the device size in
//            4 KiB blocks (mod the image's); bit 4: render the dump tool's
//            views (f2fscore::inspect) too, bit 5: as JSON rather than text
//   records, until the input ends (a short last record is cut):
//     op & 3 == 0  XOR:   u8 block (index among the template's non-zero
//                         blocks), u16 offset (mod 4096), u8 len, len bytes
//     op & 3 == 1  SET:   same layout; the bytes replace the block's
//     op & 3 == 2  LE32:  u8 block, u16 offset (mod 4093), u32 value
//     op & 3 == 3  ANY:   u16 block (any block of the device), u16 offset,
//                         u8 len, len bytes written there
// The walk is support/volume_walk.hpp's: every directory, file, link and
// xattr, lookups, NAT/SIT/SSA queries, and with bit 4 the dump tool's views.
// A crash, a sanitizer report, a runaway loop (past the read budget), an
// allocation past -malloc_limit_mb, a timeout, or an error whose message
// does not name the structure and the place, is a finding.
//
// F2FSCORE_FUZZ_WRITE_SEEDS=<dir>: write a seed corpus (the pristine
// templates, and a no-op patch aimed at each of their non-zero blocks)
// to <dir> and exit; scripts/fuzz.sh does this before each run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/volume_walk.hpp"

namespace {

using f2fstest::SparseImage;

struct Template {
  SparseImage img;
  std::vector<std::uint64_t> blocks;  // the non-zero blocks, in order
};

std::vector<Template>& templates() {
  static std::vector<Template>* t = [] {
    using namespace f2fscore::disk;
    auto* v = new std::vector<Template>();
    const f2fstest::RichImageOptions specs[] = {
        {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr | feature::sb_checksum |
             feature::lost_found | feature::quota_ino | feature::inode_crtime,
         false, false, 64ull << 20},
        {0, false, false, 64ull << 20},
        {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr, true, true, 128ull << 20},
        {feature::extra_attr | feature::compression | feature::inode_checksum | feature::flexible_inline_xattr |
             feature::sb_checksum,
         false, false, 64ull << 20},
    };
    for (const auto& s : specs) {
      auto r = f2fstest::build_rich_image(s);
      if (!r.error.empty()) {
        std::fprintf(stderr, "open_walk_fuzz: cannot build a template: %s\n", r.error.c_str());
        std::abort();
      }
      Template t;
      t.img = std::move(r.img);
      for (const auto& [b, data] : t.img.blocks) t.blocks.push_back(b);
      v->push_back(std::move(t));
    }
    return v;
  }();
  return *t;
}

struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  bool get(std::size_t k, std::uint64_t& out) {
    if (n < k) return false;
    out = 0;
    for (std::size_t i = 0; i < k; ++i) out |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    p += k;
    n -= k;
    return true;
  }
};

void write_seeds(const char* dir) {
  int count = 0;
  auto put = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ++count;
  };
  for (std::uint8_t t = 0; t < templates().size(); ++t) {
    const std::uint8_t flags = static_cast<std::uint8_t>(t << 1 | 1);
    put("t" + std::to_string(t) + "-pristine", {flags});
    put("t" + std::to_string(t) + "-tool-views", {static_cast<std::uint8_t>(flags | 0x10)});
    const auto& bl = templates()[t].blocks;
    for (std::size_t i = 0; i < bl.size() && i < 256; ++i) {
      // A no-op XOR of 16 bytes at the start of the block and at the end
      // (node footers, i_nid), for mutations to turn into damage.
      std::vector<std::uint8_t> s = {flags, 0, static_cast<std::uint8_t>(i), 0, 0, 16};
      s.resize(s.size() + 16, 0);
      for (std::uint8_t b : {std::uint8_t{0}, static_cast<std::uint8_t>(i), std::uint8_t{0xB0}, std::uint8_t{0x0F}, std::uint8_t{40}})
        s.push_back(b);
      s.resize(s.size() + 40, 0);
      char name[64];
      std::snprintf(name, sizeof name, "t%u-block%llu", t, static_cast<unsigned long long>(bl[i]));
      put(name, s);
    }
  }
  std::fprintf(stderr, "open_walk_fuzz: wrote %d seeds to %s\n", count, dir);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  templates();
  if (const char* dir = std::getenv("F2FSCORE_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t flags = data[0];
  const Template& t = templates()[((flags >> 1) & 3) % templates().size()];
  Reader in{data + 1, size - 1};
  std::uint64_t truncate_to = ~0ull;
  if (flags & 8) {
    std::uint64_t blocks = 0;
    if (!in.get(2, blocks)) return 0;
    truncate_to = blocks % t.img.block_count() * f2fscore::disk::kBlockSize;
  }
  SparseImage img = t.img;
  std::vector<std::uint64_t> touched;
  for (std::uint64_t op = 0; in.get(1, op);) {
    std::uint64_t blk = 0, off = 0, len = 0, value = 0;
    const unsigned kind = op & 3;
    if (kind == 3) {
      if (!in.get(2, blk)) break;
      blk %= img.block_count();
    } else {
      if (!in.get(1, blk)) break;
      blk = t.blocks[blk % t.blocks.size()];
    }
    if (!in.get(2, off)) break;
    if (kind == 2) {
      if (!in.get(4, value)) break;
      f2fscore::store_le32(img.at(blk), off % (f2fscore::disk::kBlockSize - 3), static_cast<std::uint32_t>(value));
    } else {
      if (!in.get(1, len)) break;
      off %= f2fscore::disk::kBlockSize;
      len = std::min<std::uint64_t>({len, in.n, f2fscore::disk::kBlockSize - off});
      std::uint8_t* p = img.at(blk) + off;
      for (std::uint64_t i = 0; i < len; ++i) p[i] = kind == 0 ? static_cast<std::uint8_t>(p[i] ^ in.p[i]) : in.p[i];
      in.p += len;
      in.n -= len;
    }
    touched.push_back(blk);
  }
  if (flags & 1)
    for (std::uint64_t b : touched) f2fstest::reseal_block(img, b);

  auto dev = img.to_device(truncate_to);
  f2fstest::BudgetDevice bd(*dev, 100000);
  f2fstest::WalkLimits lim;
  lim.max_inodes = 128;
  lim.nat_scan = 128;
  lim.max_bytes_per_file = 16 * 1024;
  lim.max_segments = 64;
  lim.max_resolves = 8;
  lim.max_lookups_per_dir = 4;
  lim.tool_inodes = (flags & 0x10) ? 8 : 0;
  lim.tool_format = (flags & 0x20) ? 1 : 0;
  const auto r = f2fstest::walk_volume(bd, lim);
  if (bd.budget_exceeded()) {
    std::fprintf(stderr, "open_walk_fuzz: more than 100000 device requests: a runaway loop\n");
    std::abort();
  }
  for (const auto& e : r.errors) {
    const std::string why = f2fstest::error_problem(e.error);
    if (!why.empty()) {
      std::fprintf(stderr, "open_walk_fuzz: %s: %s: %s\n", why.c_str(), e.op.c_str(), e.error.to_string().c_str());
      std::abort();
    }
  }
  return 0;
}
