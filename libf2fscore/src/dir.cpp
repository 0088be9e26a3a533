// Directories: dentry blocks and inline dentries, hashed lookup as
// f2fs_find_entry() in fs/f2fs/dir.c, path resolution.
#include <cstdio>
#include <cstring>

#include "f2fscore/checksum.hpp"
#include "volume_internal.hpp"

namespace f2fscore {

using namespace disk;

namespace {
std::string fmt(const char* f, unsigned long long a = 0, unsigned long long b = 0, unsigned long long c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// Parses `slots` dentries laid out as bitmap / DirEntry[] / names[][8].
Status parse_dentries(const std::uint8_t* bitmap, const DirEntry* de, const std::uint8_t* names, std::uint32_t slots,
                      nid_t max_nid, const std::string& where, std::vector<DirEntryInfo>& out) {
  for (std::uint32_t i = 0; i < slots;) {
    if (!test_bit_le(bitmap, i)) {
      ++i;
      continue;
    }
    DirEntry e;
    std::memcpy(&e, &de[i], sizeof e);
    const std::uint32_t len = e.name_len.get();
    if (len == 0) {  // the kernel skips a zero-length slot
      ++i;
      continue;
    }
    const std::uint32_t need = (len + kSlotLen - 1) / kSlotLen;
    if (len > kNameLen || i + need > slots)
      return make_error(Errc::corrupt, where + fmt(": dentry slot %llu has name_len %llu past the end", i, len));
    if (e.ino.get() >= max_nid)
      return make_error(Errc::corrupt, where + fmt(": dentry slot %llu points at ino %llu past the NAT", i, e.ino.get()));
    DirEntryInfo d;
    d.name.assign(reinterpret_cast<const char*>(names + static_cast<std::size_t>(i) * kSlotLen), len);
    d.ino = e.ino.get();
    d.type = static_cast<FileType>(e.file_type);
    d.hash = e.hash_code.get();
    out.push_back(std::move(d));
    i += need;
  }
  return {};
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
    F2FS_TRY(parse_dentries(base, reinterpret_cast<const DirEntry*>(base + lay.dentry_offset()), base + lay.filename_offset(),
                            lay.nr_slots, max_nid(), fmt("directory %llu (inline)", dir.ino), out));
    // Inline directories keep "." and ".." implicit (F2FS_INLINE_DOTS aside).
    out.insert(out.begin(), {DirEntryInfo{"..", dir.raw.i.i_pino.get(), FileType::dir, 0},});
    out.insert(out.begin(), {DirEntryInfo{".", dir.ino, FileType::dir, 0},});
    return out;
  }
  const std::uint64_t nblocks = (dir.size + kBlockSize - 1) / kBlockSize;
  if (nblocks > (1ull << 32)) return make_error(Errc::corrupt, fmt("directory %llu has i_size %llu", dir.ino, dir.size));
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::uint64_t i = 0; i < nblocks; ++i) {
    auto a = map_block(dir, i);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr || *a == kNewAddr) continue;
    if (!is_valid_main_addr(*a))
      return make_error(Errc::corrupt, fmt("directory %llu: block %llu maps to 0x%llx, outside the main area", dir.ino, i, *a));
    F2FS_TRY(read_block(*a, b));
    const auto* d = reinterpret_cast<const DentryBlock*>(b.data());
    F2FS_TRY(parse_dentries(d->dentry_bitmap, d->dentry, &d->filename[0][0], kNrDentryInBlock, max_nid(),
                            fmt("directory %llu block %llu", dir.ino, i) + at_block(*a), out));
  }
  return out;
}

Result<DirEntryInfo> Volume::lookup(const InodeInfo& dir, std::string_view name) {
  if (!dir.is_dir()) return make_error(Errc::invalid_argument, fmt("inode %llu is not a directory", dir.ino));
  const bool plain = !dir.is_casefolded() && !dir.is_encrypted();
  auto not_found = [&] {
    return make_error(Errc::not_found, "no entry \"" + std::string(name) + "\"" + fmt(" in directory %llu", dir.ino));
  };
  if (dir.has_inline_dentry() || !plain) {
    // Inline directories are one bucket; casefolded and encrypted names
    // are matched over the whole directory (their hashes need the folded
    // name or the key).
    auto all = read_dir(dir);
    if (!all) return make_error(all.error());
    for (auto& d : *all)
      if (d.name == name) return d;
    return not_found();
  }
  if (name == "." || name == "..") {
    auto all = read_dir(dir);
    if (!all) return make_error(all.error());
    for (auto& d : *all)
      if (d.name == name) return d;
    return not_found();
  }
  const std::uint32_t hash = dentry_hash(name);
  const std::uint32_t depth = dir.raw.i.i_current_depth.get();
  const std::uint32_t dir_level = dir.raw.i.i_dir_level;
  std::vector<std::uint8_t> b(kBlockSize);
  const std::uint64_t nblocks = (dir.size + kBlockSize - 1) / kBlockSize;
  for (std::uint32_t level = 0; level < depth && level < 64; ++level) {
    const std::uint32_t nbucket = dir_buckets(level, dir_level);
    const std::uint64_t first = dir_block_index(level, dir_level, hash % nbucket);
    for (std::uint64_t bi = first; bi < first + bucket_blocks(level) && bi < nblocks; ++bi) {
      auto a = map_block(dir, bi);
      if (!a) return make_error(a.error());
      if (*a == kNullAddr || *a == kNewAddr || !is_valid_main_addr(*a)) continue;
      F2FS_TRY(read_block(*a, b));
      const auto* d = reinterpret_cast<const DentryBlock*>(b.data());
      std::vector<DirEntryInfo> entries;
      F2FS_TRY(parse_dentries(d->dentry_bitmap, d->dentry, &d->filename[0][0], kNrDentryInBlock, max_nid(),
                              fmt("directory %llu block %llu", dir.ino, bi), entries));
      for (auto& e : entries)
        if (e.hash == hash && e.name == name) return e;
    }
  }
  return not_found();
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
