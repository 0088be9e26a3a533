// Encrypted inodes (fscrypt, the encrypt feature): with a key, the per-file
// keys, stored names and inherited policies; without it, what Linux 6.1
// shows of them (no-key names: fscrypt_fname_disk_to_usr() in
// fs/crypto/fname.c) and the changes it refuses (ENOKEY). See docs/writer.md.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

#ifndef ENOKEY
#define ENOKEY 126
#endif
#ifndef EOPNOTSUPP
#define EOPNOTSUPP 95
#endif

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace wr::fscrypt {

namespace {

// SHA-256 (FIPS 180-4), for the tail of a long no-key name.
constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_block(std::uint32_t h[8], const std::uint8_t* p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = static_cast<std::uint32_t>(p[4 * i]) << 24 | static_cast<std::uint32_t>(p[4 * i + 1]) << 16 |
           static_cast<std::uint32_t>(p[4 * i + 2]) << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[static_cast<std::size_t>(i)] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// The no-key name's layout (struct fscrypt_nokey_name in fs/crypto/fname.c):
// dirhash[2] (little-endian words on disk order), bytes[149], sha256[32].
constexpr std::size_t kDirhash = 8, kBytes = 149, kNokeyMax = kDirhash + kBytes + 32;

}  // namespace

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> data) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::size_t i = 0;
  for (; i + 64 <= data.size(); i += 64) sha256_block(h, data.data() + i);
  std::uint8_t tail[128] = {};
  const std::size_t rest = data.size() - i;
  if (rest) std::memcpy(tail, data.data() + i, rest);
  tail[rest] = 0x80;
  const std::size_t len = rest + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int k = 0; k < 8; ++k) tail[len - 1 - static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(bits >> (8 * k));
  sha256_block(h, tail);
  if (len == 128) sha256_block(h, tail + 64);
  std::array<std::uint8_t, 32> out{};
  for (std::size_t k = 0; k < 8; ++k)
    for (std::size_t b = 0; b < 4; ++b) out[4 * k + b] = static_cast<std::uint8_t>(h[k] >> (24 - 8 * b));
  return out;
}

std::string base64url_encode(std::span<const std::uint8_t> in) {
  std::string out;
  out.reserve((in.size() * 4 + 2) / 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::uint8_t c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kB64[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kB64[(acc << (6 - bits)) & 63];
  return out;
}

std::optional<std::vector<std::uint8_t>> base64url_decode(std::string_view in) {
  std::vector<std::uint8_t> out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kB64, c);
    if (c == 0 || p == nullptr) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>(acc >> bits));
    }
  }
  // Leftover bits must be zero, and no whole character may be left over
  // (fscrypt_base64url_decode()).
  if (bits >= 6 || (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

std::string nokey_name(std::string_view ciphertext, std::uint32_t hash) {
  std::vector<std::uint8_t> n(kDirhash, 0);
  for (int k = 0; k < 4; ++k) n[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(hash >> (8 * k));
  const auto* c = reinterpret_cast<const std::uint8_t*>(ciphertext.data());
  if (ciphertext.size() <= kBytes) {
    n.insert(n.end(), c, c + ciphertext.size());
  } else {
    n.insert(n.end(), c, c + kBytes);
    const auto d = sha256(std::span<const std::uint8_t>(c + kBytes, ciphertext.size() - kBytes));
    n.insert(n.end(), d.begin(), d.end());
  }
  return base64url_encode(n);
}

bool nokey_name_plausible(std::string_view name) {
  // The decoded form holds the dirhash and at least one byte, at most
  // FSCRYPT_NOKEY_NAME_MAX: 12 to 252 characters.
  return name.size() >= 12 && name.size() <= (kNokeyMax * 4 + 2) / 3;
}

}  // namespace wr::fscrypt

Result<const fscrypt::InodeKey*> Writer::Impl::key_for(nid_t ino) {
  auto in = node(ino);
  if (!in) return make_error(in.error());
  if (!((*in)->i.i_advise & advise::encrypt)) return static_cast<const fscrypt::InodeKey*>(nullptr);
  if (auto it = inode_keys.find(ino); it != inode_keys.end()) return it->second.get();
  if (keyring.empty())
    return errno_error(Errc::unsupported, ENOKEY, fmt("writer: inode %llu is encrypted and no key is given (ENOKEY)", ino));
  auto c = wr::xattr_get(*this, ino, xattr_index::encryption, "c");
  if (!c) return make_error(Errc::corrupt, fmt("writer: encrypted inode %llu has no encryption context", ino));
  auto ctx = fscrypt::parse_context(*c);
  if (!ctx) return errno_error(ctx.error().code, ENOKEY, fmt("writer: inode %llu: ", ino) + ctx.error().message);
  const fscrypt::MasterKey* mk = keyring.find(ctx->identifier);
  if (mk == nullptr)
    return errno_error(Errc::unsupported, ENOKEY, fmt("writer: inode %llu is encrypted with a master key not given (ENOKEY)", ino));
  auto k = fscrypt::InodeKey::derive(*mk, *ctx);
  if (!k) return make_error(k.error());
  auto sp = std::make_shared<const fscrypt::InodeKey>(std::move(*k));
  inode_keys[ino] = sp;
  return sp.get();
}

const fscrypt::InodeKey* Writer::Impl::contents_key(nid_t ino) {
  auto in = node(ino);
  if (!in || !((*in)->i.i_advise & advise::encrypt) || ((*in)->i.i_mode.get() & 0xF000) != 0x8000) return nullptr;
  auto k = key_for(ino);
  return k ? *k : nullptr;
}

Status Writer::Impl::refuse_encrypted_compressed(nid_t ino, std::string_view what) {
  F2FSCORE_TRY(need_key(ino, what));
  auto in = node(ino);
  if (!in) return make_error(in.error());
  if (((*in)->i.i_advise & advise::encrypt) && compressed(**in))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: inode %llu is compressed and encrypted: the writer does not write such files (", ino) +
                           std::string(what) + ")");
  return {};
}

bool Writer::Impl::lacks_key(const Node& in) {
  if (!(in.i.i_advise & advise::encrypt)) return false;
  return !key_for(in.footer.ino.get());
}

Result<std::string> Writer::Impl::disk_name(nid_t dir, std::string_view name) {
  if (name == "." || name == "..") return std::string(name);
  auto k = key_for(dir);
  if (!k) {
    // Without the key the name stays as given: find_entry() takes it as a
    // no-key name, and changes are refused (need_key()).
    if (k.error().sys_errno == ENOKEY) return std::string(name);
    return make_error(k.error());
  }
  if (*k == nullptr) return std::string(name);
  auto d = node(dir);
  if (!d) return make_error(d.error());
  if ((*d)->i.i_flags.get() & iflag::casefold)
    return errno_error(Errc::unsupported, EOPNOTSUPP, fmt("writer: directory %llu is encrypted and casefolded (not supported)", dir));
  if (name.empty() || name.size() > kNameLen) return std::string(name);  // check_name() reports it
  return (*k)->encrypt_name(name, kNameLen);
}

Status Writer::Impl::inherit_encryption(nid_t dir, nid_t ino) {
  auto dk = key_for(dir);
  if (!dk) return make_error(dk.error());
  if (*dk == nullptr) return {};
  auto in = node(ino);
  if (!in) return make_error(in.error());
  (*in)->i.i_advise |= advise::enc_name;
  const std::uint16_t type = (*in)->i.i_mode.get() & 0xF000;
  mark_dirty(ino);
  if (type != 0x8000 && type != 0x4000 && type != 0xA000) return {};
  fscrypt::Context ctx = (*dk)->context();
  auto nonce = fscrypt::random_nonce();
  if (!nonce) return make_error(nonce.error());
  ctx.nonce = *nonce;
  const fscrypt::MasterKey* mk = keyring.find(ctx.identifier);
  if (mk == nullptr) return errno_error(Errc::unsupported, ENOKEY, "writer: the directory's master key is not given (ENOKEY)");
  auto k = fscrypt::InodeKey::derive(*mk, ctx);
  if (!k) return make_error(k.error());
  const std::vector<std::uint8_t> v = ctx.encode();
  const std::span<const std::uint8_t> sv(v);
  F2FSCORE_TRY(wr::xattr_set(*this, ino, xattr_index::encryption, "c", &sv, XattrSet::any));
  auto in2 = node(ino);
  if (!in2) return make_error(in2.error());
  (*in2)->i.i_advise |= advise::encrypt;
  // The writer does not compress encrypted files: an inherited
  // F2FS_COMPR_FL is dropped.
  if (type == 0x8000) (*in2)->i.i_flags.set((*in2)->i.i_flags.get() & ~iflag::compr);
  mark_dirty(ino);
  inode_keys[ino] = std::make_shared<const fscrypt::InodeKey>(std::move(*k));
  return {};
}

Status Writer::Impl::same_policy(nid_t dir, nid_t ino) {
  auto dk = key_for(dir);
  if (!dk) return make_error(dk.error());
  if (*dk == nullptr) return {};
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const std::uint16_t type = (*in)->i.i_mode.get() & 0xF000;
  if (type != 0x8000 && type != 0x4000 && type != 0xA000) return {};  // never encrypted: no restriction
  auto ik = key_for(ino);
  if (!ik) return make_error(ik.error());
  const fscrypt::Context& a = (*dk)->context();
  if (*ik != nullptr) {
    const fscrypt::Context& b = (*ik)->context();
    if (a.identifier == b.identifier && a.contents_mode == b.contents_mode && a.filenames_mode == b.filenames_mode &&
        a.flags == b.flags)
      return {};
  }
  return errno_error(Errc::invalid_argument, EXDEV,
                     fmt("writer: inode %llu does not have the encryption policy of directory %llu (EXDEV)", ino, dir));
}

// The path of `ino` as its inode records it (i_pino and i_name up to the
// root; a hard link's other names are not seen), names in encrypted
// directories as no-key names.
std::string Writer::Impl::path_hint(nid_t ino) {
  std::string path;
  const nid_t root = sb.root_ino.get();
  for (int depth = 0; ino != root && depth < 64; ++depth) {
    auto in = node(ino);
    if (!in) return fmt("(inode %llu)", ino) + path;
    const std::string name(reinterpret_cast<const char*>((*in)->i.i_name),
                           std::min<std::size_t>((*in)->i.i_namelen.get(), sizeof((*in)->i.i_name)));
    const nid_t parent = (*in)->i.i_pino.get();
    auto pn = node(parent);
    if (parent == 0 || !pn) return fmt("(inode %llu)", ino) + path;
    std::string shown = lacks_key(**pn) ? wr::fscrypt::nokey_name(name, dentry_hash(name)) : name;
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    path = "/" + shown + path;
    ino = parent;
  }
  return path.empty() ? "/" : path;
}

Status Writer::Impl::need_key(nid_t ino, std::string_view what) {
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const bool dir = ((*in)->i.i_mode.get() & 0xF000) == 0x4000;
  if (!lacks_key(**in)) return {};
  return errno_error(Errc::unsupported, ENOKEY,
                     "writer: " + std::string(what) + ": " + (dir ? "directory \"" : "\"") + path_hint(ino) +
                         fmt("\" (inode %llu) is encrypted and its key is not given; nothing written (ENOKEY, as Linux)", ino));
}

// fscrypt_ioctl_set_policy() in fs/crypto/policy.c with a v2 policy: an
// empty directory gets a context with a random nonce; the same policy on an
// encrypted directory is nothing, another EEXIST.
Status Writer::set_encryption_policy(nid_t dir, const std::array<std::uint8_t, 64>& key, std::uint32_t padding) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  if (!fscrypt::supported())
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: this build has no OpenSSL (F2FSCORE_WITH_OPENSSL): no encryption");
  if (!(w.sb.feature.get() & feature::encrypt))
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: the volume has no encrypt feature (f2fscore-tune -O encrypt)");
  std::uint8_t flags = 0;
  switch (padding) {
    case 4: flags = 0; break;
    case 8: flags = 1; break;
    case 16: flags = 2; break;
    case 32: flags = 3; break;
    default: return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: name padding %llu (4, 8, 16 or 32)", padding));
  }
  auto id = fscrypt::key_identifier(key);
  if (!id) return make_error(id.error());
  if (w.keyring.find(*id) == nullptr)
    return errno_error(Errc::unsupported, ENOKEY, "writer: the policy's master key is not among MountOptions::fscrypt_keys (ENOKEY)");
  auto in = w.node(dir);
  if (!in) return make_error(in.error());
  if (((*in)->i.i_mode.get() & 0xF000) != 0x4000)
    return errno_error(Errc::invalid_argument, ENOTDIR, fmt("writer: inode %llu is not a directory (ENOTDIR)", dir));
  fscrypt::Context ctx;
  ctx.flags = flags;
  ctx.identifier = *id;
  if ((*in)->i.i_advise & advise::encrypt) {
    auto k = w.key_for(dir);
    if (!k) return make_error(k.error());
    const fscrypt::Context& c = (*k)->context();
    if (c.identifier == ctx.identifier && c.flags == ctx.flags && c.contents_mode == ctx.contents_mode &&
        c.filenames_mode == ctx.filenames_mode)
      return {};
    return errno_error(Errc::exists, EEXIST, fmt("writer: directory %llu has another encryption policy (EEXIST)", dir));
  }
  F2FSCORE_TRY(w.refuse_flagged(dir, false, "no encryption policy"));
  auto empty = w.dir_empty(dir);
  if (!empty) return make_error(empty.error());
  if (!*empty) return errno_error(Errc::invalid_argument, ENOTEMPTY, fmt("writer: directory %llu is not empty (ENOTEMPTY)", dir));
  auto in2 = w.node(dir);
  if (!in2) return make_error(in2.error());
  if ((*in2)->i.i_flags.get() & iflag::casefold)
    return errno_error(Errc::unsupported, EOPNOTSUPP, "writer: encrypted casefolded directories are not supported");
  auto nonce = fscrypt::random_nonce();
  if (!nonce) return make_error(nonce.error());
  ctx.nonce = *nonce;
  auto k = fscrypt::InodeKey::derive(key, ctx);
  if (!k) return make_error(k.error());
  const std::vector<std::uint8_t> v = ctx.encode();
  const std::span<const std::uint8_t> sv(v);
  F2FSCORE_TRY(wr::xattr_set(w, dir, xattr_index::encryption, "c", &sv, XattrSet::create));
  auto in3 = w.node(dir);
  if (!in3) return make_error(in3.error());
  (*in3)->i.i_advise |= advise::encrypt;
  w.set_ctime(**in3);
  w.mark_dirty(dir);
  w.inode_keys[dir] = std::make_shared<const fscrypt::InodeKey>(std::move(*k));
  return {};
}

}  // namespace f2fscore
