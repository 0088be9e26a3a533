// f2fscore-io fs: runs on an image file and on a loop device, its errors
// and exit codes (0 success, 1 failure, 2 usage), the IPU statistics of
// scripted scenarios whose outcome the rules fix (F2FS-FACTS section 4),
// and f2fscore-dump ipu on the images the runs leave.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "f2fscore/fsck.hpp"
#include "f2fscore/uring_device.hpp"
#include "meta/meta_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using namespace f2fscore;

struct Run {
  int status = -1;
  std::string out, err;
};

Run run(const std::string& args) {
  const fs::path dir = f2fstest::scratch_dir();
  const std::string o = (dir / "stats_tool_out").string();
  const std::string e = (dir / "stats_tool_err").string();
  const int rc = std::system((args + " >" + o + " 2>" + e).c_str());
  Run r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  r.out = slurp(o);
  r.err = slurp(e);
  fs::remove(o);
  fs::remove(e);
  return r;
}

std::string io_bin() { return F2FSCORE_IO_BIN; }

/// A fresh image file made by our mkfs (1 GiB: the kernel's default
/// ipu_policy for it is FORCE|HONOR_OPU_WRITE, 0x81).
fs::path make_image(const std::string& name, std::uint64_t bytes = 1ull << 30) {
  const fs::path p = f2fstest::scratch_dir() / (name + ".img");
  auto dev = metatest::our_mkfs(bytes, 0);
  EXPECT_TRUE(dev);
  if (!dev) return p;
  EXPECT_TRUE(metatest::save(*dev, p));
  return p;
}

void expect_clean(const fs::path& img) {
  OpenOptions oo;
  oo.read_only = true;
  auto d = open_posix_device(img.string(), oo);
  ASSERT_OK(d);
  fsck::Options fo;
  fo.mode = fsck::Mode::check_only;
  fo.force = true;
  auto rep = fsck::check(**d, fo);
  ASSERT_OK(rep);
  std::string found;
  for (const auto& p : rep->problems) found += p.to_string() + "\n";
  EXPECT_TRUE(rep->problems.empty()) << img << ": f2fscore fsck:\n" << found;
  // fsck.f2fs -f on a copy (it rewrites the checkpoint of what it checks).
  if (f2fstest::reference_tool("fsck.f2fs").empty()) {
    if (f2fstest::required("FSCK")) ADD_FAILURE() << "fsck.f2fs missing and F2FSCORE_REQUIRE_FSCK=1";
    return;
  }
  const fs::path copy = fs::path(img.string() + ".fsck");
  fs::copy_file(img, copy, fs::copy_options::overwrite_existing);
  std::string log;
  auto probs = f2fstest::fsck_problems(copy, &log);
  EXPECT_TRUE(probs.empty()) << img << ": fsck.f2fs -f:\n" << log;
  fs::remove(copy);
}

/// A number from the JSON report: "key": N (the first occurrence).
long long json_num(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

TEST(StatsTool, ImageFile) {
  const fs::path img = make_image("stats_tool_file");
  auto r = run(io_bin() + " fs " + img.string() + " -w smallfiles --files 200 --file-bytes 100 --iostat --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_num(r.out, "app_bytes_written"), 20000);
  EXPECT_NE(r.out.find("\"ipu_policy\": 129, \"ipu_policy_string\": \"0x81 (force|honor_opu_write)\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"app_buffered_io\": {\"name\": \"app buffered data\", \"bytes\": 20000"), std::string::npos)
      << r.out;
  expect_clean(img);
  // Text output: the kernel's iostat_info layout and the sections of the report.
  r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 4m --iostat --iostat-period 100");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"app buffered data:      4194304", "[WRITE]", "[READ]", "[OTHER]", "fs cp meta:", "IPU:",
                        "fdatasync:", "allocation:", "GC:", "checkpoints:", "write amplification", "latency (us)",
                        "periods (100 ms)"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  expect_clean(img);
  fs::remove(img);
}

TEST(StatsTool, Plot) {
  const fs::path img = make_image("stats_tool_plot");
  const fs::path svg = f2fstest::scratch_dir() / "stats_tool.svg";
  auto r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 8m --iostat-period 100 --plot " + svg.string());
  ASSERT_EQ(r.status, 0) << r.err;
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    EXPECT_NE(r.err.find("gnuplot is not installed"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(svg));
  } else {
    std::ifstream f(svg);
    std::string head((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(head.find("<svg"), std::string::npos);
    EXPECT_NE(head.find("calls/s"), std::string::npos);
  }
  fs::remove(svg);
  fs::remove(img);
}

// A PNG when the name says .png (the file's signature, as the PNG
// specification fixes it: 89 50 4E 47 0D 0A 1A 0A); a run of one period,
// whose flat ranges make gnuplot warn, prints none of its warnings.
TEST(StatsTool, PlotPngAndGnuplotQuiet) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path img = make_image("stats_tool_plot_png", 256ull << 20);
  const fs::path png = f2fstest::scratch_dir() / "stats_tool.PNG";
  auto r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 1m --plot " + png.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("Warning"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("gnuplot"), std::string::npos) << r.err;
  std::ifstream f(png, std::ios::binary);
  std::string head(8, '\0');
  f.read(head.data(), 8);
  EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8));
  fs::remove(png);
  fs::remove(img);
}

// Any other name is refused as a usage error before the run: the image and
// the output name untouched.
TEST(StatsTool, PlotOtherNamesRefused) {
  const fs::path img = make_image("stats_tool_plot_name", 256ull << 20);
  const fs::path pdf = f2fstest::scratch_dir() / "stats_tool.pdf";
  const std::string before = run("sha256sum " + img.string()).out;
  for (const fs::path& bad : {pdf, f2fstest::scratch_dir() / "svg", f2fstest::scratch_dir() / ".png"}) {
    auto r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 1m --plot " + bad.string());
    EXPECT_EQ(r.status, 2) << bad << r.err;
    EXPECT_NE(r.err.find("must end in .svg or .png"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(bad)) << bad;
  }
  EXPECT_EQ(run("sha256sum " + img.string()).out, before);
  fs::remove(img);
}

// When gnuplot fails, what it said is reported, and the exit status is 1.
TEST(StatsTool, PlotFailureShowsGnuplotMessages) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path img = make_image("stats_tool_plot_fail", 256ull << 20);
  auto r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 1m --plot /nonexistent/dir/x.png");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("gnuplot failed writing /nonexistent/dir/x.png"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gnuplot said"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("PNG"), std::string::npos) << "image bytes in the message";
  fs::remove(img);
}

TEST(StatsTool, LoopDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "loop devices need root: run as root to test f2fscore-io fs on /dev/loopN";
  const fs::path img = make_image("stats_tool_loop", 256ull << 20);
  auto l = run("losetup -f --show " + img.string());
  if (l.status != 0) {
    fs::remove(img);
    GTEST_SKIP() << "losetup could not attach a loop device: " << l.err;
  }
  std::string loop = l.out;
  while (!loop.empty() && (loop.back() == '\n' || loop.back() == ' ')) loop.pop_back();
  auto r = run(io_bin() + " fs " + loop + " -w overwrite --size 1m --ops 50 --sync fsync --iostat --json");
  run("losetup -d " + loop);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_num(r.out, "app_bytes_written"), 50 * 4096);
  EXPECT_EQ(json_num(r.out, "fsyncs"), 50);
  expect_clean(img);
  fs::remove(img);
}

TEST(StatsTool, BadArgumentsAreUsageErrors) {
  const fs::path img = make_image("stats_tool_args", 128ull << 20);
  const std::string t = io_bin() + " fs " + img.string();
  struct Case {
    std::string args, says;
  } cases[] = {
      {io_bin() + " fs", "target is required"},
      {io_bin() + " fs " + img.string(), "--workload is required"},
      {t + " -w sqlite3", "unknown workload 'sqlite3'"},
      {t + " -w seqwrite --size 12q", "bad size '12q'"},
      {t + " -w seqwrite --bs 0", "bad block size '0'"},
      {t + " -w overwrite --sync sometimes", "unknown sync mode 'sometimes'"},
      {t + " -w seqwrite --iostat-period 50", "--iostat-period 50 outside [100, 8640000]"},
      {t + " -w seqwrite --ipu-policy 0x100", "outside 0xff"},
      {t + " -w seqwrite --ipu-policy forced", "unknown ipu_policy bit 'forced'"},
      {t + " -w seqwrite --min-ipu-util 101", "min-ipu-util"},
      {t + " -w seqwrite --dir relative", "--dir must be an absolute path"},
      {t + " -w sqlite --journal memory", "unknown journal 'memory'"},
      {t + " -w seqwrite --direct --bs 1000", "--direct needs"},
      {t + " -w seqwrite --fill 150", "fill"},
      {io_bin() + " --rw sideways x", "unknown pattern 'sideways'"},  // the raw mode still parses its own
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\nstderr: " << r.err;
  }
  fs::remove(img);
}

// --device takes one path: the operand after it is the target (this
// one-device volume then refuses the extra device, saying so).
TEST(StatsTool, DeviceOptionTakesOnePath) {
  const fs::path img = make_image("stats_tool_device", 128ull << 20);
  auto r = run(io_bin() + " fs --device /nonexistent/other.img " + img.string() + " -w seqwrite --size 1m");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("single-device volume"), std::string::npos) << r.err;
  fs::remove(img);
}

TEST(StatsTool, FailuresExitOne) {
  auto r = run(io_bin() + " fs /nonexistent/stats.img -w seqwrite");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/stats.img"), std::string::npos) << r.err;
  const fs::path zero = f2fstest::scratch_dir() / "stats_tool_zero.img";
  { std::ofstream(zero).close(); }
  fs::resize_file(zero, 64ull << 20);
  r = run(io_bin() + " fs " + zero.string() + " -w seqwrite");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot mount"), std::string::npos) << r.err;
  fs::remove(zero);
  // A workload larger than the volume: no space, named.
  const fs::path img = make_image("stats_tool_full", 64ull << 20);
  r = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 200m");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("no space"), std::string::npos) << r.err;
  fs::remove(img);
}

// ---- IPU statistics of scripted scenarios ----
//
// overwrite: a 16 MiB file (4096 blocks, 1.8% of the 1 GiB volume's
// 222208 user blocks, so utilization() is 1), then 200 writes of 4 KiB at
// block (i*97) mod 4096 (200 distinct blocks that all have an address),
// each followed by --sync. The rules (check_inplace_update_policy()) give
// the reason of each of the 200 data writes; the setup's writes are not
// counted (the report covers the measured phase).
struct Scenario {
  const char* name;
  std::string args;
  const char* reason;  ///< every one of the 200 measured writes
};

TEST(StatsTool, IpuScenarios) {
  const Scenario cases[] = {
      {"FORCE (the 1 GiB default, 0x81)", "--sync fdatasync", "ipu_force"},
      {"no policy bit", "--ipu-policy 0 --sync fdatasync", "opu_policy"},
      {"FSYNC bit, fdatasync", "--ipu-policy fsync --sync fdatasync", "ipu_fsync"},
      {"FSYNC bit, fsync of 1 dirty page <= min_fsync_blocks", "--ipu-policy fsync --sync fsync", "ipu_fsync"},
      {"FSYNC bit, fsync with min_fsync_blocks 0", "--ipu-policy fsync --sync fsync --min-fsync-blocks 0",
       "opu_policy"},
      {"UTIL bit, utilization 1 > 0", "--ipu-policy util --min-ipu-util 0 --sync fdatasync", "ipu_util"},
      {"UTIL bit, utilization 1 not > 1", "--ipu-policy util --min-ipu-util 1 --sync fdatasync", "opu_policy"},
      {"SSR_UTIL alone sends fdatasync out of place", "--ipu-policy ssr_util --min-ipu-util 0 --sync fdatasync",
       "opu_policy"},
      {"the fdatasync-in-place option", "--ipu-policy ssr_util --fdatasync-in-place --sync fdatasync",
       "ipu_fdatasync_option"},
  };
  const fs::path img = make_image("stats_tool_ipu");
  for (const auto& c : cases) {
    auto r = run(io_bin() + " fs " + img.string() + " -w overwrite --size 16m --ops 200 --json " + c.args);
    ASSERT_EQ(r.status, 0) << c.name << "\n" << r.err;
    EXPECT_EQ(json_num(r.out, c.reason), 200) << c.name << ": " << r.out.substr(r.out.find("\"by_reason\""), 500);
    expect_clean(img);
  }
  fs::remove(img);
}

// ---- f2fscore-dump ipu: the inputs and decisions for an image at rest ----

std::string dump_bin() { return F2FSCORE_DUMP_BIN; }

std::string decision(const std::string& json, const std::string& write) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"write\": \"" + write + "\",\\s*\"in_place\": (true|false),\\s*\"reason\": \"([a-z_]+)\"")))
    return "?";
  return m[2];
}

TEST(StatsDump, IpuInputsAndDecisions) {
  const fs::path img = make_image("stats_dump_ipu");
  // A fresh 1 GiB volume: the kernel's default is FORCE|HONOR_OPU_WRITE.
  auto r = run(dump_bin() + " " + img.string() + " --json ipu");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_num(r.out, "ipu_policy"), 0x81);
  EXPECT_EQ(json_num(r.out, "utilization"), 0);
  EXPECT_NE(r.out.find("\"need_ssr\": false"), std::string::npos);
  EXPECT_EQ(decision(r.out, "async_writeback"), "ipu_force");
  EXPECT_EQ(decision(r.out, "dir"), "opu_dir");
  EXPECT_EQ(decision(r.out, "new_block"), "opu_new_block");
  EXPECT_EQ(decision(r.out, "opu_write"), "opu_defrag");
  // No bit: out of place; FSYNC: only fdatasync and small fsyncs in place.
  r = run(dump_bin() + " " + img.string() + " --json ipu --ipu-policy 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(decision(r.out, "sync_writeback"), "opu_policy");
  EXPECT_EQ(decision(r.out, "fdatasync"), "opu_policy");
  r = run(dump_bin() + " " + img.string() + " --json ipu --ipu-policy fsync");
  EXPECT_EQ(decision(r.out, "sync_writeback"), "opu_policy");
  EXPECT_EQ(decision(r.out, "fdatasync"), "ipu_fsync");
  EXPECT_EQ(decision(r.out, "fsync_few"), "ipu_fsync");
  EXPECT_EQ(decision(r.out, "fsync_many"), "opu_policy");
  // SSR: need_SSR once free sections are at most min_ssr_sections + reserved.
  r = run(dump_bin() + " " + img.string() + " --json ipu --ipu-policy ssr --min-ssr-sections 1000");
  EXPECT_NE(r.out.find("\"need_ssr\": true"), std::string::npos) << r.out;
  EXPECT_EQ(decision(r.out, "sync_writeback"), "ipu_ssr");
  // Utilization after 64 MiB: 16385 of the user blocks and more, 7%.
  auto w = run(io_bin() + " fs " + img.string() + " -w seqwrite --size 64m");
  ASSERT_EQ(w.status, 0) << w.err;
  r = run(dump_bin() + " " + img.string() + " --json ipu --ipu-policy util --min-ipu-util 6");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_num(r.out, "utilization"), 7) << r.out.substr(0, 400);
  EXPECT_EQ(decision(r.out, "async_writeback"), "ipu_util");
  r = run(dump_bin() + " " + img.string() + " --json ipu --ipu-policy util --min-ipu-util 7");
  EXPECT_EQ(decision(r.out, "async_writeback"), "opu_policy");  // 7 is not above 7
  // Text, with the per-segment list.
  r = run(dump_bin() + " " + img.string() + " ipu --segments");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"utilization:       7%", "need_SSR:", "warm_data", "HONOR_OPU_WRITE", "Decisions now",
                        "(active log)"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  // Usage errors.
  r = run(dump_bin() + " " + img.string() + " ipu --ipu-policy 0x1ff");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("outside 0xff"), std::string::npos) << r.err;
  fs::remove(img);
}

}  // namespace
