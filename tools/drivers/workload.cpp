// run_workload(): workloads through the filesystem engine, with the writer's
// counters and iostat over the run and per period (workload.hpp,
// docs/stats.md).
#include <cctype>
#include "f2fscore/drivers/workload.hpp"
#include "f2fscore/tools/common.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>

namespace f2fscore {

namespace {

constexpr std::uint32_t kBlk = 4096;

#if defined(__MINGW32__)  // GCC's "printf" is Microsoft's there; vsnprintf is mingw's C99 one
std::string fmtv(const char* f, ...) __attribute__((format(gnu_printf, 1, 2)));
#else
std::string fmtv(const char* f, ...) __attribute__((format(printf, 1, 2)));
#endif
std::string fmtv(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

std::uint64_t splitmix(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fill_pattern(std::vector<std::uint8_t>& b, std::size_t n, std::uint64_t seed) noexcept {
  std::uint64_t x = seed * 0x2545F4914F6CDD1Dull + 1;
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t v = splitmix(x);
    std::memcpy(b.data() + i, &v, std::min<std::size_t>(8, n - i));
  }
}

std::string join(const std::string& dir, std::string_view name) {
  std::string p = dir;
  if (p.empty() || p.back() != '/') p += '/';
  p += name;
  return p;
}

Error context(const Error& e, const std::string& what) {
  Error r = e;
  r.message = "workload: " + what + ": " + e.message;
  return r;
}

struct LatencyMerge {
  std::mutex mu;
  std::array<std::array<IostatLatency, kIostatPages>, kIostatLats> lat{};
  static void sink(const IostatSnapshot& p, void* ctx) {
    auto& m = *static_cast<LatencyMerge*>(ctx);
    std::lock_guard<std::mutex> g(m.mu);
    for (std::size_t l = 0; l < kIostatLats; ++l)
      for (std::size_t g2 = 0; g2 < kIostatPages; ++g2) {
        auto& t = m.lat[l][g2];
        const auto& x = p.latency[l][g2];
        t.sum_ns += x.sum_ns;
        t.count += x.count;
        t.peak_ns = std::max(t.peak_ns, x.peak_ns);
      }
  }
};

class Runner {
 public:
  Runner(Writer& w, const WorkloadSpec& s, Iostat* io, WorkloadReport& r)
      : w_(w), s_(s), io_(io), r_(r), buf_(std::max<std::size_t>(s.block_size, 2 * kBlk) + kBlk) {
    // The data of every write come from buffers made here, before the
    // measured phase: `random` from a window of a pool of random bytes
    // (the window chosen by the call's seed), `stamped` from a buffer of
    // zeros whose 16-byte block heads each call rewrites. Both start at a
    // 4 KiB boundary, so direct writes can go to the device from them.
    const std::size_t n = buf_.size();
    if (s_.data == WorkloadSpec::Data::stamped) {
      stamp_mem_.assign(n + kBlk, 0);
      stamp_ = align_up(stamp_mem_.data());
    } else {
      pool_mem_.resize(n + kPoolWindows * kBlk + kBlk);
      pool_ = align_up(pool_mem_.data());
      std::vector<std::uint8_t> tmp(n + kPoolWindows * kBlk);
      fill_pattern(tmp, tmp.size(), 0x5eed);
      std::memcpy(pool_, tmp.data(), tmp.size());
    }
  }

  Status run() {
    F2FSCORE_TRY(ensure_dir(s_.dir));
    F2FSCORE_TRY(setup());
    if (auto st = w_.sync(); !st) return make_error(context(st.error(), "sync after setup"));
    begin();
    Status st = measured();
    end();
    return st;
  }

 private:
  using Clock = std::chrono::steady_clock;

  // ---- Setup ----
  Status ensure_dir(const std::string& path) {
    if (path.empty() || path[0] != '/') return make_error(Errc::invalid_argument, "workload: directory must be absolute");
    std::string cur;
    std::size_t i = 1;
    while (i <= path.size()) {
      const std::size_t j = std::min(path.find('/', i), path.size());
      if (j > i) {
        cur += "/" + path.substr(i, j - i);
        if (auto l = w_.lookup(cur); !l) {
          if (l.error().code != Errc::not_found) return make_error(context(l.error(), "lookup " + cur));
          if (auto m = w_.mkdir(cur); !m) return make_error(context(m.error(), "mkdir " + cur));
        }
      }
      i = j + 1;
    }
    return {};
  }

  Result<nid_t> fresh_file(const std::string& path) {
    if (auto l = w_.lookup(path); l) {
      if (auto st = w_.unlink(path); !st) return make_error(context(st.error(), "unlink " + path));
    }
    auto c = w_.create(path);
    if (!c) return make_error(context(c.error(), "create " + path));
    return *c;
  }

  Status write_whole(nid_t ino, const std::string& path, std::uint64_t size, std::uint32_t bs) {
    for (std::uint64_t off = 0; off < size; off += bs) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(bs, size - off));
      if (auto x = w_.write(ino, off, std::span<const std::uint8_t>(fill(n, off / bs), n)); !x)
        return make_error(context(x.error(), fmtv("write %s at %" PRIu64, path.c_str(), off)));
    }
    return {};
  }

  Status setup() {
    switch (s_.kind) {
      case Workload::seqwrite:
      case Workload::fill: return {};
      case Workload::randwrite:
      case Workload::seqread:
      case Workload::randread: {
        path_ = join(s_.dir, s_.kind == Workload::randwrite ? "rand" : "read");
        auto f = fresh_file(path_);
        if (!f) return make_error(f.error());
        ino_ = *f;
        return write_whole(ino_, path_, s_.file_size, s_.block_size);
      }
      case Workload::overwrite: {
        path_ = join(s_.dir, "db");
        auto f = fresh_file(path_);
        if (!f) return make_error(f.error());
        ino_ = *f;
        F2FSCORE_TRY(write_whole(ino_, path_, s_.file_size, kBlk));
        if (auto st = w_.fsync(ino_); !st) return make_error(context(st.error(), "fsync " + path_));
        return {};
      }
      case Workload::sqlite: {
        path_ = join(s_.dir, "test.db");
        auto f = fresh_file(path_);
        if (!f) return make_error(f.error());
        ino_ = *f;
        F2FSCORE_TRY(write_whole(ino_, path_, s_.file_size, kBlk));
        if (auto st = w_.fsync(ino_); !st) return make_error(context(st.error(), "fsync " + path_));
        if (s_.journal == WorkloadSpec::Journal::wal) {
          wal_path_ = path_ + "-wal";
          auto wf = fresh_file(wal_path_);
          if (!wf) return make_error(wf.error());
          wal_ = *wf;
          fill_pattern(buf_, 32, 7);
          if (auto x = w_.write(wal_, 0, std::span<const std::uint8_t>(buf_.data(), 32)); !x)
            return make_error(context(x.error(), "write " + wal_path_));
          if (auto st = w_.fsync(wal_); !st) return make_error(context(st.error(), "fsync " + wal_path_));
        }
        return {};
      }
      case Workload::smallfiles: return ensure_dir(join(s_.dir, "d"));
    }
    return {};
  }

  // ---- Measuring ----
  void begin() {
    if (io_ && io_->enabled() && s_.reset_iostat) {
      io_->set_enabled(false);
      io_->set_enabled(true);
    }
    if (io_) {
      r_.iostat_enabled = io_->enabled();
      (void)io_->set_period_ms(s_.period_ms);
      io_->set_sink(&LatencyMerge::sink, &lat_);
      io_base_ = io_->snapshot();
      io_last_ = io_base_;
    }
    ws_base_ = w_.stats();
    ws_last_ = ws_base_;
    r_.space_before = w_.space();
    t0_ = Clock::now();
    last_sample_s_ = 0;
  }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  void sample(double now_s) {
    WorkloadPeriod p;
    p.start_s = last_sample_s_;
    p.end_s = now_s;
    p.ops = r_.ops - ops_last_;
    p.app_bytes_written = r_.app_bytes_written - aw_last_;
    p.app_bytes_read = r_.app_bytes_read - ar_last_;
    const WriterStats ws = w_.stats();
    p.writer = stats_delta(ws, ws_last_);
    ws_last_ = ws;
    if (io_) {
      const IostatSnapshot cur = io_->snapshot();
      for (std::size_t t = 0; t < kIostatTypes; ++t) p.iostat_bytes[t] = cur.bytes[t] - io_last_.bytes[t];
      io_last_ = cur;
    }
    p.latency_p50_ns = period_hist_.percentile_ns(50);
    p.latency_p99_ns = period_hist_.percentile_ns(99);
    p.latency_max_ns = period_hist_.max_ns();
    period_hist_ = LatencyHistogram{};
    ops_last_ = r_.ops;
    aw_last_ = r_.app_bytes_written;
    ar_last_ = r_.app_bytes_read;
    last_sample_s_ = now_s;
    r_.periods.push_back(p);
  }

  void end() {
    const double now = elapsed();
    r_.seconds = now;
    if (r_.periods.empty() || r_.ops != ops_last_) sample(now);
    r_.writer = stats_delta(w_.stats(), ws_base_);
    r_.space_after = w_.space();
    if (io_) {
      io_->set_sink(nullptr, nullptr);
      IostatSnapshot cur = io_->snapshot();
      for (std::size_t t = 0; t < kIostatTypes; ++t) {
        cur.bytes[t] -= io_base_.bytes[t];
        cur.count[t] -= io_base_.count[t];
        cur.completed[t] -= io_base_.completed[t];
      }
      std::lock_guard<std::mutex> g(lat_.mu);
      for (std::size_t l = 0; l < kIostatLats; ++l)
        for (std::size_t g2 = 0; g2 < kIostatPages; ++g2) {
          auto& t = cur.latency[l][g2];
          const auto& x = lat_.lat[l][g2];
          t.sum_ns += x.sum_ns;
          t.count += x.count;
          t.peak_ns = std::max(t.peak_ns, x.peak_ns);
        }
      r_.iostat = cur;
    }
  }

  bool out_of_time() const { return s_.runtime_s > 0 && elapsed() >= s_.runtime_s; }

  template <class F>
  auto timed(WorkloadOp op, F&& f) -> decltype(f()) {
    const auto a = Clock::now();
    auto res = f();
    const auto ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - a).count());
    r_.latency[static_cast<std::size_t>(op)].record(ns);
    period_hist_.record(ns);
    ++r_.ops;
    const double now = elapsed();
    if (now - last_sample_s_ >= static_cast<double>(s_.period_ms) / 1000.0) sample(now);
    return res;
  }

  static std::uint8_t* align_up(std::uint8_t* p) noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return p + ((kBlk - a % kBlk) % kBlk);
  }

  // The `n` bytes of a write with `seed` (at most buf_.size()): see the
  // constructor. Stamped (WorkloadSpec::Data::stamped): each 4 KiB
  // block's first 16 bytes are the seed and the block's index in the
  // write (little-endian), zeros after them, the heads rewritten in place.
  const std::uint8_t* fill(std::size_t n, std::uint64_t seed) noexcept {
    if (s_.data == WorkloadSpec::Data::stamped) {
      for (std::size_t i = 0; i < n; i += kBlk) {
        const std::uint64_t head[2] = {seed, i / kBlk};
        for (std::size_t k = 0; k < 16 && i + k < n; ++k)
          stamp_[i + k] = static_cast<std::uint8_t>(head[k / 8] >> (8 * (k % 8)));
      }
      return stamp_;
    }
    std::uint64_t x = seed;
    return pool_ + static_cast<std::size_t>(splitmix(x) % kPoolWindows) * kBlk;
  }

  Status do_write(nid_t ino, const std::string& path, std::uint64_t off, std::size_t n, std::uint64_t seed) {
    const std::uint8_t* data = fill(n, seed);
    WriteFlags fl;
    fl.direct = s_.direct;
    auto x = timed(WorkloadOp::write, [&] { return w_.write(ino, off, std::span<const std::uint8_t>(data, n), fl); });
    if (!x) return make_error(context(x.error(), fmtv("write %s at %" PRIu64, path.c_str(), off)));
    r_.app_bytes_written += *x;
    return {};
  }

  Status do_read(nid_t ino, const std::string& path, std::uint64_t off, std::size_t n) {
    auto x = timed(WorkloadOp::read, [&] { return w_.read(ino, off, std::span<std::uint8_t>(buf_.data(), n)); });
    if (!x) return make_error(context(x.error(), fmtv("read %s at %" PRIu64, path.c_str(), off)));
    r_.app_bytes_read += *x;
    return {};
  }

  Status do_sync(nid_t ino, const std::string& path, SyncMode m) {
    if (m == SyncMode::none) return {};
    const bool data = m == SyncMode::fdatasync;
    auto st = timed(data ? WorkloadOp::fdatasync : WorkloadOp::fsync,
                    [&] { return data ? w_.fdatasync(ino) : w_.fsync(ino); });
    if (!st) return make_error(context(st.error(), std::string(data ? "fdatasync " : "fsync ") + path));
    return {};
  }

  Status do_fs_sync() {
    auto st = timed(WorkloadOp::sync, [&] { return w_.sync(); });
    if (!st) return make_error(context(st.error(), "sync"));
    return {};
  }

  Status measured() {
    const std::uint64_t bs = s_.block_size;
    const std::uint64_t nblocks = std::max<std::uint64_t>(1, s_.file_size / bs);
    const std::uint64_t ops = s_.ops ? s_.ops : (s_.kind == Workload::sqlite ? 1000 : nblocks);
    std::uint64_t rng = s_.seed;
    switch (s_.kind) {
      case Workload::seqwrite: {
        path_ = join(s_.dir, "seq");
        auto f = timed(WorkloadOp::create, [&] { return fresh_file(path_); });
        if (!f) return make_error(f.error());
        ino_ = *f;
        for (std::uint64_t off = 0; off < s_.file_size && !out_of_time(); off += bs) {
          F2FSCORE_TRY(do_write(ino_, path_, off, static_cast<std::size_t>(std::min(bs, s_.file_size - off)), off / bs));
          F2FSCORE_TRY(do_sync(ino_, path_, s_.sync));
        }
        break;
      }
      case Workload::randwrite:
        for (std::uint64_t i = 0; i < ops && !out_of_time(); ++i) {
          const std::uint64_t off = (splitmix(rng) % nblocks) * bs;
          F2FSCORE_TRY(do_write(ino_, path_, off, static_cast<std::size_t>(bs), i + 1000));
          F2FSCORE_TRY(do_sync(ino_, path_, s_.sync));
        }
        break;
      case Workload::seqread:
        for (std::uint64_t i = 0; i < ops && !out_of_time(); ++i)
          F2FSCORE_TRY(do_read(ino_, path_, (i % nblocks) * bs, static_cast<std::size_t>(bs)));
        break;
      case Workload::randread:
        for (std::uint64_t i = 0; i < ops && !out_of_time(); ++i)
          F2FSCORE_TRY(do_read(ino_, path_, (splitmix(rng) % nblocks) * bs, static_cast<std::size_t>(bs)));
        break;
      case Workload::overwrite:
        // A fixed stride (97 blocks) rather than random offsets, so the
        // oracle program (tests/stats/oracle_workload.c) writes the same.
        for (std::uint64_t i = 0; i < ops && !out_of_time(); ++i) {
          F2FSCORE_TRY(do_write(ino_, path_, ((i * 97) % nblocks) * bs, static_cast<std::size_t>(bs), 1000 + i));
          F2FSCORE_TRY(do_sync(ino_, path_, s_.sync));
        }
        break;
      case Workload::sqlite: F2FSCORE_TRY(sqlite(ops, rng)); break;
      case Workload::smallfiles: {
        const std::string d = join(s_.dir, "d");
        std::uint32_t made = 0;
        for (; made < s_.files && !out_of_time(); ++made) {
          const std::string p = join(d, "f" + std::to_string(made));
          auto c = timed(WorkloadOp::create, [&] { return w_.create(p); });
          if (!c) return make_error(context(c.error(), "create " + p));
          if (s_.file_bytes) F2FSCORE_TRY(do_write(*c, p, 0, s_.file_bytes, made));
        }
        F2FSCORE_TRY(do_fs_sync());
        for (std::uint32_t i = 0; i < made; ++i) {
          const std::string p = join(d, "f" + std::to_string(i));
          auto st = timed(WorkloadOp::unlink, [&] { return w_.unlink(p); });
          if (!st) return make_error(context(st.error(), "unlink " + p));
        }
        break;
      }
      case Workload::fill: {
        const std::string d = join(s_.dir, "fill");
        F2FSCORE_TRY(ensure_dir(d));
        for (std::uint64_t i = 0; w_.space().utilization() < s_.fill_percent && !out_of_time(); ++i) {
          const std::string p = join(d, "f" + std::to_string(i));
          auto c = timed(WorkloadOp::create, [&] { return fresh_file(p); });
          if (!c) {
            if (c.error().code == Errc::no_space) { r_.stopped_no_space = true; break; }
            return make_error(c.error());
          }
          bool full = false;
          for (std::uint64_t off = 0; off < s_.file_size; off += bs) {
            auto st = do_write(*c, p, off, static_cast<std::size_t>(std::min(bs, s_.file_size - off)), i * 131 + off / bs);
            if (!st) {
              if (st.error().code == Errc::no_space) { full = true; break; }
              return st;
            }
          }
          if (full) { r_.stopped_no_space = true; break; }
          F2FSCORE_TRY(do_sync(*c, p, s_.sync));
        }
        break;
      }
    }
    if (s_.sync_at_end) F2FSCORE_TRY(do_fs_sync());
    return {};
  }

  // SQLite-like transactions (docs/stats.md): page size 4 KiB.
  Status sqlite(std::uint64_t txns, std::uint64_t& rng) {
    const std::uint64_t pages = std::max<std::uint64_t>(1, s_.file_size / kBlk);
    const bool wal = s_.journal == WorkloadSpec::Journal::wal;
    constexpr std::uint64_t kFrame = 24 + kBlk, kWalHeader = 32;
    std::uint64_t frames = 0;
    std::set<std::uint64_t> in_wal;
    const std::string jpath = path_ + "-journal";
    for (std::uint64_t t = 0; t < txns && !out_of_time(); ++t) {
      std::vector<std::uint64_t> pg;
      for (std::uint32_t k = 0; k < s_.pages_per_txn; ++k) pg.push_back(splitmix(rng) % pages);
      if (wal) {
        for (std::uint64_t p : pg) {
          F2FSCORE_TRY(do_write(wal_, wal_path_, kWalHeader + frames * kFrame, kFrame, t * 7 + p));
          ++frames;
          in_wal.insert(p);
        }
        F2FSCORE_TRY(do_sync(wal_, wal_path_, s_.sync));  // commit (synchronous=FULL)
        if (frames >= s_.wal_checkpoint_pages) {
          // WAL checkpoint: pages into the database, database synced, the
          // WAL restarted (its header rewritten, frames overwritten).
          for (std::uint64_t p : in_wal) F2FSCORE_TRY(do_write(ino_, path_, p * kBlk, kBlk, t * 13 + p));
          F2FSCORE_TRY(do_sync(ino_, path_, s_.sync));
          F2FSCORE_TRY(do_write(wal_, wal_path_, 0, kWalHeader, t));
          F2FSCORE_TRY(do_sync(wal_, wal_path_, s_.sync));
          frames = 0;
          in_wal.clear();
        }
      } else {
        auto j = timed(WorkloadOp::create, [&] { return w_.create(jpath); });
        if (!j) return make_error(context(j.error(), "create " + jpath));
        F2FSCORE_TRY(do_write(*j, jpath, 0, 512, t));
        std::uint64_t off = 512;
        for (std::uint64_t p : pg) {
          F2FSCORE_TRY(do_write(*j, jpath, off, 4 + kBlk + 4, t * 3 + p));
          off += 4 + kBlk + 4;
        }
        F2FSCORE_TRY(do_sync(*j, jpath, s_.sync));
        for (std::uint64_t p : pg) F2FSCORE_TRY(do_write(ino_, path_, p * kBlk, kBlk, t * 5 + p));
        F2FSCORE_TRY(do_sync(ino_, path_, s_.sync));
        auto st = timed(WorkloadOp::unlink, [&] { return w_.unlink(jpath); });
        if (!st) return make_error(context(st.error(), "unlink " + jpath));
      }
    }
    return {};
  }

  Writer& w_;
  const WorkloadSpec& s_;
  Iostat* io_;
  WorkloadReport& r_;
  std::vector<std::uint8_t> buf_;  // reads
  static constexpr std::size_t kPoolWindows = 256;  // windows of the random pool, 4 KiB apart
  std::vector<std::uint8_t> pool_mem_, stamp_mem_;
  std::uint8_t* pool_ = nullptr;   // random: buf_.size() + kPoolWindows x 4 KiB, 4 KiB aligned
  std::uint8_t* stamp_ = nullptr;  // stamped: buf_.size() bytes, 4 KiB aligned
  std::string path_, wal_path_;
  nid_t ino_ = 0, wal_ = 0;
  Clock::time_point t0_;
  double last_sample_s_ = 0;
  LatencyHistogram period_hist_;
  WriterStats ws_base_, ws_last_;
  IostatSnapshot io_base_, io_last_;
  LatencyMerge lat_;
  std::uint64_t ops_last_ = 0, aw_last_ = 0, ar_last_ = 0;
};

}  // namespace

std::string_view workload_name(Workload w) noexcept {
  switch (w) {
    case Workload::seqwrite: return "seqwrite";
    case Workload::randwrite: return "randwrite";
    case Workload::seqread: return "seqread";
    case Workload::randread: return "randread";
    case Workload::overwrite: return "overwrite";
    case Workload::sqlite: return "sqlite";
    case Workload::smallfiles: return "smallfiles";
    case Workload::fill: return "fill";
  }
  return "?";
}

Result<Workload> parse_workload(std::string_view s) {
  for (auto w : {Workload::seqwrite, Workload::randwrite, Workload::seqread, Workload::randread, Workload::overwrite,
                 Workload::sqlite, Workload::smallfiles, Workload::fill})
    if (s == workload_name(w)) return w;
  return make_error(Errc::invalid_argument, "unknown workload '" + std::string(s) +
                                                "' (seqwrite, randwrite, seqread, randread, overwrite, sqlite, "
                                                "smallfiles, fill)");
}

std::string_view sync_mode_name(SyncMode s) noexcept {
  switch (s) {
    case SyncMode::none: return "none";
    case SyncMode::fsync: return "fsync";
    case SyncMode::fdatasync: return "fdatasync";
  }
  return "?";
}

Result<SyncMode> parse_sync_mode(std::string_view s) {
  for (auto m : {SyncMode::none, SyncMode::fsync, SyncMode::fdatasync})
    if (s == sync_mode_name(m)) return m;
  return make_error(Errc::invalid_argument, "unknown sync mode '" + std::string(s) + "' (none, fsync, fdatasync)");
}

std::string_view workload_op_name(WorkloadOp op) noexcept {
  static constexpr std::string_view names[kWorkloadOps] = {"write", "read", "fsync", "fdatasync",
                                                           "create", "unlink", "sync"};
  const auto i = static_cast<std::size_t>(op);
  return i < kWorkloadOps ? names[i] : "?";
}

WriterStats stats_delta(const WriterStats& a, const WriterStats& b) noexcept {
  WriterStats d;
  d.data_blocks_written = a.data_blocks_written - b.data_blocks_written;
  d.node_blocks_written = a.node_blocks_written - b.node_blocks_written;
  d.checkpoints = a.checkpoints - b.checkpoints;
  d.segments_allocated = a.segments_allocated - b.segments_allocated;
  d.meta_blocks_written = a.meta_blocks_written - b.meta_blocks_written;
  d.discards = a.discards - b.discards;
  d.recovered_nodes = a.recovered_nodes - b.recovered_nodes;
  for (std::size_t i = 0; i < kIpuReasonCount; ++i) d.ipu.data_blocks[i] = a.ipu.data_blocks[i] - b.ipu.data_blocks[i];
  d.ipu.fsyncs = a.ipu.fsyncs - b.ipu.fsyncs;
  d.ipu.fdatasyncs = a.ipu.fdatasyncs - b.ipu.fdatasyncs;
  d.ipu.fsync_node_blocks = a.ipu.fsync_node_blocks - b.ipu.fsync_node_blocks;
  d.ipu.fsync_meta_blocks = a.ipu.fsync_meta_blocks - b.ipu.fsync_meta_blocks;
  d.ipu.fdatasync_node_blocks = a.ipu.fdatasync_node_blocks - b.ipu.fdatasync_node_blocks;
  d.ipu.fdatasync_meta_blocks = a.ipu.fdatasync_meta_blocks - b.ipu.fdatasync_meta_blocks;
  d.ipu.fsync_checkpoints = a.ipu.fsync_checkpoints - b.ipu.fsync_checkpoints;
  d.gc.foreground_runs = a.gc.foreground_runs - b.gc.foreground_runs;
  d.gc.background_runs = a.gc.background_runs - b.gc.background_runs;
  d.gc.victims = a.gc.victims - b.gc.victims;
  d.gc.data_blocks_moved = a.gc.data_blocks_moved - b.gc.data_blocks_moved;
  d.gc.node_blocks_moved = a.gc.node_blocks_moved - b.gc.node_blocks_moved;
  d.gc.sections_freed = a.gc.sections_freed - b.gc.sections_freed;
  d.gc.ssr_blocks = a.gc.ssr_blocks - b.gc.ssr_blocks;
  d.gc.lfs_blocks = a.gc.lfs_blocks - b.gc.lfs_blocks;
  return d;
}

std::uint64_t WorkloadReport::device_bytes_written() const noexcept {
  return (writer.data_blocks_written + writer.node_blocks_written + writer.meta_blocks_written) * kBlk;
}

double WorkloadReport::write_amplification() const noexcept {
  return app_bytes_written ? static_cast<double>(device_bytes_written()) / static_cast<double>(app_bytes_written) : 0;
}

std::uint64_t WorkloadReport::iostat_device_bytes_written() const noexcept {
  if (!iostat_enabled) return 0;
  std::uint64_t n = 0;
  for (IostatType t : {IostatType::app_direct_io, IostatType::fs_data_io, IostatType::fs_cdata_io,
                       IostatType::fs_node_io, IostatType::fs_meta_io, IostatType::fs_gc_data_io,
                       IostatType::fs_gc_node_io, IostatType::fs_cp_data_io, IostatType::fs_cp_node_io,
                       IostatType::fs_cp_meta_io})
    n += iostat.bytes_of(t);
  return n;
}

Result<WorkloadReport> run_workload(Writer& w, const WorkloadSpec& spec, Iostat* iostat) {
  if (spec.block_size == 0) return make_error(Errc::invalid_argument, "workload: block size 0");
  if (spec.kind != Workload::smallfiles && spec.file_size == 0)
    return make_error(Errc::invalid_argument, "workload: file size 0");
  if (spec.direct && (spec.block_size % kBlk != 0 || spec.file_size % kBlk != 0))
    return make_error(Errc::invalid_argument, "workload: direct I/O needs 4 KiB multiples of block and file size");
  if (spec.fill_percent > 100) return make_error(Errc::invalid_argument, "workload: fill percent over 100");
  if (spec.period_ms < Iostat::kMinPeriodMs || spec.period_ms > Iostat::kMaxPeriodMs)
    return make_error(Errc::invalid_argument, "workload: period outside [100, 8640000] ms");
  if (spec.kind == Workload::sqlite && spec.pages_per_txn == 0)
    return make_error(Errc::invalid_argument, "workload: sqlite needs at least one page per transaction");
  WorkloadReport r;
  r.spec = spec;
  Runner run(w, spec, iostat, r);
  F2FSCORE_TRY(run.run());
  return r;
}

// ---- Reports ----------------------------------------------------------------

namespace {

double per(std::uint64_t a, std::uint64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; }
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
double mib(std::uint64_t b) { return static_cast<double>(b) / 1048576.0; }

std::string describe(const WorkloadSpec& s) {
  std::string d = std::string(workload_name(s.kind)) + " in " + s.dir;
  switch (s.kind) {
    case Workload::smallfiles: d += fmtv(": %u files of %u bytes, created, synced, deleted", s.files, s.file_bytes); break;
    case Workload::fill: d += fmtv(": files of %" PRIu64 " bytes to %u%% utilization", s.file_size, s.fill_percent); break;
    case Workload::sqlite:
      d += fmtv(": database %" PRIu64 " bytes, %s journal, %u pages per transaction", s.file_size,
                s.journal == WorkloadSpec::Journal::wal ? "WAL" : "rollback (DELETE)", s.pages_per_txn);
      break;
    default: d += fmtv(": file %" PRIu64 " bytes, %u-byte calls", s.file_size, s.block_size); break;
  }
  if (s.ops) d += fmtv(", %" PRIu64 " %s", s.ops, s.kind == Workload::sqlite ? "transactions" : "calls");
  if (s.sync != SyncMode::none) d += ", " + std::string(sync_mode_name(s.sync)) + (s.kind == Workload::sqlite ? " to commit" : " after each write");
  if (s.direct) d += ", direct";
  if (s.sync_at_end) d += ", then sync";
  return d;
}

}  // namespace

std::string format_workload_report(const WorkloadReport& r) {
  const WriterStats& ws = r.writer;
  std::string o;
  o += "workload: " + describe(r.spec) + "\n";
  o += fmtv("run: %.3f s, %" PRIu64 " calls, %.0f calls/s%s\n", r.seconds, r.ops, r.ops_per_second(),
            r.stopped_no_space ? " (stopped: no space)" : "");
  o += fmtv("application: %" PRIu64 " bytes written (%.1f MiB/s), %" PRIu64 " bytes read (%.1f MiB/s)\n",
            r.app_bytes_written, r.seconds > 0 ? mib(r.app_bytes_written) / r.seconds : 0, r.app_bytes_read,
            r.seconds > 0 ? mib(r.app_bytes_read) / r.seconds : 0);
  o += fmtv("device: %" PRIu64 " bytes written: data %" PRIu64 ", node %" PRIu64 ", meta %" PRIu64
            " blocks of 4 KiB; write amplification %.3f\n",
            r.device_bytes_written(), ws.data_blocks_written, ws.node_blocks_written, ws.meta_blocks_written,
            r.write_amplification());
  if (r.iostat_enabled && r.app_bytes_written)
    o += fmtv("device (iostat): %" PRIu64 " bytes written; write amplification %.3f\n", r.iostat_device_bytes_written(),
              per(r.iostat_device_bytes_written(), r.app_bytes_written));
  o += fmtv("latency (us)   %9s %10s %10s %10s %10s %10s %10s %10s\n", "calls", "min", "avg", "p50", "p90", "p99",
            "p99.9", "max");
  for (std::size_t i = 0; i < kWorkloadOps; ++i) {
    const auto& h = r.latency[i];
    if (!h.count()) continue;
    o += fmtv("  %-12s %9" PRIu64 " %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n",
              std::string(workload_op_name(static_cast<WorkloadOp>(i))).c_str(), h.count(), us(h.min_ns()),
              h.mean_ns() / 1000.0, us(h.percentile_ns(50)), us(h.percentile_ns(90)), us(h.percentile_ns(99)),
              us(h.percentile_ns(99.9)), us(h.max_ns()));
  }
  o += fmtv("IPU: %" PRIu64 " data blocks in place, %" PRIu64 " out of place\n", ws.ipu.in_place(), ws.ipu.out_of_place());
  for (std::size_t i = 0; i < kIpuReasonCount; ++i)
    if (ws.ipu.data_blocks[i]) o += fmtv("  %-22s %" PRIu64 "\n", to_string(static_cast<IpuReason>(i)), ws.ipu.data_blocks[i]);
  o += fmtv("fsync: %" PRIu64 " calls, %" PRIu64 " node and %" PRIu64 " meta blocks (%.2f and %.2f per call), %" PRIu64
            " took a checkpoint\n",
            ws.ipu.fsyncs, ws.ipu.fsync_node_blocks, ws.ipu.fsync_meta_blocks, per(ws.ipu.fsync_node_blocks, ws.ipu.fsyncs),
            per(ws.ipu.fsync_meta_blocks, ws.ipu.fsyncs), ws.ipu.fsync_checkpoints);
  o += fmtv("fdatasync: %" PRIu64 " calls, %" PRIu64 " node and %" PRIu64 " meta blocks (%.2f and %.2f per call)\n",
            ws.ipu.fdatasyncs, ws.ipu.fdatasync_node_blocks, ws.ipu.fdatasync_meta_blocks,
            per(ws.ipu.fdatasync_node_blocks, ws.ipu.fdatasyncs), per(ws.ipu.fdatasync_meta_blocks, ws.ipu.fdatasyncs));
  o += fmtv("allocation: LFS %" PRIu64 " blocks, SSR %" PRIu64 " blocks, %" PRIu64 " segments opened\n", ws.gc.lfs_blocks,
            ws.gc.ssr_blocks, ws.segments_allocated);
  o += fmtv("GC: %" PRIu64 " foreground and %" PRIu64 " background runs, %" PRIu64 " victims, %" PRIu64 " data and %" PRIu64
            " node blocks moved, %" PRIu64 " sections freed\n",
            ws.gc.foreground_runs, ws.gc.background_runs, ws.gc.victims, ws.gc.data_blocks_moved, ws.gc.node_blocks_moved,
            ws.gc.sections_freed);
  o += fmtv("checkpoints: %" PRIu64 ", discards: %" PRIu64 "\n", ws.checkpoints, ws.discards);
  for (const auto* sp : {&r.space_before, &r.space_after}) {
    o += fmtv("space %s: utilization %u%% (%" PRIu64 " of %" PRIu64 " blocks), sections: %u free, %u dirty, %u full, "
              "%u reserved, of %u\n",
              sp == &r.space_before ? "before" : "after ", sp->utilization(), sp->valid_blocks, sp->user_blocks,
              sp->free_sections, sp->dirty_sections, sp->full_sections, sp->reserved_sections, sp->main_sections);
  }
  if (r.iostat_enabled) {
    o += "iostat_info:\n";
    IostatSnapshot s = r.iostat;
    s.enabled = true;
    o += format_iostat_info(s, static_cast<std::int64_t>(std::time(nullptr)));
    o += format_iostat_latency(s);
  }
  o += fmtv("periods (%u ms): %8s %8s %9s %9s %9s %9s %9s %9s\n", r.spec.period_ms, "end s", "calls/s", "app MiB/s",
            "data blk", "node blk", "meta blk", "p50 us", "p99 us");
  for (const auto& p : r.periods) {
    const double dt = p.end_s - p.start_s;
    o += fmtv("                   %8.2f %8.0f %9.2f %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9.1f %9.1f\n", p.end_s,
              dt > 0 ? static_cast<double>(p.ops) / dt : 0, dt > 0 ? mib(p.app_bytes_written + p.app_bytes_read) / dt : 0,
              p.writer.data_blocks_written, p.writer.node_blocks_written, p.writer.meta_blocks_written,
              us(p.latency_p50_ns), us(p.latency_p99_ns));
  }
  return o;
}

namespace {

// A gnuplot double-quoted string: '"' and '\\' escaped with a backslash.
std::string gnuplot_str(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c < 0x20) o += fmtv("\\%03o", c);  // gnuplot takes octal escapes
    else o += static_cast<char>(c);
  }
  return o + "\"";
}

using tools::Json;

Json writer_json(const WriterStats& ws) {
  Json by_reason = Json::object();
  for (std::size_t i = 0; i < kIpuReasonCount; ++i) by_reason[to_string(static_cast<IpuReason>(i))] = ws.ipu.data_blocks[i];
  return {{"data_blocks_written", ws.data_blocks_written},
          {"node_blocks_written", ws.node_blocks_written},
          {"meta_blocks_written", ws.meta_blocks_written},
          {"checkpoints", ws.checkpoints},
          {"segments_allocated", ws.segments_allocated},
          {"discards", ws.discards},
          {"recovered_nodes", ws.recovered_nodes},
          {"ipu",
           {{"in_place", ws.ipu.in_place()},
            {"out_of_place", ws.ipu.out_of_place()},
            {"by_reason", std::move(by_reason)},
            {"fsyncs", ws.ipu.fsyncs},
            {"fdatasyncs", ws.ipu.fdatasyncs},
            {"fsync_node_blocks", ws.ipu.fsync_node_blocks},
            {"fsync_meta_blocks", ws.ipu.fsync_meta_blocks},
            {"fdatasync_node_blocks", ws.ipu.fdatasync_node_blocks},
            {"fdatasync_meta_blocks", ws.ipu.fdatasync_meta_blocks},
            {"fsync_checkpoints", ws.ipu.fsync_checkpoints}}},
          {"gc",
           {{"foreground_runs", ws.gc.foreground_runs},
            {"background_runs", ws.gc.background_runs},
            {"victims", ws.gc.victims},
            {"data_blocks_moved", ws.gc.data_blocks_moved},
            {"node_blocks_moved", ws.gc.node_blocks_moved},
            {"sections_freed", ws.gc.sections_freed},
            {"ssr_blocks", ws.gc.ssr_blocks},
            {"lfs_blocks", ws.gc.lfs_blocks}}}};
}

Json space_json(const SpaceState& s) {
  return {{"utilization", s.utilization()},         {"valid_blocks", s.valid_blocks},
          {"user_blocks", s.user_blocks},           {"main_sections", s.main_sections},
          {"free_sections", s.free_sections},       {"dirty_sections", s.dirty_sections},
          {"full_sections", s.full_sections},       {"reserved_sections", s.reserved_sections},
          {"overprov_sections", s.overprov_sections}, {"segs_per_sec", s.segs_per_sec}};
}

}  // namespace

std::string workload_report_json(const WorkloadReport& r) {
  const auto& s = r.spec;
  Json j;
  j["workload"] = std::string(workload_name(s.kind));
  j["description"] = describe(s);
  j["spec"] = {{"dir", s.dir},
               {"file_size", s.file_size},
               {"block_size", s.block_size},
               {"ops", s.ops},
               {"sync", std::string(sync_mode_name(s.sync))},
               {"sync_at_end", s.sync_at_end},
               {"direct", s.direct},
               {"files", s.files},
               {"file_bytes", s.file_bytes},
               {"fill_percent", s.fill_percent},
               {"journal", s.journal == WorkloadSpec::Journal::wal ? "wal" : "rollback"},
               {"pages_per_txn", s.pages_per_txn},
               {"period_ms", s.period_ms},
               {"seed", s.seed},
               {"data", s.data == WorkloadSpec::Data::stamped ? "stamped" : "random"}};
  j["seconds"] = r.seconds;
  j["calls"] = r.ops;
  j["calls_per_second"] = r.ops_per_second();
  j["stopped_no_space"] = r.stopped_no_space;
  j["app_bytes_written"] = r.app_bytes_written;
  j["app_bytes_read"] = r.app_bytes_read;
  j["device_bytes_written"] = r.device_bytes_written();
  j["write_amplification"] = r.write_amplification();
  Json lat = Json::object();
  for (std::size_t i = 0; i < kWorkloadOps; ++i) {
    const auto& h = r.latency[i];
    if (!h.count()) continue;
    lat[std::string(workload_op_name(static_cast<WorkloadOp>(i)))] = {
        {"calls", h.count()},
        {"min_us", us(h.min_ns())},
        {"avg_us", h.mean_ns() / 1000.0},
        {"p50_us", us(h.percentile_ns(50))},
        {"p90_us", us(h.percentile_ns(90))},
        {"p99_us", us(h.percentile_ns(99))},
        {"p99_9_us", us(h.percentile_ns(99.9))},
        {"max_us", us(h.max_ns())}};
  }
  j["latency"] = std::move(lat);
  j["writer"] = writer_json(r.writer);
  j["space_before"] = space_json(r.space_before);
  j["space_after"] = space_json(r.space_after);
  if (r.iostat_enabled) {
    IostatSnapshot sn = r.iostat;
    sn.enabled = true;
    j["iostat_device_bytes_written"] = r.iostat_device_bytes_written();
    // The library renders iostat as a JSON text (iostat_json()); kept as
    // the same value here.
    j["iostat"] = Json::parse(iostat_json(sn, static_cast<std::int64_t>(std::time(nullptr))));
  }
  Json periods = Json::array();
  for (const auto& p : r.periods) {
    Json o = {{"start_s", p.start_s},
              {"end_s", p.end_s},
              {"calls", p.ops},
              {"app_bytes_written", p.app_bytes_written},
              {"app_bytes_read", p.app_bytes_read},
              {"p50_us", us(p.latency_p50_ns)},
              {"p99_us", us(p.latency_p99_ns)},
              {"max_us", us(p.latency_max_ns)},
              {"writer", writer_json(p.writer)}};
    if (r.iostat_enabled) {
      Json b = Json::object();
      for (std::size_t t = 0; t < kIostatTypes; ++t)
        b[std::string(iostat_type_key(static_cast<IostatType>(t)))] = p.iostat_bytes[t];
      o["iostat_bytes"] = std::move(b);
    }
    periods.push_back(std::move(o));
  }
  j["periods"] = std::move(periods);
  return tools::json_line_spaced(j);
}

std::optional<PlotFormat> plot_format(std::string_view path) {
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.size() < 5) return std::nullopt;  // a name before the extension
  std::string ext(name.substr(name.size() - 4));
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg") return PlotFormat::svg;
  if (ext == ".png") return PlotFormat::png;
  return std::nullopt;
}

std::string workload_gnuplot_script(const WorkloadReport& r, std::string_view path, PlotFormat format) {
  std::string o = "$data << EOD\n# end_s calls_per_s app_MiB_s data_MiB_s node_MiB_s meta_MiB_s p99_us\n";
  for (const auto& p : r.periods) {
    const double dt = p.end_s - p.start_s > 0 ? p.end_s - p.start_s : 1e-9;
    o += fmtv("%.4f %.2f %.4f %.4f %.4f %.4f %.2f\n", p.end_s, static_cast<double>(p.ops) / dt,
              mib(p.app_bytes_written + p.app_bytes_read) / dt, mib(p.writer.data_blocks_written * kBlk) / dt,
              mib(p.writer.node_blocks_written * kBlk) / dt, mib(p.writer.meta_blocks_written * kBlk) / dt,
              us(p.latency_p99_ns));
  }
  o += "EOD\n";
  o += format == PlotFormat::png ? "set terminal pngcairo size 900,600 background rgb 'white'\n"
                                 : "set terminal svg size 900,600 dynamic background rgb 'white'\n";
  o += "set output " + gnuplot_str(path) + "\n";
  o += "set multiplot layout 2,1 title " + gnuplot_str("f2fscore-io fs: " + describe(r.spec)) + " font ',10'\n";
  o += fmtv("set xlabel 'seconds (periods of %u ms)'\nset grid\nset key outside right\n", r.spec.period_ms);
  o += "set ylabel 'calls/s'\nset y2label 'p99 latency (us)'\nset y2tics\nset ytics nomirror\n";
  o += "plot $data using 1:2 with linespoints title 'calls/s', '' using 1:7 axes x1y2 with linespoints title 'p99 us'\n";
  o += "unset y2label\nunset y2tics\nset ytics mirror\nset ylabel 'MiB/s'\n";
  o += "plot $data using 1:3 with linespoints title 'application', '' using 1:4 with linespoints title 'data', "
       "'' using 1:5 with linespoints title 'node', '' using 1:6 with linespoints title 'meta'\n";
  o += "unset multiplot\n";
  return o;
}

}  // namespace f2fscore
