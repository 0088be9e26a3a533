// f2fscore-io: exit codes, text and JSON output, the iostat dump.
#include <gtest/gtest.h>

#include <cstdio>

#include "support/test_support.hpp"

#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#define HAVE_JSON_PARSER 1
#endif

namespace {

f2fstest::CommandResult io(const std::string& args, bool stdout_only = false) {
  return f2fstest::run(std::string(F2FSCORE_IO_BIN) + " " + args + (stdout_only ? " 2>/dev/null" : ""));
}

}  // namespace

TEST(IoTool, HelpAndUsageErrors) {
  auto r = io("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Exit status: 0 success; 1 failure"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--iodepth"), std::string::npos);
  EXPECT_EQ(io("").exit_code, 2) << "target required";
  EXPECT_EQ(io("--no-such-option x").exit_code, 2);
  EXPECT_EQ(io("--rw trim x").exit_code, 2);
  EXPECT_EQ(io("--bs 4q x").exit_code, 2);
  EXPECT_EQ(io("--iodepth 0 x").exit_code, 2);
  EXPECT_EQ(io("--backend spdk x").exit_code, 2);
  EXPECT_EQ(io("--iostat-period-ms 50 x").exit_code, 2);
  EXPECT_EQ(io("--direct --buffered x").exit_code, 2);
  EXPECT_EQ(io("-V").exit_code, 0);
  EXPECT_EQ(io("--runtime nan x").exit_code, 2);
  EXPECT_EQ(io("--seed -1 x").exit_code, 2);
  auto big = io("--bs 2g x");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.output.find("larger than 1 GiB"), std::string::npos) << big.output;
  // An unknown option is named, even with the target missing too.
  for (const char* args : {"--bogus", "fs --bogus"}) {
    auto u = io(args);
    EXPECT_EQ(u.exit_code, 2) << args;
    EXPECT_NE(u.output.find("unknown option --bogus"), std::string::npos) << args << ": " << u.output;
  }
}

// A raw write to a target whose superblock says F2FS (the magic at byte
// 1024) is refused without --force, the target unchanged; with --force it
// runs, warning on stderr. Reads are not refused.
TEST(IoTool, RawWriteOverAnF2fsVolumeNeedsForce) {
  f2fstest::TempDir tmp;
  const auto f = tmp / "f2fs.img";
  f2fstest::make_sparse_file(f, 4u << 20);
  {
    std::FILE* fp = std::fopen(f.string().c_str(), "r+b");
    ASSERT_NE(fp, nullptr);
    const unsigned char magic[4] = {0x10, 0x20, 0xF5, 0xF2};
    ASSERT_EQ(std::fseek(fp, 1024, SEEK_SET), 0);
    ASSERT_EQ(std::fwrite(magic, 1, 4, fp), 4u);
    std::fclose(fp);
  }
  const std::string q = f2fstest::shell_quote(f.string());
  auto r = io("--rw write --size 1m --buffered " + q);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("holds an F2FS volume"), std::string::npos) << r.output;
  EXPECT_EQ(f2fstest::run("od -An -tx1 -j1024 -N4 " + q).output, " 10 20 f5 f2\n");
  EXPECT_EQ(io("--rw read --size 1m --buffered " + q).exit_code, 0);
  r = io("--rw write --size 1m --buffered --force " + q);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: " + f.string() + " holds an F2FS volume"), std::string::npos) << r.output;
}

TEST(IoTool, FailuresExitOne) {
  auto r = io("/nonexistent/f2fscore-io-target");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("not found"), std::string::npos) << r.output;
  EXPECT_EQ(io("/dev/null").exit_code, 1);
}

TEST(IoTool, RunsAndDumpsIostat) {
  f2fstest::TempDir tmp;
  const std::string f = (tmp / "t.img").string();
  auto r = io("--create --size 2m --rw randwrite --bs 4k --iodepth 8 --iostat " + f);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("randwrite: bs=4096 iodepth=8: ios=512 bytes=2097152"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("IOPS="), std::string::npos);
  EXPECT_NE(r.output.find("lat percentiles (usec):"), std::string::npos);
  EXPECT_NE(r.output.find("[WRITE]\napp buffered data:"), std::string::npos);
  EXPECT_NE(r.output.find("app direct data:        2097152          512              4096"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("fs flush:"), std::string::npos);
  EXPECT_NE(r.output.find("wr_async_data [") , std::string::npos);
  // Sequential read of what was written, buffered, through POSIX, in JSON.
  r = io("--rw read --bs 128k --iodepth 2 --buffered --backend posix --iostat --json " + f, true);
  ASSERT_EQ(r.exit_code, 0) << r.output;
#if defined(HAVE_JSON_PARSER)
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["backend"], "posix");
  EXPECT_EQ(j["direct"], false);
  EXPECT_EQ(j["job"]["ios"], 16);
  EXPECT_EQ(j["job"]["bytes"], 2097152);
  EXPECT_EQ(j["iostat"]["types"]["app_buffered_read_io"]["count"], 16);
  EXPECT_EQ(j["iostat"]["types"]["app_read_io"]["bytes"], 2097152);
  EXPECT_EQ(j["iostat"]["latency"]["rd_data"]["count"], 16);
#else
  EXPECT_NE(r.output.find("\"app_buffered_read_io\": {\"name\": \"app buffered data\", \"bytes\": 2097152"),
            std::string::npos);
#endif
  // Without --iostat there is no dump.
  r = io("--rw randread --runtime 0.2 " + f);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("iostat_info"), std::string::npos);
}

TEST(IoTool, BlockSizeTheDeviceCannotDoIsAUsageError) {
  f2fstest::TempDir tmp;
  const std::string f = (tmp / "t.img").string();
  auto r = io("--create --size 1m --bs 1k " + f);  // O_DIRECT needs 4 KiB here
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("block size 1024"), std::string::npos) << r.output;
}
