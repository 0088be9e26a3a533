// Compressed clusters: the header, the codecs and the checksum, with the
// rules of f2fs_decompress_cluster() and the *_decompress_pages() functions
// in fs/f2fs/compress.c.
//
// A compressed cluster's blocks (the valid addresses after its COMPRESS_ADDR
// slot) hold struct compress_data { le32 clen; le32 chksum; le32
// reserved[4]; u8 cdata[]; }: clen bytes of one codec's output, and, when
// the inode has the compress_chksum flag, f2fs_crc32 of those bytes. The
// cluster must decompress to exactly its size (4 KiB << i_log_cluster_size).
//
// LZO, LZ4 and Zstandard come from their libraries, each optional at
// configure time (F2FSCORE_WITH_LZO / _LZ4 / _ZSTD); lzo-rle, which no
// packaged library decodes, is ours (reader/lzo_rle.cpp) and always built.
#include <cstdio>
#include <string>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "reader/lzo_rle.hpp"
#include "reader/volume_internal.hpp"
#include "util/text.hpp"

#if F2FSCORE_WITH_LZ4
#include <lz4.h>
#endif
#if F2FSCORE_WITH_ZSTD
#include <zstd.h>
#endif
#if F2FSCORE_WITH_LZO
#include <lzo/lzo1x.h>
#endif

namespace f2fscore {

namespace {

using detail::fmt;

// i_compress_algorithm values (enum compress_algorithm_type).
enum : std::uint8_t { kLzo = 0, kLz4 = 1, kZstd = 2, kLzoRle = 3 };
using compr::kCrcSeed;
using compr::kHeaderSize;
using compr::kNames;

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

[[maybe_unused]] Status not_built(std::uint8_t algorithm, const char* option, const char* package) {
  return make_error(Errc::unsupported, std::string(kNames[algorithm]) + " compression is not built into this f2fscore (" +
                                           option + "=OFF at configure time; it needs " + package + ")");
}

// Each codec decodes `cdata` into `out` and sets `produced`, or says what
// is wrong with the input.
Status decode_lzo(std::span<const std::uint8_t> cdata, std::span<std::uint8_t> out, std::size_t& produced) {
#if F2FSCORE_WITH_LZO
  static const bool lzo_ready = lzo_init() == LZO_E_OK;
  if (!lzo_ready) return make_error(Errc::unsupported, "lzo: the liblzo2 library failed lzo_init()");
  lzo_uint len = out.size();
  const int r = lzo1x_decompress_safe(cdata.data(), cdata.size(), out.data(), &len, nullptr);
  produced = len;
  if (r != LZO_E_OK) {
    const char* what = r == LZO_E_INPUT_OVERRUN        ? "input overrun"
                       : r == LZO_E_OUTPUT_OVERRUN      ? "output overrun"
                       : r == LZO_E_LOOKBEHIND_OVERRUN  ? "lookbehind overrun"
                       : r == LZO_E_EOF_NOT_FOUND       ? "no end-of-stream marker"
                       : r == LZO_E_INPUT_NOT_CONSUMED  ? "input not consumed"
                                                        : "bad stream";
    return make_error(Errc::corrupt, std::string("lzo: corrupt input (") + what + ", liblzo2 error " + std::to_string(r) +
                                         fmt(", after %llu output bytes)", len));
  }
  return {};
#else
  (void)cdata, (void)out, (void)produced;
  return not_built(kLzo, "F2FSCORE_WITH_LZO", "liblzo2 (Debian: liblzo2-dev)");
#endif
}

Status decode_lzo_rle(std::span<const std::uint8_t> cdata, std::span<std::uint8_t> out, std::size_t& produced) {
  const auto r = lzo::decompress(cdata, out);
  produced = r.produced;
  if (r.status != lzo::Status::ok)
    return make_error(Errc::corrupt, "lzo-rle: corrupt input (" + std::string(lzo::status_name(r.status)) +
                                         fmt(" at input byte %llu of %llu, after %llu output bytes)", r.consumed,
                                             cdata.size(), r.produced));
  return {};
}

Status decode_lz4(std::span<const std::uint8_t> cdata, std::span<std::uint8_t> out, std::size_t& produced) {
#if F2FSCORE_WITH_LZ4
  const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(cdata.data()), reinterpret_cast<char*>(out.data()),
                                    static_cast<int>(cdata.size()), static_cast<int>(out.size()));
  if (r < 0)
    return make_error(Errc::corrupt, fmt("lz4: corrupt input (LZ4_decompress_safe failed at or before input byte %llu of %llu)",
                                         static_cast<unsigned long long>(-static_cast<long long>(r) - 1), cdata.size()));
  produced = static_cast<std::size_t>(r);
  return {};
#else
  (void)cdata, (void)out, (void)produced;
  return not_built(kLz4, "F2FSCORE_WITH_LZ4", "liblz4 (Debian: liblz4-dev)");
#endif
}

Status decode_zstd(std::span<const std::uint8_t> cdata, std::span<std::uint8_t> out, std::size_t& produced) {
#if F2FSCORE_WITH_ZSTD
  const std::size_t r = ZSTD_decompress(out.data(), out.size(), cdata.data(), cdata.size());
  if (ZSTD_isError(r)) return make_error(Errc::corrupt, std::string("zstd: corrupt input (") + ZSTD_getErrorName(r) + ")");
  produced = r;
  return {};
#else
  (void)cdata, (void)out, (void)produced;
  return not_built(kZstd, "F2FSCORE_WITH_ZSTD", "libzstd (Debian: libzstd-dev)");
#endif
}

}  // namespace

Status decompress_cluster(std::uint8_t algorithm, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                          std::size_t* produced) {
  std::size_t got = 0;
  if (produced) *produced = 0;
  if (algorithm > kLzoRle)
    return make_error(Errc::corrupt, fmt("i_compress_algorithm %llu is not one of 0 lzo, 1 lz4, 2 zstd, 3 lzo-rle", algorithm));
  const std::size_t blocks = (in.size() + disk::kBlockSize - 1) / disk::kBlockSize;
  if (in.size() < kHeaderSize)
    return make_error(Errc::corrupt, blocks == 0 ? std::string("COMPRESS_ADDR is followed by no compressed block")
                                                 : fmt("compressed data of %llu bytes is shorter than its 24-byte header", in.size()));
  // As f2fs_decompress_cluster(): the data must fit in the blocks read.
  const std::uint32_t clen = le32(in.data());
  const std::uint32_t chksum = le32(in.data() + 4);
  if (clen > in.size() - kHeaderSize)
    return make_error(Errc::corrupt, fmt("clen %llu exceeds the %llu compressed blocks (at most %llu bytes)", clen, blocks,
                                         in.size() - kHeaderSize));
  const auto cdata = in.subspan(kHeaderSize, clen);
  // The kernel stores a checksum only for inodes with the compress_chksum
  // flag and zero otherwise; a non-zero one is checked after decompression
  // (a zero one could also be a genuine crc32 of 0: then nothing is checked).
  auto checksum_problem = [&]() -> std::string {
    if (chksum == 0) return {};
    const std::uint32_t crc = f2fs_crc32(kCrcSeed, cdata.data(), cdata.size());
    if (crc == chksum) return {};
    return fmt("checksum 0x%08llx does not match the crc32 0x%08llx of its %llu compressed bytes", chksum, crc, clen);
  };
  Status st;
  switch (algorithm) {
    case kLzo: st = decode_lzo(cdata, out, got); break;
    case kLz4: st = decode_lz4(cdata, out, got); break;
    case kZstd: st = decode_zstd(cdata, out, got); break;
    default: st = decode_lzo_rle(cdata, out, got); break;
  }
  if (produced) *produced = got;
  // Every codec's decompress_pages() requires the whole cluster back.
  if (st && got != out.size())
    st = make_error(Errc::corrupt, std::string(kNames[algorithm]) +
                                       fmt(": clen %llu decompresses to %llu bytes, not the cluster's %llu", clen, got,
                                           out.size()));
  if (!st) {
    // A bad checksum too says whether the blocks or the codec are at fault.
    if (st.error().code == Errc::corrupt) {
      if (const auto c = checksum_problem(); !c.empty()) st.error().message += "; its " + c;
    }
    return st;
  }
  // Linux logs a mismatch, flags the volume for fsck and still returns the
  // data; we return the data in `out` too, but as an error the caller sees.
  if (const auto c = checksum_problem(); !c.empty()) return make_error(Errc::corrupt, c);
  return {};
}

}  // namespace f2fscore
