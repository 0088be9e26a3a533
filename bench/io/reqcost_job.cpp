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
//     f2fscore-reqcost-job FILE QD N [read|write] [auto|io_uring|uring|posix] [bare|off|on]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"
#include "reqcost_common.hpp"

using namespace f2fscore;

int main(int argc, char** argv) {
  const auto parsed = reqcost::parse(argc, argv, "[bare|off|on]");
  if (!parsed) return 2;
  const reqcost::Args& args = *parsed;
  const std::uint32_t qd = args.qd;
  const bool write = args.write;
  const std::string variant = argc > 6 ? argv[6] : "off";
  auto opened = reqcost::open(args, "reqcost-job");
  if (!opened) return 1;
  IoJob job;
  job.pattern = write ? IoPattern::randwrite : IoPattern::randread;
  job.block_size = 4096;
  job.queue_depth = qd;
  job.max_ios = args.n;
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
  std::printf("reqcost-job: %s, %s %s qd=%u ios=%llu\n", variant.c_str(), args.backend_arg.c_str(), write ? "write" : "read", qd,
              static_cast<unsigned long long>(r->ios));
  return r->ios == args.n ? 0 : 1;
}
