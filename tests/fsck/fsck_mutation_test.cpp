// The checker on damaged images: a few hundred seeded mutations of small
// images (support/rich_image.hpp: our mkfs with a file of every kind
// written in), each checked with -n (which must not write and must return a
// Report or an Error naming what is wrong, never crash or hang), and every
// fourth also repaired with -y and checked again. Deterministic: the same
// seeds on every host. F2FSCORE_FSCK_MUTATIONS=N runs N per template
// (default 100).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__unix__)
#include <unistd.h>
#endif

#include <gtest/gtest.h>

#include "f2fscore/fsck.hpp"
#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/volume_walk.hpp"
#include "support/watchdog.hpp"

namespace {

using f2fstest::SparseImage;
constexpr unsigned kHangSeconds = 60;



struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

struct Template {
  const char* name;
  SparseImage img;
  std::vector<std::uint64_t> meta;  // superblock, CP, SIT, NAT, SSA blocks in use
  std::vector<std::uint64_t> main;  // node and data blocks in use
};

const std::vector<Template>& templates() {
  static std::vector<Template>* t = [] {
    using namespace f2fscore::disk;
    auto* v = new std::vector<Template>();
    const std::pair<const char*, f2fstest::RichImageOptions> specs[] = {
        {"checksums-quota", {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr |
                                 feature::sb_checksum | feature::lost_found | feature::quota_ino | feature::inode_crtime,
                             false, false, 64ull << 20}},
        {"plain", {0, false, false, 64ull << 20}},
        {"compression", {feature::extra_attr | feature::compression | feature::inode_checksum |
                             feature::flexible_inline_xattr | feature::sb_checksum,
                         false, false, 64ull << 20}},
    };
    for (const auto& [name, s] : specs) {
      auto r = f2fstest::build_rich_image(s);
      if (!r.error.empty()) {
        ADD_FAILURE() << "template " << name << ": " << r.error;
        continue;
      }
      Template tp{name, std::move(r.img), {}, {}};
      const auto* sb = reinterpret_cast<const SuperBlock*>(tp.img.get(0) + kSuperOffset);
      const std::uint64_t main_blk = sb->main_blkaddr.get();
      for (const auto& [b, data] : tp.img.blocks) (b < main_blk ? tp.meta : tp.main).push_back(b);
      v->push_back(std::move(tp));
    }
    return v;
  }();
  return *t;
}

int mutations_per_template() {
  const char* s = std::getenv("F2FSCORE_FSCK_MUTATIONS");
  const int n = s ? std::atoi(s) : 100;
  return n < 1 ? 1 : n;
}

// Damages 1-4 blocks: metadata blocks twice as often as main-area blocks;
// XOR of a few bytes, a 32-bit value at a random offset (often a small
// number or an all-ones word), or a zeroed block. Checksums are re-sealed
// for most seeds, so damage gets past them.
SparseImage mutate(const Template& t, std::uint64_t seed) {
  Rng r(seed);
  SparseImage img = t.img;
  const unsigned n = 1 + static_cast<unsigned>(r.below(4));
  std::vector<std::uint64_t> touched;
  for (unsigned i = 0; i < n; ++i) {
    const bool meta = r.below(3) != 0 || t.main.empty();
    const auto& pool = meta ? t.meta : t.main;
    const std::uint64_t blk = pool[r.below(pool.size())];
    std::uint8_t* p = img.at(blk);
    switch (r.below(4)) {
      case 0: {
        const std::size_t off = r.below(f2fscore::disk::kBlockSize);
        const std::size_t len = 1 + r.below(8);
        for (std::size_t k = 0; k < len && off + k < f2fscore::disk::kBlockSize; ++k)
          p[off + k] = static_cast<std::uint8_t>(p[off + k] ^ (1 + r.below(255)));
        break;
      }
      case 1:
      case 2: {
        const std::size_t off = r.below(f2fscore::disk::kBlockSize - 3) & ~std::size_t{r.below(2) ? 3u : 0u};
        const std::uint32_t vals[] = {0, 1, 2, 3, 0xFFFFFFFFu, 0xFFFFFFFEu, 0x7FFFFFFFu,
                                      static_cast<std::uint32_t>(r.next()), static_cast<std::uint32_t>(r.below(70000))};
        f2fscore::store_le32(p, off, vals[r.below(std::size(vals))]);
        break;
      }
      default:
        if (r.below(4) == 0) std::memset(p, 0, f2fscore::disk::kBlockSize);
        else f2fscore::store_le32(p, r.below(f2fscore::disk::kBlockSize - 3), static_cast<std::uint32_t>(r.next()));
        break;
    }
    touched.push_back(blk);
  }
  if (r.below(4) != 0)
    for (std::uint64_t b : touched) f2fstest::reseal_block(img, b);
  return img;
}

class FsckMutation : public ::testing::TestWithParam<std::size_t> {};

TEST_P(FsckMutation, NoCrashNoHangCheckOnlyWritesNothing) {
  ASSERT_LT(GetParam(), templates().size());
  const Template& t = templates()[GetParam()];
  const int n = mutations_per_template();
  int reports = 0, errors = 0, repaired = 0;
  for (int seed = 0; seed < n; ++seed) {
    const std::string name = std::string(t.name) + " seed " + std::to_string(seed);
    SparseImage img = mutate(t, static_cast<std::uint64_t>(seed) * 8 + GetParam());
    auto dev = img.to_device();
    {
      f2fstest::BudgetDevice g(*dev, 2'000'000);
      f2fscore::fsck::Options o;
      o.mode = f2fscore::fsck::Mode::check_only;
      o.force = true;
      f2fstest::Watchdog::get().start(name + " -n", kHangSeconds);
      auto rep = f2fscore::fsck::check(g, o);
      f2fstest::Watchdog::get().stop();
      EXPECT_EQ(g.writes(), 0u) << name << ": check-only wrote to the device";
      EXPECT_FALSE(g.budget_exceeded()) << name << ": more than 2,000,000 device requests (a runaway loop?)";
      if (rep) {
        ++reports;
        EXPECT_TRUE(rep->exit_code() == 0 || rep->exit_code() == 4) << name << ": -n exit " << rep->exit_code();
        EXPECT_FALSE(rep->wrote) << name;
      } else {
        ++errors;
        EXPECT_FALSE(rep.error().message.empty()) << name << ": an error without a message";
      }
    }
    if (seed % 4 != 0) continue;
    {
      f2fstest::BudgetDevice g(*dev, 4'000'000);
      f2fscore::fsck::Options o;
      o.mode = f2fscore::fsck::Mode::repair_all;
      o.force = true;
      f2fstest::Watchdog::get().start(name + " -y", kHangSeconds);
      auto rep = f2fscore::fsck::check(g, o);
      f2fstest::Watchdog::get().stop();
      EXPECT_FALSE(g.budget_exceeded()) << name << ": -y: more than 4,000,000 device requests";
      if (!rep) continue;
      ++repaired;
      // Whatever the repair did, the volume can be checked again.
      f2fstest::BudgetDevice g2(*dev, 2'000'000);
      f2fscore::fsck::Options o2;
      o2.force = true;
      f2fstest::Watchdog::get().start(name + " -n after -y", kHangSeconds);
      auto rep2 = f2fscore::fsck::check(g2, o2);
      f2fstest::Watchdog::get().stop();
      EXPECT_EQ(g2.writes(), 0u) << name;
      if (!rep2) EXPECT_FALSE(rep2.error().message.empty()) << name;
    }
  }
  std::printf("[ %s ] %d mutations: %d reports, %d operational errors, %d repaired and re-checked\n", t.name, n,
              reports, errors, repaired);
}

std::string template_name(const ::testing::TestParamInfo<std::size_t>& i) {
  static const char* const kNames[] = {"checksums_quota", "plain", "compression"};
  return kNames[i.param];
}
INSTANTIATE_TEST_SUITE_P(Rich, FsckMutation, ::testing::Range<std::size_t>(0, 3), template_name);

}  // namespace
