// The direct io_uring backend (Backend::liburing): reads and writes as SQEs
// on a ring of its own through liburing, no Asio in between. Each request
// in the kernel holds one of queue_depth slots (the request and its retry
// count); the SQE's user_data is the slot's index, so a completion finds
// its request without a lookup or an allocation.
//
// submit() only prepares the SQE; what is prepared goes to the kernel at
// the next poll(), in the same io_uring_enter as its wait (as
// io_uring_submit_and_wait() does), so that the requests submitted between
// two polls, and those resubmitted from the callbacks of one poll, share
// one system call; a request that continues the one prepared before it
// sends those first (send_batch(): the kernel would merge them). poll() walks the CQ ring and gives each entry back to
// the ring before its callback runs, so that a callback that submits or
// polls again sees a consistent ring.
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <liburing.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "io/uring/request_queues.hpp"
#include "io/uring/uring_backend.hpp"

namespace f2fscore::detail {
namespace {

struct Slot {
  IoRequest* req = nullptr;
  std::uint32_t retries = 0;
  std::uint32_t next_free = 0;  // index + 1 of the next free slot; 0 ends the list
};

class LiburingDevice final : public BlockDevice {
 public:
  LiburingDevice(int fd, int direct_fd, DeviceInfo info, const BackendOptions& o, const io_uring& ring)
      : fd_(fd),
        direct_fd_(direct_fd),
        info_(std::move(info)),
        lbs_mask_(info_.logical_block_size - 1u),
        align_mask_(info_.buffer_alignment > 1 ? info_.buffer_alignment - 1u : 0u),
        rw_ops_max_(static_cast<unsigned>(info_.read_only ? IoOp::read : IoOp::write)),
        hooks_(o.hooks),
        refuse_zeroing_(o.faults.refuse_zeroing),
        hooked_(o.hooks.max_chunk != 0 || o.hooks.interrupt_every != 0),
        ring_(ring),
        slots_(o.queue_depth) {
    // The masks stand for the modulo checks only for powers of two;
    // otherwise every request takes check_request().
    if ((info_.logical_block_size & lbs_mask_) != 0 || (info_.buffer_alignment & align_mask_) != 0)
      rw_ops_max_ = 0, lbs_mask_ = ~std::uint64_t{0};
    // With a fault hook set, every transfer takes issue(), which applies it.
    if (hooked_) lbs_mask_ = ~std::uint64_t{0};
    fast_max_ = info_.size_bytes < kMaxChunk ? info_.size_bytes : kMaxChunk;
    free_.init(slots_, o.queue_depth);
  }

  ~LiburingDevice() override {
    drain(*this);
    ::io_uring_queue_exit(&ring_);
    ::close(fd_);
    if (direct_fd_ >= 0) ::close(direct_fd_);
  }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    req.status = Errc::ok;
    ++in_flight_;
    if (fast_ok(req) && !free_.empty() && req.offset != batch_end_) [[likely]] {
      // A valid read or write, in one SQE, with a slot free, that does not
      // continue the request prepared before it (send_batch()): prepared here.
      batch_end_ = req.offset + req.length;
      io_uring_sqe* sqe = get_sqe();
      if (sqe != nullptr) [[likely]] {
        const std::uint32_t i = free_.take(slots_);
        Slot& s = slots_[i];
        s.req = &req;
        s.retries = 0;
        ++in_kernel_;
        static_assert(IORING_OP_WRITE == IORING_OP_READ + 1 && static_cast<int>(IoOp::write) == 1);
        const int fd = req.op == IoOp::write ? write_fd(fd_, direct_fd_, info_, req.offset, req.length, req.buf) : fd_;
        ::io_uring_prep_rw(IORING_OP_READ + static_cast<int>(req.op), sqe, fd, req.buf,
                           static_cast<unsigned>(req.length), req.offset);
        // FUA: durable on completion, as pwritev2(RWF_DSYNC) makes it.
        if ((req.flags & io_flag::fua) != 0 && req.op == IoOp::write) sqe->rw_flags = RWF_DSYNC;
        ::io_uring_sqe_set_data64(sqe, i);
        return;
      }
    }
    submit_slow(req);
  }

  std::size_t poll(bool wait) noexcept override {
    const std::uint64_t before = completed_;
    if (!ready_.empty()) [[unlikely]] deliver_ready(ready_, in_flight_, completed_);
    const bool block = wait && completed_ == before;
    while (in_kernel_ != 0) {
      // One system call at most: what is prepared, with the wait when
      // blocking. Without either, io_uring_submit() enters the kernel only
      // when it flags completion work pending (TASKRUN_FLAG) or an
      // overflowed CQ.
      const int r = block ? ::io_uring_submit_and_wait(&ring_, 1) : ::io_uring_submit(&ring_);
      if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY && r != -ETIME) [[unlikely]] {
        fail_all(-r);
        break;
      }
      reap();
      // Woken without a callback run (only retries, or a signal): wait again.
      if (!block || completed_ != before) break;
    }
    if (!ready_.empty()) [[unlikely]] deliver_ready(ready_, in_flight_, completed_);
    return static_cast<std::size_t>(completed_ - before);
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }
  int host_descriptor() const noexcept override { return fd_; }

 private:
  static constexpr std::uint32_t kMaxRetries = 64;
  // The most one SQE asks for; the kernel moves at most MAX_RW_COUNT
  // (2 GiB less a page) per read or write anyway, and the rest follows.
  static constexpr std::uint64_t kMaxChunk = std::uint64_t{1} << 30;

  // io_uring_get_sqe() for this ring: no SQPOLL (the kernel consumes SQEs
  // only inside io_uring_enter, on this thread) and 64-byte SQEs (no
  // SQE128), as make_liburing_device() sets it up.
  [[gnu::always_inline]] io_uring_sqe* get_sqe() noexcept {
    io_uring_sq& sq = ring_.sq;
    const unsigned tail = sq.sqe_tail;
    if (tail - *sq.khead >= sq.ring_entries) [[unlikely]] return nullptr;
    sq.sqe_tail = tail + 1;
    return &sq.sqes[tail & sq.ring_mask];
  }

  // A request that continues the one prepared before it (a sequential
  // stream) must not reach the kernel in the same io_uring_enter: the
  // kernel puts a submission of more than two SQEs under one block plug
  // (io_submit_state_start() in io_uring/io_uring.c), where contiguous
  // requests are merged (blk_attempt_plug_merge() in block/blk-merge.c),
  // so that 8 requests of 128 KiB in flight become one of 1 MiB and the
  // device sees depth 1. What is prepared goes first, on its own, as fio
  // sends each request; random requests keep their batch.
  [[gnu::noinline]] void send_batch() noexcept {
    if (ring_.sq.sqe_tail != ring_.sq.sqe_head) (void)::io_uring_submit(&ring_);
  }

  // Whatever submit() does not prepare at once: other ops (run here, as
  // sync_op()), invalid requests, requests waiting for a slot, transfers
  // in several SQEs, a request continuing the one prepared before it, and
  // a broken ring.
  [[gnu::noinline]] void submit_slow(IoRequest& req) noexcept {
    if ((req.status = check_request(info_, req)) == Errc::ok &&
        (req.op == IoOp::read || req.op == IoOp::write)) {
      if (broken_ != 0) {
        req.status = Errc::io;
        req.sys_errno = broken_;
        ready_.push(req);
      } else if (!free_.empty()) {
        start(free_.take(slots_), req);
      } else {
        wait_.push(req);  // all slots busy: FIFO, no allocation
      }
      return;
    }
    if (req.status == Errc::ok) sync_op(fd_, info_, req, refuse_zeroing_);
    ready_.push(req);
  }

  // check_request() for a valid read or write that one SQE carries, in a
  // few instructions.
  bool fast_ok(const IoRequest& req) const noexcept {
    const auto op = static_cast<unsigned>(req.op);
    return op <= rw_ops_max_ &&
           (((req.offset | req.length) & lbs_mask_) | (reinterpret_cast<std::uintptr_t>(req.buf) & align_mask_)) == 0 &&
           req.buf != nullptr && req.length <= fast_max_ && req.offset <= info_.size_bytes - req.length;
  }

  [[gnu::always_inline]] void start(std::uint32_t i, IoRequest& req) noexcept {
    slots_[i].req = &req;
    slots_[i].retries = 0;
    ++in_kernel_;
    issue(i);
  }

  // Prepares the SQE for the rest of slot i's transfer.
  [[gnu::always_inline]] void issue(std::uint32_t i) noexcept {
    IoRequest& r = *slots_[i].req;
    std::uint64_t len = r.length - r.transferred;
    if (hooks_.max_chunk != 0 && len > hooks_.max_chunk) len = hooks_.max_chunk;
    if (len > kMaxChunk) [[unlikely]] len = kMaxChunk;  // the SQE's length is 32 bits
    auto* p = static_cast<unsigned char*>(r.buf) + r.transferred;
    const std::uint64_t off = r.offset + r.transferred;
    if (off == batch_end_) [[unlikely]] send_batch();  // as in submit()
    batch_end_ = off + len;
    io_uring_sqe* sqe = get_sqe();
    if (sqe == nullptr) [[unlikely]] {
      // The SQ ring holds at least queue_depth entries and each slot has at
      // most one prepared, so it is full only of entries not yet sent.
      (void)::io_uring_submit(&ring_);
      sqe = get_sqe();
      if (sqe == nullptr) return no_sqe(i);
    }
    if (r.op == IoOp::read) {
      ::io_uring_prep_read(sqe, fd_, p, static_cast<unsigned>(len), off);
    } else {
      ::io_uring_prep_write(sqe, write_fd(fd_, direct_fd_, info_, off, len, p), p, static_cast<unsigned>(len), off);
      // FUA: durable on completion, as pwritev2(RWF_DSYNC) makes it.
      if ((r.flags & io_flag::fua) != 0) sqe->rw_flags = RWF_DSYNC;
    }
    ::io_uring_sqe_set_data64(sqe, i);
  }

  // No SQE even after sending the prepared ones (not expected): the
  // request completes with EBUSY at the next poll(), not inside submit().
  [[gnu::cold, gnu::noinline]] void no_sqe(std::uint32_t i) noexcept {
    IoRequest& r = *slots_[i].req;
    r.status = Errc::io;
    r.sys_errno = EBUSY;
    --in_kernel_;
    slots_[i].req = nullptr;
    free_.put(slots_, i);
    ready_.push(r);
    wait_.fail_into(ready_, Errc::io, EBUSY);  // and so do the waiting ones, which would find none either
  }

  // Handles every completion in the CQ ring. Each entry is read and given
  // back to the ring before its callback runs, so that a callback that
  // submits or polls again finds the ring consistent.
  void reap() noexcept {
    io_uring_cq& cq = ring_.cq;
    for (;;) {
      const unsigned head = *cq.khead;
      if (head == io_uring_smp_load_acquire(cq.ktail)) break;
      const io_uring_cqe& c = cq.cqes[head & cq.ring_mask];  // 16-byte CQEs: no CQE32 here
      const auto i = static_cast<std::uint32_t>(c.user_data);
      const std::int32_t res = c.res;
      io_uring_smp_store_release(cq.khead, head + 1);
      on_cqe(i, res);
    }
  }

  [[gnu::always_inline]] void on_cqe(std::uint32_t i, std::int32_t res) noexcept {
    IoRequest& r = *slots_[i].req;
    if (static_cast<std::uint64_t>(res) == r.length - r.transferred && !hooked_) [[likely]] {
      r.transferred = r.length;  // all of the rest moved: the common case
      return finish(i);
    }
    on_cqe_slow(i, res);
  }

  // Errors, partial transfers and the injected faults.
  [[gnu::noinline]] void on_cqe_slow(std::uint32_t i, std::int32_t res) noexcept {
    Slot& s = slots_[i];
    IoRequest& r = *s.req;
    if (res < 0) {
      const int e = -res;
      if ((e == EINTR || e == EAGAIN) && ++s.retries < kMaxRetries) return issue(i);
      return complete_error(i, e);
    }
    if (hooks_.interrupt_every != 0 && ++hook_count_ % hooks_.interrupt_every == 0 &&
        ++s.retries < kMaxRetries) {
      return issue(i);  // injected -EINTR: the transfer is redone
    }
    const auto n = static_cast<std::uint64_t>(res);
    r.transferred += n;
    if (r.transferred < r.length) {
      // A partial transfer: go on with the rest, unless nothing moved (a
      // read at or past the end of the file) or the rest would break the
      // direct-I/O alignment.
      if (n == 0 || (info_.direct && r.transferred % info_.logical_block_size != 0)) {
        r.status = Errc::short_io;
        return finish(i);
      }
      return issue(i);
    }
    finish(i);
  }

  void complete_error(std::uint32_t i, int e) noexcept {
    IoRequest& r = *slots_[i].req;
    r.sys_errno = e;
    r.status = e == EROFS || e == EBADF ? Errc::read_only
               : e == ENOSPC            ? Errc::no_space
               : e == EINVAL && info_.direct ? Errc::unaligned
                                             : Errc::io;
    finish(i);
  }

  // io_uring_enter failed for good (the ring is unusable): every request
  // holding a slot completes with the error, as does every later one. Cold.
  [[gnu::cold, gnu::noinline]] void fail_all(int e) noexcept {
    broken_ = e;
    wait_.fail_into(ready_, Errc::io, e);  // the waiting ones complete at the next poll()
    for (auto& s : slots_) {
      if (s.req == nullptr) continue;
      s.req->status = Errc::io;
      s.req->sys_errno = e;
      ready_.push(*s.req);
      s.req = nullptr;
      --in_kernel_;
    }
    free_.first = 0;  // nothing goes to the ring any more
  }

  [[gnu::always_inline]] void release(std::uint32_t i) noexcept {
    if (!wait_.empty()) [[unlikely]] {  // hand the slot to the oldest waiting request
      start(i, *wait_.pop());
      return;
    }
    slots_[i].req = nullptr;
    free_.put(slots_, i);
  }

  [[gnu::always_inline]] void finish(std::uint32_t i) noexcept {
    IoRequest& r = *slots_[i].req;
    --in_kernel_;
    release(i);
    --in_flight_;
    ++completed_;
    if (r.on_complete != nullptr) r.on_complete(r);
  }

  int fd_;
  int direct_fd_;  // OpenOptions::direct_large_writes; -1: none
  DeviceInfo info_;
  std::uint64_t lbs_mask_;     // logical block size - 1
  std::uintptr_t align_mask_;  // buffer alignment - 1
  unsigned rw_ops_max_;        // IoOp::read, or IoOp::write when writable
  std::uint64_t fast_max_ = 0;  // the longest transfer submit() prepares at once
  UringHooks hooks_;
  bool refuse_zeroing_;  // OpenFaults::refuse_zeroing
  bool hooked_;          // a UringHooks fault is set: every completion takes the slow path
  std::uint64_t hook_count_ = 0;
  io_uring ring_;
  std::vector<Slot> slots_;
  SlotFreeList<Slot> free_;
  RequestFifo wait_;   // valid requests waiting for a slot
  RequestFifo ready_;  // completed at submission (errors, sync ops)
  std::size_t in_flight_ = 0;  // submitted, callback not yet run
  std::size_t in_kernel_ = 0;  // holding a slot
  std::uint64_t completed_ = 0;
  int broken_ = 0;  // the errno of a failed io_uring_enter that made the ring unusable
  // The byte after the last SQE prepared (send_batch()); no request starts
  // at ~0.
  std::uint64_t batch_end_ = ~std::uint64_t{0};
};

}  // namespace

Result<std::unique_ptr<BlockDevice>> make_liburing_device(int fd, int direct_fd, DeviceInfo info,
                                                          const BackendOptions& opts) {
  // The ring: twice the queue depth (a retry never finds it full), at least
  // 64 entries; COOP_TASKRUN (completions do not interrupt the task with
  // an IPI) with TASKRUN_FLAG (the kernel flags pending completion work in
  // the SQ ring, which poll() without a wait then collects), both since
  // Linux 5.19; an older kernel gets the ring without them.
  unsigned entries = 64;
  while (entries < 2 * opts.queue_depth) entries *= 2;
  io_uring ring{};
  io_uring_params p{};
  p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  int r = ::io_uring_queue_init_params(entries, &ring, &p);
  if (r == -EINVAL) {
    p = io_uring_params{};
    r = ::io_uring_queue_init_params(entries, &ring, &p);
  }
  if (r < 0)
    return make_error(Errc::unsupported, std::string("io_uring refused: io_uring_setup: ") + std::strerror(-r),
                      Error::kNoOffset, -r);
  try {
    return std::unique_ptr<BlockDevice>(new LiburingDevice(fd, direct_fd, std::move(info), opts, ring));
  } catch (const std::bad_alloc&) {
    ::io_uring_queue_exit(&ring);
    return make_error(Errc::no_space, "out of memory for the io_uring backend");
  }
}

}  // namespace f2fscore::detail
