// Quota usage on volumes with the quota feature, as the kernel's dquot code
// keeps it for f2fs (fs/quota/dquot.c, fs/f2fs/f2fs.h): one inode and
// (i_blocks - 1) x 4 KiB of space per inode to its user, group and (with
// project_quota) project; i_blocks counts data blocks, direct and indirect
// nodes and the xattr node (inc_valid_block_count() and
// inc_valid_node_count() charge each through dquot_reserve_block() and
// dquot_claim_block(), the inode block itself through dquot_alloc_inode()
// only). The quota files themselves are not charged (IS_NOQUOTA).
//
// Each inode page carries what was last charged for it (wr::QuotaCharge):
// recorded when the page is read, settled against the page before it is
// written (and so before it can be evicted), returned when the inode is
// freed. At a checkpoint every dirty inode is settled and the changed
// entries are written into the quota files, as dquot_writeback_dquots()
// and f2fs_quota_sync() do before the checkpoint.
#include <algorithm>
#include <cstring>
#include <map>

#include "disk/quota.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;
namespace q = disk::quota;

namespace wr {
struct QuotaFiles {
  struct Type {
    nid_t ino = 0;  ///< 0: no file of this type
    std::vector<std::uint8_t> file;  ///< its bytes (i_size)
    std::map<std::uint32_t, q::Dquot> dquots;
    std::map<std::uint32_t, bool> dirty;  ///< ids whose usage changed since the last flush
    std::uint64_t bgrace = 0, igrace = 0;  ///< dqi_bgrace, dqi_igrace (seconds)
  };
  Type t[3];
};
void QuotaFilesDeleter::operator()(QuotaFiles* p) const noexcept { delete p; }
}  // namespace wr

namespace {
bool is_inode_page(const Node& n, nid_t nid) {
  return n.footer.ino.get() == nid && (n.footer.flag.get() >> node_flag::offset_shift) == 0;
}
}  // namespace

bool Writer::Impl::projid_fits(const Node& in) const {
  return (in.i.i_inline & inline_flag::extra_attr) &&
         in.i.extra.i_extra_isize.get() >= offsetof(InodeExtra, i_projid) + 4;
}

std::uint32_t Writer::Impl::projid_of(const Node& in) const {
  if (!(sb.feature.get() & feature::project_quota) || !projid_fits(in)) return 0;
  return in.i.extra.i_projid.get();
}

Status Writer::Impl::quota_load() {
  // A read-only mount changes no usage: the files are not needed.
  if (!(sb.feature.get() & feature::quota_ino) || opts.read_only) return {};
  auto refuse = [](const std::string& why) {
    return make_error(Errc::corrupt, "writer: refusing to mount read-write: " + why + "; run f2fscore-fsck");
  };
  if (cp.ckpt_flags.get() & cp_flag::quota_need_fsck)
    return refuse("the checkpoint has CP_QUOTA_NEED_FSCK_FLAG (the quota files need repair)");
  auto qf = std::unique_ptr<wr::QuotaFiles, wr::QuotaFilesDeleter>(new wr::QuotaFiles);
  static const char* kNames[3] = {"user", "group", "project"};
  for (int t = 0; t < 3; ++t) {
    const nid_t ino = sb.qf_ino[t].get();
    if (ino == 0 || (t == 2 && !(sb.feature.get() & feature::project_quota))) continue;
    auto in = node(ino);
    const std::string name = std::string("the ") + kNames[t] + " quota file";
    if (!in) return refuse(name + fmt(" (inode %llu) cannot be read: ", ino) + in.error().message);
    const std::uint64_t size = (*in)->i.i_size.get();
    if (size < 2 * q::kQtBlk || size > (64u << 20))
      return refuse(name + fmt(" has %llu bytes", size));
    wr::QuotaFiles::Type& ty = qf->t[t];
    ty.ino = ino;
    ty.file.assign(static_cast<std::size_t>(size), 0);
    std::vector<std::uint8_t> blk(kBlockSize);
    for (std::uint64_t off = 0; off < size; off += kBlockSize) {
      F2FSCORE_TRY(read_file_block(ino, off / kBlockSize, blk.data()));
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlockSize, size - off));
      std::memcpy(ty.file.data() + static_cast<std::size_t>(off), blk.data(), n);
    }
    if (load_le32(ty.file.data(), 0) != kQuotaMagics[t] || load_le32(ty.file.data(), 4) != 1)
      return refuse(name + fmt(" is not quota format v2r1 (magic 0x%llx, version %llu)", load_le32(ty.file.data(), 0),
                               load_le32(ty.file.data(), 4)));
    ty.bgrace = load_le32(ty.file.data(), q::kDqiBgrace);
    ty.igrace = load_le32(ty.file.data(), q::kDqiIgrace);
    const std::string why = q::read_dquots(ty.file, ty.dquots);
    if (!why.empty()) return refuse(name + ": " + why);
  }
  quota = std::move(qf);
  return {};
}

void Writer::Impl::quota_seen(nid_t n) {
  if (!quota) return;
  wr::QuotaCharge* c = nm.charge(n);
  Node* p = nm.cached_page(n);
  if (!c || !p || c->known) return;
  c->known = true;
  if (!is_inode_page(*p, n)) return;
  if (is_quota_file(n)) return;
  if (p->i.i_links.get() == 0 && std::find(orphans.begin(), orphans.end(), n) == orphans.end()) return;
  c->counted = true;
  c->id[0] = p->i.i_uid.get();
  c->id[1] = p->i.i_gid.get();
  c->id[2] = projid_of(*p);
  c->blocks = p->i.i_blocks.get() ? p->i.i_blocks.get() - 1 : 0;
}

namespace {
// dquot_incr_*/dquot_decr_*: usage never goes below 0; a decrease to or
// under a soft limit ends its grace time (dquot_decr_space(),
// dquot_decr_inodes()).
void charge_one(wr::QuotaFiles::Type& ty, std::uint32_t id, std::int64_t inodes, std::int64_t blocks) {
  if (ty.ino == 0 || (inodes == 0 && blocks == 0)) return;
  q::Dquot& d = ty.dquots[id];
  const std::int64_t space = blocks * static_cast<std::int64_t>(kBlockSize);
  if (inodes < 0 && d.inodes < static_cast<std::uint64_t>(-inodes)) d.inodes = 0;
  else d.inodes = static_cast<std::uint64_t>(static_cast<std::int64_t>(d.inodes) + inodes);
  if (space < 0 && d.space < static_cast<std::uint64_t>(-space)) d.space = 0;
  else d.space = static_cast<std::uint64_t>(static_cast<std::int64_t>(d.space) + space);
  if (inodes < 0 && d.inodes <= d.isoftlimit) d.itime = 0;
  if (space < 0 && d.space <= d.bsoftlimit * q::kQtBlk) d.btime = 0;
  ty.dirty[id] = true;
}

constexpr int kEdquot = 122;
}  // namespace

void Writer::Impl::quota_settle(nid_t n) {
  if (!quota) return;
  quota_seen(n);
  wr::QuotaCharge* c = nm.charge(n);
  Node* p = nm.cached_page(n);
  if (!c || !p || !is_inode_page(*p, n)) return;
  if (is_quota_file(n)) return;
  const std::uint32_t id[3] = {p->i.i_uid.get(), p->i.i_gid.get(), projid_of(*p)};
  const std::uint64_t blocks = p->i.i_blocks.get() ? p->i.i_blocks.get() - 1 : 0;
  if (c->counted && blocks == c->blocks && std::equal(id, id + 3, c->id)) return;
  for (int t = 0; t < 3; ++t) {
    wr::QuotaFiles::Type& ty = quota->t[t];
    if (c->counted && c->id[t] == id[t]) {
      charge_one(ty, id[t], 0, static_cast<std::int64_t>(blocks) - static_cast<std::int64_t>(c->blocks));
      continue;
    }
    if (c->counted) charge_one(ty, c->id[t], -1, -static_cast<std::int64_t>(c->blocks));
    charge_one(ty, id[t], 1, static_cast<std::int64_t>(blocks));
  }
  c->counted = true;
  std::copy(id, id + 3, c->id);
  c->blocks = blocks;
}

void Writer::Impl::quota_release(nid_t n) {
  if (!quota) return;
  quota_seen(n);
  wr::QuotaCharge* c = nm.charge(n);
  if (!c || !c->counted) return;
  for (int t = 0; t < 3; ++t) charge_one(quota->t[t], c->id[t], -1, -static_cast<std::int64_t>(c->blocks));
  c->counted = false;
}

bool Writer::Impl::quota_dirty() const {
  if (!quota) return false;
  for (const auto& ty : quota->t)
    if (!ty.dirty.empty()) return true;
  return false;
}

Status Writer::Impl::quota_flush() {
  if (!quota) return {};
  for (nid_t n : nm.dirty_nids()) quota_settle(n);
  for (int t = 0; t < 3; ++t) {
    wr::QuotaFiles::Type& ty = quota->t[t];
    if (ty.ino == 0 || ty.dirty.empty()) continue;
    const std::vector<std::uint8_t> before = ty.file;
    for (const auto& [id, _] : ty.dirty) {
      q::Dquot& d = ty.dquots[id];
      const bool unused = d.inodes == 0 && d.space == 0 && d.ihardlimit == 0 && d.isoftlimit == 0 &&
                          d.bhardlimit == 0 && d.bsoftlimit == 0 && d.btime == 0 && d.itime == 0;
      if (unused) {
        // No usage and no limits: the entry leaves the tree, as
        // qtree_release_dquot() deletes it when its dquot is released.
        if (d.file_off != 0) {
          const std::string why = q::delete_dquot(ty.file, id, d.file_off);
          if (!why.empty()) return make_error(Errc::corrupt, fmt("writer: quota id %llu: ", id) + why);
        }
        ty.dquots.erase(id);
        continue;
      }
      if (d.file_off == 0) {
        // A new id: dq_insert_tree() (the file grows by 1 KiB tree blocks).
        const std::string why = q::insert_dquot(ty.file, id, d.inodes, d.space, true, &d.file_off);
        if (!why.empty()) return make_error(Errc::corrupt, fmt("writer: quota id %llu: ", id) + why);
      }
      std::uint8_t* e = ty.file.data() + static_cast<std::size_t>(d.file_off);
      store_le64(e, q::kDqbIhardlimit, d.ihardlimit);
      store_le64(e, q::kDqbIsoftlimit, d.isoftlimit);
      store_le64(e, q::kDqbCurinodes, d.inodes);
      store_le64(e, q::kDqbBhardlimit, d.bhardlimit);
      store_le64(e, q::kDqbBsoftlimit, d.bsoftlimit);
      store_le64(e, q::kDqbCurspace, d.space);
      store_le64(e, q::kDqbBtime, d.btime);
      store_le64(e, q::kDqbItime, d.itime);
    }
    ty.dirty.clear();
    // The changed 4 KiB blocks through the file path; i_size follows the
    // tree (f2fs_quota_write() extends it to the last byte written).
    auto in = node(ty.ino);
    if (!in) return make_error(in.error());
    const std::uint8_t type = data_type(**in);
    std::vector<std::uint8_t> blk(kBlockSize);
    bool wrote = false;
    for (std::size_t off = 0; off < ty.file.size(); off += kBlockSize) {
      const std::size_t end = std::min<std::size_t>(off + kBlockSize, ty.file.size());
      const bool changed = end > before.size() ||
                           !std::equal(ty.file.begin() + static_cast<std::ptrdiff_t>(off),
                                       ty.file.begin() + static_cast<std::ptrdiff_t>(end),
                                       before.begin() + static_cast<std::ptrdiff_t>(off));
      if (!changed) continue;
      std::fill(blk.begin(), blk.end(), std::uint8_t{0});
      std::memcpy(blk.data(), ty.file.data() + off, end - off);
      F2FSCORE_TRY(write_file_block(ty.ino, off / kBlockSize, blk.data(), type));
      wrote = true;
    }
    if (!wrote) continue;
    auto ip = node(ty.ino);
    if (!ip) return make_error(ip.error());
    if ((*ip)->i.i_size.get() < ty.file.size()) (*ip)->i.i_size.set(ty.file.size());
    set_ctime(**ip, true);
    mark_dirty(ty.ino);
  }
  return {};
}

// ---- Limits (check_bdq() / check_idq(), dquot_add_space() /
// dquot_add_inodes() in fs/quota/dquot.c) ----

namespace {
// The checks of one id for `inodes` more inodes and `space` more bytes:
// a hard limit passed, or a soft limit passed after its grace time,
// refuses; a soft limit passed with no grace time running starts one
// (*start_btime / *start_itime: the deadline to set when all ids pass).
Status check_limits(const q::Dquot& d, std::uint64_t inodes, std::uint64_t space, std::uint64_t now,
                    std::uint64_t bgrace, std::uint64_t igrace, const char* type, std::uint32_t id,
                    std::uint64_t* start_btime, std::uint64_t* start_itime) {
  auto edquot = [&](const char* what) {
    return errno_error(Errc::no_space, kEdquot,
                       std::string("writer: ") + type + fmt(" %llu is over its ", id) + what + " (EDQUOT)");
  };
  if (inodes) {
    const std::uint64_t n = d.inodes + inodes;
    if (d.ihardlimit && n > d.ihardlimit) return edquot("inode hard limit");
    if (d.isoftlimit && n > d.isoftlimit) {
      if (d.itime && now >= d.itime) return edquot("inode soft limit past its grace time");
      if (!d.itime) *start_itime = now + igrace;
    }
  }
  if (space) {
    const std::uint64_t s = d.space + space;
    if (d.bhardlimit && s > d.bhardlimit * q::kQtBlk) return edquot("space hard limit");
    if (d.bsoftlimit && s > d.bsoftlimit * q::kQtBlk) {
      if (d.btime && now >= d.btime) return edquot("space soft limit past its grace time");
      if (!d.btime) *start_btime = now + bgrace;
    }
  }
  return {};
}
}  // namespace

// The ids' limits for `inodes` more inodes and `blocks` more blocks, each
// enforced type; grace times start only when every type passes. An id with
// limits sees every inode's usage: the dirty inodes are settled first (a
// truncate of another file may have freed space).
static Status charge_check(Writer::Impl& w, const std::uint32_t id[3], std::uint64_t inodes, std::uint64_t blocks) {
  static const char* kNames[3] = {"user", "group", "project"};
  const bool enforce[3] = {w.opts.usrquota, w.opts.grpquota, w.opts.prjquota};
  bool limited = false;
  for (int t = 0; t < 3; ++t) {
    const wr::QuotaFiles::Type& ty = w.quota->t[t];
    if (!enforce[t] || ty.ino == 0) continue;
    auto it = ty.dquots.find(id[t]);
    if (it == ty.dquots.end()) continue;
    const q::Dquot& d = it->second;
    limited |= (d.bhardlimit | d.bsoftlimit | d.ihardlimit | d.isoftlimit) != 0;
  }
  if (!limited) return {};
  for (nid_t n : w.nm.dirty_nids()) w.quota_settle(n);
  std::uint64_t btime[3] = {}, itime[3] = {};
  for (int t = 0; t < 3; ++t) {
    wr::QuotaFiles::Type& ty = w.quota->t[t];
    if (!enforce[t] || ty.ino == 0) continue;
    auto it = ty.dquots.find(id[t]);
    if (it == ty.dquots.end()) continue;
    F2FSCORE_TRY(check_limits(it->second, inodes, blocks * kBlockSize, w.now(), ty.bgrace, ty.igrace, kNames[t], id[t],
                              &btime[t], &itime[t]));
  }
  for (int t = 0; t < 3; ++t) {
    wr::QuotaFiles::Type& ty = w.quota->t[t];
    if (!btime[t] && !itime[t]) continue;
    q::Dquot& d = ty.dquots[id[t]];
    if (btime[t]) d.btime = btime[t];
    if (itime[t]) d.itime = itime[t];
    ty.dirty[id[t]] = true;
  }
  return {};
}

Status Writer::Impl::quota_same_project(nid_t dir, nid_t ino) {
  if (!(sb.feature.get() & feature::project_quota)) return {};
  auto d = node(dir);
  if (!d) return make_error(d.error());
  if (!((*d)->i.i_flags.get() & iflag::projinherit)) return {};
  const std::uint32_t dp = projid_of(**d);
  auto i = node(ino);
  if (!i) return make_error(i.error());
  const std::uint32_t ip = projid_of(**i);
  if (dp == ip) return {};
  return errno_error(Errc::invalid_argument, 18,
                     fmt("writer: directory %llu takes only project %llu (PROJINHERIT); inode %llu is in project ", dir, dp,
                         ino) +
                         fmt("%llu (EXDEV)", ip));
}

Status Writer::Impl::quota_alloc_block(nid_t ino, std::uint64_t blocks) {
  if (!quota || !(opts.usrquota || opts.grpquota || opts.prjquota)) return {};
  if (is_quota_file(ino)) return {};
  quota_settle(ino);
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const std::uint32_t id[3] = {(*in)->i.i_uid.get(), (*in)->i.i_gid.get(), projid_of(**in)};
  return charge_check(*this, id, 0, blocks);
}

Status Writer::Impl::quota_alloc_inode(std::uint32_t uid, std::uint32_t gid, std::uint32_t projid) {
  if (!quota || !(opts.usrquota || opts.grpquota || opts.prjquota)) return {};
  const std::uint32_t id[3] = {uid, gid, projid};
  return charge_check(*this, id, 1, 0);
}

Status Writer::Impl::quota_transfer(nid_t ino, std::uint32_t uid, std::uint32_t gid, std::uint32_t projid) {
  if (!quota || !(opts.usrquota || opts.grpquota || opts.prjquota)) return {};
  if (is_quota_file(ino)) return {};
  quota_settle(ino);
  auto in = node(ino);
  if (!in) return make_error(in.error());
  const std::uint32_t cur[3] = {(*in)->i.i_uid.get(), (*in)->i.i_gid.get(), projid_of(**in)};
  if (cur[0] == uid && cur[1] == gid && cur[2] == projid) return {};
  const std::uint64_t blocks = (*in)->i.i_blocks.get() ? (*in)->i.i_blocks.get() - 1 : 0;
  // Only the types whose id changes are checked (__dquot_transfer()).
  const bool save[3] = {opts.usrquota, opts.grpquota, opts.prjquota};
  opts.usrquota = save[0] && cur[0] != uid;
  opts.grpquota = save[1] && cur[1] != gid;
  opts.prjquota = save[2] && cur[2] != projid;
  const std::uint32_t id[3] = {uid, gid, projid};
  Status st = charge_check(*this, id, 1, blocks);
  opts.usrquota = save[0];
  opts.grpquota = save[1];
  opts.prjquota = save[2];
  return st;
}

// ---- Public entry points -----------------------------------------------------

Result<QuotaUsage> Writer::quota_usage(std::uint32_t type, std::uint32_t id) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(false));
  Impl& w = *impl_;
  if (type > 2) return make_error(Errc::invalid_argument, fmt("writer: quota type %llu (0 user, 1 group, 2 project)", type));
  if (!w.quota || w.quota->t[type].ino == 0)
    return make_error(Errc::unsupported, "writer: the volume keeps no quota of this type");
  for (nid_t n : w.nm.dirty_nids()) w.quota_settle(n);
  QuotaUsage u;
  auto it = w.quota->t[type].dquots.find(id);
  if (it == w.quota->t[type].dquots.end()) return u;
  const q::Dquot& d = it->second;
  u.inodes = d.inodes;
  u.space = d.space;
  u.ihardlimit = d.ihardlimit;
  u.isoftlimit = d.isoftlimit;
  u.bhardlimit = d.bhardlimit * q::kQtBlk;
  u.bsoftlimit = d.bsoftlimit * q::kQtBlk;
  return u;
}

Status Writer::set_quota_limits(std::uint32_t type, std::uint32_t id, const QuotaUsage& l) {
  F2FSCORE_WRITER_LOCK(impl_);
  F2FSCORE_TRY(impl_->usable(true));
  Impl& w = *impl_;
  if (type > 2) return make_error(Errc::invalid_argument, fmt("writer: quota type %llu (0 user, 1 group, 2 project)", type));
  if (!w.quota || w.quota->t[type].ino == 0)
    return make_error(Errc::unsupported, "writer: the volume keeps no quota of this type");
  for (nid_t n : w.nm.dirty_nids()) w.quota_settle(n);
  wr::QuotaFiles::Type& ty = w.quota->t[type];
  q::Dquot& d = ty.dquots[id];
  // dquot_set_dqblk(): bytes to 1 KiB units rounded up (qstoqb()); a soft
  // limit with usage over it starts its grace time, else none runs.
  d.bhardlimit = (l.bhardlimit + q::kQtBlk - 1) / q::kQtBlk;
  d.bsoftlimit = (l.bsoftlimit + q::kQtBlk - 1) / q::kQtBlk;
  d.ihardlimit = l.ihardlimit;
  d.isoftlimit = l.isoftlimit;
  if (!d.bsoftlimit || d.space <= d.bsoftlimit * q::kQtBlk) d.btime = 0;
  else d.btime = w.now() + ty.bgrace;
  if (!d.isoftlimit || d.inodes <= d.isoftlimit) d.itime = 0;
  else d.itime = w.now() + ty.igrace;
  ty.dirty[id] = true;
  return {};
}

}  // namespace f2fscore
