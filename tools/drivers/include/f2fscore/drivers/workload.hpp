// Workloads through the filesystem engine: sequential and random writes and
// reads of a file, overwrites followed by fsync/fdatasync, an SQLite-like
// pattern (WAL or rollback journal), many small files created and deleted,
// a fill to a target utilization. run_workload() drives a mounted Writer,
// times every call and samples the writer's counters (WriterStats) and, when
// the Writer sits on an IostatDevice, the kernel-style iostat, over the run
// and per period. f2fscore-io's `fs` mode is a thin front end over it;
// docs/stats.md describes the report and what each number means.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "f2fscore/drivers/io_job.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/result.hpp"
#include "f2fscore/writer.hpp"

namespace f2fscore {

enum class Workload : std::uint8_t {
  seqwrite,    ///< one file written front to back in block_size calls
  randwrite,   ///< a file of file_size (written in setup), then `ops` writes at random block_size-aligned offsets
  seqread,     ///< a file of file_size (written and synced in setup), then read front to back
  randread,    ///< the same, `ops` reads at random aligned offsets
  overwrite,   ///< a file of file_size in 4 KiB writes + fsync (setup), then `ops` writes of block_size at
               ///< block (i * 97) mod blocks, each followed by `sync` (default fdatasync)
  sqlite,      ///< SQLite-like transactions on a database and its WAL or rollback journal (see Journal)
  smallfiles,  ///< `files` files of file_bytes created in <dir>/d, sync, all deleted, sync
  fill,        ///< files of file_size written until utilization reaches fill_percent
};
std::string_view workload_name(Workload w) noexcept;
/// Parses the names above. Errors: Errc::invalid_argument naming the choices.
Result<Workload> parse_workload(std::string_view s);

enum class SyncMode : std::uint8_t { none, fsync, fdatasync };
std::string_view sync_mode_name(SyncMode s) noexcept;
Result<SyncMode> parse_sync_mode(std::string_view s);

struct WorkloadSpec {
  Workload kind = Workload::seqwrite;
  std::string dir = "/";  ///< directory of the workload's files (made if missing)
  /// Bytes of the file (seqwrite, randwrite, seqread, randread, overwrite),
  /// of the database (sqlite), of each file (fill).
  std::uint64_t file_size = 64ull << 20;
  std::uint32_t block_size = 1u << 20;  ///< bytes per write()/read() call
  /// Calls (randwrite, randread, overwrite) or transactions (sqlite);
  /// 0: file_size / block_size (sqlite: 1000).
  std::uint64_t ops = 0;
  /// After each write call (seqwrite, randwrite, overwrite); sqlite: how
  /// it syncs its journal and database (none: synchronous=OFF).
  SyncMode sync = SyncMode::none;
  bool sync_at_end = true;  ///< Writer::sync() when the workload is done (the measured "then sync")
  bool direct = false;      ///< WriteFlags::direct (block_size and offsets 4 KiB multiples)
  std::uint32_t files = 5000;       ///< smallfiles
  std::uint32_t file_bytes = 1024;  ///< smallfiles: bytes per file
  std::uint32_t fill_percent = 80;  ///< fill: target utilization (valid blocks / user blocks), percent
  /// sqlite: WAL (frames of 24 + 4096 bytes appended to <db>-wal, the WAL
  /// checkpointed into the database every wal_checkpoint_pages frames and
  /// rewritten from its start), or a rollback journal (DELETE mode: the
  /// journal created, original pages written and synced, the database
  /// written and synced, the journal deleted).
  enum class Journal : std::uint8_t { wal, rollback } journal = Journal::wal;
  std::uint32_t pages_per_txn = 2;          ///< sqlite: 4 KiB pages changed per transaction
  std::uint32_t wal_checkpoint_pages = 1000;  ///< sqlite: SQLite's wal_autocheckpoint default
  double runtime_s = 0;     ///< >0: stop the measured phase after this many seconds
  std::uint32_t period_ms = 3000;  ///< sampling period of the per-period series (iostat_period_ms)
  std::uint64_t seed = 1;   ///< random offsets and data
  /// Content of written blocks. random: a splitmix64 stream per call
  /// (incompressible). stamped: each 4 KiB block starts with 16 bytes, the
  /// call's pattern seed and the block's index in the call (64-bit
  /// little-endian each), and is zero after them: cheap to generate and
  /// compressible, for images kept on a compressing file system.
  enum class Data : std::uint8_t { random, stamped } data = Data::random;
  /// When the Writer's iostat is on: reset it after the setup phase (off
  /// then on, as writing 0 then 1 to iostat_enable), so the run's counters
  /// start at zero.
  bool reset_iostat = true;
};

/// The timed calls.
enum class WorkloadOp : std::uint8_t { write, read, fsync, fdatasync, create, unlink, sync, count_ };
inline constexpr std::size_t kWorkloadOps = static_cast<std::size_t>(WorkloadOp::count_);
std::string_view workload_op_name(WorkloadOp op) noexcept;

/// `after` minus `before`, field by field (counters since mount only grow).
WriterStats stats_delta(const WriterStats& after, const WriterStats& before) noexcept;

/// One sampling period: counters are deltas over [start_s, end_s).
struct WorkloadPeriod {
  double start_s = 0, end_s = 0;  ///< seconds since the measured phase began
  std::uint64_t ops = 0;
  std::uint64_t app_bytes_written = 0, app_bytes_read = 0;
  WriterStats writer;
  std::array<std::uint64_t, kIostatTypes> iostat_bytes{};  ///< zero when iostat is off
  std::uint64_t latency_p50_ns = 0, latency_p99_ns = 0, latency_max_ns = 0;  ///< all calls of the period
};

struct WorkloadReport {
  WorkloadSpec spec;
  double seconds = 0;  ///< the measured phase (setup excluded)
  std::uint64_t ops = 0;  ///< timed calls
  bool stopped_no_space = false;  ///< fill: the volume filled (Errc::no_space) before the target
  std::uint64_t app_bytes_written = 0, app_bytes_read = 0;  ///< bytes passed to write()/returned by read()
  std::vector<LatencyHistogram> latency = std::vector<LatencyHistogram>(kWorkloadOps);  ///< by WorkloadOp
  WriterStats writer;  ///< over the measured phase
  SpaceState space_before, space_after;
  bool iostat_enabled = false;
  IostatSnapshot iostat;  ///< over the measured phase (latency: every period merged)
  std::vector<WorkloadPeriod> periods;

  /// 4 KiB blocks the writer wrote (data + node + meta) times 4096.
  std::uint64_t device_bytes_written() const noexcept;
  /// device_bytes_written() / app_bytes_written (0 when nothing was written).
  double write_amplification() const noexcept;
  /// Bytes of every device write iostat saw (fs data/node/meta, gc, cp, and
  /// direct application writes); 0 when iostat is off.
  std::uint64_t iostat_device_bytes_written() const noexcept;
  double ops_per_second() const noexcept { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

/// Runs `spec` on the mounted writer `w`: the setup phase (files the
/// workload needs, then Writer::sync()), then the measured phase. `iostat`:
/// the Iostat of the IostatDevice under `w` (null: no iostat report).
/// Errors: Errc::invalid_argument for a spec that cannot run (zero sizes,
/// unaligned direct I/O, fill_percent over 100), else the writer's error
/// with the call that failed.
Result<WorkloadReport> run_workload(Writer& w, const WorkloadSpec& spec, Iostat* iostat = nullptr);

/// The report as text: the run, latency percentiles per call, IPU by reason,
/// node/meta blocks per fsync and fdatasync, allocation, GC, checkpoints,
/// write amplification, space; iostat_info (kernel layout) and the latency
/// table when iostat was on; the per-period series.
std::string format_workload_report(const WorkloadReport& r);
/// The same as one JSON object.
std::string workload_report_json(const WorkloadReport& r);
/// Image formats of the plot, chosen by the output name's extension.
enum class PlotFormat : std::uint8_t { svg, png };
/// The format a plot named `path` gets: its file name ends in ".svg" or
/// ".png" (any case) after at least one other character; std::nullopt for
/// any other name.
std::optional<PlotFormat> plot_format(std::string_view path);
/// A gnuplot script (data inline) drawing the per-period series into
/// `path` as `format` (gnuplot's svg or pngcairo terminal): ops/s, and MiB/s
/// of application writes and of the device's data, node and meta writes.
std::string workload_gnuplot_script(const WorkloadReport& r, std::string_view path,
                                    PlotFormat format = PlotFormat::svg);

}  // namespace f2fscore
