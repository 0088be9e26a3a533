// Golden two-pass cases for the checker, e2fsprogs style. Each row of
// kCases names a base image, the edits (tests/fsck/corrupt.hpp) and the
// problems the edits must trigger, with their objects computed from the
// layout (the corruption library's lookups on the undamaged image), never
// from the checker's output. Per case:
//   (e) fsck.f2fs -f on a copy of the damaged image: its findings and exit
//       status, then its own repair (-f -y on another copy) and whether a
//       third run is clean, are recorded for docs/fsck-comparison.md;
//   (a) check only (-n), through the library and through f2fscore-fsck
//       --json: the expected problems, exit 4, the image byte-identical;
//   (b) pass 1, f2fscore-fsck -y --json: the expected problems, repaired,
//       exit 1;
//   (c) pass 2: the library with -y -f finds nothing and writes nothing,
//       f2fscore-fsck -n -f exits 0;
//   (d) fsck.f2fs -f on a copy of the repaired image is clean (NOTES.md).
//
// Bases (built once per run, copied per case):
//   sload:    mkfs.f2fs 1.15 (128 MiB, extra_attr, inode_checksum,
//             flexible_inline_xattr, inode_crtime, sb_checksum, lost_found,
//             quota) + sload.f2fs of a small tree + fsck.f2fs -f -y (sload
//             leaves i_inline_xattr_size 0 and wrong checksums) + /medium's
//             xattr moved inline; then checked clean by fsck.f2fs.
//             /small (inline data, hard link /hard), /medium (5 blocks,
//             an inline xattr), /big (12 MiB: direct and indirect nodes),
//             /link, /longlink (300 bytes), /fifo, /chr, /dir/sub/f, /inl/{x,y},
//             /many (300 names: hash levels 0-2), /lost+found, quota files.
//   compress: tests/data/linux61-compress.img (Linux 6.1: inline-dentry
//             directories, compressed clusters).
//   mkfs:     f2fscore-mkfs, 64 MiB, quota and lost_found.
//
// Objects, as the cases expect them: NAT_* and NODE_* name the nid; SIT_*
// and CURSEG_* the segment (SIT_BITMAP_MISMATCH the block); SSA_* the
// block; inode, data, inline, compression, xattr, orphan problems the
// inode (DATA_* also the block); DENTRY_* the directory holding the entry
// (but DENTRY_DIR_HARDLINK: the directory linked from two places).
//
// F2FSCORE_FSCK_TABLE=FILE appends one markdown row per case to FILE
// (scripts/fsck-comparison.sh turns them into docs/fsck-comparison.md).
// Needs mkfs.f2fs, sload.f2fs and fsck.f2fs: skips without them unless
// F2FSCORE_REQUIRE_FSCK=1.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "f2fscore/device.hpp"
#include "f2fscore/fsck.hpp"
#include "fsck/corrupt.hpp"
#include "support/rich_image.hpp"
#include "support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using f2fscore::fsck::Code;
using f2fstest::corrupt::Corruptor;
using nid_t = f2fscore::disk::nid_t;

enum class Base { sload, compress, mkfs, plain };
const char* base_name(Base b) {
  return b == Base::sload ? "sload" : b == Base::compress ? "compress" : b == Base::mkfs ? "mkfs" : "plain";
}

struct Expect {
  Code code;
  std::optional<std::uint64_t> ino, nid, blkaddr, segno;
  Expect& Ino(std::uint64_t v) { ino = v; return *this; }
  Expect& Nid(std::uint64_t v) { nid = v; return *this; }
  Expect& Blk(std::uint64_t v) { blkaddr = v; return *this; }
  Expect& Seg(std::uint64_t v) { segno = v; return *this; }
  std::string str() const {
    std::string s(f2fscore::fsck::code_name(code));
    if (ino) s += " ino " + std::to_string(*ino);
    if (nid) s += " nid " + std::to_string(*nid);
    if (blkaddr) s += " blkaddr " + std::to_string(*blkaddr);
    if (segno) s += " segno " + std::to_string(*segno);
    return s;
  }
};
Expect E(Code c) { return Expect{c, {}, {}, {}, {}}; }

struct Spec {
  std::vector<std::string> edits;
  std::vector<Expect> expect;
  /// Exit of the check-only pass: e2fsck's 4 (problems left), or 0 where
  /// every expected problem is informational (a checkpoint pack the other
  /// valid pack supersedes, as Linux and fsck.f2fs accept it).
  int check_exit = 4;
  /// Every expected problem is informational and left as it is by -y (a
  /// torn checkpoint pack): pass 1 reports it unrepaired, exits 0 and
  /// writes nothing; pass 2 finds only it.
  bool left_as_is = false;
  /// Files whose contents (read through the library's reader) must be the
  /// same after the repair as on the undamaged image: the repair loses no
  /// data of theirs.
  std::vector<std::string> keep;
  /// Bytes cut off the end of the image after the edits (a truncated image).
  std::uint64_t truncate_bytes = 0;
};

struct Case {
  const char* name;
  Base base;
  const char* area;
  std::function<Spec(Corruptor&)> prepare;
};

// Lookups for the rows; a failed lookup fails the case.
template <typename T>
T must(f2fscore::Result<T> r, const char* what) {
  if (!r) {
    ADD_FAILURE() << "layout lookup " << what << ": " << r.error().to_string();
    return T{};
  }
  return *r;
}
nid_t ino(Corruptor& L, const char* path) { return must(L.ino(path), path); }
std::uint64_t blk(Corruptor& L, const char* path, std::uint64_t index) {
  return must(L.data_blk(ino(L, path), index), path);
}
std::uint64_t node_blk(Corruptor& L, nid_t n) { return must(L.node_blk(n), "node block"); }
nid_t i_nid(Corruptor& L, const char* path, int k) {
  auto n = L.node(ino(L, path));
  if (!n) return 0;
  return n->i.i_nid[k].get();
}
std::uint32_t segno(Corruptor& L, std::uint64_t b) { return L.vol().segno_of(static_cast<f2fscore::disk::block_t>(b)); }
std::string S(std::uint64_t v) { return std::to_string(v); }
std::string X(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// An entry of /many in hash level 1 or 2 and a block of another bucket of
// the same level with room for it (dir_level 0: level L has 2^L buckets of
// two blocks, from block 2^(L+1) - 2; dir_block_index() in fs/f2fs/dir.c).
std::pair<std::string, std::uint32_t> many_misplace(Corruptor& L) {
  const nid_t dir = ino(L, "/many");
  auto room = [&](std::uint32_t bidx, std::uint32_t need) {
    auto a = L.data_blk(dir, bidx);
    if (!a || *a == 0 || *a == f2fscore::disk::kNewAddr) return false;
    std::vector<std::uint8_t> b(f2fscore::disk::kBlockSize);
    if (!L.read(*a, b.data())) return false;
    for (std::uint32_t s = 0, run = 0; s < f2fscore::disk::kNrDentryInBlock; ++s) {
      run = f2fscore::test_bit_le(b.data(), s) ? 0 : run + 1;
      if (run >= need) return true;
    }
    return false;
  };
  for (int i = 1; i <= 300; ++i) {
    const std::string name = "file_with_a_longer_name_" + std::to_string(i);
    auto d = L.dentry("/many", name);
    if (!d || d->bidx < 2) continue;
    std::uint32_t level = 1;
    while ((4u << level) - 2 <= d->bidx) ++level;
    const std::uint32_t first = (2u << level) - 2, buckets = 1u << level;
    const std::uint32_t bucket = (d->bidx - first) / 2;
    for (std::uint32_t k = 1; k < buckets; ++k)
      for (std::uint32_t j = 0; j < 2; ++j) {
        const std::uint32_t to = first + 2 * ((bucket + k) % buckets) + j;
        if (room(to, (static_cast<std::uint32_t>(name.size()) + 7) / 8)) return {name, to};
      }
  }
  ADD_FAILURE() << "no entry of /many to move to another bucket";
  return {"", 0};
}

// A block of a segment in use whose SIT bit is clear (past the data of
// /medium's segment).
std::uint64_t free_block_in_used_segment(Corruptor& L, std::uint64_t used) {
  const std::uint32_t s = segno(L, used);
  auto si = L.vol().segment(s);
  if (!si) return 0;
  for (std::uint32_t i = 511; i > 0; --i)
    if (!f2fscore::test_bit_msb(si->valid_map, i)) return L.vol().segment_start(s) + i;
  return 0;
}

// The first data log with blocks written (cur_data_blkoff > 0).
int busy_data_log(Corruptor& L) {
  for (int i = 0; i < 3; ++i)
    if (L.cp().cur_data_blkoff[i].get() > 0) return i;
  return 0;
}

// The contents of `path` on the volume of image `img` ("" with a reason
// prefixed by "error: " when it cannot be read).
std::string file_contents(const std::filesystem::path& img, const std::string& path) {
  f2fscore::OpenOptions oo;
  oo.read_only = true;
  auto dev = f2fscore::open_posix_device(img.string(), oo);
  if (!dev) return "error: " + dev.error().to_string();
  auto vol = f2fscore::Volume::open(**dev);
  if (!vol) return "error: " + vol.error().to_string();
  auto in = (*vol)->resolve(path);
  if (!in) return "error: " + in.error().to_string();
  std::string out(static_cast<std::size_t>(in->size), '\0');
  auto n = (*vol)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(out.data()), out.size()));
  if (!n) return "error: " + n.error().to_string();
  out.resize(*n);
  return out;
}

// ---------------------------------------------------------------------------
// The cases. Each lambda returns the edits and what they must trigger.
// clang-format off
const std::vector<Case>& cases() {
  static const std::vector<Case> k = {
  // ---- superblocks ----
  {"sb0_magic", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].magic=0x12345678"}, {E(Code::SB_PRIMARY_BAD)}}; }},
  {"sb0_crc_raw", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"raw:sb[0].crc^=1"}, {E(Code::SB_PRIMARY_BAD)}}; }},
  {"sb0_log_blocksize", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].log_blocksize=13"}, {E(Code::SB_PRIMARY_BAD)}}; }},
  {"sb0_main_blkaddr", Base::mkfs, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].main_blkaddr+=512"}, {E(Code::SB_PRIMARY_BAD)}}; }},
  // A primary copy that describes more blocks than the device while the
  // backup fits: the backup is the volume (not a truncated image).
  {"sb0_block_count_past_device", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].block_count+=65536"}, {E(Code::SB_PRIMARY_BAD)}}; }},
  {"sb1_segment_count_main", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[1].segment_count_main+=1"}, {E(Code::SB_BACKUP_BAD)}}; }},
  {"sb1_crc_raw", Base::mkfs, "superblock", [](Corruptor&) {
     return Spec{{"raw:sb[1].crc^=0x100"}, {E(Code::SB_BACKUP_BAD)}}; }},
  // ---- checkpoint ----
  {"cp_valid_block_count", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.valid_block_count-=1"}, {E(Code::CP_VALID_BLOCK_COUNT)}}; }},
  {"cp_valid_node_count", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.valid_node_count+=1"}, {E(Code::CP_VALID_NODE_COUNT)}}; }},
  {"cp_valid_inode_count", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.valid_inode_count-=1"}, {E(Code::CP_VALID_INODE_COUNT)}}; }},
  {"cp_free_segment_count", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.free_segment_count+=1"}, {E(Code::CP_FREE_SEGMENT_COUNT)}}; }},
  {"cp_next_free_nid", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.next_free_nid=0xfffffff0"}, {E(Code::CP_NEXT_FREE_NID)}}; }},
  {"cp_fsck_flag", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.ckpt_flags|=0x10"}, {E(Code::CP_FLAGS)}}; }},
  {"cp_other_pack_crc_raw", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"raw:cpx.crc^=1"}, {E(Code::CP_PACK_BAD)}, 0, true}; }},
  {"cp_mkfs_valid_block_count", Base::mkfs, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.valid_block_count+=3"}, {E(Code::CP_VALID_BLOCK_COUNT)}}; }},
  // ---- NAT ----
  {"nat_blkaddr_invalid", Base::sload, "NAT", [](Corruptor& L) {
     return Spec{{"nat[/medium].block_addr=0xdeadbeef"}, {E(Code::NAT_BLKADDR_INVALID).Nid(ino(L, "/medium"))}}; }},
  {"nat_blkaddr_not_in_sit", Base::sload, "NAT", [](Corruptor& L) {
     const auto fb = must(L.free_block(), "free block");
     return Spec{{"nat[/medium].block_addr=" + S(fb)},
                 {E(Code::NAT_BLKADDR_NOT_IN_SIT).Nid(ino(L, "/medium")).Blk(fb)}}; }},
  {"nat_ino_mismatch", Base::sload, "NAT", [](Corruptor& L) {
     return Spec{{"nat[/medium].ino=/small"}, {E(Code::NAT_INO_MISMATCH).Nid(ino(L, "/medium"))}}; }},
  {"nat_entry_unreachable", Base::sload, "NAT", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"inode[/big].i_nid[0]=0"}, {E(Code::NAT_ENTRY_UNREACHABLE).Nid(dn)}}; }},
  {"nat_journal_count", Base::sload, "NAT", [](Corruptor&) {
     return Spec{{"natj.n_nats=200"}, {E(Code::NAT_JOURNAL_BAD)}}; }},
  {"nat_bits_empty", Base::sload, "nat_bits", [](Corruptor&) {
     return Spec{{"nat_bits.empty[0]=1"}, {E(Code::NAT_BITS_MISMATCH)}}; }},
  // A NAT block nat_bits mark empty (nid 915 is in NAT block 2; the base's
  // nids end far below it) holding a garbage entry: -f reads it, as
  // fsck.f2fs reads the whole NAT.
  {"nat_bits_empty_block_garbage", Base::sload, "nat_bits", [](Corruptor&) {
     return Spec{{"nat[915].block_addr=0xdeadbeef", "nat[915].ino=915"}, {E(Code::NAT_BLKADDR_INVALID).Nid(915)}}; }},
  {"nat_bits_full_mkfs", Base::mkfs, "nat_bits", [](Corruptor&) {
     return Spec{{"nat_bits.full[0]=1"}, {E(Code::NAT_BITS_MISMATCH)}}; }},
  // ---- SIT ----
  {"sit_vblocks", Base::sload, "SIT", [](Corruptor& L) {
     return Spec{{"sit[/big@100].vblocks+=1"}, {E(Code::SIT_VBLOCKS_MISMATCH).Seg(segno(L, blk(L, "/big", 100)))}}; }},
  {"sit_bit_clear", Base::sload, "SIT", [](Corruptor& L) {
     const auto b = blk(L, "/big", 100);
     const auto ofs = b - L.vol().segment_start(segno(L, b));
     return Spec{{"sit[/big@100].valid_map[" + S(ofs) + "]=0", "sit[/big@100].vblocks-=1"},
                 {E(Code::SIT_BITMAP_MISMATCH).Blk(b)}}; }},
  {"sit_bit_set_free", Base::sload, "SIT", [](Corruptor& L) {
     const auto used = blk(L, "/medium", 0);
     const auto fb = free_block_in_used_segment(L, used);
     const auto ofs = fb - L.vol().segment_start(segno(L, fb));
     return Spec{{"sit[" + S(segno(L, fb)) + "].valid_map[" + S(ofs) + "]=1", "sit[" + S(segno(L, fb)) + "].vblocks+=1"},
                 {E(Code::SIT_BITMAP_MISMATCH).Blk(fb)}}; }},
  {"sit_type", Base::sload, "SIT", [](Corruptor& L) {
     return Spec{{"sit[/big@100].type=3"}, {E(Code::SIT_TYPE_MISMATCH).Seg(segno(L, blk(L, "/big", 100)))}}; }},
  {"sit_journal_count", Base::sload, "SIT", [](Corruptor&) {
     return Spec{{"sitj.n_sits=50"}, {E(Code::SIT_JOURNAL_BAD)}}; }},
  // ---- SSA ----
  {"ssa_node_nid", Base::sload, "SSA", [](Corruptor& L) {
     return Spec{{"ssa[/medium].nid=/small"}, {E(Code::SSA_NODE_MISMATCH).Blk(node_blk(L, ino(L, "/medium")))}}; }},
  {"ssa_data_nid", Base::sload, "SSA", [](Corruptor& L) {
     return Spec{{"ssa[/big@100].nid+=1"}, {E(Code::SSA_DATA_MISMATCH).Blk(blk(L, "/big", 100))}}; }},
  {"ssa_data_ofs", Base::sload, "SSA", [](Corruptor& L) {
     return Spec{{"ssa[/big@100].ofs_in_node+=1"}, {E(Code::SSA_DATA_MISMATCH).Blk(blk(L, "/big", 100))}}; }},
  // ---- active logs ----
  {"curseg_next_block_used", Base::sload, "cursegs", [](Corruptor& L) {
     const int i = busy_data_log(L);
     return Spec{{"cp.cur_data_blkoff[" + S(i) + "]-=1"},
                 {E(Code::CURSEG_NEXT_BLOCK_NOT_FREE).Seg(L.cp().cur_data_segno[i].get())}}; }},
  {"curseg_type", Base::sload, "cursegs", [](Corruptor& L) {
     const auto s = L.cp().cur_node_segno[0].get();
     return Spec{{"sit[" + S(s) + "].type=0"}, {E(Code::CURSEG_TYPE_MISMATCH).Seg(s)}}; }},
  // ---- nodes and footers ----
  {"node_nid_reserved", Base::sload, "nodes", [](Corruptor&) {
     return Spec{{"inode[/big].i_nid[0]=2"}, {E(Code::NODE_NID_INVALID).Nid(2)}}; }},
  {"node_nid_past_nat", Base::sload, "nodes", [](Corruptor& L) {
     const auto n = L.vol().max_nid() + 5;
     return Spec{{"inode[/big].i_nid[2]=" + S(n)}, {E(Code::NODE_NID_INVALID).Nid(n)}}; }},
  {"node_nat_missing", Base::sload, "nodes", [](Corruptor& L) {
     const auto n = must(L.free_nid(), "free nid");
     return Spec{{"inode[/big].i_nid[0]=" + S(n)}, {E(Code::NODE_NAT_MISSING).Nid(n)}}; }},
  {"node_footer_nid", Base::sload, "nodes", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"node[" + S(dn) + "].footer.nid+=1000"}, {E(Code::NODE_FOOTER_NID).Nid(dn)}}; }},
  {"node_footer_ino", Base::sload, "nodes", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"node[" + S(dn) + "].footer.ino=/small"}, {E(Code::NODE_FOOTER_INO).Nid(dn)}}; }},
  {"node_footer_offset", Base::sload, "nodes", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"node[" + S(dn) + "].footer.offset+=1"}, {E(Code::NODE_FOOTER_OFS).Nid(dn)}}; }},
  {"node_not_inode", Base::sload, "nodes", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"dentry[/medium].ino=" + S(dn)}, {E(Code::NODE_NOT_INODE).Nid(dn)}}; }},
  {"node_duplicate", Base::sload, "nodes", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"inode[/big].i_nid[1]=" + S(dn)}, {E(Code::NODE_DUPLICATE).Nid(dn)}}; }},
  {"inode_block_zeroed", Base::sload, "nodes", [](Corruptor& L) {
     return Spec{{"block[/medium].zero=1"}, {E(Code::NODE_FOOTER_NID).Nid(ino(L, "/medium"))}}; }},
  // ---- inode fields ----
  {"inode_checksum_raw", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"raw:inode[/medium].i_inode_checksum^=1"}, {E(Code::INODE_CHECKSUM).Ino(ino(L, "/medium"))}}; }},
  {"inode_mode_unknown", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/inl/y].i_mode=0xf1a4"}, {E(Code::INODE_MODE).Ino(ino(L, "/inl/y"))}}; }},
  {"inode_extra_isize", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_extra_isize=26"}, {E(Code::INODE_EXTRA_ISIZE).Ino(ino(L, "/medium"))}}; }},
  // With flexible_inline_xattr, 0 and more than MAX_INLINE_XATTR_SIZE (912
  // words) are invalid (sanity_check_inode() in fs/f2fs/inode.c).
  {"inode_inline_xattr_size_zero", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/inl/y].i_inline_xattr_size=0"}, {E(Code::INODE_INLINE_XATTR_SIZE).Ino(ino(L, "/inl/y"))}}; }},
  {"inode_inline_xattr_size_big", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/inl/y].i_inline_xattr_size=913"}, {E(Code::INODE_INLINE_XATTR_SIZE).Ino(ino(L, "/inl/y"))}}; }},
  {"inode_flags_casefold", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_flags|=0x40000000"}, {E(Code::INODE_FLAGS).Ino(ino(L, "/medium"))}}; }},
  {"inode_flags_compress_no_feature", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_flags|=0x4"}, {E(Code::INODE_FLAGS).Ino(ino(L, "/medium"))}}; }},
  {"inode_size_huge", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_size=0x7fffffffffffffff"}, {E(Code::INODE_SIZE).Ino(ino(L, "/medium"))}}; }},
  {"inode_blocks", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_blocks+=5"}, {E(Code::INODE_BLOCKS).Ino(ino(L, "/medium"))}}; }},
  {"inode_links_file", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_links=2"}, {E(Code::INODE_LINKS).Ino(ino(L, "/medium"))}}; }},
  {"inode_links_zero", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_links=0"}, {E(Code::INODE_LINKS).Ino(ino(L, "/medium"))}}; }},
  {"inode_links_hardlink", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/small].i_links=1"}, {E(Code::INODE_LINKS).Ino(ino(L, "/small"))}}; }},
  {"dir_links", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/dir].i_links+=2"}, {E(Code::DIR_LINKS).Ino(ino(L, "/dir"))}}; }},
  {"dir_links_root_mkfs", Base::mkfs, "inode", [](Corruptor&) {
     return Spec{{"inode[3].i_links+=1"}, {E(Code::DIR_LINKS).Ino(3)}}; }},
  {"inode_namelen", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_namelen=3"}, {E(Code::INODE_NAMELEN).Ino(ino(L, "/medium"))}}; }},
  {"inode_pino", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_pino=/dir"}, {E(Code::INODE_PINO).Ino(ino(L, "/medium"))}}; }},
  {"inode_extent", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/big].i_ext.fofs=0", "inode[/big].i_ext.blk_addr=" + S(blk(L, "/big", 0) + 1),
                  "inode[/big].i_ext.len=4"},
                 {E(Code::INODE_EXTENT).Ino(ino(L, "/big"))}}; }},
  {"symlink_size", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/longlink].i_size+=10"}, {E(Code::SYMLINK_SIZE).Ino(ino(L, "/longlink"))}}; }},
  {"root_not_dir", Base::sload, "inode", [](Corruptor&) {
     return Spec{{"inode[3].i_mode=0x81a4"}, {E(Code::ROOT_BAD).Ino(3)}}; }},
  // ---- data pointers ----
  {"data_blkaddr_invalid", Base::sload, "data", [](Corruptor& L) {
     return Spec{{"inode[/medium].addr[1]=0xdeadbeef"},
                 {E(Code::DATA_BLKADDR_INVALID).Ino(ino(L, "/medium")).Blk(0xdeadbeef)}}; }},
  {"data_duplicate", Base::sload, "data", [](Corruptor& L) {
     const auto b = blk(L, "/big", 5);
     return Spec{{"inode[/medium].addr[1]=" + S(b)}, {E(Code::DATA_DUPLICATE).Blk(b)}}; }},
  {"data_in_free_segment", Base::sload, "data", [](Corruptor& L) {
     const auto fb = must(L.free_block(), "free block");
     return Spec{{"inode[/medium].addr[6]=" + S(fb)}, {E(Code::SIT_BITMAP_MISMATCH).Blk(fb)}}; }},
  {"dnode_addr_invalid", Base::sload, "data", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"node[" + S(dn) + "].addr[3]=0xfffffff0"},
                 {E(Code::DATA_BLKADDR_INVALID).Ino(ino(L, "/big")).Blk(0xfffffff0)}}; }},
  // ---- inline data ----
  {"inline_data_reserved", Base::sload, "inline", [](Corruptor& L) {
     return Spec{{"inode[/small].addr[0]=0x5a5a"}, {E(Code::INLINE_DATA_RESERVED).Ino(ino(L, "/small"))}}; }},
  {"inline_data_size", Base::sload, "inline", [](Corruptor& L) {
     return Spec{{"inode[/small].i_size=3600"}, {E(Code::INLINE_DATA_SIZE).Ino(ino(L, "/small"))}}; }},
  {"inline_dentry_flag_on_file", Base::sload, "inline", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_inline|=0x4"}, {E(Code::INLINE_DENTRY_BAD).Ino(ino(L, "/medium"))}}; }},
  // ---- inline dentries (Linux) ----
  {"inline_dentry_hash", Base::compress, "inline dentry", [](Corruptor& L) {
     return Spec{{"dentry[/lz4/tiny].hash_code^=1"}, {E(Code::DENTRY_HASH).Ino(ino(L, "/lz4"))}}; }},
  {"inline_dentry_namelen", Base::compress, "inline dentry", [](Corruptor& L) {
     return Spec{{"dentry[/lz4/tiny].name_len=0"}, {E(Code::DENTRY_NAMELEN).Ino(ino(L, "/lz4"))}}; }},
  {"inline_dentry_ftype", Base::compress, "inline dentry", [](Corruptor& L) {
     return Spec{{"dentry[/lz4/tiny].file_type=7"}, {E(Code::DENTRY_FTYPE).Ino(ino(L, "/lz4"))}}; }},
  {"inline_dentry_dotdot", Base::compress, "inline dentry", [](Corruptor& L) {
     return Spec{{"dentry[/lz4/..].ino=/lz4"}, {E(Code::DENTRY_DOTDOT).Ino(ino(L, "/lz4"))}}; }},
  {"inline_dentry_unreachable", Base::compress, "inline dentry", [](Corruptor& L) {
     return Spec{{"dentry_del[/lz4/tiny]=1"}, {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/lz4/tiny"))}}; }},
  // ---- compression ----
  {"compr_blocks", Base::compress, "compression", [](Corruptor& L) {
     return Spec{{"inode[/lz4/mixed].i_compr_blocks+=1"}, {E(Code::INODE_COMPR_BLOCKS).Ino(ino(L, "/lz4/mixed"))}}; }},
  {"compr_addr_misplaced", Base::compress, "compression", [](Corruptor& L) {
     return Spec{{"inode[/lz4/mixed].addr[2]=0xfffffffe"}, {E(Code::COMPR_CLUSTER_BAD).Ino(ino(L, "/lz4/mixed"))}}; }},
  {"compr_cluster_count", Base::compress, "compression", [](Corruptor& L) {
     // A reserved (NEW_ADDR) slot of a compressed cluster dropped: the cluster
     // holds one block less, so i_blocks and i_compr_blocks are both over.
     return Spec{{"inode[/lz4/mixed].addr[2]=0"}, {E(Code::INODE_COMPR_BLOCKS).Ino(ino(L, "/lz4/mixed")),
                                                   E(Code::INODE_BLOCKS).Ino(ino(L, "/lz4/mixed"))}}; }},
  // ---- dentries ----
  {"dentry_hash", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/sub].hash_code^=1"}, {E(Code::DENTRY_HASH).Ino(ino(L, "/dir"))}}; }},
  {"dentry_namelen_zero", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/sub].name_len=0"}, {E(Code::DENTRY_NAMELEN).Ino(ino(L, "/dir"))}}; }},
  {"dentry_namelen_long", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/sub].name_len=300"}, {E(Code::DENTRY_NAMELEN).Ino(ino(L, "/dir"))}}; }},
  {"dentry_ftype", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/medium].file_type=2"}, {E(Code::DENTRY_FTYPE).Ino(3)}}; }},
  {"dentry_ino_free", Base::sload, "dentry", [](Corruptor& L) {
     const auto n = must(L.free_nid(), "free nid");
     return Spec{{"dentry[/link].ino=" + S(n)}, {E(Code::DENTRY_INO_INVALID).Ino(3)}}; }},
  {"dentry_ino_reserved", Base::sload, "dentry", [](Corruptor&) {
     return Spec{{"dentry[/longlink].ino=1"}, {E(Code::DENTRY_INO_INVALID).Ino(3)}}; }},
  {"dentry_position", Base::sload, "dentry", [](Corruptor& L) {
     const auto [name, to] = many_misplace(L);
     return Spec{{"dentry_move[/many/" + name + "]=" + S(to)}, {E(Code::DENTRY_POSITION).Ino(ino(L, "/many"))}}; }},
  {"dentry_second_dot", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_add[/dir/.]=/dir"}, {E(Code::DENTRY_DOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_dot_ino", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/.].ino=/inl"}, {E(Code::DENTRY_DOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_dotdot_ino", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/..].ino=/dir/sub"}, {E(Code::DENTRY_DOTDOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_bitmap_stray", Base::sload, "dentry", [](Corruptor& L) {
     // Slot 100 of /dir's only block is free (it holds ., .. and sub).
     return Spec{{"block[" + S(blk(L, "/dir", 0)) + "].u8[12]|=0x10"}, {E(Code::DENTRY_BITMAP).Ino(ino(L, "/dir"))}}; }},
  {"dentry_duplicate_name", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_add[/inl/x]=/inl/x"}, {E(Code::DENTRY_DUPLICATE_NAME).Ino(ino(L, "/inl"))}}; }},
  {"dentry_dir_hardlink", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_add[/inl/again]=/dir/sub:2"}, {E(Code::DENTRY_DIR_HARDLINK).Ino(ino(L, "/dir/sub"))}}; }},
  // ---- xattrs ----
  {"xattr_entry_size", Base::sload, "xattr", [](Corruptor& L) {
     return Spec{{"xattr[/medium].entry[0].e_value_size=0xffff"}, {E(Code::XATTR_ENTRY_BOUNDS).Ino(ino(L, "/medium"))}}; }},
  {"xattr_trailing_bytes", Base::sload, "xattr", [](Corruptor& L) {
     return Spec{{"xattr[/medium].trailing=0xdeadbeef"}, {E(Code::XATTR_TRAILING_BYTES).Ino(ino(L, "/medium"))}}; }},
  {"xattr_nid_free", Base::sload, "xattr", [](Corruptor& L) {
     const auto n = must(L.free_nid(), "free nid");
     return Spec{{"inode[/medium].i_xattr_nid=" + S(n)}, {E(Code::XATTR_NID_BAD).Ino(ino(L, "/medium"))}}; }},
  {"xattr_node_footer_ino", Base::sload, "xattr", [](Corruptor& L) {
     const auto x = must(L.node(ino(L, "/big")), "/big").i.i_xattr_nid.get();
     return Spec{{"node[" + S(x) + "].footer.ino=/small"}, {E(Code::XATTR_NID_BAD).Ino(ino(L, "/big"))}}; }},
  // ---- orphans ----
  {"orphan_has_links", Base::sload, "orphan", [](Corruptor& L) {
     return Spec{{"orphan_add=/medium"}, {E(Code::ORPHAN_HAS_LINKS).Ino(ino(L, "/medium"))}}; }},
  {"orphan_entry_free_nid", Base::sload, "orphan", [](Corruptor& L) {
     const auto n = must(L.free_nid(), "free nid");
     return Spec{{"orphan_add=" + S(n)}, {E(Code::ORPHAN_ENTRY_INVALID).Ino(n)}}; }},
  // ---- quota ----
  {"quota_usage_uid", Base::sload, "quota", [](Corruptor&) {
     return Spec{{"inode[/medium].i_uid=1234"}, {E(Code::QUOTA_USAGE)}}; }},
  {"quota_usage_gid", Base::sload, "quota", [](Corruptor&) {
     return Spec{{"inode[/big].i_gid=77"}, {E(Code::QUOTA_USAGE)}}; }},
  {"quota_inode_mode", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get();
     return Spec{{"inode[" + S(q) + "].i_mode=0x41ed"}, {E(Code::QUOTA_INODE_BAD).Ino(q)}}; }},
  // A user quota inode number in superblock #0 that names no inode (past
  // the NAT) while #1 names the quota file: #1's number is taken for both
  // copies and the quota file checked as one (not moved to lost+found).
  {"sb0_quota_ino_past_nat", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get() ^ 3552591681u;
     return Spec{{"sb[0].qf_ino[0]^=3552591681"}, {E(Code::QUOTA_INODE_BAD).Ino(q), E(Code::SB_BACKUP_BAD)}}; }},
  // ---- roll-forward ----
  {"fsync_chain_loop", Base::sload, "fsync", [](Corruptor&) {
     return Spec{{"fsync_chain[/small]=loop"}, {E(Code::FSYNC_CHAIN_LOOP)}}; }},
  {"fsync_chain_bad_nid", Base::sload, "fsync", [](Corruptor&) {
     return Spec{{"fsync_chain[/small]=bad"}, {E(Code::FSYNC_CHAIN_BAD)}}; }},
  // ---- unreachable inodes -> /lost+found ----
  {"unreachable_file", Base::sload, "lost+found", [](Corruptor& L) {
     return Spec{{"dentry_del[/medium]=1"}, {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/medium"))}}; }},
  {"unreachable_dir", Base::sload, "lost+found", [](Corruptor& L) {
     return Spec{{"dentry_del[/dir]=1", "inode[3].i_links-=1"}, {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/dir"))}}; }},
  {"unreachable_mkfs_lost_found", Base::mkfs, "lost+found", [](Corruptor& L) {
     return Spec{{"dentry_del[/lost+found]=1", "inode[3].i_links-=1"},
                 {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/lost+found"))}}; }},
  // ---- repair classes: fields the superblock sets, dots, compression attributes, hard-link names ----
  {"cp_user_block_count_low", Base::sload, "checkpoint", [](Corruptor& L) {
     return Spec{{"cp.user_block_count=" + S(L.cp().valid_block_count.get() - 1)}, {E(Code::CP_FIELD_BAD)}}; }},
  {"cp_pack_start_sum_range", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.cp_pack_start_sum=200"}, {E(Code::CP_FIELD_BAD)}}; }},
  {"cp_cur_node_segno_range", Base::sload, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.cur_node_segno[0]=0xffff"}, {E(Code::CP_FIELD_BAD)}}; }},
  {"dentry_dot_missing", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_del[/dir/.]=1"}, {E(Code::DENTRY_DOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_dotdot_missing", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_del[/dir/..]=1"}, {E(Code::DENTRY_DOTDOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_second_dotdot", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry_add[/dir/..]=3"}, {E(Code::DENTRY_DOTDOT).Ino(ino(L, "/dir"))}}; }},
  {"dentry_dot_hash", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/.].hash_code=0x1234"}, {E(Code::DENTRY_HASH).Ino(ino(L, "/dir"))}}; }},
  {"dentry_dot_ftype", Base::sload, "dentry", [](Corruptor&) {
     return Spec{{"dentry[/.].file_type=0x42"}, {E(Code::DENTRY_FTYPE).Ino(3)}}; }},
  {"dentry_dotdot_hash", Base::sload, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/..].hash_code=0x5678"}, {E(Code::DENTRY_HASH).Ino(ino(L, "/dir"))}}; }},
  {"compr_log_cluster_size", Base::compress, "compression", [](Corruptor& L) {
     return Spec{{"inode[/lz4/mixed].i_log_cluster_size=31"}, {E(Code::INODE_FLAGS).Ino(ino(L, "/lz4/mixed"))}, 4, false, {"/lz4/mixed"}}; }},
  {"compr_algorithm", Base::compress, "compression", [](Corruptor& L) {
     return Spec{{"inode[/lz4/mixed].i_compress_algorithm=9"}, {E(Code::INODE_FLAGS).Ino(ino(L, "/lz4/mixed"))}, 4, false, {"/lz4/mixed"}}; }},
  // Quota inode numbers in both superblocks of a volume without quota
  // (fsck.f2fs checks ino 4 as a quota file and unlinks it).
  {"sb_quota_ino_without_quota", Base::compress, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].qf_ino[0]=4", "sb[1].qf_ino[0]=4"}, {E(Code::QUOTA_INODE_BAD).Blk(0)}}; }},
  // A truncated image whose lost tail holds nothing: grown back by -y.
  {"truncated_512_bytes", Base::sload, "device", [](Corruptor&) {
     return Spec{{}, {E(Code::VOLUME_TRUNCATED)}, 4, false, {"/big"}, 512}; }},
  {"truncated_one_segment", Base::mkfs, "device", [](Corruptor&) {
     return Spec{{}, {E(Code::VOLUME_TRUNCATED)}, 4, false, {}, 2u << 20}; }},
  {"inode_namelen_hardlink", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/small].i_namelen=300"}, {E(Code::INODE_NAMELEN).Ino(ino(L, "/small"))}}; }},
  {"sit_vblocks_one_less", Base::sload, "SIT", [](Corruptor& L) {
     return Spec{{"sit[/big@100].vblocks-=1"}, {E(Code::SIT_VBLOCKS_MISMATCH).Seg(segno(L, blk(L, "/big", 100)))}}; }},
  // A data log's segment with another data type in the SIT (fsck.f2fs's
  // fsck_chk_curseg_info() wants the log's own type).
  {"curseg_data_type", Base::sload, "cursegs", [](Corruptor& L) {
     const auto s = L.cp().cur_data_segno[2].get();
     return Spec{{"sit[" + S(s) + "].type=0"}, {E(Code::CURSEG_TYPE_MISMATCH).Seg(s)}}; }},
  // The extra_attr flag lost on a flexible_inline_xattr volume (the kernel's
  // sanity_check_inode() refuses such an inode): set again, the extra
  // attributes as they were.
  {"inode_extra_attr_flag_lost", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_inline^=0x20"}, {E(Code::INODE_EXTRA_ISIZE).Ino(ino(L, "/medium"))}, 4, false,
                 {"/medium"}}; }},
  // An unreachable fifo reconnected: its /lost+found entry has the fifo
  // type. (sload.f2fs copies no special files: /dir/sub/f becomes a fifo,
  // its inline data flags and size cleared, then loses its entry.)
  {"unreachable_fifo", Base::sload, "lost+found", [](Corruptor& L) {
     return Spec{{"inode[/dir/sub/f].i_inline=0x21", "inode[/dir/sub/f].i_size=0", "inode[/dir/sub/f].addr[1]=0",
                  "inode[/dir/sub/f].i_mode=0x11a4", "dentry_del[/dir/sub/f]=1"},
                 {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/dir/sub/f"))}}; }},
  // The user quota file's root tree block (1 KiB block 1) points outside
  // the file: the tree is rebuilt in the file's blocks from the counts.
  {"quota_tree_bad", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get();
     const auto b = must(L.data_blk(q, 0), "quota file block 0");
     return Spec{{"block[" + S(b) + "].u32[1024]=0xffff"}, {E(Code::QUOTA_INODE_BAD).Ino(q)}}; }},
  // A SIT block's entry that the SIT journal supersedes, with a bit set past
  // its count (the kernel's build_sit_entries() checks it all the same):
  // the same byte in both SIT copies, so the copy in use has it.
  {"sit_block_entry_under_journal", Base::mkfs, "SIT", [](Corruptor& L) {
     const auto s = L.cp().cur_node_segno[0].get();
     const auto a0 = L.sb().sit_blkaddr.get(), a1 = a0 + L.sb().segment_count_sit.get() / 2 * 512;
     const auto off = (s % 55) * 74 + 2 + 63;
     return Spec{{"block[" + S(a0 + s / 55) + "].u8[" + S(off) + "]|=0x01",
                  "block[" + S(a1 + s / 55) + "].u8[" + S(off) + "]|=0x01"},
                 {E(Code::SIT_VBLOCKS_MISMATCH).Seg(s)}}; }},
  // The user quota file in the orphan list: the entry goes, the file stays.
  {"orphan_quota_file", Base::sload, "orphan", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get();
     return Spec{{"orphan_add=" + S(q)}, {E(Code::ORPHAN_ENTRY_INVALID).Ino(q)}}; }},
  // An inline-data file's i_mode damaged into a socket (only regular files
  // and symlinks hold inline data, support_inline_data() in
  // fs/f2fs/inline.c): the type comes back from its dentry's file type
  // (F2FS_FT_REG_FILE), the data kept.
  {"inode_mode_socket_inline", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/inl/x].i_mode=0xc1a4"}, {E(Code::INODE_MODE).Ino(ino(L, "/inl/x"))}, 4, false, {"/inl/x"}}; }},
  // The same with the dentry saying socket too: the inode stays a socket
  // and loses what a socket cannot hold (the inline data flag, area and size).
  {"inode_mode_socket_inline_dentry_sock", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/inl/x].i_mode=0xc1a4", "dentry[/inl/x].file_type=6"},
                 {E(Code::INODE_MODE).Ino(ino(L, "/inl/x"))}}; }},
  // An unusable root (its node block zeroed; fsck.f2fs -f -y fails on it
  // too): a new empty root, the old root's children linked back under
  // their i_name, their data kept (/small and /hard, one inode, come back
  // as one name: the one in i_name).
  {"root_block_zeroed", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"block[" + S(node_blk(L, 3)) + "].zero=1"}, {E(Code::ROOT_BAD).Ino(3)}, 4, false,
                 {"/medium", "/dir/sub/f", "/big", "/inl/x"}}; }},
  // The root's only dentry block pointer lost (file block 0 names a block
  // outside the main area): no slot for "." and "..", and the repair
  // allocates no data block, so -y rebuilds the root as above.
  {"root_first_dentry_block_lost", Base::sload, "inode", [](Corruptor&) {
     return Spec{{"inode[3].addr[0]=5"}, {E(Code::ROOT_BAD).Ino(3)}, 4, false,
                 {"/medium", "/dir/sub/f", "/big", "/inl/x"}}; }},
  {"root_nat_null", Base::mkfs, "inode", [](Corruptor&) {
     return Spec{{"nat[3].block_addr=0"}, {E(Code::ROOT_BAD).Ino(3)}}; }},
  // Superblock #0 names a device list (devs[0].path set) whose segments are
  // not the volume's (sanity_check_raw_super() in fs/f2fs/super.c refuses
  // it): #1 is used and #0 restored from it.
  {"sb_device_list_bad", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].devs0.path[0]=0x41"}, {E(Code::SB_PRIMARY_BAD).Blk(0)}}; }},
  // Without flexible_inline_xattr an inline-dentry directory keeps the
  // default inline xattr area out of its layout with or without the
  // inline_xattr flag (do_read_inode() in fs/f2fs/inode.c): with the flag
  // cleared, the entries are where they were and only the damaged hash of
  // "." is found (read with no xattr area, every slot would be misplaced).
  {"inline_dentry_layout_without_xattr_flag", Base::plain, "dentry", [](Corruptor& L) {
     return Spec{{"dentry[/dir/inl/.].hash_code=0x1234", "inode[/dir/inl].i_inline^=1"},
                 {E(Code::DENTRY_HASH).Ino(ino(L, "/dir/inl"))}}; }},
  // An entry naming a quota file (hidden system inodes, loaded by number
  // from qf_ino[]): the entry goes; the file it named before is reconnected.
  {"dentry_names_quota_file", Base::sload, "dentry", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get();
     return Spec{{"dentry[/inl/x].ino=" + S(q)},
                 {E(Code::DENTRY_INO_INVALID).Ino(ino(L, "/inl")), E(Code::INODE_UNREACHABLE).Ino(ino(L, "/inl/x"))}}; }},
  // With flexible_inline_xattr the layout takes i_inline_xattr_size
  // whatever the inline_xattr flag (do_read_inode()): without the flag, a
  // size past the inode (fsck.f2fs 1.15 crashes on it) is set to 0, as
  // f2fs_new_inode() writes it, the inline data kept.
  {"inline_xattr_size_without_flag", Base::sload, "inode", [](Corruptor& L) {
     auto n = L.node(ino(L, "/dir/sub/f"));
     std::vector<std::string> e;
     if (n && (n->i.i_inline & 1)) e.push_back("inode[/dir/sub/f].i_inline^=1");
     e.push_back("inode[/dir/sub/f].i_inline_xattr_size=4096");
     return Spec{e, {E(Code::INODE_INLINE_XATTR_SIZE).Ino(ino(L, "/dir/sub/f"))}, 4, false, {"/dir/sub/f"}}; }},
  // Superblock #0 valid but its feature set cleared (re-sealed): the root
  // inode's extra attributes contradict it and #1 agrees, so #1 is used and
  // #0 restored from it, the files as they were (read under #0's features
  // every inode would be damaged).
  {"sb0_feature_cleared", Base::sload, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].feature=0"}, {E(Code::SB_PRIMARY_BAD).Blk(0)}, 4, false, {"/medium", "/dir/sub/f", "/big"}}; }},
  // CP_QUOTA_NEED_FSCK_FLAG on a volume without quota files: nothing for a
  // quota repair to do, the new checkpoint pack goes without the flag.
  {"cp_quota_need_fsck_without_quota", Base::plain, "checkpoint", [](Corruptor&) {
     return Spec{{"cp.ckpt_flags|=0x800"}, {E(Code::CP_FLAGS)}}; }},
  // A quota inode number in superblock #0 only, on a volume without quota:
  // #1 is restored from #0 by the rebuild, the numbers zeroed after it.
  {"sb_quota_ino_one_copy", Base::compress, "superblock", [](Corruptor&) {
     return Spec{{"sb[0].qf_ino[0]=4"}, {E(Code::QUOTA_INODE_BAD).Blk(0), E(Code::SB_BACKUP_BAD)}}; }},
  // Both names of a hard-linked file removed: reconnected with i_links 1,
  // its one name in /lost+found.
  {"unreachable_hardlinked_file", Base::sload, "lost+found", [](Corruptor& L) {
     return Spec{{"dentry_del[/small]=1", "dentry_del[/hard]=1"}, {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/small"))}}; }},
  // An unreachable directory's own i_links is checked before it is
  // reconnected (the new link is in lost+found, not in its count).
  {"unreachable_dir_links", Base::sload, "lost+found", [](Corruptor& L) {
     return Spec{{"inode[/dir].i_links+=1", "dentry_del[/dir]=1"},
                 {E(Code::INODE_UNREACHABLE).Ino(ino(L, "/dir")), E(Code::DIR_LINKS).Ino(ino(L, "/dir"))}}; }},
  // A node version in the NAT that its data blocks' summaries do not carry
  // (set_summary() writes the NAT's; fsck.f2fs -y drops such blocks): the
  // summaries are rewritten, the data kept.
  {"ssa_data_version", Base::sload, "SSA", [](Corruptor& L) {
     std::vector<Expect> e;
     for (std::uint64_t k = 0; k < 5; ++k) e.push_back(E(Code::SSA_DATA_MISMATCH).Blk(blk(L, "/medium", k)));
     return Spec{{"nat[/medium].version+=1"}, e, 4, false, {"/medium"}}; }},
  {"ssa_dnode_nid", Base::sload, "SSA", [](Corruptor& L) {
     const nid_t dn = i_nid(L, "/big", 0);
     return Spec{{"ssa[" + S(node_blk(L, dn)) + "].nid+=1"}, {E(Code::SSA_NODE_MISMATCH).Blk(node_blk(L, dn))}}; }},
  // A regular file's i_gc_failures (the low half of i_current_depth) not 0:
  // informational (check-only exits 0); -y resets it as fsck.f2fs 1.15 does
  // in every repair run ("reset i_gc_failures", a [FIX] line there).
  {"inode_gc_failures", Base::sload, "inode", [](Corruptor& L) {
     return Spec{{"inode[/medium].i_current_depth=0x3c94f101"}, {E(Code::INODE_GC_FAILURES).Ino(ino(L, "/medium"))}, 0,
                 false, {"/medium"}}; }},
  // The group quota file with a second entry for the id its first entry
  // holds (other usage): the tree is rebuilt in the file's blocks from the
  // counts, as fsck.f2fs rewrites the file ("Fixing Quota file").
  {"quota_duplicate_id", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[1].get();
     const auto b = must(L.data_blk(q, 1), "group quota file block 1");
     std::vector<std::uint8_t> d(4096);
     EXPECT_TRUE(L.read(b, d.data()));
     // 1 KiB block 5 of the file (mkfs.f2fs's one data block of entries) is at 1024 in 4 KiB block 1.
     std::uint32_t used = 0, free = 0;
     for (std::uint32_t e = 0; e < 14; ++e) {
       const std::uint32_t o = 1024 + 16 + 72 * e;
       const bool in_use = std::any_of(d.begin() + o, d.begin() + o + 72, [](std::uint8_t x) { return x != 0; });
       if (in_use && !used) used = o;
       if (!in_use && !free) free = o;
     }
     EXPECT_NE(used, 0u);
     EXPECT_NE(free, 0u);
     std::uint32_t id = 0;
     std::memcpy(&id, d.data() + used, 4);  // little-endian host (the tests' hosts)
     // (block[B].uN[OFF]: OFF in bytes.)
     return Spec{{"block[" + S(b) + "].u32[" + S(free) + "]=" + S(id), "block[" + S(b) + "].u64[" + S(free + 24) + "]=99",
                  "block[" + S(b) + "].u64[" + S(free + 48) + "]=8192", "block[" + S(b) + "].u8[1032]+=1"},
                 {E(Code::QUOTA_INODE_BAD).Ino(q)}}; }},
  // The user quota inode's node block zeroed: a new quota file at that
  // inode number, in new blocks, from the counted usage (fsck.f2fs rebuilds
  // the inode, f2fs_rebuild_qf_inode(), and writes the file from its counts).
  {"quota_inode_block_zeroed", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[0].get();
     return Spec{{"block[" + S(node_blk(L, q)) + "].zero=1"}, {E(Code::QUOTA_INODE_BAD).Ino(q)}}; }},
  // The group quota inode's NAT entry null (the node block left unnamed).
  {"quota_inode_nat_null", Base::sload, "quota", [](Corruptor& L) {
     const auto q = L.sb().qf_ino[1].get();
     return Spec{{"nat[" + S(q) + "].block_addr=0"}, {E(Code::QUOTA_INODE_BAD).Ino(q)}}; }},
  };
  return k;
}
// clang-format on

// ---------------------------------------------------------------------------
// Bases, built once per process.

struct Bases {
  f2fstest::TempDir dir;
  std::map<Base, fs::path> path;
  std::map<Base, std::string> error;
  /// What fsck.f2fs -f prints about the clean base (e.g. "Info: Corrupted
  /// valid nat_bits" on every freshly made volume): not a finding of a case.
  std::map<Base, std::vector<std::string>> baseline;
};
std::vector<std::string> fsck_f2fs_lines(const std::string& out);

f2fstest::CommandResult sh(const std::string& cmd) { return f2fstest::run(cmd); }
std::string q(const fs::path& p) { return f2fstest::shell_quote(p.string()); }

std::string build_sload_base(const fs::path& d, fs::path& out) {
  const fs::path src = d / "src";
  fs::create_directories(src / "dir/sub");
  fs::create_directories(src / "inl");
  fs::create_directories(src / "many");
  auto write = [](const fs::path& p, std::size_t n, unsigned seed) {
    std::ofstream f(p, std::ios::binary);
    std::string s(n, '\0');
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto& c : s) {
      x = x * 1664525u + 1013904223u;
      c = static_cast<char>(x >> 24);
    }
    f.write(s.data(), static_cast<std::streamsize>(s.size()));
  };
  write(src / "small", 100, 1);
  write(src / "medium", 20000, 2);
  write(src / "big", 12u << 20, 3);
  std::ofstream(src / "dir/sub/f") << "hi\n";
  std::ofstream(src / "inl/x") << "a\n";
  std::ofstream(src / "inl/y") << "b\n";
  for (int i = 1; i <= 300; ++i) std::ofstream(src / "many" / ("file_with_a_longer_name_" + std::to_string(i))) << i << "\n";
  const std::string setup = "cd " + q(src) + " && ln small hard && ln -s small link && ln -s " + std::string(300, 'x') +
                            " longlink && mkfifo fifo && mknod chr c 1 3 && printf '/.*  system_u:object_r:f_t:s0\\n' > ../fc";
  if (auto r = sh(setup); r.exit_code != 0) return "making the source tree: " + r.output;
  out = d / "sload.img";
  f2fstest::make_sparse_file(out, 128ull << 20);
  auto r = sh(f2fstest::reference_tool("mkfs.f2fs") +
              " -q -f -O extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found,quota"
              " -T 1700000000 -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 " + q(out));
  if (r.exit_code != 0) return "mkfs.f2fs: " + r.output;
  r = sh(f2fstest::reference_tool("sload.f2fs") + " -f " + q(src) + " -s " + q(d / "fc") + " -T 1700000000 " + q(out));
  if (r.exit_code != 0 && r.exit_code != 1) return "sload.f2fs exit " + std::to_string(r.exit_code) + ": " + r.output;
  r = sh(f2fstest::reference_tool("fsck.f2fs") + " -f -y " + q(out));
  if (r.exit_code != 0 && r.exit_code != 1) return "fsck.f2fs -f -y on the sload image: " + r.output;
  {
    f2fscore::OpenOptions oo;
    auto dev = f2fscore::open_posix_device(out.string(), oo);
    if (!dev) return dev.error().to_string();
    if (auto e = f2fstest::corrupt::apply_edits(**dev, {"xattr_inline[/medium]=1"}); !e) return e.error().to_string();
    (void)f2fscore::flush(**dev);
  }
  return "";
}

const Bases& bases() {
  static Bases* b = [] {
    auto* x = new Bases();
    // sload
    {
      fs::path p;
      std::string e = build_sload_base(x->dir.path(), p);
      if (e.empty()) x->path[Base::sload] = p; else x->error[Base::sload] = e;
    }
    // compress
    if (auto p = f2fstest::unzstd(fs::path(F2FSCORE_TESTDATA_DIR) / "linux61-compress.img.zst")) {
      const fs::path to = x->dir / "compress.img";
      fs::copy_file(*p, to);
      x->path[Base::compress] = to;
    } else {
      x->error[Base::compress] = "cannot decompress linux61-compress.img.zst";
    }
    // mkfs
    {
      const fs::path p = x->dir / "mkfs.img";
      f2fstest::make_sparse_file(p, 64ull << 20);
      auto r = sh(std::string(F2FSCORE_MKFS_BIN) + " -q -f -O extra_attr,inode_checksum,quota,lost_found,sb_checksum"
                  " -T 1700000000 -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 " + q(p));
      if (r.exit_code == 0) x->path[Base::mkfs] = p; else x->error[Base::mkfs] = "f2fscore-mkfs: " + r.output;
    }
    // plain: the rich image without features (support/rich_image.hpp), as
    // the mutation benchmark's "plain" template.
    {
      f2fstest::RichImageOptions o;
      o.node_segment = true;
      o.consistent = true;
      auto r = f2fstest::build_rich_image(o);
      const fs::path p = x->dir / "plain.img";
      f2fstest::make_sparse_file(p, r.img.size_bytes);
      f2fscore::OpenOptions oo;
      auto dev = r.error.empty() ? f2fscore::open_posix_device(p.string(), oo) : f2fscore::Result<std::unique_ptr<f2fscore::BlockDevice>>(f2fscore::make_error(f2fscore::Errc::corrupt, r.error));
      bool ok = static_cast<bool>(dev);
      for (const auto& [blk, data] : r.img.blocks) {
        if (!ok) break;
        ok = static_cast<bool>(f2fscore::write_at(**dev, blk * f2fscore::disk::kBlockSize, std::span<const std::uint8_t>(data.data(), data.size())));
      }
      if (ok) ok = static_cast<bool>(f2fscore::flush(**dev));
      if (ok) x->path[Base::plain] = p;
      else x->error[Base::plain] = "the plain rich image: " + (dev ? std::string("write failed") : dev.error().to_string());
    }
    for (auto& [k, p] : x->path) {
      const fs::path copy = x->dir / "baseline.img";
      sh("cp --sparse=always " + q(p) + " " + q(copy));
      x->baseline[k] = fsck_f2fs_lines(sh("yes n 2>/dev/null | " + f2fstest::reference_tool("fsck.f2fs") + " -f " + q(copy)).output);
      fs::remove(copy);
      auto probs = f2fstest::fsck_problems(p);
      if (!probs.empty()) {
        x->error[k] = std::string("base ") + base_name(k) + " is not clean under fsck.f2fs -f: " + probs[0];
      }
    }
    return x;
  }();
  return *b;
}

// ---------------------------------------------------------------------------

std::uint64_t file_hash(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> buf(1 << 20);
  std::uint64_t h = 1469598103934665603ull;
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    for (std::streamsize i = 0; i < f.gcount(); ++i) h = (h ^ static_cast<std::uint8_t>(buf[static_cast<std::size_t>(i)])) * 1099511628211ull;
  }
  return h;
}

struct Found {
  std::string code;
  std::optional<std::uint64_t> ino, nid, blkaddr, segno;
  bool fixed = false;
  std::string text;
};

bool matches(const Expect& e, const Found& f) {
  if (f.code != f2fscore::fsck::code_name(e.code)) return false;
  if (e.ino && f.ino != e.ino) return false;
  if (e.nid && f.nid != e.nid) return false;
  if (e.blkaddr && f.blkaddr != e.blkaddr) return false;
  if (e.segno && f.segno != e.segno) return false;
  return true;
}

std::vector<Found> from_report(const f2fscore::fsck::Report& r) {
  std::vector<Found> out;
  for (const auto& p : r.problems) {
    Found f{std::string(f2fscore::fsck::code_name(p.code)), {}, {}, {}, {}, p.fixed, p.to_string()};
    if (p.ino) f.ino = *p.ino;
    if (p.nid) f.nid = *p.nid;
    if (p.blkaddr) f.blkaddr = *p.blkaddr;
    if (p.segno) f.segno = *p.segno;
    out.push_back(std::move(f));
  }
  return out;
}

struct CliRun {
  int exit_code = -1;
  bool json_ok = false;
  std::vector<Found> problems;
  std::string output;
};

CliRun run_cli(const std::string& flags, const fs::path& img) {
  CliRun c;
  const auto r = sh(std::string(F2FSCORE_FSCK_BIN) + " " + flags + " --json " + q(img) + " 2>/dev/null");
  c.exit_code = r.exit_code;
  c.output = r.output;
  try {
    const auto j = nlohmann::json::parse(r.output);
    for (const auto& p : j.at("problems")) {
      Found f;
      f.code = p.at("code").get<std::string>();
      for (auto [key, dst] : {std::pair{"ino", &f.ino}, std::pair{"nid", &f.nid}, std::pair{"blkaddr", &f.blkaddr},
                              std::pair{"segno", &f.segno}})
        if (p.contains(key)) *dst = p.at(key).get<std::uint64_t>();
      f.fixed = p.value("fixed", false);
      f.text = p.dump();
      c.problems.push_back(std::move(f));
    }
    c.json_ok = j.at("exit_code").get<int>() == r.exit_code;
  } catch (const std::exception& e) {
    c.json_ok = false;
  }
  return c;
}

std::string codes_of(const std::vector<Found>& v) {
  std::string s;
  for (const auto& f : v)
    if (s.find(f.code) == std::string::npos) s += (s.empty() ? "" : ", ") + f.code;
  return s.empty() ? "-" : s;
}

// fsck.f2fs's problem lines, shortened for the table ("[ASSERT] (fn: 123) --> msg" -> "msg").
std::vector<std::string> fsck_f2fs_lines(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream is(out);
  std::string line;
  while (std::getline(is, line)) {
    bool hit = false;
    for (const char* bad : {"[Fail]", "[ASSERT]", "[FIX]", "Fixing", "Reconnect", "Move curseg", "is unreachable", "Error", "Invalid", "Wrong",
                            "Mismatch", "Can't find"})
      hit = hit || line.find(bad) != std::string::npos;
    if (line.find("[Ok..]") != std::string::npos || line.find("Force to fix corruption") != std::string::npos) continue;
    if (line.rfind("Info:", 0) == 0 && line.find("orrupt") == std::string::npos && line.find("nvalid") == std::string::npos)
      continue;
    if (!hit && line.find("orrupt") == std::string::npos) continue;
    if (auto a = line.find("-->"); a != std::string::npos) line = line.substr(0, line.find(']') + 1) + line.substr(a + 3);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (std::find(v.begin(), v.end(), line) == v.end()) v.push_back(line);
  }
  return v;
}

// Problem lines of a fsck.f2fs run as ../shared/NOTES.md defines them
// (f2fstest::fsck_problems() on an output already at hand).
std::vector<std::string> notes_problems(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream is(out);
  std::string line;
  bool summary = false;
  while (std::getline(is, line)) {
    if (line.rfind("[FSCK]", 0) == 0) {
      summary = true;
      if (line.find("fixing SIT types") != std::string::npos || line.find("Max image size") != std::string::npos) continue;
      if (line.find("[Ok..]") == std::string::npos) v.push_back(line);
      continue;
    }
    for (const char* bad : {"[Fail]", "[ASSERT]", "[FIX]", "Fixing", "Reconnect", "Move curseg"})
      if (line.find(bad) != std::string::npos) {
        v.push_back(line);
        break;
      }
  }
  if (!summary) v.push_back("no [FSCK] summary");
  return v;
}

std::string md_escape(std::string s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

class GoldenCase : public ::testing::TestWithParam<std::size_t> {};

TEST_P(GoldenCase, TwoPass) {
  const Case& c = cases()[GetParam()];
  for (const char* tool : {"mkfs.f2fs", "sload.f2fs", "fsck.f2fs"})
    if (f2fstest::reference_tool(tool).empty()) {
      if (f2fstest::required("FSCK")) FAIL() << tool << " is required (F2FSCORE_REQUIRE_FSCK=1) but not installed";
      GTEST_SKIP() << tool << " is not installed";
    }
  const Bases& B = bases();
  if (B.error.count(c.base)) FAIL() << "base " << base_name(c.base) << ": " << B.error.at(c.base);
  f2fstest::TempDir tmp;
  const fs::path img = tmp / "damaged.img";
  ASSERT_EQ(sh("cp --sparse=always " + q(B.path.at(c.base)) + " " + q(img)).exit_code, 0);

  // The edits, and the expectations computed from the undamaged layout.
  Spec spec;
  std::map<std::string, std::string> kept;
  {
    f2fscore::OpenOptions oo;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_OK(dev);
    auto L = Corruptor::open(**dev);
    ASSERT_OK(L);
    spec = c.prepare(**L);
    for (const auto& k : spec.keep) kept[k] = file_contents(B.path.at(c.base), k);
    for (const auto& e : spec.edits) {
      auto r = (*L)->apply(e);
      ASSERT_TRUE(r) << "edit " << e << ": " << r.error().to_string();
    }
    ASSERT_TRUE(f2fscore::flush(**dev));
  }
  if (spec.truncate_bytes) fs::resize_file(img, fs::file_size(img) - spec.truncate_bytes);
  std::string expect_str;
  for (const auto& e : spec.expect) expect_str += (expect_str.empty() ? "" : "; ") + e.str();
  std::string edits_str;
  for (const auto& e : spec.edits) edits_str += (edits_str.empty() ? "" : " ") + ("`" + e + "`");

  // The comparison row is written whatever happens below.
  struct Row {
    std::string cells[12];
    ~Row() {
      const char* t = std::getenv("F2FSCORE_FSCK_TABLE");
      if (t == nullptr || *t == '\0') return;
      std::string line = "|";
      for (auto& s : cells) line += " " + md_escape(s) + " |";
      line += "\n";
      const int fd = ::open(t, O_WRONLY | O_APPEND | O_CREAT, 0644);
      if (fd >= 0) {
        (void)!::write(fd, line.data(), line.size());
        ::close(fd);
      }
    }
  } row;
  row.cells[0] = c.name;
  row.cells[1] = c.area;
  row.cells[2] = base_name(c.base);
  row.cells[3] = edits_str;
  row.cells[4] = expect_str;

  // (e) fsck.f2fs on copies of the damaged image. Its questions (restore
  // lost files?) are answered "n"; -f makes it repair as it checks.
  {
    const fs::path a = tmp / "ref-check.img", b = tmp / "ref-fix.img";
    sh("cp --sparse=always " + q(img) + " " + q(a) + " && cp --sparse=always " + q(img) + " " + q(b));
    const std::string ref = f2fstest::reference_tool("fsck.f2fs");
    const auto r = sh("yes n 2>/dev/null | " + ref + " -f " + q(a));
    auto lines = fsck_f2fs_lines(r.output);
    const auto& base_lines = B.baseline.at(c.base);
    std::erase_if(lines, [&](const std::string& l) { return std::find(base_lines.begin(), base_lines.end(), l) != base_lines.end(); });
    const auto probs = notes_problems(r.output);
    std::string msg;
    for (std::size_t i = 0; i < lines.size() && i < 3; ++i) msg += (msg.empty() ? "" : " / ") + lines[i];
    if (lines.size() > 3) msg += " (+" + std::to_string(lines.size() - 3) + ")";
    row.cells[8] = (!probs.empty() || r.exit_code != 0) ? "yes" : !lines.empty() ? "warns only" : "**no**";
    row.cells[9] = (msg.empty() ? std::string("-") : msg.substr(0, 400)) + " (exit " + std::to_string(r.exit_code) + ")";
    const auto fx = sh("yes n 2>/dev/null | " + ref + " -f -y " + q(b));
    const auto again = sh(ref + " -f " + q(b));
    const auto after = notes_problems(again.output);
    auto after_lines = fsck_f2fs_lines(again.output);
    std::erase_if(after_lines, [&](const std::string& l) {
      return std::find(base_lines.begin(), base_lines.end(), l) != base_lines.end();
    });
    const bool clean = after.empty() && after_lines.empty() && again.exit_code == 0;
    row.cells[10] = "exit " + std::to_string(fx.exit_code) +
                    (clean ? ", then clean"
                           : ", then not clean: " + (after.empty() ? (after_lines.empty() ? "exit " + std::to_string(again.exit_code) : after_lines[0]) : after[0]).substr(0, 120));
  }

  // (a) check only, through the library: the expected problems, exit 4
  // (0 for informational ones), nothing written.
  const std::uint64_t before = file_hash(img);
  {
    f2fscore::OpenOptions oo;
    oo.read_only = true;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_OK(dev);
    f2fscore::fsck::Options o;
    o.mode = f2fscore::fsck::Mode::check_only;
    o.force = true;
    auto rep = f2fscore::fsck::check(**dev, o);
    ASSERT_TRUE(rep) << "check -n: " << rep.error().to_string();
    const auto found = from_report(*rep);
    row.cells[5] = codes_of(found);
    for (const auto& e : spec.expect) {
      const bool hit = std::any_of(found.begin(), found.end(), [&](const Found& f) { return matches(e, f); });
      std::string all;
      for (const auto& f : found) all += "\n  " + f.text;
      EXPECT_TRUE(hit) << "check -n (library) did not report " << e.str() << "; it reported:" << all;
    }
    EXPECT_EQ(rep->exit_code(), spec.check_exit) << "check -n (library)";
    EXPECT_FALSE(rep->wrote);
  }
  EXPECT_EQ(file_hash(img), before) << "check -n (library) changed the image";
  {
    const auto cli = run_cli("-n -f", img);
    EXPECT_EQ(cli.exit_code, spec.check_exit) << "f2fscore-fsck -n -f: " << cli.output.substr(0, 2000);
    EXPECT_TRUE(cli.json_ok) << "f2fscore-fsck -n --json: bad JSON or exit_code: " << cli.output.substr(0, 2000);
    for (const auto& e : spec.expect)
      EXPECT_TRUE(std::any_of(cli.problems.begin(), cli.problems.end(), [&](const Found& f) { return matches(e, f); }))
          << "f2fscore-fsck -n --json did not report " << e.str();
  }
  EXPECT_EQ(file_hash(img), before) << "f2fscore-fsck -n changed the image";

  // (b) pass 1: repair everything.
  {
    const auto cli = run_cli("-y -f", img);
    row.cells[6] = "exit " + std::to_string(cli.exit_code);
    EXPECT_EQ(cli.exit_code, spec.left_as_is ? 0 : 1) << "pass 1 (f2fscore-fsck -y -f): " << cli.output.substr(0, 3000);
    EXPECT_TRUE(cli.json_ok) << "pass 1: bad JSON: " << cli.output.substr(0, 2000);
    for (const auto& e : spec.expect) {
      auto it = std::find_if(cli.problems.begin(), cli.problems.end(), [&](const Found& f) { return matches(e, f); });
      EXPECT_TRUE(it != cli.problems.end()) << "pass 1 did not report " << e.str();
      if (it != cli.problems.end()) EXPECT_EQ(it->fixed, !spec.left_as_is) << "pass 1 repaired or not: " << it->text;
    }
    if (spec.left_as_is) EXPECT_EQ(file_hash(img), before) << "pass 1 wrote although it leaves the problem as it is";
  }
  // (c) pass 2: clean, nothing written.
  {
    f2fscore::OpenOptions oo;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_OK(dev);
    f2fscore::fsck::Options o;
    o.mode = f2fscore::fsck::Mode::repair_all;
    o.force = true;
    auto rep = f2fscore::fsck::check(**dev, o);
    ASSERT_TRUE(rep) << "pass 2: " << rep.error().to_string();
    std::string all;
    for (const auto& p : rep->problems) all += "\n  " + p.to_string();
    if (spec.left_as_is)
      EXPECT_TRUE(std::all_of(rep->problems.begin(), rep->problems.end(), [&](const auto& p) {
        return std::any_of(spec.expect.begin(), spec.expect.end(), [&](const Expect& e) { return e.code == p.code; });
      })) << "pass 2 (library, -y -f) found:" << all;
    else
      EXPECT_TRUE(rep->problems.empty()) << "pass 2 (library, -y -f) found:" << all;
    EXPECT_EQ(rep->exit_code(), 0);
    EXPECT_FALSE(rep->wrote) << "pass 2 wrote to the image";
    row.cells[7] = rep->problems.empty() ? "clean"
                   : spec.left_as_is ? "left as is: " + std::string(f2fscore::fsck::code_name(rep->problems[0].code))
                                     : "not clean: " + std::string(f2fscore::fsck::code_name(rep->problems[0].code));
  }
  {
    const auto cli = run_cli("-n -f", img);
    EXPECT_EQ(cli.exit_code, 0) << "pass 2 (f2fscore-fsck -n -f): " << cli.output.substr(0, 2000);
  }
  for (const auto& [k, want] : kept) {
    EXPECT_EQ(want.rfind("error: ", 0), std::string::npos) << k << " on the undamaged image: " << want;
    const std::string got = file_contents(img, k);
    EXPECT_TRUE(got == want) << k << " differs after the repair (" << got.size() << " bytes, " << want.size()
                             << " before the damage)" << (got.rfind("error: ", 0) == 0 ? ": " + got : "");
  }
  // (d) fsck.f2fs agrees with the repair.
  {
    std::string out;
    const auto probs = f2fstest::fsck_problems(img, &out);
    std::string all;
    for (const auto& p : probs) all += "\n  " + p;
    EXPECT_TRUE(probs.empty()) << "fsck.f2fs -f after our repair:" << all;
    row.cells[11] = probs.empty() ? "clean" : "not clean";
  }
}

INSTANTIATE_TEST_SUITE_P(Fsck, GoldenCase, ::testing::Range<std::size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& i) { return std::string(cases()[i.param].name); });

// The repair never frees what a reachable inode still maps: an inode whose
// compression attributes are out of range and whose first compressed
// cluster decodes under no valid pair cannot be walked, so -y refuses
// (REPAIR_FAILED, exit 4) and writes nothing; check-only reports the same.
TEST(RepairInvariant, UnwalkableInodeKeepsItsBlocks) {
  for (const char* tool : {"mkfs.f2fs", "sload.f2fs", "fsck.f2fs"})
    if (f2fstest::reference_tool(tool).empty()) {
      if (f2fstest::required("FSCK")) FAIL() << tool << " is required (F2FSCORE_REQUIRE_FSCK=1) but not installed";
      GTEST_SKIP() << tool << " is not installed";
    }
  const Bases& B = bases();
  if (B.error.count(Base::compress)) FAIL() << B.error.at(Base::compress);
  f2fstest::TempDir tmp;
  const fs::path img = tmp / "damaged.img";
  ASSERT_EQ(sh("cp --sparse=always " + q(B.path.at(Base::compress)) + " " + q(img)).exit_code, 0);
  nid_t mixed = 0;
  {
    f2fscore::OpenOptions oo;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_OK(dev);
    auto L = Corruptor::open(**dev);
    ASSERT_OK(L);
    mixed = ino(**L, "/lz4/mixed");
    // Slot 0 is COMPRESS_ADDR (the case compr_addr_misplaced relies on the
    // same layout); slot 1 the first compressed block, zeroed here.
    ASSERT_EQ(must((*L)->data_blk(mixed, 0), "slot 0"), f2fscore::disk::kCompressAddr);
    for (const std::string e : {std::string("inode[/lz4/mixed].i_log_cluster_size=31"),
                                "block[" + S(blk(**L, "/lz4/mixed", 1)) + "].zero=1"})
      ASSERT_TRUE((*L)->apply(e)) << e;
    ASSERT_TRUE(f2fscore::flush(**dev));
  }
  const std::uint64_t before = file_hash(img);
  const auto cli = run_cli("-y -f", img);
  EXPECT_EQ(cli.exit_code, 4) << cli.output.substr(0, 3000);
  EXPECT_TRUE(std::any_of(cli.problems.begin(), cli.problems.end(), [](const Found& f) { return f.code == "REPAIR_FAILED"; }))
      << cli.output.substr(0, 3000);
  EXPECT_TRUE(std::any_of(cli.problems.begin(), cli.problems.end(), [&](const Found& f) {
    return f.code == "INODE_FLAGS" && f.ino == mixed && !f.fixed;
  })) << cli.output.substr(0, 3000);
  EXPECT_EQ(file_hash(img), before) << "the refused repair wrote to the image";
}

// A truncated image whose lost tail held blocks in use: checked as far as
// it goes, reported with what is lost (exit 4), not grown back, and not
// written (a rebuild from the rest would free what the lost nodes map).
TEST(Truncated, LostTailInUseIsReported) {
  for (const char* tool : {"mkfs.f2fs", "sload.f2fs", "fsck.f2fs"})
    if (f2fstest::reference_tool(tool).empty()) {
      if (f2fstest::required("FSCK")) FAIL() << tool << " is required (F2FSCORE_REQUIRE_FSCK=1) but not installed";
      GTEST_SKIP() << tool << " is not installed";
    }
  const Bases& B = bases();
  if (B.error.count(Base::sload)) FAIL() << B.error.at(Base::sload);
  f2fstest::TempDir tmp;
  const fs::path img = tmp / "damaged.img";
  ASSERT_EQ(sh("cp --sparse=always " + q(B.path.at(Base::sload)) + " " + q(img)).exit_code, 0);
  std::uint64_t cut = 0;
  {
    f2fscore::OpenOptions oo;
    auto dev = f2fscore::open_posix_device(img.string(), oo);
    ASSERT_OK(dev);
    auto L = Corruptor::open(**dev);
    ASSERT_OK(L);
    cut = blk(**L, "/big", 100);  // the device ends just before /big's block 100
  }
  fs::resize_file(img, cut * f2fscore::disk::kBlockSize);
  const auto size = fs::file_size(img);
  const auto hash = file_hash(img);
  for (const char* flags : {"-n -f", "-y -f"}) {
    const auto cli = run_cli(flags, img);
    EXPECT_EQ(file_hash(img), hash) << flags << " wrote to an image whose lost tail held blocks in use";
    EXPECT_EQ(cli.exit_code, 4) << flags << ": " << cli.output.substr(0, 3000);
    auto it = std::find_if(cli.problems.begin(), cli.problems.end(), [](const Found& f) { return f.code == "VOLUME_TRUNCATED"; });
    ASSERT_TRUE(it != cli.problems.end()) << flags << ": " << cli.output.substr(0, 3000);
    EXPECT_FALSE(it->fixed) << it->text;
    EXPECT_NE(it->text.find("lost: "), std::string::npos) << it->text;
    EXPECT_EQ(fs::file_size(img), size) << flags << " grew an image whose lost tail held blocks in use";
  }
}

// The table lists at least 60 cases and each names its expectations.
TEST(GoldenTable, SixtyCasesWithExpectations) {
  EXPECT_GE(cases().size(), 60u);
  std::map<std::string, int> names;
  for (const auto& c : cases()) EXPECT_EQ(++names[c.name], 1) << "duplicate case name " << c.name;
}

}  // namespace
