// The writer's page cache, coalesced asynchronous writeback, direct writes,
// periodic checkpoints and discard (docs/writer.md, "Page cache").
//
// The cache keeps 4 KiB pages of file data keyed by (inode, block index):
// dirty pages written by write() and not yet on the device, and clean pages
// read from (or written to) the device, least recently used first out. A
// dirty page's block is reserved when it is first dirtied, as
// f2fs_reserve_block() does: a hole becomes NEW_ADDR in its dnode, counted
// in reserved_blocks and i_blocks, so a write that the volume cannot hold
// fails at write() with no_space instead of at writeback. Writeback places
// each dirty page (place_file_block(): place_data() decides in place or
// not) and writes the placed blocks through the BatchWriter: consecutive
// addresses become one request of up to 1 MiB, up to 16 requests in flight.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <new>

#include "f2fscore/disk/checkpoint.hpp"
#include "f2fscore/endian.hpp"
#include "f2fscore/iostat.hpp"
#include "meta/meta_internal.hpp"
#include "writer/writer_internal.hpp"
#include "util/aligned.hpp"

namespace f2fscore {

using namespace disk;
using meta::fmt;

namespace wr {

std::uint64_t mono_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The kernel's iostat types of data writes: direct writes are the
// application's (APP_DIRECT_IO), data written for a checkpoint FS_CP_DATA_IO
// (f2fs_write_data_pages() with cp_task), GC moves FS_GC_DATA_IO, other
// writeback (kworker, fsync) FS_DATA_IO.
std::uint16_t data_write_tag(const WriteContext& ctx) {
  switch (ctx.origin) {
    case WriteContext::Origin::direct:
      return io_tag(IostatType::app_direct_io);
    case WriteContext::Origin::gc:
      return io_tag(IostatType::fs_gc_data_io);
    case WriteContext::Origin::sync_writeback:
      return io_tag(ctx.fsync || ctx.fdatasync ? IostatType::fs_data_io : IostatType::fs_cp_data_io);
    case WriteContext::Origin::writeback:
      break;
  }
  return io_tag(IostatType::fs_data_io);
}

// ---- BatchWriter ---------------------------------------------------------------

namespace {
struct Slot {
  IoRequest req;
  std::uint8_t* buf = nullptr;
  bool busy = false, done = false;
};
void slot_done(IoRequest& r) noexcept { static_cast<Slot*>(r.user)->done = true; }
}  // namespace

struct BatchWriter::State {
  BlockDevice& dev;
  std::uint32_t max_blocks, depth;
  std::vector<Slot> slots;
  Slot* open = nullptr;  // the run being built
  block_t run_start = 0;
  std::uint32_t run_len = 0;
  std::uint16_t run_tag = 0;
  // The open run is written from the caller's memory (add_ref()) at
  // run_ref, not from the slot's buffer.
  const std::uint8_t* run_ref = nullptr;
  // The block add_ref() took last, in either way.
  const std::uint8_t* last_ref = nullptr;
  std::uint64_t submitted = 0;
  Status failure;
  State(BlockDevice& d, std::uint32_t mb, std::uint32_t dp) : dev(d), max_blocks(mb), depth(dp), slots(dp) {}
  ~State() {
    drain_all();
    for (auto& s : slots) detail::aligned_free(s.buf);
  }
  void reap(Slot& s) {
    s.busy = false;
    s.done = false;
    if (!s.req.ok() && failure) failure = make_error(s.req.error());
  }
  void submit_open() {
    if (!open) return;
    Slot& s = *open;
    s.req = IoRequest{};
    s.req.op = IoOp::write;
    s.req.tag = run_tag;
    s.req.offset = static_cast<std::uint64_t>(run_start) * kBlockSize;
    s.req.length = static_cast<std::uint64_t>(run_len) * kBlockSize;
    s.req.buf = run_ref != nullptr ? const_cast<std::uint8_t*>(run_ref) : s.buf;
    run_ref = nullptr;
    s.req.on_complete = slot_done;
    s.req.user = &s;
    s.busy = true;
    s.done = false;
    open = nullptr;
    ++submitted;
    dev.submit(s.req);
    dev.poll(false);  // to the device now (a backend may hold submissions until a poll)
  }
  Slot* free_slot() {
    for (;;) {
      for (auto& s : slots) {
        if (s.busy && s.done) reap(s);
        if (!s.busy && &s != open) return &s;
      }
      dev.poll(true);
    }
  }
  void drain_all() {
    submit_open();
    for (auto& s : slots)
      while (s.busy) {
        if (s.done) reap(s);
        else dev.poll(true);
      }
  }
};

BatchWriter::BatchWriter(BlockDevice& dev, std::uint32_t max_blocks, std::uint32_t depth)
    : s_(std::make_unique<State>(dev, std::max<std::uint32_t>(1, max_blocks), std::max<std::uint32_t>(1, depth))) {}
BatchWriter::~BatchWriter() = default;

Status BatchWriter::add(block_t addr, const std::uint8_t* block, std::uint16_t tag) {
  State& s = *s_;
  // A block rewritten while its previous write is in flight (in-place
  // updates): that write finishes first, so the two cannot be reordered.
  if (s.open && addr >= s.run_start && addr < s.run_start + s.run_len) s.submit_open();
  for (auto& sl : s.slots)
    if (sl.busy && addr >= sl.req.offset / kBlockSize && addr < (sl.req.offset + sl.req.length) / kBlockSize) {
      while (!sl.done) s.dev.poll(true);
      s.reap(sl);
    }
  if (s.open && (s.run_ref != nullptr || addr != s.run_start + s.run_len || tag != s.run_tag || s.run_len >= s.max_blocks))
    s.submit_open();
  if (!s.open) {
    Slot* sl = s.free_slot();
    if (!sl->buf) {
      sl->buf = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(kBlockSize, static_cast<std::size_t>(s.max_blocks) * kBlockSize));
      if (!sl->buf) return make_error(Errc::io, "writer: no memory for a write buffer");
    }
    s.open = sl;
    s.run_start = addr;
    s.run_len = 0;
    s.run_tag = tag;
  }
  std::memcpy(s.open->buf + static_cast<std::size_t>(s.run_len) * kBlockSize, block, kBlockSize);
  ++s.run_len;
  return {};
}

Status BatchWriter::add_ref(block_t addr, const std::uint8_t* block, std::uint16_t tag) {
  State& s = *s_;
  const std::size_t align = std::max<std::uint32_t>(1, s.dev.info().buffer_alignment);
  if (reinterpret_cast<std::uintptr_t>(block) % align != 0) return add(addr, block, tag);
  // A rewrite of a block in flight, or in the open run, waits (see add()).
  if (s.open && addr >= s.run_start && addr < s.run_start + s.run_len) s.submit_open();
  for (auto& sl : s.slots)
    if (sl.busy && addr >= sl.req.offset / kBlockSize && addr < (sl.req.offset + sl.req.length) / kBlockSize) {
      while (!sl.done) s.dev.poll(true);
      s.reap(sl);
    }
  const std::uint8_t* prev = s.last_ref;
  s.last_ref = block;
  if (s.open && addr == s.run_start + s.run_len && tag == s.run_tag && s.run_len < s.max_blocks) {
    if (s.run_ref != nullptr && block == s.run_ref + static_cast<std::size_t>(s.run_len) * kBlockSize) {
      ++s.run_len;  // the next block in memory too
      return {};
    }
    // Consecutive on the device, scattered in memory (pages dirtied out of
    // order): the run is built by copying, as add() does, once its one
    // block so far is copied into the slot's buffer; until two blocks in a
    // row are consecutive in memory too (the start of another buffer of
    // many pages), which begin a run written from memory again.
    const bool copying = s.run_ref == nullptr;
    if ((copying && (prev == nullptr || block != prev + kBlockSize)) || (!copying && s.run_len == 1)) {
      if (s.run_ref != nullptr) {
        Slot& sl = *s.open;
        if (!sl.buf) {
          sl.buf = static_cast<std::uint8_t*>(
              detail::aligned_alloc_bytes(kBlockSize, static_cast<std::size_t>(s.max_blocks) * kBlockSize));
          if (!sl.buf) return make_error(Errc::io, "writer: no memory for a write buffer");
        }
        std::memcpy(sl.buf, s.run_ref, kBlockSize);
        s.run_ref = nullptr;
      }
      return add(addr, block, tag);
    }
  }
  if (s.open) s.submit_open();
  if (!s.open) {
    s.open = s.free_slot();
    s.run_start = addr;
    s.run_len = 0;
    s.run_tag = tag;
    s.run_ref = block;
  }
  ++s.run_len;
  return {};
}

void BatchWriter::wait_buffer(const std::uint8_t* p) {
  State& s = *s_;
  if (s.open && s.run_ref != nullptr && p >= s.run_ref && p < s.run_ref + static_cast<std::size_t>(s.run_len) * kBlockSize)
    s.submit_open();
  for (auto& sl : s.slots) {
    if (!sl.busy) continue;
    const auto* b = static_cast<const std::uint8_t*>(sl.req.buf);
    if (p >= b && p < b + sl.req.length) {
      while (!sl.done) s.dev.poll(true);
      s.reap(sl);
    }
  }
}

Status BatchWriter::add_run(block_t addr, const std::uint8_t* data, std::uint32_t n, std::uint16_t tag) {
  State& s = *s_;
  const std::size_t align = std::max<std::uint32_t>(1, s.dev.info().buffer_alignment);
  if (reinterpret_cast<std::uintptr_t>(data) % align != 0) {
    for (std::uint32_t k = 0; k < n; ++k) F2FSCORE_TRY(add(addr + k, data + static_cast<std::size_t>(k) * kBlockSize, tag));
    return {};
  }
  s.submit_open();
  for (std::uint32_t done = 0; done < n;) {
    const std::uint32_t len = std::min(n - done, s.max_blocks);
    // Rewrites of blocks still in flight wait (see add()).
    for (auto& sl : s.slots) {
      const std::uint64_t lo = sl.req.offset / kBlockSize, hi = (sl.req.offset + sl.req.length) / kBlockSize;
      if (sl.busy && addr + done < hi && addr + done + len > lo) {
        while (!sl.done) s.dev.poll(true);
        s.reap(sl);
      }
    }
    Slot* sl = s.free_slot();
    sl->req = IoRequest{};
    sl->req.op = IoOp::write;
    sl->req.tag = tag;
    sl->req.offset = static_cast<std::uint64_t>(addr + done) * kBlockSize;
    sl->req.length = static_cast<std::uint64_t>(len) * kBlockSize;
    sl->req.buf = const_cast<std::uint8_t*>(data + static_cast<std::size_t>(done) * kBlockSize);
    sl->req.on_complete = slot_done;
    sl->req.user = sl;
    sl->busy = true;
    sl->done = false;
    ++s.submitted;
    s.dev.submit(sl->req);  // sent with the next poll: drain()'s wait, or free_slot()'s
    done += len;
  }
  return {};
}

Status BatchWriter::drain() {
  s_->drain_all();
  Status r = std::move(s_->failure);
  s_->failure = Status{};
  return r;
}

std::uint64_t BatchWriter::requests() const noexcept { return s_->submitted; }

Status BatchWriter::kick() {
  State& s = *s_;
  s.submit_open();
  for (auto& sl : s.slots)
    if (sl.busy && sl.done) s.reap(sl);
  Status r = std::move(s.failure);
  s.failure = Status{};
  return r;
}

bool BatchWriter::idle() const noexcept {
  if (s_->open) return false;
  for (const auto& sl : s_->slots)
    if (sl.busy) return false;
  return true;
}

// ---- The page cache ---------------------------------------------------------------

namespace {
struct Page {
  std::uint8_t* data = nullptr;
  // The owner of `data` when it is a caller's block kept as it is
  // (WriteFlags::lend); empty: `data` is one of the cache's own buffers.
  std::shared_ptr<const void> lent;
  bool dirty = false;
  std::uint8_t type = 0;
  // In the cache's clean list, or in its file's dirty list.
  std::list<std::pair<nid_t, std::uint64_t>>::iterator pos;
};
struct FileCache {
  std::map<std::uint64_t, Page> pages;
  std::uint64_t dirty = 0;
  // The file's dirty pages, in the order they were dirtied: writeback
  // finds them without walking the file's clean pages.
  std::list<std::pair<nid_t, std::uint64_t>> dirty_list;
};
}  // namespace

// Page buffers come from slabs of up to 2 MiB, taken from the allocator
// once and kept until the cache goes; freed pages queue first in, first
// out, so pages freed in order (the least recently used first) are handed
// out again in order. Pages written in sequence then sit in sequence in
// memory, and writeback sends a run of them as one request straight from
// the pages (BatchWriter::add_ref()), with no staging copy. A page's
// buffer that a request still reads is waited for before it changes
// (BatchWriter::wait_buffer(): the stable pages of the kernel's
// writeback).
struct PageCache {
  // Writeback runs of up to 1 MiB, 16 in flight: a lent buffer (1 MiB in
  // f2fscore-fuse) ends a run written from memory, and with 8 of them in
  // flight sequential writes through f2fscore-fuse were 12 % slower
  // (docs/fuse.md).
  explicit PageCache(BlockDevice& dev, std::uint64_t bytes) : io(dev, 256, 16), limit(bytes / kBlockSize) {}
  ~PageCache() {
    (void)io.drain();  // no request may still read a slab
    for (auto* b : slabs) detail::aligned_free(b);
  }
  BatchWriter io;
  std::uint64_t limit;  // pages; 0: no cache (writes go through at once)
  std::unordered_map<nid_t, FileCache> files;
  std::list<std::pair<nid_t, std::uint64_t>> clean;  // least recently used first
  std::uint64_t pages = 0, ndirty = 0;
  std::vector<std::uint8_t*> slabs;
  std::deque<std::uint8_t*> spare;  // free page buffers, reused first in, first out
  // Pages callers hold across calls that may fill the cache (placement and
  // GC; nested: a write's room-making writes back): evict() passes over them.
  std::vector<const Page*> pinned;
  struct Pin {
    Pin(PageCache& c, const Page* p) : cache(c) { cache.pinned.push_back(p); }
    ~Pin() { cache.pinned.pop_back(); }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;
    PageCache& cache;
  };
  // Space for dirty pages (see room_for_dirty()): the data blocks the logs
  // could still take when last computed, the pages dirtied since, and the
  // checkpoint count then (a checkpoint changes the free sections).
  std::uint64_t dirtied_since = 0, budget_cps = ~std::uint64_t{0};
  std::array<std::uint64_t, 3> nd_type{};   // dirty pages per data log
  std::array<std::uint64_t, 3> log_room{};  // blocks left in each data log's segment
  std::uint64_t free_secs = 0;              // sections free beyond the reserve
  bool budget_valid = false;

  std::uint8_t* get_buf() {
    if (spare.empty()) {
      const std::size_t n = static_cast<std::size_t>(std::clamp<std::uint64_t>(limit, 1, kBlocksPerSeg));
      // A whole 2 MiB slab aligned to 2 MiB, where huge pages can back it.
      const std::size_t align = n == kBlocksPerSeg ? n * kBlockSize : kBlockSize;
      auto* slab = static_cast<std::uint8_t*>(detail::aligned_alloc_bytes(align, n * kBlockSize));
      if (!slab) return nullptr;
      if (n == kBlocksPerSeg) detail::advise_huge_pages(slab, n * kBlockSize);
      slabs.push_back(slab);
      for (std::size_t k = 0; k < n; ++k) spare.push_back(slab + k * kBlockSize);
    }
    auto* b = spare.front();
    spare.pop_front();
    io.wait_buffer(b);  // freed while its writeback was in flight
    return b;
  }
  Page* find(nid_t ino, std::uint64_t idx) {
    auto f = files.find(ino);
    if (f == files.end()) return nullptr;
    auto p = f->second.pages.find(idx);
    return p == f->second.pages.end() ? nullptr : &p->second;
  }
  void set_dirty(nid_t ino, std::uint64_t idx, Page& p, bool d) {
    if (p.dirty == d) {
      if (!d) clean.splice(clean.end(), clean, p.pos);  // touched: most recent
      return;
    }
    auto& fc = files[ino];
    auto& from = p.dirty ? fc.dirty_list : clean;
    auto& to = d ? fc.dirty_list : clean;
    to.splice(to.end(), from, p.pos);
    p.dirty = d;
    if (d) {
      ++fc.dirty;
      ++ndirty;
      ++nd_type[p.type % 3];
    } else {
      --fc.dirty;
      --ndirty;
      --nd_type[p.type % 3];
    }
    (void)idx;
  }
  Page* insert(nid_t ino, std::uint64_t idx) {
    std::uint8_t* b = get_buf();
    if (!b) return nullptr;
    auto& fc = files[ino];
    auto [it, fresh] = fc.pages.emplace(idx, Page{});
    if (!fresh) {  // cached meanwhile: that page is the one
      spare.push_front(b);
      return &it->second;
    }
    it->second.data = b;
    it->second.pos = clean.insert(clean.end(), {ino, idx});
    ++pages;
    return &it->second;
  }
  // A page that keeps a lent block as its buffer (not cached before).
  Page* insert_lent(nid_t ino, std::uint64_t idx, std::uint8_t* block, const std::shared_ptr<const void>& owner) {
    auto& fc = files[ino];
    auto [it, fresh] = fc.pages.emplace(idx, Page{});
    if (!fresh) return &it->second;
    it->second.data = block;
    it->second.lent = owner;
    it->second.pos = clean.insert(clean.end(), {ino, idx});
    ++pages;
    return &it->second;
  }
  void erase(nid_t ino, FileCache& fc, std::map<std::uint64_t, Page>::iterator it) {
    Page& p = it->second;
    if (p.dirty) {
      fc.dirty_list.erase(p.pos);
      --fc.dirty;
      --ndirty;
      --nd_type[p.type % 3];
    } else {
      clean.erase(p.pos);
    }
    if (p.lent) {
      io.wait_buffer(p.data);  // the owner may reuse it once the reference goes
    } else {
      spare.push_back(p.data);
    }
    fc.pages.erase(it);
    --pages;
    (void)ino;
  }
  // Least recently used clean pages out until at most `target` pages stay.
  void evict(std::uint64_t target) {
    std::size_t passed = 0;  // pinned pages moved to the back
    while (pages > target && clean.size() > passed) {
      const auto [ino, idx] = clean.front();
      auto f = files.find(ino);
      auto it = f->second.pages.find(idx);
      if (std::find(pinned.begin(), pinned.end(), &it->second) != pinned.end()) {
        clean.splice(clean.end(), clean, clean.begin());
        ++passed;
        continue;
      }
      erase(ino, f->second, it);
      if (f->second.pages.empty()) files.erase(f);
    }
  }
};

void PageCacheDeleter::operator()(PageCache* p) const noexcept { delete p; }
}  // namespace wr

namespace {
wr::PageCache& pc(Writer::Impl& w) {
  if (!w.cache) w.cache.reset(new wr::PageCache(w.dev, w.opts.cache_bytes));
  return *w.cache;
}
}  // namespace

wr::BatchWriter& Writer::Impl::io_batch() { return pc(*this).io; }

// Reserves the block of a page about to be dirtied (f2fs_reserve_block():
// a hole becomes NEW_ADDR, counted as a valid block of the file).
static Status reserve_block(Writer::Impl& w, nid_t ino, std::uint64_t index) {
  nid_t dn = 0;
  std::uint32_t slot = 0;
  auto old = w.map(ino, index, true, &dn, &slot);
  if (!old) return make_error(old.error());
  if (*old != kNullAddr) return {};
  if (w.valid_user_blocks() + 1 > w.cp.user_block_count.get())
    return make_error(Errc::no_space, "writer: every user block is in use");
  F2FSCORE_TRY(w.quota_alloc_block(ino));  // writer/quota.cpp: EDQUOT
  auto dp = w.node(dn);
  if (!dp) return make_error(dp.error());
  if (dn == ino) (*dp)->i.i_addr[w.extra_words(**dp) + slot].set(kNewAddr);
  else (*dp)->dn.addr[slot].set(kNewAddr);
  w.mark_dirty(dn);
  auto ip = w.node(ino);
  if (!ip) return make_error(ip.error());
  (*ip)->i.i_blocks.set((*ip)->i.i_blocks.get() + 1);
  w.mark_dirty(ino);
  ++w.reserved_blocks;
  return {};
}

// What the data logs can still take without touching the sections the
// nodes of the next checkpoint need: the blocks left in each data log's
// segment, and the wholly free sections beyond those.
static void count_room(const Writer::Impl& w, wr::PageCache& c) {
  const std::uint32_t sps = w.vol->geometry().segs_per_sec();
  for (std::uint8_t t = 0; t < 3; ++t) {
    const wr::Curseg& l = w.sm.curseg(t);
    c.log_room[t] = l.usable && l.next_blkoff < wr::kBlocksPerSeg ? wr::kBlocksPerSeg - l.next_blkoff : 0;
  }
  // Wholly free sections holding no log (free_sections(), writer/gc.cpp).
  const std::uint64_t free_secs = w.free_sections();
  // The GC reserve is not the cache's to keep: balance_fs() (writer/gc.cpp)
  // runs foreground GC before each block of a write, counting these dirty
  // pages, so that free sections stay over the reserve; here only the
  // sections the checkpoint's dirty nodes need are set aside.
  std::uint64_t rsvd = (w.nm.dirty_pages() + wr::kBlocksPerSeg - 1) / wr::kBlocksPerSeg / sps;
  // An ro image has no GC to make room, and a checkpoint must leave each of
  // its two logs on a free block: a section stays free for the node log,
  // and the data log never fills its last segment (a full log takes a new
  // segment at once).
  if (w.ro_image) {
    rsvd += 1;
    if (free_secs <= rsvd && c.log_room[0] > 0) --c.log_room[0];
  }
  c.free_secs = free_secs > rsvd ? free_secs - rsvd : 0;
  c.budget_valid = true;
}

// Whether the dirty pages plus one more of log `type` fit: per data log,
// the pages its segment cannot take need whole sections of their own.
static bool dirty_fits(const wr::PageCache& c, std::uint8_t type, std::uint64_t blocks_per_sec) {
  std::uint64_t secs = 0;
  for (std::size_t t = 0; t < 3; ++t) {
    const std::uint64_t n = c.nd_type[t] + (t == type % 3u);
    if (n > c.log_room[t]) secs += (n - c.log_room[t] + blocks_per_sec - 1) / blocks_per_sec;
  }
  return secs <= c.free_secs;
}

// Whether one more dirty page can be placed at writeback (out of place, at
// worst). When the dirty pages would not fit, they are written back first;
// no_space only when the page alone would not fit. Recounted every 256
// pages and after each checkpoint, so the count follows nodes and
// directories too.
static Status room_for_dirty(Writer::Impl& w, wr::PageCache& c, std::uint8_t type) {
  const std::uint64_t bps = w.vol->geometry().blocks_per_sec();
  for (int pass = 0; pass < 2; ++pass) {
    if (!c.budget_valid || c.budget_cps != w.stats.checkpoints || c.dirtied_since >= 256 || !dirty_fits(c, type, bps)) {
      count_room(w, c);
      c.budget_cps = w.stats.checkpoints;
      c.dirtied_since = 0;
    }
    if (dirty_fits(c, type, bps)) {
      ++c.dirtied_since;
      return {};
    }
    if (pass == 0 && c.ndirty > 0) {
      wr::WriteContext ctx;
      ctx.origin = wr::WriteContext::Origin::writeback;
      F2FSCORE_TRY(w.writeback(0, ctx));
      c.budget_valid = false;
    } else {
      break;
    }
  }
  return make_error(Errc::no_space, "writer: no free section left for the data being written");
}

Status Writer::Impl::cache_write(nid_t ino, std::uint64_t index, const std::uint8_t* block, std::uint8_t type,
                                 const std::shared_ptr<const void>* lend) {
  type = log_for(type);  // the room counted is that of the log the page goes to
  auto& c = pc(*this);
  if (c.limit == 0) {
    auto inp = node(ino);
    if (!inp) return make_error(inp.error());
    if (compressed(**inp)) {
      F2FSCORE_TRY(reserve_block(*this, ino, index));
      return write_compressed_block(ino, index, block);
    }
    wr::WriteContext ctx;
    ctx.file_dirty_pages = 1;
    return write_file_block(ino, index, block, type, ctx);
  }
  wr::Page* p = c.find(ino, index);
  if (!p || !p->dirty) {
    // Both may write back and run GC, whose moves fill the cache and evict
    // clean pages: this one stays.
    const wr::PageCache::Pin pin(c, p);
    F2FSCORE_TRY(room_for_dirty(*this, c, type));
    F2FSCORE_TRY(reserve_block(*this, ino, index));
    // A GC move of this very block caches it meanwhile.
    if (!p) p = c.find(ino, index);
  }
  if (!p) {
    // Room first: over the bound, write back when most pages are dirty,
    // then drop the least recently used clean pages (an eighth at a time).
    if (c.pages >= c.limit) {
      if (c.ndirty * 2 > c.limit) {
        wr::WriteContext ctx;
        ctx.origin = wr::WriteContext::Origin::writeback;
        ctx.defer_tail_of = ino;
        F2FSCORE_TRY(writeback(0, ctx));
      }
      c.evict(c.limit - std::max<std::uint64_t>(1, c.limit / 8));
    }
    if (lend && *lend && reinterpret_cast<std::uintptr_t>(block) % kBlockSize == 0) {
      // The caller's block becomes the page (WriteFlags::lend): no copy.
      p = c.insert_lent(ino, index, const_cast<std::uint8_t*>(block), *lend);
      if (p->data == block) {
        if (!p->dirty) p->type = type;
        c.set_dirty(ino, index, *p, true);
        return {};
      }
      c.io.wait_buffer(p->data);  // cached meanwhile (a GC move): copied into that page
    } else {
      p = c.insert(ino, index);
      if (!p) return make_error(Errc::io, "writer: no memory for a cache page");
    }
  } else {
    c.io.wait_buffer(p->data);  // a stable page while its writeback reads it
  }
  std::memcpy(p->data, block, kBlockSize);
  if (!p->dirty) p->type = type;
  c.set_dirty(ino, index, *p, true);
  return {};
}

bool Writer::Impl::cache_read(nid_t ino, std::uint64_t index, std::uint8_t* out) {
  if (!cache) return false;
  wr::Page* p = cache->find(ino, index);
  if (!p) return false;
  std::memcpy(out, p->data, kBlockSize);
  if (!p->dirty) cache->set_dirty(ino, index, *p, false);  // most recently used
  return true;
}

bool Writer::Impl::cache_has(nid_t ino, std::uint64_t index) const {
  return cache && cache->find(ino, index) != nullptr;
}

void Writer::Impl::cache_fill(nid_t ino, std::uint64_t index, const std::uint8_t* block) {
  auto& c = pc(*this);
  if (c.limit == 0) return;
  wr::Page* p = c.find(ino, index);
  if (!p) {
    if (c.pages >= c.limit) c.evict(c.limit - std::max<std::uint64_t>(1, c.limit / 8));
    if (c.pages >= c.limit) return;  // every page dirty: not kept
    p = c.insert(ino, index);
    if (!p) return;
  } else {
    c.io.wait_buffer(p->data);
  }
  std::memcpy(p->data, block, kBlockSize);
  c.set_dirty(ino, index, *p, false);
}

Status Writer::Impl::writeback(nid_t ino, const wr::WriteContext& ctx0) {
  if (!cache) return {};
  auto& c = *cache;
  std::vector<nid_t> inos;
  if (ino) {
    auto f = c.files.find(ino);
    if (f != c.files.end() && f->second.dirty) inos.push_back(ino);
  } else {
    for (const auto& [i, f] : c.files)
      if (f.dirty) inos.push_back(i);
    std::sort(inos.begin(), inos.end());
  }
  Status failure;
  std::vector<std::uint64_t> idxs;
  for (nid_t f : inos) {
    auto fit = c.files.find(f);
    if (fit == c.files.end()) continue;
    wr::WriteContext ctx = ctx0;
    if (!ctx.file_dirty_pages) ctx.file_dirty_pages = fit->second.dirty;
    const std::uint16_t tag = wr::data_write_tag(ctx);
    idxs.clear();
    for (const auto& e : fit->second.dirty_list) idxs.push_back(e.second);
    std::sort(idxs.begin(), idxs.end());
    {
      // A compressed file is written a cluster at a time (writer/compr.cpp).
      auto inp = node(f);
      if (!inp) {
        failure = make_error(inp.error());
        break;
      }
      if (compressed(**inp)) {
        const std::uint32_t cs = cluster_blocks(**inp);
        // The file being filled keeps its last cluster while not all dirty
        // (WriteContext::defer_tail_of).
        std::uint64_t deferred = ~std::uint64_t{0};
        if (f == ctx.defer_tail_of && !idxs.empty()) {
          const std::uint64_t tail = idxs.back() / cs;
          std::uint64_t n = 0;
          for (auto it = idxs.rbegin(); it != idxs.rend() && *it / cs == tail; ++it) ++n;
          if (n < cs) deferred = tail;
        }
        std::uint64_t last = ~std::uint64_t{0};
        for (std::uint64_t i : idxs) {
          if (i / cs == last || i / cs == deferred) continue;
          last = i / cs;
          failure = writeback_cluster(f, last, ctx, tag);
          if (!failure) break;
        }
        if (!failure) break;
        continue;
      }
    }
    for (std::uint64_t i : idxs) {
      wr::Page* p = c.find(f, i);  // looked up again: placement may run GC
      if (!p || !p->dirty) continue;
      // Placement may run GC, whose move of this block writes the page out
      // and leaves it clean; it stays cached (pinned) for the write below.
      Result<block_t> a = [&] {
        const wr::PageCache::Pin pin(c, p);
        return place_file_block(f, i, p->type, ctx);
      }();
      if (!a) {
        failure = make_error(a.error());
        break;
      }
      if (const fscrypt::InodeKey* key = contents_key(f)) {  // writer/fscrypt.cpp: the device gets ciphertext
        std::vector<std::uint8_t> enc(p->data, p->data + kBlockSize);
        failure = key->encrypt_block(i, enc.data());
        if (failure) failure = c.io.add(*a, enc.data(), tag);
      } else {
        failure = c.io.add_ref(*a, p->data, tag);
      }
      if (!failure) break;
      c.set_dirty(f, i, *p, false);
    }
    if (!failure) break;
  }
  // Writeback of a full cache leaves its last requests in flight (the
  // caller goes on filling the cache meanwhile); any other waits for them.
  Status d = ctx0.origin == wr::WriteContext::Origin::writeback ? c.io.kick() : c.io.drain();
  if (!failure) return failure;
  return d;
}

void Writer::Impl::cache_drop(nid_t ino, std::uint64_t from, std::uint64_t to) {
  if (!cache || from >= to) return;
  auto f = cache->files.find(ino);
  if (f == cache->files.end()) return;
  auto& pages = f->second.pages;
  for (auto it = pages.lower_bound(from); it != pages.end() && it->first < to;) {
    auto next = std::next(it);
    cache->erase(ino, f->second, it);
    it = next;
  }
  if (pages.empty()) cache->files.erase(f);
}

bool Writer::Impl::page_dirty(nid_t ino, std::uint64_t index) {
  if (!cache) return false;
  const auto* p = cache->find(ino, index);
  return p && p->dirty;
}

std::uint64_t Writer::Impl::dirty_pages(nid_t ino) const {
  if (!cache) return 0;
  if (ino == 0) return cache->ndirty;  // every file's (has_not_enough_free_secs())
  auto f = cache->files.find(ino);
  return f == cache->files.end() ? 0 : f->second.dirty;
}

// O_DIRECT: the cached pages of the range are stale once the blocks are
// written (a dirty one keeps its NEW_ADDR reservation, which the placement
// then uses), so they are dropped; each block is placed with origin direct
// and the runs are written before the call returns.
Status Writer::Impl::direct_write(nid_t ino, std::uint64_t index, std::span<const std::uint8_t> data, std::uint8_t type) {
  const std::uint64_t n = data.size() / kBlockSize;
  std::vector<std::uint8_t> enc;  // an encrypted file's blocks as the device gets them (writer/fscrypt.cpp)
  if (const fscrypt::InodeKey* key = contents_key(ino)) {
    enc.assign(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n * kBlockSize));
    for (std::uint64_t k = 0; k < n; ++k) F2FSCORE_TRY(key->encrypt_block(index + k, enc.data() + static_cast<std::size_t>(k) * kBlockSize));
    data = enc;
  }
  cache_drop(ino, index, index + n);
  wr::WriteContext ctx;
  ctx.origin = wr::WriteContext::Origin::direct;
  const std::uint16_t tag = wr::data_write_tag(ctx);
  auto& io = io_batch();
  Status failure;
  // Runs of consecutive addresses go out straight from the caller's buffer
  // when it is aligned for the device (waited for below, before return).
  std::uint64_t run_first = 0;
  block_t run_addr = 0;
  std::uint32_t run_len = 0;
  auto flush_run = [&]() -> Status {
    if (run_len == 0) return {};
    auto r = io.add_run(run_addr, data.data() + static_cast<std::size_t>(run_first) * kBlockSize, run_len, tag);
    run_len = 0;
    return r;
  };
  for (std::uint64_t k = 0; k < n; ++k) {
    auto a = place_file_block(ino, index + k, type, ctx);
    if (!a) {
      failure = make_error(a.error());
      break;
    }
    if (run_len && *a == run_addr + run_len) {
      ++run_len;
      continue;
    }
    failure = flush_run();
    if (!failure) break;
    run_first = k;
    run_addr = *a;
    run_len = 1;
  }
  {
    Status fr = flush_run();  // what was placed is written, also after a failure
    if (failure) failure = std::move(fr);
  }
  Status d = io.drain();
  if (!failure) return failure;
  return d;
}

// ---- After a checkpoint -----------------------------------------------------------

Status Writer::Impl::reload_committed() {
  auto v = Volume::open(dev);
  if (!v) return make_error(v.error());
  vol = std::move(*v);
  sb = vol->superblock();
  cp = vol->checkpoint();
  cp_ver_stamp = cp.checkpoint_ver.get();
  if (cp.ckpt_flags.get() & cp_flag::crc_recovery) {
    const auto blocks = vol->checkpoint_blocks();
    const std::uint32_t off = cp.checksum_offset.get();
    if (off + 4 <= kBlockSize) cp_ver_stamp |= static_cast<std::uint64_t>(load_le32(blocks.data(), off)) << 32;
  }
  // The logs as the pack has them (as load()), typed as their log.
  sm.load_cursegs(cp);
  for (std::uint8_t t = 0; t < 6; ++t) {
    const std::uint32_t seg = sm.curseg(t).segno;
    if (seg < sm.main_segs() && log_active(t) && sm.type(seg) != t) sm.set_type(seg, t);
  }
  sm.committed();
  F2FSCORE_TRY(nm.load(*vol, dev, sb.root_ino.get() + 1));
  F2FSCORE_TRY(load_curseg_summaries(false));
  gc_load();  // free sections and mtimes (writer/gc.cpp)
  return {};
}

// ---- Periodic checkpoints and discard -------------------------------------------

// As f2fs_balance_fs_bg(): a changing call finds CP_TIME over
// cp_interval, or the NAT entries changed since the checkpoint past a tenth
// of the NAT (excess_dirty_nats(), dirty_nats_ratio 10) or past half of the
// NAT blocks the node manager keeps, and syncs the file system first. Dirty
// node pages past half the node page cache are written back without a
// checkpoint (the flusher's f2fs_write_node_pages()), or by a checkpoint
// when free sections run low. Only at the start of
// an outermost call (nested calls hold node pointers a checkpoint or an
// eviction would drop). A failed checkpoint or writeback closes the handle,
// as sync() does.
Status Writer::Impl::maybe_periodic_checkpoint() {
  if (call_depth > 1 || unmounted || opts.read_only) return {};
  const bool timed = opts.checkpoint_interval_s != 0 &&
                     interval_ms() - last_checkpoint_time >= static_cast<std::uint64_t>(opts.checkpoint_interval_s) * 1000;
  const bool nats = nm.changed_count() > 0 &&
                    (nm.changed_count() >= std::max<std::uint64_t>(disk::kNatEntryPerBlock, nm.max_nid() / 10) ||
                     nm.dirty_blocks() >= std::max<std::size_t>(1, nm.nat_block_bound() / 2));
  Status r;
  if (nats || (timed && dirty())) {
    // A timed checkpoint with nothing changed is skipped, as the CP_SYNC
    // one of f2fs_balance_fs_bg() (f2fs_write_checkpoint() without
    // SBI_IS_DIRTY).
    r = checkpoint(false);
  } else if (nm.dirty_pages() > 0 && nm.dirty_pages() >= std::max<std::size_t>(1, nm.page_bound() / 2)) {
    // With free sections low (need_ssr()), the blocks a writeback leaves
    // invalid stay unusable until a checkpoint: take the checkpoint.
    r = need_ssr() ? checkpoint(false) : write_back_nodes();
  }
  if (!r) unmounted = true;
  return r;
}

std::vector<std::uint32_t> Writer::Impl::prefree_segments() const { return sm.prefree(); }

// After the checkpoint that made them free: contiguous runs in one request
// each (f2fs_clear_prefree_segments() with the discard option); with
// sections of several segments, only whole free sections (as the kernel in
// LFS mode). Devices that cannot discard are left alone; a failed discard
// is only a lost hint, as in the kernel.
void Writer::Impl::discard_segments(const std::vector<std::uint32_t>& segs) {
  if (!opts.discard || segs.empty()) return;
  std::vector<std::uint32_t> ok;
  const Geometry& g = vol->geometry();
  if (g.segs_per_sec() > 1) {
    for (std::size_t i = 0; i < segs.size();) {
      const std::uint32_t sec = g.sec_of_seg(segs[i]);
      std::size_t j = i;
      while (j < segs.size() && g.sec_of_seg(segs[j]) == sec) ++j;
      if (j - i == g.segs_per_sec())
        for (std::size_t k = i; k < j; ++k) ok.push_back(segs[k]);
      i = j;
    }
  } else {
    ok = segs;
  }
  for (std::size_t i = 0; i < ok.size();) {
    std::size_t j = i + 1;
    while (j < ok.size() && ok[j] == ok[j - 1] + 1) ++j;
    const std::uint64_t start = vol->segment_start(ok[i]) * kBlockSize;
    const std::uint64_t len = static_cast<std::uint64_t>(j - i) * wr::kBlocksPerSeg * kBlockSize;
    if (discard(dev, start, len)) ++stats.discards;
    i = j;
  }
}

}  // namespace f2fscore
