// The cost of one request in user space: submit plus completion of 4 KiB
// direct reads (or writes) through open_device() and the iostat layer
// (switched off), measured with callgrind's client requests around the
// steady state only. Built twice: f2fscore-reqcost (the layer is there,
// off) and f2fscore-reqcost-noiostat (F2FSCORE_BENCH_NO_IOSTAT: the layer
// is compiled out), so the gate's cost is the difference.
//
//   valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=F \
//     f2fscore-reqcost FILE QD N [read|write] [auto|io_uring|uring|posix] [on]
//   then divide the "totals:" of F by N (bench/io/reqcost.sh does this).
//
// Without valgrind it just runs and prints the request rate.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include "f2fscore/iostat.hpp"
#include "reqcost_common.hpp"

using namespace f2fscore;

namespace {

// The device as the caller holds it: the IostatDevice itself (its gate is
// inline: one load per call when off), or the backend's device when the
// layer is compiled out.
#if defined(F2FSCORE_BENCH_NO_IOSTAT)
using Dev = BlockDevice;
#else
using Dev = IostatDevice;
#endif

struct Loop {
  Dev* dev = nullptr;
  std::uint64_t blocks = 0;
  std::uint64_t rng = 88172645463325252ull;
  std::uint64_t left = 0;  // submissions still to make
  std::uint64_t done = 0;
  std::uint64_t errors = 0;
};

void on_done(IoRequest& req) noexcept {
  auto& l = *static_cast<Loop*>(req.user);
  ++l.done;
  if (!req.ok()) ++l.errors;
  if (l.left == 0) return;
  --l.left;
  l.rng ^= l.rng << 13;
  l.rng ^= l.rng >> 7;
  l.rng ^= l.rng << 17;
  req.offset = (l.rng % l.blocks) * 4096;
  l.dev->submit(req);
}

void run(Loop& l, std::vector<IoRequest>& reqs, std::uint64_t n) {
  l.left = n;
  l.done = 0;
  for (auto& r : reqs) {
    if (l.left == 0) break;
    --l.left;
    r.offset = (l.rng++ % l.blocks) * 4096;
    l.dev->submit(r);
  }
  while (l.done < n) l.dev->poll(true);  // our own count: no in_flight() call per round
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = reqcost::parse(argc, argv, "[on]");
  if (!parsed) return 2;
  const reqcost::Args& args = *parsed;
  const std::uint32_t qd = args.qd;
  const bool write = args.write;
  auto opened = reqcost::open(args, "reqcost");
  if (!opened) return 1;
#if defined(F2FSCORE_BENCH_NO_IOSTAT)
  std::unique_ptr<BlockDevice> dev = std::move(opened->device);
  const char* variant = "iostat compiled out";
#else
  Iostat stats;  // off, unless the 6th argument is "on"
  const bool on = argc > 6 && std::strcmp(argv[6], "on") == 0;
  stats.set_enabled(on);
  auto dev = std::make_unique<IostatDevice>(std::move(opened->device), stats);
  const char* variant = on ? "iostat layer, on" : "iostat layer, off";
#endif
  void* bufs = std::aligned_alloc(4096, std::size_t{4096} * qd);
  std::memset(bufs, 0x5a, std::size_t{4096} * qd);
  std::vector<IoRequest> reqs(qd);
  Loop l;
  l.dev = dev.get();
  l.blocks = dev->info().size_bytes / 4096;
  for (std::uint32_t i = 0; i < qd; ++i) {
    reqs[i].op = write ? IoOp::write : IoOp::read;
    reqs[i].length = 4096;
    reqs[i].buf = static_cast<char*>(bufs) + std::size_t{4096} * i;
    reqs[i].on_complete = &on_done;
    reqs[i].user = &l;
  }
  run(l, reqs, 2000 + 4ull * qd);  // warm up: first-touch paths, ring, caches
  const auto t0 = std::chrono::steady_clock::now();
  CALLGRIND_TOGGLE_COLLECT;
  run(l, reqs, args.n);
  CALLGRIND_TOGGLE_COLLECT;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("reqcost: %s, %s, %s qd=%u n=%llu done=%llu errors=%llu %.0f IOPS\n", variant,
              std::string(backend_name(opened->backend)).c_str(), write ? "write" : "read", qd,
              static_cast<unsigned long long>(args.n), static_cast<unsigned long long>(l.done),
              static_cast<unsigned long long>(l.errors), static_cast<double>(l.done) / s);
  std::free(bufs);
  return l.errors == 0 && l.done == args.n ? 0 : 1;
}
