// The Unicode facts of casefolding (unicode_facts.hpp) from the table that
// tools/gen/unicode_table.cpp generated from the build host's ICU (its
// layout is described there): binary searches over sorted runs and rows.
// Hangul syllables decompose by the arithmetic of Unicode 3.12 (section
// "Hangul Syllable Decomposition"), not through the table.
#include <algorithm>
#include <cstdint>

#include "reader/unicode_facts.hpp"

namespace f2fscore::detail {

namespace {

namespace table {
#include "f2fscore_unicode_table.inc"
}  // namespace table

// The value of the run holding c in a table of packed (first << 8 | value)
// runs whose first run starts at U+0000.
template <std::size_t N>
std::uint8_t run_value(const std::uint32_t (&runs)[N], char32_t c) {
  const std::uint32_t key = (static_cast<std::uint32_t>(c) << 8) | 0xFFu;
  const auto* it = std::upper_bound(std::begin(runs), std::end(runs), key);
  return static_cast<std::uint8_t>(*(it - 1) & 0xFFu);  // runs[0] starts at 0 <= key
}

constexpr char32_t kHangulFirst = 0xAC00;
constexpr char32_t kHangulLast = 0xD7A3;
constexpr char32_t kHangulL = 0x1100, kHangulV = 0x1161, kHangulT = 0x11A7;
constexpr char32_t kHangulTCount = 28, kHangulNCount = 21 * 28;

class TableFacts final : public UnicodeFacts {
 public:
  UnicodeAge age(char32_t c) const override { return static_cast<UnicodeAge>(run_value(table::kAgeRuns, c)); }

  bool default_ignorable(char32_t c) const override { return run_value(table::kIgnorableRuns, c) != 0; }

  CodePoints full_fold(char32_t c) const override {
    const auto* r = std::upper_bound(std::begin(table::kFoldRuns), std::end(table::kFoldRuns), c,
                                     [](char32_t x, const table::FoldRun& run) { return x < run.first; });
    if (r != std::begin(table::kFoldRuns)) {
      --r;
      if (c <= r->last && (c - r->first) % r->step == 0) {
        CodePoints out;
        out.cp[0] = static_cast<char32_t>(static_cast<std::int64_t>(c) + r->delta);
        out.size = 1;
        return out;
      }
    }
    const auto* l = std::lower_bound(std::begin(table::kFoldLong), std::end(table::kFoldLong), c,
                                     [](const table::FoldLong& row, char32_t x) { return row.cp < x; });
    if (l == std::end(table::kFoldLong) || l->cp != c) return {};
    CodePoints out;
    out.size = l->to[2] != 0 ? 3 : 2;
    for (std::uint8_t i = 0; i < out.size; ++i) out.cp[i] = l->to[i];
    return out;
  }

  CodePoints raw_decomposition(char32_t c) const override {
    CodePoints out;
    if (c >= kHangulFirst && c <= kHangulLast) {
      const char32_t s = c - kHangulFirst;
      if (s % kHangulTCount == 0) {  // LV: L + V
        out.cp[0] = kHangulL + s / kHangulNCount;
        out.cp[1] = kHangulV + (s % kHangulNCount) / kHangulTCount;
      } else {  // LVT: LV + T
        out.cp[0] = c - s % kHangulTCount;
        out.cp[1] = kHangulT + s % kHangulTCount;
      }
      out.size = 2;
      return out;
    }
    constexpr unsigned kShift = 42;
    const std::uint64_t key = std::uint64_t{c} << kShift;
    const auto* it = std::lower_bound(std::begin(table::kDecompositions), std::end(table::kDecompositions), key);
    if (it == std::end(table::kDecompositions) || (*it >> kShift) != c) return {};
    constexpr std::uint64_t kMask = (std::uint64_t{1} << 21) - 1;
    out.cp[0] = static_cast<char32_t>((*it >> 21) & kMask);
    out.cp[1] = static_cast<char32_t>(*it & kMask);
    out.size = out.cp[1] != 0 ? 2 : 1;
    return out;
  }

  std::uint8_t combining_class(char32_t c) const override { return run_value(table::kCccRuns, c); }
};

}  // namespace

const UnicodeFacts* table_unicode_facts() noexcept {
  static const TableFacts facts;
  return &facts;
}

}  // namespace f2fscore::detail
