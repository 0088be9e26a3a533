// Bad images never crash or hang the reader, and every error names the
// structure and the place. Images come from our mkfs
// with files written in (support/rich_image.hpp) and from Linux
// (../shared/images/syzkaller); each case damages one, opens it and walks
// everything (support/volume_walk.hpp) under a read budget and a watchdog.
// Damage: seeded bit flips in every metadata area (raw, and with the
// checksums re-sealed so the flips reach the checks behind them), garbage
// blocks, truncation, zeroed superblocks, a garbage NAT, loops in node trees,
// directories and the fsync chain, out-of-range addresses and nids, and
// bogus sizes, depths, name lengths and xattr sizes. Also run under ASan +
// UBSan by scripts/test.sh; F2FSCORE_ROBUSTNESS_SCALE=N multiplies the
// number of random cases, F2FSCORE_TEST_SAMPLE=K runs one in K of the long
// loops' cases (support/test_support.hpp), F2FSCORE_ROBUSTNESS_VERBOSE=1
// prints every case with its errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <csignal>
#include <cstring>
#include <set>

#include "f2fscore/disk/sit.hpp"
#include "f2fscore/disk/summary.hpp"
#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/test_support.hpp"
#include "support/volume_walk.hpp"
#include "support/watchdog.hpp"

using namespace f2fscore;
using namespace f2fscore::disk;
using f2fstest::SparseImage;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kReadBudget = 200000;  // device requests per case
constexpr double kSlowSeconds = 20;             // a case running longer is a finding (ms natively)
constexpr int kHangSeconds = 120;               // one running longer is a hang: abort
constexpr nid_t kUnusedNid = 450;               // free in every rich image

// No errors, except a codec compiled out of this build (the s390x and i686
// cross builds have no lz4, zstd or lzo libraries): Errc::unsupported.
bool clean_walk(const f2fstest::WalkResult& r) {
  if (!r.opened) return false;
  for (const auto& e : r.errors)
    if (e.error.code != Errc::unsupported) return false;
  return true;
}

int scale() {
  const char* s = std::getenv("F2FSCORE_ROBUSTNESS_SCALE");
  const int n = s ? std::atoi(s) : 1;
  return n < 1 ? 1 : n;
}


// Deterministic on every host (no std distributions).
struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

std::uint64_t hash_name(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// A byte range inside one block that belongs to a metadata area.
struct Region {
  std::uint64_t blk;
  std::uint32_t begin, end;
  bool operator<(const Region& o) const { return std::tie(blk, begin, end) < std::tie(o.blk, o.begin, o.end); }
};
using Areas = std::map<std::string, std::set<Region>>;

struct Template {
  std::string name;
  SparseImage img;
  Areas areas;
  std::optional<f2fstest::RichImage> rich;  // the image's map, for aimed damage
};

// Finds every metadata area of a good image by reading it with the library.
Areas classify(const SparseImage& img) {
  Areas a;
  auto dev = img.to_device();
  auto vol = Volume::open(*dev);
  if (!vol) return a;
  Volume& v = **vol;
  const SuperBlock& sb = v.superblock();
  for (std::uint64_t b : {0, 1}) a["superblock"].insert({b, kSuperOffset, kSuperOffset + sizeof(SuperBlock)});
  auto whole = [&](const char* name, std::uint64_t from, std::uint64_t to) {
    for (const auto& [b, data] : img.blocks)
      if (b >= from && b < to) a[name].insert({b, 0, kBlockSize});
  };
  whole("checkpoint", sb.cp_blkaddr.get(), sb.sit_blkaddr.get());
  whole("SIT", sb.sit_blkaddr.get(), sb.nat_blkaddr.get());
  whole("NAT", sb.nat_blkaddr.get(), sb.ssa_blkaddr.get());
  whole("SSA", sb.ssa_blkaddr.get(), sb.main_blkaddr.get());
  std::set<nid_t> seen;
  auto node_at = [&](nid_t nid, const char* area) -> std::optional<Node> {
    block_t b = 0;
    auto n = v.read_node(nid, &b);
    if (!n) return std::nullopt;
    a[area].insert({b, 0, kBlockSize});
    return *n;
  };
  std::function<void(nid_t, int)> visit = [&](nid_t ino, int depth) {
    if (depth > 16 || !seen.insert(ino).second) return;
    auto in = v.read_inode(ino);
    if (!in) return;
    const std::uint64_t blk = in->node_blkaddr;
    a["inode"].insert({blk, 0, kBlockSize});
    if (in->inline_xattr_addrs) {
      const std::uint32_t off = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (kDefAddrsPerInode - in->inline_xattr_addrs);
      a["inline xattr"].insert({blk, off, off + 4 * in->inline_xattr_addrs});
    }
    if (in->has_inline_dentry()) a["inline dentry"].insert({blk, in->inline_offset(), in->inline_offset() + in->max_inline_bytes()});
    if (in->raw.i.i_xattr_nid.get()) node_at(in->raw.i.i_xattr_nid.get(), "xattr node");
    if (!in->has_inline_data() && !in->has_inline_dentry()) {
      for (int k = 0; k < 5; ++k) {
        const nid_t nid = in->raw.i.i_nid[k].get();
        if (nid == 0) continue;
        auto n = node_at(nid, k < 2 ? "direct node" : "indirect node");
        if (!n || k < 2) continue;
        for (std::uint32_t j = 0; j < kNidsPerBlock; ++j) {
          const nid_t c = n->in.nid[j].get();
          if (c == 0) continue;
          auto cn = node_at(c, k < 4 ? "direct node" : "indirect node");
          if (!cn || k < 4) continue;
          for (std::uint32_t g = 0; g < kNidsPerBlock; ++g)
            if (cn->in.nid[g].get()) node_at(cn->in.nid[g].get(), "direct node");
        }
      }
    }
    if (in->is_compressed() && in->cluster_blocks) {
      for (std::uint64_t c = 0; c < 4; ++c) {
        auto head = v.map_block(*in, c * in->cluster_blocks);
        if (!head || *head != kCompressAddr) continue;
        for (std::uint32_t k = 1; k < in->cluster_blocks; ++k) {
          auto m = v.map_block(*in, c * in->cluster_blocks + k);
          if (m && v.is_valid_main_addr(*m)) a["compressed cluster"].insert({*m, 0, 256});
        }
      }
    }
    if (!in->is_dir()) return;
    if (!in->has_inline_dentry()) {
      const std::uint64_t nblocks = std::min<std::uint64_t>((in->size + kBlockSize - 1) / kBlockSize, 64);
      for (std::uint64_t i = 0; i < nblocks; ++i) {
        auto m = v.map_block(*in, i);
        if (m && v.is_valid_main_addr(*m)) a["dentry block"].insert({*m, 0, kBlockSize});
      }
    }
    auto es = v.read_dir(*in);
    if (!es) return;
    for (const auto& e : *es)
      if (e.name != "." && e.name != "..") visit(e.ino, depth + 1);
  };
  visit(sb.root_ino.get(), 0);
  return a;
}

const std::uint32_t kRichFeatures = feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr |
                                    feature::sb_checksum | feature::lost_found | feature::quota_ino |
                                    feature::project_quota | feature::inode_crtime;

std::vector<Template>& rich_templates() {
  static std::vector<Template>* t = [] {
    auto* v = new std::vector<Template>();
    struct Spec {
      const char* name;
      f2fstest::RichImageOptions o;
    } specs[] = {
        {"rich-checksums", {kRichFeatures, false, false, 64ull << 20}},
        {"rich-plain", {0, false, false, 64ull << 20}},
        {"rich-large-nat-bitmap-heap",
         {feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr, true, true, 128ull << 20}},
        {"rich-compression",
         {feature::extra_attr | feature::compression | feature::inode_checksum | feature::flexible_inline_xattr |
              feature::sb_checksum,
          false, false, 64ull << 20}},
        {"rich-casefold",
         {feature::extra_attr | feature::casefold | feature::inode_checksum | feature::flexible_inline_xattr |
              feature::lost_found,
          false, false, 64ull << 20, 1}},
    };
    for (const auto& s : specs) {
      auto r = f2fstest::build_rich_image(s.o);
      if (!r.error.empty()) {
        ADD_FAILURE() << s.name << ": " << r.error;
        continue;
      }
      Template t;
      t.name = s.name;
      t.img = r.img;
      t.areas = classify(t.img);
      t.rich = std::move(r);
      v->push_back(std::move(t));
    }
    return v;
  }();
  return *t;
}

bool load_zst(const fs::path& p, SparseImage& img) {
  auto z = f2fstest::load_zst_image(p);
  if (!z) return false;
  img = std::move(*z);
  return true;
}

std::vector<Template>& linux_templates() {
  static std::vector<Template>* t = [] {
    auto* v = new std::vector<Template>();
    auto dir = f2fstest::shared_images_dir();
    if (!dir) return v;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(*dir / "syzkaller"))
      if (e.path().extension() == ".zst") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      Template t;
      t.name = p.filename().string();
      if (!load_zst(p, t.img)) {
        ADD_FAILURE() << "cannot decompress " << p;
        continue;
      }
      t.areas = classify(t.img);
      v->push_back(std::move(t));
    }
    return v;
  }();
  return *t;
}

std::string errors_text(const f2fstest::WalkResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += "\n  " + e.op + ": " + e.error.to_string();
  return s;
}

// Runs one damaged image and records what is wrong with how it went.
class Runner {
 public:
  /// The dump tool's views are rendered too for one case in `tool_every`.
  explicit Runner(std::string suite, std::size_t tool_every = 8) : suite_(std::move(suite)), tool_every_(tool_every) {}
  ~Runner() {
    std::string list;
    int shown = 0;
    for (const auto& [what, example] : problems_) {
      if (++shown > 40) break;
      list += "\n  " + what + "\n      e.g. " + example;
    }
    EXPECT_TRUE(problems_.empty()) << suite_ << ": " << problems_.size() << " kinds of problem in " << cases_
                                   << " cases:" << list;
    std::printf("[ robust   ] %s: %zu cases (%zu left out by F2FSCORE_TEST_SAMPLE), %zu opened, %zu errors, %zu dump "
                "views, %.1f s\n",
                suite_.c_str(), cases_, skipped_, opened_, errors_, views_, seconds_);
  }

  /// For the suites' long loops of like cases, before building a case: true
  /// when f2fstest::sampled() leaves this one out (counted, not run).
  bool skip() {
    if (f2fstest::sampled(candidates_++)) return false;
    ++skipped_;
    return true;
  }

  f2fstest::WalkResult run(const std::string& name, const SparseImage& img, std::uint64_t truncate_to = ~0ull) {
    ++cases_;
    auto dev = img.to_device(truncate_to);
    f2fstest::BudgetDevice bd(*dev, kReadBudget);
    f2fstest::Watchdog::get().start(suite_ + " / " + name, kHangSeconds);
    const auto t0 = std::chrono::steady_clock::now();
    f2fstest::WalkLimits lim;
    if (cases_ % tool_every_ == 1 || tool_every_ == 1) lim.tool_inodes = 24;  // the dump tool's views too
    auto r = f2fstest::walk_volume(bd, lim);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f2fstest::Watchdog::get().stop();
    seconds_ += s;
    if (std::getenv("F2FSCORE_ROBUSTNESS_VERBOSE"))
      std::printf("case %s / %s: %s, %zu errors, %zu inodes, %.3f s%s\n", suite_.c_str(), name.c_str(),
                  r.opened ? "opened" : "not opened", r.errors.size(), r.inodes, s, errors_text(r).c_str());
    if (r.opened) ++opened_;
    errors_ += r.errors.size();
    views_ += r.tool_views;
    if (bd.budget_exceeded()) problem("more than " + std::to_string(kReadBudget) + " device requests", name);
    if (s > kSlowSeconds) problem("took more than 20 s", name + " (" + std::to_string(s) + " s)");
    for (const auto& e : r.errors) {
      const std::string p = f2fstest::error_problem(e.error);
      if (!p.empty()) problem(p + ": " + e.op.substr(0, e.op.find(' ')) + ": " + scrub(e.error.message),
                              name + ": " + e.op + ": " + e.error.to_string());
    }
    return r;
  }

  void problem(const std::string& what, const std::string& example) { problems_.emplace(what, example); }

 private:
  // Messages grouped by kind: digits dropped.
  static std::string scrub(const std::string& m) {
    std::string o;
    for (char c : m)
      if (!std::isdigit(static_cast<unsigned char>(c))) o += c;
    return o.substr(0, 120);
  }
  std::string suite_;
  std::size_t tool_every_;
  std::map<std::string, std::string> problems_;
  std::size_t cases_ = 0, opened_ = 0, errors_ = 0, views_ = 0, candidates_ = 0, skipped_ = 0;
  double seconds_ = 0;
};

// Flips `flips` random bits inside the regions of one area.
void flip_bits(SparseImage& img, const std::set<Region>& regions, Rng& rng, int flips, bool reseal) {
  std::vector<Region> rs(regions.begin(), regions.end());
  std::set<std::uint64_t> touched;
  for (int i = 0; i < flips; ++i) {
    const Region& r = rs[rng.below(rs.size())];
    const std::uint32_t off = r.begin + static_cast<std::uint32_t>(rng.below(r.end - r.begin));
    img.at(r.blk)[off] ^= static_cast<std::uint8_t>(1u << rng.below(8));
    touched.insert(r.blk);
  }
  if (reseal)
    for (std::uint64_t b : touched) f2fstest::reseal_block(img, b);
}

void random_fill(std::uint8_t* p, std::size_t n, Rng& rng) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(rng.next() >> 29);
}

Node& node_of(SparseImage& img, const f2fstest::RichImage& r, nid_t nid) { return *img.view<Node>(r.node_blk.at(nid)); }

std::uint32_t slot0(const Node& n) {
  return (n.i.i_inline & inline_flag::extra_attr) ? n.i.extra.i_extra_isize.get() / 4u : 0u;
}

// Applies `edit` to a copy of a rich template's image, re-seals the node
// blocks and checkpoint blocks it names, and runs it.
using Edit = std::function<void(SparseImage&, const f2fstest::RichImage&, std::set<std::uint64_t>& reseal)>;
void run_edit(Runner& run, const Template& t, const std::string& name, const Edit& edit) {
  if (run.skip()) return;
  SparseImage img = t.img;
  std::set<std::uint64_t> touched;
  edit(img, *t.rich, touched);
  for (std::uint64_t b : touched) f2fstest::reseal_block(img, b);
  run.run(t.name + " / " + name, img);
}

bool mentions(const f2fstest::WalkResult& r, const std::string& what) {
  for (const auto& e : r.errors)
    if (e.error.message.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

// The undamaged images: everything reads, nothing is an error, and the rich
// image holds what its builder wrote.
TEST(Robustness, GoodImagesWalkCleanly) {
  ASSERT_FALSE(rich_templates().empty());
  if (linux_templates().empty() && f2fstest::required("SHARED")) ADD_FAILURE() << "../shared/images is missing";
  Runner run("good images", 1);
  for (auto* set : {&rich_templates(), &linux_templates()}) {
    for (const auto& t : *set) {
      auto r = run.run(t.name, t.img);
      EXPECT_TRUE(clean_walk(r)) << t.name << errors_text(r);
      EXPECT_GE(t.areas.size(), 7u) << t.name;
    }
  }
  for (const auto& t : rich_templates()) {
    SCOPED_TRACE(t.name);
    for (const char* area : {"superblock", "checkpoint", "SIT", "NAT", "SSA", "inode", "direct node", "indirect node",
                             "dentry block", "inline dentry", "inline xattr", "xattr node"})
      EXPECT_TRUE(t.areas.count(area)) << area;
    const auto& ri = *t.rich;
    auto dev = t.img.to_device();
    auto vol = Volume::open(*dev);
    ASSERT_OK(vol);
    Volume& v = **vol;
    auto big = v.resolve("/big");
    ASSERT_OK(big);
    EXPECT_EQ(big->size, ri.big_size);
    std::vector<std::uint8_t> b(kBlockSize);
    for (std::uint64_t idx : {std::uint64_t{2}, std::uint64_t{big->addrs_per_inode + 1}, ri.big_size / kBlockSize - 3}) {
      auto n = v.read(*big, idx * kBlockSize, b);
      ASSERT_OK(n);
      EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](std::uint8_t c) { return c == 0; })) << "hole at " << idx;
    }
    for (const auto& [idx, tag] : ri.big_data) {
      auto n = v.read(*big, idx * kBlockSize, b);
      ASSERT_TRUE(n) << idx << ": " << n.error().to_string();
      bool same = true;
      for (std::size_t i = 0; i < kBlockSize; ++i) same = same && b[i] == f2fstest::rich_pattern(tag, i);
      EXPECT_TRUE(same) << "file block " << idx;
    }
    auto small = v.resolve("/hard");
    ASSERT_TRUE(small);
    EXPECT_EQ(small->ino, ri.small);
    auto link = v.resolve("/link");
    ASSERT_TRUE(link);
    EXPECT_EQ(*v.read_link(*link), "small");
    auto longlink = v.resolve("/longlink");
    ASSERT_TRUE(longlink);
    EXPECT_EQ(v.read_link(*longlink)->size(), 300u);
    auto xa = v.resolve("/xa");
    ASSERT_TRUE(xa);
    auto xs = v.xattrs(*xa);
    ASSERT_OK(xs);
    std::vector<std::string> names;
    for (const auto& x : *xs) names.push_back(x.full_name());
    EXPECT_EQ(names, (std::vector<std::string>{"user.inl", "user.a", "user.node", "trusted.t", "security.selinux",
                                               "system.posix_acl_access"}));
    EXPECT_EQ((*xs)[2].value, std::string(40, 'N'));
    auto dir = v.resolve("/dir");
    ASSERT_TRUE(dir);
    auto entries = v.read_dir(*dir);
    ASSERT_OK(entries);
    EXPECT_EQ(entries->size(), ri.dir_names.size() + 2);
    for (const auto& n : ri.dir_names) {
      auto e = v.lookup(*dir, n);
      EXPECT_TRUE(e) << n.substr(0, 20) << ": " << e.error().to_string();
    }
    auto y = v.resolve("/dir/inl/y");
    ASSERT_OK(y);
    EXPECT_EQ(y->ino, ri.fifo);
    auto chr = v.resolve("/chr");
    ASSERT_TRUE(chr);
    EXPECT_EQ(chr->mode & 0xF000, 0x2000);
    for (nid_t ino : {ri.lz4, ri.zstd, ri.lzo, ri.lzo_rle}) {
      if (ino == 0) continue;
      auto in = v.read_inode(ino);
      ASSERT_OK(in);
      std::vector<std::uint8_t> data(8 * kBlockSize);
      auto n = v.read(*in, 0, data);
      if (!n && n.error().code == Errc::unsupported) continue;  // codec not built in
      ASSERT_OK(n);
      EXPECT_TRUE(std::all_of(data.begin(), data.begin() + 4 * kBlockSize, [](std::uint8_t c) { return c == 'A'; }))
          << "inode " << ino;
      EXPECT_EQ(data[4 * kBlockSize + 1], f2fstest::rich_pattern(104, 1));
    }
  }
}

// Seeded random bit flips in every metadata area of every image: raw (the
// checksums catch most) and re-sealed (the flips reach every later check).
TEST(Robustness, BitFlipsInEveryMetadataArea) {
  Runner run("bit flips", 16);
  const int per_area_rich = 16 * scale(), per_area_linux = 3 * scale();
  for (auto* set : {&rich_templates(), &linux_templates()}) {
    const int n = set == &rich_templates() ? per_area_rich : per_area_linux;
    for (const auto& t : *set) {
      for (const auto& [area, regions] : t.areas) {
        for (int i = 0; i < n; ++i) {
          for (bool reseal : {false, true}) {
            if (run.skip()) continue;
            const std::string name = area + " #" + std::to_string(i) + (reseal ? " resealed" : " raw");
            Rng rng(hash_name(t.name + name));
            SparseImage img = t.img;
            flip_bits(img, regions, rng, 1 + static_cast<int>(rng.below(i % 3 == 0 ? 32 : 4)), reseal);
            run.run(t.name + " / " + name, img);
          }
        }
      }
    }
  }
}

// Whole blocks of garbage in each area (a garbage NAT among them).
TEST(Robustness, GarbageBlocks) {
  Runner run("garbage blocks");
  for (auto* set : {&rich_templates(), &linux_templates()}) {
    for (const auto& t : *set) {
      for (const auto& [area, regions] : t.areas) {
        for (bool reseal : {false, true}) {
          if (run.skip()) continue;
          const std::string name = "garbage " + area + (reseal ? " resealed" : "");
          Rng rng(hash_name(t.name + name));
          SparseImage img = t.img;
          std::set<std::uint64_t> blocks;
          for (const auto& r : regions) blocks.insert(r.blk);
          for (std::uint64_t b : blocks) {
            if (area == "superblock" && rng.below(2)) continue;  // sometimes keep one copy
            random_fill(img.at(b), kBlockSize, rng);
            if (reseal) f2fstest::reseal_block(img, b);
          }
          run.run(t.name + " / " + name, img);
        }
      }
      // The whole NAT of the current copy, zero blocks included.
      const auto& sb = *reinterpret_cast<const SuperBlock*>(t.img.get(0) + kSuperOffset);
      for (std::uint32_t copy = 0; copy < 2; ++copy) {
        SparseImage img = t.img;
        Rng rng(hash_name(t.name) + copy);
        for (std::uint64_t b = 0; b < 64; ++b)
          random_fill(img.at(sb.nat_blkaddr.get() + copy * kDefaultBlocksPerSeg + b), kBlockSize, rng);
        run.run(t.name + " / garbage NAT copy " + std::to_string(copy), img);
      }
    }
  }
}

TEST(Robustness, TruncatedImages) {
  Runner run("truncation");
  std::vector<const Template*> ts;
  for (const auto& t : rich_templates()) ts.push_back(&t);
  if (!linux_templates().empty()) ts.push_back(&linux_templates().front());
  for (const Template* t : ts) {
    const auto& sb = *reinterpret_cast<const SuperBlock*>(t->img.get(0) + kSuperOffset);
    std::vector<std::uint64_t> sizes = {0, 512, 4096, 4096 + 512, 8192, 12288, 1 << 20};
    for (std::uint64_t area : {sb.cp_blkaddr.get(), sb.sit_blkaddr.get(), sb.nat_blkaddr.get(), sb.ssa_blkaddr.get(),
                               sb.main_blkaddr.get()})
      for (std::uint64_t d : {0, 1, 2, 7, 513})
        sizes.push_back((area + d) * kBlockSize);
    for (std::uint64_t d = 1; d <= 5; ++d) sizes.push_back(t->img.size_bytes - d * 512);
    sizes.push_back(t->img.size_bytes - 2 * 1024 * 1024);
    Rng rng(hash_name(t->name));
    for (int i = 0; i < 16 * scale(); ++i) sizes.push_back(rng.below(t->img.size_bytes));
    for (std::uint64_t s : sizes) {
      auto r = run.run(t->name + " / truncated to " + std::to_string(s), t->img, s);
      if (s < t->img.size_bytes) EXPECT_FALSE(r.opened) << t->name << " cut to " << s << " bytes opened";
      if (s >= 2 * kBlockSize && s < t->img.size_bytes)
        EXPECT_TRUE(mentions(r, "truncated")) << t->name << " cut to " << s << errors_text(r);
    }
  }
}

TEST(Robustness, ZeroedSuperblocks) {
  Runner run("superblocks");
  for (auto* set : {&rich_templates(), &linux_templates()}) {
    for (const auto& t : *set) {
      SparseImage one = t.img, zero = t.img, both = t.img;
      one.blocks.erase(1);
      zero.blocks.erase(0);
      both.blocks.erase(0);
      both.blocks.erase(1);
      auto r1 = run.run(t.name + " / SB1 zeroed", one);
      EXPECT_TRUE(clean_walk(r1)) << t.name << errors_text(r1);
      auto r0 = run.run(t.name + " / SB0 zeroed", zero);
      EXPECT_TRUE(clean_walk(r0)) << t.name << errors_text(r0);
      auto r2 = run.run(t.name + " / both zeroed", both);
      EXPECT_FALSE(r2.opened);
      EXPECT_TRUE(mentions(r2, "superblock #0") && mentions(r2, "superblock #1")) << errors_text(r2);
      // The superblock fields that place areas, one at a time (re-sealed).
      for (std::size_t off : {offsetof(SuperBlock, segment_count), offsetof(SuperBlock, segment_count_main),
                              offsetof(SuperBlock, segment_count_sit), offsetof(SuperBlock, segment_count_nat),
                              offsetof(SuperBlock, segment_count_ssa), offsetof(SuperBlock, cp_payload),
                              offsetof(SuperBlock, block_count), offsetof(SuperBlock, section_count),
                              offsetof(SuperBlock, extension_count), offsetof(SuperBlock, root_ino)}) {
        for (std::uint32_t val : {0u, 1u, 3u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
          if (run.skip()) continue;
          SparseImage img = t.img;
          img.blocks.erase(1);
          store_le32(img.at(0), kSuperOffset + off, val);
          f2fstest::reseal_block(img, 0);
          run.run(t.name + " / SB field " + std::to_string(off) + " = " + std::to_string(val), img);
        }
      }
    }
  }
}

// Checkpoint fields one at a time, re-sealed.
TEST(Robustness, CheckpointFields) {
  Runner run("checkpoint fields");
  for (const auto& t : rich_templates()) {
    auto dev = t.img.to_device();
    auto vol = Volume::open(*dev);
    ASSERT_TRUE(vol);
    const std::uint64_t cp = (*vol)->superblock().cp_blkaddr.get() +
                             static_cast<std::uint64_t>((*vol)->open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
    const std::uint32_t total = (*vol)->checkpoint().cp_pack_total_block_count.get();
    struct F {
      std::size_t off;
      int width;
    } fields[] = {
        {offsetof(Checkpoint, user_block_count), 8},       {offsetof(Checkpoint, cur_node_segno), 4},
        {offsetof(Checkpoint, cur_node_segno) + 4, 4},      {offsetof(Checkpoint, cur_node_blkoff) + 2, 2},
        {offsetof(Checkpoint, cur_data_segno), 4},          {offsetof(Checkpoint, cur_data_blkoff), 2},
        {offsetof(Checkpoint, ckpt_flags), 4},              {offsetof(Checkpoint, cp_pack_total_block_count), 4},
        {offsetof(Checkpoint, cp_pack_start_sum), 4},       {offsetof(Checkpoint, next_free_nid), 4},
        {offsetof(Checkpoint, sit_ver_bitmap_bytesize), 4}, {offsetof(Checkpoint, nat_ver_bitmap_bytesize), 4},
        {offsetof(Checkpoint, checksum_offset), 4},         {offsetof(Checkpoint, alloc_type), 1},
    };
    for (const F& f : fields) {
      for (std::uint64_t val : {0ull, 1ull, 2ull, 192ull, 511ull, 512ull, 4092ull, 0xFFFFull, 0xFFFFFFFFull,
                                0x7FFull /* every flag */}) {
        if (run.skip()) continue;
        SparseImage img = t.img;
        for (std::uint64_t b : {cp, cp + total - 1}) {
          std::uint8_t* p = img.at(b);
          for (int k = 0; k < f.width; ++k) p[f.off + k] = static_cast<std::uint8_t>(val >> (8 * k));
          f2fstest::reseal_block(img, b);
        }
        run.run(t.name + " / CP field " + std::to_string(f.off) + " = " + std::to_string(val), img);
      }
    }
    // Orphan blocks: the flag set and the summaries pushed back by one
    // block, which then holds a count past 1020, or 1020 inos of garbage.
    for (std::uint32_t count : {1020u, 1021u, 0xFFFFFFFFu}) {
      SparseImage img = t.img;
      for (std::uint64_t b : {cp, cp + total - 1}) {
        std::uint8_t* p = img.at(b);
        store_le32(p, offsetof(Checkpoint, ckpt_flags), load_le32(p, offsetof(Checkpoint, ckpt_flags)) | cp_flag::orphan_present);
        store_le32(p, offsetof(Checkpoint, cp_pack_start_sum), load_le32(p, offsetof(Checkpoint, cp_pack_start_sum)) + 1);
        store_le32(p, offsetof(Checkpoint, cp_pack_total_block_count), total + 1);
        f2fstest::reseal_block(img, b);
      }
      // The pack grows by one block: move the tail, shift the summaries.
      for (std::uint32_t k = total; k > 1; --k) std::memcpy(img.at(cp + k), img.at(cp + k - 1), kBlockSize);
      auto& ob = *img.view<OrphanBlock>(cp + 1);
      std::memset(&ob, 0, sizeof ob);
      Rng rng(count);
      for (std::uint32_t i = 0; i < kOrphansPerBlock; ++i) ob.ino[i].set(static_cast<std::uint32_t>(rng.next()) % 600);
      ob.entry_count.set(count);
      ob.blk_count.set(1);
      auto r = run.run(t.name + " / orphan block with " + std::to_string(count) + " entries", img);
      EXPECT_TRUE(r.opened) << errors_text(r);
    }
    // Journals with impossible counts; summary blocks of garbage.
    for (std::uint32_t k = 1; k < total - 1; ++k) {
      for (std::uint16_t n : {39, 7, 0xFFFF}) {
        if (run.skip()) continue;
        SparseImage img = t.img;
        std::uint8_t* p = img.at(cp + k);
        p[0] = static_cast<std::uint8_t>(n);
        p[1] = static_cast<std::uint8_t>(n >> 8);
        p[kSumJournalSize] = static_cast<std::uint8_t>(n);
        p[kSumJournalSize + 1] = static_cast<std::uint8_t>(n >> 8);
        run.run(t.name + " / CP block " + std::to_string(k) + " journal counts " + std::to_string(n), img);
      }
    }
  }
}

// Loops: an indirect node naming itself, a direct node that is the inode,
// directories containing their ancestors, an fsync chain that cycles.
TEST(Robustness, LoopsInNodeChains) {
  Runner run("loops", 1);
  for (const auto& t : rich_templates()) {
    using R = f2fstest::RichImage;
    const std::pair<const char*, Edit> edits[] = {
        {"indirect node points at itself",
         [](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_in).in.nid[0].set(r.big_in); }},
        {"double indirect points at itself",
         [](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_din).in.nid[0].set(r.big_din); }},
        {"indirect under double indirect points at the double indirect",
         [](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_din_in).in.nid[0].set(r.big_din); }},
        {"i_nid[0] is the inode itself",
         [](SparseImage& img, const R& r, auto& s) {
           node_of(img, r, r.big).i.i_nid[0].set(r.big);
           s.insert(r.node_blk.at(r.big));
         }},
        {"i_nid[2] is a direct node",
         [](SparseImage& img, const R& r, auto& s) {
           node_of(img, r, r.big).i.i_nid[2].set(r.big_dn);
           s.insert(r.node_blk.at(r.big));
         }},
        {"i_nid[4] is the inode",
         [](SparseImage& img, const R& r, auto& s) {
           node_of(img, r, r.big).i.i_nid[4].set(r.big);
           s.insert(r.node_blk.at(r.big));
         }},
        {"every i_nid is the same direct node",
         [](SparseImage& img, const R& r, auto& s) {
           for (int k = 0; k < 5; ++k) node_of(img, r, r.big).i.i_nid[k].set(r.big_dn);
           s.insert(r.node_blk.at(r.big));
         }},
        {"all 1018 nids of the double indirect name one indirect node",
         [](SparseImage& img, const R& r, auto&) {
           for (std::uint32_t k = 0; k < kNidsPerBlock; ++k) node_of(img, r, r.big_din).in.nid[k].set(r.big_din_in);
           for (std::uint32_t k = 0; k < kNidsPerBlock; ++k) node_of(img, r, r.big_din_in).in.nid[k].set(r.big_din_dn);
         }},
        {"direct node's footer names another nid",
         [](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_dn).footer.nid.set(r.big_in); }},
        {"NAT sends the direct node to the inode's block",
         [](SparseImage& img, const R& r, auto&) {
           // Both nodes now live in one block: the footer check must catch it.
           std::memcpy(img.at(r.node_blk.at(r.big_dn)), img.get(r.node_blk.at(r.big)), kBlockSize);
         }},
        {"xattr nid is the inode itself",
         [](SparseImage& img, const R& r, auto& s) {
           node_of(img, r, r.xa).i.i_xattr_nid.set(r.xa);
           s.insert(r.node_blk.at(r.xa));
         }},
        {"directory contains itself and the root",
         [](SparseImage& img, const R& r, auto&) {
           auto& db = *img.view<DentryBlock>(r.dir_blocks[0]);
           db.dentry[2].ino.set(r.dir);  // "inl" -> /dir
           db.dentry[3].ino.set(kRootIno);
         }},
        {"inline directory contains its parent",
         [](SparseImage& img, const R& r, auto& s) {
           Node& n = node_of(img, r, r.inl);
           const std::uint32_t inl = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (slot0(n) + 1);
           const auto lay = inline_dentry_layout(4 * (kDefAddrsPerInode - slot0(n) - kDefaultInlineXattrAddrs - 1));
           auto* de = reinterpret_cast<DirEntry*>(reinterpret_cast<std::uint8_t*>(&n) + inl + lay.dentry_offset());
           de[0].ino.set(r.dir);
           de[0].file_type = static_cast<std::uint8_t>(FileType::dir);
           s.insert(r.node_blk.at(r.inl));
         }},
    };
    for (const auto& [name, edit] : edits) run_edit(run, t, name, edit);

    // The warm node log's next block starts a fsync chain that loops: onto
    // itself, and through two blocks. Not unmounted cleanly, so it is followed.
    auto dev = t.img.to_device();
    auto vol = Volume::open(*dev);
    ASSERT_TRUE(vol);
    Volume& v = **vol;
    const std::uint64_t cp = v.superblock().cp_blkaddr.get() + static_cast<std::uint64_t>(v.open_report().checkpoint_pack) * kDefaultBlocksPerSeg;
    const std::uint32_t total = v.checkpoint().cp_pack_total_block_count.get();
    const std::uint64_t start = v.segment_start(v.checkpoint().cur_node_segno[1].get()) + v.checkpoint().cur_node_blkoff[1].get();
    for (int len : {1, 2, 300}) {
      SparseImage img = t.img;
      for (int k = 0; k < len; ++k) {
        Node& n = *img.view<Node>(start + static_cast<std::uint64_t>(k));
        n.footer.nid.set(kUnusedNid);
        n.footer.ino.set(kUnusedNid);
        n.footer.cp_ver.set(v.checkpoint().checkpoint_ver.get());
        n.footer.flag.set(node_flag::fsync | node_flag::dent);
        n.footer.next_blkaddr.set(static_cast<std::uint32_t>(start + static_cast<std::uint64_t>((k + 1) % len)));
      }
      for (std::uint64_t b : {cp, cp + total - 1}) {
        std::uint8_t* p = img.at(b);
        store_le32(p, offsetof(Checkpoint, ckpt_flags), load_le32(p, offsetof(Checkpoint, ckpt_flags)) & ~cp_flag::umount);
        f2fstest::reseal_block(img, b);
      }
      auto r = run.run(t.name + " / fsync chain loop of " + std::to_string(len), img);
      EXPECT_TRUE(r.opened) << errors_text(r);
      auto dev2 = img.to_device();
      auto vol2 = Volume::open(*dev2);
      ASSERT_TRUE(vol2);
      EXPECT_EQ((*vol2)->open_report().pending_fsync_nodes, static_cast<std::uint32_t>(len)) << len;
    }
  }
}

// Addresses and nids outside their areas, in every place that holds one.
TEST(Robustness, OutOfRangeAddressesAndNids) {
  Runner run("out of range", 4);
  for (const auto& t : rich_templates()) {
    using R = f2fstest::RichImage;
    const auto& sb = *reinterpret_cast<const SuperBlock*>(t.img.get(0) + kSuperOffset);
    const std::uint32_t main_end = static_cast<std::uint32_t>(sb.main_blkaddr.get() + sb.segment_count_main.get() * kDefaultBlocksPerSeg);
    const std::uint32_t addrs[] = {1, sb.main_blkaddr.get() - 1, main_end, main_end + 1000, sb.block_count.get() > 0xFFFFFFF0 ? 0 : static_cast<std::uint32_t>(sb.block_count.get()),
                                   0x7FFFFFFF, kCompressAddr, kNewAddr};
    const std::uint32_t max_nid = sb.segment_count_nat.get() / 2 * kDefaultBlocksPerSeg * kNatEntryPerBlock;
    const nid_t nids[] = {1, 2, kUnusedNid, max_nid - 1, max_nid, max_nid + 1, 0x7FFFFFFF, 0xFFFFFFFF};
    for (std::uint32_t a : addrs) {
      const std::string as = " = " + std::to_string(a);
      const std::pair<std::string, Edit> edits[] = {
          {"big i_addr[0]" + as, [a](SparseImage& img, const R& r, auto& s) {
             Node& n = node_of(img, r, r.big);
             n.i.i_addr[slot0(n)].set(a);
             s.insert(r.node_blk.at(r.big));
           }},
          {"big direct node addr[0]" + as, [a](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_dn).dn.addr[0].set(a); }},
          {"big last direct node addr[1]" + as, [a](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_din_dn).dn.addr[1].set(a); }},
          {"dir block 1 address" + as, [a](SparseImage& img, const R& r, auto& s) {
             Node& n = node_of(img, r, r.dir);
             n.i.i_addr[slot0(n) + 1].set(a);
             s.insert(r.node_blk.at(r.dir));
           }},
          {"longlink block" + as, [a](SparseImage& img, const R& r, auto& s) {
             Node& n = node_of(img, r, r.longlink);
             n.i.i_addr[slot0(n)].set(a);
             s.insert(r.node_blk.at(r.longlink));
           }},
          {"NAT block_addr of big" + as, [a](SparseImage& img, const R& r, auto&) {
             // Find big's NAT entry where the builder put it: scan the NAT's first block of each copy.
             const auto& sbk = *reinterpret_cast<const SuperBlock*>(img.get(0) + kSuperOffset);
             for (std::uint64_t c = 0; c < 2; ++c) {
               auto* nb = img.view<NatBlock>(sbk.nat_blkaddr.get() + c * kDefaultBlocksPerSeg);
               if (nb->entries[r.big].ino.get() == r.big) nb->entries[r.big].block_addr.set(a);
             }
           }},
      };
      for (const auto& [name, edit] : edits) run_edit(run, t, name, edit);
    }
    for (nid_t nid : nids) {
      const std::string ns = " = " + std::to_string(nid);
      const std::pair<std::string, Edit> edits[] = {
          {"big i_nid[0]" + ns, [nid](SparseImage& img, const R& r, auto& s) {
             node_of(img, r, r.big).i.i_nid[0].set(nid);
             s.insert(r.node_blk.at(r.big));
           }},
          {"big i_nid[4]" + ns, [nid](SparseImage& img, const R& r, auto& s) {
             node_of(img, r, r.big).i.i_nid[4].set(nid);
             s.insert(r.node_blk.at(r.big));
           }},
          {"indirect nid[0]" + ns, [nid](SparseImage& img, const R& r, auto&) { node_of(img, r, r.big_in).in.nid[0].set(nid); }},
          {"xattr nid" + ns, [nid](SparseImage& img, const R& r, auto& s) {
             node_of(img, r, r.xa).i.i_xattr_nid.set(nid);
             s.insert(r.node_blk.at(r.xa));
           }},
          {"dentry ino" + ns, [nid](SparseImage& img, const R& r, auto&) {
             img.view<DentryBlock>(r.dir_blocks[0])->dentry[3].ino.set(nid);
           }},
          {"root dentry ino" + ns, [nid](SparseImage& img, const R& r, auto&) {
             auto& db = *img.view<DentryBlock>(r.root_dentry_blk);
             for (auto& e : db.dentry) if (e.ino.get() == r.big) e.ino.set(nid);
           }},
          {"inline dentry ino" + ns, [nid](SparseImage& img, const R& r, auto& s) {
             Node& n = node_of(img, r, r.inl);
             const std::uint32_t inl = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (slot0(n) + 1);
             const auto lay = inline_dentry_layout(4 * (kDefAddrsPerInode - slot0(n) - kDefaultInlineXattrAddrs - 1));
             reinterpret_cast<DirEntry*>(reinterpret_cast<std::uint8_t*>(&n) + inl + lay.dentry_offset())[1].ino.set(nid);
             s.insert(r.node_blk.at(r.inl));
           }},
      };
      for (const auto& [name, edit] : edits) run_edit(run, t, name, edit);
    }
  }
}

// Sizes, depths, levels, flags and counts that no writer would store.
TEST(Robustness, BogusInodeFields) {
  Runner run("inode fields", 4);
  for (const auto& t : rich_templates()) {
    using R = f2fstest::RichImage;
    auto inode_edit = [](nid_t R::*which, std::function<void(Node&)> f) -> Edit {
      return [which, f](SparseImage& img, const R& r, std::set<std::uint64_t>& s) {
        f(node_of(img, r, r.*which));
        s.insert(r.node_blk.at(r.*which));
      };
    };
    std::vector<std::pair<std::string, Edit>> edits;
    for (std::uint64_t size : {1ull << 63, (1ull << 60) + 1, 1ull << 44, (1ull << 44) + 5, 0xFFFFFFFFFFFFull, 4097ull}) {
      const std::string ss = " = " + std::to_string(size);
      for (auto [what, who] : {std::pair{"big", &R::big}, std::pair{"dir", &R::dir}, std::pair{"inline dir", &R::inl},
                               std::pair{"longlink", &R::longlink}, std::pair{"small (inline)", &R::small}})
        edits.push_back({std::string(what) + " i_size" + ss, inode_edit(who, [size](Node& n) { n.i.i_size.set(size); })});
    }
    for (std::uint32_t depth : {0u, 3u, 31u, 32u, 62u, 63u, 64u, 65u, 0x7FFFFFFFu, 0xFFFFFFFFu})
      edits.push_back({"dir i_current_depth = " + std::to_string(depth),
                       inode_edit(&R::dir, [depth](Node& n) { n.i.i_current_depth.set(depth); })});
    for (std::uint8_t level : {1, 30, 31, 32, 63, 64, 255})
      edits.push_back({"dir i_dir_level = " + std::to_string(level), inode_edit(&R::dir, [level](Node& n) { n.i.i_dir_level = level; })});
    for (auto [what, who] : {std::pair{"dir", &R::dir}, std::pair{"cf", &R::cf}}) {
      if ((*t.rich).*who == 0) continue;
      for (std::uint8_t level : {0, 255})
        edits.push_back({std::string(what) + ": depth 63, level " + std::to_string(level) + ", size 2^40",
                         inode_edit(who, [level](Node& n) {
                           n.i.i_current_depth.set(63);
                           n.i.i_dir_level = level;
                           n.i.i_size.set(1ull << 40);
                         })});
    }
    if (t.rich->cf) {
      // Stored hashes that do not match: lookups fall back to a search of
      // every block, of a directory that claims 2^28 blocks and 63 levels.
      edits.push_back({"cf: wrong hashes, depth 63, size 2^40", [](SparseImage& img, const R& r, auto& s) {
                         Node& n = node_of(img, r, r.cf);
                         n.i.i_current_depth.set(63);
                         n.i.i_size.set(1ull << 40);
                         s.insert(r.node_blk.at(r.cf));
                         auto& db = *img.view<DentryBlock>(r.cf_blk);
                         for (std::uint32_t i = 2; i < 6; ++i) db.dentry[i].hash_code.set(db.dentry[i].hash_code.get() ^ 1);
                       }});
    }
    for (std::uint8_t flags : {0x00, 0x02, 0x04, 0x06, 0x07, 0x21, 0x26, 0xFF}) {
      const std::string fs_ = " i_inline = " + std::to_string(flags);
      for (auto [what, who] : {std::pair{"big", &R::big}, std::pair{"dir", &R::dir}, std::pair{"inl", &R::inl},
                               std::pair{"xa", &R::xa}, std::pair{"link", &R::link}})
        edits.push_back({what + fs_, inode_edit(who, [flags](Node& n) { n.i.i_inline = flags; })});
    }
    for (std::uint16_t v : {0, 2, 3, 4, 36, 40, 0x200, 0xFFFF}) {
      edits.push_back({"xa i_extra_isize = " + std::to_string(v), inode_edit(&R::xa, [v](Node& n) { n.i.extra.i_extra_isize.set(v); })});
      edits.push_back({"xa i_inline_xattr_size = " + std::to_string(v),
                       inode_edit(&R::xa, [v](Node& n) { n.i.extra.i_inline_xattr_size.set(v); })});
      edits.push_back({"inl i_inline_xattr_size = " + std::to_string(v),
                       inode_edit(&R::inl, [v](Node& n) { n.i.extra.i_inline_xattr_size.set(v); })});
    }
    for (std::uint32_t fl : {iflag::compr, iflag::casefold, iflag::compr | iflag::casefold, 0xFFFFFFFFu}) {
      edits.push_back({"big i_flags = " + std::to_string(fl), inode_edit(&R::big, [fl](Node& n) {
                         n.i.i_flags.set(fl);
                         n.i.extra.i_log_cluster_size = 31;
                         n.i.extra.i_compress_algorithm = 200;
                       })});
      edits.push_back({"dir i_flags = " + std::to_string(fl), inode_edit(&R::dir, [fl](Node& n) { n.i.i_flags.set(fl); })});
    }
    for (std::uint16_t mode : {0, 0170000, 0050000, 0100000, 040000, 0120000})
      edits.push_back({"small i_mode = " + std::to_string(mode), inode_edit(&R::small, [mode](Node& n) { n.i.i_mode.set(mode); })});
    edits.push_back({"big i_blocks = 0", inode_edit(&R::big, [](Node& n) { n.i.i_blocks.set(0); })});
    edits.push_back({"big i_namelen = 0xFFFFFFFF", inode_edit(&R::big, [](Node& n) { n.i.i_namelen.set(0xFFFFFFFF); })});
    edits.push_back({"big i_ext covers the world", inode_edit(&R::big, [](Node& n) {
                       n.i.i_ext.fofs.set(0);
                       n.i.i_ext.blk_addr.set(0xFFFFFFF0);
                       n.i.i_ext.len.set(0xFFFFFFFF);
                     })});
    // Footer offsets that do not match the place in the tree.
    for (std::uint32_t ofs : {0u, 2u, 3u, 4u, 2041u, f2fstest::kXattrNodeOffset}) {
      for (auto [what, who] : {std::pair{"big direct node", &R::big_dn}, std::pair{"big indirect node", &R::big_in},
                               std::pair{"big double indirect", &R::big_din}, std::pair{"xattr node", &R::xattr_nid}})
        edits.push_back({std::string(what) + " footer offset " + std::to_string(ofs),
                         [who, ofs](SparseImage& img, const R& r, auto&) {
                           node_of(img, r, r.*who).footer.flag.set(ofs << node_flag::offset_shift);
                         }});
    }
    for (const auto& [name, edit] : edits) run_edit(run, t, name, edit);
  }
}

// Dentries: name lengths past the end of the block (255 at the last slot),
// zero lengths, bitmaps full of set bits; xattr entries running off the end.
TEST(Robustness, BogusDentriesAndXattrs) {
  Runner run("dentries and xattrs", 4);
  for (const auto& t : rich_templates()) {
    using R = f2fstest::RichImage;
    std::vector<std::pair<std::string, Edit>> edits;
    for (std::uint32_t slot : {kNrDentryInBlock - 1, kNrDentryInBlock - 31, kNrDentryInBlock - 32, 0u, 3u}) {
      for (std::uint16_t len : {0, 8, 9, 255, 256, 0xFFFF}) {
        edits.push_back({"dir block 0 slot " + std::to_string(slot) + " name_len " + std::to_string(len),
                         [slot, len](SparseImage& img, const R& r, auto&) {
                           auto& db = *img.view<DentryBlock>(r.dir_blocks[0]);
                           set_bit_le(db.dentry_bitmap, slot);
                           db.dentry[slot].name_len.set(len);
                           db.dentry[slot].ino.set(r.small);
                         }});
      }
    }
    edits.push_back({"dir block 1: every bitmap bit set", [](SparseImage& img, const R& r, auto&) {
                       auto& db = *img.view<DentryBlock>(r.dir_blocks[1]);
                       std::memset(db.dentry_bitmap, 0xFF, sizeof db.dentry_bitmap);
                     }});
    edits.push_back({"inline dentry: every bitmap bit set, lengths 255", [](SparseImage& img, const R& r, auto& s) {
                       Node& n = node_of(img, r, r.inl);
                       const std::uint32_t inl = static_cast<std::uint32_t>(offsetof(Inode, i_addr)) + 4 * (slot0(n) + 1);
                       const auto lay = inline_dentry_layout(4 * (kDefAddrsPerInode - slot0(n) - kDefaultInlineXattrAddrs - 1));
                       std::uint8_t* base = reinterpret_cast<std::uint8_t*>(&n) + inl;
                       std::memset(base, 0xFF, lay.bitmap_bytes);
                       auto* de = reinterpret_cast<DirEntry*>(base + lay.dentry_offset());
                       for (std::uint32_t i = 0; i < lay.nr_slots; ++i) de[i].name_len.set(255);
                       s.insert(r.node_blk.at(r.inl));
                     }});
    // Xattrs: the inline area's entries (the first at byte 24 of the area).
    auto xattr_edit = [](std::function<void(std::uint8_t* area, std::uint8_t* node)> f) -> Edit {
      return [f](SparseImage& img, const R& r, auto& s) {
        Node& n = node_of(img, r, r.xa);
        f(reinterpret_cast<std::uint8_t*>(&n.i.i_addr[kDefAddrsPerInode - kDefaultInlineXattrAddrs]),
          reinterpret_cast<std::uint8_t*>(&node_of(img, r, r.xattr_nid)));
        s.insert(r.node_blk.at(r.xa));
      };
    };
    for (std::uint16_t vs : {0, 176, 177, 4096, 0xFFFF})
      edits.push_back({"xattr value_size " + std::to_string(vs), xattr_edit([vs](std::uint8_t* a, std::uint8_t*) {
                         a[24 + 2] = static_cast<std::uint8_t>(vs);
                         a[24 + 3] = static_cast<std::uint8_t>(vs >> 8);
                       })});
    edits.push_back({"xattr name_len 255", xattr_edit([](std::uint8_t* a, std::uint8_t*) { a[24 + 1] = 255; })});
    edits.push_back({"xattr bad magic", xattr_edit([](std::uint8_t* a, std::uint8_t*) { a[0] ^= 1; })});
    edits.push_back({"xattr node: no end marker", xattr_edit([](std::uint8_t*, std::uint8_t* node) {
                       std::memset(node, 0x11, kNodeFooterOffset);
                     })});
    edits.push_back({"xattr entries to the very end", xattr_edit([](std::uint8_t* a, std::uint8_t* node) {
                       std::memset(a + 24, 0x01, 200 - 24);
                       std::memset(node, 0x01, kNodeFooterOffset);
                     })});
    for (const auto& [name, edit] : edits) run_edit(run, t, name, edit);
  }
}
