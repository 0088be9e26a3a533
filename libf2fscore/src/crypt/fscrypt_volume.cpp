// Reading encrypted files with keys through the volume reader (fscrypt.hpp).
#include <algorithm>
#include <cstring>

#include "f2fscore/device.hpp"
#include "f2fscore/disk/constants.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "f2fscore/fscrypt.hpp"
#include "f2fscore/volume.hpp"

#ifndef ENOKEY
#define ENOKEY 126
#endif

namespace f2fscore::fscrypt {

Result<InodeKey> inode_key(Volume& vol, const InodeInfo& in, const Keyring& keys) {
  if (!in.is_encrypted())
    return make_error(Errc::invalid_argument, "fscrypt: inode " + std::to_string(in.ino) + " is not encrypted");
  auto xs = vol.xattrs(in);
  if (!xs) return make_error(xs.error());
  for (const auto& x : *xs) {
    if (x.index != disk::xattr_index::encryption || x.name != "c") continue;
    auto ctx = parse_context(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(x.value.data()), x.value.size()));
    if (!ctx) {
      Error e = ctx.error();
      e.message += " (inode " + std::to_string(in.ino) + ")";
      return tl::unexpected<Error>(std::move(e));
    }
    const MasterKey* k = keys.find(ctx->identifier);
    if (k == nullptr) {
      static const char* const kHex = "0123456789abcdef";
      std::string id;
      for (std::uint8_t b : ctx->identifier) id += {kHex[b >> 4], kHex[b & 15]};
      return make_error(Errc::unsupported,
                        "fscrypt: inode " + std::to_string(in.ino) + " is encrypted with master key " + id +
                            ", which was not given (ENOKEY)",
                        Error::kNoOffset, ENOKEY);
    }
    return InodeKey::derive(*k, *ctx);
  }
  return make_error(Errc::corrupt, "fscrypt: encrypted inode " + std::to_string(in.ino) + " has no encryption context (xattr 9 \"c\")");
}

Result<std::size_t> read_file(Volume& vol, const InodeInfo& in, const InodeKey& key, std::uint64_t offset,
                              std::span<std::uint8_t> out) {
  if (in.is_compressed())
    return make_error(Errc::unsupported, "fscrypt: inode " + std::to_string(in.ino) + " is compressed and encrypted (not supported)");
  if (offset >= in.size) return std::size_t{0};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), in.size - offset));
  std::vector<std::uint8_t> b(disk::kBlockSize);
  for (std::size_t done = 0; done < n;) {
    const std::uint64_t pos = offset + done, index = pos / disk::kBlockSize;
    const std::size_t in_blk = static_cast<std::size_t>(pos % disk::kBlockSize);
    const std::size_t take = std::min<std::size_t>(n - done, disk::kBlockSize - in_blk);
    auto a = vol.map_block(in, index);
    if (!a) return make_error(a.error());
    if (*a == disk::kNullAddr || *a == disk::kNewAddr) {
      std::memset(out.data() + done, 0, take);
    } else {
      F2FSCORE_TRY(read_at(vol.device(), static_cast<std::uint64_t>(*a) * disk::kBlockSize, b));
      F2FSCORE_TRY(key.decrypt_block(index, b.data()));
      std::memcpy(out.data() + done, b.data() + in_blk, take);
    }
    done += take;
  }
  return n;
}

}  // namespace f2fscore::fscrypt
