// The daemon's request loop (request_loop.hpp).
#include "request_loop.hpp"

#include <linux/fuse.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace f2fscore::fuse {
namespace {

constexpr std::uint32_t kLongIo = 16u << 10;  // READ/WRITE above this go to a worker

std::uint32_t opcode_of(const fuse_buf& b) {
  fuse_in_header h{};
  if (b.size < sizeof h) return 0;
  std::memcpy(&h, b.mem, sizeof h);
  return h.opcode;
}

// READ and WRITE carry their size at the same place (fuse_read_in and
// fuse_write_in, in every protocol version: fh, offset, size).
bool goes_to_worker(const fuse_buf& b) {
  if (b.flags & FUSE_BUF_IS_FD) return false;  // spliced: the pipe is the receiving thread's
  const std::uint32_t op = opcode_of(b);
  if (op != FUSE_READ && op != FUSE_WRITE) return false;
  constexpr std::size_t at = sizeof(fuse_in_header) + offsetof(fuse_read_in, size);
  static_assert(offsetof(fuse_read_in, size) == offsetof(fuse_write_in, size));
  std::uint32_t size = 0;
  if (b.size < at + sizeof size) return false;
  std::memcpy(&size, static_cast<const char*>(b.mem) + at, sizeof size);
  return size > kLongIo;
}

// Receive buffers whose WRITE data starts on a page boundary, so that the
// writer's cache can keep the data's blocks as its pages (WriteFlags::lend)
// instead of copying them. Each buffer is a region of whole pages; the
// request is read to 80 bytes before the end of the first page (the
// fuse_in_header and fuse_write_in of a WRITE), so a WRITE's data fills
// the pages after it. libfuse up to 3.16 reads at most the session's
// bufsize, max_write plus 4 KiB (FUSE_BUFFER_HEADER_SIZE in lib/fuse_i.h),
// into a buffer the caller gives it; later versions manage the size of
// the buffers they receive into, and get none from here.
#if FUSE_MAJOR_VERSION == 3 && FUSE_MINOR_VERSION <= 16
constexpr bool kLendBuffers = true;
#else
constexpr bool kLendBuffers = false;
#endif
constexpr std::size_t kPage = 4096;
constexpr std::size_t kWriteHeader = sizeof(fuse_in_header) + sizeof(fuse_write_in);
static_assert(kWriteHeader == 80);
// A region: the header's page, then the largest max_write (1 MiB, as
// f2fscore-fuse's option allows) or, before FUSE_INIT sets it, libfuse's
// FUSE_MAX_MAX_PAGES (256) system pages, then its 4 KiB of header room.
// Only where a system page is 4 KiB (serve()).
constexpr std::size_t kRegion = kPage + (std::size_t{1} << 20) + kPage;
// Regions the cache may keep at once (each stays kept while any one of its
// blocks is cached): a bound on the memory they take beside the cache.
constexpr std::size_t kMaxLent = 48;
// The smallest WRITE lent: a buffer stays whole while any of its blocks is
// cached, so a small write would keep a MiB for a few blocks, where its
// copy costs little.
constexpr std::size_t kMinLend = 256u << 10;

class Regions : public std::enable_shared_from_this<Regions> {
 public:
  ~Regions() {
    for (void* r : free_) std::free(r);
  }
  // A region and its owner (the last reference gives it back here), or
  // none when out of memory. `lendable` is false past kMaxLent regions:
  // such a region is only received into.
  struct Buf {
    std::shared_ptr<const void> owner;
    std::uint8_t* base = nullptr;
    bool lendable = false;
    void* mem() const { return base + kPage - kWriteHeader; }
  };
  Buf take() {
    Buf b;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        b.base = static_cast<std::uint8_t*>(free_.back());
        free_.pop_back();
      }
      b.lendable = ++out_ <= kMaxLent;
    }
    if (!b.base) b.base = static_cast<std::uint8_t*>(std::aligned_alloc(kPage, kRegion));
    if (!b.base) {
      std::lock_guard<std::mutex> lock(mu_);
      --out_;
      return {};
    }
    try {
      b.owner = std::shared_ptr<const void>(b.base, [self = shared_from_this()](const void* p) { self->give(p); });
    } catch (const std::bad_alloc&) {
      give(b.base);
      return {};
    }
    return b;
  }

 private:
  void give(const void* p) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    --out_;
    try {
      free_.push_back(const_cast<void*>(p));
    } catch (const std::bad_alloc&) {
      std::free(const_cast<void*>(p));
    }
  }
  std::mutex mu_;
  std::vector<void*> free_;
  std::size_t out_ = 0;
};

// The region the calling thread's current request was received into.
thread_local const Regions::Buf* t_current = nullptr;

struct Current {
  explicit Current(const Regions::Buf& b) { t_current = &b; }
  ~Current() { t_current = nullptr; }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;
};

// A received request, and the region it is in (none: libfuse's buffer).
struct Job {
  fuse_buf buf{};
  Regions::Buf region;
};

// Ready to receive into: `j`'s region again when nobody else keeps it,
// else a new one; without regions (or memory for one), the buffer libfuse
// allocated at an earlier receive, or none (libfuse allocates one).
void renew(Job& j, Regions* regions) {
  if (j.region.owner && j.region.owner.use_count() == 1) {
    // The cache's last drop of a reference (a release) before the next
    // receive writes into the region; use_count() is a relaxed load.
    std::atomic_thread_fence(std::memory_order_acquire);
    j.buf = fuse_buf{};
    j.buf.mem = j.region.mem();
    return;
  }
  void* own = j.region.owner ? nullptr : j.buf.mem;  // libfuse's malloc()ed buffer
  j.region = regions ? regions->take() : Regions::Buf{};
  j.buf = fuse_buf{};
  if (j.region.owner) {
    std::free(own);
    j.buf.mem = j.region.mem();
  } else {
    j.buf.mem = own;
  }
}

// Frees what renew() left to free.
void release(Job& j) {
  if (!j.region.owner) std::free(j.buf.mem);
  j = Job{};
}

// Runs a received request on the calling thread.
void process(fuse_session* se, Job& j) {
  const Current cur(j.region);
  fuse_session_process_buf(se, &j.buf);
}

struct Pool {
  Pool(fuse_session* s, unsigned n, Regions* r) : se(s), max_workers(n), regions(r) {}
  fuse_session* se;
  unsigned max_workers;
  Regions* regions;
  std::mutex mu;
  std::condition_variable work;  // a job queued, or stop
  std::condition_variable idle;  // a worker finished its job
  std::deque<Job> jobs;
  std::vector<Job> spare;  // finished jobs, their buffers to receive into
  std::vector<std::thread> threads;
  unsigned waiting = 0, busy = 0;
  bool stop = false;

  void run_worker() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      ++waiting;
      work.wait(lock, [&] { return stop || !jobs.empty(); });
      --waiting;
      if (jobs.empty()) return;  // stop, nothing left
      Job j = std::move(jobs.front());
      jobs.pop_front();
      ++busy;
      lock.unlock();
      process(se, j);
      lock.lock();
      --busy;
      spare.push_back(std::move(j));
      if (busy == 0 && jobs.empty()) idle.notify_all();
    }
  }

  // Hands `j` to a worker (starting one if none waits and there is room);
  // `j` becomes a finished job's buffer, renewed, or a new one. False, and
  // `j` kept, when there is no worker at all (none could be started).
  bool hand_over(Job& j) {
    std::unique_lock<std::mutex> lock(mu);
    if (waiting == 0 && threads.size() < max_workers) start_worker();
    if (threads.empty()) return false;
    jobs.push_back(std::move(j));
    j = Job{};
    if (!spare.empty()) {
      j = std::move(spare.back());
      spare.pop_back();
    }
    work.notify_one();
    lock.unlock();
    renew(j, regions);
    return true;
  }

  // A worker thread that blocks the signals the receiver handles (the mask
  // is inherited at creation, so it is set around it).
  void start_worker() {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    try {
      threads.emplace_back([this] { run_worker(); });
    } catch (const std::system_error&) {
      // No new thread: the ones there are take the job.
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  // Waits until no job is queued or running.
  void drain() {
    std::unique_lock<std::mutex> lock(mu);
    idle.wait(lock, [&] { return busy == 0 && jobs.empty(); });
  }

  void finish() {
    drain();
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    work.notify_all();
    for (auto& t : threads) t.join();
    for (auto& j : spare) release(j);
    spare.clear();
  }
};

}  // namespace

std::shared_ptr<const void> lendable_buffer(const void* data, std::size_t size) {
  const Regions::Buf* b = t_current;
  if (!b || !b->owner || !b->lendable || size < kMinLend) return {};
  const auto* p = static_cast<const std::uint8_t*>(data);
  if (p < b->base || size > kRegion || p + size > b->base + kRegion) return {};
  return b->owner;
}

int serve(fuse_session* se, unsigned max_workers) {
  std::shared_ptr<Regions> regions;
  if (kLendBuffers && sysconf(_SC_PAGESIZE) == static_cast<long>(kPage)) regions = std::make_shared<Regions>();
  Pool pool(se, max_workers, regions.get());
  Job j;
  renew(j, regions.get());
  int res = 0;
  while (!fuse_session_exited(se)) {
    res = fuse_session_receive_buf(se, &j.buf);
    if (res == -EINTR) continue;
    if (res <= 0) break;
    if (max_workers > 0 && goes_to_worker(j.buf) && pool.hand_over(j)) continue;
    if (opcode_of(j.buf) == FUSE_DESTROY) pool.drain();
    process(se, j);
    renew(j, regions.get());
  }
  pool.finish();
  release(j);
  fuse_session_reset(se);
  return res < 0 ? res : 0;
}

}  // namespace f2fscore::fuse
