// fs-verity on f2fs: FS_IOC_ENABLE_VERITY and FS_IOC_MEASURE_VERITY.
//
// The format (Documentation/filesystems/fsverity.rst, fs/verity/open.c,
// fs/verity/enable.c, fs/f2fs/verity.c, Linux 6.1):
//   - the Merkle tree hashes the file's data in 4 KiB blocks (the last one
//     zero-padded) with SHA-256, each hash taken over the salt padded with
//     zeros to a multiple of 64 bytes (SHA-256's block) and then the block;
//     the hashes of a level are packed 128 to a 4 KiB tree block (the last
//     zero-padded) and hashed again, up to a level of one block; the root
//     hash is the hash of that block (of the one data block for a file of one
//     block, all zeros for an empty file). The tree is stored top level
//     first (fsverity_init_merkle_tree_params());
//   - the fsverity_descriptor (256 bytes): u8 version 1, u8 hash_algorithm
//     (1 SHA-256), u8 log_blocksize 12, u8 salt_size, le32 sig_size, le64
//     data_size, root_hash[64], salt[32], 144 reserved zero bytes;
//   - the file digest is SHA-256 of the descriptor with sig_size taken as 0
//     (compute_file_digest());
//   - f2fs keeps the tree from byte round_up(i_size, 65536) of the file on,
//     then the descriptor, and their location in xattr
//     F2FS_XATTR_INDEX_VERITY "v": le32 version 1, le32 size, le64 pos.

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "f2fscore/disk/xattr.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

#if F2FSCORE_HAVE_OPENSSL
#include <openssl/evp.h>
#endif

#ifndef ENODATA
#define ENODATA 61
#endif
#ifndef EMSGSIZE
#define EMSGSIZE 90
#endif
#ifndef ENOKEY
#define ENOKEY 126
#endif

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

constexpr std::uint32_t kDigestSize = 32;                          // SHA-256
constexpr std::uint32_t kHashesPerBlock = kBlockSize / kDigestSize;  // 128
constexpr std::uint64_t kMetadataAlign = 65536;                    // f2fs_verity_metadata_pos()
constexpr std::size_t kDescriptorSize = 256;                       // sizeof(struct fsverity_descriptor)
constexpr std::size_t kMaxSalt = 32;
constexpr std::uint8_t kHashSha256 = 1;                            // FS_VERITY_HASH_ALG_SHA256
constexpr std::uint8_t kLogBlocksize = 12;
constexpr std::uint32_t kLocationVersion = 1;                      // F2FS_VERIFY_VER
constexpr char kVerityName[] = "v";                                // F2FS_XATTR_NAME_VERITY
// Reading the data: blocks per request.
constexpr std::uint64_t kReadChunk = 256;

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

void put_le32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
[[maybe_unused]] void put_le64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint32_t get_le32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

#if F2FSCORE_HAVE_OPENSSL
// SHA-256 with an optional prefix (the padded salt), through OpenSSL's EVP.
class Hasher {
 public:
  explicit Hasher(std::span<const std::uint8_t> prefix) : prefix_(prefix.begin(), prefix.end()), ctx_(EVP_MD_CTX_new()) {}
  ~Hasher() { EVP_MD_CTX_free(ctx_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  bool ok() const { return ctx_ != nullptr; }
  // out[0, 32) = SHA-256(prefix || data).
  bool hash(const std::uint8_t* data, std::size_t n, std::uint8_t* out) {
    unsigned int len = 0;
    return EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1 &&
           (prefix_.empty() || EVP_DigestUpdate(ctx_, prefix_.data(), prefix_.size()) == 1) &&
           EVP_DigestUpdate(ctx_, data, n) == 1 && EVP_DigestFinal_ex(ctx_, out, &len) == 1 && len == kDigestSize;
  }

 private:
  std::vector<std::uint8_t> prefix_;
  EVP_MD_CTX* ctx_;
};
#endif

[[maybe_unused]] Status no_openssl() {
  return errno_error(Errc::unsupported, EOPNOTSUPP,
                     "writer: fs-verity needs SHA-256, and this build of f2fscore has no OpenSSL (Debian: libssl-dev)");
}

[[maybe_unused]] Status hash_failed() { return make_error(Errc::io, "writer: OpenSSL's SHA-256 failed"); }

}  // namespace

Status Writer::Impl::refuse_verity(nid_t ino, const char* what) {
  auto in = node(ino);
  if (!in) return make_error(in.error());
  if ((*in)->i.i_advise & advise::verity)
    return errno_error(Errc::read_only, EPERM, fmt("writer: inode %llu is an fs-verity file: ", ino) + what + " (EPERM)");
  return {};
}

Status Writer::enable_verity(nid_t ino, const VerityOptions& opts) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  // f2fs_ioc_enable_verity() in fs/f2fs/file.c, then fsverity_ioctl_enable()
  // and enable_verity() in fs/verity/enable.c, in their order.
  if (!(w.sb.feature.get() & feature::verity))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       "writer: the volume has no verity feature (EOPNOTSUPP; f2fscore-tune -O verity adds it)");
  if (opts.salt.size() > kMaxSalt)
    return errno_error(Errc::invalid_argument, EMSGSIZE,
                       fmt("writer: a salt of %llu bytes; fs-verity takes at most 32 (EMSGSIZE)", opts.salt.size()));
  // inode_permission(MAY_WRITE) on an immutable inode, IS_APPEND(): EPERM.
  F2FSCORE_TRY(w.refuse_flagged(ino, true, "fs-verity is not enabled"));
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  {
    const Node& in = **ip;
    const std::uint16_t type = in.i.i_mode.get() & 0xF000;
    if (type == 0x4000)
      return errno_error(Errc::invalid_argument, EISDIR, fmt("writer: inode %llu is a directory (EISDIR)", ino));
    if (type != 0x8000)
      return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: inode %llu is not a regular file (EINVAL)", ino));
  }
  if ((*ip)->i.i_advise & advise::verity)
    return errno_error(Errc::exists, EEXIST, fmt("writer: inode %llu is an fs-verity file already (EEXIST)", ino));
  if ((*ip)->i.i_advise & advise::encrypt)
    return errno_error(Errc::unsupported, ENOKEY,
                       fmt("writer: inode %llu is encrypted: its Merkle tree would have to be encrypted, and the writer "
                           "has no key (ENOKEY)", ino));
  if (Impl::compressed(**ip))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu is compressed: this writer does not write past EOF of a compressed "
                           "file (EOPNOTSUPP)", ino));
#if !F2FSCORE_HAVE_OPENSSL
  return no_openssl();
#else
  const std::uint64_t size = (*ip)->i.i_size.get();
  // The tree's shape (fsverity_init_merkle_tree_params()): the levels'
  // block counts, level 0 (above the data) first.
  const std::uint64_t data_blocks = (size + kBlockSize - 1) / kBlockSize;
  std::vector<std::uint64_t> level_blocks;
  for (std::uint64_t b = data_blocks; b > 1;) {
    b = (b + kHashesPerBlock - 1) / kHashesPerBlock;
    level_blocks.push_back(b);
  }
  std::uint64_t tree_blocks = 0;
  for (auto b : level_blocks) tree_blocks += b;
  const std::uint64_t meta_pos = round_up(size, kMetadataAlign);
  const std::uint64_t first = meta_pos / kBlockSize;
  const std::uint64_t desc_block = first + tree_blocks;
  if (desc_block + 1 > w.max_file_blocks(**ip))
    return errno_error(Errc::invalid_argument, EFBIG,
                       fmt("writer: the verity metadata of inode %llu would pass the largest file (EFBIG)", ino));
  // Everything checked; now the writes. f2fs_begin_enable_verity(): inline
  // data moves to a block; enable_verity() writes the dirty pages first.
  F2FSCORE_TRY(w.convert_inline_data(ino));
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::sync_writeback;
  F2FSCORE_TRY(w.writeback(ino, ctx));
  F2FSCORE_TRY(w.io_batch().drain());
  ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint8_t type = w.data_type(**ip);

  std::vector<std::uint8_t> salt_prefix;
  if (!opts.salt.empty()) {
    salt_prefix.assign(round_up(opts.salt.size(), 64), 0);
    std::memcpy(salt_prefix.data(), opts.salt.data(), opts.salt.size());
  }
  Hasher h(salt_prefix);
  if (!h.ok()) return hash_failed();

  // Level 0's hashes, from the data read a chunk at a time; the bytes of the
  // last block past i_size count as zeros, and are made zero on the device
  // when they are not (Linux verifies the page as read).
  std::vector<std::uint8_t> cur(static_cast<std::size_t>(data_blocks) * kDigestSize);
  {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(std::min(data_blocks, kReadChunk)) * kBlockSize);
    for (std::uint64_t i = 0; i < data_blocks; i += kReadChunk) {
      const std::uint64_t n = std::min(kReadChunk, data_blocks - i);
      F2FSCORE_TRY(w.read_file_blocks(ino, i, n, buf.data()));
      for (std::uint64_t k = 0; k < n; ++k) {
        std::uint8_t* blk = buf.data() + static_cast<std::size_t>(k) * kBlockSize;
        const std::uint64_t index = i + k;
        if (index + 1 == data_blocks && size % kBlockSize != 0) {
          const std::size_t tail = static_cast<std::size_t>(size % kBlockSize);
          if (std::any_of(blk + tail, blk + kBlockSize, [](std::uint8_t c) { return c != 0; })) {
            std::memset(blk + tail, 0, kBlockSize - tail);
            auto a = w.map(ino, index, false);
            if (!a) return make_error(a.error());
            if (*a != kNullAddr) F2FSCORE_TRY(w.write_file_block(ino, index, blk, type, ctx));
          }
        }
        if (!h.hash(blk, kBlockSize, cur.data() + static_cast<std::size_t>(index) * kDigestSize)) return hash_failed();
      }
    }
  }
  // The levels above: each packs the hashes below into zero-padded blocks.
  std::vector<std::vector<std::uint8_t>> levels;
  for (std::uint64_t nb : level_blocks) {
    std::vector<std::uint8_t> lv(static_cast<std::size_t>(nb) * kBlockSize, 0);
    std::memcpy(lv.data(), cur.data(), cur.size());
    std::vector<std::uint8_t> next(static_cast<std::size_t>(nb) * kDigestSize);
    for (std::uint64_t b = 0; b < nb; ++b)
      if (!h.hash(lv.data() + static_cast<std::size_t>(b) * kBlockSize, kBlockSize,
                  next.data() + static_cast<std::size_t>(b) * kDigestSize))
        return hash_failed();
    levels.push_back(std::move(lv));
    cur = std::move(next);
  }
  std::array<std::uint8_t, kDescriptorSize> desc{};
  desc[0] = 1;  // version
  desc[1] = kHashSha256;
  desc[2] = kLogBlocksize;
  desc[3] = static_cast<std::uint8_t>(opts.salt.size());
  put_le32(desc.data() + 4, 0);  // sig_size: no signature
  put_le64(desc.data() + 8, size);
  if (data_blocks > 0) std::memcpy(desc.data() + 16, cur.data(), kDigestSize);  // root_hash (zeros when empty)
  if (!opts.salt.empty()) std::memcpy(desc.data() + 80, opts.salt.data(), opts.salt.size());

  // The tree, top level first, then the descriptor, through the data path
  // (f2fs_write_merkle_tree_block(), pagecache_write()).
  std::uint64_t index = first;
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    for (std::size_t off = 0; off < it->size(); off += kBlockSize, ++index) {
      if (index != first) F2FSCORE_TRY(w.balance_fs());
      F2FSCORE_TRY(w.write_file_block(ino, index, it->data() + off, type, ctx));
    }
  }
  std::vector<std::uint8_t> db(kBlockSize, 0);
  std::memcpy(db.data(), desc.data(), desc.size());
  F2FSCORE_TRY(w.write_file_block(ino, desc_block, db.data(), type, ctx));

  // f2fs_end_enable_verity(): the xattr, then FADVISE_VERITY_BIT.
  std::array<std::uint8_t, 16> loc{};
  put_le32(loc.data(), kLocationVersion);
  put_le32(loc.data() + 4, static_cast<std::uint32_t>(kDescriptorSize));
  put_le64(loc.data() + 8, desc_block * kBlockSize);
  const std::span<const std::uint8_t> value(loc);
  F2FSCORE_TRY(wr::xattr_set(w, ino, xattr_index::verity, kVerityName, &value, XattrSet::create));
  ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  (*ip)->i.i_advise = static_cast<std::uint8_t>((*ip)->i.i_advise | advise::verity);
  w.mark_dirty(ino);
  // A checkpoint, which Linux does not take here: the metadata blocks past
  // EOF then never sit in a roll-forward chain, whose recovery would grow
  // i_size over them (do_recover_data() in fs/f2fs/recovery.c).
  return sync();
#endif
}

Status Writer::enable_verity(std::string_view path, const VerityOptions& opts) {
  F2FSCORE_WRITER_LOCK(impl_);
  auto st = stat(path, true);
  if (!st) return make_error(st.error());
  return enable_verity(st->ino, opts);
}

Result<Writer::VerityDigest> Writer::measure_verity(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  Impl& w = *impl_;
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  if (!((*ip)->i.i_advise & advise::verity))
    return errno_error(Errc::not_found, ENODATA, fmt("writer: inode %llu is not an fs-verity file (ENODATA)", ino));
  const std::uint64_t size = (*ip)->i.i_size.get();
  // f2fs_get_verity_descriptor() and validate_fsverity_descriptor().
  auto loc = wr::xattr_get(w, ino, xattr_index::verity, kVerityName);
  if (!loc) return make_error(loc.error());
  if (loc->size() != 16 || get_le32(loc->data()) != kLocationVersion)
    return errno_error(Errc::corrupt, EINVAL, fmt("writer: inode %llu: unknown verity xattr format (EINVAL)", ino));
  const std::uint32_t dsize = get_le32(loc->data() + 4);
  const std::uint64_t pos = get_le64(loc->data() + 8);
  if (pos < round_up(size, kMetadataAlign) || dsize < kDescriptorSize || dsize > 16384 || pos + dsize < pos)
    return errno_error(Errc::corrupt, EINVAL,
                       fmt("writer: inode %llu: verity descriptor of %llu bytes at %llu is out of place (EINVAL)", ino,
                           static_cast<std::uint64_t>(dsize), pos));
  const std::uint64_t b0 = pos / kBlockSize, b1 = (pos + kDescriptorSize + kBlockSize - 1) / kBlockSize;
  std::vector<std::uint8_t> buf(static_cast<std::size_t>(b1 - b0) * kBlockSize);
  F2FSCORE_TRY(w.read_file_blocks(ino, b0, b1 - b0, buf.data()));
  std::array<std::uint8_t, kDescriptorSize> desc{};
  std::memcpy(desc.data(), buf.data() + pos % kBlockSize, desc.size());
  if (desc[0] != 1 || desc[1] != kHashSha256 || desc[2] != kLogBlocksize || desc[3] > kMaxSalt ||
      get_le64(desc.data() + 8) != size || get_le32(desc.data() + 4) > dsize - kDescriptorSize ||
      std::any_of(desc.begin() + 112, desc.end(), [](std::uint8_t c) { return c != 0; }))
    return errno_error(Errc::corrupt, EINVAL,
                       fmt("writer: inode %llu: the fsverity_descriptor is not one Linux takes (version, SHA-256, "
                           "4 KiB blocks, data_size = i_size, reserved bytes zero) (EINVAL)", ino));
  put_le32(desc.data() + 4, 0);  // compute_file_digest(): sig_size as 0
#if !F2FSCORE_HAVE_OPENSSL
  return make_error(no_openssl().error());
#else
  Hasher h({});
  VerityDigest d;
  d.algorithm = kHashSha256;
  d.digest.resize(kDigestSize);
  if (!h.ok() || !h.hash(desc.data(), desc.size(), d.digest.data())) return make_error(hash_failed().error());
  return d;
#endif
}

}  // namespace f2fscore
