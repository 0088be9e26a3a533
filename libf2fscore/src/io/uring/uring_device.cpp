// The io_uring backend: asynchronous reads and writes through Boost.Asio's
// random_access_file on io_uring. Asio and its configuration stay in this
// file: io_uring is Asio's scheduler task here (no epoll, no eventfd: the
// completions are reaped from the ring by the thread that polls), and the
// macros below must not leak into any other translation unit.
#define BOOST_ASIO_HAS_IO_URING 1
#define BOOST_ASIO_DISABLE_EPOLL 1

#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include <liburing.h>
#include <unistd.h>

#include <cerrno>

// Asio creates its ring with io_uring_queue_init(16384, ring, 0): no setup
// flags, and a ring sized for a server. Its call is redirected here (a
// macro local to this file, set around the Asio includes) so that the ring
// is sized for the device's queue depth and gets COOP_TASKRUN (completions
// do not interrupt the task with an IPI; fio sets it too) with TASKRUN_FLAG
// (the kernel flags pending completion work in the SQ ring, so that
// liburing's non-blocking peek, Asio's poll, enters the kernel to collect
// it). A kernel without them (before 5.19) gets the ring without them.
// SINGLE_ISSUER and DEFER_TASKRUN, which fio also sets, are left out: they
// would tie a device to the thread that opened it, and measured no faster.
namespace f2fscore::detail {
thread_local unsigned t_ring_entries = 0;
thread_local unsigned t_ring_flags = 0;
}  // namespace f2fscore::detail

static int f2fscore_io_uring_queue_init(unsigned entries, io_uring* ring, unsigned flags) {
  using f2fscore::detail::t_ring_entries;
  using f2fscore::detail::t_ring_flags;
  if (t_ring_entries != 0) entries = t_ring_entries;
  io_uring_params p{};
  p.flags = flags | t_ring_flags;
  int r = ::io_uring_queue_init_params(entries, ring, &p);
  if (r == -EINVAL && t_ring_flags != 0) {
    p = io_uring_params{};
    p.flags = flags;
    r = ::io_uring_queue_init_params(entries, ring, &p);
  }
  return r;
}

#include <boost/version.hpp>
// poll() and issue() below reach private members of Asio's io_uring_service
// and scheduler_operation as Boost 1.81 has them (the names are checked by
// the compiler; what they mean is not): look at them again before moving on.
static_assert(BOOST_VERSION / 100 == 1081, "io/uring/uring_device.cpp is written against Boost 1.81's Asio internals");

#define io_uring_queue_init f2fscore_io_uring_queue_init
#include <boost/asio/basic_random_access_file.hpp>
#include <boost/asio/io_context.hpp>
#undef io_uring_queue_init
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "io/uring/request_queues.hpp"
#include "io/uring/uring_backend.hpp"

#if !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#error "io_uring must be Asio's default reactor here (BOOST_ASIO_DISABLE_EPOLL)"
#endif

namespace f2fscore::detail {
namespace {

namespace asio = boost::asio;
using Executor = asio::io_context::executor_type;
using File = asio::basic_random_access_file<Executor>;
using Service = asio::detail::io_uring_service;
using Scheduler = asio::detail::scheduler;
using Operation = asio::detail::scheduler_operation;
using CallStack = asio::detail::call_stack<asio::detail::thread_context, asio::detail::thread_info_base>;

// Asio submits the SQEs it prepares later, from an operation it posts to
// its scheduler. This device sends them itself instead (Asio's flag
// "submit operation pending" is held for good, so it never posts one), as
// the direct backend does: what is submitted between two poll() calls,
// from a completion callback or not, goes to the kernel with the next
// poll()'s wait, in one io_uring_enter (io_uring_submit_and_wait), except
// that a request continuing the one prepared before it sends those first
// (issue_one(): the kernel would merge them). At
// depth 32 that is one system call per wake-up, not one per request (0.03
// io_uring_enter per request against 1.0 when each resubmission from a
// callback was sent at once, as fio does by default; strace -c,
// docs/benchmarks.md). And poll() runs the service's task and the
// operations it returns itself, as io_context::run_one() would, without
// the scheduler pass (about 300 instructions) per wake-up. The members
// this needs are private to Asio and reached with the explicit-
// instantiation access rule; the bookkeeping is Asio's own.
template <typename Tag, typename Tag::type M>
struct Reach {
  friend typename Tag::type get(Tag) { return M; }
};
struct SubmitSqes {
  using type = void (Service::*)();
  friend type get(SubmitSqes);
};
template struct Reach<SubmitSqes, &Service::submit_sqes>;
struct SubmitOpPending {
  using type = bool Service::*;
  friend type get(SubmitOpPending);
};
template struct Reach<SubmitOpPending, &Service::pending_submit_sqes_op_>;
struct Ring {
  using type = ::io_uring Service::*;
  friend type get(Ring);
};
template struct Reach<Ring, &Service::ring_>;
struct PendingSqes {
  using type = int Service::*;
  friend type get(PendingSqes);
};
template struct Reach<PendingSqes, &Service::pending_sqes_>;
struct ServiceWork {
  using type = asio::detail::atomic_count Service::*;
  friend type get(ServiceWork);
};
template struct Reach<ServiceWork, &Service::outstanding_work_>;
struct TaskResult {
  using type = unsigned int asio::detail::scheduler_operation::*;
  friend type get(TaskResult);
};
template struct Reach<TaskResult, &asio::detail::scheduler_operation::task_result_>;

struct Slot;
class UringDevice;

// Asio allocates each operation through the handler's associated
// allocator: ours hands out the slot's own storage, so nothing is
// allocated per request however deep the queue.
template <typename T>
struct SlotAllocator {
  using value_type = T;
  Slot* slot;
  explicit SlotAllocator(Slot* s) noexcept : slot(s) {}
  template <typename U>
  SlotAllocator(const SlotAllocator<U>& o) noexcept : slot(o.slot) {}  // NOLINT: rebinding
  T* allocate(std::size_t n);
  void deallocate(T* p, std::size_t n) noexcept;
  template <typename U>
  bool operator==(const SlotAllocator<U>& o) const noexcept { return slot == o.slot; }
  template <typename U>
  bool operator!=(const SlotAllocator<U>& o) const noexcept { return slot != o.slot; }
};

struct Handler {
  Slot* slot;
  using allocator_type = SlotAllocator<void>;
  allocator_type get_allocator() const noexcept { return allocator_type(slot); }
  void operator()(const boost::system::error_code& ec, std::size_t n) const noexcept;
};

using ReadOp = asio::detail::io_uring_descriptor_read_at_op<asio::mutable_buffer, Handler, Executor>;
using WriteOp = asio::detail::io_uring_descriptor_write_at_op<asio::const_buffer, Handler, Executor>;
constexpr std::size_t kOpSize = sizeof(ReadOp) > sizeof(WriteOp) ? sizeof(ReadOp) : sizeof(WriteOp);

// One request in the kernel: its Asio I/O object (sharing the device's
// descriptor) and the memory for its operation.
struct Slot {
  alignas(std::max_align_t) unsigned char mem[kOpSize];
  bool mem_used = false;
  std::uint32_t retries = 0;
  IoRequest* req = nullptr;
  UringDevice* dev = nullptr;
  std::uint32_t index = 0;      // in the device's slots
  std::uint32_t next_free = 0;  // SlotFreeList's link
  File file;
  File direct_file;  // OpenOptions::direct_large_writes: the O_DIRECT descriptor, if any
  explicit Slot(asio::io_context& ctx) : file(ctx.get_executor()), direct_file(ctx.get_executor()) {}
};

template <typename T>
T* SlotAllocator<T>::allocate(std::size_t n) {
  if (!slot->mem_used && sizeof(T) * n <= sizeof slot->mem) {
    slot->mem_used = true;
    return reinterpret_cast<T*>(slot->mem);
  }
  return static_cast<T*>(::operator new(sizeof(T) * n));  // never expected; kept correct
}

template <typename T>
void SlotAllocator<T>::deallocate(T* p, std::size_t) noexcept {
  if (reinterpret_cast<unsigned char*>(p) == slot->mem) slot->mem_used = false;
  else ::operator delete(p);
}

class UringDevice final : public BlockDevice {
 public:
  UringDevice(int fd, int direct_fd, DeviceInfo info, const BackendOptions& o)
      : fd_(fd),
        direct_fd_(direct_fd),
        info_(std::move(info)),
        lbs_mask_(info_.logical_block_size - 1u),
        align_mask_(info_.buffer_alignment > 1 ? info_.buffer_alignment - 1u : 0u),
        rw_ops_max_(static_cast<unsigned>(info_.read_only ? IoOp::read : IoOp::write)),
        hooks_(o.hooks),
        refuse_zeroing_(o.faults.refuse_zeroing),
        ctx_(BOOST_ASIO_CONCURRENCY_HINT_UNSAFE) {
    // The masks stand for the modulo checks only for powers of two;
    // otherwise every request takes check_request().
    if ((info_.logical_block_size & lbs_mask_) != 0 || (info_.buffer_alignment & align_mask_) != 0)
      rw_ops_max_ = 0, lbs_mask_ = ~std::uint64_t{0};
    slots_.reserve(o.queue_depth);
    // The ring: twice the queue depth (a retry or a cancel never finds it
    // full), at least 64 entries; the flags above.
    unsigned entries = 64;
    while (entries < 2 * o.queue_depth) entries *= 2;
    t_ring_entries = entries;
    t_ring_flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    struct Reset {
      ~Reset() { t_ring_entries = 0, t_ring_flags = 0; }
    } reset;
    try {
      for (std::uint32_t i = 0; i < o.queue_depth; ++i) {
        // The first one creates the io_uring service: this throws if the
        // kernel refuses io_uring.
        auto s = std::make_unique<Slot>(ctx_);
        s->dev = this;
        s->index = i;
        s->file.assign(fd_);
        if (direct_fd_ >= 0) s->direct_file.assign(direct_fd_);
        slots_.push_back(std::move(s));
      }
      free_.init(slots_, o.queue_depth);
    } catch (...) {
      release_files();  // the caller still owns the descriptor
      throw;
    }
    service_ = &asio::use_service<Service>(ctx_);
    sched_ = &asio::use_service<Scheduler>(ctx_);
    // This device sends the SQEs Asio prepares itself (poll(), issue()):
    // with the flag held, Asio never posts its own submit operation.
    service_->*get(SubmitOpPending{}) = true;
    thread_.private_outstanding_work = 0;
  }

  ~UringDevice() override {
    drain(*this);
    release_files();
    ::close(fd_);
    if (direct_fd_ >= 0) ::close(direct_fd_);
  }

  const DeviceInfo& info() const noexcept override { return info_; }

  void submit(IoRequest& req) noexcept override {
    req.transferred = 0;
    req.sys_errno = 0;
    ++in_flight_;
    if (fast_ok(req) || ((req.status = check_request(info_, req)) == Errc::ok &&
                         (req.op == IoOp::read || req.op == IoOp::write))) [[likely]] {
      req.status = Errc::ok;
      if (!free_.empty()) [[likely]] {
        start(slots_[free_.take(slots_)].get(), req);
      } else {
        wait_.push(req);  // all slots busy: FIFO, no allocation
      }
      return;
    }
    if (req.status == Errc::ok) sync_op(fd_, info_, req, refuse_zeroing_);
    ready_.push(req);
  }

  std::size_t poll(bool wait) noexcept override {
    const std::uint64_t before = completed_;
    deliver_ready(ready_, in_flight_, completed_);
    if (in_kernel_ == 0) return static_cast<std::size_t>(completed_ - before);
    try {
      // The handlers run with the device's own scheduler thread record on
      // Asio's call stack, as inside run_one(): what they post lands in it.
      CallStack::context on_stack(sched_, thread_);
      do {
        reap(wait && completed_ == before);
      } while (wait && completed_ == before && in_kernel_ > 0);
    } catch (...) {
      // Asio's scheduler only throws what handlers throw; ours do not.
    }
    deliver_ready(ready_, in_flight_, completed_);
    return static_cast<std::size_t>(completed_ - before);
  }

  std::size_t in_flight() const noexcept override { return in_flight_; }
  std::uint64_t next_data(std::uint64_t offset, std::uint64_t end) noexcept override {
    return detail::seek_extent(fd_, info_, offset, end, false);
  }
  std::uint64_t next_hole(std::uint64_t offset, std::uint64_t end) noexcept override {
    return detail::seek_extent(fd_, info_, offset, end, true);
  }
  int host_descriptor() const noexcept override { return fd_; }

  // ---- Called from Handler ----
  void on_complete(Slot* s, const boost::system::error_code& ec, std::size_t n) noexcept {
    IoRequest& r = *s->req;
    if (ec) [[unlikely]] {
      if (ec == asio::error::eof) {  // a read at or past the end of the file
        r.status = Errc::short_io;
        return finish(s);
      }
      const int e = ec.value();
      if ((e == EINTR || e == EAGAIN) && ec.category() == asio::error::get_system_category() &&
          ++s->retries < kMaxRetries) {
        return issue(s);
      }
      r.sys_errno = e;
      r.status = e == EROFS || e == EBADF ? Errc::read_only
                 : e == ENOSPC            ? Errc::no_space
                 : e == EINVAL && info_.direct ? Errc::unaligned
                                               : Errc::io;
      return finish(s);
    }
    if (hooks_.interrupt_every != 0 && ++hook_count_ % hooks_.interrupt_every == 0 &&
        ++s->retries < kMaxRetries) {
      return issue(s);  // injected -EINTR: the transfer is redone
    }
    r.transferred += n;
    if (r.transferred < r.length) {
      // A partial transfer: go on with the rest, unless nothing moved or
      // the rest would break the direct-I/O alignment.
      if (n == 0 || (info_.direct && r.transferred % info_.logical_block_size != 0)) {
        r.status = Errc::short_io;
        return finish(s);
      }
      return issue(s);
    }
    if (r.op == IoOp::write && (r.flags & io_flag::fua) != 0 && ::fdatasync(fd_) != 0) {
      r.sys_errno = errno;
      r.status = Errc::io;
    }
    finish(s);
  }

 private:
  static constexpr std::uint32_t kMaxRetries = 64;

  // check_request() for a valid read or write, in a few instructions.
  bool fast_ok(const IoRequest& req) const noexcept {
    const auto op = static_cast<unsigned>(req.op);
    return op <= rw_ops_max_ && ((req.offset | req.length) & lbs_mask_) == 0 &&
           (reinterpret_cast<std::uintptr_t>(req.buf) & align_mask_) == 0 && req.buf != nullptr &&
           req.length <= info_.size_bytes && req.offset <= info_.size_bytes - req.length;
  }

  void release_files() noexcept {
    for (auto& s : slots_) {
      boost::system::error_code ec;
      if (s->file.is_open()) (void)s->file.release(ec);  // the descriptors are ours, closed once
      if (s->direct_file.is_open()) (void)s->direct_file.release(ec);
    }
    slots_.clear();
  }

  void start(Slot* s, IoRequest& req) noexcept {
    s->req = &req;
    s->retries = 0;
    ++in_kernel_;
    issue(s);
  }

  // The SQE is prepared now and sent with the next poll()'s wait.
  void issue(Slot* s) noexcept { issue_one(s); }

  // One pass over the ring: send what Asio has prepared, and wait for a
  // completion in the same io_uring_enter when `block`; reap what has
  // completed (Asio's io_uring_service::run, the scheduler's task) and run
  // the operations it returns, as the scheduler's run_one() would, without
  // a scheduler pass per wake-up.
  [[gnu::always_inline]] void reap(bool block) {
    Service& svc = *service_;
    int& pending = svc.*get(PendingSqes{});
    if (pending != 0) {
      if (block) {
        // Asio's submit_sqes() with a wait: its bookkeeping, one system call.
        const int r = ::io_uring_submit_and_wait(&(svc.*get(Ring{})), 1);
        if (r > 0) {
          pending -= r;
          asio::detail::increment(svc.*get(ServiceWork{}), r);
        }
      } else {
        (svc.*get(SubmitSqes{}))();
      }
    }
    if (svc.*get(ServiceWork{}) == 0) {
      // Nothing in the kernel, yet requests hold slots: Asio has posted
      // their operations to its scheduler instead (it does when it cannot
      // get an SQE): let the scheduler run them.
      if (ctx_.stopped()) ctx_.restart();
      ctx_.poll();
      return;
    }
    asio::detail::op_queue<Operation> ops;
    svc.run(block ? -1 : 0, ops);
    auto& posted = thread_.private_op_queue;
    for (;;) {
      Operation* o = ops.front();
      if (o != nullptr) {
        ops.pop();
      } else if ((o = posted.front()) != nullptr) {
        posted.pop();
      } else {
        break;
      }
      o->complete(sched_, boost::system::error_code(), o->*get(TaskResult{}));
      // The scheduler's accounting after a handler (work_cleanup in
      // scheduler.ipp): the operation's unit of work is done, what the
      // handler started is added.
      const long started = thread_.private_outstanding_work;
      thread_.private_outstanding_work = 0;
      if (started < 1) sched_->work_finished();
      for (long k = 1; k < started; ++k) sched_->work_started();
    }
  }

  [[gnu::always_inline]] void issue_one(Slot* s) noexcept {
    IoRequest& r = *s->req;
    std::uint64_t len = r.length - r.transferred;
    if (hooks_.max_chunk != 0 && len > hooks_.max_chunk) len = hooks_.max_chunk;
    auto* p = static_cast<unsigned char*>(r.buf) + r.transferred;
    const std::uint64_t off = r.offset + r.transferred;
    // A request that continues the one prepared before it (a sequential
    // stream) must not reach the kernel in the same io_uring_enter: the
    // kernel puts a submission of more than two SQEs under one block plug
    // (io_submit_state_start() in io_uring/io_uring.c), where contiguous
    // requests are merged (blk_attempt_plug_merge() in block/blk-merge.c),
    // so that 8 requests of 128 KiB in flight become one of 1 MiB and the
    // device sees depth 1. What Asio has prepared goes first, on its own,
    // as fio sends each request; random requests keep their batch.
    if (off == batch_end_ && service_->*get(PendingSqes{}) != 0) [[unlikely]] (service_->*get(SubmitSqes{}))();
    batch_end_ = off + len;
    try {
      if (r.op == IoOp::read)
        s->file.async_read_some_at(off, asio::mutable_buffer(p, static_cast<std::size_t>(len)), Handler{s});
      else
        (write_fd(fd_, direct_fd_, info_, off, len, p) == fd_ ? s->file : s->direct_file)
            .async_write_some_at(off, asio::const_buffer(p, static_cast<std::size_t>(len)), Handler{s});
    } catch (...) {
      r.status = Errc::no_space;  // only if an allocation failed
      --in_kernel_;
      release(s);
      ready_.push(r);
    }
  }

  void release(Slot* s) noexcept {
    if (!wait_.empty()) {  // hand the slot to the oldest waiting request
      start(s, *wait_.pop());
      return;
    }
    s->req = nullptr;
    free_.put(slots_, s->index);
  }

  void finish(Slot* s) noexcept {
    IoRequest& r = *s->req;
    --in_kernel_;
    release(s);
    --in_flight_;
    ++completed_;
    if (r.on_complete != nullptr) r.on_complete(r);
  }

  int fd_;
  int direct_fd_;  // OpenOptions::direct_large_writes; -1: none
  DeviceInfo info_;
  std::uint64_t lbs_mask_;          // logical block size - 1
  std::uintptr_t align_mask_;       // buffer alignment - 1
  unsigned rw_ops_max_;             // IoOp::read, or IoOp::write when writable
  UringHooks hooks_;
  bool refuse_zeroing_;  // OpenFaults::refuse_zeroing
  std::uint64_t hook_count_ = 0;
  asio::io_context ctx_;
  std::vector<std::unique_ptr<Slot>> slots_;  // after ctx_: destroyed first
  SlotFreeList<Slot> free_;
  RequestFifo wait_;   // valid requests waiting for a slot
  RequestFifo ready_;  // completed at submission (errors, sync ops)
  Service* service_ = nullptr;  // Asio's io_uring service of ctx_
  Scheduler* sched_ = nullptr;  // and its scheduler
  asio::detail::scheduler_thread_info thread_;  // for the polling thread; one at a time
  std::size_t in_flight_ = 0;   // submitted, callback not yet run
  std::size_t in_kernel_ = 0;   // holding a slot
  std::uint64_t completed_ = 0;
  // The byte after the last transfer prepared (issue_one()); no request
  // starts at ~0.
  std::uint64_t batch_end_ = ~std::uint64_t{0};
};

void Handler::operator()(const boost::system::error_code& ec, std::size_t n) const noexcept {
  slot->dev->on_complete(slot, ec, n);
}

}  // namespace

Result<std::unique_ptr<BlockDevice>> make_uring_device(int fd, int direct_fd, DeviceInfo info,
                                                       const BackendOptions& opts) {
  try {
    return std::unique_ptr<BlockDevice>(new UringDevice(fd, direct_fd, std::move(info), opts));
  } catch (const boost::system::system_error& e) {
    const int err = e.code().category() == boost::system::system_category() ? e.code().value() : 0;
    return make_error(Errc::unsupported, std::string("io_uring refused: ") + e.what(), Error::kNoOffset, err);
  } catch (const std::bad_alloc&) {
    return make_error(Errc::no_space, "out of memory for the io_uring backend");
  }
}

}  // namespace f2fscore::detail
