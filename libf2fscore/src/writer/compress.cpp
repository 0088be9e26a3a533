// Compressing one cluster for the writer, with the rules of
// f2fs_compress_pages() and the *_compress_pages() functions in
// fs/f2fs/compress.c (Linux 6.1):
//
//   - the input is the whole cluster (4 KiB << i_log_cluster_size);
//   - the output is struct compress_data { le32 clen; le32 chksum;
//     le32 reserved[4]; u8 cdata[]; }, zero-padded to whole blocks;
//   - a cluster whose clen passes 4 KiB x (cluster blocks - 1) - 24 saves
//     no block and is stored plain (-EAGAIN in the kernel);
//   - chksum is f2fs_crc32 of cdata when the inode has COMPRESS_CHKSUM,
//     else 0;
//   - LZO is lzo1x_1_compress(), LZ4 LZ4_compress_default(), Zstandard
//     level 1 (F2FS_ZSTD_DEFAULT_CLEVEL) with the cluster as the pledged
//     size, so its window never passes the cluster (the kernel's
//     decompressor allows at most MAX_COMPRESS_WINDOW_SIZE, the cluster).
//
// lzo-rle: no packaged library has the encoder. An lzo-rle stream is an
// LZO1X stream behind a two-byte header (17, bitstream version 1) in which
// an M4 instruction of distance 0xbfff means a run of zeroes
// (Documentation/staging/lzo.rst in Linux). We write LZO1X-1 output behind
// that header: it uses no run instruction, and the stream is decoded with
// our lzo-rle decoder before it is stored, so that an LZO1X match of
// distance 0xbfff (which lzo-rle would read as a run) sends the cluster to
// plain storage instead of corrupting it.
#include <cstring>
#include <memory>
#include <string>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/constants.hpp"
#include "reader/lzo_rle.hpp"
#include "reader/volume_internal.hpp"
#include "writer/writer_internal.hpp"

#if F2FSCORE_WITH_LZ4
#include <lz4.h>
#endif
#if F2FSCORE_WITH_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif
#if F2FSCORE_WITH_LZO
#include <lzo/lzo1x.h>
#endif

namespace f2fscore::wr {

namespace {

using compr::kCrcSeed;
using compr::kHeaderSize;
using compr::kNames;

void put_le32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

// Each encoder writes at most `cap` bytes to `dst` and returns the length,
// or 0 when the output does not fit in `cap`.
#if F2FSCORE_WITH_LZO
Result<std::size_t> encode_lzo(std::span<const std::uint8_t> in, std::uint8_t* dst, std::size_t cap) {
  static const bool lzo_ready = lzo_init() == LZO_E_OK;
  if (!lzo_ready) return make_error(Errc::unsupported, "lzo: the liblzo2 library failed lzo_init()");
  // lzo1x_1_compress() writes up to lzo1x_worst_compress(n) bytes whatever
  // the room: it compresses into scratch memory of that size.
  thread_local std::vector<std::uint8_t> work, out;
  work.resize(LZO1X_1_MEM_COMPRESS);
  out.resize(in.size() + in.size() / 16 + 64 + 3);
  lzo_uint len = out.size();
  const int r = lzo1x_1_compress(in.data(), in.size(), out.data(), &len, work.data());
  if (r != LZO_E_OK) return make_error(Errc::io, "lzo: lzo1x_1_compress() failed with " + std::to_string(r));
  if (len > cap) return std::size_t{0};
  std::memcpy(dst, out.data(), len);
  return static_cast<std::size_t>(len);
}
#endif

}  // namespace

bool codec_built(std::uint8_t algorithm) noexcept {
#if F2FSCORE_WITH_LZO
  if (algorithm == kComprLzo || algorithm == kComprLzoRle) return true;
#endif
#if F2FSCORE_WITH_LZ4
  if (algorithm == kComprLz4) return true;
#endif
#if F2FSCORE_WITH_ZSTD
  if (algorithm == kComprZstd) return true;
#endif
  (void)algorithm;
  return false;
}

Status check_codec(std::uint8_t algorithm) {
  if (algorithm > kComprLzoRle)
    return make_error(Errc::invalid_argument,
                      "compress_algorithm " + std::to_string(algorithm) + " is not one of 0 lzo, 1 lz4, 2 zstd, 3 lzo-rle");
  if (codec_built(algorithm)) return {};
  const char* pkg = algorithm == kComprLz4 ? "F2FSCORE_WITH_LZ4 (liblz4-dev)"
                    : algorithm == kComprZstd ? "F2FSCORE_WITH_ZSTD (libzstd-dev)"
                                              : "F2FSCORE_WITH_LZO (liblzo2-dev)";
  return make_error(Errc::unsupported, std::string("writer: writing ") + kNames[algorithm] +
                                           " clusters needs a build with " + pkg);
}

Result<std::uint32_t> compress_cluster(std::uint8_t algorithm, bool chksum, std::span<const std::uint8_t> in,
                                       std::vector<std::uint8_t>& out) {
  F2FSCORE_TRY(check_codec(algorithm));
  const std::size_t cluster_blocks = in.size() / disk::kBlockSize;
  if (cluster_blocks < 2 || in.size() % disk::kBlockSize != 0)
    return make_error(Errc::invalid_argument, "writer: a cluster is at least 2 whole blocks");
  // The most compressed bytes that still save a block.
  const std::size_t max_len = disk::kBlockSize * (cluster_blocks - 1) - kHeaderSize;
  out.assign(disk::kBlockSize * (cluster_blocks - 1), 0);
  std::uint8_t* cdata = out.data() + kHeaderSize;
  std::size_t clen = 0;
  switch (algorithm) {
#if F2FSCORE_WITH_LZO
    case kComprLzo: {
      auto r = encode_lzo(in, cdata, max_len);
      if (!r) return make_error(r.error());
      clen = *r;
      break;
    }
    case kComprLzoRle: {
      if (max_len < 2) return std::uint32_t{0};
      auto r = encode_lzo(in, cdata + 2, max_len - 2);
      if (!r) return make_error(r.error());
      if (*r == 0) return std::uint32_t{0};
      cdata[0] = 17;  // the bitstream header: 17, then version 1 (lzo-rle)
      cdata[1] = 1;
      clen = *r + 2;
      // Stored only when our lzo-rle decoder gives the cluster back.
      thread_local std::vector<std::uint8_t> check;
      check.resize(in.size());
      const auto d = lzo::decompress(std::span<const std::uint8_t>(cdata, clen), check);
      if (d.status != lzo::Status::ok || d.produced != in.size() || d.version != 1 ||
          std::memcmp(check.data(), in.data(), in.size()) != 0)
        return std::uint32_t{0};
      break;
    }
#endif
#if F2FSCORE_WITH_LZ4
    case kComprLz4: {
      const int r = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(cdata),
                                         static_cast<int>(in.size()), static_cast<int>(max_len));
      if (r <= 0) return std::uint32_t{0};
      clen = static_cast<std::size_t>(r);
      break;
    }
#endif
#if F2FSCORE_WITH_ZSTD
    case kComprZstd: {
      struct Free {
        void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
      };
      thread_local std::unique_ptr<ZSTD_CCtx, Free> cctx(ZSTD_createCCtx());
      if (!cctx) return make_error(Errc::io, "zstd: ZSTD_createCCtx() failed");
      const std::size_t r = ZSTD_compressCCtx(cctx.get(), cdata, max_len, in.data(), in.size(), 1);
      if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall) return std::uint32_t{0};
        return make_error(Errc::io, std::string("zstd: ") + ZSTD_getErrorName(r));
      }
      clen = r;
      break;
    }
#endif
    default: return make_error(Errc::unsupported, "writer: codec not built");
  }
  if (clen == 0 || clen > max_len) return std::uint32_t{0};
  put_le32(out.data(), static_cast<std::uint32_t>(clen));
  put_le32(out.data() + 4, chksum ? f2fs_crc32(kCrcSeed, cdata, clen) : 0);
  const std::size_t blocks = (kHeaderSize + clen + disk::kBlockSize - 1) / disk::kBlockSize;
  out.resize(blocks * disk::kBlockSize);
  return static_cast<std::uint32_t>(blocks);
}

}  // namespace f2fscore::wr
