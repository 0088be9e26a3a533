// f2fscore-ipu-sqlite: an SQLite-like workload through the writer, to
// compare IPU policies (bench/ipu_bench.sh, docs/benchmarks.md "IPU policies and fdatasync").
//
// A fresh volume (our mkfs) is filled to --fill-pct of its user blocks with
// other files, then a database file of --db-mib MiB is written; the timed
// part is --ops operations, each overwriting --pages random 4 KiB pages of
// the database and calling fdatasync (what SQLite does for a transaction in
// rollback-journal mode without the journal). One line of results:
//   policy=0x10 option=0 ops=.. seconds=.. ops_per_s=.. in_place=.. out_of_place=..
//   node_per_fdatasync=.. meta_per_fdatasync=.. fdatasync_node=.. fdatasync_meta=..
//   checkpoints=.. fsync_checkpoints=..
// (node/meta per fdatasync: all node and metadata blocks written during the
// timed part, per operation; fdatasync_node/meta: what the fsync path
// counted for fdatasync itself.)
// Usage: f2fscore-ipu-sqlite [--image PATH] [--size-mib N] [--fill-pct P]
//        [--db-mib N] [--ops N] [--pages N] [--policy HEX] [--fdatasync-in-place]
//        [--seed N]
// Without --image the volume is in memory (engine cost only); with it, a
// file of that path is created (flush = fdatasync of the file). Exit 0, or
// 1 with a message on failure, 2 on bad usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "f2fscore/device.hpp"
#include "f2fscore/mkfs.hpp"
#include "f2fscore/volume.hpp"
#include "f2fscore/writer.hpp"

using namespace f2fscore;

namespace {

int fail(const std::string& what, const Error& e) {
  std::fprintf(stderr, "f2fscore-ipu-sqlite: %s: %s\n", what.c_str(), e.to_string().c_str());
  return 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: f2fscore-ipu-sqlite [--image PATH] [--size-mib N] [--fill-pct P] [--db-mib N] [--ops N]\n"
               "                           [--pages N] [--policy HEX] [--fdatasync-in-place] [--seed N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string image;
  std::uint64_t size_mib = 1024, fill_pct = 75, db_mib = 64, ops = 2000, pages = 1, seed = 1;
  std::uint32_t policy = 0x10;
  bool option = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto num = [&](std::uint64_t& v) {
      if (i + 1 >= argc) return false;
      v = std::strtoull(argv[++i], nullptr, 0);
      return true;
    };
    std::uint64_t p = 0;
    if (a == "--image" && i + 1 < argc) image = argv[++i];
    else if (a == "--size-mib" && num(size_mib)) {}
    else if (a == "--fill-pct" && num(fill_pct)) {}
    else if (a == "--db-mib" && num(db_mib)) {}
    else if (a == "--ops" && num(ops)) {}
    else if (a == "--pages" && num(pages)) {}
    else if (a == "--seed" && num(seed)) {}
    else if (a == "--policy" && num(p)) policy = static_cast<std::uint32_t>(p);
    else if (a == "--fdatasync-in-place") option = true;
    else return usage();
  }
  if (fill_pct > 95 || pages == 0 || db_mib == 0) return usage();
  const std::uint64_t bytes = size_mib << 20;

  std::unique_ptr<BlockDevice> dev;
  if (image.empty()) {
    dev = make_memory_device(bytes);
  } else {
    std::FILE* f = std::fopen(image.c_str(), "wb");
    if (!f) return std::fprintf(stderr, "f2fscore-ipu-sqlite: cannot create %s\n", image.c_str()), 1;
    std::fclose(f);
    if (truncate(image.c_str(), static_cast<off_t>(bytes)) != 0)
      return std::fprintf(stderr, "f2fscore-ipu-sqlite: cannot size %s\n", image.c_str()), 1;
    auto d = open_posix_device(image, {});
    if (!d) return fail("open " + image, d.error());
    dev = std::move(*d);
  }
  {
    MkfsTarget t{dev.get(), "bench"};
    MkfsOptions mo;
    mo.timestamp = 1700000000;
    auto r = format_volume(std::span<const MkfsTarget>(&t, 1), mo);
    if (!r) return fail("mkfs", r.error());
  }
  std::uint64_t user_blocks = 0;
  {
    auto v = Volume::open(*dev);
    if (!v) return fail("open", v.error());
    user_blocks = (*v)->checkpoint().user_block_count.get();
  }
  MountOptions mo;
  mo.fixed_time = 1700000000;
  mo.checkpoint_interval_s = 0;
  mo.ipu.ipu_policy = policy;
  mo.ipu.fdatasync_in_place = option;
  auto wm = Writer::mount(*dev, mo);
  if (!wm) return fail("mount", wm.error());
  Writer& w = **wm;

  // Fill with 8 MiB files, leaving the database's share.
  const std::uint64_t db_blocks = db_mib * 256;
  const std::uint64_t target = user_blocks * fill_pct / 100;
  std::vector<std::uint8_t> chunk(1 << 20);
  std::mt19937_64 rng(seed);
  for (auto& b : chunk) b = static_cast<std::uint8_t>(rng());
  if (!w.mkdir("/fill")) return std::fprintf(stderr, "f2fscore-ipu-sqlite: mkdir failed\n"), 1;
  std::uint64_t filled = 0;
  for (int n = 0; filled + db_blocks + 2048 < target; ++n) {
    auto ino = w.create("/fill/f" + std::to_string(n));
    if (!ino) return fail("create a fill file", ino.error());
    for (std::uint64_t off = 0; off < (8u << 20) && filled + db_blocks + 2048 < target; off += chunk.size()) {
      auto r = w.write(*ino, off, chunk);
      if (!r) return fail("fill", r.error());
      filled += chunk.size() / 4096;
    }
  }
  auto db = w.create("/app.db");
  if (!db) return fail("create the database", db.error());
  for (std::uint64_t off = 0; off < (db_mib << 20); off += chunk.size()) {
    auto r = w.write(*db, off, chunk);
    if (!r) return fail("write the database", r.error());
  }
  if (auto r = w.sync(); !r) return fail("sync", r.error());

  const WriterStats s0 = w.stats();
  std::vector<std::uint8_t> page(4096);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t op = 0; op < ops; ++op) {
    for (std::uint64_t k = 0; k < pages; ++k) {
      const std::uint64_t pg = rng() % db_blocks;
      std::memcpy(page.data(), &op, sizeof op);
      page[8] = static_cast<std::uint8_t>(k);
      auto r = w.write(*db, pg * 4096, page);
      if (!r) return fail("overwrite", r.error());
    }
    if (auto r = w.fdatasync(*db); !r) return fail("fdatasync", r.error());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const WriterStats s1 = w.stats();
  const auto d = [&](std::uint64_t a, std::uint64_t b) { return static_cast<double>(b - a); };
  const double fds = static_cast<double>(ops);
  std::printf(
      "policy=0x%02x option=%d ops=%llu pages=%llu seconds=%.3f ops_per_s=%.1f in_place=%llu out_of_place=%llu "
      "node_per_fdatasync=%.3f meta_per_fdatasync=%.3f fdatasync_node=%.3f fdatasync_meta=%.3f checkpoints=%llu "
      "fsync_checkpoints=%llu\n",
      policy, option ? 1 : 0, static_cast<unsigned long long>(ops), static_cast<unsigned long long>(pages), secs,
      fds / secs, static_cast<unsigned long long>(s1.ipu.in_place() - s0.ipu.in_place()),
      static_cast<unsigned long long>(s1.ipu.out_of_place() - s0.ipu.out_of_place()),
      d(s0.node_blocks_written, s1.node_blocks_written) / fds, d(s0.meta_blocks_written, s1.meta_blocks_written) / fds,
      d(s0.ipu.fdatasync_node_blocks, s1.ipu.fdatasync_node_blocks) / fds,
      d(s0.ipu.fdatasync_meta_blocks, s1.ipu.fdatasync_meta_blocks) / fds,
      static_cast<unsigned long long>(s1.checkpoints - s0.checkpoints),
      static_cast<unsigned long long>(s1.ipu.fsync_checkpoints - s0.ipu.fsync_checkpoints));
  if (auto r = w.unmount(); !r) return fail("unmount", r.error());
  return 0;
}
