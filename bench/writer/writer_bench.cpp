// f2fscore-writer-bench: the writer's side of bench/writer_bench.sh.
//
//   f2fscore-writer-bench IMG seq  SIZE BS [options]   write /bench.dat sequentially
//   f2fscore-writer-bench IMG prep SIZE [options]      write /bench.dat (untimed setup)
//   f2fscore-writer-bench IMG rand SIZE COUNT [options] COUNT 4 KiB overwrites of /bench.dat
//                                                       at random block offsets (seeded)
// Options: --direct (WriteFlags::direct), --cache BYTES (MountOptions::cache_bytes),
//          --backend posix|uring|io_uring|auto (default posix: pread/pwrite; uring:
//          io_uring through liburing; io_uring: through Asio), --uring (= --backend auto),
//          --buffered-dev (no O_DIRECT on the image), --seed N.
// The time runs from just before the first write to the end of unmount()
// (every block durable: the checkpoint's last flush); mount is outside it.
// The data of each call are stamped into one buffer in the timed loop (two
// stores per 4 KiB block); the same stamping alone is timed before, untimed
// (gen_seconds), so that its cost is known.
// Prints one line: key=value pairs (seconds, CPU seconds of the process in
// that window, MiB/s, IOPS, generator seconds, writer counters).
#include <chrono>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "f2fscore/uring_device.hpp"
#include "f2fscore/writer.hpp"

using namespace f2fscore;

namespace {
int fail(const std::string& what) {
  std::fprintf(stderr, "f2fscore-writer-bench: %s\n", what.c_str());
  return 1;
}
double cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fail("usage: IMG seq SIZE BS | IMG prep SIZE | IMG rand SIZE COUNT [--direct] [--cache B] [--posix] [--buffered-dev] [--seed N]");
  const std::string img = argv[1], mode = argv[2];
  const std::uint64_t size = std::strtoull(argv[3], nullptr, 0);
  std::uint64_t arg4 = argc > 4 && argv[4][0] != '-' ? std::strtoull(argv[4], nullptr, 0) : 0;
  bool direct = false, direct_dev = true;
  Backend backend = Backend::posix;
  std::uint64_t cache = 64ull << 20, seed = 1;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--direct") direct = true;
    else if (a == "--posix") backend = Backend::posix;
    else if (a == "--uring") backend = Backend::automatic;
    else if (a == "--backend" && i + 1 < argc) {
      const std::string b = argv[++i];
      if (b == "posix") backend = Backend::posix;
      else if (b == "uring" || b == "liburing") backend = Backend::liburing;
      else if (b == "io_uring") backend = Backend::uring;
      else if (b == "auto") backend = Backend::automatic;
      else return fail("unknown backend " + b + " (posix, uring, io_uring, auto)");
    }
    else if (a == "--buffered-dev") direct_dev = false;
    else if (a == "--cache" && i + 1 < argc) cache = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
  }
  OpenOptions oo;
  oo.direct = direct_dev;
  BackendOptions bo;
  bo.backend = backend;
  auto od = open_device(img, oo, bo);
  if (!od) return fail(od.error().to_string());
  MountOptions mo;
  mo.cache_bytes = cache;
  // The engine copies its own unaligned (metadata) buffers into aligned
  // ones on an O_DIRECT device; the data go from the page cache's pages or,
  // with --direct, from `buf` (4 KiB aligned).
  BlockDevice& dev = *od->device;
  auto w = Writer::mount(dev, mo);
  if (!w) return fail(w.error().to_string());
  WriteFlags wf;
  wf.direct = direct;
  const std::size_t bs = mode == "seq" ? static_cast<std::size_t>(arg4) : 4096;
  if (mode == "seq" && (bs == 0 || size % bs)) return fail("SIZE must be a multiple of BS");
  void* raw = std::aligned_alloc(4096, mode == "prep" ? (1u << 20) : bs);
  auto* buf = static_cast<std::uint8_t*>(raw);
  std::mt19937_64 rng(seed);
  std::uint64_t ops = 0, bytes = 0;
  double t0 = 0, c0 = 0, gen = 0;
  if (mode == "seq" || mode == "prep") {
    auto ino = (*w)->create("/bench.dat");
    if (!ino) return fail(ino.error().to_string());
    const std::size_t chunk = mode == "prep" ? (1u << 20) : bs;
    {
      const double g0 = now_s();
      for (std::uint64_t off = 0; off < size; off += chunk)
        for (std::size_t k = 0; k < chunk; k += 4096) std::memcpy(buf + k, &off, sizeof off), buf[k + 8] = static_cast<std::uint8_t>(k);
      gen = now_s() - g0;
    }
    t0 = now_s();
    c0 = cpu_s();
    for (std::uint64_t off = 0; off < size; off += chunk) {
      for (std::size_t k = 0; k < chunk; k += 4096) std::memcpy(buf + k, &off, sizeof off), buf[k + 8] = static_cast<std::uint8_t>(k);
      auto r = (*w)->write(*ino, off, std::span<const std::uint8_t>(buf, chunk), mode == "prep" ? WriteFlags{} : wf);
      if (!r) return fail("write at " + std::to_string(off) + ": " + r.error().to_string());
      ++ops;
      bytes += chunk;
    }
  } else if (mode == "rand") {
    auto ino = (*w)->lookup("/bench.dat");
    if (!ino) return fail("run prep first: " + ino.error().to_string());
    const std::uint64_t blocks = size / 4096;
    {
      std::mt19937_64 g(seed);
      std::uint64_t sink = 0;
      const double g0 = now_s();
      for (std::uint64_t i = 0; i < arg4; ++i) {
        sink += (g() % blocks) * 4096;
        std::memcpy(buf, &i, sizeof i);
      }
      gen = now_s() - g0 + static_cast<double>(sink & 1) * 1e-12;
    }
    t0 = now_s();
    c0 = cpu_s();
    for (std::uint64_t i = 0; i < arg4; ++i) {
      const std::uint64_t off = (rng() % blocks) * 4096;
      std::memcpy(buf, &i, sizeof i);
      auto r = (*w)->write(*ino, off, std::span<const std::uint8_t>(buf, 4096), wf);
      if (!r) return fail("write at " + std::to_string(off) + ": " + r.error().to_string());
      ++ops;
      bytes += 4096;
    }
  } else {
    return fail("unknown mode " + mode);
  }
  const double t_written = now_s();
  auto u = (*w)->unmount();
  if (!u) return fail("unmount: " + u.error().to_string());
  const double t1 = now_s(), c1 = cpu_s();
  drain(dev);
  const WriterStats st = (*w)->stats();
  std::printf("mode=%s backend=%s direct=%d seconds=%.4f write_seconds=%.4f cpu_seconds=%.4f mib_s=%.1f iops=%.0f gen_seconds=%.4f ops=%llu "
              "data_blocks=%llu node_blocks=%llu meta_blocks=%llu checkpoints=%llu\n",
              mode.c_str(), std::string(backend_name(od->backend)).c_str(), direct ? 1 : 0, t1 - t0, t_written - t0, c1 - c0,
              static_cast<double>(bytes) / (1 << 20) / (t1 - t0), static_cast<double>(ops) / (t1 - t0), gen,
              static_cast<unsigned long long>(ops), static_cast<unsigned long long>(st.data_blocks_written),
              static_cast<unsigned long long>(st.node_blocks_written),
              static_cast<unsigned long long>(st.meta_blocks_written),
              static_cast<unsigned long long>(st.checkpoints));
  std::free(raw);
  return 0;
}
