// The daemon's request loop (request_loop.hpp).
#include "request_loop.hpp"

#include <linux/fuse.h>
#include <pthread.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
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

struct Pool {
  Pool(fuse_session* s, unsigned n) : se(s), max_workers(n) {}
  fuse_session* se;
  unsigned max_workers;
  std::mutex mu;
  std::condition_variable work;  // a job queued, or stop
  std::condition_variable idle;  // a worker finished its job
  std::deque<fuse_buf> jobs;
  std::vector<fuse_buf> spare;  // buffers of finished jobs, to receive into
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
      fuse_buf b = jobs.front();
      jobs.pop_front();
      ++busy;
      lock.unlock();
      fuse_session_process_buf(se, &b);
      lock.lock();
      --busy;
      spare.push_back(b);
      if (busy == 0 && jobs.empty()) idle.notify_all();
    }
  }

  // Hands `b` to a worker (starting one if none waits and there is room);
  // `b` becomes a buffer to receive the next request into (a spare one, or
  // none: libfuse allocates at the next receive). False, and `b` kept, when
  // there is no worker at all (none could be started).
  bool hand_over(fuse_buf& b) {
    std::lock_guard<std::mutex> lock(mu);
    if (waiting == 0 && threads.size() < max_workers) start_worker();
    if (threads.empty()) return false;
    jobs.push_back(b);
    b = fuse_buf{};
    if (!spare.empty()) {
      b.mem = spare.back().mem;
      spare.pop_back();
    }
    work.notify_one();
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
    for (auto& b : spare) std::free(b.mem);
    spare.clear();
  }
};

}  // namespace

int serve(fuse_session* se, unsigned max_workers) {
  Pool pool(se, max_workers);
  fuse_buf buf{};
  int res = 0;
  while (!fuse_session_exited(se)) {
    res = fuse_session_receive_buf(se, &buf);
    if (res == -EINTR) continue;
    if (res <= 0) break;
    if (max_workers > 0 && goes_to_worker(buf) && pool.hand_over(buf)) continue;
    if (opcode_of(buf) == FUSE_DESTROY) pool.drain();
    fuse_session_process_buf(se, &buf);
  }
  pool.finish();
  std::free(buf.mem);
  fuse_session_reset(se);
  return res < 0 ? res : 0;
}

}  // namespace f2fscore::fuse
