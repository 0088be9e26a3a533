// Directories: dentry blocks and inline dentries, hashed lookup as
// f2fs_find_entry() in fs/f2fs/dir.c (casefolded directories included),
// path resolution.
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "reader/volume_internal.hpp"
#include "util/text.hpp"

namespace f2fscore {

using namespace disk;

namespace {
using detail::fmt;

// Parses `slots` dentries laid out as bitmap / DirEntry[] / names[][8].
// `offset`: the byte address of the block holding them, for errors.
Status parse_dentries(const std::uint8_t* bitmap, const DirEntry* de, const std::uint8_t* names, std::uint32_t slots,
                      nid_t max_nid, const std::string& where, std::vector<DirEntryInfo>& out,
                      std::uint64_t offset = Error::kNoOffset) {
  Status st;
  for_each_dentry(bitmap, de, names, slots, [&](const DentrySlot& d) {
    if (d.fault == DentryFault::empty_slot || d.fault == DentryFault::zero_name_len) return true;  // the kernel skips it
    if (d.fault == DentryFault::name_past_end) {
      st = make_error(Errc::corrupt,
                      where + fmt(": dentry slot %llu has name_len %llu past the end", d.slot, d.entry.name_len.get()), offset);
      return false;
    }
    if (d.entry.ino.get() >= max_nid) {
      st = make_error(Errc::corrupt, where + fmt(": dentry slot %llu points at ino %llu past the NAT", d.slot, d.entry.ino.get()),
                      offset);
      return false;
    }
    DirEntryInfo e;
    e.name.assign(d.name);
    e.ino = d.entry.ino.get();
    e.type = static_cast<FileType>(d.entry.file_type);
    e.hash = d.entry.hash_code.get();
    out.push_back(std::move(e));
    return true;
  });
  return st;
}

std::uint64_t dir_block_index(std::uint32_t level, std::uint32_t dir_level, std::uint32_t idx) {
  std::uint64_t bidx = 0;
  for (std::uint32_t i = 0; i < level; ++i) bidx += static_cast<std::uint64_t>(dir_buckets(i, dir_level)) * bucket_blocks(i);
  return bidx + static_cast<std::uint64_t>(idx) * bucket_blocks(level);
}
}  // namespace

Result<std::vector<DirEntryInfo>> Volume::read_dir(const InodeInfo& dir) {
  if (!dir.is_dir()) return make_error(Errc::invalid_argument, fmt("inode %llu is not a directory", dir.ino));
  std::vector<DirEntryInfo> out;
  if (dir.has_inline_dentry()) {
    const auto lay = inline_dentry_layout(dir.max_inline_bytes());
    const auto* base = reinterpret_cast<const std::uint8_t*>(&dir.raw) + dir.inline_offset();
    F2FSCORE_TRY(parse_dentries(base, reinterpret_cast<const DirEntry*>(base + lay.dentry_offset()), base + lay.filename_offset(),
                            lay.nr_slots, max_nid(), fmt("directory %llu (inline)", dir.ino) + at_block(dir.node_blkaddr),
                            out, static_cast<std::uint64_t>(dir.node_blkaddr) * kBlockSize));
    // "." and ".." are stored entries of the inline area too
    // (f2fs_do_make_empty_dir() in fs/f2fs/dir.c).
    return out;
  }
  // i_size is bounded (read_inode), but a sparse tree may span 2^30
  // blocks: holes left by missing nodes are skipped a node at a time. A
  // block mapped twice is refused, so the entries stay bounded by the
  // dentry blocks on the device.
  const std::uint64_t nblocks = (dir.size + kBlockSize - 1) / kBlockSize;
  std::vector<std::uint8_t> b(kBlockSize);
  FileMapper m(*this, dir);
  std::unordered_map<block_t, std::uint64_t> seen;
  for (std::uint64_t i = 0, next = 0; i < nblocks; i = next) {
    auto a = m.map(i, &next);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr || *a == kNewAddr) continue;
    if (!is_valid_main_addr(*a))
      return make_error(Errc::corrupt,
                        fmt("directory %llu: block %llu maps to 0x%llx, outside the main area", dir.ino, i, *a) +
                            at_block(m.holder()),
                        m.holder() * kBlockSize);
    if (auto [it, fresh] = seen.emplace(*a, i); !fresh)
      return make_error(Errc::corrupt,
                        fmt("directory %llu: blocks %llu and %llu both map to block ", dir.ino, it->second, i) +
                            std::to_string(*a),
                        static_cast<std::uint64_t>(*a) * kBlockSize);
    F2FSCORE_TRY(read_block(*a, b));
    const auto* d = reinterpret_cast<const DentryBlock*>(b.data());
    F2FSCORE_TRY(parse_dentries(d->dentry_bitmap, d->dentry, &d->filename[0][0], kNrDentryInBlock, max_nid(),
                            fmt("directory %llu block %llu", dir.ino, i) + at_block(*a), out,
                            static_cast<std::uint64_t>(*a) * kBlockSize));
  }
  return out;
}

Result<DirEntryInfo> Volume::lookup(const InodeInfo& dir, std::string_view name) {
  if (!dir.is_dir()) return make_error(Errc::invalid_argument, fmt("inode %llu is not a directory", dir.ino));
  // Casefolded directories without casefolding built in: exact bytes over
  // the whole directory (stored hashes are of folded names).
  const bool cf_exact = dir.is_casefolded() && !dir.is_encrypted() && !casefold_supported();
  auto not_found = [&] {
    return make_error(Errc::not_found, "no entry \"" + std::string(name) + "\"" + fmt(" in directory %llu", dir.ino) +
                                           (cf_exact ? " (casefolded; this build compares exact bytes only)" : ""));
  };
  if (dir.is_encrypted() || cf_exact || name == "." || name == "..") {
    // Encrypted names need the key for their hashes: match the stored
    // bytes over the whole directory.
    auto all = read_dir(dir);
    if (!all) return make_error(all.error());
    for (auto& d : *all)
      if (d.name == name) return d;
    return not_found();
  }

  // As f2fs_find_entry(): the hash picks one bucket per level; in a
  // casefolded directory the hash is of the folded name and names match
  // when they fold alike (f2fs_init_casefolded_name(), f2fs_match_name()).
  const bool casefolded = dir.is_casefolded();
  const std::uint16_t enc_flags = impl_->sb.s_encoding_flags.get();
  std::optional<std::string> folded;
  if (casefolded) {
    folded = casefold_name(name);
    if (!folded && (enc_flags & kEncStrictModeFl))
      return make_error(Errc::invalid_argument, "\"" + std::string(name) + "\"" +
                                                    fmt(": not a valid name in casefolded directory %llu of a volume "
                                                        "with strict encoding", dir.ino));
  }
  const std::uint32_t hash = casefolded ? dentry_hash_casefold(name, enc_flags) : dentry_hash(name);
  auto matches = [&](const DirEntryInfo& e, bool check_hash) {
    if (check_hash && e.hash != hash) return false;
    if (folded) return casefold_match(*folded, e.name, enc_flags);
    return e.name == name;
  };

  const std::uint32_t depth = dir.raw.i.i_current_depth.get();
  const std::uint32_t dir_level = dir.raw.i.i_dir_level;
  const std::uint64_t nblocks = (dir.size + kBlockSize - 1) / kBlockSize;
  std::vector<std::uint8_t> b(kBlockSize);
  std::vector<DirEntryInfo> entries;
  // The entries of directory block `bi` (none for a hole); *next: the next
  // block worth reading (holes of missing nodes are skipped whole, so a
  // sparse directory claiming 2^30 blocks is searched a node at a time).
  // A block mapped twice is refused as read_dir() does: a tree of aliased
  // nodes could otherwise map 2^30 indices to a few blocks.
  FileMapper mapper(*this, dir);
  std::unordered_map<block_t, std::uint64_t> seen;
  auto block_entries = [&](std::uint64_t bi, std::uint64_t* next) -> Status {
    entries.clear();
    auto a = mapper.map(bi, next);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr || *a == kNewAddr || !is_valid_main_addr(*a)) return {};
    if (auto [it, fresh] = seen.emplace(*a, bi); !fresh && it->second != bi)
      return make_error(Errc::corrupt,
                        fmt("directory %llu: blocks %llu and %llu both map to block ", dir.ino, it->second, bi) +
                            std::to_string(*a),
                        static_cast<std::uint64_t>(*a) * kBlockSize);
    F2FSCORE_TRY(read_block(*a, b));
    const auto* d = reinterpret_cast<const DentryBlock*>(b.data());
    return parse_dentries(d->dentry_bitmap, d->dentry, &d->filename[0][0], kNrDentryInBlock, max_nid(),
                          fmt("directory %llu block %llu", dir.ino, bi) + at_block(*a), entries,
                          static_cast<std::uint64_t>(*a) * kBlockSize);
  };
  // One search; `hashed`: only the bucket of the hash on each level, and
  // stored hashes must match. Otherwise every block of every level in order.
  auto search = [&](bool hashed) -> Result<std::optional<DirEntryInfo>> {
    if (dir.has_inline_dentry()) {
      // The inline area holds "." and ".." as real entries, unlike read_dir().
      const auto lay = inline_dentry_layout(dir.max_inline_bytes());
      const auto* base = reinterpret_cast<const std::uint8_t*>(&dir.raw) + dir.inline_offset();
      entries.clear();
      F2FSCORE_TRY(parse_dentries(base, reinterpret_cast<const DirEntry*>(base + lay.dentry_offset()),
                              base + lay.filename_offset(), lay.nr_slots, max_nid(),
                              fmt("directory %llu (inline)", dir.ino) + at_block(dir.node_blkaddr), entries,
                              static_cast<std::uint64_t>(dir.node_blkaddr) * kBlockSize));
      for (auto& e : entries)
        if (matches(e, hashed)) return std::optional<DirEntryInfo>(e);
      return std::optional<DirEntryInfo>();
    }
    for (std::uint32_t level = 0; level < depth && level < kMaxDirHashDepth; ++level) {
      const std::uint32_t nbucket = dir_buckets(level, dir_level);
      const std::uint64_t first = dir_block_index(level, dir_level, hashed ? hash % nbucket : 0);
      const std::uint64_t count = static_cast<std::uint64_t>(bucket_blocks(level)) * (hashed ? 1 : nbucket);
      for (std::uint64_t bi = first, next = first; bi < first + count && bi < nblocks; bi = next) {
        F2FSCORE_TRY(block_entries(bi, &next));
        for (auto& e : entries)
          if (matches(e, hashed)) return std::optional<DirEntryInfo>(e);
      }
    }
    return std::optional<DirEntryInfo>();
  };

  auto found = search(true);
  if (!found) return make_error(found.error());
  // Casefolded directories fall back to a search of every entry without
  // the hash (Linux 6.1 since the linear-lookup backport, whatever
  // s_encoding_flags says; later kernels skip it under
  // F2FS_ENC_NO_COMPAT_FALLBACK_FL): entries whose stored hash another
  // implementation or kernel computed differently are still found.
  if (!*found && casefolded) {
    found = search(false);
    if (!found) return make_error(found.error());
  }
  if (!*found) return not_found();
  if ((*found)->name == "." || (*found)->name == "..")
    // "\u200b." folds to "."; Linux's f2fs finds the dot entry too, and
    // the VFS then refuses the name (ELOOP).
    return make_error(Errc::invalid_argument, "\"" + std::string(name) + "\"" +
                                                  fmt(" in casefolded directory %llu matches \"", dir.ino) +
                                                  (*found)->name + "\" (Linux: ELOOP)");
  return std::move(**found);
}

Result<InodeInfo> Volume::resolve(std::string_view path) {
  auto cur = read_inode(impl_->sb.root_ino.get());
  if (!cur) return make_error(cur.error());
  std::size_t pos = 0;
  int steps = 0;
  while (pos < path.size()) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    if (pos >= path.size()) break;
    const std::size_t end = path.find('/', pos);
    const std::string_view comp = path.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    pos = end == std::string_view::npos ? path.size() : end;
    if (++steps > 4096) return make_error(Errc::invalid_argument, "path has too many components");
    if (!cur->is_dir()) return make_error(Errc::not_found, "\"" + std::string(path) + "\": a component is not a directory");
    auto e = lookup(*cur, comp);
    if (!e) return make_error(Errc::not_found, "\"" + std::string(path) + "\": " + e.error().message);
    auto next = read_inode(e->ino);
    if (!next) return make_error(next.error());
    cur = std::move(next);
  }
  return cur;
}

}  // namespace f2fscore
