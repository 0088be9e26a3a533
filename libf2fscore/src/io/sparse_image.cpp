// Reading Android sparse images as the image they describe (see
// sparse_image.hpp for the format).
#include "f2fscore/sparse_image.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>


namespace f2fscore {

namespace {

constexpr std::uint16_t kChunkRaw = 0xcac1;
constexpr std::uint16_t kChunkFill = 0xcac2;
constexpr std::uint16_t kChunkDontCare = 0xcac3;
constexpr std::uint16_t kChunkCrc32 = 0xcac4;
constexpr std::uint32_t kFileHeaderSize = 28;
constexpr std::uint32_t kChunkHeaderSize = 12;

std::uint16_t le16_at(const std::uint8_t* p) noexcept { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
std::uint32_t le32_at(const std::uint8_t* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

// Reads bytes at any offset of a device whose requests must be multiples
// of its logical block size: the covering aligned range through a bounce
// buffer, at most kPiece bytes a request.
class ByteReader {
 public:
  explicit ByteReader(BlockDevice& dev) : dev_(dev) {}

  Status read(std::uint64_t off, std::uint8_t* dst, std::uint64_t len) {
    const std::uint64_t lbs = dev_.info().logical_block_size;
    while (len > 0) {
      const std::uint64_t start = off / lbs * lbs;
      std::uint64_t end = std::min(off + len, start + kPiece);
      end = (end + lbs - 1) / lbs * lbs;
      const std::uint64_t size = dev_.info().size_bytes;
      if (end > size) end = size;  // the file's last partial sector: POSIX files take it
      if (end <= off) return make_error(Errc::corrupt, "sparse image: the file ends at byte " + std::to_string(size));
      buf_.resize(static_cast<std::size_t>(end - start));
      F2FSCORE_TRY(read_at(dev_, start, {buf_.data(), buf_.size()}));
      const std::uint64_t n = std::min(len, end - off);
      std::memcpy(dst, buf_.data() + (off - start), static_cast<std::size_t>(n));
      off += n;
      dst += n;
      len -= n;
    }
    return {};
  }

 private:
  static constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  BlockDevice& dev_;
  std::vector<std::uint8_t> buf_;
};

struct Chunk {
  std::uint64_t start = 0;      // byte offset in the image
  std::uint64_t length = 0;     // bytes of the image
  std::uint64_t file_off = 0;   // raw: where its data starts in the file
  std::uint32_t fill = 0;       // fill: the 4-byte value (as stored)
  std::uint16_t type = 0;
};

class SparseImageDevice final : public BlockDevice {
 public:
  SparseImageDevice(std::unique_ptr<BlockDevice> file, std::vector<Chunk> chunks, std::uint64_t size)
      : file_(std::move(file)), reader_(*file_), chunks_(std::move(chunks)) {
    const DeviceInfo& fi = file_->info();
    info_.size_bytes = size;
    info_.logical_block_size = 512;
    info_.kind = fi.kind;
    info_.read_only = true;
    info_.name = fi.name;
  }
  ~SparseImageDevice() override { drain(*this); }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    req.status = check_request(info_, req);
    if (req.status == Errc::ok && req.op == IoOp::read) {
      try {
        Status st = read_image(req.offset, static_cast<std::uint8_t*>(req.buf), req.length);
        if (st) {
          req.transferred = req.length;
        } else {
          req.status = st.error().code;
          req.sys_errno = st.error().sys_errno;
        }
      } catch (const std::bad_alloc&) {
        req.status = Errc::no_space;
      }
    } else if (req.status == Errc::ok && req.op == IoOp::flush) {
      // Nothing is ever written.
    } else if (req.status == Errc::ok) {
      req.status = Errc::read_only;
    }
    done_.push(req);
  }
  std::size_t poll(bool /*wait*/) noexcept override { return done_.run(); }
  std::size_t in_flight() const noexcept override { return done_.size(); }

  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    for (std::size_t i = chunk_at(offset); i < chunks_.size() && chunks_[i].start < end; ++i)
      if (chunks_[i].type != kChunkDontCare) return std::max(offset, chunks_[i].start);
    return end;
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    for (std::size_t i = chunk_at(offset); i < chunks_.size() && chunks_[i].start < end; ++i)
      if (chunks_[i].type == kChunkDontCare) return std::min(end, std::max(offset, chunks_[i].start));
    return end;
  }

 private:
  // The chunk holding byte `off` (chunks_.size() past the end).
  std::size_t chunk_at(std::uint64_t off) const noexcept {
    auto it = std::upper_bound(chunks_.begin(), chunks_.end(), off,
                               [](std::uint64_t o, const Chunk& c) { return o < c.start; });
    if (it == chunks_.begin()) return chunks_.size();
    return static_cast<std::size_t>(it - chunks_.begin()) - 1;
  }

  Status read_image(std::uint64_t off, std::uint8_t* dst, std::uint64_t len) {
    std::size_t i = chunk_at(off);
    while (len > 0) {
      if (i >= chunks_.size()) return make_error(Errc::io, "sparse image: read past the last chunk");
      const Chunk& c = chunks_[i];
      const std::uint64_t in = off - c.start;
      const std::uint64_t n = std::min(len, c.length - in);
      switch (c.type) {
        case kChunkRaw: F2FSCORE_TRY(reader_.read(c.file_off + in, dst, n)); break;
        case kChunkFill: {
          std::uint8_t pat[4];
          std::memcpy(pat, &c.fill, 4);
          for (std::uint64_t k = 0; k < n; ++k) dst[k] = pat[(in + k) % 4];
          break;
        }
        default: std::memset(dst, 0, static_cast<std::size_t>(n)); break;
      }
      off += n;
      dst += n;
      len -= n;
      ++i;
    }
    return {};
  }

  std::unique_ptr<BlockDevice> file_;
  ByteReader reader_;
  std::vector<Chunk> chunks_;
  DeviceInfo info_;
  CompletionQueue done_;
};

tl::unexpected<Error> corrupt(const std::string& name, const std::string& what) {
  return make_error(Errc::corrupt, name + ": Android sparse image: " + what);
}

}  // namespace

namespace detail {
std::string sparse_write_refusal(const std::string& path) {
  return path + " is an Android sparse image: it opens read-only; f2fscore-mkfs -S and f2fscore-sload -S write "
                "sparse images (or expand it with simg2img first)";
}
}  // namespace detail

Result<bool> is_sparse_image(BlockDevice& file) {
  if (file.info().size_bytes < 4) return false;
  std::uint8_t m[4];
  ByteReader r(file);
  F2FSCORE_TRY(r.read(0, m, 4));
  return le32_at(m) == kSparseMagic;
}

Result<std::unique_ptr<BlockDevice>> open_sparse_image(std::unique_ptr<BlockDevice> file) {
  if (!file) return make_error(Errc::invalid_argument, "sparse image: no file");
  const std::string& name = file->info().name;
  const std::uint64_t file_size = file->info().size_bytes;
  ByteReader r(*file);
  if (file_size < kFileHeaderSize)
    return corrupt(name, "the file (" + std::to_string(file_size) + " bytes) is shorter than the header");
  std::uint8_t h[kFileHeaderSize];
  F2FSCORE_TRY(r.read(0, h, kFileHeaderSize));
  if (le32_at(h) != kSparseMagic) return corrupt(name, "no sparse magic");
  const std::uint16_t major = le16_at(h + 4), file_hdr_sz = le16_at(h + 8), chunk_hdr_sz = le16_at(h + 10);
  const std::uint32_t blk_sz = le32_at(h + 12), total_blks = le32_at(h + 16), total_chunks = le32_at(h + 20);
  if (major != 1) return corrupt(name, "major version " + std::to_string(major) + ", not 1");
  if (file_hdr_sz < kFileHeaderSize || chunk_hdr_sz < kChunkHeaderSize)
    return corrupt(name, "header sizes " + std::to_string(file_hdr_sz) + "/" +
                                        std::to_string(chunk_hdr_sz) + " below 28/12");
  if (blk_sz == 0 || blk_sz % 4 != 0)
    return corrupt(name, "block size " + std::to_string(blk_sz) + " is not a positive multiple of 4");
  const std::uint64_t image_size = std::uint64_t{total_blks} * blk_sz;  // < 2^64: u32 * u32

  std::vector<Chunk> chunks;
  std::uint64_t pos = file_hdr_sz, block = 0;
  std::vector<std::uint8_t> ch(chunk_hdr_sz);
  for (std::uint32_t k = 0; k < total_chunks; ++k) {
    const std::string at = "chunk " + std::to_string(k) + " (file byte " + std::to_string(pos) + ")";
    if (pos + chunk_hdr_sz > file_size) return corrupt(name, "the file ends inside " + at);
    F2FSCORE_TRY(r.read(pos, ch.data(), chunk_hdr_sz));
    const std::uint16_t type = le16_at(ch.data());
    const std::uint32_t chunk_sz = le32_at(ch.data() + 4), total_sz = le32_at(ch.data() + 8);
    const std::uint64_t data = std::uint64_t{chunk_sz} * blk_sz;
    std::uint64_t want = chunk_hdr_sz;
    switch (type) {
      case kChunkRaw: want += data; break;
      case kChunkFill:
      case kChunkCrc32: want += 4; break;
      case kChunkDontCare: break;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%04x", type);
        return corrupt(name, at + ": unknown chunk type " + hex);
      }
    }
    if (total_sz != want)
      return corrupt(name, at + ": " + std::to_string(total_sz) + " bytes, its type and " +
                                          std::to_string(chunk_sz) + " blocks make " + std::to_string(want));
    if (pos + want > file_size) return corrupt(name, "the file ends inside " + at);
    if (type == kChunkCrc32) {
      if (chunk_sz != 0) return corrupt(name, at + ": a CRC32 chunk covering " + std::to_string(chunk_sz) + " blocks");
    } else {
      if (block + chunk_sz > total_blks)
        return corrupt(name, at + ": blocks " + std::to_string(block) + "+" + std::to_string(chunk_sz) +
                                            " past the image's " + std::to_string(total_blks));
      if (chunk_sz > 0) {
        Chunk c;
        c.start = block * blk_sz;
        c.length = data;
        c.type = type;
        c.file_off = pos + chunk_hdr_sz;
        if (type == kChunkFill) {
          std::uint8_t v[4];
          F2FSCORE_TRY(r.read(pos + chunk_hdr_sz, v, 4));
          std::memcpy(&c.fill, v, 4);
        }
        // Neighbouring don't-care chunks are one hole.
        if (type == kChunkDontCare && !chunks.empty() && chunks.back().type == kChunkDontCare)
          chunks.back().length += data;
        else
          chunks.push_back(c);
      }
      block += chunk_sz;
    }
    pos += want;
  }
  if (block != total_blks)
    return corrupt(name, "the chunks cover " + std::to_string(block) + " blocks of " +
                                        std::to_string(total_blks));
  if (image_size > (std::uint64_t{1} << 63)) return corrupt(name, "an image of over 2^63 bytes");
  return std::unique_ptr<BlockDevice>(new SparseImageDevice(std::move(file), std::move(chunks), image_size));
}

}  // namespace f2fscore
