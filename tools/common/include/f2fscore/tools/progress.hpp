// Progress output as e2fsck's -C option (e2fsck/unix.c): a line
// "PASS CURRENT MAX DEVICE" per step to a descriptor, or a bar on the
// terminal. Shared by fsck (-C), mkfs --populate, sload and dump extract
// (--progress).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace f2fscore::tools {

/// A progress reporter for descriptor `fd` (e2fsck -C semantics): fd > 0
/// gets one line "pass current max device\n" per call; fd == 0 draws a bar
/// on stdout (`passes` passes make up the whole bar). Writes that fail (a
/// reader that went away) end the lines, never the run.
class Progress {
 public:
  Progress(int fd, std::string device, int passes) : fd_(fd), device_(std::move(device)), passes_(passes) {}
  /// Whether anything is shown: fd > 0, or fd == 0 with stdout a terminal
  /// and no JSON requested (JSON owns stdout).
  bool active(bool json) const;
  void operator()(int pass, std::uint64_t cur, std::uint64_t max);
  /// Clears the bar (nothing for descriptor lines).
  void finish();
  /// A callback for one pass: `pass` fixed, (cur, max) from the caller;
  /// empty when !active(json).
  std::function<void(std::uint64_t, std::uint64_t)> for_pass(int pass, bool json);

 private:
  int fd_;
  std::string device_;
  int passes_;
  int last_shown_ = -1;
  bool closed_ = false;
};

}  // namespace f2fscore::tools
