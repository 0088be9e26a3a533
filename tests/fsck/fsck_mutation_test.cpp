// The checker and the writer on damaged images: seeded mutations of small
// images (support/rich_image.hpp: our mkfs with a file of every kind
// written in; and a volume our writer made), each checked with -n (which
// must not write and must return a Report or an Error naming what is
// wrong, never crash or hang), every fourth also repaired with -y and
// checked again. The writer (WriterMutation) mounts each mutant as
// f2fscore-sload and `f2fscore-io fs` do, populates or runs a small
// workload and unmounts: a refusal must leave the image byte-identical,
// and what it accepts it must not leave with a problem our checker did not
// report before. Mutations: raw bytes of any block in use (metadata twice
// as often as main-area blocks), typed edits of every metadata area
// (tests/fsck/corrupt.hpp: superblock, checkpoint, NAT, SIT, SSA, inodes,
// node footers, dentries, inline data, xattrs), checksums re-sealed or
// not, and truncated images. Deterministic: the same seeds on every host.
// F2FSCORE_FSCK_MUTATIONS=N runs N per template (default 100; the writer
// half as many, through two paths each); F2FSCORE_TEST_SAMPLE=K one seed
// in K of them (support/test_support.hpp).
// MutationBench.DISABLED_Run is bench/mutation_bench.sh's driver (each
// mutant in a child process; fsck.f2fs on the same mutants).
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#if defined(__unix__)
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <gtest/gtest.h>

#include "f2fscore/drivers/workload.hpp"
#include "f2fscore/fsck.hpp"
#include "f2fscore/populate.hpp"
#include "f2fscore/writer.hpp"
#include "fsck/corrupt.hpp"
#include "support/rich_image.hpp"
#include "support/sparse_image.hpp"
#include "support/test_support.hpp"
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
  std::vector<std::string> files;   // paths of inodes for typed edits
  std::vector<std::pair<std::string, std::string>> dentries;  // (directory, name)
};

std::span<const std::uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A volume our writer made: directories (one with enough names for dentry
// blocks), inline and block files, a file with a direct node, a symlink, a
// hard link, a fifo, inline and node xattrs; unmounted.
SparseImage writer_image(std::string* error) {
  using namespace f2fscore::disk;
  auto dev = f2fscore::make_memory_device(64ull << 20);
  f2fscore::MkfsTarget t{dev.get(), "mutation"};
  f2fscore::MkfsOptions o;
  o.features = feature::extra_attr | feature::inode_checksum | feature::flexible_inline_xattr | feature::sb_checksum |
               feature::lost_found | feature::inode_crtime;
  o.timestamp = 1700000000;
  o.uuid = std::array<std::uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  if (auto r = f2fscore::format_volume(std::span<const f2fscore::MkfsTarget>(&t, 1), o); !r) {
    *error = r.error().to_string();
    return {};
  }
  f2fscore::MountOptions mo;
  mo.fixed_time = 1700000100;
  auto w = f2fscore::Writer::mount(*dev, mo);
  if (!w) {
    *error = w.error().to_string();
    return {};
  }
  auto& wr = **w;
  auto must = [&](auto r, const char* what) {
    if (!r && error->empty()) *error = std::string(what) + ": " + r.error().to_string();
    return r;
  };
  (void)must(wr.mkdir("/d"), "mkdir /d");
  (void)must(wr.mkdir("/d/sub"), "mkdir /d/sub");
  for (int i = 0; i < 40; ++i) (void)must(wr.create("/d/n" + std::to_string(i)), "create");
  auto small = must(wr.create("/small"), "create /small");
  if (small) (void)must(wr.write(*small, 0, as_bytes("inline data of a small file")), "write");
  auto big = must(wr.create("/d/big"), "create /d/big");
  if (big) (void)must(wr.write(*big, 0, as_bytes(std::string(5 * 4096 + 100, 'b'))), "write");
  auto sparse = must(wr.create("/sparse"), "create /sparse");
  if (sparse) (void)must(wr.write(*sparse, 4ull << 20, as_bytes(std::string(8192, 's'))), "write");
  (void)must(wr.symlink("/d/big", "/link"), "symlink");
  (void)must(wr.link("/d/big", "/d/sub/hard"), "link");
  (void)must(wr.mknod("/fifo", 0010644), "mknod");
  if (small) (void)must(wr.setxattr(*small, 1, "inl", as_bytes("v")), "setxattr");
  if (big) (void)must(wr.setxattr(*big, 1, "large", as_bytes(std::string(1500, 'x'))), "setxattr");
  (void)must(wr.unmount(), "unmount");
  return SparseImage::capture(*dev);
}

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
    auto add = [&](const char* name, SparseImage img, std::vector<std::string> files,
                   std::vector<std::pair<std::string, std::string>> dentries) {
      Template tp{name, std::move(img), {}, {}, std::move(files), std::move(dentries)};
      const auto* sb = reinterpret_cast<const SuperBlock*>(tp.img.get(0) + kSuperOffset);
      const std::uint64_t main_blk = sb->main_blkaddr.get();
      for (const auto& [b, data] : tp.img.blocks) (b < main_blk ? tp.meta : tp.main).push_back(b);
      v->push_back(std::move(tp));
    };
    for (const auto& [name, spec] : specs) {
      f2fstest::RichImageOptions s = spec;
      s.node_segment = true;
      s.consistent = true;
      auto r = f2fstest::build_rich_image(s);
      if (!r.error.empty()) {
        ADD_FAILURE() << "template " << name << ": " << r.error;
        continue;
      }
      add(name, std::move(r.img), {"/", "/small", "/big", "/xa", "/dir", "/dir/inl", "/link", "/longlink", "/fifo"},
          {{"/", "small"}, {"/", "dir"}, {"/dir", "f00"}, {"/dir/inl", "x"}, {"/dir", "."}, {"/dir", ".."}});
    }
    std::string err;
    SparseImage wimg = writer_image(&err);
    if (!err.empty()) ADD_FAILURE() << "template writer: " << err;
    else
      add("writer", std::move(wimg), {"/", "/small", "/d", "/d/big", "/sparse", "/link", "/fifo", "/d/n7", "/d/sub"},
          {{"/", "d"}, {"/", "small"}, {"/d", "n3"}, {"/d", "big"}, {"/d", "."}, {"/d", ".."}, {"/d/sub", "hard"}});
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
    if (!f2fstest::sampled(static_cast<std::uint64_t>(seed))) continue;
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
  static const char* const kNames[] = {"checksums_quota", "plain", "compression", "writer"};
  return kNames[i.param];
}
INSTANTIATE_TEST_SUITE_P(Rich, FsckMutation, ::testing::Range<std::size_t>(0, 4), template_name);

// ---- Typed mutations, truncations, and the writer ------------------------------

struct Mutant {
  SparseImage img;
  std::uint64_t truncate_to = ~0ull;  ///< bytes (the device is cut short)
  std::string what;                   ///< the edits, for the report
};

// One typed edit (corrupt.hpp grammar) of a random metadata area, `raw:`
// (checksums left broken) one time in four.
std::string typed_edit(const Template& t, Rng& r) {
  const std::string f = t.files[r.below(t.files.size())];
  const auto& [dir, name] = t.dentries[r.below(t.dentries.size())];
  const char* const ops[] = {"=", "+=", "-=", "^="};
  const std::uint64_t vals[] = {0, 1, 2, 3, 5, 0xFFFFFFFFull, 0x7FFFFFFFull, r.below(70000), r.next() & 0xFFFFFFFFull,
                                4096, 1ull << r.below(31)};
  const std::string op = ops[r.below(4)];
  const std::string v = std::to_string(vals[r.below(std::size(vals))]);
  auto pick = [&](std::initializer_list<const char*> l) { return std::string(*(l.begin() + r.below(l.size()))); };
  const std::string raw = r.below(4) == 0 ? "raw:" : "";
  switch (r.below(11)) {
    case 0:
      return raw + "sb[" + std::to_string(r.below(2)) + "]." +
             pick({"log_blocksize", "log_blocks_per_seg", "segment_count", "segment_count_main", "segment_count_nat",
                   "segment_count_sit", "cp_blkaddr", "sit_blkaddr", "nat_blkaddr", "ssa_blkaddr", "main_blkaddr",
                   "root_ino", "node_ino", "block_count", "cp_payload", "feature", "qf_ino[0]", "segs_per_sec"}) +
             op + v;
    case 1:
      return raw + pick({"cp.", "cpx."}) +
             pick({"user_block_count", "valid_block_count", "free_segment_count", "cur_node_segno[0]",
                   "cur_node_blkoff[1]", "cur_data_segno[1]", "cur_data_blkoff[0]", "cur_data_blkoff[1]",
                   "ckpt_flags", "cp_pack_total_block_count", "cp_pack_start_sum", "valid_node_count",
                   "valid_inode_count", "next_free_nid", "alloc_type[1]", "rsvd_segment_count",
                   "overprov_segment_count", "checkpoint_ver"}) +
             op + v;
    case 2:
      return "nat[" + f + "]." + pick({"block_addr", "ino", "version"}) + op + v;
    case 3: {
      const std::string seg = r.below(2) ? f : std::to_string(r.below(40));
      const std::string fld = pick({"vblocks", "type", "mtime", "valid_map"});
      if (fld == "valid_map") return "sit[" + seg + "].valid_map[" + std::to_string(r.below(512)) + "]=" + std::to_string(r.below(2));
      return "sit[" + seg + "]." + fld + op + v;
    }
    case 4:
      return "ssa[" + f + "]." + pick({"nid", "version", "ofs_in_node"}) + op + v;
    case 5:
    case 6:
      return raw + "inode[" + f + "]." +
             pick({"i_mode", "i_inline", "i_links", "i_size", "i_blocks", "i_xattr_nid", "i_flags", "i_pino",
                   "i_namelen", "i_current_depth", "i_dir_level", "i_extra_isize", "i_inline_xattr_size",
                   "i_addr[0]", "i_addr[9]", "i_nid[0]", "i_ext.blk_addr", "i_ext.len", "addr[0]", "addr[1]",
                   "footer.nid", "footer.ino", "footer.offset", "footer.flag"}) +
             op + v;
    case 7:
      return "dentry[" + (dir == "/" ? std::string() : dir) + "/" + name + "]." +
             pick({"hash_code", "ino", "name_len", "file_type", "bit"}) + (r.below(2) ? op : std::string("=")) +
             (r.below(3) ? v : std::to_string(r.below(2)));
    case 8:
      return r.below(2) ? "xattr[" + f + "].entry[" + std::to_string(r.below(2)) + "]." +
                              pick({"e_name_index", "e_name_len", "e_value_size"}) + op + v
                        : "xattr[" + f + "].trailing=" + v;
    case 9:
      return pick({"natj.n_nats", "sitj.n_sits"}) + op + v;
    default:
      return r.below(2) ? "orphan_add=" + std::to_string(3 + r.below(60))
                        : "dentry_add[" + (dir == "/" ? std::string() : dir) + "/m" + std::to_string(r.below(100)) +
                              "]=" + std::to_string(3 + r.below(60));
  }
}

// A mutant of template `t`: typed edits (one in three seeds, 1-3 of them),
// else mutate()'s raw damage; one in twelve also truncated (the device
// loses 512 bytes to half of its blocks).
Mutant mutate_any(const Template& t, std::uint64_t seed) {
  Rng r(seed ^ 0xA5A5A5A5ull);
  Mutant m;
  if (r.below(3) == 0) {
    m.img = t.img;
    auto dev = m.img.to_device();
    auto c = f2fstest::corrupt::Corruptor::open(*dev);
    if (c) {
      const unsigned n = 1 + static_cast<unsigned>(r.below(3));
      for (unsigned i = 0; i < n; ++i) {
        const std::string e = typed_edit(t, r);
        if ((*c)->apply(e)) m.what += (m.what.empty() ? "" : "; ") + e;
      }
    }
    m.img = SparseImage::capture(*dev);
  }
  if (m.what.empty()) {
    m.img = mutate(t, seed);
    m.what = "raw block damage (seed " + std::to_string(seed) + ")";
  }
  if (r.below(12) == 0) {
    const std::uint64_t blocks = m.img.size_bytes / f2fscore::disk::kBlockSize;
    m.truncate_to = r.below(2) ? m.img.size_bytes - 512 : (blocks / 2 + r.below(blocks / 2)) * f2fscore::disk::kBlockSize;
    m.what += "; truncated to " + std::to_string(m.truncate_to) + " bytes";
  }
  return m;
}

// Problem codes (severity above info) our checker reports, or "ERROR";
// `first` (when given) gets the first problem of each code.
std::set<std::string> our_codes(f2fscore::BlockDevice& dev, std::map<std::string, std::string>* first = nullptr) {
  f2fscore::fsck::Options o;
  o.force = true;
  auto rep = f2fscore::fsck::check(dev, o);
  std::set<std::string> out;
  if (!rep) {
    out.insert("ERROR");
    return out;
  }
  for (const auto& p : rep->problems) {
    if (f2fscore::fsck::definition(p.code).severity == f2fscore::fsck::Severity::info) continue;
    const std::string code(f2fscore::fsck::code_name(p.code));
    if (first && !first->count(code)) (*first)[code] = p.to_string();
    out.insert(code);
  }
  return out;
}

struct WriterOutcome {
  bool accepted = false;
  bool refusal_changed = false;    // refused, yet a byte changed
  std::vector<std::string> added;  // codes after the run that were not reported before
  std::string first_added;         // one of them, with its objects
  std::string refusal;             // the error of a refusal
};

// The writer as f2fscore-sload (`populate`) or `f2fscore-io fs` (`workload`)
// drives it: mount, populate `src` (or a smallfiles workload), unmount.
WriterOutcome writer_run(const Mutant& m, bool populate, const std::string& src) {
  WriterOutcome out;
  auto dev = m.img.to_device(m.truncate_to);
  const std::set<std::string> before = our_codes(*dev);
  f2fscore::MountOptions mo;
  mo.fixed_time = 1700000500;
  mo.checkpoint_interval_s = 0;
  // Any write request of a refused mount counts as a changed byte.
  f2fstest::BudgetDevice g(*dev, 8'000'000);
  auto w = f2fscore::Writer::mount(g, mo);
  if (!w) {
    out.refusal = w.error().to_string();
    out.refusal_changed = g.writes() > 0;
    return out;
  }
  out.accepted = true;
  if (populate) {
    f2fscore::PopulateOptions po;
    po.target = "/copied";
    po.fixed_time = 1700000500;
    (void)f2fscore::populate(**w, src, po);
  } else {
    f2fscore::WorkloadSpec spec;
    spec.kind = f2fscore::Workload::smallfiles;
    spec.dir = "/wl";
    spec.files = 30;
    spec.file_bytes = 5000;
    (void)f2fscore::run_workload(**w, spec);
  }
  (void)(*w)->unmount();
  w->reset();
  std::map<std::string, std::string> first;
  const std::set<std::string> after = our_codes(*dev, &first);
  for (const auto& c : after)
    if (!before.count(c)) out.added.push_back(c);
  if (!out.added.empty()) out.first_added = first.count(out.added[0]) ? first[out.added[0]] : out.added[0];
  return out;
}

// A small host tree for populate: a few files, a directory, a symlink.
std::string populate_source() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    static const f2fstest::TempDir tmp;  // removed at exit
    const fs::path d = tmp.path() / "src";
    fs::create_directories(d / "sub");
    std::ofstream(d / "a") << std::string(10000, 'a');
    std::ofstream(d / "sub" / "b") << "small";
    std::ofstream(d / "sub" / "c") << std::string(70000, 'c');
    std::error_code ec;
    fs::create_symlink("a", d / "l", ec);
    return d.string();
  }();
  return dir;
}

struct WriterTally {
  int mutants = 0, accepted = 0, refused = 0, refusal_changed = 0, added = 0;
  std::map<std::string, std::string> added_examples;  // code -> mutant
};

void tally(WriterTally& t, const WriterOutcome& o, const std::string& what) {
  ++t.mutants;
  if (o.accepted) ++t.accepted;
  else ++t.refused;
  t.refusal_changed += o.refusal_changed;
  if (!o.added.empty()) {
    ++t.added;
    for (const auto& c : o.added)
      if (!t.added_examples.count(c)) t.added_examples[c] = what + " -> " + o.first_added;
  }
}

class WriterMutation : public ::testing::TestWithParam<std::size_t> {};

// Acceptance for the writer: over the seeded mutants of a template, no
// refusal changes a byte and no accepted mutant is left with a problem our
// checker did not report before.
TEST_P(WriterMutation, RefusesWithoutWritingAndAddsNoProblem) {
  ASSERT_LT(GetParam(), templates().size());
  const Template& t = templates()[GetParam()];
  const int n = std::max(1, mutations_per_template() / 2);
  WriterTally wt;
  for (int seed = 0; seed < n; ++seed) {
    if (!f2fstest::sampled(static_cast<std::uint64_t>(seed))) continue;
    const Mutant m = mutate_any(t, static_cast<std::uint64_t>(seed) * 8 + 4 + GetParam());
    const std::string name = std::string(t.name) + " seed " + std::to_string(seed) + " (" + m.what + ")";
    for (bool pop : {true, false}) {
      f2fstest::Watchdog::get().start(name + (pop ? " populate" : " workload"), kHangSeconds);
      const WriterOutcome o = writer_run(m, pop, populate_source());
      f2fstest::Watchdog::get().stop();
      tally(wt, o, name);
      EXPECT_FALSE(o.refusal_changed) << name << ": the refusal changed the image: " << o.refusal;
      EXPECT_TRUE(o.added.empty()) << name << (pop ? " populate" : " workload") << ": the writer added "
                                   << o.first_added;
    }
  }
  std::printf("[ %s ] %d writer runs: %d accepted, %d refused (%d changed a byte), %d added a problem\n", t.name,
              wt.mutants, wt.accepted, wt.refused, wt.refusal_changed, wt.added);
}
INSTANTIATE_TEST_SUITE_P(Rich, WriterMutation, ::testing::Values<std::size_t>(1, 3), template_name);

}  // namespace

// ---- The benchmark run (bench/mutation_bench.sh) -------------------------------
// Each mutant in a child process (fork, pipe, waitpid) and fsck.f2fs: POSIX
// hosts only.
#if !defined(_WIN32)

namespace bench {

std::uint64_t env_u64(const char* name, std::uint64_t def) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoull(s, nullptr, 0) : def;
}

bool save_image(const SparseImage& img, std::uint64_t truncate_to, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const std::uint64_t size = std::min(img.size_bytes, truncate_to) / 512 * 512;
  bool ok = true;
  for (const auto& [b, data] : img.blocks) {
    const std::uint64_t off = b * f2fscore::disk::kBlockSize;
    if (off >= size) continue;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(f2fscore::disk::kBlockSize, size - off));
    ok = ok && fseeko(f, static_cast<off_t>(off), SEEK_SET) == 0 && std::fwrite(data.data(), 1, n, f) == n;
  }
  ok = ok && ftruncate(fileno(f), static_cast<off_t>(size)) == 0;
  return std::fclose(f) == 0 && ok;
}

// fsck.f2fs on `path` (`timeout 60`, stdin closed): "crash" (killed by a
// signal), "hang" (timeout), "clean" (exit 0 and nothing fixed or failed,
// as NOTES.md's "clean under fsck.f2fs -f"), else "rejects".
std::string fsck_f2fs(const std::string& bin, const std::string& path) {
  const std::string cmd = "timeout -s KILL 60 " + bin + " -f '" + path + "' < /dev/null 2>&1";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "rejects";
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = pclose(p);
  // timeout(1) reports a signal that ended the command as 128 + n (SIGKILL
  // is its own, at the limit); fsck.f2fs exits 255 for errors of its own.
  const int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (code == 128 + SIGKILL) return "hang";
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    if (code == 128 + sig) return "crash";
  if (WIFSIGNALED(st)) return "crash";
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return "rejects";
  for (const char* bad : {"[Fail]", "[ASSERT]", "[FIX]", "Fixing", "Reconnect", "Move curseg"})
    if (out.find(bad) != std::string::npos) return "rejects";
  return "clean";
}

// What one child reports on its pipe: "key value" lines, "step NAME" before
// each step (a crash or hang is charged to the last step started).
struct Child {
  int fd;
  void put(const std::string& k, const std::string& v) {
    const std::string l = k + " " + v + "\n";
    (void)!write(fd, l.data(), l.size());
  }
};

std::string codes_of(const f2fscore::fsck::Report& r) {
  std::set<std::string> c;
  for (const auto& p : r.problems)
    if (f2fscore::fsck::definition(p.code).severity != f2fscore::fsck::Severity::info)
      c.insert(std::string(f2fscore::fsck::code_name(p.code)));
  std::string s;
  for (const auto& x : c) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? "-" : s;
}

void child_run(const Mutant& m, const std::string& repaired_path, const std::string& trunc_dir, Child out) {
  using namespace f2fscore::fsck;
  {
    out.put("step", "check");
    auto dev = m.img.to_device(m.truncate_to);
    const SparseImage orig = SparseImage::capture(*dev);
    f2fstest::BudgetDevice g(*dev, 4'000'000);
    Options o;
    o.force = true;
    auto rep = check(g, o);
    out.put("n_wrote", (g.writes() > 0 || !(SparseImage::capture(*dev).blocks == orig.blocks)) ? "1" : "0");
    out.put("n_exit", rep ? std::to_string(rep->exit_code()) : "8");
    out.put("n_codes", rep ? codes_of(*rep) : "ERROR");
    if (g.budget_exceeded()) out.put("n_runaway", "1");
  }
  {
    out.put("step", "repair");
    // A truncated mutant is repaired as f2fscore-fsck repairs an image
    // file: in a file the repair may grow back (Options::grow).
    std::unique_ptr<f2fscore::BlockDevice> dev;
    Options o;
    o.mode = Mode::repair_all;
    o.force = true;
    const std::string trunc_path = trunc_dir + "/truncated-" + std::to_string(getpid()) + ".img";
    if (m.truncate_to != ~0ull && save_image(m.img, m.truncate_to, trunc_path)) {
      f2fscore::OpenOptions oo;
      if (auto d = f2fscore::open_posix_device(trunc_path, oo)) dev = std::move(*d);
      o.grow = [trunc_path](std::uint64_t bytes) -> f2fscore::Status {
        if (::truncate(trunc_path.c_str(), static_cast<off_t>(bytes)) != 0)
          return f2fscore::make_error(f2fscore::Errc::io, std::string("truncate: ") + std::strerror(errno));
        return {};
      };
    }
    if (!dev) {
      dev = m.img.to_device(m.truncate_to);
      o.grow = nullptr;
    }
    struct Unlink {
      std::string p;
      ~Unlink() { std::filesystem::remove(p); }
    } unlink_trunc{trunc_path};
    auto r1 = check(*dev, o);
    out.put("y1_exit", r1 ? std::to_string(r1->exit_code()) : "8");
    if (!r1) out.put("y1_error", r1.error().to_string());
    if (r1) {
      out.put("step", "repair2");
      // The file reopened, as f2fscore-fsck opens it again (its size may
      // have grown).
      if (o.grow) {
        f2fscore::OpenOptions oo;
        if (auto d = f2fscore::open_posix_device(trunc_path, oo)) dev = std::move(*d);
      }
      auto r2 = check(*dev, o);
      out.put("y2_exit", r2 ? std::to_string(r2->exit_code()) : "8");
      out.put("y2_codes", r2 ? codes_of(*r2) : "ERROR");
      // A device cut short where the lost tail held blocks in use: left,
      // exit 4, with what is lost reported (nothing brings it back).
      if (r2)
        for (const auto& p : r2->problems)
          if (p.code == Code::VOLUME_TRUNCATED && p.detail.find("; lost:") != std::string::npos) out.put("y2_lost_tail", "1");
      if (!repaired_path.empty() && r2 && r2->exit_code() <= 1) {
        const SparseImage rep_img = SparseImage::capture(*dev);
        out.put("saved", save_image(rep_img, ~0ull, repaired_path) ? "1" : "0");
      }
    }
  }
  for (bool pop : {true, false}) {
    out.put("step", pop ? "populate" : "workload");
    const WriterOutcome o = writer_run(m, pop, populate_source());
    const std::string k = pop ? "pop" : "wl";
    out.put(k + "_accepted", o.accepted ? "1" : "0");
    out.put(k + "_changed", o.refusal_changed ? "1" : "0");
    out.put(k + "_added", o.added.empty() ? "-" : o.first_added);
  }
  out.put("step", "done");
}

}  // namespace bench

// bench/mutation_bench.sh's driver: F2FSCORE_MUTANTS mutants (default 2000)
// from seed F2FSCORE_MUTATION_SEED (default 1), spread over the templates,
// each run in a child process (a crash or a hang, 120 s, is counted, not
// fatal); FSCK_F2FS (if set) also checks each mutant and each of our
// repaired images; F2FSCORE_MUTATION_WORK: the directory for those images;
// F2FSCORE_MUTATION_BASELINE=1 runs the templates unchanged;
// F2FSCORE_MUTATION_KEEP: a directory to save every mutant in (with
// F2FSCORE_MUTATION_KEEP_ONLY=1 nothing else is done);
// F2FSCORE_MUTATION_FIRST=F (default 0): only mutants F to N-1 of the N,
// each the same as in the whole run (runs of disjoint ranges side by side
// cover the N).
TEST(MutationBench, DISABLED_Run) {
  using namespace bench;
  const std::uint64_t n = env_u64("F2FSCORE_MUTANTS", 2000), seed0 = env_u64("F2FSCORE_MUTATION_SEED", 1);
  const std::uint64_t first = env_u64("F2FSCORE_MUTATION_FIRST", 0);
  const char* ff = std::getenv("FSCK_F2FS");
  const std::string fsck_bin = ff && *ff ? ff : "";
  const char* wd = std::getenv("F2FSCORE_MUTATION_WORK");
  const std::string work = wd && *wd ? wd : std::filesystem::temp_directory_path().string();
  const auto& ts = templates();
  ASSERT_FALSE(ts.empty());
  populate_source();
  // F2FSCORE_MUTATION_KEEP: a directory that gets every mutant (N.img) and
  // their list ("N PATH TEMPLATE #N: EDITS" lines, list.txt).
  const char* kd = std::getenv("F2FSCORE_MUTATION_KEEP");
  const std::string keep_dir = kd && *kd ? kd : "";
  std::ofstream keep_list;
  if (!keep_dir.empty()) keep_list.open(keep_dir + "/list.txt");
  std::map<std::string, std::uint64_t> fig;
  std::map<std::string, std::string> examples;  // figure/class -> one mutant
  // F2FSCORE_MUTATION_FAILURES: a file that gets one line per mutant and
  // failure figure ("INDEX FIGURE: EDITS"), for replaying them all.
  const char* fl = std::getenv("F2FSCORE_MUTATION_FAILURES");
  std::ofstream failures;
  if (fl && *fl) failures.open(fl);
  std::uint64_t index = 0;
  // Each figure in all and per template ("NAME [template]").
  const char* tname = "";
  auto count = [&](const std::string& k, const std::string& what) {
    if (fig[k]++ == 0 || !examples.count(k)) examples[k] = what;
    if (k.rfind("class_", 0) != 0) ++fig[k + " [" + tname + "]"];
    for (const char* f : {"ours_hang", "ours_crash", "ours_check_only", "ours_check_runaway", "ours_repair_not",
                          "ours_repair_operational", "class_left", "fsck_f2fs_rejects", "writer_refusal_changed",
                          "writer_added"})
      if (failures.is_open() && k.rfind(f, 0) == 0) failures << index << ' ' << k << ": " << what << std::endl;
  };
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = first; i < n; ++i) {
    index = i;
    const Template& t = ts[i % ts.size()];
    Mutant m;
    if (std::getenv("F2FSCORE_MUTATION_BASELINE")) {
      m.img = t.img;
      m.what = "the template itself";
    }
    else m = mutate_any(t, seed0 * 1000003ull + i);
    const std::string what = std::string(t.name) + " #" + std::to_string(i) + ": " + m.what;
    tname = t.name;
    if (!keep_dir.empty()) {
      // The mutant as an image file, for bench/mutation_bench.sh's runs of the tool binaries.
      const std::string img = keep_dir + "/" + std::to_string(i) + ".img";
      if (save_image(m.img, m.truncate_to, img)) keep_list << i << ' ' << img << ' ' << what << '\n';
      // F2FSCORE_MUTATION_KEEP_ONLY=1: only the mutants are saved (the tool
      // pass then runs beside a library pass of its own).
      if (std::getenv("F2FSCORE_MUTATION_KEEP_ONLY")) continue;
    }
    const std::string rep_path = fsck_bin.empty() ? "" : work + "/repaired.img";
    std::filesystem::remove(rep_path.empty() ? work + "/none" : rep_path);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      child_run(m, rep_path, work, Child{fds[1]});
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    int status = 0;
    bool hung = false;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      fd_set rs;
      FD_ZERO(&rs);
      FD_SET(fds[0], &rs);
      timeval tv{1, 0};
      if (select(fds[0] + 1, &rs, nullptr, nullptr, &tv) > 0) {
        const ssize_t r = read(fds[0], buf, sizeof buf);
        if (r <= 0) break;
        text.append(buf, static_cast<std::size_t>(r));
      }
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(120)) {
        kill(pid, SIGKILL);
        hung = true;
        break;
      }
    }
    close(fds[0]);
    waitpid(pid, &status, 0);
    std::map<std::string, std::string> kv;
    std::string last_step;
    for (std::size_t p = 0; p < text.size();) {
      const std::size_t e = text.find('\n', p);
      const std::string line = text.substr(p, e == std::string::npos ? std::string::npos : e - p);
      p = e == std::string::npos ? text.size() : e + 1;
      const std::size_t sp = line.find(' ');
      if (sp == std::string::npos) continue;
      kv[line.substr(0, sp)] = line.substr(sp + 1);
      if (line.compare(0, sp, "step") == 0) last_step = line.substr(sp + 1);
    }
    count("mutants", what);
    if (m.truncate_to != ~0ull) ++fig["truncated"];
    if (hung) count("ours_hang_" + last_step, what);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || last_step != "done") count("ours_crash_" + last_step, what);
    if (kv["n_wrote"] == "1") count("ours_check_only_wrote", what);
    if (kv["n_runaway"] == "1") count("ours_check_runaway", what);
    if (kv["n_exit"] != "0") count("ours_check_found_problems", what);
    if (kv.count("y2_exit")) count("ours_repair_runs", what);
    if (kv.count("y2_exit") && kv["y2_exit"] != "0" && kv["y2_lost_tail"] == "1")
      count("ours_repair_left_lost_tail (exit " + kv["y2_exit"] + ", the loss reported)", what);
    else if (kv.count("y2_exit") && kv["y2_exit"] != "0") {
      count("ours_repair_not_converged", what);
      for (std::size_t a = 0, b; a < kv["y2_codes"].size(); a = b + 1) {
        b = kv["y2_codes"].find(',', a);
        if (b == std::string::npos) b = kv["y2_codes"].size();
        count("class_left_after_two_passes " + kv["y2_codes"].substr(a, b - a) + " [" + tname + "]", what);
      }
    }
    if (kv["y1_exit"] == "8") {
      ++fig["ours_repair_operational_error"];
      if (failures.is_open())
        failures << i << " ours_repair_operational_error: " << what << " -> " << kv["y1_error"] << std::endl;
    }
    for (const std::string k : {"pop", "wl"}) {
      if (!kv.count(k + "_accepted")) continue;
      count("writer_runs", what);
      count(kv[k + "_accepted"] == "1" ? "writer_accepted" : "writer_refused", what);
      if (kv[k + "_changed"] == "1") count("writer_refusal_changed_a_byte", what + " (" + k + ")");
      if (kv[k + "_added"] != "-") count("writer_added_a_problem", what + " (" + k + "): " + kv[k + "_added"]);
    }
    if (!fsck_bin.empty()) {
      if (kv["saved"] == "1") {
        const std::string r = fsck_f2fs(fsck_bin, rep_path);
        count("fsck_f2fs_on_our_repair_runs", what);
        if (r != "clean") count("fsck_f2fs_rejects_our_repair (" + r + ")", what);
      }
      const std::string mp = work + "/mutant.img";
      if (save_image(m.img, m.truncate_to, mp)) {
        const std::string r = fsck_f2fs(fsck_bin, mp);
        ++fig["fsck_f2fs_runs"];
        if (r == "crash" || r == "hang") count("fsck_f2fs_" + r, what);
        std::filesystem::remove(mp);
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("mutation run: %llu mutants (#%llu to #%llu) from seed %llu over %zu templates, %.0f s\n",
              static_cast<unsigned long long>(n > first ? n - first : 0), static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(n ? n - 1 : 0), static_cast<unsigned long long>(seed0), ts.size(), secs);
  for (const auto& [k, v] : fig) {
    std::printf("  %-60s %llu", k.c_str(), static_cast<unsigned long long>(v));
    const bool per_template = k.find(" [") != std::string::npos && k.rfind("class_", 0) != 0;
    if (!per_template && examples.count(k) && k.rfind("fsck_f2fs_on", 0) != 0 && k != "mutants" && k.rfind("writer_runs", 0) != 0 &&
        k != "writer_accepted" && k != "writer_refused" && k != "ours_check_found_problems" && k != "ours_repair_runs")
      std::printf("   e.g. %s", examples[k].c_str());
    std::printf("\n");
  }
}

#endif  // !_WIN32

namespace {

// Every template is clean before it is mutated: our full check (-n -f)
// reports nothing, and fsck.f2fs -f (FSCK_F2FS, default
// /usr/sbin/fsck.f2fs; skipped where it is not installed, a failure under
// F2FSCORE_REQUIRE_FSCK=1 or F2FSCORE_REQUIRE_ORACLE=1) neither fails nor fixes anything. A
// mutant's problems are then the mutation's, not the template's. On
// Windows our check alone (fsck.f2fs is a Linux program; the Linux builds
// run both on the same templates).
TEST(MutationTemplates, CleanUnderBothCheckers) {
  const auto& ts = templates();
  ASSERT_EQ(ts.size(), 4u);
#if !defined(_WIN32)
  const char* ff = std::getenv("FSCK_F2FS");
  const std::string fsck_bin = ff && *ff ? ff : "/usr/sbin/fsck.f2fs";
  const bool have_fsck = access(fsck_bin.c_str(), X_OK) == 0;
  auto required = [](const char* v) { return std::getenv(v) && std::string(std::getenv(v)) == "1"; };
  if (!have_fsck && (required("F2FSCORE_REQUIRE_FSCK") || required("F2FSCORE_REQUIRE_ORACLE")))
    ADD_FAILURE() << fsck_bin << " not found but F2FSCORE_REQUIRE_FSCK or F2FSCORE_REQUIRE_ORACLE is 1";
#endif
  for (const auto& t : ts) {
    auto dev = t.img.to_device();
    f2fscore::fsck::Options o;
    o.force = true;
    auto rep = f2fscore::fsck::check(*dev, o);
    ASSERT_TRUE(rep) << t.name << ": " << rep.error().to_string();
    EXPECT_TRUE(rep->full_check) << t.name;
    EXPECT_EQ(rep->exit_code(), 0) << t.name;
    for (const auto& p : rep->problems) ADD_FAILURE() << t.name << ": " << p.to_string();
#if !defined(_WIN32)
    if (!have_fsck) continue;
    const std::string path = (f2fstest::scratch_dir() /
                              ("f2fscore-template-" + std::string(t.name) + ".img"))
                                 .string();
    ASSERT_TRUE(bench::save_image(t.img, ~0ull, path)) << path;
    // fsck.f2fs -f rewrites the checkpoint: keep the template as it was.
    std::filesystem::copy_file(path, path + ".keep", std::filesystem::copy_options::overwrite_existing);
    const std::string verdict = bench::fsck_f2fs(fsck_bin, path);
    EXPECT_EQ(verdict, "clean") << t.name << " (image kept at " << path << ".keep)";
    if (verdict == "clean") std::filesystem::remove(path + ".keep");
    std::filesystem::remove(path);
#endif
  }
}

}  // namespace

// One mutant of the benchmark run again, for a look at it:
// F2FSCORE_MUTANT=I (its index in the run), F2FSCORE_MUTATION_SEED (default
// 1); prints the edits and the problems of -y, then of -y again, and saves
// the mutant and the twice-repaired image as F2FSCORE_MUTANT_OUT (default
// /tmp/f2fscore-mutant) with .img and .repaired.img.
#if !defined(_WIN32)
TEST(MutationBench, DISABLED_Replay) {
  using namespace bench;
  const std::uint64_t i = env_u64("F2FSCORE_MUTANT", 0), seed0 = env_u64("F2FSCORE_MUTATION_SEED", 1);
  const char* o = std::getenv("F2FSCORE_MUTANT_OUT");
  const std::string out = o && *o ? o : "/tmp/f2fscore-mutant";
  const auto& ts = templates();
  ASSERT_FALSE(ts.empty());
  const Template& t = ts[i % ts.size()];
  const Mutant m = mutate_any(t, seed0 * 1000003ull + i);
  std::printf("%s #%llu: %s\n", t.name, static_cast<unsigned long long>(i), m.what.c_str());
  ASSERT_TRUE(save_image(m.img, m.truncate_to, out + ".img"));
  auto dev = m.img.to_device(m.truncate_to);
  f2fscore::fsck::Options op;
  op.mode = f2fscore::fsck::Mode::repair_all;
  op.force = true;
  for (int pass = 1; pass <= 2; ++pass) {
    auto r = f2fscore::fsck::check(*dev, op);
    if (!r) {
      std::printf("pass %d: error %s\n", pass, r.error().to_string().c_str());
      return;
    }
    std::printf("pass %d: exit %d\n", pass, r->exit_code());
    for (const auto& p : r->problems) std::printf("  %s\n", p.to_string().c_str());
  }
  ASSERT_TRUE(save_image(SparseImage::capture(*dev), ~0ull, out + ".repaired.img"));
  // fsck.f2fs -f on a copy of the repaired image (FSCK_F2FS, when set).
  if (const char* ff = std::getenv("FSCK_F2FS"); ff && *ff) {
    std::filesystem::copy_file(out + ".repaired.img", out + ".fsck.img", std::filesystem::copy_options::overwrite_existing);
    std::printf("fsck.f2fs -f on the repaired image: %s\n", fsck_f2fs(ff, out + ".fsck.img").c_str());
    std::filesystem::remove(out + ".fsck.img");
  }
  // The writer on the mutant, as the run drives it.
  for (bool pop : {true, false}) {
    const WriterOutcome w = writer_run(m, pop, populate_source());
    std::printf("writer (%s): %s%s%s\n", pop ? "populate" : "workload", w.accepted ? "accepted" : "refused: ",
                w.accepted ? "" : w.refusal.c_str(), w.refusal_changed ? " (a byte changed)" : "");
    for (const auto& c : w.added) std::printf("  added %s%s\n", c.c_str(), c == w.added[0] ? (": " + w.first_added).c_str() : "");
  }
}
#endif  // !_WIN32
