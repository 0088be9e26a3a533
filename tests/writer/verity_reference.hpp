// The fs-verity reference computation the writer's tests compare with
// (writer_verity_test.cpp, writer_model_test.cpp): the Merkle tree, the
// fsverity_descriptor and the file digest written out by hand from the format
// of Documentation/filesystems/fsverity.rst (Linux 6.1) — 4 KiB blocks,
// SHA-256, 128 hashes a tree block, the salt padded with zeroes to 64 bytes
// before each hashed block — with the test support's own SHA-256
// (tests/support, FIPS 180-4), not the library's OpenSSL path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "support/test_support.hpp"

namespace writertest::verityref {

using Bytes = std::vector<std::uint8_t>;

inline Bytes unhex(const std::string& h) {
  Bytes b(h.size() / 2);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(std::stoul(h.substr(2 * i, 2), nullptr, 16));
  return b;
}

inline std::string hex(const Bytes& b) {
  std::string s;
  char t[3];
  for (auto c : b) {
    std::snprintf(t, sizeof t, "%02x", c);
    s += t;
  }
  return s;
}

/// SHA-256(salt padded with zeros to 64 bytes, if any || data).
inline Bytes H(const Bytes& salt, const std::uint8_t* p, std::size_t n) {
  f2fstest::Sha256 s;
  if (!salt.empty()) {
    Bytes pad((salt.size() + 63) / 64 * 64, 0);
    std::copy(salt.begin(), salt.end(), pad.begin());
    s.update(pad.data(), pad.size());
  }
  s.update(p, n);
  return unhex(s.hex());
}

struct Expected {
  Bytes tree;        ///< the stored tree, top level first
  Bytes descriptor;  ///< 256 bytes
  Bytes digest;      ///< SHA-256 of the descriptor (FS_IOC_MEASURE_VERITY)
};

/// The tree, descriptor and digest of a file holding `data`.
inline Expected expected(const std::string& data, const Bytes& salt) {
  std::vector<Bytes> hashes;
  for (std::size_t off = 0; off < data.size(); off += 4096) {
    Bytes blk(4096, 0);
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(off),
              data.begin() + static_cast<std::ptrdiff_t>(std::min(data.size(), off + 4096)), blk.begin());
    hashes.push_back(H(salt, blk.data(), blk.size()));
  }
  std::vector<Bytes> levels;  // level 0 first
  while (hashes.size() > 1) {
    Bytes lv((hashes.size() + 127) / 128 * 4096, 0);
    for (std::size_t i = 0; i < hashes.size(); ++i) std::copy(hashes[i].begin(), hashes[i].end(), lv.begin() + static_cast<std::ptrdiff_t>(32 * i));
    std::vector<Bytes> next;
    for (std::size_t o = 0; o < lv.size(); o += 4096) next.push_back(H(salt, lv.data() + o, 4096));
    levels.push_back(std::move(lv));
    hashes = std::move(next);
  }
  Expected e;
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) e.tree.insert(e.tree.end(), it->begin(), it->end());
  e.descriptor.assign(256, 0);
  e.descriptor[0] = 1;   // version
  e.descriptor[1] = 1;   // FS_VERITY_HASH_ALG_SHA256
  e.descriptor[2] = 12;  // log_blocksize
  e.descriptor[3] = static_cast<std::uint8_t>(salt.size());
  for (int i = 0; i < 8; ++i) e.descriptor[8 + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(data.size()) >> (8 * i));
  if (!hashes.empty()) std::copy(hashes[0].begin(), hashes[0].end(), e.descriptor.begin() + 16);
  std::copy(salt.begin(), salt.end(), e.descriptor.begin() + 80);
  e.digest = H({}, e.descriptor.data(), e.descriptor.size());
  return e;
}

/// The value of f2fs's verity xattr (index 11, "v": struct
/// fsverity_descriptor_location in fs/f2fs/verity.c): le32 version 1, le32
/// size of the descriptor (256, no signature), le64 its position, after the
/// tree, which starts at round_up(i_size, 65536) (f2fs_verity_metadata_pos()).
inline Bytes location(std::uint64_t i_size, const Expected& e) {
  const std::uint64_t pos = (i_size + 65535) / 65536 * 65536 + e.tree.size();
  Bytes v = {1, 0, 0, 0, 0, 1, 0, 0};
  for (int k = 0; k < 8; ++k) v.push_back(static_cast<std::uint8_t>(pos >> (8 * k)));
  return v;
}

}  // namespace writertest::verityref
