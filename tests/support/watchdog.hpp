// One watchdog for a test process: a case still running after its limit
// aborts with its name, so a hang is a clear failure rather than a CI
// timeout. An alarm signal, not a thread: qemu-i386 (the i686 cross test)
// hangs in thread creation.
#pragma once

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__unix__)
#include <unistd.h>
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
    std::snprintf(name_, sizeof name_, "%s", name.c_str());
#if defined(__unix__)
    std::signal(SIGALRM, &Watchdog::fire);
    alarm(seconds);
#else
    (void)seconds;
#endif
  }
  void stop() {
#if defined(__unix__)
    alarm(0);
#endif
  }

 private:
  static void fire(int) {
    // Only async-signal-safe calls here.
    const char head[] = "watchdog: hang: case still running after its limit: ";
    (void)!write(2, head, sizeof head - 1);
    (void)!write(2, get().name_, std::strlen(get().name_));
    (void)!write(2, "\n", 1);
    std::abort();
  }
  char name_[256] = {};
};

}  // namespace f2fstest
