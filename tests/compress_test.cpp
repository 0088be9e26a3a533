// Compressed clusters: decompress_cluster() with every codec (round trips
// through the libraries' compressors), our LZO1X / lzo-rle decoder (vectors
// made by hand from the format, clusters Linux compressed, random input),
// and whole files Linux 6.1 wrote compressed with lzo, lz4, zstd and lzo-rle
// (tests/data/linux61-compress.img.zst, made by make_linux61_compress.sh)
// read back through Volume::read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "f2fscore/checksum.hpp"
#include "f2fscore/volume.hpp"
#include "reader/lzo_rle.hpp"
#include "support/test_support.hpp"
#include "reader/volume_internal.hpp"

#ifndef F2FSCORE_WITH_LZ4
#define F2FSCORE_WITH_LZ4 0
#endif
#ifndef F2FSCORE_WITH_ZSTD
#define F2FSCORE_WITH_ZSTD 0
#endif
#ifndef F2FSCORE_WITH_LZO
#define F2FSCORE_WITH_LZO 0
#endif
#if F2FSCORE_WITH_LZ4
#include <lz4.h>
#include <lz4hc.h>
#endif
#if F2FSCORE_WITH_ZSTD
#include <zstd.h>
#endif
#if F2FSCORE_WITH_LZO
#include <lzo/lzo1x.h>
#endif

using namespace f2fscore;
using namespace f2fscore::disk;
using Bytes = std::vector<std::uint8_t>;

namespace {

enum : std::uint8_t { kLzo = 0, kLz4 = 1, kZstd = 2, kLzoRle = 3 };
constexpr bool kBuilt[4] = {F2FSCORE_WITH_LZO != 0, F2FSCORE_WITH_LZ4 != 0, F2FSCORE_WITH_ZSTD != 0, true};
constexpr const char* kAlgName[4] = {"lzo", "lz4", "zstd", "lzo-rle"};

std::uint32_t cluster_crc(const Bytes& cdata) { return f2fs_crc32(0xF2F52010u, cdata.data(), cdata.size()); }

void put_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The blocks of a compressed cluster: struct compress_data then zeroes up
// to a whole number of 4 KiB blocks, as f2fs_compress_pages() leaves them.
Bytes cluster_blocks(const Bytes& cdata, std::uint32_t chksum) {
  Bytes b((24 + cdata.size() + kBlockSize - 1) / kBlockSize * kBlockSize, 0);
  put_le32(b.data(), static_cast<std::uint32_t>(cdata.size()));
  put_le32(b.data() + 4, chksum);
  std::copy(cdata.begin(), cdata.end(), b.begin() + 24);
  return b;
}

// gtool's re-creatable pattern (../shared/oracle/guest-tool.c).
std::uint8_t pattern_byte(std::uint64_t seed, std::uint64_t pos) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + (pos >> 3) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<std::uint8_t>(x >> ((pos & 7) * 8));
}

void append_seq(Bytes& b, std::uint64_t n) {
  for (std::uint64_t i = 1; i <= n; ++i) {
    const std::string s = std::to_string(i) + "\n";
    b.insert(b.end(), s.begin(), s.end());
  }
}

// Cluster-shaped test data of `size` bytes.
enum class Kind { zeros, text, mixed, random };
Bytes sample(Kind kind, std::size_t size, std::uint64_t seed) {
  Bytes b;
  std::mt19937_64 rng(seed);
  switch (kind) {
    case Kind::zeros: b.assign(size, 0); break;
    case Kind::text:
      append_seq(b, size / 4 + seed);
      b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(b.size() - size));
      break;
    case Kind::random:
      for (std::size_t i = 0; i < size; ++i) b.push_back(pattern_byte(seed, i));
      break;
    case Kind::mixed:
      // Text, zero runs of every length class, repeats at many distances,
      // incompressible stretches.
      while (b.size() < size) {
        switch (rng() % 5) {
          case 0: append_seq(b, rng() % 200 + 1); break;
          case 1: b.insert(b.end(), rng() % 3000 + 1, 0); break;
          case 2: {
            const std::size_t len = rng() % 64 + 1, k = rng() % 40 + 1;
            for (std::size_t j = 0; j < len * k; ++j) b.push_back(pattern_byte(seed + 1, j % len));
            break;
          }
          case 3:
            for (std::size_t j = rng() % 700; j > 0; --j) b.push_back(static_cast<std::uint8_t>(rng()));
            break;
          default:
            if (b.size() > 16) {
              const std::size_t from = rng() % b.size(), len = std::min<std::size_t>(rng() % 300 + 3, b.size() - from);
              for (std::size_t j = 0; j < len; ++j) b.push_back(b[from + j]);
            }
        }
      }
      b.resize(size);
      break;
  }
  return b;
}

// The compressors of the libraries, at several settings each.
std::vector<Bytes> compress_all(std::uint8_t alg, const Bytes& in) {
  std::vector<Bytes> out;
#if F2FSCORE_WITH_LZ4
  if (alg == kLz4) {
    Bytes c(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(c.data()),
                                       static_cast<int>(in.size()), static_cast<int>(c.size()));
    EXPECT_GT(n, 0);
    out.emplace_back(c.begin(), c.begin() + n);
    const int h = LZ4_compress_HC(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(c.data()),
                                  static_cast<int>(in.size()), static_cast<int>(c.size()), 9);
    EXPECT_GT(h, 0);
    out.emplace_back(c.begin(), c.begin() + h);
  }
#endif
#if F2FSCORE_WITH_ZSTD
  if (alg == kZstd) {
    for (int level : {1, 3, 19}) {
      Bytes c(ZSTD_compressBound(in.size()));
      const std::size_t n = ZSTD_compress(c.data(), c.size(), in.data(), in.size(), level);
      EXPECT_FALSE(ZSTD_isError(n));
      out.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    }
  }
#endif
#if F2FSCORE_WITH_LZO
  if (alg == kLzo) {
    EXPECT_EQ(lzo_init(), LZO_E_OK);
    Bytes c(in.size() + in.size() / 16 + 64 + 3);
    Bytes wrk(LZO1X_999_MEM_COMPRESS);
    lzo_uint n = c.size();
    EXPECT_EQ(lzo1x_1_compress(in.data(), in.size(), c.data(), &n, wrk.data()), LZO_E_OK);
    out.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    n = c.size();
    EXPECT_EQ(lzo1x_999_compress(in.data(), in.size(), c.data(), &n, wrk.data()), LZO_E_OK);
    out.emplace_back(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
  }
#endif
  (void)alg, (void)in;
  return out;
}

Status decompress(std::uint8_t alg, const Bytes& blocks, Bytes& out, std::size_t* produced = nullptr) {
  std::size_t p = 0;
  auto st = decompress_cluster(alg, blocks, out, &p);
  if (produced) *produced = p;
  EXPECT_LE(p, out.size());
  return st;
}

Bytes bytes(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<std::uint8_t>(x));
  return b;
}

}  // namespace

// --- decompress_cluster: round trips ----------------------------------------

TEST(CompressCluster, RoundTripsThroughTheLibraryCompressors) {
  int trips = 0;
  for (std::uint8_t alg : {kLzo, kLz4, kZstd}) {
    if (!kBuilt[alg]) continue;
    SCOPED_TRACE(kAlgName[alg]);
    for (std::uint32_t log : {2u, 4u, 8u}) {
      const std::size_t size = std::size_t{kBlockSize} << log;
      for (Kind kind : {Kind::zeros, Kind::text, Kind::mixed, Kind::random}) {
        const Bytes data = sample(kind, size, log * 7 + static_cast<unsigned>(kind));
        for (const Bytes& c : compress_all(alg, data)) {
          for (bool with_chksum : {false, true}) {
            const Bytes blocks = cluster_blocks(c, with_chksum ? cluster_crc(c) : 0);
            Bytes out(size, 0xAA);
            std::size_t produced = 0;
            auto st = decompress(alg, blocks, out, &produced);
            ASSERT_TRUE(st) << "log " << log << " kind " << static_cast<int>(kind) << ": " << st.error().to_string();
            EXPECT_EQ(produced, size);
            ASSERT_TRUE(out == data) << "log " << log << " kind " << static_cast<int>(kind);
            ++trips;
          }
        }
      }
    }
  }
  if (trips == 0) GTEST_SKIP() << "no codec library built in (cross build)";
}

TEST(CompressCluster, OurDecoderReadsLibLzoStreamsAsLibLzoDoes) {
#if F2FSCORE_WITH_LZO
  for (std::uint32_t log : {2u, 5u, 8u}) {
    const std::size_t size = std::size_t{kBlockSize} << log;
    for (Kind kind : {Kind::zeros, Kind::text, Kind::mixed, Kind::random}) {
      const Bytes data = sample(kind, size, log + 100);
      for (const Bytes& c : compress_all(kLzo, data)) {
        Bytes out(size);
        const auto r = lzo::decompress(c, out);
        ASSERT_EQ(r.status, lzo::Status::ok) << lzo::status_name(r.status) << " log " << log;
        EXPECT_EQ(r.version, 0);
        EXPECT_EQ(r.produced, size);
        EXPECT_TRUE(out == data);
        // The same stream through the lzo-rle algorithm (the kernel decodes
        // both with one decoder).
        Bytes out2(size);
        ASSERT_TRUE(decompress(kLzoRle, cluster_blocks(c, 0), out2));
        EXPECT_TRUE(out2 == data);
      }
    }
  }
#else
  GTEST_SKIP() << "built without liblzo2";
#endif
}

// --- decompress_cluster: what is wrong, named -------------------------------

TEST(CompressCluster, RejectsABadHeaderNamingIt) {
  Bytes out(16384);
  for (std::uint8_t alg : {kLzo, kLz4, kZstd, kLzoRle}) {
    auto none = decompress(alg, Bytes{}, out);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, Errc::corrupt);
    EXPECT_NE(none.error().message.find("no compressed block"), std::string::npos) << none.error().message;

    Bytes blocks(3 * kBlockSize, 0);
    put_le32(blocks.data(), 70000);
    auto big = decompress(alg, blocks, out);
    ASSERT_FALSE(big);
    EXPECT_EQ(big.error().code, Errc::corrupt);
    EXPECT_NE(big.error().message.find("clen 70000 exceeds the 3 compressed blocks"), std::string::npos)
        << big.error().message;
    // The largest clen that fits is accepted as far as the header goes.
    put_le32(blocks.data(), 3 * kBlockSize - 24 + 1);
    EXPECT_NE(decompress(alg, blocks, out).error().message.find("exceeds"), std::string::npos);
    put_le32(blocks.data(), 3 * kBlockSize - 24);
    EXPECT_EQ(decompress(alg, blocks, out).error().message.find("exceeds"), std::string::npos);
  }
  auto unknown = decompress(4, cluster_blocks(Bytes(10, 1), 0), out);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Errc::corrupt);
  EXPECT_NE(unknown.error().message.find("i_compress_algorithm 4"), std::string::npos);
}

TEST(CompressCluster, CompiledOutCodecsAreUnsupportedNotCorrupt) {
  Bytes out(16384);
  int checked = 0;
  for (std::uint8_t alg : {kLzo, kLz4, kZstd}) {
    if (kBuilt[alg]) continue;
    auto st = decompress(alg, cluster_blocks(Bytes(100, 7), 0), out);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, Errc::unsupported);
    EXPECT_NE(st.error().message.find(std::string(kAlgName[alg]) + " compression is not built into"), std::string::npos)
        << st.error().message;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "every codec is built in";
}

// An lzo-rle stream of `total` bytes: one literal 'L' (a stream cannot start
// with a run: a first byte above 17 is a literal count), then zero runs of
// 2048 (L = 4, X = 255: ((255 << 3) | 4) + 4) and a last one of 4..2051.
Bytes zero_cluster(std::size_t total) {
  Bytes b = bytes({0x11, 0x01, 18, 'L'});
  std::size_t rest = total - 1;
  for (; rest > 2051; rest -= 2048) b.insert(b.end(), {0x1C, 0xFC, 0xFF, 0xFF});
  const std::size_t r = rest - 4;
  b.insert(b.end(), {static_cast<std::uint8_t>(0x18 | (r & 7)), 0xFC, 0xFF, static_cast<std::uint8_t>(r >> 3)});
  b.insert(b.end(), {0x11, 0x00, 0x00});
  return b;
}

TEST(CompressCluster, ShortOutputAndBadChecksumAreErrors) {
  // The cluster's 16 KiB as only 8 KiB.
  const Bytes half = zero_cluster(8192);
  Bytes out(16384);
  auto st = decompress(kLzoRle, cluster_blocks(half, 0), out);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("lzo-rle: clen " + std::to_string(half.size()) +
                                    " decompresses to 8192 bytes, not the cluster's 16384"),
            std::string::npos)
      << st.error().message;
  // Right size, then the checksum.
  const Bytes full = zero_cluster(16384);
  ASSERT_TRUE(decompress(kLzoRle, cluster_blocks(full, 0), out));
  EXPECT_EQ(out[0], 'L');
  EXPECT_TRUE(std::all_of(out.begin() + 1, out.end(), [](std::uint8_t b) { return b == 0; }));
  ASSERT_TRUE(decompress(kLzoRle, cluster_blocks(full, cluster_crc(full)), out));
  auto bad = decompress(kLzoRle, cluster_blocks(full, cluster_crc(full) ^ 1), out);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::corrupt);
  EXPECT_NE(bad.error().message.find("checksum"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("does not match the crc32"), std::string::npos) << bad.error().message;
  // Too much output.
  Bytes small(8192 - 1);
  auto over = decompress(kLzoRle, cluster_blocks(half, 0), small);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("lzo-rle: corrupt input (output overrun"), std::string::npos)
      << over.error().message;
}

TEST(CompressCluster, CorruptInputNamesTheCodec) {
  Bytes out(16384);
  for (std::uint8_t alg : {kLzo, kLz4, kZstd, kLzoRle}) {
    if (!kBuilt[alg]) continue;
    const Bytes junk(300, 0xFF);
    auto st = decompress(alg, cluster_blocks(junk, 0), out);
    ASSERT_FALSE(st) << kAlgName[alg];
    EXPECT_EQ(st.error().code, Errc::corrupt);
    EXPECT_EQ(st.error().message.rfind(std::string(kAlgName[alg]) + ": ", 0), 0u) << st.error().message;
    // With a checksum that does not match either, both are named.
    auto both = decompress(alg, cluster_blocks(junk, 0x12345678), out);
    ASSERT_FALSE(both);
    EXPECT_NE(both.error().message.find("checksum 0x12345678"), std::string::npos) << both.error().message;
  }
}

// --- the lzo-rle decoder: vectors from the format description --------------

namespace {
struct Vector {
  const char* what;
  Bytes in;
  Bytes want;  // expected output when ok
  lzo::Status status;
  std::uint8_t version;
};

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const auto& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}
Bytes str(const char* s) { return Bytes(s, s + std::strlen(s)); }

std::vector<Vector> vectors() {
  const Bytes v1 = bytes({0x11, 0x01});
  const Bytes end = bytes({0x11, 0x00, 0x00});
  std::vector<Vector> v;
  // 21 = 17 + 4: four literals; 0x1A FC FF 01: zero run L=2, X=1 ->
  // ((1 << 3) | 2) + 4 = 14 zeroes, no trailing literal.
  v.push_back({"literals then a zero run", cat({v1, bytes({21}), str("ABCD"), bytes({0x1A, 0xFC, 0xFF, 0x01}), end}),
               cat({str("ABCD"), Bytes(14, 0)}), lzo::Status::ok, 1});
  // The run's distance field carries 1 trailing literal (S = 1).
  v.push_back({"zero run with a trailing literal",
               cat({v1, bytes({21}), str("ABCD"), bytes({0x19, 0xFD, 0xFF, 0x00}), str("x"), end}),
               cat({str("ABCD"), Bytes(5, 0), str("x")}), lzo::Status::ok, 1});
  // The longest run: L = 7, X = 255 -> 2047 + 4 (after one literal: a
  // first byte above 17 counts literals).
  v.push_back({"longest zero run", cat({v1, bytes({18}), str("L"), bytes({0x1F, 0xFC, 0xFF, 0xFF}), end}),
               cat({str("L"), Bytes(2051, 0)}), lzo::Status::ok, 1});
  // A run, then a match reaching back into it and over literals.
  v.push_back({"match over a run",
               cat({v1, bytes({18}), str("L"), bytes({0x18, 0xFE, 0xFF, 0x00}), str("ab"),
                    // M2 1LLDDDSS: length 5+3 = 8, distance (H<<3)+D+1 = 6.
                    bytes({0x80 | (3 << 5) | (5 << 2), 0x00}), end}),
               cat({str("L"), Bytes(4, 0), str("ab"), Bytes(4, 0), str("ab"), Bytes(2, 0)}), lzo::Status::ok, 1});
  // Overlapping copy: distance 4, length 8.
  v.push_back({"overlapping match", cat({v1, bytes({21}), str("abcd"), bytes({0xEC, 0x00}), end}), str("abcdabcdabcd"),
               lzo::Status::ok, 1});
  // Version 0 (no header): the same bytes are an M4 match 49151 back.
  v.push_back({"no zero runs in version 0", cat({bytes({21}), str("ABCD"), bytes({0x1A, 0xFC, 0xFF, 0x01}), end}), {},
               lzo::Status::lookbehind_overrun, 0});
  // The header needs 5 bytes; "11 00 00" alone is an empty version-0 stream.
  v.push_back({"empty, version 1", cat({v1, end}), {}, lzo::Status::ok, 1});
  v.push_back({"empty, version 0", end, {}, lzo::Status::ok, 0});
  // End marker with length 4 instead of 3.
  v.push_back({"bad end marker", cat({v1, bytes({21}), str("ABCD"), bytes({0x12, 0x00, 0x00})}), {},
               lzo::Status::bad_end_marker, 1});
  v.push_back({"bytes after the end", cat({v1, bytes({21}), str("ABCD"), end, bytes({0})}), {},
               lzo::Status::input_not_consumed, 1});
  // 0000LLLL with L = 0 after state 0: 15 + 255 * zeros + next + 3 literals.
  {
    Bytes lit(15 + 255 + 2 + 3, 'q');
    v.push_back({"extended literal run",
                 cat({v1, bytes({18}), str("L"), bytes({0x1A, 0xFC, 0xFF, 0x01}), bytes({0x00, 0x00, 0x02}), lit, end}),
                 cat({str("L"), Bytes(14, 0), lit}), lzo::Status::ok, 1});
  }
  // M3 001LLLLL with extended length: 31 + 255 + 1 + 2 bytes, distance 1.
  v.push_back({"extended M3", cat({v1, bytes({18}), str("z"), bytes({0x20, 0x00, 0x01, 0x00, 0x00}), end}),
               Bytes(1 + 31 + 255 + 1 + 2, 'z'), lzo::Status::ok, 1});
  // A match before any output.
  // A match before any output (a first byte above 17 would be literals).
  v.push_back({"match before output", cat({v1, bytes({0x11, 0x04, 0x00}), end}), {}, lzo::Status::lookbehind_overrun, 1});
  v.push_back({"too short", bytes({0x11, 0x00}), {}, lzo::Status::input_overrun, 0});
  return v;
}
}  // namespace

TEST(LzoRle, HandMadeVectors) {
  for (const auto& v : vectors()) {
    SCOPED_TRACE(v.what);
    Bytes out(4096, 0xEE);
    const auto r = lzo::decompress(v.in, out);
    EXPECT_EQ(r.status, v.status) << lzo::status_name(r.status);
    if (v.status == lzo::Status::ok) {
      EXPECT_EQ(r.version, v.version);
      ASSERT_EQ(r.produced, v.want.size());
      EXPECT_TRUE(std::equal(v.want.begin(), v.want.end(), out.begin()));
      EXPECT_EQ(r.consumed, v.in.size());
      // Exactly enough room works, one byte less overruns (when there is output).
      Bytes exact(v.want.size());
      EXPECT_EQ(lzo::decompress(v.in, exact).status, lzo::Status::ok);
      if (!v.want.empty()) {
        Bytes tight(v.want.size() - 1);
        EXPECT_EQ(lzo::decompress(v.in, tight).status, lzo::Status::output_overrun);
      }
      // Every strict prefix fails, none reads past its end (ASan).
      for (std::size_t n = 0; n < v.in.size(); ++n) {
        Bytes cut(v.in.begin(), v.in.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_NE(lzo::decompress(cut, out).status, lzo::Status::ok) << "prefix " << n;
      }
    }
  }
}

// --- fuzzing: garbage never crashes, and version-0 streams agree with liblzo2

namespace {
std::vector<Bytes> seed_streams() {
  std::vector<Bytes> s;
  for (const auto& v : vectors()) s.push_back(v.in);
#if F2FSCORE_WITH_LZO
  for (Kind kind : {Kind::text, Kind::mixed})
    for (const Bytes& c : compress_all(kLzo, sample(kind, 16384, 5))) s.push_back(c);
#endif
  return s;
}

// F2FSCORE_FUZZ_SCALE=N runs the fuzz tests N times longer (with new seeds).
int fuzz_scale() {
  const char* e = std::getenv("F2FSCORE_FUZZ_SCALE");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 1;
}

void mutate(Bytes& b, std::mt19937_64& rng) {
  const int edits = static_cast<int>(rng() % 4) + 1;
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 5) {
      case 0:
        if (!b.empty()) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!b.empty()) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
        break;
      case 2:
        if (!b.empty()) b.resize(rng() % b.size());
        break;
      case 3: b.insert(b.begin() + static_cast<std::ptrdiff_t>(b.empty() ? 0 : rng() % b.size()), static_cast<std::uint8_t>(rng())); break;
      default:
        if (b.size() > 2) b.erase(b.begin() + static_cast<std::ptrdiff_t>(rng() % b.size()));
    }
  }
}
}  // namespace

TEST(LzoRle, FuzzedInputNeverCrashes) {
  std::mt19937_64 rng(20240601 + static_cast<unsigned>(fuzz_scale()));
  const auto seeds = seed_streams();
  Bytes out(65536);
  int ok = 0;
  for (int i = 0; i < 60000 * fuzz_scale(); ++i) {
    Bytes in;
    if (i % 3 == 0) {
      in.resize(rng() % 400);
      for (auto& b : in) b = static_cast<std::uint8_t>(rng());
      if (in.size() >= 2 && rng() % 2) in[0] = 0x11, in[1] = 0x01;
    } else {
      in = seeds[rng() % seeds.size()];
      mutate(in, rng);
    }
    const std::size_t cap = rng() % 4 == 0 ? rng() % 64 : out.size();
    const auto r = lzo::decompress(in, std::span<std::uint8_t>(out.data(), cap));
    ASSERT_LE(r.produced, cap);
    ASSERT_LE(r.consumed, in.size());
    if (r.status == lzo::Status::ok) ++ok;
#if F2FSCORE_WITH_LZO
    // Version-0 streams: liblzo2 must agree whenever both accept.
    if (r.status == lzo::Status::ok && r.version == 0 && cap == out.size()) {
      Bytes ref(cap);
      lzo_uint n = ref.size();
      if (lzo1x_decompress_safe(in.data(), in.size(), ref.data(), &n, nullptr) == LZO_E_OK) {
        ASSERT_EQ(n, r.produced) << "input " << i;
        ASSERT_TRUE(std::equal(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(n), out.begin())) << "input " << i;
      }
    }
#endif
  }
  EXPECT_GT(ok, 0);
}

TEST(CompressCluster, FuzzedClustersNeverCrash) {
  std::mt19937_64 rng(7 + static_cast<unsigned>(fuzz_scale()));
  std::vector<Bytes> seeds;
  for (std::uint8_t alg : {kLzo, kLz4, kZstd})
    for (const Bytes& c : compress_all(alg, sample(Kind::mixed, 16384, 9))) seeds.push_back(c);
  for (const auto& v : vectors()) seeds.push_back(v.in);
  Bytes out(16384);
  for (int i = 0; i < 20000 * fuzz_scale(); ++i) {
    const auto alg = static_cast<std::uint8_t>(rng() % 4);
    Bytes c = seeds[rng() % seeds.size()];
    mutate(c, rng);
    Bytes blocks = cluster_blocks(c, rng() % 2 ? cluster_crc(c) : 0);
    if (rng() % 8 == 0) put_le32(blocks.data(), static_cast<std::uint32_t>(rng()));
    std::size_t produced = 0;
    auto st = decompress_cluster(alg, blocks, out, &produced);
    ASSERT_LE(produced, out.size());
    if (!st) ASSERT_FALSE(st.error().message.empty());
  }
}

// --- files Linux 6.1 wrote compressed ---------------------------------------

namespace {

struct MountSpec {
  std::string dir;
  std::uint8_t algorithm = 0;
  std::uint32_t log_cluster = 2;
  bool chksum = false;
  std::uint32_t level = 0;
};
struct FileSpec {
  std::string path;  // "dir/name"
  MountSpec mount;
  Bytes content;
  std::string steps;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// Builds the file as the recipe's steps did in the guest.
Bytes make_content(const std::string& steps) {
  Bytes b;
  for (const auto& step : split(steps, ';')) {
    std::istringstream in(step);
    std::string op;
    in >> op;
    if (op == "seq") {
      std::uint64_t n = 0;
      in >> n;
      append_seq(b, n);
    } else if (op == "zero") {
      std::size_t n = 0;
      in >> n;
      b.insert(b.end(), n, 0);
    } else if (op == "rand" || op == "rep") {
      std::uint64_t len = 0, seed = 0, k = 1;
      in >> len >> seed;
      if (op == "rep") in >> k;
      for (std::uint64_t r = 0; r < k; ++r)
        for (std::uint64_t i = 0; i < len; ++i) b.push_back(pattern_byte(seed, i));
    } else if (op == "poke") {
      std::size_t off = 0;
      std::string text;
      in >> off >> text;
      if (b.size() < off + text.size()) b.resize(off + text.size());
      std::copy(text.begin(), text.end(), b.begin() + static_cast<std::ptrdiff_t>(off));
    } else if (op == "truncate") {
      std::size_t n = 0;
      in >> n;
      b.resize(n);
    } else if (op != "sync") {
      ADD_FAILURE() << "unknown recipe step " << step;
    }
  }
  return b;
}

MountSpec parse_mount(const std::string& dir, const std::string& opts) {
  MountSpec m;
  m.dir = dir;
  for (const auto& o : split(opts, ',')) {
    if (o.rfind("compress_algorithm=", 0) == 0) {
      auto a = o.substr(19);
      if (auto colon = a.find(':'); colon != std::string::npos) {
        m.level = static_cast<std::uint32_t>(std::stoul(a.substr(colon + 1)));
        a.resize(colon);
      }
      for (std::uint8_t i = 0; i < 4; ++i)
        if (a == kAlgName[i]) m.algorithm = i;
    } else if (o.rfind("compress_log_size=", 0) == 0) {
      m.log_cluster = static_cast<std::uint32_t>(std::stoul(o.substr(18)));
    } else if (o == "compress_chksum") {
      m.chksum = true;
    }
  }
  // A bare "zstd" mounts with zstd's default level, 1, and Linux 6.1 stores it.
  if (m.algorithm == kZstd && m.level == 0) m.level = 1;
  return m;
}

std::vector<FileSpec> read_recipe(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<MountSpec> mounts;
  std::vector<std::pair<std::string, std::string>> files;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string kind, a;
    ls >> kind >> a;
    std::string rest;
    std::getline(ls, rest);
    rest.erase(0, rest.find_first_not_of(' '));
    if (kind == "mount") mounts.push_back(parse_mount(a, rest));
    if (kind == "file") files.emplace_back(a, rest);
  }
  std::vector<FileSpec> out;
  for (const auto& m : mounts)
    for (const auto& [path, steps] : files) {
      const auto slash = path.find('/');
      const std::string d = path.substr(0, slash), name = path.substr(slash + 1);
      if (d == "*" || d == m.dir) out.push_back({m.dir + "/" + name, m, make_content(steps), steps});
    }
  return out;
}

class LinuxCompressed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    files_ = new std::vector<FileSpec>(read_recipe(f2fstest::data_dir() / "linux61-compress.recipe"));
    auto img = f2fstest::unzstd(f2fstest::data_dir() / "linux61-compress.img.zst");
    if (img) dev_ = f2fstest::load_image(*img).release();
  }
  static void TearDownTestSuite() {
    delete dev_;
    delete files_;
    dev_ = nullptr;
    files_ = nullptr;
  }
  void SetUp() override {
    if (!dev_) GTEST_SKIP() << "zstd is not available to unpack the fixture";
    ASSERT_GE(files_->size(), 50u);
    auto v = Volume::open(*dev_);
    ASSERT_OK(v);
    vol_ = std::move(*v);
  }

  // The blocks of cluster `c` when it is compressed, else empty.
  Bytes compressed_cluster(const InodeInfo& in, std::uint64_t c) {
    Bytes data;
    auto head = vol_->map_block(in, c * in.cluster_blocks);
    EXPECT_TRUE(head);
    if (!head || *head != kCompressAddr) return data;
    for (std::uint32_t k = 1; k < in.cluster_blocks; ++k) {
      auto a = vol_->map_block(in, c * in.cluster_blocks + k);
      EXPECT_TRUE(a);
      if (!a || *a == kNullAddr || *a == kNewAddr) break;
      Bytes blk(kBlockSize);
      EXPECT_TRUE(vol_->read_block(*a, blk));
      data.insert(data.end(), blk.begin(), blk.end());
    }
    return data;
  }

  static BlockDevice* dev_;
  static std::vector<FileSpec>* files_;
  std::unique_ptr<Volume> vol_;
};
BlockDevice* LinuxCompressed::dev_ = nullptr;
std::vector<FileSpec>* LinuxCompressed::files_ = nullptr;

bool expect_compressed_clusters(const FileSpec& f) {
  const std::string name = f.path.substr(f.path.find('/') + 1);
  if (name == "tiny") return false;                        // one partial cluster: never compressed
  if (f.mount.log_cluster == 8) return name == "big";      // the only file with a full 1 MiB cluster
  return true;
}

}  // namespace

TEST_F(LinuxCompressed, EveryFileReadsBackAsLinuxWroteIt) {
  int compressed_clusters[4] = {};
  for (const auto& f : *files_) {
    SCOPED_TRACE(f.path + ": " + f.steps);
    auto in = vol_->resolve("/" + f.path);
    ASSERT_OK(in);
    ASSERT_TRUE(in->is_compressed());
    const auto& x = in->raw.i.extra;
    EXPECT_EQ(x.i_compress_algorithm, f.mount.algorithm);
    EXPECT_EQ(x.i_log_cluster_size, f.mount.log_cluster);
    EXPECT_EQ(in->cluster_blocks, 1u << f.mount.log_cluster);
    EXPECT_EQ(x.i_compress_flag.get() & 1, f.mount.chksum ? 1 : 0);
    EXPECT_EQ(x.i_compress_flag.get() >> 8, f.mount.level);
    ASSERT_EQ(in->size, f.content.size());

    // The clusters Linux compressed, and what their headers say.
    int here = 0;
    const std::uint64_t nclusters = (in->size + (std::uint64_t{kBlockSize} << f.mount.log_cluster) - 1) >>
                                    (12 + f.mount.log_cluster);
    for (std::uint64_t c = 0; c < nclusters; ++c) {
      const Bytes blocks = compressed_cluster(*in, c);
      if (blocks.empty()) continue;
      ++here;
      ASSERT_GE(blocks.size(), kBlockSize);
      ASSERT_LT(blocks.size(), std::size_t{kBlockSize} << f.mount.log_cluster);
      const std::uint32_t clen = blocks[0] | blocks[1] << 8 | blocks[2] << 16 | static_cast<std::uint32_t>(blocks[3]) << 24;
      const std::uint32_t chksum = blocks[4] | blocks[5] << 8 | blocks[6] << 16 | static_cast<std::uint32_t>(blocks[7]) << 24;
      ASSERT_LE(clen + 24, blocks.size());
      EXPECT_GT(clen + 24, blocks.size() - kBlockSize) << "more blocks than the data needs";
      const Bytes cdata(blocks.begin() + 24, blocks.begin() + 24 + clen);
      if (f.mount.chksum)
        EXPECT_EQ(chksum, cluster_crc(cdata)) << "cluster " << c;  // f2fs_crc32 as the kernel computes it
      else
        EXPECT_EQ(chksum, 0u);
      if (f.mount.algorithm == kLzoRle || f.mount.algorithm == kLzo) {
        // lzo-rle streams carry the version header; plain lzo never does.
        const bool rle_header = cdata.size() >= 5 && cdata[0] == 17 && cdata[1] == 1;
        EXPECT_EQ(rle_header, f.mount.algorithm == kLzoRle) << "cluster " << c;
        Bytes out(std::size_t{kBlockSize} << f.mount.log_cluster);
        const auto r = lzo::decompress(cdata, out);
        EXPECT_EQ(r.status, lzo::Status::ok) << lzo::status_name(r.status) << " cluster " << c;
        EXPECT_EQ(r.produced, out.size());
        EXPECT_TRUE(std::equal(out.begin(), out.end(),
                               f.content.begin() + static_cast<std::ptrdiff_t>(c * out.size())))
            << "cluster " << c;
#if F2FSCORE_WITH_LZO
        if (f.mount.algorithm == kLzo) {  // Linux's lzo1x_1 output through liblzo2 too
          Bytes ref(out.size());
          lzo_uint n = ref.size();
          EXPECT_EQ(lzo1x_decompress_safe(cdata.data(), cdata.size(), ref.data(), &n, nullptr), LZO_E_OK);
          EXPECT_TRUE(ref == out);
        }
#endif
      }
    }
    EXPECT_EQ(here > 0, expect_compressed_clusters(f)) << here << " compressed clusters";
    compressed_clusters[f.mount.algorithm] += here;

    // The whole file, then in odd-sized pieces crossing cluster edges.
    Bytes got(f.content.size() + 100, 0xEE);
    auto n = vol_->read(*in, 0, got);
    if (here > 0 && !kBuilt[f.mount.algorithm]) {
      ASSERT_FALSE(n);
      EXPECT_EQ(n.error().code, Errc::unsupported) << n.error().to_string();
      EXPECT_NE(n.error().message.find("is not built into"), std::string::npos) << n.error().message;
      continue;
    }
    ASSERT_OK(n);
    ASSERT_EQ(*n, f.content.size());
    got.resize(*n);
    ASSERT_TRUE(got == f.content) << "first difference at byte "
                                  << (std::mismatch(got.begin(), got.end(), f.content.begin()).first - got.begin());
    const std::size_t step = std::max<std::size_t>(7001, f.content.size() / 24 + 1);
    for (std::size_t off = 1234; off < f.content.size(); off += step) {
      Bytes piece(5003);
      auto m = vol_->read(*in, off, piece);
      ASSERT_OK(m);
      ASSERT_EQ(*m, std::min<std::size_t>(piece.size(), f.content.size() - off));
      ASSERT_TRUE(std::equal(piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(*m),
                             f.content.begin() + static_cast<std::ptrdiff_t>(off)))
          << "at " << off;
    }
  }
  for (std::uint8_t a = 0; a < 4; ++a) {
    EXPECT_GT(compressed_clusters[a], 0) << kAlgName[a];
    RecordProperty(std::string("compressed_clusters_") + kAlgName[a], compressed_clusters[a]);
  }
}

TEST_F(LinuxCompressed, LzoRleClustersUseZeroRuns) {
  // Read as version 0, the zero-run instructions of Linux's lzo-rle output
  // are long matches reaching far before the output: the decoder must be
  // taking them as runs.
  auto in = vol_->resolve("/lzo-rle/zeros");
  ASSERT_OK(in);
  Bytes blocks = compressed_cluster(*in, 0);
  ASSERT_FALSE(blocks.empty());
  Bytes cdata(blocks.begin() + 24, blocks.begin() + 24 + blocks[0] + (blocks[1] << 8));
  Bytes out(16384, 0xEE);
  auto r = lzo::decompress(cdata, out);
  ASSERT_EQ(r.status, lzo::Status::ok);
  EXPECT_EQ(r.version, 1);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0; }));
  cdata[1] = 0;  // version 0
  EXPECT_NE(lzo::decompress(cdata, out).status, lzo::Status::ok);
}

TEST_F(LinuxCompressed, DamagedClustersAreNamedErrors) {
  struct Case {
    const char* file;
    std::size_t at;       // byte offset inside the cluster's blocks
    std::uint32_t value;  // le32 written there
    const char* want;
  };
  const Case cases[] = {
      {"/lzo-rle-c4/mixed", 4, 0xDEADBEEF, "checksum 0xdeadbeef does not match the crc32"},
      {"/lzo-rle/mixed", 0, 70000, "clen 70000 exceeds the"},
      {"/lz4-c4/zeros", 0, 70000, "clen 70000 exceeds the"},
      {"/lzo-rle/overwrite", 24, 0x0000FF00, "lzo-rle: "},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.file);
    auto in = vol_->resolve(k.file);
    ASSERT_OK(in);
    auto head = vol_->map_block(*in, 0);
    ASSERT_TRUE(head);
    ASSERT_EQ(*head, kCompressAddr);
    auto first = vol_->map_block(*in, 1);
    ASSERT_TRUE(first);
    Bytes blk(kBlockSize), saved(kBlockSize);
    ASSERT_TRUE(vol_->read_block(*first, saved));
    blk = saved;
    put_le32(blk.data() + k.at, k.value);
    ASSERT_TRUE(write_at(*dev_, std::uint64_t{*first} * kBlockSize, blk));
    Bytes got(100);
    auto n = vol_->read(*in, 10, got);
    ASSERT_TRUE(write_at(*dev_, std::uint64_t{*first} * kBlockSize, saved));
    if (!kBuilt[in->raw.i.extra.i_compress_algorithm] && std::strstr(k.want, "clen") == nullptr) continue;
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().code, Errc::corrupt);
    EXPECT_NE(n.error().message.find(k.want), std::string::npos) << n.error().message;
    EXPECT_NE(n.error().message.find("inode " + std::to_string(in->ino) + " cluster 0"), std::string::npos)
        << n.error().message;
  }
}

TEST_F(LinuxCompressed, MutatedLinuxClustersNeverCrash) {
  // Real lzo-rle and lzo streams from Linux, damaged at random.
  std::vector<Bytes> seeds;
  for (const char* path : {"/lzo-rle/mixed", "/lzo-rle/overwrite", "/lzo-rle-c4/mixed", "/lzo-rle-c4/zeros",
                           "/lzo-rle/zeros", "/lzo/mixed", "/lzo-rle-c8/big"}) {
    auto in = vol_->resolve(path);
    ASSERT_TRUE(in) << path << ": " << in.error().to_string();
    const Bytes blocks = compressed_cluster(*in, 0);
    ASSERT_FALSE(blocks.empty()) << path;
    const std::uint32_t clen = blocks[0] | blocks[1] << 8 | blocks[2] << 16;
    seeds.emplace_back(blocks.begin() + 24, blocks.begin() + 24 + clen);
  }
  std::mt19937_64 rng(99 + static_cast<unsigned>(fuzz_scale()));
  Bytes out(std::size_t{kBlockSize} << 8);
  for (int i = 0; i < 4000 * fuzz_scale(); ++i) {
    Bytes c = seeds[rng() % seeds.size()];
    mutate(c, rng);
    const std::size_t cap = std::size_t{kBlockSize} << (2 + rng() % 7);
    const auto r = lzo::decompress(c, std::span<std::uint8_t>(out.data(), cap));
    ASSERT_LE(r.produced, cap);
    ASSERT_LE(r.consumed, c.size());
  }
}
