// MultiDevice and open_volume_devices(). See multi_device.hpp.
#include "f2fscore/multi_device.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>

#include "io/forward.hpp"
#include "util/aligned.hpp"

namespace f2fscore {

namespace {

std::string path_of(const disk::Device& d) {
  const auto* p = reinterpret_cast<const char*>(d.path);
  return std::string(p, strnlen(p, disk::kMaxPathLen));
}

std::string fmt_u(const char* f, unsigned long long a, unsigned long long b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

}  // namespace

std::vector<DeviceRange> device_ranges(const disk::SuperBlock& sb) {
  std::vector<DeviceRange> out;
  if (!is_multi_device(sb)) return out;
  const std::uint32_t log_bps = sb.log_blocks_per_seg.get();
  std::uint64_t next = 0;
  for (std::size_t i = 0; i < disk::kMaxDevices; ++i) {
    if (i > 0 && sb.devs[i].path[0] == 0) break;
    DeviceRange r;
    r.path = path_of(sb.devs[i]);
    r.start_blkaddr = next;
    r.blocks = static_cast<std::uint64_t>(sb.devs[i].total_segments.get()) << log_bps;
    if (i == 0) r.blocks += sb.segment0_blkaddr.get();
    next += r.blocks;
    out.push_back(std::move(r));
  }
  return out;
}

bool is_multi_device(const disk::SuperBlock& sb) noexcept {
  return sb.devs[0].path[0] != 0 && sb.devs[1].path[0] != 0;
}

// One request to one member, on behalf of a caller's request. The caller's
// request counts its pieces in scratch[0] (left), its bytes moved in
// scratch[1]; the first failure is kept in its status.
struct MultiDevice::Piece {
  IoRequest inner;
  IoRequest* outer = nullptr;
  MultiDevice* dev = nullptr;
  Piece* next_free = nullptr;
};

MultiDevice::~MultiDevice() { drain(*this); }

Result<std::unique_ptr<MultiDevice>> MultiDevice::make(std::vector<std::unique_ptr<BlockDevice>> members,
                                                       std::vector<DeviceRange> ranges) {
  if (members.empty() || members.size() != ranges.size())
    return make_error(Errc::invalid_argument, "multi-device: " + std::to_string(members.size()) + " devices for " +
                                                  std::to_string(ranges.size()) + " ranges");
  std::unique_ptr<MultiDevice> d(new MultiDevice());
  std::uint64_t next = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] == nullptr) return make_error(Errc::invalid_argument, "multi-device: device " + std::to_string(i) + " missing");
    if (ranges[i].start_blkaddr != next)
      return make_error(Errc::invalid_argument, "multi-device: device " + std::to_string(i) + " starts at blkaddr " +
                                                    std::to_string(ranges[i].start_blkaddr) + ", not " + std::to_string(next));
    const DeviceInfo& mi = members[i]->info();
    const std::uint64_t need = ranges[i].blocks * disk::kBlockSize;
    if (mi.size_bytes < need)
      return make_error(Errc::corrupt, "device " + std::to_string(i) + " of " + std::to_string(members.size()) + " (" +
                                           mi.name + ") " + fmt_u("has %llu bytes; the volume's device list needs %llu", mi.size_bytes, need));
    if (i > 0 && mi.logical_block_size != d->info_.logical_block_size)
      return make_error(Errc::unsupported, "device " + std::to_string(i) + " (" + mi.name + ") has " +
                                               std::to_string(mi.logical_block_size) + "-byte sectors, device 0 " +
                                               std::to_string(d->info_.logical_block_size));
    if (i == 0) {
      d->info_.logical_block_size = mi.logical_block_size;
      d->info_.cheap_write_zeroes = mi.cheap_write_zeroes;
      d->info_.exclusive = mi.exclusive;
      d->info_.name = mi.name;
    }
    d->info_.buffer_alignment = std::max(d->info_.buffer_alignment, mi.buffer_alignment);
    d->info_.read_only = d->info_.read_only || mi.read_only;
    d->info_.direct = d->info_.direct || mi.direct;
    d->info_.cheap_write_zeroes = d->info_.cheap_write_zeroes && mi.cheap_write_zeroes;
    d->info_.exclusive = d->info_.exclusive && mi.exclusive;
    next += ranges[i].blocks;
  }
  d->info_.size_bytes = next * disk::kBlockSize;
  d->info_.kind = DeviceKind::other;
  d->info_.name += "+" + std::to_string(members.size() - 1);
  d->members_ = std::move(members);
  d->ranges_ = std::move(ranges);
  return d;
}

std::size_t MultiDevice::member_of(std::uint64_t blkaddr) const noexcept {
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if (blkaddr >= ranges_[i].start_blkaddr && blkaddr - ranges_[i].start_blkaddr < ranges_[i].blocks) return i;
  return ranges_.size();
}

MultiDevice::Piece* MultiDevice::take_piece() noexcept {
  if (Piece* p = free_pieces_) {
    free_pieces_ = p->next_free;
    return p;
  }
  try {
    pieces_.push_back(std::make_unique<Piece>());
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  pieces_.back()->dev = this;
  return pieces_.back().get();
}

void MultiDevice::on_piece_done(IoRequest& inner) noexcept {
  auto* p = static_cast<Piece*>(inner.user);
  MultiDevice* d = p->dev;
  IoRequest& req = *p->outer;
  if (!inner.ok() && req.ok()) {
    req.status = inner.status;
    req.sys_errno = inner.sys_errno;
  }
  req.scratch[1] += inner.transferred;
  p->next_free = d->free_pieces_;
  d->free_pieces_ = p;
  if (--req.scratch[0] == 0) {
    req.transferred = req.scratch[1];
    d->ready_.push(req);
  }
}

void MultiDevice::submit(IoRequest& req) noexcept {
  ++outstanding_;
  req.status = Errc::ok;
  req.sys_errno = 0;
  req.transferred = 0;
  if (Errc e = check_request(info_, req); e != Errc::ok) {
    req.status = e;
    ready_.push(req);
    return;
  }
  // Count the pieces first, so that no piece completes the request early
  // (a member may complete at submission; callbacks run only in poll()).
  struct Span {
    std::size_t member;
    std::uint64_t offset, length, skip;
  };
  Span spans[disk::kMaxDevices];
  std::size_t n = 0;
  if (req.op == IoOp::flush) {
    for (std::size_t i = 0; i < members_.size(); ++i) spans[n++] = {i, 0, 0, 0};
  } else {
    const std::uint64_t end = req.offset + req.length;
    for (std::size_t i = 0; i < ranges_.size(); ++i) {
      const std::uint64_t lo = ranges_[i].start_blkaddr * disk::kBlockSize;
      const std::uint64_t hi = lo + ranges_[i].blocks * disk::kBlockSize;
      const std::uint64_t a = std::max(lo, req.offset), b = std::min(hi, end);
      if (a < b) spans[n++] = {i, a - lo, b - a, a - req.offset};
    }
  }
  if (n == 0) {  // a zero-length request
    ready_.push(req);
    return;
  }
  req.scratch[0] = n;
  req.scratch[1] = 0;
  for (std::size_t k = 0; k < n; ++k) {
    Piece* p = take_piece();
    if (p == nullptr) {
      // Pieces already sent complete the request; the rest fail here.
      if (req.ok()) req.status = Errc::no_space;
      if (--req.scratch[0] == 0) ready_.push(req);
      continue;
    }
    p->outer = &req;
    p->inner = detail::forwarded_request(req, &MultiDevice::on_piece_done, p);
    p->inner.offset = spans[k].offset;
    p->inner.length = spans[k].length;
    if (req.buf != nullptr) p->inner.buf = static_cast<std::uint8_t*>(req.buf) + spans[k].skip;
    members_[spans[k].member]->submit(p->inner);
  }
}

std::size_t MultiDevice::poll(bool wait) noexcept {
  for (;;) {
    std::size_t busy = 0;
    for (auto& m : members_)
      if (m->in_flight() > 0) {
        m->poll(false);
        ++busy;
      }
    if (!ready_.empty() || !wait || busy == 0) break;
    // Nothing finished yet: wait on one member that has work.
    for (auto& m : members_)
      if (m->in_flight() > 0) {
        m->poll(true);
        break;
      }
    if (!ready_.empty()) break;
  }
  const std::size_t ran = ready_.size();
  outstanding_ -= ran;
  ready_.run();
  return ran;
}

std::uint64_t MultiDevice::next_data(std::uint64_t offset, std::uint64_t end) noexcept {
  for (std::size_t i = 0; i < ranges_.size() && offset < end; ++i) {
    const std::uint64_t lo = ranges_[i].start_blkaddr * disk::kBlockSize;
    const std::uint64_t hi = lo + ranges_[i].blocks * disk::kBlockSize;
    if (offset >= hi) continue;
    const std::uint64_t b = std::min(hi, end);
    const std::uint64_t r = members_[i]->next_data(offset - lo, b - lo);
    if (r < b - lo) return lo + r;
    offset = b;
  }
  return end;
}

std::uint64_t MultiDevice::next_hole(std::uint64_t offset, std::uint64_t end) noexcept {
  for (std::size_t i = 0; i < ranges_.size() && offset < end; ++i) {
    const std::uint64_t lo = ranges_[i].start_blkaddr * disk::kBlockSize;
    const std::uint64_t hi = lo + ranges_[i].blocks * disk::kBlockSize;
    if (offset >= hi) continue;
    const std::uint64_t b = std::min(hi, end);
    const std::uint64_t r = members_[i]->next_hole(offset - lo, b - lo);
    if (r < b - lo) return lo + r;
    offset = b;
  }
  return end;
}

Result<std::unique_ptr<BlockDevice>> open_volume_devices(std::unique_ptr<BlockDevice> first, const DeviceOpener& open,
                                                         std::span<const std::string> paths) {
  if (first == nullptr) return make_error(Errc::invalid_argument, "open_volume_devices: no device");
  // The superblock: the first copy that passes.
  // A buffer a direct-I/O device accepts.
  const std::size_t align = std::max<std::size_t>(first->info().buffer_alignment, 64);
  std::unique_ptr<void, void (*)(void*)> raw(detail::aligned_alloc_bytes(align, disk::kBlockSize), &detail::aligned_free);
  if (raw == nullptr) return make_error(Errc::no_space, "open_volume_devices: out of memory");
  const std::span<std::uint8_t> b(static_cast<std::uint8_t*>(raw.get()), disk::kBlockSize);
  std::optional<disk::SuperBlock> sb;
  for (std::uint64_t copy = 0; copy < 2 && !sb; ++copy) {
    if (first->info().size_bytes < (copy + 1) * disk::kBlockSize) break;
    if (!read_at(*first, copy * disk::kBlockSize, b)) continue;
    disk::SuperBlock s;
    std::memcpy(&s, b.data() + disk::kSuperOffset, sizeof s);
    if (disk::validate_superblock(s, 0, static_cast<int>(copy))) sb = s;
  }
  if (!sb || !is_multi_device(*sb)) {
    if (!paths.empty() && sb)
      return make_error(Errc::invalid_argument, first->info().name + " is a single-device volume: no other device to name");
    return first;
  }
  std::vector<DeviceRange> ranges = device_ranges(*sb);
  const std::size_t n = ranges.size();
  if (paths.size() > n - 1)
    return make_error(Errc::invalid_argument, std::to_string(paths.size()) + " other devices named, but " +
                                                  first->info().name + " is a volume of " + std::to_string(n) +
                                                  " devices (" + std::to_string(n - 1) + " besides it)");
  std::vector<std::unique_ptr<BlockDevice>> members;
  members.push_back(std::move(first));
  std::vector<std::string> used{members[0]->info().name};
  for (std::size_t i = 1; i < n; ++i) {
    const std::string path = i - 1 < paths.size() && !paths[i - 1].empty() ? paths[i - 1] : ranges[i].path;
    for (std::size_t j = 0; j < used.size(); ++j) {
      std::error_code ec;
      if (path == used[j] || std::filesystem::equivalent(path, used[j], ec))
        return make_error(Errc::invalid_argument, "device " + std::to_string(i) + " of " + std::to_string(n) + " (" +
                                                      path + ") is device " + std::to_string(j) + " (" + used[j] +
                                                      ") too: each device of a volume once");
    }
    auto d = open(path, i);
    if (!d) {
      Error e = d.error();
      e.message = "device " + std::to_string(i) + " of " + std::to_string(n) + " (" + path + (path != ranges[i].path ? ", for " + ranges[i].path : std::string()) + "): " + e.message;
      return make_error(std::move(e));
    }
    used.push_back(path);
    members.push_back(std::move(*d));
  }
  auto md = MultiDevice::make(std::move(members), std::move(ranges));
  if (!md) return make_error(md.error());
  return std::unique_ptr<BlockDevice>(std::move(*md));
}

}  // namespace f2fscore
