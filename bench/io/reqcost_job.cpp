// The cost of one request through run_io_job() (the job behind f2fscore-io,
// which takes a BlockDevice&): random 4 KiB direct reads (or writes) at a
// queue depth, on the backend's device itself ("bare"), or on an
// IostatDevice over it with iostat off or on. The job has no hook for
// callgrind's client requests, so the per-request cost is a difference:
// run N and 2N requests and divide the difference of the totals by N
// (start-up, the ring and the buffers cancel). bench/io/reqcost.sh --job
// does this.
//
//   valgrind --tool=callgrind --callgrind-out-file=F \
//     f2fscore-reqcost-job FILE QD N [read|write] [io_uring|uring|posix] [bare|off|on]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/uring_device.hpp"

using namespace f2fscore;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE QD N [read|write] [io_uring|uring|posix] [bare|off|on]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const auto qd = static_cast<std::uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const auto n = std::strtoull(argv[3], nullptr, 10);
  const bool write = argc > 4 && std::strcmp(argv[4], "write") == 0;
  const std::string be = argc > 5 ? argv[5] : "io_uring";
  const std::string variant = argc > 6 ? argv[6] : "off";
  BackendOptions bo;
  bo.backend = be == "posix" ? Backend::posix : be == "uring" ? Backend::liburing : Backend::uring;
  bo.queue_depth = qd;
  OpenOptions oo;
  oo.direct = true;
  oo.read_only = !write;
  auto opened = open_device(path, oo, bo);
  if (!opened) {
    std::fprintf(stderr, "reqcost-job: %s\n", opened.error().to_string().c_str());
    return 1;
  }
  IoJob job;
  job.pattern = write ? IoPattern::randwrite : IoPattern::randread;
  job.block_size = 4096;
  job.queue_depth = qd;
  job.max_ios = n;
  job.measure_latency = false;  // no clock reads: the request's own cost
  Iostat stats;
  std::unique_ptr<BlockDevice> dev = std::move(opened->device);
  if (variant != "bare") {
    stats.set_enabled(variant == "on");
    dev = std::make_unique<IostatDevice>(std::move(dev), stats);
  }
  BlockDevice& ref = *dev;  // as f2fscore-io and the engine hand it over
  auto r = run_io_job(ref, job);
  if (!r) {
    std::fprintf(stderr, "reqcost-job: %s\n", r.error().to_string().c_str());
    return 1;
  }
  std::printf("reqcost-job: %s, %s %s qd=%u ios=%llu\n", variant.c_str(), be.c_str(), write ? "write" : "read", qd,
              static_cast<unsigned long long>(r->ios));
  return r->ios == n ? 0 : 1;
}
