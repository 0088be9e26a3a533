// libFuzzer target on the open-and-walk path: the input patches one of a
// few small valid images (support/rich_image.hpp: our mkfs with a file of
// every kind written in), which then is opened and walked
// (support/volume_walk.hpp). Patching a valid image rather than taking the
// input as the image lets short inputs reach deep code: the checkpoint,
// NAT, node trees, dentries and xattrs. With the re-seal bit the checksums
// the patch broke are recomputed, so damage gets past them.
//
// Input (fuzz/patch_input.hpp, shared with fsck_fuzz.cpp):
//   byte 0   flags: bit 0 re-seal checksums; bits 1-2 template (checksums,
//            plain, large NAT bitmap, compression);
//            bit 3 truncate: the next 2 bytes (LE) give the device size in
//            4 KiB blocks (mod the image's); bit 4: render the dump tool's
//            views (f2fscore::inspect) too, bit 5: as JSON rather than text
//   records, until the input ends (a short last record is cut):
//     op & 3 == 0  XOR:   u8 block (index among the template's non-zero
//                         blocks), u16 offset (mod 4096), u8 len, len bytes
//     op & 3 == 1  SET:   same layout; the bytes replace the block's
//     op & 3 == 2  LE32:  u8 block, u16 offset (mod 4093), u32 value
//     op & 3 == 3  ANY:   u16 block (any block of the device), u16 offset,
//                         u8 len, len bytes written there
// The walk is support/volume_walk.hpp's: every directory, file, link and
// xattr, lookups, NAT/SIT/SSA queries, and with bit 4 the dump tool's views.
// A crash, a sanitizer report, a runaway loop (past the read budget), an
// allocation past -malloc_limit_mb, a timeout, or an error whose message
// does not name the structure and the place, is a finding.
//
// F2FSCORE_FUZZ_WRITE_SEEDS=<dir>: write a seed corpus (the pristine
// templates, and a no-op patch aimed at each of their non-zero blocks)
// to <dir> and exit; scripts/fuzz.sh does this before each run.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/patch_input.hpp"
#include "support/volume_walk.hpp"

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
  f2fstest::BudgetDevice bd(*dev, 100000);
  f2fstest::WalkLimits lim;
  lim.max_inodes = 128;
  lim.nat_scan = 128;
  lim.max_bytes_per_file = 16 * 1024;
  lim.max_segments = 64;
  lim.max_resolves = 8;
  lim.max_lookups_per_dir = 4;
  lim.tool_inodes = (flags & 0x10) ? 8 : 0;
  lim.tool_format = (flags & 0x20) ? 1 : 0;
  const auto r = f2fstest::walk_volume(bd, lim);
  if (bd.budget_exceeded()) {
    std::fprintf(stderr, "open_walk_fuzz: more than 100000 device requests: a runaway loop\n");
    std::abort();
  }
  for (const auto& e : r.errors) {
    const std::string why = f2fstest::error_problem(e.error);
    if (!why.empty()) {
      std::fprintf(stderr, "open_walk_fuzz: %s: %s: %s\n", why.c_str(), e.op.c_str(), e.error.to_string().c_str());
      std::abort();
    }
  }
  return 0;
}
