// The input format shared by the libFuzzer targets (open_walk_fuzz.cpp,
// fsck_fuzz.cpp): a patch of one of a few small valid images
// (support/rich_image.hpp), so that short inputs reach deep code.
//
// Input:
//   byte 0   flags: bit 0 re-seal checksums; bits 1-2 template (checksums,
//            plain, large NAT bitmap, compression);
//            bit 3 truncate: the next 2 bytes (LE) give the device size in
//            4 KiB blocks (mod the image's); bits 4-5: for the target
//   records, until the input ends (a short last record is cut):
//     op & 3 == 0  XOR:   u8 block (index among the template's non-zero
//                         blocks), u16 offset (mod 4096), u8 len, len bytes
//     op & 3 == 1  SET:   same layout; the bytes replace the block's
//     op & 3 == 2  LE32:  u8 block, u16 offset (mod 4093), u32 value
//     op & 3 == 3  ANY:   u16 block (any block of the device), u16 offset,
//                         u8 len, len bytes written there
// F2FSCORE_FUZZ_WRITE_SEEDS=<dir>: write_seeds() writes a seed corpus (the
// pristine templates, and a no-op patch aimed at each of their non-zero
// blocks) to <dir>.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"

namespace f2fsfuzz {

using f2fstest::SparseImage;

struct Template {
  SparseImage img;
  std::vector<std::uint64_t> blocks;  // the non-zero blocks, in order
};

inline std::vector<Template>& templates() {
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
        std::fprintf(stderr, "fuzz: cannot build a template: %s\n", r.error.c_str());
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

inline void write_seeds(const char* dir) {
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
  std::fprintf(stderr, "fuzz: wrote %d seeds to %s\n", count, dir);
}


/// Applies `data` to its template: the damaged image as a memory device,
/// and the flags byte. nullptr for an empty or cut-short input.
inline std::unique_ptr<f2fscore::BlockDevice> patched_device(const std::uint8_t* data, std::size_t size,
                                                             std::uint8_t* flags_out) {
  if (size == 0) return nullptr;
  const std::uint8_t flags = data[0];
  *flags_out = flags;
  const Template& t = templates()[((flags >> 1) & 3) % templates().size()];
  Reader in{data + 1, size - 1};
  std::uint64_t truncate_to = ~0ull;
  if (flags & 8) {
    std::uint64_t blocks = 0;
    if (!in.get(2, blocks)) return nullptr;
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
  return img.to_device(truncate_to);
}

}  // namespace f2fsfuzz
