// ExtractOptions::progress for both extraction back ends (extract.cpp,
// extract_win32.cpp): one unit per inode extracted, of the checkpoint's
// valid inode count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

#include "f2fscore/volume.hpp"

namespace f2fscore::host_detail {

class ExtractProgress {
 public:
  ExtractProgress(const Volume& v, const std::function<void(std::uint64_t, std::uint64_t)>& report)
      : report_(report), max_(v.checkpoint().valid_inode_count.get()) {
    if (report_) report_(0, max_);
  }
  /// One more inode extracted (a second name of one already extracted is
  /// not one); reported when the per-mille shown changes.
  void inode() {
    if (!report_) return;
    done_ = std::min(done_ + 1, max_);
    const std::uint64_t permille = max_ ? done_ * 1000 / max_ : 1000;
    if (permille == shown_) return;
    shown_ = permille;
    report_(done_, max_);
  }
  /// The last report, current == max (unless the last step was it).
  void finish() {
    if (report_ && (done_ != max_ || shown_ != 1000)) report_(max_, max_);
  }

 private:
  const std::function<void(std::uint64_t, std::uint64_t)>& report_;
  std::uint64_t max_ = 0, done_ = 0, shown_ = 0;
};

}  // namespace f2fscore::host_detail
