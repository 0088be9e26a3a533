// The writer's directories: dentry blocks in hash levels and inline
// dentries (fs/f2fs/dir.c, fs/f2fs/inline.c), and the path operations.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "f2fscore/casefold.hpp"
#include "f2fscore/checksum.hpp"
#include "f2fscore/disk/xattr.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

// A dentry area: a 4 KiB dentry block or an inode's inline area
// (make_dentry_ptr_block() / make_dentry_ptr_inline()).
struct DView {
  std::uint8_t* bitmap = nullptr;
  DirEntry* d = nullptr;
  std::uint8_t (*names)[kSlotLen] = nullptr;
  std::uint32_t nr = 0;

  static DView block(std::uint8_t* b) {
    auto* db = reinterpret_cast<DentryBlock*>(b);
    return {db->dentry_bitmap, db->dentry, db->filename, kNrDentryInBlock};
  }
  static DView inline_area(std::uint8_t* base, std::uint32_t bytes) {
    const InlineDentryLayout l = inline_dentry_layout(bytes);
    return {base, reinterpret_cast<DirEntry*>(base + l.dentry_offset()),
            reinterpret_cast<std::uint8_t(*)[kSlotLen]>(base + l.filename_offset()), l.nr_slots};
  }
  bool bit(std::uint32_t i) const { return bitmap[i / 8] & (1u << (i % 8)); }
  void set(std::uint32_t i, bool v) {
    if (v) bitmap[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
    else bitmap[i / 8] &= static_cast<std::uint8_t>(~(1u << (i % 8)));
  }
  static std::uint32_t slots(std::size_t len) { return static_cast<std::uint32_t>((len + kSlotLen - 1) / kSlotLen); }
  /// Slot of the entry `key` matches (with `use_hash`, only entries of its
  /// hash: f2fs_find_target_dentry()), or nr.
  std::uint32_t find(const Writer::Impl::NameKey& key, bool use_hash = true) const {
    for (std::uint32_t i = 0; i < nr;) {
      if (!bit(i)) {
        ++i;
        continue;
      }
      const std::uint32_t len = d[i].name_len.get();
      if ((!use_hash || d[i].hash_code.get() == key.hash) && i + slots(len) <= nr &&
          key.matches(std::string_view(reinterpret_cast<const char*>(names[i]), len)))
        return i;
      i += std::max<std::uint32_t>(1, slots(len));
    }
    return nr;
  }
  std::string name_at(std::uint32_t pos) const {
    return std::string(reinterpret_cast<const char*>(names[pos]), d[pos].name_len.get());
  }
  /// The first used slot whose entry is not whole (name_len 0, running past
  /// the area, or a later slot of its name free), or nr: an area the writer
  /// does not add to (the free slots it would pick may belong to a name).
  std::uint32_t damaged() const {
    for (std::uint32_t i = 0; i < nr;) {
      if (!bit(i)) {
        ++i;
        continue;
      }
      const std::uint32_t n = slots(d[i].name_len.get());
      if (n == 0 || i + n > nr) return i;
      for (std::uint32_t k = 1; k < n; ++k)
        if (!bit(i + k)) return i;
      i += n;
    }
    return nr;
  }
  /// First run of `n` free slots (f2fs_room_for_filename()), or nr.
  std::uint32_t room(std::uint32_t n) const {
    for (std::uint32_t i = 0; i + n <= nr; ++i) {
      std::uint32_t k = 0;
      while (k < n && !bit(i + k)) ++k;
      if (k == n) return i;
      i += k;
    }
    return nr;
  }
  void put(std::uint32_t pos, std::string_view name, std::uint32_t hash, nid_t ino, FileType t) {
    d[pos].hash_code.set(hash);
    d[pos].ino.set(ino);
    d[pos].name_len.set(static_cast<std::uint16_t>(name.size()));
    d[pos].file_type = static_cast<std::uint8_t>(t);
    std::memcpy(names[pos], name.data(), name.size());
    for (std::uint32_t k = 0; k < slots(name.size()); ++k) set(pos + k, true);
  }
  void each(const std::function<void(std::string_view, nid_t, std::uint8_t, std::uint32_t)>& f) const {
    for (std::uint32_t i = 0; i < nr;) {
      if (!bit(i)) {
        ++i;
        continue;
      }
      const std::uint32_t len = std::min<std::uint32_t>(d[i].name_len.get(), (nr - i) * kSlotLen);
      f(std::string_view(reinterpret_cast<const char*>(names[i]), len), d[i].ino.get(), d[i].file_type, d[i].hash_code.get());
      i += std::max<std::uint32_t>(1, slots(len));
    }
  }
  bool empty() const {
    for (std::uint32_t i = 0; i < (nr + 7) / 8; ++i)
      if (bitmap[i]) return false;
    return true;
  }
};

std::uint64_t dir_block_index(std::uint32_t level, std::uint32_t dir_level, std::uint32_t idx) {
  std::uint64_t b = 0;
  for (std::uint32_t i = 0; i < level; ++i) b += static_cast<std::uint64_t>(dir_buckets(i, dir_level)) * bucket_blocks(i);
  return b + static_cast<std::uint64_t>(idx) * bucket_blocks(level);
}

bool is_dir_node(const Node& n) { return (n.i.i_mode.get() & 0xF000) == 0x4000; }

}  // namespace

Status Writer::Impl::check_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..")
    return errno_error(Errc::invalid_argument, EINVAL, "writer: the name \"" + std::string(name) + "\" cannot be created or removed");
  if (name.size() > kNameLen)
    return errno_error(Errc::invalid_argument, ENAMETOOLONG,
                       fmt("writer: a name of %llu bytes is longer than 255 (F2FS_NAME_LEN)", name.size()));
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return errno_error(Errc::invalid_argument, EINVAL, "writer: a name holds '/' or NUL");
  return {};
}

Result<Node*> Writer::Impl::dir_inode(nid_t dir) {
  if (dir == 0 || dir >= max_nid || nm.get(dir).ino != dir || nm.get(dir).addr == kNullAddr)
    return errno_error(Errc::not_found, ENOENT, fmt("writer: no inode %llu", dir));
  auto dp = node(dir);
  if (!dp) return make_error(dp.error());
  if (!is_dir_node(**dp)) return errno_error(Errc::invalid_argument, ENOTDIR, fmt("writer: inode %llu is not a directory", dir));
  if ((*dp)->i.i_links.get() == 0) return errno_error(Errc::not_found, ENOENT, fmt("writer: directory %llu was removed", dir));
  return *dp;
}

bool Writer::Impl::NameKey::matches(std::string_view entry) const {
  if (folded) return casefold_match(*folded, entry, enc_flags);
  return entry == name;
}

Result<Writer::Impl::NameKey> Writer::Impl::name_key(const Node& dir, std::string_view name) const {
  NameKey k;
  k.name = name;
  k.casefolded = (dir.i.i_flags.get() & iflag::casefold) != 0;
  if (!k.casefolded) {
    k.hash = dentry_hash(name);
    return k;
  }
  k.enc_flags = sb.s_encoding_flags.get();
  k.folded = casefold_name(name);
  if (!k.folded && (k.enc_flags & kEncStrictModeFl) && name != "." && name != "..")
    return errno_error(Errc::invalid_argument, EINVAL,
                       "writer: \"" + std::string(name) +
                           "\" is not a valid name in a casefolded directory of a volume with strict encoding "
                           "(not UTF-8, or it folds to nothing or to 255 bytes or more)");
  k.hash = dentry_hash_casefold(name, k.enc_flags);
  return k;
}

namespace {

// Where search_entry() found an entry: the inline area (`blk` unset) or
// directory block `blk`, whose bytes are left in the caller's buffer.
struct Found {
  std::optional<std::uint64_t> blk;
  std::uint32_t pos = 0;
};

// f2fs_find_entry() in fs/f2fs/dir.c (Linux 6.1): the inline area, else on
// each level the blocks of the bucket of the name's hash; in a casefolded
// directory a miss is searched again over every entry without the hash
// (the linear lookup of 6.1, which finds entries whose stored hash another
// implementation computed differently). `b` holds the block found.
Result<std::optional<Found>> search_entry(Writer::Impl& w, nid_t dir, const Writer::Impl::NameKey& key,
                                          std::vector<std::uint8_t>& b) {
  auto dp = w.node(dir);
  if (!dp) return make_error(dp.error());
  if (!is_dir_node(**dp)) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a directory", dir));
  Node& dn = **dp;
  const bool is_inline = dn.i.i_inline & inline_flag::dentry;
  const std::uint32_t depth = dn.i.i_current_depth.get(), dl = dn.i.i_dir_level;
  const std::uint64_t nblocks = (dn.i.i_size.get() + kBlockSize - 1) / kBlockSize;
  for (const bool use_hash : {true, false}) {
    if (!use_hash && !key.casefolded) break;
    if (is_inline) {
      auto dp2 = w.node(dir);
      if (!dp2) return make_error(dp2.error());
      DView v = DView::inline_area(reinterpret_cast<std::uint8_t*>(*dp2) + w.inline_offset(**dp2), w.max_inline(**dp2));
      const std::uint32_t pos = v.find(key, use_hash);
      if (pos < v.nr) return std::optional<Found>(Found{std::nullopt, pos});
      continue;
    }
    b.resize(kBlockSize);
    for (std::uint32_t level = 0; level < depth && level < 64; ++level) {
      const std::uint32_t nb = dir_buckets(level, dl);
      const std::uint64_t bidx = dir_block_index(level, dl, use_hash ? key.hash % nb : 0);
      const std::uint64_t count = static_cast<std::uint64_t>(bucket_blocks(level)) * (use_hash ? 1 : nb);
      for (std::uint64_t blk = bidx; blk < bidx + count && blk < nblocks; ++blk) {
        auto a = w.map(dir, blk, false);
        if (!a) return make_error(a.error());
        if (*a == kNullAddr) continue;  // NEW_ADDR: a dentry page not yet written back
        F2FSCORE_TRY(w.read_file_block(dir, blk, b.data()));
        const std::uint32_t pos = DView::block(b.data()).find(key, use_hash);
        if (pos < kNrDentryInBlock) return std::optional<Found>(Found{blk, pos});
      }
    }
  }
  return std::optional<Found>();
}

}  // namespace

Result<nid_t> Writer::Impl::find_entry(nid_t dir, std::string_view name, std::string* stored) {
  auto dp = node(dir);
  if (!dp) return make_error(dp.error());
  if (!is_dir_node(**dp)) return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a directory", dir));
  const bool nokey = lacks_key(**dp);
  dp = node(dir);
  if (!dp) return make_error(dp.error());
  if (nokey && name != "." && name != "..") {
    // A no-key name (fscrypt_setup_filename() without the key): the entry
    // whose no-key form it is; a plaintext name finds nothing (ENOENT).
    // Only renames want the stored name: they change the directory.
    if (stored) {
      auto refused = need_key(dir, "rename");
      return make_error(refused.error());
    }
    if (!wr::fscrypt::nokey_name_plausible(name))
      return make_error(Errc::not_found, "writer: no entry \"" + std::string(name) + "\" (an encrypted directory without its key)");
    auto e = entries_info(dir);
    if (!e) return make_error(e.error());
    for (const auto& x : *e)
      if (x.name == name) {
        return x.ino;
      }
    return make_error(Errc::not_found, "writer: no entry \"" + std::string(name) + "\" (an encrypted directory without its key)");
  }
  auto key = name_key(**dp, name);
  if (!key) return make_error(key.error());
  std::vector<std::uint8_t> b;
  auto f = search_entry(*this, dir, *key, b);
  if (!f) return make_error(f.error());
  if (!*f) return make_error(Errc::not_found, "writer: no entry \"" + std::string(name) + "\"");
  auto dp2 = node(dir);
  if (!dp2) return make_error(dp2.error());
  DView v = (*f)->blk ? DView::block(b.data())
                      : DView::inline_area(reinterpret_cast<std::uint8_t*>(*dp2) + inline_offset(**dp2), max_inline(**dp2));
  std::string found = v.name_at((*f)->pos);
  if (key->casefolded && name != "." && name != ".." && (found == "." || found == ".."))
    // "\u200b." folds to ".": f2fs finds the dot entry and the VFS refuses
    // the name (ELOOP from d_splice_alias()).
    return errno_error(Errc::invalid_argument, ELOOP,
                       "writer: \"" + std::string(name) + "\" matches \"" + found + "\" in a casefolded directory");
  if (stored) *stored = std::move(found);
  return v.d[(*f)->pos].ino.get();
}

Result<std::vector<std::pair<std::string, nid_t>>> Writer::Impl::entries(nid_t dir) {
  auto e = entries_info(dir);
  if (!e) return make_error(e.error());
  std::vector<std::pair<std::string, nid_t>> out;
  out.reserve(e->size());
  for (auto& x : *e) out.emplace_back(std::move(x.name), x.ino);
  return out;
}

Result<std::vector<WriterDirEntry>> Writer::Impl::entries_info(nid_t dir) {
  // The key first: deriving it reads the xattrs (node pages).
  auto key = key_for(dir);
  const fscrypt::InodeKey* k = key ? *key : nullptr;
  auto dp = node(dir);
  if (!dp) return make_error(dp.error());
  if (!is_dir_node(**dp))
    return errno_error(Errc::invalid_argument, ENOTDIR, fmt("writer: inode %llu is not a directory", dir));
  std::vector<WriterDirEntry> out;
  // Without the key, an encrypted directory's names as Linux shows them.
  const bool nokey = !key && ((*dp)->i.i_advise & advise::encrypt);
  Status bad;
  auto add = [&](std::string_view n, nid_t i, std::uint8_t t, std::uint32_t hash) {
    if (n == "." || n == "..") return;
    if (k != nullptr) {
      auto p = k->decrypt_name(n);
      if (!p) bad = make_error(Errc::corrupt, fmt("writer: directory %llu: an entry's name does not decrypt: ", dir) + p.error().message);
      else out.push_back({std::move(*p), i, t});
      return;
    }
    out.push_back({nokey ? wr::fscrypt::nokey_name(n, hash) : std::string(n), i, t});
  };
  if ((*dp)->i.i_inline & inline_flag::dentry) {
    DView::inline_area(reinterpret_cast<std::uint8_t*>(*dp) + inline_offset(**dp), max_inline(**dp)).each(add);
    if (!bad) return make_error(bad.error());
    return out;
  }
  const std::uint64_t nblocks = ((*dp)->i.i_size.get() + kBlockSize - 1) / kBlockSize;
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::uint64_t blk = 0; blk < nblocks; ++blk) {
    auto a = map(dir, blk, false);
    if (!a) return make_error(a.error());
    if (*a == kNullAddr) continue;
    F2FSCORE_TRY(read_file_block(dir, blk, b.data()));
    DView::block(b.data()).each(add);
  }
  if (!bad) return make_error(bad.error());
  return out;
}

Result<bool> Writer::Impl::dir_empty(nid_t dir) {
  auto e = entries(dir);
  if (!e) return make_error(e.error());
  return e->empty();
}

// f2fs_add_regular_entry() in fs/f2fs/dir.c: level by level, the bucket of
// the name's hash, its blocks in turn; a level past i_current_depth raises
// it. An inline directory takes the entry inline while it fits, else its
// entries move to block 0 first (f2fs_move_inline_dirents()).
Status Writer::Impl::add_entry(nid_t dir, std::string_view name, nid_t ino, FileType type) {
  const std::uint32_t need = DView::slots(name.size());
  auto dp = node(dir);
  if (!dp) return make_error(dp.error());
  Node& dn = **dp;
  auto key = name_key(dn, name);  // in a casefolded directory, the hash of the folded name
  if (!key) return make_error(key.error());
  const std::uint32_t hash = key->hash;
  if (dn.i.i_inline & inline_flag::dentry) {
    auto* base = reinterpret_cast<std::uint8_t*>(&dn) + inline_offset(dn);
    const std::uint32_t bytes = max_inline(dn);
    DView v = DView::inline_area(base, bytes);
    if (const std::uint32_t bad = v.damaged(); bad < v.nr)
      return make_error(Errc::corrupt, fmt("writer: directory %llu: inline dentry slot %llu has name_len %llu, which its "
                                           "slots do not hold; run f2fscore-fsck",
                                           dir, bad, v.d[bad].name_len.get()));
    const std::uint32_t pos = v.room(need);
    if (pos < v.nr) {
      v.put(pos, name, hash, ino, type);
      touch(dn);
      mark_dirty(dir);
      return {};
    }
    std::vector<std::uint8_t> b(kBlockSize, 0);
    DView bv = DView::block(b.data());
    std::memcpy(bv.bitmap, v.bitmap, (v.nr + 7) / 8);
    for (std::uint32_t k = v.nr; k < ((v.nr + 7) / 8) * 8; ++k) bv.set(k, false);
    std::memcpy(bv.d, v.d, sizeof(DirEntry) * v.nr);
    std::memcpy(bv.names, v.names, kSlotLen * v.nr);
    std::memset(base, 0, bytes);
    dn.i.i_inline &= static_cast<std::uint8_t>(~inline_flag::dentry);
    if (dn.i.i_size.get() < kBlockSize) dn.i.i_size.set(kBlockSize);
    if (dn.i.i_current_depth.get() == 0) dn.i.i_current_depth.set(1);
    mark_dirty(dir);
    F2FSCORE_TRY(cache_write(dir, 0, b.data(), wr::kHotData));
  }
  std::vector<std::uint8_t> b(kBlockSize);
  for (std::uint32_t level = 0; level < 64; ++level) {
    auto dp2 = node(dir);
    if (!dp2) return make_error(dp2.error());
    std::uint32_t depth = (*dp2)->i.i_current_depth.get();
    const std::uint32_t dl = (*dp2)->i.i_dir_level;
    if (level == depth) ++depth;
    const std::uint32_t nb = dir_buckets(level, dl);
    const std::uint64_t bidx = dir_block_index(level, dl, hash % nb);
    for (std::uint64_t blk = bidx; blk < bidx + bucket_blocks(level); ++blk) {
      F2FSCORE_TRY(read_file_block(dir, blk, b.data()));
      DView v = DView::block(b.data());
      if (const std::uint32_t bad = v.damaged(); bad < v.nr)
        return make_error(Errc::corrupt, fmt("writer: directory %llu: block %llu slot %llu has name_len %llu, which its "
                                             "slots do not hold; run f2fscore-fsck",
                                             dir, blk, bad, v.d[bad].name_len.get()));
      const std::uint32_t pos = v.room(need);
      if (pos >= v.nr) continue;
      v.put(pos, name, hash, ino, type);
      F2FSCORE_TRY(cache_write(dir, blk, b.data(), wr::kHotData));
      auto dp3 = node(dir);
      if (!dp3) return make_error(dp3.error());
      Node& d3 = **dp3;
      if ((blk + 1) * kBlockSize > d3.i.i_size.get()) d3.i.i_size.set((blk + 1) * kBlockSize);
      d3.i.i_current_depth.set(depth);
      touch(d3);
      mark_dirty(dir);
      return {};
    }
  }
  return make_error(Errc::no_space, "writer: the directory reached the deepest hash level");
}

namespace {

// Finds `name` in `dir` as find_entry() (any case in a casefolded
// directory) and applies `edit` to its slot; the inode or the dentry
// block is written back, a dentry block `edit` leaves empty is freed.
// Errc::not_found (ENOENT) when there is no such entry.
Status edit_entry(Writer::Impl& w, nid_t dir, std::string_view name, const std::function<void(DView&, std::uint32_t)>& edit) {
  auto dp = w.node(dir);
  if (!dp) return make_error(dp.error());
  auto key = w.name_key(**dp, name);
  if (!key) return make_error(key.error());
  std::vector<std::uint8_t> b;
  auto f = search_entry(w, dir, *key, b);
  if (!f) return make_error(f.error());
  if (!*f) return errno_error(Errc::not_found, ENOENT, "writer: no entry \"" + std::string(name) + "\"");
  if (!(*f)->blk) {
    auto dp2 = w.node(dir);
    if (!dp2) return make_error(dp2.error());
    Node& dn = **dp2;
    DView v = DView::inline_area(reinterpret_cast<std::uint8_t*>(&dn) + w.inline_offset(dn), w.max_inline(dn));
    edit(v, (*f)->pos);
    w.touch(dn);
    w.mark_dirty(dir);
    return {};
  }
  const std::uint64_t blk = *(*f)->blk;
  DView v = DView::block(b.data());
  edit(v, (*f)->pos);
  if (v.empty()) F2FSCORE_TRY(w.free_file_block(dir, blk));
  else F2FSCORE_TRY(w.cache_write(dir, blk, b.data(), wr::kHotData));
  auto dp2 = w.node(dir);
  if (!dp2) return make_error(dp2.error());
  w.touch(**dp2);
  w.mark_dirty(dir);
  return {};
}

}  // namespace

// f2fs_delete_entry(): clear the slots; a dentry block left empty is freed.
Status Writer::Impl::remove_entry(nid_t dir, std::string_view name) {
  return edit_entry(*this, dir, name, [](DView& v, std::uint32_t pos) {
    for (std::uint32_t k = 0; k < DView::slots(v.d[pos].name_len.get()); ++k) v.set(pos + k, false);
  });
}

// f2fs_set_link() in fs/f2fs/dir.c: the entry keeps its slots and names
// another inode.
Status Writer::Impl::set_entry(nid_t dir, std::string_view name, nid_t ino, FileType type) {
  return edit_entry(*this, dir, name, [ino, type](DView& v, std::uint32_t pos) {
    v.d[pos].ino.set(ino);
    v.d[pos].file_type = static_cast<std::uint8_t>(type);
  });
}

Result<nid_t> Writer::Impl::resolve(std::string_view path, nid_t* parent, std::string* leaf) {
  if (path.empty() || path[0] != '/') return make_error(Errc::invalid_argument, "writer: paths are absolute: \"" + std::string(path) + "\"");
  nid_t cur = sb.root_ino.get(), par = cur;
  std::string last;
  std::size_t i = 1;
  bool missing = false;
  while (i <= path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    const std::string_view comp = path.substr(i, j - i);
    i = j + 1;
    if (comp.empty()) continue;
    if (missing)
      return errno_error(Errc::not_found, ENOENT, "writer: a directory on the way to \"" + std::string(path) + "\" does not exist");
    auto n = node(cur);
    if (!n) return make_error(n.error());
    if (!is_dir_node(**n))
      return errno_error(Errc::invalid_argument, ENOTDIR, "writer: \"" + std::string(path) + "\" goes through a non-directory");
    par = cur;
    auto dn = disk_name(cur, comp);
    if (!dn) return make_error(dn.error());
    last = std::string(comp);
    auto e = find_entry(cur, *dn);
    if (!e) {
      if (e.error().code != Errc::not_found) return make_error(e.error());
      missing = true;
      cur = 0;
      continue;
    }
    cur = *e;
  }
  if (parent) *parent = par;
  if (leaf) *leaf = last;
  if (missing) return errno_error(Errc::not_found, ENOENT, "writer: \"" + std::string(path) + "\" does not exist");
  return cur;
}

// ---- Creating and removing names ------------------------------------------------

// f2fs_create(), f2fs_mkdir(), f2fs_mknod(), f2fs_symlink() in
// fs/f2fs/namei.c: f2fs_new_inode() (owner as inode_init_owner()), a new
// directory's dentry block with "." and ".." (f2fs_make_empty()), then
// f2fs_add_link(); a new directory raises the parent's link count.
Result<nid_t> Writer::Impl::create_in(nid_t parent, std::string_view given, std::uint16_t mode, const Owner& owner,
                                      const std::function<Status(Node&)>& init, bool owner_rules) {
  F2FSCORE_TRY(check_name(given));
  auto pn = dir_inode(parent);
  if (!pn) return make_error(pn.error());
  const std::uint16_t pmode = (*pn)->i.i_mode.get();
  const std::uint32_t pgid = (*pn)->i.i_gid.get();
  F2FSCORE_TRY(need_key(parent, "create"));
  auto stored = disk_name(parent, given);
  if (!stored) return make_error(stored.error());
  const std::string_view leaf = *stored;
  auto e = find_entry(parent, leaf);
  if (e) return errno_error(Errc::exists, EEXIST, "writer: \"" + std::string(leaf) + "\" exists");
  if (e.error().code != Errc::not_found) return make_error(e.error());
  F2FSCORE_TRY(may_create(parent));
  const bool dir = (mode & 0xF000) == 0x4000;
  wr::acl::Inherited acls;
  if (owner.umask) {
    auto a = wr::acl::create(*this, parent, mode, *owner.umask);
    if (!a) return make_error(a.error());
    acls = std::move(*a);
  }
  Owner o = owner;
  if (owner_rules && (pmode & 02000)) {  // S_ISGID directory: its group, and S_ISGID for a new directory
    o.gid = pgid;
    if (dir) mode = static_cast<std::uint16_t>(mode | 02000);
  }
  auto ino = make_inode(parent, leaf, mode, o);
  if (!ino) return make_error(ino.error());
  F2FSCORE_TRY(inherit_encryption(parent, *ino));  // writer/fscrypt.cpp
  if (init) {
    auto in = node(*ino);
    if (!in) return make_error(in.error());
    F2FSCORE_TRY(init(**in));
  }
  // f2fs_init_acl(): the default ACL first, then the access ACL.
  if (!acls.def.empty()) {
    const std::span<const std::uint8_t> v(acls.def);
    F2FSCORE_TRY(wr::xattr_set(*this, *ino, disk::xattr_index::posix_acl_default, "", &v, XattrSet::any));
  }
  if (!acls.access.empty()) {
    const std::span<const std::uint8_t> v(acls.access);
    F2FSCORE_TRY(wr::xattr_set(*this, *ino, disk::xattr_index::posix_acl_access, "", &v, XattrSet::any));
  }
  if (dir) {
    std::vector<std::uint8_t> b(kBlockSize, 0);
    DView v = DView::block(b.data());
    v.put(0, ".", 0, *ino, FileType::dir);
    v.put(1, "..", 0, parent, FileType::dir);
    auto in = node(*ino);
    if (!in) return make_error(in.error());
    (*in)->i.i_current_depth.set(1);
    (*in)->i.i_size.set(kBlockSize);
    F2FSCORE_TRY(write_file_block(*ino, 0, b.data(), wr::kHotData));
  }
  FileType ft = FileType::unknown;
  switch (mode & 0xF000) {
    case 0x8000: ft = FileType::reg_file; break;
    case 0x4000: ft = FileType::dir; break;
    case 0x2000: ft = FileType::chrdev; break;
    case 0x6000: ft = FileType::blkdev; break;
    case 0x1000: ft = FileType::fifo; break;
    case 0xC000: ft = FileType::sock; break;
    case 0xA000: ft = FileType::symlink; break;
    default: break;
  }
  F2FSCORE_TRY(add_entry(parent, leaf, *ino, ft));
  if (dir) {
    auto p2 = node(parent);
    if (!p2) return make_error(p2.error());
    (*p2)->i.i_links.set((*p2)->i.i_links.get() + 1);
    mark_dirty(parent);
  }
  return *ino;
}

// f2fs_unlink() and f2fs_rmdir() in fs/f2fs/namei.c: the entry goes
// (f2fs_delete_entry()); a file loses a link and is freed at zero unless
// open (then orphaned until its last release: drop_inode()); a directory
// must be empty, is freed, and its parent loses a link.
Status Writer::Impl::remove_in(nid_t parent, std::string_view given, bool dir) {
  if (given == ".") return errno_error(Errc::invalid_argument, EINVAL, "writer: cannot remove \".\"");
  if (given == "..") return errno_error(Errc::invalid_argument, ENOTEMPTY, "writer: cannot remove \"..\"");
  F2FSCORE_TRY(check_name(given));
  auto pn = dir_inode(parent);
  if (!pn) return make_error(pn.error());
  auto stored = disk_name(parent, given);
  if (!stored) return make_error(stored.error());
  const std::string_view leaf = *stored;
  auto ino = find_entry(parent, leaf);
  if (!ino) return make_error(ino.error().code == Errc::not_found ? Error{Errc::not_found, ENOENT, Error::kNoOffset, ino.error().message}
                                                                  : ino.error());
  F2FSCORE_TRY(may_delete(parent, *ino));
  auto in = node(*ino);
  if (!in) return make_error(in.error());
  const bool is_d = is_dir_node(**in);
  if (!dir) {
    if (is_d) return errno_error(Errc::invalid_argument, EISDIR, "writer: \"" + std::string(leaf) + "\" is a directory (use rmdir)");
    F2FSCORE_TRY(remove_entry(parent, leaf));
    auto in2 = node(*ino);
    if (!in2) return make_error(in2.error());
    const std::uint32_t links = (*in2)->i.i_links.get();
    if (links <= 1) return drop_inode(*ino);  // freed, or an orphan while open (writer/ns.cpp)
    (*in2)->i.i_links.set(links - 1);
    set_ctime(**in2);
    mark_dirty(*ino);
    return {};
  }
  if (*ino == sb.root_ino.get()) return errno_error(Errc::invalid_argument, EBUSY, "writer: the root cannot be removed");
  if (!is_d) return errno_error(Errc::invalid_argument, ENOTDIR, "writer: \"" + std::string(leaf) + "\" is not a directory");
  auto empty = dir_empty(*ino);
  if (!empty) return make_error(empty.error());
  if (!*empty) return errno_error(Errc::invalid_argument, ENOTEMPTY, "writer: directory \"" + std::string(leaf) + "\" is not empty");
  F2FSCORE_TRY(remove_entry(parent, leaf));
  F2FSCORE_TRY(free_inode(*ino));
  auto p = node(parent);
  if (!p) return make_error(p.error());
  (*p)->i.i_links.set((*p)->i.i_links.get() - 1);
  mark_dirty(parent);
  return {};
}

// ---- Public path operations ---------------------------------------------------

namespace {

// The directory and name a new path goes to: `path` must not exist, its
// parent must.
Result<std::pair<nid_t, std::string>> new_path(Writer::Impl& w, std::string_view path) {
  nid_t parent = 0;
  std::string leaf;
  auto r = w.resolve(path, &parent, &leaf);
  if (r) return errno_error(Errc::exists, EEXIST, "writer: \"" + std::string(path) + "\" exists");
  // resolve() leaves `parent` at the last directory walked: it must be the
  // leaf's parent (a missing middle component is not_found above).
  if (r.error().code != Errc::not_found || parent == 0 || leaf.empty()) return make_error(r.error());
  return std::make_pair(parent, std::move(leaf));
}

Result<nid_t> create_common(Writer::Impl& w, std::string_view path, std::uint16_t mode) {
  F2FSCORE_WRITER_LOCK(&w);
  F2FSCORE_TRY(w.usable(true));
  auto np = new_path(w, path);
  if (!np) return make_error(np.error());
  return w.dirsync_after(np->first, w.create_in(np->first, np->second, mode, Owner{}, {}, false));
}

// Resolves `path` to its parent and leaf.
Status parent_of(Writer::Impl& w, std::string_view path, nid_t* parent, std::string* leaf) {
  auto ino = w.resolve(path, parent, leaf);
  if (!ino) return make_error(ino.error());
  return {};
}

}  // namespace

Result<nid_t> Writer::create(std::string_view path, std::uint16_t perm) {
  return create_common(*impl_, path, static_cast<std::uint16_t>(0x8000 | (perm & 07777)));
}

Result<nid_t> Writer::mkdir(std::string_view path, std::uint16_t perm) {
  return create_common(*impl_, path, static_cast<std::uint16_t>(0x4000 | (perm & 07777)));
}

Result<nid_t> Writer::lookup(std::string_view path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  return impl_->resolve(path);
}

Result<std::vector<std::string>> Writer::list(nid_t dir) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto e = impl_->entries(dir);
  if (!e) return make_error(e.error());
  std::vector<std::string> out;
  for (auto& [n, i] : *e) out.push_back(n);
  return out;
}

Status Writer::unlink(std::string_view path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  nid_t parent = 0;
  std::string leaf;
  F2FSCORE_TRY(parent_of(*impl_, path, &parent, &leaf));
  return impl_->dirsync_after(parent, impl_->remove_in(parent, leaf, false));
}

Status Writer::rmdir(std::string_view path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  nid_t parent = 0;
  std::string leaf;
  auto ino = impl_->resolve(path, &parent, &leaf);
  if (!ino) return make_error(ino.error());
  if (*ino == impl_->sb.root_ino.get()) return errno_error(Errc::invalid_argument, EBUSY, "writer: the root cannot be removed");
  return impl_->dirsync_after(parent, impl_->remove_in(parent, leaf, true));
}

// ---- Inode-relative operations ------------------------------------------------

Result<nid_t> Writer::lookup_at(nid_t dir, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto dp = impl_->dir_inode(dir);
  if (!dp) return make_error(dp.error());
  if (name == ".") return dir;
  if (name.size() > kNameLen)
    return errno_error(Errc::invalid_argument, ENAMETOOLONG, fmt("writer: a name of %llu bytes is longer than 255", name.size()));
  if (name.empty()) return errno_error(Errc::not_found, ENOENT, "writer: an empty name");
  auto dn = impl_->disk_name(dir, name);
  if (!dn) return make_error(dn.error());
  auto e = impl_->find_entry(dir, *dn);
  if (!e && e.error().code == Errc::not_found) return errno_error(Errc::not_found, ENOENT, e.error().message);
  return e;
}

Result<std::vector<WriterDirEntry>> Writer::list_at(nid_t dir) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  if (dir == 0 || dir >= impl_->max_nid || impl_->nm.get(dir).ino != dir || impl_->nm.get(dir).addr == kNullAddr)
    return errno_error(Errc::not_found, ENOENT, fmt("writer: no inode %llu", dir));
  return impl_->entries_info(dir);
}

Status Writer::unlink_at(nid_t dir, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->dirsync_after(dir, impl_->remove_in(dir, name, false));
}

Status Writer::rmdir_at(nid_t dir, std::string_view name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->dirsync_after(dir, impl_->remove_in(dir, name, true));
}

}  // namespace f2fscore
