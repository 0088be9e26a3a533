// Namespace operations: rename, link, symlink, mknod, setattr, open files
// and the orphan list, fallocate (docs/writer.md). Each mirrors what the
// kernel leaves on disk (fs/f2fs/namei.c, fs/f2fs/file.c, fs/f2fs/inode.c).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

constexpr std::uint16_t kTypeMask = 0xF000, kDir = 0x4000, kReg = 0x8000, kLnk = 0xA000, kChr = 0x2000, kBlk = 0x6000,
                        kFifo = 0x1000, kSock = 0xC000;
constexpr std::uint32_t kLinkMax = 0xffffffffu;  ///< F2FS_LINK_MAX
constexpr std::size_t kPageSize = 4096;          ///< PAGE_SIZE: a symlink target with its NUL fits in one page

bool is_dir(const Node& n) { return (n.i.i_mode.get() & kTypeMask) == kDir; }

FileType file_type(std::uint16_t mode) {
  switch (mode & kTypeMask) {
    case kReg: return FileType::reg_file;
    case kDir: return FileType::dir;
    case kChr: return FileType::chrdev;
    case kBlk: return FileType::blkdev;
    case kFifo: return FileType::fifo;
    case kSock: return FileType::sock;
    case kLnk: return FileType::symlink;
    default: return FileType::unknown;
  }
}

/// The largest file of an inode, in 4 KiB blocks (max_file_blocks() in
/// fs/f2fs/super.c: the inode's addresses and every node tree pointer).
std::uint64_t max_file_blocks(std::uint64_t addrs_per_inode) {
  return addrs_per_inode + 2ull * kDefAddrsPerBlock + 2ull * kNidsPerBlock * kDefAddrsPerBlock +
         1ull * kNidsPerBlock * kNidsPerBlock * kDefAddrsPerBlock;
}

// The place a new name goes: `path` must not exist, its parent must.
struct NewName {
  nid_t parent = 0;
  std::string leaf;
};
Result<NewName> new_name(Writer::Impl& w, std::string_view path) {
  NewName n;
  auto r = w.resolve(path, &n.parent, &n.leaf);
  if (r) return errno_error(Errc::exists, EEXIST, "writer: \"" + std::string(path) + "\" exists");
  if (r.error().code != Errc::not_found || n.parent == 0 || n.leaf.empty()) return make_error(r.error());
  F2FSCORE_TRY(Writer::Impl::check_name(n.leaf));
  return n;
}

Result<Node*> inode_of(Writer::Impl& w, nid_t ino) {
  if (ino == 0 || ino >= w.max_nid || w.nm.get(ino).ino != ino || w.nm.get(ino).addr == kNullAddr)
    return make_error(Errc::not_found, fmt("writer: no inode %llu", ino));
  return w.node(ino);
}

// What init_dent_inode() and f2fs_add_regular_entry() leave in an inode
// given a new name: i_name/i_namelen of that name, i_pino of its directory.
void set_name(Node& in, std::string_view leaf, nid_t parent) {
  std::memset(in.i.i_name, 0, sizeof in.i.i_name);
  std::memcpy(in.i.i_name, leaf.data(), leaf.size());
  in.i.i_namelen.set(static_cast<std::uint32_t>(leaf.size()));
  in.i.i_pino.set(parent);
}

// The ".." entry of directory `dir` now names `parent` (f2fs_set_link() on
// the entry f2fs_parent_dir() found: slot 1 of block 0 or of the inline area).
Status set_dotdot(Writer::Impl& w, nid_t dir, nid_t parent) {
  auto dp = w.node(dir);
  if (!dp) return make_error(dp.error());
  Node& dn = **dp;
  auto fix = [&](std::uint8_t* bitmap, DirEntry* d, std::uint8_t (*names)[kSlotLen], std::uint32_t nr) -> bool {
    for (std::uint32_t i = 0; i < nr; ++i) {
      if (!(bitmap[i / 8] & (1u << (i % 8)))) continue;
      if (d[i].name_len.get() == 2 && std::memcmp(names[i], "..", 2) == 0) {
        d[i].ino.set(parent);
        d[i].file_type = static_cast<std::uint8_t>(FileType::dir);
        return true;
      }
    }
    return false;
  };
  if (dn.i.i_inline & inline_flag::dentry) {
    auto* base = reinterpret_cast<std::uint8_t*>(&dn) + w.inline_offset(dn);
    const InlineDentryLayout l = inline_dentry_layout(w.max_inline(dn));
    if (!fix(base, reinterpret_cast<DirEntry*>(base + l.dentry_offset()),
             reinterpret_cast<std::uint8_t(*)[kSlotLen]>(base + l.filename_offset()), l.nr_slots))
      return make_error(Errc::corrupt, fmt("writer: directory %llu has no \"..\" entry", dir));
    w.touch(dn);
    w.mark_dirty(dir);
    return {};
  }
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(w.read_file_block(dir, 0, b.data()));
  auto* db = reinterpret_cast<DentryBlock*>(b.data());
  if (!fix(db->dentry_bitmap, db->dentry, db->filename, kNrDentryInBlock))
    return make_error(Errc::corrupt, fmt("writer: directory %llu has no \"..\" entry", dir));
  F2FSCORE_TRY(w.write_file_block(dir, 0, b.data(), wr::kHotData));
  auto dp2 = w.node(dir);
  if (!dp2) return make_error(dp2.error());
  w.touch(**dp2);
  w.mark_dirty(dir);
  return {};
}

Status add_links(Writer::Impl& w, nid_t ino, int delta) {
  auto p = w.node(ino);
  if (!p) return make_error(p.error());
  const std::int64_t links = static_cast<std::int64_t>((*p)->i.i_links.get()) + delta;
  (*p)->i.i_links.set(static_cast<std::uint32_t>(std::max<std::int64_t>(0, links)));
  w.mark_dirty(ino);
  return {};
}

}  // namespace

// ---- Dropping inodes and the orphan list ---------------------------------------

Status Writer::Impl::drop_inode(nid_t ino) {
  auto in = node(ino);
  if (!in) return make_error(in.error());
  (*in)->i.i_links.set(0);
  set_ctime(**in);
  mark_dirty(ino);
  if (auto it = open_count.find(ino); it != open_count.end() && it->second > 0) {
    // f2fs_add_orphan_inode(): the checkpoint lists it until the last close.
    if (std::find(orphans.begin(), orphans.end(), ino) == orphans.end()) orphans.push_back(ino);
    return {};
  }
  cache_drop(ino, 0);
  orphans.erase(std::remove(orphans.begin(), orphans.end(), ino), orphans.end());
  return free_inode(ino);
}

Status Writer::Impl::recover_orphans() {
  // Every listed inode is freed whatever its link count (recover_orphan_inode()
  // clears i_nlink then puts the inode); a nid that is no inode is skipped.
  const std::vector<nid_t> list = orphans;
  for (nid_t ino : list) {
    if (ino == 0 || ino >= max_nid || nm.get(ino).ino != ino || nm.get(ino).addr == kNullAddr) continue;
    auto in = node(ino);
    if (!in) return make_error(in.error());
    if ((*in)->footer.ino.get() != ino || ((*in)->footer.flag.get() >> node_flag::offset_shift) != 0) continue;
    F2FSCORE_TRY(free_inode(ino));
  }
  orphans.clear();
  return {};
}

Status Writer::Impl::release_all() {
  open_count.clear();
  const std::vector<nid_t> list = orphans;
  for (nid_t ino : list) {
    if (ino == 0 || ino >= max_nid || nm.get(ino).ino != ino || nm.get(ino).addr == kNullAddr) continue;
    auto in = node(ino);
    if (!in) return make_error(in.error());
    if ((*in)->i.i_links.get() != 0) continue;
    cache_drop(ino, 0);
    F2FSCORE_TRY(free_inode(ino));
  }
  orphans.clear();
  return {};
}

// ---- rename ------------------------------------------------------------------------

// f2fs_rename() in fs/f2fs/namei.c (Linux 6.1), without whiteouts:
// - over an existing target: the target's entry names the source
//   (f2fs_set_link()); the target loses a link (two for a directory) and is
//   freed, or orphaned while open, at link count 0;
// - else: the source is added under the new name (f2fs_add_link():
//   i_name/i_namelen become the new name, i_pino the new directory) and a
//   moved directory raises the new parent's link count;
// - a non-directory gets FADVISE_LOST_PINO (file_lost_pino()); a directory
//   gets i_pino = the new parent, its ".." entry names it (when the parent
//   changed) and the old parent loses a link; i_name is the new name
//   (also over a target, where the kernel leaves the old one);
// - the old entry goes (f2fs_delete_entry()); ctime of the source is now.
// RENAME_EXCHANGE is f2fs_cross_rename(): each entry names the other inode
// (f2fs_set_link()), a directory that changed parent gets its ".." and
// i_pino, a non-directory FADVISE_LOST_PINO, and the parents' link counts
// follow the directories that moved.
Status Writer::Impl::rename_in(nid_t op, std::string_view ogiven, nid_t np, std::string_view ngiven, std::uint32_t flags) {
  Impl& w = *this;
  if (flags & ~(rename_flag::noreplace | rename_flag::exchange))
    return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: rename flags 0x%llx", flags));
  const bool exchange = flags & rename_flag::exchange;
  if (exchange && (flags & rename_flag::noreplace))
    return errno_error(Errc::invalid_argument, EINVAL, "writer: RENAME_EXCHANGE with RENAME_NOREPLACE");
  auto opd = dir_inode(op);
  if (!opd) return make_error(opd.error());
  auto npd = dir_inode(np);
  if (!npd) return make_error(npd.error());
  if (ogiven == "." || ogiven == ".." || ngiven == "." || ngiven == "..")
    return errno_error(Errc::invalid_argument, EINVAL, "writer: cannot rename \".\" or \"..\"");
  F2FSCORE_TRY(check_name(ogiven));
  F2FSCORE_TRY(check_name(ngiven));
  // The stored names (ciphertext in an encrypted directory with its key).
  auto ostored = disk_name(op, ogiven);
  if (!ostored) return make_error(ostored.error());
  auto nstored = disk_name(np, ngiven);
  if (!nstored) return make_error(nstored.error());
  const std::string_view oleaf = *ostored, nleaf = *nstored;
  // In a casefolded directory the names may differ in case from the
  // entries they find; an entry that stays keeps its stored name.
  std::string sname, tname;
  auto src = find_entry(op, oleaf, &sname);
  if (!src) return make_error(src.error().code == Errc::not_found ? Error{Errc::not_found, ENOENT, Error::kNoOffset, src.error().message}
                                                                  : src.error());
  auto tgt = find_entry(np, nleaf, &tname);
  if (!tgt && tgt.error().code != Errc::not_found) return make_error(tgt.error());
  if (tgt && (flags & rename_flag::noreplace))
    return errno_error(Errc::exists, EEXIST, "writer: \"" + std::string(nleaf) + "\" exists (RENAME_NOREPLACE)");
  if (!tgt && exchange)
    return errno_error(Errc::not_found, ENOENT, "writer: \"" + std::string(nleaf) + "\" does not exist (RENAME_EXCHANGE)");
  const nid_t root = sb.root_ino.get();
  if (*src == root || (tgt && *tgt == root)) return errno_error(Errc::invalid_argument, EBUSY, "writer: the root cannot be renamed");
  auto sp = node(*src);
  if (!sp) return make_error(sp.error());
  const bool sdir = is_dir(**sp);
  const std::uint16_t smode = (*sp)->i.i_mode.get();
  if (tgt && *tgt == *src) return {};  // two names of one inode: nothing to do (POSIX)
  bool tdir = false;
  std::uint16_t tmode = 0;
  if (tgt) {
    auto tp = node(*tgt);
    if (!tp) return make_error(tp.error());
    tdir = is_dir(**tp);
    tmode = (*tp)->i.i_mode.get();
  }
  // A directory cannot go into itself or below itself (EINVAL from
  // vfs_rename()'s ancestor check); with exchange, neither can the target
  // (ENOTEMPTY there, as lock_rename()'s trap for the target's side).
  auto below = [&](nid_t dir, nid_t start) -> Result<bool> {
    nid_t cur = start;
    for (int guard = 0; guard < 4096; ++guard) {
      if (cur == dir) return true;
      if (cur == root) return false;
      auto up = find_entry(cur, "..");
      if (!up) return make_error(up.error());
      if (*up == cur) return false;
      cur = *up;
    }
    return false;
  };
  if (sdir) {
    auto b = below(*src, np);
    if (!b) return make_error(b.error());
    if (*b) return errno_error(Errc::invalid_argument, EINVAL, "writer: cannot move a directory into itself or below itself");
  }
  if (exchange && tdir) {
    auto b = below(*tgt, op);
    if (!b) return make_error(b.error());
    if (*b) return errno_error(Errc::invalid_argument, EINVAL, "writer: cannot move a directory into itself or below itself");
  }
  // vfs_rename() in fs/namei.c, after the lookups and the trap checks:
  // may_delete() of the source, then may_delete() of a target or
  // may_create() in the new directory (EPERM for immutable and
  // append-only inodes and directories, before the type checks).
  F2FSCORE_TRY(may_delete(op, *src));
  if (tgt) F2FSCORE_TRY(may_delete(np, *tgt));
  else F2FSCORE_TRY(may_create(np));
  // writer/quota.cpp: a directory with PROJINHERIT takes only inodes of its
  // project (EXDEV, f2fs_rename() / f2fs_cross_rename()).
  F2FSCORE_TRY(quota_same_project(np, *src));
  if (exchange) F2FSCORE_TRY(quota_same_project(op, *tgt));
  F2FSCORE_TRY(same_policy(np, *src));  // writer/fscrypt.cpp: EXDEV
  if (exchange) F2FSCORE_TRY(same_policy(op, *tgt));
  if (exchange) {
    F2FSCORE_TRY(set_entry(op, oleaf, *tgt, file_type(tmode)));
    F2FSCORE_TRY(set_entry(np, nleaf, *src, file_type(smode)));
    struct Moved {
      nid_t ino;
      bool dir;
      nid_t to;
      std::string_view name;
    };
    for (const Moved& m : {Moved{*src, sdir, np, tname}, Moved{*tgt, tdir, op, sname}}) {
      auto ip = node(m.ino);
      if (!ip) return make_error(ip.error());
      Node& n = **ip;
      set_name(n, m.name, m.to);
      if (!m.dir) n.i.i_advise |= advise::lost_pino;
      set_ctime(n);
      mark_dirty(m.ino);
      if (m.dir && op != np) F2FSCORE_TRY(set_dotdot(w, m.ino, m.to));
    }
    if (op != np && sdir != tdir) {
      F2FSCORE_TRY(add_links(w, np, sdir ? +1 : -1));
      F2FSCORE_TRY(add_links(w, op, sdir ? -1 : +1));
    }
    return {};
  }
  if (tgt) {
    if (tdir && !sdir)
      return errno_error(Errc::invalid_argument, EISDIR, "writer: cannot rename a non-directory over directory \"" + std::string(nleaf) + "\"");
    if (!tdir && sdir)
      return errno_error(Errc::invalid_argument, ENOTDIR, "writer: cannot rename a directory over non-directory \"" + std::string(nleaf) + "\"");
    if (tdir) {
      auto empty = dir_empty(*tgt);
      if (!empty) return make_error(empty.error());
      if (!*empty)
        return errno_error(Errc::exists, ENOTEMPTY, "writer: cannot rename over non-empty directory \"" + std::string(nleaf) + "\"");
    }
    F2FSCORE_TRY(set_entry(np, nleaf, *src, file_type(smode)));
    F2FSCORE_TRY(add_links(w, *tgt, tdir ? -2 : -1));
    auto t2 = node(*tgt);
    if (!t2) return make_error(t2.error());
    set_ctime(**t2);
    mark_dirty(*tgt);
    if ((*t2)->i.i_links.get() == 0) F2FSCORE_TRY(drop_inode(*tgt));
    // A directory replaced another: the new parent's count is unchanged
    // (one directory went, one came).
  } else {
    F2FSCORE_TRY(add_entry(np, nleaf, *src, file_type(smode)));
    if (sdir) F2FSCORE_TRY(add_links(w, np, +1));
  }
  {
    auto s3 = node(*src);
    if (!s3) return make_error(s3.error());
    Node& s = **s3;
    // Over a target the kernel keeps the old i_name (f2fs_set_link() does
    // not touch the inode); we write the new name, which fsck.f2fs and our
    // checker compare with a directory's entry (the entry's own name when
    // it stays: a casefolded target keeps its case).
    set_name(s, tgt ? std::string_view(tname) : nleaf, np);
    if (!sdir) s.i.i_advise |= advise::lost_pino;
    set_ctime(s);
    mark_dirty(*src);
  }
  F2FSCORE_TRY(remove_entry(op, oleaf));
  if (sdir) {
    if (op != np) F2FSCORE_TRY(set_dotdot(w, *src, np));
    F2FSCORE_TRY(add_links(w, op, -1));
  }
  return {};
}

Status Writer::rename(std::string_view from, std::string_view to) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  nid_t op = 0, np = 0;
  std::string oleaf, nleaf;
  auto src = w.resolve(from, &op, &oleaf);
  if (!src) return make_error(src.error());
  if (*src == w.sb.root_ino.get()) return make_error(Errc::invalid_argument, "writer: the root cannot be renamed");
  auto tgt = w.resolve(to, &np, &nleaf);
  if (!tgt && (tgt.error().code != Errc::not_found || np == 0 || nleaf.empty())) return make_error(tgt.error());
  if (tgt && *tgt == w.sb.root_ino.get()) return make_error(Errc::invalid_argument, "writer: the root cannot be replaced");
  auto r = w.dirsync_after(op, w.rename_in(op, oleaf, np, nleaf, 0));
  return np == op ? r : w.dirsync_after(np, std::move(r));
}

Status Writer::rename_at(nid_t old_dir, std::string_view old_name, nid_t new_dir, std::string_view new_name,
                         std::uint32_t flags) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto r = impl_->dirsync_after(old_dir, impl_->rename_in(old_dir, old_name, new_dir, new_name, flags));
  return new_dir == old_dir ? r : impl_->dirsync_after(new_dir, std::move(r));
}

// ---- link ----------------------------------------------------------------------------

// f2fs_link(): FI_INC_LINK through f2fs_add_link(): i_links + 1, i_name and
// i_pino of the new name (init_dent_inode(), f2fs_add_regular_entry()),
// FADVISE_LOST_PINO (f2fs_init_inode_metadata()), ctime now. fsck.f2fs
// counts the names of such inodes ("Hard link checking").
Status Writer::Impl::link_in(nid_t ino, nid_t np, std::string_view ngiven) {
  F2FSCORE_TRY(check_name(ngiven));
  auto in = inode_of(*this, ino);
  if (!in) return errno_error(Errc::not_found, ENOENT, in.error().message);
  if (is_dir(**in)) return errno_error(Errc::invalid_argument, EPERM, "writer: no hard links to a directory (EPERM)");
  if ((*in)->i.i_links.get() >= kLinkMax) return errno_error(Errc::invalid_argument, EMLINK, "writer: too many links (EMLINK)");
  if ((*in)->i.i_links.get() == 0) return errno_error(Errc::not_found, ENOENT, "writer: the inode has no name left");
  const std::uint16_t mode = (*in)->i.i_mode.get();
  auto pd = dir_inode(np);
  if (!pd) return make_error(pd.error());
  auto nstored = disk_name(np, ngiven);
  if (!nstored) return make_error(nstored.error());
  const std::string_view nleaf = *nstored;
  auto e = find_entry(np, nleaf);
  if (e) return errno_error(Errc::exists, EEXIST, "writer: \"" + std::string(nleaf) + "\" exists");
  if (e.error().code != Errc::not_found) return make_error(e.error());
  // vfs_link() in fs/namei.c: may_create() (an immutable directory), then
  // no link to an immutable or append-only inode (EPERM).
  F2FSCORE_TRY(may_create(np));
  F2FSCORE_TRY(refuse_flagged(ino, true, "no new link to an immutable or append-only inode"));
  F2FSCORE_TRY(quota_same_project(np, ino));  // writer/quota.cpp: EXDEV (f2fs_link())
  F2FSCORE_TRY(same_policy(np, ino));         // writer/fscrypt.cpp: EXDEV
  F2FSCORE_TRY(add_entry(np, nleaf, ino, file_type(mode)));
  auto in2 = node(ino);
  if (!in2) return make_error(in2.error());
  Node& n = **in2;
  n.i.i_links.set(n.i.i_links.get() + 1);
  set_name(n, nleaf, np);
  n.i.i_advise |= advise::lost_pino;
  set_ctime(n);
  mark_dirty(ino);
  return {};
}

Status Writer::link(std::string_view existing, std::string_view new_path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  auto ino = w.resolve(existing);
  if (!ino) return make_error(ino.error());
  auto in = w.node(*ino);
  if (!in) return make_error(in.error());
  if (is_dir(**in))
    return errno_error(Errc::invalid_argument, EPERM, "writer: \"" + std::string(existing) + "\" is a directory: no hard links (EPERM)");
  auto nn = new_name(w, new_path);
  if (!nn) return make_error(nn.error());
  return w.dirsync_after(nn->parent, w.link_in(*ino, nn->parent, nn->leaf));
}

Status Writer::link_at(nid_t ino, nid_t new_dir, std::string_view new_name) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->dirsync_after(new_dir, impl_->link_in(ino, new_dir, new_name));
}

// ---- symlink, readlink -----------------------------------------------------------------

// f2fs_symlink(): mode S_IFLNK | 0777; the target without its NUL is the
// file's data (page_symlink() writes strlen bytes), i_size its length. A
// target with its NUL must fit a page (fscrypt_prepare_symlink():
// ENAMETOOLONG). It stays inline when it fits MAX_INLINE_DATA (a new
// symlink has FI_INLINE_DATA: f2fs_may_inline_data()), else block 0.
namespace {

Result<nid_t> symlink_in(Writer::Impl& w, nid_t parent, std::string_view leaf, std::string_view target, const Owner& owner,
                         bool owner_rules) {
  if (target.empty()) return errno_error(Errc::invalid_argument, ENOENT, "writer: an empty symlink target (ENOENT)");
  if (target.size() + 1 > kPageSize)
    return errno_error(Errc::invalid_argument, ENAMETOOLONG,
                       fmt("writer: a symlink target of %llu bytes is longer than 4095 (ENAMETOOLONG)", target.size()));
  if (target.find('\0') != std::string_view::npos)
    return errno_error(Errc::invalid_argument, EINVAL, "writer: a symlink target holds NUL");
  bool in_block = false;
  std::string stored;  // the target as stored (struct fscrypt_symlink_data in an encrypted directory)
  auto ino = w.create_in(parent, leaf, static_cast<std::uint16_t>(kLnk | 0777), owner, [&](Node& n) -> Status {
    stored = std::string(target);
    if (auto it = w.inode_keys.find(n.footer.ino.get()); (n.i.i_advise & advise::encrypt) && it != w.inode_keys.end()) {
      // __fscrypt_encrypt_symlink(): the ciphertext and its NUL fit a page.
      auto e = it->second->encrypt_symlink(target, kPageSize - 2 - 1);
      if (!e) return make_error(e.error());
      stored = std::move(*e);
    }
    target = stored;
    n.i.i_size.set(target.size());
    if (target.size() <= w.max_inline(n)) {
      n.i.i_inline |= inline_flag::data | inline_flag::data_exist;
      std::memcpy(reinterpret_cast<std::uint8_t*>(&n) + w.inline_offset(n), target.data(), target.size());
    } else {
      in_block = true;
    }
    return {};
  }, owner_rules);
  if (!ino) return make_error(ino.error());
  if (in_block) {
    std::vector<std::uint8_t> b(kBlockSize, 0);
    std::memcpy(b.data(), target.data(), target.size());
    F2FSCORE_TRY(w.write_file_block(*ino, 0, b.data(), wr::kWarmData));
  }
  return *ino;
}

// f2fs_mknod(); the device number as f2fs_update_inode() stores it
// (fs/f2fs/inode.c): a number old_valid_dev() accepts (major and minor
// below 256) as old_encode_dev() in i_addr[extra], else 0 there and
// new_encode_dev() in i_addr[extra + 1]. FIFOs and sockets store none.
// Regular files and directories go as f2fs_create() and f2fs_mkdir().
Result<nid_t> mknod_in(Writer::Impl& w, nid_t parent, std::string_view leaf, std::uint16_t mode, std::uint32_t rdev,
                       const Owner& owner, bool special_only, bool owner_rules) {
  const std::uint16_t type = mode & kTypeMask;
  const bool special = type == kChr || type == kBlk || type == kFifo || type == kSock;
  if (!special && (special_only || (type != kReg && type != kDir)))
    return errno_error(Errc::invalid_argument, EINVAL, fmt("writer: mknod of mode 0%llo: not a device, FIFO or socket", mode));
  return w.create_in(parent, leaf, mode, owner, [&](Node& n) -> Status {
    if (type != kChr && type != kBlk) return {};
    // new_decode_dev(): major in bits 8-19, minor in bits 0-7 and 20-31.
    const std::uint32_t major = (rdev & 0xfff00u) >> 8;
    const std::uint32_t minor = (rdev & 0xffu) | ((rdev >> 12) & 0xfff00u);
    const std::uint32_t x = w.extra_words(n);
    if (major < 256 && minor < 256) {
      n.i.i_addr[x].set((major << 8) | minor);
      n.i.i_addr[x + 1].set(0);
    } else {
      n.i.i_addr[x].set(0);
      n.i.i_addr[x + 1].set(rdev);
      n.i.i_addr[x + 2].set(0);
    }
    return {};
  }, owner_rules);
}

}  // namespace

// f2fs_symlink(): mode S_IFLNK | 0777; the target without its NUL is the
// file's data (page_symlink() writes strlen bytes), i_size its length. A
// target with its NUL must fit a page (fscrypt_prepare_symlink():
// ENAMETOOLONG). It stays inline when it fits MAX_INLINE_DATA (a new
// symlink has FI_INLINE_DATA: f2fs_may_inline_data()), else block 0.
Result<nid_t> Writer::symlink(std::string_view target, std::string_view link_path) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  auto nn = new_name(*impl_, link_path);
  if (!nn) return make_error(nn.error());
  return impl_->dirsync_after(nn->parent, symlink_in(*impl_, nn->parent, nn->leaf, target, Owner{}, false));
}

Result<nid_t> Writer::symlink_at(nid_t dir, std::string_view name, std::string_view target, const Owner& owner) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->dirsync_after(dir, symlink_in(*impl_, dir, name, target, owner, true));
}

Result<nid_t> Writer::mknod(std::string_view path, std::uint16_t mode, std::uint32_t rdev) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  const std::uint16_t type = mode & kTypeMask;
  if (type != kChr && type != kBlk && type != kFifo && type != kSock)
    return make_error(Errc::invalid_argument, fmt("writer: mknod of mode 0%llo: not a device, FIFO or socket", mode));
  auto nn = new_name(*impl_, path);
  if (!nn) return make_error(nn.error());
  return impl_->dirsync_after(nn->parent, mknod_in(*impl_, nn->parent, nn->leaf, mode, rdev, Owner{}, true, false));
}

Result<nid_t> Writer::mknod_at(nid_t dir, std::string_view name, std::uint16_t mode, std::uint32_t rdev, const Owner& owner) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  return impl_->dirsync_after(dir, mknod_in(*impl_, dir, name, mode, rdev, owner, false, true));
}

Result<std::string> Writer::readlink(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  Impl& w = *impl_;
  auto in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  if (((*in)->i.i_mode.get() & kTypeMask) != kLnk)
    return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not a symlink", ino));
  const std::uint64_t size = (*in)->i.i_size.get();
  if (size >= kPageSize) return make_error(Errc::corrupt, fmt("writer: symlink %llu has i_size %llu", ino, size));
  std::string out(static_cast<std::size_t>(size), '\0');
  if ((*in)->i.i_inline & inline_flag::data) {
    if (size > w.max_inline(**in)) return make_error(Errc::corrupt, fmt("writer: inline symlink %llu is too long", ino));
    std::memcpy(out.data(), reinterpret_cast<const std::uint8_t*>(*in) + w.inline_offset(**in), out.size());
  } else {
    std::vector<std::uint8_t> b(kBlockSize);
    F2FSCORE_TRY(w.read_file_block(ino, 0, b.data()));
    std::memcpy(out.data(), b.data(), out.size());
  }
  auto key = w.key_for(ino);
  if (key && *key != nullptr) return (*key)->decrypt_symlink(out);  // fscrypt_get_symlink()
  auto in2 = inode_of(w, ino);
  if (!in2) return make_error(in2.error());
  if (w.lacks_key(**in2)) {
    // struct fscrypt_symlink_data (le16 length, ciphertext): without the
    // key, the no-key form of the ciphertext (fscrypt_get_symlink()).
    const std::size_t len = out.size() >= 2 ? (static_cast<std::uint8_t>(out[0]) | static_cast<std::uint8_t>(out[1]) << 8) : 0;
    if (len == 0 || len + 2 > out.size())
      return make_error(Errc::corrupt, fmt("writer: encrypted symlink %llu: ciphertext length %llu in %llu bytes", ino, len, size));
    return wr::fscrypt::nokey_name(std::string_view(out).substr(2, len), 0);
  }
  return out;
}

// ---- setattr ------------------------------------------------------------------------------

// f2fs_setattr(): the permission bits (the type kept), owner, times; ctime
// becomes now unless given (setattr_copy() after notify_change() set it).
Status Writer::setattr(nid_t ino, const SetAttr& a) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  auto in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  for (const auto* t : {&a.atime, &a.mtime, &a.ctime})
    if (*t && (*t)->nsec >= 1000000000u)
      return make_error(Errc::invalid_argument, fmt("writer: %llu nanoseconds is not below one second", (*t)->nsec));
  if (a.mode && (*a.mode & ~07777u))
    return make_error(Errc::invalid_argument, fmt("writer: mode 0%llo has bits outside 07777", *a.mode));
  // f2fs_setattr() in fs/f2fs/file.c (and may_setattr() in fs/attr.c
  // before it): no attribute of an immutable inode changes; an append-only
  // one keeps its mode, owner and explicit times (EPERM). The project id
  // alone is FS_IOC_FSSETXATTR's, which neither checks.
  const bool attrs = a.mode || a.uid || a.gid || a.atime || a.mtime || a.ctime || (!a.projid && !a.projinherit);
  if (attrs) F2FSCORE_TRY(w.refuse_flagged(ino, false, "no attribute changes"));
  if (a.mode || a.uid || a.gid || ((a.atime || a.mtime) && !a.times_now))
    F2FSCORE_TRY(w.refuse_flagged(ino, true, "the mode, owner and explicit times do not change"));
  in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  Node& n = **in;
  const bool qfile = w.is_quota_file(ino);
  if (a.projid && *a.projid != w.projid_of(n)) {
    // f2fs_ioc_setproject(): checked before anything changes.
    if (!(w.sb.feature.get() & feature::project_quota) || !(n.i.i_inline & inline_flag::extra_attr))
      return errno_error(Errc::unsupported, 95, "writer: the volume has no project_quota feature or the inode no extra attributes");
    if (qfile) return errno_error(Errc::read_only, 1, "writer: a quota file keeps project 0");
    if (!w.projid_fits(n)) return errno_error(Errc::invalid_argument, 75, "writer: the inode has no room for i_projid");
  }
  // The usage moves with the ids (writer/quota.cpp): EDQUOT past a limit.
  F2FSCORE_TRY(w.quota_transfer(ino, a.uid.value_or(n.i.i_uid.get()), a.gid.value_or(n.i.i_gid.get()),
                                a.projid.value_or(w.projid_of(n))));
  if (a.projid && *a.projid != w.projid_of(n)) n.i.extra.i_projid.set(*a.projid);
  if (a.projinherit)
    n.i.i_flags.set(*a.projinherit ? (n.i.i_flags.get() | iflag::projinherit) : (n.i.i_flags.get() & ~iflag::projinherit));
  if (a.mode) n.i.i_mode.set(static_cast<std::uint16_t>((n.i.i_mode.get() & kTypeMask) | *a.mode));
  if (a.uid) n.i.i_uid.set(*a.uid);
  if (a.gid) n.i.i_gid.set(*a.gid);
  if (a.atime) {
    n.i.i_atime.set(a.atime->sec);
    n.i.i_atime_nsec.set(a.atime->nsec);
  }
  if (a.mtime) {
    n.i.i_mtime.set(a.mtime->sec);
    n.i.i_mtime_nsec.set(a.mtime->nsec);
  }
  const Timespec c = a.ctime ? *a.ctime : w.now_ts();
  n.i.i_ctime.set(c.sec);
  n.i.i_ctime_nsec.set(c.nsec);
  const std::uint16_t mode = n.i.i_mode.get();
  w.mark_dirty(ino);
  if (a.mode) {
    // f2fs_setattr(): posix_acl_chmod() rewrites the access ACL (which
    // sets ctime to now; a ctime given stays).
    F2FSCORE_TRY(wr::acl::chmod(w, ino, mode));
    if (a.ctime) {
      auto again = inode_of(w, ino);
      if (!again) return make_error(again.error());
      (*again)->i.i_ctime.set(c.sec);
      (*again)->i.i_ctime_nsec.set(c.nsec);
      w.mark_dirty(ino);
    }
  }
  return {};
}

// ---- open, release --------------------------------------------------------------------------

// may_open() in fs/namei.c, after the permission bits: inode_permission()
// refuses write access (an access mode but O_RDONLY, or O_TRUNC) to an
// immutable inode, and an append-only inode takes write access only with
// O_APPEND and never O_TRUNC (EPERM).
Status Writer::open(nid_t ino, std::uint32_t flags) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  auto in = inode_of(*impl_, ino);
  if (!in) return make_error(in.error());
  const std::uint32_t acc = flags & open_flag::accmode;
  const bool trunc = flags & open_flag::trunc;
  // fscrypt_file_open() in fs/crypto/hooks.c (from f2fs_file_open()): a
  // regular file opens only with its key (ENOKEY), for reading too.
  if (((*in)->i.i_mode.get() & kTypeMask) == 0x8000) F2FSCORE_TRY(impl_->need_key(ino, "open"));
  if (acc != open_flag::rdonly || trunc) F2FSCORE_TRY(impl_->refuse_flagged(ino, false, "opened for writing"));
  // fsverity_file_open() in fs/verity/open.c: no FMODE_WRITE (EPERM).
  if (acc == open_flag::wronly || acc == open_flag::rdwr || trunc)
    F2FSCORE_TRY(impl_->refuse_verity(ino, "not opened for writing"));
  if ((acc != open_flag::rdonly && !(flags & open_flag::append)) || trunc)
    F2FSCORE_TRY(impl_->refuse_flagged(ino, true, "opened for writing without O_APPEND, or with O_TRUNC"));
  ++impl_->open_count[ino];
  return {};
}

// The last release of an inode at link count 0 frees it and takes it off
// the orphan list (f2fs_evict_inode(): f2fs_remove_orphan_inode()).
Status Writer::release(nid_t ino) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  Impl& w = *impl_;
  auto it = w.open_count.find(ino);
  if (it == w.open_count.end() || it->second == 0)
    return make_error(Errc::invalid_argument, fmt("writer: inode %llu is not open", ino));
  if (--it->second > 0) return {};
  w.open_count.erase(it);
  if (w.opts.read_only) return {};
  auto in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  if ((*in)->i.i_links.get() != 0) return {};
  w.orphans.erase(std::remove(w.orphans.begin(), w.orphans.end(), ino), w.orphans.end());
  w.cache_drop(ino, 0);
  return w.free_inode(ino);
}

// ---- fallocate ------------------------------------------------------------------------------

namespace {

// Zeroes bytes [start, start + len) of block `index` as fill_zero() in
// fs/f2fs/file.c: the page is got (a hole gets a block) and written back —
// unless it lies wholly past i_size, where writeback skips it and only the
// reservation (NEW_ADDR) stays.
Status fill_zero(Writer::Impl& w, nid_t ino, std::uint64_t index, std::size_t start, std::size_t len,
                 std::uint64_t size) {
  if (len == 0) return {};
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  const std::uint8_t type = w.data_type(**ip);
  if (index * kBlockSize >= size) {
    auto a = w.map(ino, index, false);
    if (!a) return make_error(a.error());
    if (*a != kNullAddr) return {};
    nid_t dn = 0;
    std::uint32_t slot = 0;
    auto a2 = w.map(ino, index, true, &dn, &slot);
    if (!a2) return make_error(a2.error());
    if (w.valid_user_blocks() + 1 > w.cp.user_block_count.get())
      return make_error(Errc::no_space, "writer: every user block is in use");
    F2FSCORE_TRY(w.quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
    auto dp = w.node(dn);
    if (!dp) return make_error(dp.error());
    if (dn == ino) (*dp)->i.i_addr[w.extra_words(**dp) + slot].set(kNewAddr);
    else (*dp)->dn.addr[slot].set(kNewAddr);
    w.mark_dirty(dn);
    ++w.reserved_blocks;
    auto ip2 = w.node(ino);
    if (!ip2) return make_error(ip2.error());
    (*ip2)->i.i_blocks.set((*ip2)->i.i_blocks.get() + 1);
    w.mark_dirty(ino);
    return {};
  }
  std::vector<std::uint8_t> b(kBlockSize);
  F2FSCORE_TRY(w.read_file_block(ino, index, b.data()));
  std::memset(b.data() + start, 0, len);
  return w.cache_write(ino, index, b.data(), type);
}

// Block `index` becomes NEW_ADDR: a hole is reserved (i_blocks + 1), a
// written block is invalidated (f2fs_reserve_new_blocks() /
// f2fs_do_zero_range()); with `keep_written` a written block stays.
Status reserve_block(Writer::Impl& w, nid_t ino, std::uint64_t index, bool keep_written) {
  nid_t dn = 0;
  std::uint32_t slot = 0;
  auto a = w.map(ino, index, true, &dn, &slot);
  if (!a) return make_error(a.error());
  if (*a == kNewAddr) return {};
  if (*a != kNullAddr && keep_written) return {};
  if (*a == kNullAddr && w.valid_user_blocks() + 1 > w.cp.user_block_count.get())
    return make_error(Errc::no_space, "writer: every user block is in use (fallocate)");
  if (*a == kNullAddr) F2FSCORE_TRY(w.quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
  if (*a != kNullAddr) w.invalidate(*a);
  auto dp = w.node(dn);
  if (!dp) return make_error(dp.error());
  if (dn == ino) (*dp)->i.i_addr[w.extra_words(**dp) + slot].set(kNewAddr);
  else (*dp)->dn.addr[slot].set(kNewAddr);
  w.mark_dirty(dn);
  ++w.reserved_blocks;
  if (*a == kNullAddr) {
    auto ip = w.node(ino);
    if (!ip) return make_error(ip.error());
    (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() + 1);
    w.mark_dirty(ino);
  }
  return {};
}

// Frees the blocks [from, to) (f2fs_truncate_hole(): the node tree stays),
// skipping a missing direct node's whole range at once.
Status free_range(Writer::Impl& w, nid_t ino, std::uint64_t from, std::uint64_t to, std::uint64_t api) {
  w.cache_drop(ino, from, to);
  for (std::uint64_t i = from; i < to;) {
    nid_t dn = 0;
    std::uint32_t slot = 0;
    auto a = w.map(ino, i, false, &dn, &slot);
    if (!a) return make_error(a.error());
    if (dn == 0 && i >= api) {  // no direct node here
      i = api + ((i - api) / kDefAddrsPerBlock + 1) * kDefAddrsPerBlock;
      continue;
    }
    if (*a != kNullAddr) F2FSCORE_TRY(w.free_file_block(ino, i));
    ++i;
  }
  return {};
}

}  // namespace

// f2fs_fallocate() in fs/f2fs/file.c: regular files only; inline data is
// converted first; mtime and ctime become now.
// - 0 / keep_size (expand_inode_data()): the holes of blocks
//   [offset >> 12, (offset + length - 1) >> 12] are reserved (NEW_ADDR,
//   read as zeroes, counted in i_blocks and valid_block_count); i_size
//   grows to offset + length, or with keep_size FADVISE_KEEP_SIZE is set.
// - punch_hole | keep_size (f2fs_punch_hole()): nothing when offset is at or
//   past i_size; partial blocks at the ends are zeroed (fill_zero()), whole
//   blocks in between freed.
// - zero_range [| keep_size] (f2fs_zero_range()): partial ends zeroed, whole
//   blocks become NEW_ADDR (written ones invalidated); i_size as mode 0.
Status Writer::fallocate(nid_t ino, std::uint32_t mode, std::uint64_t offset, std::uint64_t length) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  auto in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  // vfs_fallocate() in fs/open.c: an append-only inode takes only
  // preallocation (mode 0 or keep_size), an immutable one nothing (EPERM).
  if (mode & ~falloc::keep_size) F2FSCORE_TRY(w.refuse_flagged(ino, true, "fallocate other than preallocation"));
  F2FSCORE_TRY(w.refuse_flagged(ino, false, "fallocate"));
  F2FSCORE_TRY(w.refuse_verity(ino, "no fallocate"));
  in = inode_of(w, ino);
  if (!in) return make_error(in.error());
  if (((*in)->i.i_mode.get() & kTypeMask) != kReg)
    return make_error(Errc::invalid_argument, fmt("writer: fallocate on inode %llu, not a regular file (EINVAL)", ino));
  if (length == 0) return make_error(Errc::invalid_argument, "writer: fallocate of 0 bytes (EINVAL)");
  const bool keep = mode & falloc::keep_size;
  const std::uint32_t op = mode & ~falloc::keep_size;
  if (op == falloc::punch_hole && !keep)
    return make_error(Errc::unsupported, "writer: punch_hole needs keep_size (EOPNOTSUPP, as vfs_fallocate())");
  if (op != 0 && op != falloc::punch_hole && op != falloc::zero_range)
    return make_error(Errc::unsupported, fmt("writer: fallocate mode 0x%llx is not supported (EOPNOTSUPP)", mode));
  // Compressed files: f2fs_fallocate() refuses punch_hole and zero_range
  // (EOPNOTSUPP); the writer reserves no blocks in clusters either.
  if (Writer::Impl::compressed(**in))
    return errno_error(Errc::unsupported, EOPNOTSUPP,
                       fmt("writer: fallocate on compressed inode %llu is not supported (EOPNOTSUPP)", ino));
  const std::uint64_t api = w.addrs_per_inode(**in);
  const std::uint64_t max_bytes = max_file_blocks(api) * kBlockSize;
  if (offset + length < offset || offset + length > max_bytes)
    return errno_error(Errc::invalid_argument, EFBIG, fmt("writer: fallocate to %llu bytes passes the largest file (%llu bytes, EFBIG)",
                                                         offset + length, max_bytes));
  const std::uint64_t size = (*in)->i.i_size.get();
  if (op == falloc::punch_hole && offset >= size) return {};
  F2FSCORE_TRY(w.convert_inline_data(ino));
  const std::uint64_t end = offset + length;
  const std::uint64_t pg_start = offset / kBlockSize, pg_end = end / kBlockSize;
  const std::size_t off_start = static_cast<std::size_t>(offset % kBlockSize), off_end = static_cast<std::size_t>(end % kBlockSize);
  std::uint64_t new_size = size;
  if (op == 0) {
    const std::uint64_t last = pg_end + (off_end ? 1 : 0);
    for (std::uint64_t i = pg_start; i < last; ++i) F2FSCORE_TRY(reserve_block(w, ino, i, true));
    new_size = std::max(size, end);
  } else if (op == falloc::punch_hole) {
    if (pg_start == pg_end) {
      F2FSCORE_TRY(fill_zero(w, ino, pg_start, off_start, off_end - off_start, size));
    } else {
      std::uint64_t first = pg_start;
      if (off_start) F2FSCORE_TRY(fill_zero(w, ino, first++, off_start, kBlockSize - off_start, size));
      if (off_end) F2FSCORE_TRY(fill_zero(w, ino, pg_end, 0, off_end, size));
      if (first < pg_end) F2FSCORE_TRY(free_range(w, ino, first, pg_end, api));
    }
  } else {  // zero_range
    new_size = std::max(size, end);
    const std::uint64_t visible = keep ? size : new_size;
    if (pg_start == pg_end) {
      F2FSCORE_TRY(fill_zero(w, ino, pg_start, off_start, off_end - off_start, visible));
    } else {
      std::uint64_t first = pg_start;
      if (off_start) F2FSCORE_TRY(fill_zero(w, ino, first++, off_start, kBlockSize - off_start, visible));
      if (first < pg_end) w.cache_drop(ino, first, pg_end);
      for (std::uint64_t i = first; i < pg_end; ++i) F2FSCORE_TRY(reserve_block(w, ino, i, false));
      if (off_end) F2FSCORE_TRY(fill_zero(w, ino, pg_end, 0, off_end, visible));
    }
  }
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  Node& n = **ip;
  if (new_size > size) {
    if (keep) n.i.i_advise |= advise::keep_size;
    else n.i.i_size.set(new_size);
  }
  w.touch(n);
  w.mark_dirty(ino);
  return {};
}

}  // namespace f2fscore
