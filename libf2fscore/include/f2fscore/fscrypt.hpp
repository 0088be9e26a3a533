// fscrypt v2 (the encrypt feature): master keys, the per-file keys derived
// from them, and the ciphers of contents, names and symlink targets, as
// Linux 6.1's fs/crypto (keysetup.c, hkdf.c, fname.c, crypto.c, policy.c,
// hooks.c). Through OpenSSL's libcrypto: a build without it
// (F2FSCORE_WITH_OPENSSL=OFF) refuses every key with Errc::unsupported.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/result.hpp"

namespace f2fscore {
class Volume;
struct InodeInfo;
}  // namespace f2fscore

namespace f2fscore::fscrypt {

/// A v2 master key as FS_IOC_ADD_ENCRYPTION_KEY takes it (64 raw bytes:
/// FSCRYPT_MAX_KEY_SIZE; what the oracle's `gtool encrypt-dir` adds).
using MasterKey = std::array<std::uint8_t, 64>;
/// FSCRYPT_KEY_IDENTIFIER_SIZE bytes naming a v2 master key.
using KeyIdentifier = std::array<std::uint8_t, 16>;

/// Whether this build has the ciphers (OpenSSL).
bool supported() noexcept;

/// A master key from a key file's bytes: exactly 64 (invalid_argument
/// naming the size otherwise); unsupported in a build without OpenSSL.
Result<MasterKey> parse_master_key(std::span<const std::uint8_t> bytes);

/// The identifier of a v2 master key: HKDF-SHA512 (RFC 5869, no salt) of
/// the key, expanded with info "fscrypt\0" + HKDF_CONTEXT_KEY_IDENTIFIER
/// (1) to 16 bytes (fscrypt_init_hkdf(), fscrypt_hkdf_expand() in
/// fs/crypto/hkdf.c). unsupported without OpenSSL.
Result<KeyIdentifier> key_identifier(const MasterKey& key);

/// FSCRYPT_MODE_* values of the context.
inline constexpr std::uint8_t kModeAes256Xts = 1, kModeAes256Cts = 4;

/// struct fscrypt_context_v2 (xattr index 9, name "c"): 40 bytes.
struct Context {
  std::uint8_t contents_mode = kModeAes256Xts;
  std::uint8_t filenames_mode = kModeAes256Cts;
  std::uint8_t flags = 0;  ///< FSCRYPT_POLICY_FLAGS_PAD_* in bits 0-1
  KeyIdentifier identifier{};
  std::array<std::uint8_t, 16> nonce{};
  /// Name padding (4 << (flags & 3)): 4, 8, 16 or 32 bytes.
  std::uint32_t padding() const noexcept { return 4u << (flags & 3u); }
  std::vector<std::uint8_t> encode() const;
};
/// Parses a stored context: Errc::unsupported for a v1 context, a mode
/// other than AES-256-XTS / AES-256-CTS, or a flag other than padding
/// (DIRECT_KEY, IV_INO_LBLK_64/32); Errc::corrupt for a wrong size or
/// version.
Result<Context> parse_context(std::span<const std::uint8_t> bytes);

/// The keys of one encrypted inode: the per-file key derived from its
/// master key and nonce (HKDF_CONTEXT_PER_FILE_ENC_KEY, 2), 64 bytes for
/// the contents (AES-256-XTS) of a regular file, 32 for the names of a
/// directory or the target of a symlink (AES-256-CTS-CBC), as
/// fscrypt_setup_v2_file_key() in fs/crypto/keysetup.c.
class InodeKey {
 public:
  /// `key` must be the master key `ctx.identifier` names (invalid_argument
  /// otherwise).
  static Result<InodeKey> derive(const MasterKey& key, const Context& ctx);

  /// One 4 KiB data unit of a regular file in place, AES-256-XTS with the
  /// IV the little-endian file block number `index` (fscrypt_generate_iv()
  /// without DIRECT_KEY or IV_INO_LBLK flags). `block` is 4096 bytes.
  Status encrypt_block(std::uint64_t index, std::uint8_t* block) const;
  Status decrypt_block(std::uint64_t index, std::uint8_t* block) const;

  /// A name of an encrypted directory: NUL-padded to a multiple of the
  /// policy's padding (at least 16 bytes, at most `max_len`), then
  /// AES-256-CTS-CBC (CBC-CS3) with a zero IV (fscrypt_fname_encrypt()).
  Result<std::string> encrypt_name(std::string_view plain, std::uint32_t max_len = 255) const;
  /// The inverse, NUL padding removed (fscrypt_fname_decrypt()); corrupt
  /// for a ciphertext shorter than 16 bytes.
  Result<std::string> decrypt_name(std::string_view cipher) const;

  /// A symlink target's stored form (struct fscrypt_symlink_data: le16
  /// ciphertext length, the ciphertext of the target as a name), as
  /// __fscrypt_encrypt_symlink() in fs/crypto/hooks.c; `max_len` is the
  /// room for the ciphertext.
  Result<std::string> encrypt_symlink(std::string_view target, std::uint32_t max_len) const;
  /// The target from its stored form (fscrypt_get_symlink()).
  Result<std::string> decrypt_symlink(std::string_view stored) const;

  const Context& context() const noexcept { return ctx_; }

 private:
  Context ctx_;
  std::vector<std::uint8_t> key_;  ///< 64 (contents) or the first 32 of it (names)
};

/// 16 random bytes for a new context's nonce (OpenSSL's RAND_bytes, as
/// fscrypt_set_context() takes get_random_bytes()).
Result<std::array<std::uint8_t, 16>> random_nonce();

/// The master keys given to a reader or writer, found by identifier.
class Keyring {
 public:
  /// Adds `key` (its identifier computed); unsupported without OpenSSL.
  Status add(const MasterKey& key);
  /// The master key `id` names, or null.
  const MasterKey* find(const KeyIdentifier& id) const noexcept;
  bool empty() const noexcept { return keys_.empty(); }

 private:
  std::vector<std::pair<KeyIdentifier, MasterKey>> keys_;
};

// ---- Reading an encrypted volume with keys (the reader, Volume) ----

/// The key of encrypted inode `in`: its context (xattr index 9 "c") and
/// the master key it names from `keys`. Errors: Errc::unsupported with
/// sys_errno ENOKEY when `keys` lacks it, and for an unsupported policy
/// (parse_context()); Errc::corrupt when the context is missing or bad;
/// invalid_argument when `in` is not encrypted.
Result<InodeKey> inode_key(Volume& vol, const InodeInfo& in, const Keyring& keys);

/// Up to out.size() plaintext bytes of encrypted regular file `in` at
/// `offset` (short at EOF; holes read as zeros): each 4 KiB block read
/// whole from the device and decrypted (fscrypt_decrypt_pagecache_blocks()).
/// Errc::unsupported for a compressed encrypted file.
Result<std::size_t> read_file(Volume& vol, const InodeInfo& in, const InodeKey& key, std::uint64_t offset,
                              std::span<std::uint8_t> out);

}  // namespace f2fscore::fscrypt
