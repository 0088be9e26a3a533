// libFuzzer target on the check path: the input patches one of a few small
// valid images (fuzz/patch_input.hpp, the same format and seeds as
// open_walk_fuzz.cpp), then f2fscore::fsck::check() runs in check-only
// mode (-n -f) on it; with flag bit 4 the volume is also repaired (-y -f)
// and checked again.
// A finding: a crash, a sanitizer report, a runaway loop (past the request
// budget), a timeout, an allocation past -malloc_limit_mb, a write in
// check-only mode, a report whose exit code is not 0 or 4 for -n, or an
// operational error whose message does not name the structure (and, for
// corrupt/io errors, the place).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "f2fscore/fsck.hpp"
#include "fuzz/patch_input.hpp"
#include "support/volume_walk.hpp"

namespace {


[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fsck_fuzz: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

void check_error(const char* pass, const f2fscore::Error& e) {
  const std::string why = f2fstest::error_problem(e);
  if (!why.empty()) finding(pass, why + ": " + e.to_string());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  f2fsfuzz::templates();
  if (const char* dir = std::getenv("F2FSCORE_FUZZ_WRITE_SEEDS")) {
    f2fsfuzz::write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t flags = 0;
  auto dev = f2fsfuzz::patched_device(data, size, &flags);
  if (!dev) return 0;
  {
    f2fstest::BudgetDevice g(*dev, 200000);
    f2fscore::fsck::Options o;
    o.mode = f2fscore::fsck::Mode::check_only;
    o.force = true;
    auto rep = f2fscore::fsck::check(g, o);
    if (g.budget_exceeded()) finding("check -n: more than 200000 device requests", "a runaway loop");
    if (g.writes() != 0) finding("check -n wrote to the device", std::to_string(g.writes()) + " requests");
    if (rep) {
      if (rep->exit_code() != 0 && rep->exit_code() != 4) finding("check -n: exit code", std::to_string(rep->exit_code()));
      if (rep->wrote) finding("check -n says it wrote", "");
    } else {
      check_error("check -n", rep.error());
    }
  }
  if (flags & 0x10) {
    f2fstest::BudgetDevice g(*dev, 400000);
    f2fscore::fsck::Options o;
    o.mode = f2fscore::fsck::Mode::repair_all;
    o.force = true;
    auto rep = f2fscore::fsck::check(g, o);
    if (g.budget_exceeded()) finding("check -y: more than 400000 device requests", "a runaway loop");
    if (!rep) {
      check_error("check -y", rep.error());
      return 0;
    }
    f2fstest::BudgetDevice g2(*dev, 200000);
    f2fscore::fsck::Options o2;
    o2.force = true;
    auto rep2 = f2fscore::fsck::check(g2, o2);
    if (g2.budget_exceeded()) finding("check -n after -y: more than 200000 device requests", "a runaway loop");
    if (g2.writes() != 0) finding("check -n after -y wrote to the device", "");
    if (!rep2) check_error("check -n after -y", rep2.error());
  }
  return 0;
}
