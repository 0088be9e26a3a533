// Quota files in the quota-v2 format (QFMT_VFS_V1): see disk/quota.hpp.
#include "disk/quota.hpp"

#include <cstring>
#include <set>
#include <utility>

#include "f2fscore/endian.hpp"

namespace f2fscore::disk::quota {

namespace {
void put_le16(std::uint8_t* p, std::size_t off, std::uint16_t x) {
  p[off] = static_cast<std::uint8_t>(x);
  p[off + 1] = static_cast<std::uint8_t>(x >> 8);
}
bool entry_used(const std::uint8_t* e) {
  for (std::uint32_t i = 0; i < kV2r1Entry; ++i)
    if (e[i] != 0) return true;
  return false;
}
}  // namespace

std::string read_dquots(const std::vector<std::uint8_t>& file, std::map<std::uint32_t, Dquot>& out) {
  const std::uint32_t nblocks = static_cast<std::uint32_t>(file.size() / kQtBlk);
  std::set<std::uint32_t> leaves, seen;
  // Depth-first over the tree blocks, each visited once.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack{{kQtTreeOff, 0}};
  while (!stack.empty()) {
    auto [blk, depth] = stack.back();
    stack.pop_back();
    if (blk >= nblocks || !seen.insert(blk).second) return "quota tree references blocks outside the file or loops";
    for (std::uint32_t i = 0; i < kQtBlk / 4; ++i) {
      const std::uint32_t ref = load_le32(file.data(), static_cast<std::size_t>(blk) * kQtBlk + 4 * i);
      if (ref == 0) continue;
      if (depth + 1 == kQtDepth) leaves.insert(ref);
      else stack.emplace_back(ref, depth + 1);
    }
  }
  std::set<std::uint32_t> ids;
  for (std::uint32_t leaf : leaves) {
    if (leaf >= nblocks) return "quota tree references blocks outside the file or loops";
    const std::uint8_t* b = file.data() + static_cast<std::size_t>(leaf) * kQtBlk;
    for (std::uint32_t o = kDqdbHeader; o + kV2r1Entry <= kQtBlk; o += kV2r1Entry) {
      const std::uint8_t* e = b + o;
      if (!entry_used(e)) continue;
      // One entry per id: the kernel reads the first it finds
      // (find_block_dqentry() in fs/quota/quota_tree.c), quota tools and
      // fsck.f2fs every one (report_block() in quotaio_tree.c), so a second
      // entry is a usage nobody updates.
      const std::uint32_t id = load_le32(e, kDqbId);
      if (!ids.insert(id).second)
        return "the quota file holds two entries for id " + std::to_string(id);
      Dquot& d = out[id];
      d.file_off = static_cast<std::uint64_t>(leaf) * kQtBlk + o;
      d.inodes = load_le64(e, kDqbCurinodes);
      d.space = load_le64(e, kDqbCurspace);
      d.ihardlimit = load_le64(e, kDqbIhardlimit);
      d.isoftlimit = load_le64(e, kDqbIsoftlimit);
      d.bhardlimit = load_le64(e, kDqbBhardlimit);
      d.bsoftlimit = load_le64(e, kDqbBsoftlimit);
      d.btime = load_le64(e, kDqbBtime);
      d.itime = load_le64(e, kDqbItime);
    }
  }
  return {};
}

std::string insert_dquot(std::vector<std::uint8_t>& file, std::uint32_t id, std::uint64_t inodes, std::uint64_t space,
                         bool grow, std::uint64_t* entry_off) {
  std::vector<std::uint8_t> f = file;
  auto in_file = [&] { return static_cast<std::uint32_t>(f.size() / kQtBlk); };
  auto blk = [&](std::uint32_t b) { return f.data() + static_cast<std::size_t>(b) * kQtBlk; };
  std::string why;
  auto get_free_blk = [&]() -> std::uint32_t {
    std::uint32_t b = load_le32(f.data(), kDqiFreeBlk);
    if (b != 0) {
      if (b >= in_file()) {
        why = "the quota free-block list points outside the file";
        return 0;
      }
      store_le32(f.data(), kDqiFreeBlk, load_le32(blk(b), 0));
    } else {
      b = load_le32(f.data(), kDqiBlocks);
      if (b >= in_file()) {
        if (!grow || b > (1u << 22)) {
          why = "the quota tree must grow past the file's size, which needs f2fs blocks";
          return 0;
        }
        f.resize(static_cast<std::size_t>(b + 1) * kQtBlk, 0);
      }
      store_le32(f.data(), kDqiBlocks, b + 1);
    }
    std::memset(blk(b), 0, kQtBlk);
    return b;
  };
  // The tree, depth 0..3, indexed by the id's bytes from the most significant.
  std::uint32_t b = kQtTreeOff;
  for (std::uint32_t depth = 0; depth + 1 < kQtDepth; ++depth) {
    const std::uint32_t slot = (id >> (8 * (kQtDepth - 1 - depth))) & 0xff;
    std::uint32_t ref = load_le32(blk(b), 4 * slot);
    if (ref == 0) {
      ref = get_free_blk();
      if (ref == 0) return why;
      store_le32(blk(b), 4 * slot, ref);
    } else if (ref >= in_file()) {
      return "the quota tree references blocks outside the file";
    }
    b = ref;
  }
  const std::uint32_t slot = id & 0xff;
  if (load_le32(blk(b), 4 * slot) != 0) return "the leaf reference for this id exists but holds no entry for it";
  // A data block with a free entry.
  std::uint32_t data = load_le32(f.data(), kDqiFreeEntry);
  if (data >= in_file()) return "the quota free-entry list points outside the file";
  if (data == 0) {
    data = get_free_blk();
    if (data == 0) return why;
    store_le32(blk(data), 0, 0);
    store_le32(blk(data), 4, 0);
    store_le32(f.data(), kDqiFreeEntry, data);  // insert_free_dqentry(): it has room
  }
  std::uint8_t* d = blk(data);
  std::uint32_t k = 0;
  for (; k < kDqstrInBlk; ++k)
    if (!entry_used(d + kDqdbHeader + k * kV2r1Entry)) break;
  if (k == kDqstrInBlk) return "the quota free-entry block is full";
  const std::uint16_t entries = static_cast<std::uint16_t>(load_le16(d, 8) + 1);
  put_le16(d, 8, entries);
  if (entries >= kDqstrInBlk) {  // remove_free_dqentry(): full now
    const std::uint32_t next = load_le32(d, 0);
    store_le32(f.data(), kDqiFreeEntry, next);
    if (next != 0 && next < in_file()) store_le32(blk(next), 4, 0);
    store_le32(d, 0, 0);
    store_le32(d, 4, 0);
  }
  std::uint8_t* e = d + kDqdbHeader + k * kV2r1Entry;
  std::memset(e, 0, kV2r1Entry);
  store_le32(e, kDqbId, id);
  store_le64(e, kDqbCurinodes, inodes);
  store_le64(e, kDqbCurspace, space);
  store_le32(blk(b), 4 * slot, data);
  if (entry_off) *entry_off = static_cast<std::uint64_t>(data) * kQtBlk + kDqdbHeader + k * kV2r1Entry;
  file.swap(f);
  return {};
}

std::string delete_dquot(std::vector<std::uint8_t>& file, std::uint32_t id, std::uint64_t entry_off) {
  std::vector<std::uint8_t> f = file;
  const std::uint32_t nblocks = static_cast<std::uint32_t>(f.size() / kQtBlk);
  auto blk = [&](std::uint32_t b) { return f.data() + static_cast<std::size_t>(b) * kQtBlk; };
  // put_free_dqblk(): the block zeroed, at the head of the free-block list.
  auto put_free_blk = [&](std::uint32_t b) {
    std::memset(blk(b), 0, kQtBlk);
    store_le32(blk(b), 0, load_le32(f.data(), kDqiFreeBlk));
    store_le32(f.data(), kDqiFreeBlk, b);
  };
  // The path from the root: the tree blocks of depth 0..3.
  std::uint32_t path[kQtDepth];
  std::uint32_t b = kQtTreeOff;
  for (std::uint32_t depth = 0; depth < kQtDepth; ++depth) {
    if (b < kQtTreeOff || b >= nblocks) return "the quota tree references blocks outside the file";
    path[depth] = b;
    b = load_le32(blk(b), 4 * ((id >> (8 * (kQtDepth - 1 - depth))) & 0xff));
  }
  const std::uint32_t data = b;
  if (data < kQtTreeOff || data >= nblocks || entry_off / kQtBlk != data)
    return "the entry is not where the quota tree leads";
  // free_dqentry().
  std::uint8_t* d = blk(data);
  const std::uint16_t entries = load_le16(d, 8);
  if (entries == 0) return "the quota data block holds no entry";
  put_le16(d, 8, static_cast<std::uint16_t>(entries - 1));
  if (entries == 1) {
    // remove_free_dqentry(), then put_free_dqblk().
    const std::uint32_t next = load_le32(d, 0), prev = load_le32(d, 4);
    if (next >= nblocks || prev >= nblocks) return "the quota free-entry list points outside the file";
    if (next) store_le32(blk(next), 4, prev);
    if (prev) store_le32(blk(prev), 0, next);
    else store_le32(f.data(), kDqiFreeEntry, next);
    put_free_blk(data);
  } else {
    std::memset(f.data() + static_cast<std::size_t>(entry_off), 0, kV2r1Entry);
    if (entries == kDqstrInBlk) {
      // insert_free_dqentry(): it has room again.
      const std::uint32_t head = load_le32(f.data(), kDqiFreeEntry);
      if (head >= nblocks) return "the quota free-entry list points outside the file";
      store_le32(d, 0, head);
      store_le32(d, 4, 0);
      if (head) store_le32(blk(head), 4, data);
      store_le32(f.data(), kDqiFreeEntry, data);
    }
  }
  // remove_tree(): the references up the path, empty tree blocks freed.
  for (std::uint32_t depth = kQtDepth; depth-- > 0;) {
    std::uint8_t* t = blk(path[depth]);
    store_le32(t, 4 * ((id >> (8 * (kQtDepth - 1 - depth))) & 0xff), 0);
    bool empty = true;
    for (std::uint32_t i = 0; i < kQtBlk && empty; ++i) empty = t[i] == 0;
    if (!empty || path[depth] == kQtTreeOff) break;
    put_free_blk(path[depth]);
  }
  file.swap(f);
  return {};
}

}  // namespace f2fscore::disk::quota
