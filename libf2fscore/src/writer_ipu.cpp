// Where a data block is written: the IPU policy (docs/ipu.md).
// First cut: always out of place.
#include "writer_internal.hpp"

namespace f2fscore {

const char* to_string(IpuReason r) noexcept {
  static constexpr const char* names[kIpuReasonCount] = {
      "ipu_pinned", "ipu_force", "ipu_ssr", "ipu_util", "ipu_ssr_util", "ipu_fsync", "ipu_async",
      "ipu_fdatasync_option", "opu_policy", "opu_new_block", "opu_dir", "opu_quota", "opu_honor_opu_write",
      "opu_cold", "opu_gc", "opu_other"};
  const auto i = static_cast<std::size_t>(r);
  return i < kIpuReasonCount ? names[i] : "unknown";
}

std::uint64_t IpuStats::in_place() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kIpuReasonCount; ++i)
    if (is_in_place(static_cast<IpuReason>(i))) n += data_blocks[i];
  return n;
}

std::uint64_t IpuStats::out_of_place() const {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < kIpuReasonCount; ++i)
    if (!is_in_place(static_cast<IpuReason>(i))) n += data_blocks[i];
  return n;
}

void Writer::Impl::resolve_ipu_defaults() { ipu = opts.ipu; }

Result<disk::block_t> Writer::Impl::place_data(nid_t, std::uint64_t, disk::block_t old, std::uint8_t type,
                                               const wr::WriteContext&, IpuReason* why) {
  *why = (old == disk::kNullAddr || old == disk::kNewAddr) ? IpuReason::opu_new_block : IpuReason::opu_policy;
  return alloc_block(type);
}

Status Writer::set_ipu_options(const IpuOptions&) {
  return make_error(Errc::unsupported, "writer: the IPU policy is not implemented yet");
}

IpuOptions Writer::ipu_options() const { return impl_->ipu; }

}  // namespace f2fscore
