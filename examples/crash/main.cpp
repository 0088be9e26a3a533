// A crash-consistency test as an outside program writes one with f2fscore:
//
//   1. format a 64 MiB memory device (CowDevice) and take it as the base;
//   2. for n = 0, 1, 2, ...: a copy-on-write clone of the base behind a
//      FaultDevice that holds writes until a flush and fails every write or
//      flush from the n-th on (the moment power is lost); mount with the
//      test profile, run the workload through the file-handle API;
//   3. cut power keeping a random half of the unflushed 4 KiB blocks (the
//      reorder model, seeded with n), remount (roll-forward), and check that
//      every file whose fsync returned has what was fsynced (a block of a
//      later, unconfirmed write over it may be new); unmount and run the
//      library's checker: it must find the volume clean;
//   4. stop after the first n at which the workload ran to its end.
//
// Prints one line per 16 crash states and a summary; exit 0 when every
// state passed, 1 otherwise.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <f2fscore/cow_device.hpp>
#include <f2fscore/fault_device.hpp>
#include <f2fscore/fsck.hpp>
#include <f2fscore/mkfs.hpp>
#include <f2fscore/writer.hpp>

using namespace f2fscore;

namespace {

// File i: 6000 * (i + 1) bytes, each byte a function of (i, offset).
std::string content(int i, std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<char>('a' + (k * 7 + static_cast<std::size_t>(i) * 13) % 26);
  return s;
}

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The workload: four files written and fsynced, a fifth written and never
// synced, the first rewritten and fsynced again. `synced` gets each file's
// content once its fsync has returned; `pending` what was written over a
// synced file since (the rewrite goes in place under the test profile's
// IPU policy, so a cut before its fsync returns may leave any of its blocks
// new). False when a call failed (the power went out under it).
bool workload(Writer& w, std::map<std::string, std::string>& synced, std::map<std::string, std::string>& pending) {
  for (int i = 0; i < 5; ++i) {
    const std::string path = "/f" + std::to_string(i), data = content(i, 6000 * static_cast<std::size_t>(i + 1));
    auto f = w.open(path, open_flag::wronly | open_flag::creat | open_flag::trunc, 0644);
    if (!f) return false;
    if (!f->write(bytes(data))) return false;
    if (i == 4) continue;  // written, never synced
    if (!f->fsync()) return false;
    synced[path] = data;
  }
  std::string again = content(9, 6000);
  pending["/f0"] = again;
  auto f = w.open("/f0", open_flag::wronly, 0);
  if (!f || !f->pwrite(bytes(again), 0) || !f->fsync()) return false;
  synced["/f0"] = again;
  pending.erase("/f0");
  return true;
}

// Each 4 KiB block of `got` is that block of `synced` or of `pending` (a
// write of the same size over it that no fsync has confirmed).
bool block_wise_one_of(const std::string& got, const std::string& synced, const std::string* pending) {
  if (got.size() != synced.size()) return false;
  for (std::size_t off = 0; off < got.size(); off += 4096) {
    const std::size_t n = std::min<std::size_t>(4096, got.size() - off);
    if (got.compare(off, n, synced, off, n) == 0) continue;
    if (!pending || pending->size() != got.size() || got.compare(off, n, *pending, off, n) != 0) return false;
  }
  return true;
}

std::string read_file(Writer& w, const std::string& path, std::string& error) {
  auto f = w.open(path, open_flag::rdonly, 0);
  if (!f) {
    error = f.error().to_string();
    return {};
  }
  std::string s(1 << 16, '\0');
  auto n = f->read({reinterpret_cast<std::uint8_t*>(s.data()), s.size()});
  if (!n) {
    error = n.error().to_string();
    return {};
  }
  s.resize(*n);
  return s;
}

}  // namespace

int main() {
  auto base = CowDevice::memory(64ull << 20);
  if (!base) return std::fprintf(stderr, "memory device: %s\n", base.error().to_string().c_str()), 1;
  MkfsTarget target{base->get(), "memory"};
  MkfsOptions mo;
  mo.timestamp = 0;
  if (auto r = format_volume({&target, 1}, mo); !r)
    return std::fprintf(stderr, "format: %s\n", r.error().to_string().c_str()), 1;

  int states = 0, bad = 0;
  std::uint64_t kept_blocks = 0;
  for (std::uint64_t n = 0;; ++n) {
    auto img = (*base)->clone();  // the formatted volume, copy-on-write
    FaultPlan plan;
    plan.drop_unflushed = true;
    plan.fail_after = n;
    plan.ops = io_op_bit(IoOp::write) | io_op_bit(IoOp::flush);
    FaultDevice dev(*img, plan);
    std::map<std::string, std::string> synced, pending;
    bool finished = false;
    if (auto w = Writer::mount(dev, MountOptions::test_profile()); w) {
      finished = workload(**w, synced, pending) && (*w)->unmount().has_value();
    }  // the Writer dropped without unmount: as a power cut
    auto kept = dev.power_cut_random(n, CrashUnit::block, 50);
    if (kept) kept_blocks += kept->size();
    dev.set_plan({});
    ++states;
    std::string why;
    {
      auto w = Writer::mount(dev, MountOptions::test_profile());
      if (!w) {
        why = "remount: " + w.error().to_string();
      } else {
        for (const auto& [path, data] : synced) {
          std::string err;
          const auto p = pending.find(path);
          if (!block_wise_one_of(read_file(**w, path, err), data, p == pending.end() ? nullptr : &p->second)) {
            why = path + " lost what its fsync returned" + (err.empty() ? "" : " (" + err + ")");
            break;
          }
        }
        if (auto u = (*w)->unmount(); !u && why.empty()) why = "unmount: " + u.error().to_string();
      }
    }
    if (why.empty()) {
      fsck::Options fo;
      fo.force = true;
      auto rep = fsck::check(*img, fo);
      if (!rep) why = "fsck: " + rep.error().to_string();
      else if (rep->exit_code() != 0) why = "fsck: " + std::to_string(rep->problems.size()) + " problems, e.g. " +
                                            rep->problems.front().to_string();
    }
    if (!why.empty()) {
      ++bad;
      std::printf("state %llu (cut at write %llu): FAIL: %s\n", static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(n), why.c_str());
    } else if (n % 16 == 0) {
      std::printf("state %llu: %zu fsynced files intact, clean\n", static_cast<unsigned long long>(n), synced.size());
    }
    if (finished) break;
  }
  std::printf("%s: %d crash states (power cut at every write, half the unflushed blocks kept: %llu kept in all), "
              "%d failed\n",
              bad ? "FAIL" : "PASS", states, static_cast<unsigned long long>(kept_blocks), bad);
  return bad ? 1 : 0;
}
