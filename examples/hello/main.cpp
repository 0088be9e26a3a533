// Formats a 256 MiB volume in memory with f2fscore and prints its layout.
#include <cstdio>

#include <f2fscore/device.hpp>
#include <f2fscore/mkfs.hpp>

int main() {
  auto dev = f2fscore::make_memory_device(256ull << 20);
  f2fscore::MkfsTarget target{dev.get(), "memory"};
  f2fscore::MkfsOptions opts;
  opts.label = "hello";
  opts.features = f2fscore::disk::feature::extra_attr | f2fscore::disk::feature::inode_checksum;
  opts.timestamp = 0;
  auto report = f2fscore::format_volume({&target, 1}, opts);
  if (!report) {
    std::fprintf(stderr, "format failed: %s\n", report.error().to_string().c_str());
    return 1;
  }
  const auto& sb = report->plan.sb;
  std::printf("label=%s main_blkaddr=%u segment_count_main=%u user_blocks=%llu\n",
              f2fscore::disk::volume_label(sb).c_str(), sb.main_blkaddr.get(), sb.segment_count_main.get(),
              static_cast<unsigned long long>(report->plan.cp.user_block_count.get()));
  return 0;
}
