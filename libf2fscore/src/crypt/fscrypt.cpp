// fscrypt v2 keys and ciphers through OpenSSL's libcrypto (fscrypt.hpp).
#include "f2fscore/fscrypt.hpp"

#include <algorithm>
#include <cstring>

#if F2FSCORE_HAVE_OPENSSL
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif

namespace f2fscore::fscrypt {

namespace {

constexpr std::size_t kContextSize = 40;  // struct fscrypt_context_v2
constexpr std::uint8_t kContextV2 = 2;
constexpr std::uint8_t kHkdfKeyIdentifier = 1, kHkdfPerFileKey = 2;  // HKDF_CONTEXT_* in fs/crypto/fscrypt_private.h
constexpr std::size_t kAesBlock = 16;
constexpr std::uint32_t kBlock = 4096;

Status unsupported_build() {
  return make_error(Errc::unsupported, "fscrypt: this build has no OpenSSL (F2FSCORE_WITH_OPENSSL): keys cannot be used");
}

#if F2FSCORE_HAVE_OPENSSL
// HKDF-SHA512 (RFC 5869): Extract with no salt (HashLen zero bytes), then
// Expand with info "fscrypt\0" || context || info.
Result<std::vector<std::uint8_t>> hkdf(std::span<const std::uint8_t> ikm, std::uint8_t context,
                                       std::span<const std::uint8_t> info, std::size_t len) {
  std::uint8_t salt[64] = {};
  std::uint8_t prk[64];
  unsigned prk_len = 0;
  if (HMAC(EVP_sha512(), salt, sizeof salt, ikm.data(), ikm.size(), prk, &prk_len) == nullptr || prk_len != 64)
    return make_error(Errc::io, "fscrypt: HMAC-SHA512 failed");
  std::vector<std::uint8_t> full_info = {'f', 's', 'c', 'r', 'y', 'p', 't', 0, context};
  full_info.insert(full_info.end(), info.begin(), info.end());
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> t;
  for (std::uint8_t counter = 1; out.size() < len; ++counter) {
    std::vector<std::uint8_t> msg = t;
    msg.insert(msg.end(), full_info.begin(), full_info.end());
    msg.push_back(counter);
    std::uint8_t block[64];
    unsigned n = 0;
    if (HMAC(EVP_sha512(), prk, 64, msg.data(), msg.size(), block, &n) == nullptr || n != 64)
      return make_error(Errc::io, "fscrypt: HMAC-SHA512 failed");
    t.assign(block, block + 64);
    out.insert(out.end(), block, block + 64);
  }
  out.resize(len);
  return out;
}

// One cipher call: `cipher` over `len` bytes of `in` into `out`, no padding.
Status run_cipher(const EVP_CIPHER* cipher, bool enc, const std::uint8_t* key, const std::uint8_t* iv,
                  const std::uint8_t* in, std::uint8_t* out, std::size_t len) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  if (c == nullptr) return make_error(Errc::io, "fscrypt: EVP_CIPHER_CTX_new failed");
  int n = 0, m = 0;
  const bool ok = EVP_CipherInit_ex(c, cipher, nullptr, key, iv, enc ? 1 : 0) == 1 && EVP_CIPHER_CTX_set_padding(c, 0) == 1 &&
                  EVP_CipherUpdate(c, out, &n, in, static_cast<int>(len)) == 1 && EVP_CipherFinal_ex(c, out + n, &m) == 1 &&
                  static_cast<std::size_t>(n + m) == len;
  EVP_CIPHER_CTX_free(c);
  if (!ok) return make_error(Errc::io, "fscrypt: the AES cipher failed");
  return {};
}

// AES-256-CBC-CS3 with a zero IV, as Linux's cts(cbc(aes)): CBC over the
// text padded with zeros to whole blocks, the last two blocks swapped and
// the (new) last one cut to the text's length. `len` >= 16.
Status cts_encrypt(const std::uint8_t* key, const std::uint8_t* in, std::uint8_t* out, std::size_t len) {
  const std::uint8_t iv[kAesBlock] = {};
  if (len == kAesBlock) return run_cipher(EVP_aes_256_cbc(), true, key, iv, in, out, len);
  const std::size_t padded = (len + kAesBlock - 1) / kAesBlock * kAesBlock;
  std::vector<std::uint8_t> p(padded, 0), c(padded);
  std::memcpy(p.data(), in, len);
  F2FSCORE_TRY(run_cipher(EVP_aes_256_cbc(), true, key, iv, p.data(), c.data(), padded));
  const std::size_t last = padded - kAesBlock, prev = last - kAesBlock, tail = len - last;
  std::memcpy(out, c.data(), prev);
  std::memcpy(out + prev, c.data() + last, kAesBlock);
  std::memcpy(out + last, c.data() + prev, tail);
  return {};
}

Status cts_decrypt(const std::uint8_t* key, const std::uint8_t* in, std::uint8_t* out, std::size_t len) {
  const std::uint8_t iv[kAesBlock] = {};
  if (len == kAesBlock) return run_cipher(EVP_aes_256_cbc(), false, key, iv, in, out, len);
  const std::size_t padded = (len + kAesBlock - 1) / kAesBlock * kAesBlock;
  const std::size_t last = padded - kAesBlock, prev = last - kAesBlock, tail = len - last;
  // D = AES^-1(C_n) = P_n (zero-padded) xor C_{n-1}: the bytes of C_{n-1}
  // past the tail are D's.
  std::uint8_t d[kAesBlock];
  F2FSCORE_TRY(run_cipher(EVP_aes_256_ecb(), false, key, nullptr, in + prev, d, kAesBlock));
  std::vector<std::uint8_t> c(padded);
  std::memcpy(c.data(), in, prev);
  std::memcpy(c.data() + prev, in + last, tail);
  std::memcpy(c.data() + prev + tail, d + tail, kAesBlock - tail);
  for (std::size_t k = 0; k < tail; ++k) out[last + k] = static_cast<std::uint8_t>(d[k] ^ c[prev + k]);
  // The blocks before: plain CBC over C_1 .. C_{n-1}.
  std::vector<std::uint8_t> p(last);
  F2FSCORE_TRY(run_cipher(EVP_aes_256_cbc(), false, key, iv, c.data(), p.data(), last));
  std::memcpy(out, p.data(), last);
  return {};
}
#endif

}  // namespace

bool supported() noexcept {
#if F2FSCORE_HAVE_OPENSSL
  return true;
#else
  return false;
#endif
}

Result<MasterKey> parse_master_key(std::span<const std::uint8_t> bytes) {
  if (!supported()) return make_error(unsupported_build().error());
  MasterKey k{};
  if (bytes.size() != k.size())
    return make_error(Errc::invalid_argument, "fscrypt: a v2 master key is 64 bytes, this one " + std::to_string(bytes.size()));
  std::copy(bytes.begin(), bytes.end(), k.begin());
  return k;
}

Result<KeyIdentifier> key_identifier(const MasterKey& key) {
#if F2FSCORE_HAVE_OPENSSL
  auto id = hkdf(key, kHkdfKeyIdentifier, {}, 16);
  if (!id) return make_error(id.error());
  KeyIdentifier out{};
  std::copy(id->begin(), id->end(), out.begin());
  return out;
#else
  (void)key;
  return make_error(unsupported_build().error());
#endif
}

std::vector<std::uint8_t> Context::encode() const {
  std::vector<std::uint8_t> b(kContextSize, 0);
  b[0] = kContextV2, b[1] = contents_mode, b[2] = filenames_mode, b[3] = flags;
  std::copy(identifier.begin(), identifier.end(), b.begin() + 8);
  std::copy(nonce.begin(), nonce.end(), b.begin() + 24);
  return b;
}

Result<Context> parse_context(std::span<const std::uint8_t> b) {
  if (b.empty()) return make_error(Errc::corrupt, "fscrypt: an empty encryption context");
  if (b[0] == 1) return make_error(Errc::unsupported, "fscrypt: a v1 encryption context (only v2 policies are supported)");
  if (b[0] != kContextV2 || b.size() != kContextSize)
    return make_error(Errc::corrupt, "fscrypt: encryption context version " + std::to_string(b[0]) + " of " +
                                         std::to_string(b.size()) + " bytes (v2: 40)");
  Context c;
  c.contents_mode = b[1], c.filenames_mode = b[2], c.flags = b[3];
  if (c.contents_mode != kModeAes256Xts || c.filenames_mode != kModeAes256Cts)
    return make_error(Errc::unsupported, "fscrypt: modes " + std::to_string(c.contents_mode) + "/" + std::to_string(c.filenames_mode) +
                                             " (supported: AES-256-XTS contents, AES-256-CTS names)");
  if (c.flags & ~3u)
    return make_error(Errc::unsupported, "fscrypt: policy flags " + std::to_string(c.flags) +
                                             " (DIRECT_KEY and IV_INO_LBLK_64/32 are not supported)");
  std::copy(b.begin() + 8, b.begin() + 24, c.identifier.begin());
  std::copy(b.begin() + 24, b.begin() + 40, c.nonce.begin());
  return c;
}

Result<InodeKey> InodeKey::derive(const MasterKey& key, const Context& ctx) {
#if F2FSCORE_HAVE_OPENSSL
  auto id = key_identifier(key);
  if (!id) return make_error(id.error());
  if (*id != ctx.identifier) return make_error(Errc::invalid_argument, "fscrypt: the master key is not the one the context names");
  auto k = hkdf(key, kHkdfPerFileKey, ctx.nonce, 64);
  if (!k) return make_error(k.error());
  InodeKey out;
  out.ctx_ = ctx;
  out.key_ = std::move(*k);
  return out;
#else
  (void)key, (void)ctx;
  return make_error(unsupported_build().error());
#endif
}

Status InodeKey::encrypt_block(std::uint64_t index, std::uint8_t* block) const {
#if F2FSCORE_HAVE_OPENSSL
  std::uint8_t iv[16] = {};
  for (int k = 0; k < 8; ++k) iv[k] = static_cast<std::uint8_t>(index >> (8 * k));
  std::vector<std::uint8_t> tmp(block, block + kBlock);
  return run_cipher(EVP_aes_256_xts(), true, key_.data(), iv, tmp.data(), block, kBlock);
#else
  (void)index, (void)block;
  return unsupported_build();
#endif
}

Status InodeKey::decrypt_block(std::uint64_t index, std::uint8_t* block) const {
#if F2FSCORE_HAVE_OPENSSL
  std::uint8_t iv[16] = {};
  for (int k = 0; k < 8; ++k) iv[k] = static_cast<std::uint8_t>(index >> (8 * k));
  std::vector<std::uint8_t> tmp(block, block + kBlock);
  return run_cipher(EVP_aes_256_xts(), false, key_.data(), iv, tmp.data(), block, kBlock);
#else
  (void)index, (void)block;
  return unsupported_build();
#endif
}

Result<std::string> InodeKey::encrypt_name(std::string_view plain, std::uint32_t max_len) const {
#if F2FSCORE_HAVE_OPENSSL
  if (plain.empty() || plain.size() > max_len)
    return make_error(Errc::invalid_argument, "fscrypt: a name of " + std::to_string(plain.size()) + " bytes (1 to " +
                                                  std::to_string(max_len) + ")");
  // fscrypt_fname_encrypted_size(): at least FSCRYPT_FNAME_MIN_MSG_LEN
  // (16), rounded up to the padding, at most max_len.
  const std::size_t pad = ctx_.padding();
  std::size_t len = std::max<std::size_t>(plain.size(), kAesBlock);
  len = std::min<std::size_t>((len + pad - 1) / pad * pad, max_len);
  std::vector<std::uint8_t> p(len, 0);
  std::memcpy(p.data(), plain.data(), plain.size());
  std::string out(len, '\0');
  F2FSCORE_TRY(cts_encrypt(key_.data(), p.data(), reinterpret_cast<std::uint8_t*>(out.data()), len));
  return out;
#else
  (void)plain, (void)max_len;
  return make_error(unsupported_build().error());
#endif
}

Result<std::string> InodeKey::decrypt_name(std::string_view cipher) const {
#if F2FSCORE_HAVE_OPENSSL
  if (cipher.size() < kAesBlock)
    return make_error(Errc::corrupt, "fscrypt: an encrypted name of " + std::to_string(cipher.size()) + " bytes (at least 16)");
  std::string out(cipher.size(), '\0');
  F2FSCORE_TRY(cts_decrypt(key_.data(), reinterpret_cast<const std::uint8_t*>(cipher.data()),
                           reinterpret_cast<std::uint8_t*>(out.data()), cipher.size()));
  out.resize(std::strlen(out.c_str()));  // the NUL padding
  return out;
#else
  (void)cipher;
  return make_error(unsupported_build().error());
#endif
}

Result<std::string> InodeKey::encrypt_symlink(std::string_view target, std::uint32_t max_len) const {
  auto c = encrypt_name(target, max_len);
  if (!c) return make_error(c.error());
  std::string out(2, '\0');
  out[0] = static_cast<char>(c->size() & 0xff);
  out[1] = static_cast<char>(c->size() >> 8);
  return out + *c;
}

Result<std::string> InodeKey::decrypt_symlink(std::string_view stored) const {
  if (stored.size() < 2) return make_error(Errc::corrupt, "fscrypt: an encrypted symlink of fewer than 2 bytes");
  const std::size_t len = static_cast<std::uint8_t>(stored[0]) | static_cast<std::size_t>(static_cast<std::uint8_t>(stored[1])) << 8;
  if (len == 0 || len + 2 > stored.size())
    return make_error(Errc::corrupt, "fscrypt: an encrypted symlink's length " + std::to_string(len) + " in " +
                                         std::to_string(stored.size()) + " bytes");
  return decrypt_name(stored.substr(2, len));
}

Result<std::array<std::uint8_t, 16>> random_nonce() {
#if F2FSCORE_HAVE_OPENSSL
  std::array<std::uint8_t, 16> n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) return make_error(Errc::io, "fscrypt: RAND_bytes failed");
  return n;
#else
  return make_error(unsupported_build().error());
#endif
}

Status Keyring::add(const MasterKey& key) {
  auto id = key_identifier(key);
  if (!id) return make_error(id.error());
  if (find(*id) == nullptr) keys_.emplace_back(*id, key);
  return {};
}

const MasterKey* Keyring::find(const KeyIdentifier& id) const noexcept {
  for (const auto& [i, k] : keys_)
    if (i == id) return &k;
  return nullptr;
}

}  // namespace f2fscore::fscrypt
