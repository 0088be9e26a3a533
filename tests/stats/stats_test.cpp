// Workloads through the engine (workload.hpp) and the statistics they report
// (docs/stats.md): application bytes against what the workload asked for,
// iostat's application counters against them, per-period series summing to
// the run, the IPU rules (decide_ipu) on scripted inputs, ipu_policy
// parsing. In memory, no threads, no host tools (label unit).
#include <gtest/gtest.h>

#include <regex>

#include "f2fscore/fsck.hpp"
#include "f2fscore/iostat.hpp"
#include "f2fscore/drivers/workload.hpp"
#include "f2fscore/writer.hpp"
#include "meta/meta_test_util.hpp"

namespace {

using namespace f2fscore;

struct Mounted {
  Iostat iostat;
  std::unique_ptr<IostatDevice> dev;
  std::unique_ptr<Writer> w;
};

std::unique_ptr<Mounted> mount_fresh(std::uint64_t bytes = 256ull << 20, const IpuOptions& ipu = {}) {
  auto m = std::make_unique<Mounted>();
  auto base = metatest::our_mkfs(bytes, 0);
  if (!base) return nullptr;
  m->dev = std::make_unique<IostatDevice>(std::move(base), m->iostat);
  MountOptions o;
  o.fixed_time = 1700000000;
  o.checkpoint_interval_s = 0;
  o.ipu = ipu;
  auto w = Writer::mount(*m->dev, o);
  if (!w) {
    ADD_FAILURE() << "mount: " << w.error().to_string();
    return nullptr;
  }
  m->w = std::move(*w);
  m->iostat.set_enabled(true);
  return m;
}

void expect_clean(Mounted& m, const std::string& what) {
  ASSERT_TRUE(m.w->unmount()) << what;
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.force = true;
  auto rep = fsck::check(m.dev->inner(), fo);
  ASSERT_TRUE(rep) << what << ": " << rep.error().to_string();
  std::string found;
  for (const auto& p : rep->problems) found += p.to_string() + "\n";
  EXPECT_TRUE(rep->problems.empty()) << what << ": f2fscore fsck:\n" << found;
}

std::uint64_t period_sum(const WorkloadReport& r, std::uint64_t WorkloadPeriod::*f) {
  std::uint64_t n = 0;
  for (const auto& p : r.periods) n += p.*f;
  return n;
}

TEST(Workload, SeqwriteCountsApplicationBytesExactly) {
  auto m = mount_fresh();
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.kind = Workload::seqwrite;
  s.file_size = (8ull << 20) + 1000;  // a partial last call
  s.block_size = 1u << 20;
  s.period_ms = 100;
  auto r = run_workload(*m->w, s, &m->iostat);
  ASSERT_OK(r);
  EXPECT_EQ(r->app_bytes_written, (8ull << 20) + 1000);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::write)].count(), 9u);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::create)].count(), 1u);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::sync)].count(), 1u);
  ASSERT_TRUE(r->iostat_enabled);
  // iostat's application counter is what write() was given (as Linux's
  // APP_BUFFERED_IO), nothing else counts as application I/O.
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_io), (8ull << 20) + 1000);
  EXPECT_EQ(r->iostat.count_of(IostatType::app_buffered_io), 9u);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_direct_io), 0u);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_read_io), 0u);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_direct_read_io), 0u);
  // Every one of the 2049 data blocks reached the device at least once.
  EXPECT_GE(r->writer.data_blocks_written, 2049u);
  EXPECT_GE(r->iostat.bytes_of(IostatType::fs_data_io) + r->iostat.bytes_of(IostatType::fs_cp_data_io), 2049u * 4096);
  EXPECT_GE(r->writer.checkpoints, 1u);
  EXPECT_GT(r->writer.meta_blocks_written, 0u);
  EXPECT_GE(r->write_amplification(), 1.0);
  // The writer's own counters and iostat's device counters agree.
  EXPECT_EQ(r->iostat_device_bytes_written(), r->device_bytes_written());
  // The series sums to the run.
  EXPECT_EQ(period_sum(*r, &WorkloadPeriod::app_bytes_written), r->app_bytes_written);
  EXPECT_EQ(period_sum(*r, &WorkloadPeriod::ops), r->ops);
  EXPECT_EQ(r->space_before.user_blocks, r->space_after.user_blocks);
  EXPECT_GE(r->space_after.valid_blocks, r->space_before.valid_blocks + 2049);
  const std::string text = format_workload_report(*r);
  EXPECT_NE(text.find("app buffered data:      8389608"), std::string::npos) << text;
  const std::string json = workload_report_json(*r);
  EXPECT_NE(json.find("\"app_bytes_written\": 8389608"), std::string::npos);
  EXPECT_NE(workload_gnuplot_script(*r, "x.svg").find("set output \"x.svg\""), std::string::npos);
  expect_clean(*m, "seqwrite");
}

TEST(Workload, SmallfilesCreatesAndDeletesEveryFile) {
  auto m = mount_fresh();
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.kind = Workload::smallfiles;
  s.files = 300;
  s.file_bytes = 100;
  auto r = run_workload(*m->w, s, &m->iostat);
  ASSERT_OK(r);
  EXPECT_EQ(r->app_bytes_written, 30000u);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_io), 30000u);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::create)].count(), 300u);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::unlink)].count(), 300u);
  EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::sync)].count(), 2u);
  EXPECT_EQ(r->writer.checkpoints, 2u);
  // 300 inodes reached the device (the checkpoint after the creates).
  EXPECT_GE(r->writer.node_blocks_written, 300u);
  auto d = m->w->lookup("/d");
  ASSERT_TRUE(d);
  auto names = m->w->list(*d);
  ASSERT_TRUE(names);
  EXPECT_TRUE(names->empty());
  expect_clean(*m, "smallfiles");
}

TEST(Workload, ReadsCountApplicationReadBytes) {
  auto m = mount_fresh();
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.kind = Workload::randread;
  s.file_size = 2ull << 20;
  s.block_size = 4096;
  s.ops = 100;
  auto r = run_workload(*m->w, s, &m->iostat);
  ASSERT_OK(r);
  EXPECT_EQ(r->app_bytes_read, 100u * 4096);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_read_io), 100u * 4096);
  EXPECT_EQ(r->app_bytes_written, 0u);  // the file was written in the setup phase
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_io), 0u);
  expect_clean(*m, "randread");
}

TEST(Workload, DirectWritesAreApplicationDirectIo) {
  auto m = mount_fresh();
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.kind = Workload::seqwrite;
  s.file_size = 4ull << 20;
  s.block_size = 64u << 10;
  s.direct = true;
  auto r = run_workload(*m->w, s, &m->iostat);
  ASSERT_OK(r);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_direct_io), 4ull << 20);
  EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_io), 0u);
  expect_clean(*m, "direct");
}

TEST(Workload, SqliteWalAndRollback) {
  for (auto j : {WorkloadSpec::Journal::wal, WorkloadSpec::Journal::rollback}) {
    auto m = mount_fresh();
    ASSERT_TRUE(m);
    WorkloadSpec s;
    s.kind = Workload::sqlite;
    s.file_size = 1ull << 20;
    s.journal = j;
    s.ops = 60;
    s.pages_per_txn = 3;
    s.wal_checkpoint_pages = 50;
    s.sync = SyncMode::fdatasync;
    auto r = run_workload(*m->w, s, &m->iostat);
    ASSERT_OK(r);
    const auto syncs = r->latency[static_cast<std::size_t>(WorkloadOp::fdatasync)].count();
    if (j == WorkloadSpec::Journal::wal) {
      // 180 frames of 4120 bytes; 3 WAL checkpoints (every 50 frames: at
      // transactions 17, 34, 51), each writing the distinct pages and a
      // 32-byte WAL header and syncing the database and the WAL.
      EXPECT_EQ(syncs, 60u + 3 * 2);
      EXPECT_GE(r->app_bytes_written, 180u * 4120 + 3 * 32);
    } else {
      // Per transaction: journal header and 3 records synced, 3 pages synced.
      EXPECT_EQ(syncs, 120u);
      EXPECT_EQ(r->app_bytes_written, 60u * (512 + 3 * 4104 + 3 * 4096));
      EXPECT_EQ(r->latency[static_cast<std::size_t>(WorkloadOp::unlink)].count(), 60u);
    }
    EXPECT_EQ(r->iostat.bytes_of(IostatType::app_buffered_io), r->app_bytes_written);
    expect_clean(*m, j == WorkloadSpec::Journal::wal ? "sqlite wal" : "sqlite rollback");
  }
}

TEST(Workload, FillReachesTheTarget) {
  auto m = mount_fresh(128ull << 20);
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.kind = Workload::fill;
  s.file_size = 1ull << 20;
  s.fill_percent = 30;
  auto r = run_workload(*m->w, s, &m->iostat);
  ASSERT_OK(r);
  EXPECT_GE(r->space_after.utilization(), 30u);
  EXPECT_LE(r->space_after.utilization(), 32u);  // stops at the first file past the target
  expect_clean(*m, "fill");
}

TEST(Workload, RefusesBadSpecs) {
  auto m = mount_fresh();
  ASSERT_TRUE(m);
  WorkloadSpec s;
  s.block_size = 0;
  EXPECT_EQ(run_workload(*m->w, s).error().code, Errc::invalid_argument);
  s = {};
  s.direct = true;
  s.block_size = 1000;
  EXPECT_EQ(run_workload(*m->w, s).error().code, Errc::invalid_argument);
  s = {};
  s.fill_percent = 101;
  EXPECT_EQ(run_workload(*m->w, s).error().code, Errc::invalid_argument);
  s = {};
  s.period_ms = 50;
  EXPECT_EQ(run_workload(*m->w, s).error().code, Errc::invalid_argument);
  s = {};
  s.dir = "relative";
  EXPECT_EQ(run_workload(*m->w, s).error().code, Errc::invalid_argument);
}

TEST(Workload, ParsesNames) {
  EXPECT_EQ(*parse_workload("sqlite"), Workload::sqlite);
  EXPECT_FALSE(parse_workload("sqlite3"));
  EXPECT_EQ(*parse_sync_mode("fdatasync"), SyncMode::fdatasync);
  EXPECT_FALSE(parse_sync_mode("sync"));
  EXPECT_EQ(*parse_ipu_policy("0x81"), 0x81u);
  EXPECT_EQ(*parse_ipu_policy("129"), 0x81u);
  EXPECT_EQ(*parse_ipu_policy("force|honor_opu_write"), 0x81u);
  EXPECT_EQ(*parse_ipu_policy("ssr_util,fsync"), 0x18u);
  EXPECT_EQ(*parse_ipu_policy("default"), IpuOptions::kKernelDefault);
  EXPECT_FALSE(parse_ipu_policy("0x100"));  // F2FS_IPU_MAX is 8 bits: the sysfs store refuses
  EXPECT_FALSE(parse_ipu_policy("forced"));
  EXPECT_FALSE(parse_ipu_policy("0x"));
  EXPECT_EQ(ipu_policy_string(0x81), "0x81 (force|honor_opu_write)");
  EXPECT_EQ(ipu_policy_string(0), "0x0 (none)");
}

// The rules of check_inplace_update_policy() (F2FS-FACTS section 4) on
// scripted inputs: each expected reason is read off the kernel's order.
TEST(IpuRules, DecideFollowsTheKernelOrder) {
  SpaceState sp;
  sp.user_blocks = 1000;
  sp.valid_blocks = 800;  // utilization 80
  IpuOptions o;
  o.min_ipu_util = 70;
  IpuWrite w;
  w.has_old_block = true;
  auto d = [&](std::uint32_t policy, bool ssr) {
    o.ipu_policy = policy;
    return decide_ipu(o, sp, ssr, w);
  };
  EXPECT_EQ(d(0x81, false), IpuReason::ipu_force);
  EXPECT_EQ(d(0x00, true), IpuReason::opu_policy);
  EXPECT_EQ(d(0x02, true), IpuReason::ipu_ssr);
  EXPECT_EQ(d(0x02, false), IpuReason::opu_policy);
  EXPECT_EQ(d(0x04, false), IpuReason::ipu_util);  // 80 > 70
  EXPECT_EQ(d(0x08, false), IpuReason::opu_policy);
  EXPECT_EQ(d(0x08, true), IpuReason::ipu_ssr_util);
  sp.valid_blocks = 700;  // exactly 70: not above min_ipu_util
  EXPECT_EQ(d(0x04, false), IpuReason::opu_policy);
  sp.valid_blocks = 800;
  EXPECT_EQ(d(0x10, false), IpuReason::opu_policy);  // not in fsync
  w.fdatasync = true;
  EXPECT_EQ(d(0x10, false), IpuReason::ipu_fsync);
  EXPECT_EQ(d(0x08, false), IpuReason::opu_policy);  // the 2022 thread's case: SSR_UTIL alone sends fdatasync out
  o.fdatasync_in_place = true;
  EXPECT_EQ(d(0x08, false), IpuReason::ipu_fdatasync_option);
  o.fdatasync_in_place = false;
  w.fdatasync = false;
  w.fsync = true;
  w.file_dirty_pages = 8;
  EXPECT_EQ(d(0x10, false), IpuReason::ipu_fsync);  // <= min_fsync_blocks
  w.file_dirty_pages = 9;
  EXPECT_EQ(d(0x10, false), IpuReason::opu_policy);
  w.fsync = false;
  w.sync_io = false;
  EXPECT_EQ(d(0x20, false), IpuReason::ipu_async);
  w.sync_io = true;
  EXPECT_EQ(d(0x20, false), IpuReason::opu_policy);
  // Outer rules first.
  w.dir = true;
  EXPECT_EQ(d(0x81, false), IpuReason::opu_dir);
  w.dir = false;
  w.opu_write = true;
  EXPECT_EQ(d(0x81, false), IpuReason::opu_defrag);  // FI_OPU_WRITE: f2fs_should_update_outplace()
  EXPECT_EQ(d(0x01, false), IpuReason::opu_defrag);
  w.opu_write = false;
  w.pinned = true;
  EXPECT_EQ(d(0x00, false), IpuReason::ipu_pinned);
  w.pinned = false;
  w.cold = true;
  EXPECT_EQ(d(0x00, false), IpuReason::ipu_cold);
  w.cold = false;
  w.direct = true;
  EXPECT_EQ(d(0x00, false), IpuReason::ipu_direct);
  w.direct = false;
  w.has_old_block = false;
  EXPECT_EQ(d(0x81, false), IpuReason::opu_new_block);
}

TEST(IpuRules, NeedSsrAtRest) {
  SpaceState sp;
  sp.reserved_sections = 39;
  IpuOptions o;
  sp.free_sections = 78;  // min_ssr_sections defaults to reserved: 39 + 39
  EXPECT_TRUE(need_ssr(sp, o));
  sp.free_sections = 79;
  EXPECT_FALSE(need_ssr(sp, o));
  o.min_ssr_sections = 100;
  EXPECT_TRUE(need_ssr(sp, o));
}

}  // namespace
