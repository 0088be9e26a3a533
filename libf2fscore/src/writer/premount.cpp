// The writer's pre-mount check and allocation guards: a read-write mount
// does not write on a volume whose structures it relies on are damaged,
// and never hands out a nid or a block that something still uses.
// See docs/writer.md ("Damaged volumes").
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "f2fscore/fsck.hpp"
#include "f2fscore/iostat.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace {

const char* const kLogNames[6] = {"hot data", "warm data", "cold data", "hot node", "warm node", "cold node"};

}  // namespace

Status Writer::Impl::premount_check() {
  if (opts.read_only) return {};
  std::vector<std::string> found;
  // Preen's fast check, through the checker itself, on the caller's device
  // beneath any iostat layer: its reads are no I/O the kernel's mount does,
  // and iostat counts what the kernel would.
  BlockDevice* raw = &tagged.inner;
  if (auto* io = dynamic_cast<IostatDevice*>(raw)) raw = &io->inner();
  // Through a TagDevice of its own (no iostat below it: the tags go
  // nowhere) for its aligned copies on a direct device (O_DIRECT): the
  // checker reads into ordinary buffers.
  wr::TagDevice aligned(*raw);
  BlockDevice* target = &aligned;
  // Checkpoint counts that disagree are no refusal: load() then takes them
  // from a walk of the tree (load_from_tree(), `recount`), and nids that
  // walk finds unreached are never handed out (alloc_nid()).
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.fast_only = opts.premount_check == MountOptions::PremountCheck::fast;
  fo.force = !fo.fast_only;
  auto rep = fsck::check(*target, fo);
  if (!rep)
    return make_error(rep.error().code, "writer: refusing to mount read-write: the pre-mount check failed: " +
                                            rep.error().message + "; run f2fscore-fsck");
  for (const auto& p : rep->problems) {
    if (fsck::definition(p.code).severity == fsck::Severity::info) continue;
    if (p.code == fsck::Code::CP_VALID_BLOCK_COUNT || p.code == fsck::Code::CP_VALID_NODE_COUNT ||
        p.code == fsck::Code::CP_VALID_INODE_COUNT || p.code == fsck::Code::CP_FREE_SEGMENT_COUNT) {
      recount = true;
      continue;
    }
    found.push_back(p.to_string());
  }
  // Counts that disagree say the volume was not left consistent: the full
  // check (the namespace walk) runs then, so that what the recount's walk
  // of the NAT cannot see (a dentry naming a nid whose NAT entry was lost,
  // which alloc_nid() would hand out again; blocks in use that the SIT
  // lost) refuses the mount. Its count problems are the recount's.
  if (recount && found.empty() && opts.premount_check == MountOptions::PremountCheck::fast) {
    fsck::Options full;
    full.mode = fsck::Mode::check_only;
    full.force = true;
    auto frep = fsck::check(*target, full);
    if (!frep)
      return make_error(frep.error().code, "writer: refusing to mount read-write: the pre-mount check failed: " +
                                               frep.error().message + "; run f2fscore-fsck");
    for (const auto& p : frep->problems) {
      if (fsck::definition(p.code).severity == fsck::Severity::info) continue;
      if (p.code == fsck::Code::CP_VALID_BLOCK_COUNT || p.code == fsck::Code::CP_VALID_NODE_COUNT ||
          p.code == fsck::Code::CP_VALID_INODE_COUNT || p.code == fsck::Code::CP_FREE_SEGMENT_COUNT)
        continue;
      found.push_back(p.to_string());
    }
  }

  // The orphan list and the active logs, read through a Volume of its own
  // on the same device (the checker found it opens).
  auto cv = Volume::open(*target);
  if (!cv) return make_error(cv.error());
  Volume& v = **cv;
  // The orphan list: mount frees every inode on it (recover_orphans()), so
  // each must be an inode without links (fsck.f2fs's check_orphan_node()).
  {
    auto orph = v.orphans();
    if (!orph) return make_error(orph.error());
    for (nid_t o : *orph) {
      auto in = v.read_inode(o);
      if (!in) {
        found.push_back(fmt("[ORPHAN_ENTRY_INVALID] ino %llu: ", o) + in.error().message);
        break;
      }
      if (in->links != 0) {
        found.push_back(fmt("[ORPHAN_HAS_LINKS] ino %llu: on the orphan list with i_links %llu", o, in->links));
        break;
      }
    }
  }

  // The root directory, which populate and every path operation start
  // from: a directory inode whose level-0 bucket (the inline area, or
  // blocks 0 and 1, where entries hashing to 0 belong) holds "." and ".."
  // naming the root, as f2fs_do_make_empty_dir() in fs/f2fs/dir.c writes
  // them. At most two dentry blocks are read, whatever the directory's size.
  {
    const nid_t root = sb.root_ino.get();
    auto in = v.read_inode(root);
    if (!in) {
      found.push_back(fmt("[ROOT_BAD] ino %llu: ", root) + in.error().message);
    } else if (!in->is_dir()) {
      found.push_back(fmt("[ROOT_BAD] ino %llu: i_mode 0%llo is not a directory", root, in->mode));
    } else {
      std::vector<DirEntryInfo> level0;
      if (in->has_inline_dentry()) {
        auto all = v.read_dir(*in);
        if (!all) found.push_back(fmt("[ROOT_BAD] ino %llu: ", root) + all.error().message);
        else level0 = std::move(*all);
      } else {
        const std::uint64_t bytes = std::min<std::uint64_t>(in->size, 2 * kBlockSize) / kBlockSize * kBlockSize;
        std::vector<std::uint8_t> b(static_cast<std::size_t>(bytes));
        auto got = v.read(*in, 0, b);
        if (!got) {
          found.push_back(fmt("[ROOT_BAD] ino %llu: ", root) + got.error().message);
        } else {
          for (std::uint64_t off = 0; off + kBlockSize <= *got; off += kBlockSize) {
            const auto* d = reinterpret_cast<const DentryBlock*>(b.data() + off);
            for (std::uint32_t k = 0; k < kNrDentryInBlock; ++k) {
              const std::uint16_t len = d->dentry[k].name_len.get();
              if (!test_bit_le(d->dentry_bitmap, k) || len == 0 || len > 2) continue;
              level0.push_back({std::string(reinterpret_cast<const char*>(d->filename[k]), len), d->dentry[k].ino.get()});
            }
          }
        }
      }
      for (const char* name : {".", ".."}) {
        std::uint32_t n = 0, right = 0;
        for (const auto& e : level0)
          if (e.name == name) ++n, right += e.ino == root;
        if (n != 1 || right != 1)
          found.push_back(std::string(name[1] ? "[DENTRY_DOTDOT]" : "[DENTRY_DOT]") + fmt(" ino %llu (/): %llu '", root, n) +
                          name + fmt("' entries in level 0, %llu naming the root", right));
      }
    }
  }

  // The active logs, as sanity_check_curseg() in fs/f2fs/segment.c: inside
  // the main area, one segment each, the next block free and, for an LFS
  // log, every block after it.
  // An ro volume has two (hot data, hot node): the others are not checked.
  for (int t = 0; t < 6; ++t) {
    if (!log_active(static_cast<std::uint8_t>(t))) continue;
    const std::uint32_t segno = t < 3 ? cp.cur_data_segno[t].get() : cp.cur_node_segno[t - 3].get();
    const std::uint32_t blkoff = t < 3 ? cp.cur_data_blkoff[t].get() : cp.cur_node_blkoff[t - 3].get();
    const std::uint8_t alloc = cp.alloc_type[t];
    const std::string log =
        std::string("[CURSEG] ") + kLogNames[t] + fmt(" log (segment %llu, offset %llu): ", segno, blkoff);
    if (segno >= vol->main_segments()) {
      found.push_back(log + fmt("segment outside the main area (%llu segments)", vol->main_segments()));
      continue;
    }
    if (blkoff >= wr::kBlocksPerSeg) {
      found.push_back(log + fmt("offset past the segment's %llu blocks", wr::kBlocksPerSeg));
      continue;
    }
    if (alloc > 1) {
      found.push_back(log + fmt("alloc_type %llu is neither LFS (0) nor SSR (1)", alloc));
      continue;
    }
    for (int o = 0; o < t; ++o) {
      if (!log_active(static_cast<std::uint8_t>(o))) continue;
      const std::uint32_t other = o < 3 ? cp.cur_data_segno[o].get() : cp.cur_node_segno[o - 3].get();
      if (other == segno) found.push_back(log + "the " + kLogNames[o] + " log is in the same segment");
    }
    auto si = v.segment(segno);
    if (!si) return make_error(si.error());
    const std::uint32_t end = alloc ? blkoff + 1u : wr::kBlocksPerSeg;
    for (std::uint32_t j = blkoff; j < end; ++j)
      if (si->valid_map[j / 8] & (0x80u >> (j % 8))) {
        found.push_back(log + fmt("block %llu (address %llu) is valid in the SIT, past the log's offset", j,
                                  main_blk + static_cast<std::uint64_t>(segno) * wr::kBlocksPerSeg + j));
        break;
      }
  }
  if (found.empty()) return {};
  stats.premount_problems = found.size();
  stats.premount_first_problem = found.front();
  std::string more = found.size() > 1 ? fmt(" (and %llu more)", found.size() - 1) : std::string();
  if (std::getenv("F2FSCORE_PREMOUNT_DEBUG")) for (auto& x : found) more += "\n  " + x;
  switch (opts.on_damage) {
    case MountOptions::OnDamage::read_write:
      return {};
    case MountOptions::OnDamage::read_only:
      if (vol->open_report().pending_fsync_nodes == 0) {
        opts.read_only = true;
        return {};
      }
      // Roll-forward writes: not on a damaged volume.
      [[fallthrough]];
    case MountOptions::OnDamage::refuse:
      break;
  }
  return make_error(Errc::corrupt, "writer: refusing to mount read-write: the volume is damaged: " + found.front() +
                                       more + "; run f2fscore-fsck");
}

Status Writer::Impl::guard_trip(std::string what) {
  if (guard_error.empty()) guard_error = "writer: " + what + "; nothing more is written (run f2fscore-fsck)";
  return make_error(Errc::corrupt, guard_error);
}

Status Writer::Impl::guard_status() const {
  if (guard_error.empty()) return {};
  return make_error(Errc::corrupt, guard_error);
}

}  // namespace f2fscore
