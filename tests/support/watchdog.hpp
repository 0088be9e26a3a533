// One watchdog for a test process: a case still running after its limit
// aborts with its name, so a hang is a clear failure rather than a CI
// timeout. On POSIX hosts an alarm signal, not a thread: qemu-i386 (the
// i686 cross test) hangs in thread creation. On Windows (no alarm()) a
// thread waiting for stop() with a timeout.
#pragma once

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__unix__)
#include <unistd.h>
#elif defined(_WIN32)
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace f2fstest {

class Watchdog {
 public:
  static Watchdog& get() {
    static Watchdog w;
    return w;
  }
  /// Arms the alarm for `seconds` on behalf of case `name`.
  void start(const std::string& name, unsigned seconds) {
#if defined(_WIN32)
    stop();
#endif
    std::snprintf(name_, sizeof name_, "%s", name.c_str());
#if defined(__unix__)
    std::signal(SIGALRM, &Watchdog::fire);
    alarm(seconds);
#elif defined(_WIN32)
    const unsigned long long armed = generation_;
    thread_ = std::thread([this, armed, seconds] {
      std::unique_lock<std::mutex> l(mutex_);
      if (!cv_.wait_for(l, std::chrono::seconds(seconds), [&] { return generation_ != armed; })) fire(0);
    });
#else
    (void)seconds;
#endif
  }
  void stop() {
#if defined(__unix__)
    alarm(0);
#elif defined(_WIN32)
    {
      std::lock_guard<std::mutex> l(mutex_);
      ++generation_;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
#endif
  }
#if defined(_WIN32)
  ~Watchdog() { stop(); }
#endif

 private:
  static void fire(int) {
    // Only async-signal-safe calls here.
    const char head[] = "watchdog: hang: case still running after its limit: ";
#if defined(__unix__)
    (void)!write(2, head, sizeof head - 1);
    (void)!write(2, get().name_, std::strlen(get().name_));
    (void)!write(2, "\n", 1);
#else
    std::fprintf(stderr, "%s%s\n", head, get().name_);
    std::fflush(stderr);
#endif
    std::abort();
  }
  char name_[256] = {};
#if defined(_WIN32)
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  unsigned long long generation_ = 0;  // changed by stop(): the armed wait ends
#endif
};

}  // namespace f2fstest
