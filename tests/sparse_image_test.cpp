// open_sparse_image(): sparse files built here byte by byte after the
// format of libsparse's sparse_format.h; the expected image bytes are
// written out by hand beside each.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "f2fscore/cow_device.hpp"
#include "f2fscore/sparse_image.hpp"

namespace f2fscore {
namespace {

struct SparseBuilder {
  std::vector<std::uint8_t> b;
  std::uint32_t chunks = 0, blocks = 0;
  std::uint32_t blk_sz;
  std::uint16_t file_hdr_sz, chunk_hdr_sz;

  explicit SparseBuilder(std::uint32_t bs = 4096, std::uint16_t fh = 28, std::uint16_t ch = 12)
      : blk_sz(bs), file_hdr_sz(fh), chunk_hdr_sz(ch) {
    b.resize(fh);
  }
  void put16(std::size_t at, std::uint16_t v) {
    b[at] = static_cast<std::uint8_t>(v);
    b[at + 1] = static_cast<std::uint8_t>(v >> 8);
  }
  void put32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  std::size_t header(std::uint16_t type, std::uint32_t nblocks, std::uint32_t total) {
    const std::size_t at = b.size();
    b.resize(at + chunk_hdr_sz);
    put16(at, type);
    put32(at + 4, nblocks);
    put32(at + 8, total);
    ++chunks;
    if (type != 0xcac4) blocks += nblocks;
    return at;
  }
  void raw(const std::vector<std::uint8_t>& data) {
    const auto n = static_cast<std::uint32_t>(data.size() / blk_sz);
    header(0xcac1, n, chunk_hdr_sz + static_cast<std::uint32_t>(data.size()));
    b.insert(b.end(), data.begin(), data.end());
  }
  void fill(std::uint32_t n, std::uint32_t value) {
    header(0xcac2, n, chunk_hdr_sz + 4u);
    const std::size_t at = b.size();
    b.resize(at + 4);
    put32(at, value);
  }
  void dont_care(std::uint32_t n) { header(0xcac3, n, chunk_hdr_sz); }
  void crc() {
    header(0xcac4, 0, chunk_hdr_sz + 4u);
    b.resize(b.size() + 4);
  }
  // The finished file, padded with zeroes to a multiple of 512 bytes.
  std::vector<std::uint8_t> finish(std::uint32_t total_blks = ~0u, std::uint32_t total_chunks = ~0u) {
    put32(0, kSparseMagic);
    put16(4, 1);
    put16(6, 0);
    put16(8, file_hdr_sz);
    put16(10, chunk_hdr_sz);
    put32(12, blk_sz);
    put32(16, total_blks == ~0u ? blocks : total_blks);
    put32(20, total_chunks == ~0u ? chunks : total_chunks);
    std::vector<std::uint8_t> out = b;
    out.resize((out.size() + 511) / 512 * 512);
    return out;
  }
};

std::unique_ptr<BlockDevice> file_of(const std::vector<std::uint8_t>& bytes) {
  auto dev = CowDevice::memory(bytes.size(), 512, "test.simg");
  EXPECT_TRUE(dev);
  EXPECT_TRUE(write_at(**dev, 0, bytes));
  return std::unique_ptr<BlockDevice>(std::move(*dev));
}

Result<std::unique_ptr<BlockDevice>> open_bytes(const std::vector<std::uint8_t>& bytes) {
  return open_sparse_image(file_of(bytes));
}

std::vector<std::uint8_t> read_all(BlockDevice& d) {
  std::vector<std::uint8_t> out(d.info().size_bytes);
  EXPECT_TRUE(read_at(d, 0, out));
  return out;
}

TEST(SparseImage, ChunksReadAsTheImageTheyDescribe) {
  // Blocks: 0-1 raw (bytes i % 251), 2 fill 0x04030201, 3-5 don't care,
  // a CRC32 chunk, 6 raw (0xab).
  SparseBuilder sb;
  std::vector<std::uint8_t> raw(2 * 4096);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i % 251);
  sb.raw(raw);
  sb.fill(1, 0x04030201);
  sb.dont_care(3);
  sb.crc();
  sb.raw(std::vector<std::uint8_t>(4096, 0xab));
  auto file = sb.finish();
  auto f = file_of(file);
  auto is = is_sparse_image(*f);
  ASSERT_TRUE(is);
  EXPECT_TRUE(*is);
  auto d = open_sparse_image(std::move(f));
  ASSERT_TRUE(d) << d.error().message;
  ASSERT_EQ((*d)->info().size_bytes, 7u * 4096);
  EXPECT_TRUE((*d)->info().read_only);
  EXPECT_EQ((*d)->host_descriptor(), -1);
  std::vector<std::uint8_t> want(7 * 4096, 0);
  std::memcpy(want.data(), raw.data(), raw.size());
  for (std::size_t i = 0; i < 4096; i += 4) {  // little-endian 0x04030201
    want[2 * 4096 + i] = 1;
    want[2 * 4096 + i + 1] = 2;
    want[2 * 4096 + i + 2] = 3;
    want[2 * 4096 + i + 3] = 4;
  }
  std::memset(want.data() + 6 * 4096, 0xab, 4096);
  EXPECT_EQ(read_all(**d), want);
  // A read across raw, fill and don't care at an odd sector.
  std::vector<std::uint8_t> part(3 * 4096);
  ASSERT_TRUE(read_at(**d, 4096 + 512, part));
  EXPECT_TRUE(std::equal(part.begin(), part.end(), want.begin() + 4096 + 512));
  // The don't-care blocks are a hole, the rest data.
  EXPECT_EQ((*d)->next_hole(0, 7 * 4096), 3u * 4096);
  EXPECT_EQ((*d)->next_data(3 * 4096, 7 * 4096), 6u * 4096);
  EXPECT_EQ((*d)->next_data(4 * 4096 + 100, 5 * 4096), 5u * 4096);
  // Nothing writes.
  EXPECT_EQ(write_at(**d, 0, std::vector<std::uint8_t>(512, 1)).error().code, Errc::read_only);
}

TEST(SparseImage, LargerHeadersAndSmallBlocks) {
  // file_hdr_sz 32 and chunk_hdr_sz 16 (extra bytes skipped), blk_sz 1024.
  SparseBuilder sb(1024, 32, 16);
  sb.dont_care(2);
  sb.fill(1, 0xffffffff);
  sb.raw(std::vector<std::uint8_t>(1024, 7));
  auto d = open_bytes(sb.finish());
  ASSERT_TRUE(d) << d.error().message;
  std::vector<std::uint8_t> want(4 * 1024, 0);
  std::memset(want.data() + 2048, 0xff, 1024);
  std::memset(want.data() + 3072, 7, 1024);
  EXPECT_EQ(read_all(**d), want);
}

TEST(SparseImage, NotSparse) {
  auto f = file_of(std::vector<std::uint8_t>(4096, 0));
  auto is = is_sparse_image(*f);
  ASSERT_TRUE(is);
  EXPECT_FALSE(*is);
  auto d = open_sparse_image(std::move(f));
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::corrupt);
  EXPECT_NE(d.error().message.find("no sparse magic"), std::string::npos);
}

void expect_corrupt(const std::vector<std::uint8_t>& file, const std::string& words) {
  auto d = open_bytes(file);
  ASSERT_FALSE(d) << "accepted; expected: " << words;
  EXPECT_EQ(d.error().code, Errc::corrupt);
  EXPECT_NE(d.error().message.find(words), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("test.simg: Android sparse image"), std::string::npos) << d.error().message;
}

TEST(SparseImage, DamageIsNamed) {
  auto good = [] {
    SparseBuilder sb;
    sb.raw(std::vector<std::uint8_t>(4096, 1));
    sb.dont_care(2);
    return sb;
  };
  {
    auto f = good().finish();
    f[4] = 2;  // major version
    expect_corrupt(f, "major version 2, not 1");
  }
  {
    auto f = good().finish();
    f[8] = 20;  // file_hdr_sz
    expect_corrupt(f, "header sizes 20/12 below 28/12");
  }
  {
    auto f = good().finish();
    f[12] = 6;  // blk_sz 4102
    expect_corrupt(f, "block size 4102 is not a positive multiple of 4");
  }
  {
    auto f = good().finish();
    f[28] = 0x99;  // the first chunk's type 0xca99
    expect_corrupt(f, "chunk 0 (file byte 28): unknown chunk type 0xca99");
  }
  {
    auto f = good().finish();
    f[36] = 0;  // the first chunk's total_sz 4108 -> 4096
    expect_corrupt(f, "chunk 0 (file byte 28): 4096 bytes, its type and 1 blocks make 4108");
  }
  expect_corrupt(good().finish(2), "blocks 1+2 past the image's 2");
  expect_corrupt(good().finish(5), "the chunks cover 3 blocks of 5");
  // total_chunks 3: the third header is read from the zero padding.
  expect_corrupt(good().finish(~0u, 3), "chunk 2 (file byte 4148): unknown chunk type 0x0000");
  {
    SparseBuilder sb;
    sb.raw(std::vector<std::uint8_t>(3 * 4096, 1));
    auto f = sb.finish();
    f.resize(4096);  // cut inside the raw data
    expect_corrupt(f, "the file ends inside chunk 0");
  }
}

}  // namespace
}  // namespace f2fscore
