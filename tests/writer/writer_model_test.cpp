// The model-based random test of the writer: a
// seeded generator drives every operation — create, write (files up to
// 64 MiB in the big seeds), truncate, fallocate/punch/zero_range, unlink of
// closed and open files, rename (replacing too), mkdir, rmdir, link,
// symlink, mknod, setattr, setxattr/removexattr, fsync/fdatasync, sync —
// against an in-memory model of inodes (types, modes, owners, times, link
// counts, contents, symlink targets, device numbers, xattrs), with unmounts,
// read-only mounts and sessions that end without an unmount (after a sync,
// with open-unlinked files on the orphan list) along the way. After each
// session our reader's tree equals the model and our checker is clean; in
// the interop build fsck.f2fs -f is clean too.
//
// Feature sets (Profile's "Feature sets", Runner's "Feature sets" section,
// the tests at the end): compression (each algorithm, clusters of 4 and 16
// blocks) and fs-verity, with their own operations and checks.
//
// Unit seeds (label unit) are small and fast; WRITER_MODEL_SEEDS="a-b" and
// the interop build run more, with wide directories, deep paths and big
// files. WriterModelOracle.DISABLED_* drive writer_model_linux.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "f2fscore/casefold.hpp"
#include "f2fscore/inspect.hpp"
#include "f2fscore/file_handle.hpp"
#include "writer/verity_reference.hpp"
#include "writer/writer_test_util.hpp"

#ifndef ENOKEY
#define ENOKEY 126
#endif

namespace {

using namespace writertest;

struct MInode {
  char type = 'f';  // f d l c b p s
  bool enc = false;  ///< encrypted (made in an encrypted directory, or /enc)
  std::uint16_t perm = 0644;
  std::uint32_t uid = 0, gid = 0;
  std::string data;  // contents, or the symlink target
  std::uint32_t rdev = 0;
  std::map<std::pair<int, std::string>, std::string> xattrs;
  Timespec atime, mtime, ctime;
  nid_t ino = 0;
  int opens = 0;
  std::uint32_t inline_xattr = 200;  ///< bytes of its inline xattr area (new inodes: 50 words)
  std::uint64_t reserved_past_eof = 0;  ///< keep_size fallocate bytes past i_size (an upper bound)
  bool cf = false;  ///< F2FS_CASEFOLD_FL (directories)
  // The feature sets' state (Runner's "Feature sets" section).
  bool compr = false;     ///< F2FS_COMPR_FL (files and directories)
  bool released = false;  ///< compressed blocks released: the data is read-only
  std::uint64_t released_blocks = 0;  ///< what the last release gave back
  bool verity = false;    ///< fs-verity: the data is read-only
  std::string verity_salt;
  char blocks = 0;  ///< whether the file holds data blocks: 0 none, 1 some, 2 not known
};

// The key Linux matches a name by in a casefolded directory, for the names
// this test makes (ASCII, U+00DF ß, U+212A KELVIN SIGN, U+00C9 É, U+00E9 é,
// e + U+0301): their utf8-12.1 folds written out by hand from Unicode's
// CaseFolding.txt (full folding: ß -> "ss", K -> "k", É -> é) and canonical
// decompositions (é -> e U+0301). A fold of 255 bytes or more is not used
// (f2fs_init_casefolded_name()): the name's own bytes are its key.
std::string hand_fold(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "\xc3\x9f") == 0) {
      o += "ss";
      i += 2;
    } else if (s.compare(i, 3, "\xe2\x84\xaa") == 0) {
      o += "k";
      i += 3;
    } else if (s.compare(i, 2, "\xc3\x89") == 0 || s.compare(i, 2, "\xc3\xa9") == 0) {
      o += "e\xcc\x81";
      i += 2;
    } else {
      const char c = s[i++];
      o += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  return o.size() >= 255 ? "\x01" + s : o;
}

struct Model {
  std::map<std::string, int> paths;  // "" is the root
  std::map<int, MInode> inodes;
  int next = 1;
  std::uint32_t inline_xattr_bytes = 200;
  std::uint32_t root_extra_links = 0;  ///< lost+found, left out of the trees

  bool has(const std::string& p) const { return paths.count(p) != 0; }
  MInode& at(const std::string& p) { return inodes.at(paths.at(p)); }
  int names(int id) const {
    int n = 0;
    for (const auto& [p, i] : paths) n += i == id;
    return n;
  }
  bool is_dir(const std::string& p) const { return has(p) && inodes.at(paths.at(p)).type == 'd'; }
  bool casefolded(const std::string& dir) const { return has(dir) && inodes.at(paths.at(dir)).cf; }
  /// The path as stored that `p` names: in a casefolded directory a name is
  /// found by its hand_fold(), elsewhere by its bytes. nullopt: none.
  std::optional<std::string> find(const std::string& p) const {
    std::string cur;
    for (std::size_t i = 1; i <= p.size();) {
      std::size_t j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      const std::string comp = p.substr(i, j - i);
      i = j + 1;
      if (!is_dir(cur)) return std::nullopt;
      if (!casefolded(cur)) {
        if (!has(cur + "/" + comp)) return std::nullopt;
        cur += "/" + comp;
        continue;
      }
      const std::string key = hand_fold(comp), pre = cur + "/";
      std::optional<std::string> hit;
      for (auto it = paths.lower_bound(pre); it != paths.end() && it->first.compare(0, pre.size(), pre) == 0; ++it) {
        const std::string leaf = it->first.substr(pre.size());
        if (leaf.find('/') == std::string::npos && hand_fold(leaf) == key) {
          hit = it->first;
          break;
        }
      }
      if (!hit) return std::nullopt;
      cur = *hit;
    }
    return cur;
  }
  bool empty_dir(const std::string& p) const {
    auto it = paths.upper_bound(p + "/");
    return it == paths.end() || it->first.compare(0, p.size() + 1, p + "/") != 0;
  }
  void forget_if_unused(int id) {
    if (!names(id) && inodes.at(id).opens == 0) inodes.erase(id);
  }
  /// Bytes the xattrs take in the area (header, entries).
  std::size_t xattr_used(const MInode& n) const {
    std::size_t u = 24;
    for (const auto& [k, v] : n.xattrs) u += xattr_entry_size(static_cast<std::uint32_t>(k.second.size()), static_cast<std::uint32_t>(v.size()));
    return u;
  }

  Tree tree(bool times = true) const {
    Tree t;
    std::map<int, std::string> group;
    for (const auto& [p, id] : paths)
      if (!group.count(id)) group[id] = p;
    for (const auto& [p, id] : paths) {
      const MInode& n = inodes.at(id);
      std::uint32_t links = 0;
      if (n.type == 'd') {
        links = 2 + (p.empty() ? root_extra_links : 0);
        for (auto it = paths.upper_bound(p + "/"); it != paths.end() && it->first.compare(0, p.size() + 1, p + "/") == 0; ++it)
          if (it->first.find('/', p.size() + 1) == std::string::npos && inodes.at(it->second).type == 'd') ++links;
      } else {
        links = static_cast<std::uint32_t>(names(id));
      }
      char head[96];
      std::snprintf(head, sizeof head, "%c %04o %u:%u links %u", n.type, n.perm, n.uid, n.gid, links);
      std::string d = head;
      if (n.type != 'd') {
        if (times) {
          char tb[160];
          std::snprintf(tb, sizeof tb, " a%llu.%u m%llu.%u c%llu.%u", static_cast<unsigned long long>(n.atime.sec), n.atime.nsec,
                        static_cast<unsigned long long>(n.mtime.sec), n.mtime.nsec, static_cast<unsigned long long>(n.ctime.sec),
                        n.ctime.nsec);
          d += tb;
        }
      }
      if (n.type == 'f') d += " size " + std::to_string(n.data.size()) + " " + digest(n.data);
      else if (n.type == 'l') d += " -> " + n.data;
      else if (n.type == 'c' || n.type == 'b') d += " rdev " + std::to_string(n.rdev);
      d += xattr_line(n.xattrs);
      if (n.type != 'd') d += " group " + group[id];
      t[p] = d;
    }
    return t;
  }
};

std::uint32_t new_encode_dev(std::uint32_t major, std::uint32_t minor) {
  return (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12);
}

struct Profile {
  std::uint64_t image_bytes = 192ull << 20;
  int phases = 4;
  int ops = 150;
  std::size_t max_write = 256u << 10;  ///< usual largest write
  std::size_t big_write = 0;           ///< occasional writes up to this (0: none)
  int wide = 0;                        ///< entries of /wide made in the first session
  int deep = 0;                        ///< depth of /deep/...
  std::uint32_t features = kRichFeatures;
  bool printable_xattrs = false;  ///< values of [a-z0-9] (the Linux guest prints them)
  /// A casefold volume (features must hold feature::casefold): /cf is
  /// casefolded, names come in mixed case with ß, KELVIN SIGN and É, paths
  /// are given in other cases, directories get +F and lose it.
  bool casefold = false;

  // ---- Feature sets (the operations in Runner's "Feature sets" section) ----
  /// Compression (features must hold feature::compression): these mount
  /// options, /z made with F2FS_COMPR_FL, names ending in .txt (compress_extension)
  /// and .raw (nocompress_extension), data in compressible runs and random
  /// bytes, cluster-aligned writes, +c / -c on files and directories,
  /// release_compress_blocks() and reserve_compress_blocks(), explicit GC.
  std::optional<MountOptions::Compression> compression;
  /// fs-verity (features must hold feature::verity): enable_verity() on
  /// closed files with salts of 0 to 32 bytes; after each mount every verity
  /// file measures as verity_reference.hpp computes from the model's data;
  /// explicit GC.
  bool verity = false;
  /// Encrypted subtrees without their key (an adopted volume): never
  /// picked; every session also tries changes there, refused with ENOKEY,
  /// and the tree check finds them unchanged.
  std::vector<std::string> frozen;
  /// The writer mounts with the oracle's test key; /enc gets a v2 policy
  /// and everything made in it is encrypted (names, contents, links).
  bool fscrypt_key = false;
  /// Sizes of the devices after the first (image_bytes) of a multi-device
  /// volume (mkfs -c); empty for one device.
  std::vector<std::uint64_t> more_devices;
  std::uint64_t volume_bytes() const {
    std::uint64_t n = image_bytes;
    for (auto b : more_devices) n += b;
    return n;
  }
};

// The oracle's test key (gtool encrypt-dir): byte i is 0x5a ^ i.
std::array<std::uint8_t, 64> model_key() {
  std::array<std::uint8_t, 64> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(0x5a ^ i);
  return k;
}

class Runner {
 public:
  Runner(std::uint32_t seed, const Profile& pr) : seed_(seed), pr_(pr), rng_(seed) {}
  /// Continues on an existing volume (one Linux changed): the model is read from it.
  Runner(std::uint32_t seed, const Profile& pr, std::unique_ptr<BlockDevice> dev, std::uint64_t first_time)
      : seed_(seed), pr_(pr), rng_(seed), dev_(std::move(dev)), first_time_(first_time) {}

  void run() {
    if (dev_) {
      adopt();
      if (::testing::Test::HasFailure()) return;
    } else {
      if (pr_.more_devices.empty()) {
        dev_ = our_mkfs(pr_.image_bytes, pr_.features);
      } else {
        std::vector<std::uint64_t> sizes{pr_.image_bytes};
        sizes.insert(sizes.end(), pr_.more_devices.begin(), pr_.more_devices.end());
        dev_ = our_mkfs_devices(sizes, pr_.features);
      }
      ASSERT_TRUE(dev_);
    }
    if (!adopted_) {
      auto v = Volume::open(*dev_);
      ASSERT_TRUE(v);
      auto root = (*v)->read_inode((*v)->superblock().root_ino.get());
      ASSERT_TRUE(root);
      m_.inline_xattr_bytes = root->inline_xattr_addrs * 4;
      m_.root_extra_links = root->links - 2;
      MInode r;
      r.inline_xattr = root->inline_xattr_addrs * 4;
      r.type = 'd';
      r.perm = root->mode & 07777;
      r.ino = root->ino;
      m_.inodes[0] = r;
      m_.paths[""] = 0;
    }
    for (phase_ = 0; phase_ < pr_.phases; ++phase_) {
      now_ = first_time_ + 1000u * static_cast<unsigned>(phase_);
      if (phase_ > 0 && rng_() % 5 == 0) {
        read_only_session();
        if (::testing::Test::HasFailure()) return;
      }
      if (phase_ > 0 && pr_.fscrypt_key && rng_() % 2 == 0) {
        nokey_session();
        if (::testing::Test::HasFailure()) return;
      }
      session();
      if (::testing::Test::HasFailure() || !codec_missing_.empty()) return;
    }
  }

  BlockDevice& device() { return *dev_; }
  Model& model() { return m_; }

 private:
  std::string ctx() const {
    return "seed " + std::to_string(seed_) + " phase " + std::to_string(phase_) + " op " + std::to_string(op_);
  }
  std::uint32_t r(std::uint32_t n) { return n ? static_cast<std::uint32_t>(rng_() % n) : 0; }
  Timespec now() const { return {now_, 0}; }

  std::vector<std::string> pick(char want) {  // 'd' dirs, 'n' non-dirs, 'f' files, '*' all but root
    std::vector<std::string> out;
    for (const auto& [p, id] : m_.paths) {
      if (is_frozen(p)) continue;
      const char t = m_.inodes.at(id).type;
      if (want == 'd' ? t == 'd' : want == 'n' ? t != 'd' : want == 'f' ? t == 'f' : !p.empty()) out.push_back(p);
    }
    return out;
  }
  MountOptions base_mo() const {
    MountOptions mo;
    if (pr_.fscrypt_key) mo.fscrypt_keys.push_back(model_key());
    return mo;
  }
  const fscrypt::Keyring* keys() {
    if (!pr_.fscrypt_key) return nullptr;
    if (ring_.empty()) EXPECT_TRUE(ring_.add(model_key()));
    return &ring_;
  }
  bool enc_dir(const std::string& dir) const { return m_.has(dir) && m_.inodes.at(m_.paths.at(dir)).enc; }
  static std::string parent_of(const std::string& p) { return p.substr(0, p.rfind('/')); }
  bool is_frozen(const std::string& p) const {
    for (const auto& f : pr_.frozen)
      if (p == f || p.rfind(f + "/", 0) == 0) return true;
    return false;
  }
  std::string any(const std::vector<std::string>& v) { return v[r(static_cast<std::uint32_t>(v.size()))]; }
  std::string new_leaf() {
    // Long names, up to 255 bytes (254 on a casefold volume: fsck.f2fs 1.15
    // hashes a name folding to 255 bytes as Linux does not).
    if (r(40) == 0) return std::string(200 + r(pr_.casefold ? 55 : 56), static_cast<char>('A' + r(26)));
    if (!pr_.casefold) return std::string(1, "fdlxyz"[r(6)]) + std::to_string(r(3000)) + compr_suffix();
    static const char* const kSuffix[] = {"", "", "", "-\xc3\x9f", "-SS", "-ss", "-\xe2\x84\xaa", "-k", "-K",
                                          "-\xc3\x89", "-\xc3\xa9", "-e\xcc\x81", "-E\xcc\x81"};
    std::string n = std::string(1, (r(2) ? "fdlxyz" : "FDLXYZ")[r(6)]) + std::to_string(r(20)) + kSuffix[r(13)];
    return n;
  }

  // `p` (a path as stored) as a caller may give it: on a casefold volume,
  // names in casefolded directories in other cases.
  std::string vary(const std::string& p) {
    if (!pr_.casefold || p.empty()) return p;
    std::string out, cur;
    for (std::size_t i = 1; i <= p.size();) {
      std::size_t j = p.find('/', i);
      if (j == std::string::npos) j = p.size();
      const std::string stored = p.substr(i, j - i);
      i = j + 1;
      std::string comp = stored;
      if (m_.casefolded(cur) && hand_fold(stored)[0] != '\x01' && r(2)) {
        for (char& c : comp)
          if (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) && r(2)) c = static_cast<char>(c ^ 0x20);
        if (const auto k = comp.find("\xc3\x9f"); k != std::string::npos && r(2)) comp.replace(k, 2, "SS");
      }
      out += "/" + comp;
      cur += "/" + stored;
    }
    return out;
  }

  void touch(MInode& n) { n.mtime = n.ctime = now(); }

  // The model does not model free space: growth stops at a third of the
  // volume (data plus keep_size reservations), far from no_space.
  bool over_budget(std::uint64_t more) const {
    std::uint64_t used = 0;
    for (const auto& [id, n] : m_.inodes) used += n.data.size() + n.reserved_past_eof;
    return used + more > pr_.volume_bytes() / 3;
  }

  // ---- the session ----
  void session() {
    const bool crash = phase_ > 0 && phase_ + 1 < pr_.phases && r(4) == 0;  // ends with sync, no unmount
    MountOptions mo = base_mo();
    mo.fixed_time = now_;
    if (pr_.compression) mo.compression = *pr_.compression;
    auto w = Writer::mount(*dev_, mo);
    if (!w && pr_.compression && phase_ == 0 && w.error().code == Errc::unsupported) {
      codec_missing_ = w.error().to_string();  // a build without the set's codec (cross builds)
      return;
    }
    ASSERT_TRUE(w) << ctx() << ": mount: " << w.error().to_string();
    w_ = w->get();
    if (phase_ == 0 && !adopted_) setup();
    check_verity_files();
    if (::testing::Test::HasFailure()) return;
    for (op_ = 0; op_ < pr_.ops && !::testing::Test::HasFailure(); ++op_) step();
    if (::testing::Test::HasFailure()) return;
    if (crash) {
      auto s = w_->sync();
      ASSERT_TRUE(s) << ctx() << ": sync: " << s.error().to_string();
      w->reset();  // no unmount: the next mount frees the orphans
    } else {
      auto u = w_->unmount();
      ASSERT_TRUE(u) << ctx() << ": unmount: " << u.error().to_string();
      w->reset();
    }
    w_ = nullptr;
    // Files open at the end are closed (unmount) or lost with the session.
    std::vector<int> gone;
    for (auto& [id, n] : m_.inodes) {
      n.opens = 0;
      if (!m_.names(id) && id != 0) gone.push_back(id);
    }
    for (int id : gone) m_.inodes.erase(id);
    if (crash) {
      // The orphans of the checkpoint are freed by the next mount: mount and
      // unmount once before comparing (a mount with nothing to do).
      auto v = Volume::open(*dev_);
      ASSERT_TRUE(v);
      auto orph = (*v)->orphans();
      ASSERT_TRUE(orph);
      orphans_seen_ += orph->size();
      v->reset();
      check_volume(*dev_, m_.tree(), ctx() + " after a session without unmount", false, true, keys());
      MountOptions mo2 = base_mo();
      mo2.fixed_time = now_ + 1;
      auto w2 = Writer::mount(*dev_, mo2);
      ASSERT_TRUE(w2) << ctx() << ": mount after the cut: " << w2.error().to_string();
      ASSERT_TRUE((*w2)->unmount());
      auto v2 = Volume::open(*dev_);
      ASSERT_TRUE(v2);
      auto orph2 = (*v2)->orphans();
      ASSERT_TRUE(orph2);
      EXPECT_TRUE(orph2->empty()) << ctx() << ": orphans left after the mount that should free them";
    }
    check_volume(*dev_, m_.tree(), ctx() + " after unmount", true, true, keys());
    check_feature_inodes();
  }

  // With the test key given, a session without it: /enc lists as many
  // (no-key) names as the model has there, changes in it are refused
  // (ENOKEY), and the tree is unchanged after the unmount.
  void nokey_session() {
    MountOptions mo;
    mo.fixed_time = now_;
    auto w = Writer::mount(*dev_, mo);
    ASSERT_TRUE(w) << ctx() << ": mount without the key: " << w.error().to_string();
    w_ = w->get();
    // An encrypted directory whose parent is not (/enc, wherever renames
    // took it).
    std::string top;
    for (const auto& [p, id] : m_.paths)
      if (!p.empty() && m_.inodes.at(id).enc && m_.inodes.at(id).type == 'd' && !enc_dir(parent_of(p))) top = p;
    if (!top.empty()) {
      std::size_t want = 0;
      for (const auto& [p, id] : m_.paths)
        if (p.rfind(top + "/", 0) == 0 && p.find('/', top.size() + 1) == std::string::npos) ++want;
      auto ino = w_->lookup(top);
      ASSERT_TRUE(ino) << ctx() << ": " << top << ": " << ino.error().to_string();
      auto es = w_->list_at(*ino);
      ASSERT_TRUE(es);
      EXPECT_EQ(es->size(), want) << ctx() << ": " << top << " without the key";
      for (int k = 0; k < 3 && !::testing::Test::HasFailure(); ++k) op_frozen(top, "");
    }
    ASSERT_TRUE(w_->unmount());
    w->reset();
    w_ = nullptr;
    check_volume(*dev_, m_.tree(), ctx() + " after a session without the key", true, true, keys());
  }

  // Read-only: the tree reads back through the writer, every change is
  // refused with Errc::read_only, the image stays byte-identical.
  void read_only_session() {
    const auto before = f2fstest::SparseImage::capture(*dev_);
    MountOptions mo = base_mo();
    mo.read_only = true;
    mo.fixed_time = now_;
    auto w = Writer::mount(*dev_, mo);
    ASSERT_TRUE(w) << ctx() << ": read-only mount: " << w.error().to_string();
    Writer& wr = **w;
    auto files = pick('f');
    for (int k = 0; k < 5 && !files.empty(); ++k) {
      const std::string p = any(files);
      auto ino = wr.lookup(p);
      ASSERT_TRUE(ino);
      std::string got(m_.at(p).data.size(), '\0');
      auto n = wr.read(*ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(got.data()), got.size()));
      ASSERT_TRUE(n);
      EXPECT_TRUE(got == m_.at(p).data) << ctx() << " read-only read " << p;
      EXPECT_EQ(wr.write(*ino, 0, bytes("x")).error().code, Errc::read_only);
      EXPECT_EQ(wr.truncate(*ino, 0).error().code, Errc::read_only);
      EXPECT_EQ(wr.fallocate(*ino, 0, 0, 4096).error().code, Errc::read_only);
      EXPECT_EQ(wr.setattr(*ino, {.mode = 0600}).error().code, Errc::read_only);
      EXPECT_EQ(wr.setxattr(*ino, 1, "ro", bytes("v")).error().code, Errc::read_only);
      EXPECT_EQ(wr.removexattr(*ino, 1, "ro").error().code, Errc::read_only);
      EXPECT_EQ(wr.unlink(p).error().code, Errc::read_only);
      EXPECT_EQ(wr.link(p, p + "-ro").error().code, Errc::read_only);
      EXPECT_EQ(wr.rename(p, p + "-ro").error().code, Errc::read_only);
      EXPECT_EQ(wr.fsync(*ino).error().code, Errc::read_only);
      ASSERT_TRUE(wr.open(*ino));
      ASSERT_TRUE(wr.release(*ino));
    }
    EXPECT_EQ(wr.create("/ro-new").error().code, Errc::read_only);
    EXPECT_EQ(wr.mkdir("/ro-dir").error().code, Errc::read_only);
    EXPECT_EQ(wr.symlink("t", "/ro-link").error().code, Errc::read_only);
    EXPECT_EQ(wr.mknod("/ro-fifo", 0x1000 | 0644).error().code, Errc::read_only);
    EXPECT_EQ(wr.sync().error().code, Errc::read_only);
    ASSERT_TRUE(wr.unmount());
    w->reset();
    const auto after = f2fstest::SparseImage::capture(*dev_);
    EXPECT_TRUE(before.blocks == after.blocks) << ctx() << ": a read-only mount changed the image";
  }

  // The model of what a volume holds (inodes by number: hard links share one).
  void adopt() {
    adopted_ = true;
    auto v = Volume::open(*dev_);
    ASSERT_OK(v);
    std::map<nid_t, int> ids;
    const nid_t root = (*v)->superblock().root_ino.get();
    std::function<void(nid_t, const std::string&)> walk = [&](nid_t ino, const std::string& path) {
      if (auto it = ids.find(ino); it != ids.end()) {
        m_.paths[path] = it->second;
        return;
      }
      auto in = (*v)->read_inode(ino);
      ASSERT_TRUE(in) << path << ": " << in.error().to_string();
      MInode n;
      switch (in->mode & 0xF000) {
        case 0x8000: n.type = 'f'; break;
        case 0x4000: n.type = 'd'; break;
        case 0xA000: n.type = 'l'; break;
        case 0x2000: n.type = 'c'; break;
        case 0x6000: n.type = 'b'; break;
        case 0x1000: n.type = 'p'; break;
        default: n.type = 's'; break;
      }
      n.perm = in->mode & 07777;
      n.uid = in->uid;
      n.gid = in->gid;
      const Inode& r = in->raw.i;
      n.atime = {r.i_atime.get(), r.i_atime_nsec.get()};
      n.mtime = {r.i_mtime.get(), r.i_mtime_nsec.get()};
      n.ctime = {r.i_ctime.get(), r.i_ctime_nsec.get()};
      n.ino = ino;
      n.inline_xattr = in->inline_xattr_addrs * 4;
      n.cf = in->flags & iflag::casefold;
      if (n.type == 'f') {
        n.data.assign(in->size, '\0');
        ASSERT_TRUE((*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(n.data.data()), n.data.size())));
      } else if (n.type == 'l') {
        auto l = (*v)->read_link(*in);
        ASSERT_TRUE(l);
        n.data = *l;
      } else if (n.type == 'c' || n.type == 'b') {
        const std::uint32_t x = in->extra_isize / 4;
        n.rdev = r.i_addr[x].get() ? r.i_addr[x].get() : r.i_addr[x + 1].get();
      }
      auto xs = (*v)->xattrs(*in);
      ASSERT_TRUE(xs);
      for (const auto& x : *xs) n.xattrs[{x.index, x.name}] = x.value;
      const int id = ino == root ? 0 : m_.next++;
      m_.inodes[id] = n;
      m_.paths[path] = id;
      ids[ino] = id;
      if (n.type == 'd') {
        auto es = (*v)->read_dir(*in);
        ASSERT_TRUE(es);
        for (const auto& e : *es) {
          if (e.name == "." || e.name == "..") continue;
          if (path.empty() && e.name == "lost+found") {
            ++m_.root_extra_links;
            continue;
          }
          walk(e.ino, path + "/" + component(e.name));
        }
      }
    };
    walk(root, "");
  }

  void setup() {
    if (pr_.compression) {
      auto z = w_->mkdir("/z");
      ASSERT_TRUE(z);
      ASSERT_OK(w_->set_flags(*z, iflag::compr, iflag::compr));
      MInode& n = add("/z", 'd');
      n.compr = true;
      n.ino = *z;
    }
    if (pr_.fscrypt_key) {
      auto e = w_->mkdir("/enc");
      ASSERT_TRUE(e);
      ASSERT_OK(w_->set_encryption_policy(*e, model_key(), 16));
      add("/enc", 'd').ino = *e;
      m_.at("/enc").enc = true;
    }
    if (pr_.casefold) {
      auto cf = w_->mkdir("/cf");
      ASSERT_TRUE(cf);
      ASSERT_OK(w_->set_flags(*cf, iflag::casefold, iflag::casefold));
      MInode& n = add("/cf", 'd');
      n.cf = true;
      n.ino = *cf;
    }
    if (pr_.wide) {
      auto wd = w_->mkdir("/wide");
      ASSERT_TRUE(wd);
      add("/wide", 'd').ino = *wd;
      if (pr_.casefold) {
        ASSERT_OK(w_->set_flags(*wd, iflag::casefold, iflag::casefold));
        m_.at("/wide").cf = true;
      }
      for (int i = 0; i < pr_.wide; ++i) {
        const std::string p = "/wide/entry-" + std::to_string(i) + (i % 7 == 0 ? std::string(40, 'w') : "");
        auto f = w_->create(p);
        ASSERT_TRUE(f) << p << ": " << f.error().to_string();
        add(p, 'f').ino = *f;
      }
    }
    std::string p;
    for (int d = 0; d < pr_.deep; ++d) {
      p += "/deep" + std::to_string(d);
      ASSERT_TRUE(w_->mkdir(p)) << p;
      add(p, 'd');
    }
    if (pr_.deep) {
      auto f = w_->create(p + "/bottom");
      ASSERT_TRUE(f);
      add(p + "/bottom", 'f').ino = *f;
    }
  }

  MInode& add(const std::string& p, char type, std::uint16_t perm = 0) {
    const int id = m_.next++;
    MInode n;
    n.type = type;
    n.enc = (type == 'f' || type == 'd' || type == 'l') && enc_dir(parent_of(p));
    n.perm = perm ? perm : type == 'd' ? 0755 : type == 'l' ? 0777 : 0644;
    n.atime = n.mtime = n.ctime = now();
    m_.inodes[id] = n;
    m_.paths[p] = id;
    return m_.inodes[id];
  }

  Result<nid_t> ino_of(const std::string& p) { return w_->lookup(p.empty() ? "/" : vary(p)); }

  // One random operation, checked against the model.
  void step() {
    if ((pr_.compression || pr_.verity) && r(100) < 12) return feature_step();
    if (!pr_.frozen.empty() && r(25) == 0)
      return op_frozen(pr_.frozen[r(static_cast<std::uint32_t>(pr_.frozen.size()))], any(pick('d')));
    const int kind = static_cast<int>(r(1000));
    auto dirs = pick('d');
    auto files = pick('f');
    auto nondirs = pick('n');
    if (kind < 110 || files.empty()) op_create(dirs);
    else if (kind < 160) op_mkdir(dirs);
    else if (kind < 330) op_write(files);
    else if (kind < 380) op_truncate(files);
    else if (kind < 440) op_fallocate(files);
    else if (kind < 510) op_unlink(nondirs.empty() ? files : nondirs);
    else if (kind < 590) op_rename(dirs);
    else if (kind < 620) op_rmdir(dirs);
    else if (kind < 660) op_link(dirs);
    else if (kind < 700) op_symlink(dirs);
    else if (kind < 725) op_mknod(dirs);
    else if (kind < 775) op_setattr();
    else if (kind < 850) op_xattr();
    else if (kind < 870) op_fsync(files);
    else if (kind < 900) op_open(files);
    else if (kind < 930) op_release();
    else if (kind < 990) op_verify(files);
    else {
      auto s = w_->sync();
      ASSERT_TRUE(s) << ctx() << " sync: " << s.error().to_string();
    }
  }

  // A change in an encrypted subtree without its key: refused (ENOKEY),
  // nothing changed. Names there are Linux's no-key names (readdir).
  // `top`: an encrypted directory; `plain_dir`: an unencrypted one.
  void op_frozen(const std::string& top, const std::string& plain_dir) {
    auto es = w_->readdir(top);
    ASSERT_TRUE(es) << ctx() << " readdir " << top << ": " << es.error().to_string();
    std::vector<Dirent> names;
    for (const auto& e : *es)
      if (e.name != "." && e.name != "..") names.push_back(e);
    auto top_ino = w_->lookup(top);
    ASSERT_TRUE(top_ino);
    const std::string plain = plain_dir + "/moved";
    std::vector<std::pair<const char*, Status>> tries;
    auto c = w_->create(top + "/" + new_leaf());
    tries.emplace_back("create", c ? Status{} : make_error(c.error()));
    tries.emplace_back("setattr of the directory", w_->setattr(*top_ino, {.mode = 0700}));
    tries.emplace_back("rename the directory", w_->rename(top, plain));
    if (!names.empty()) {
      const Dirent e = names[r(static_cast<std::uint32_t>(names.size()))];
      const std::string p = top + "/" + e.name;
      tries.emplace_back("rename out", w_->rename(p, plain));
      tries.emplace_back(e.type == dirent_type::dir ? "rmdir" : "unlink",
                         e.type == dirent_type::dir ? w_->rmdir(p) : w_->unlink(p));
      // Device nodes, FIFOs and sockets are never encrypted: their own
      // attributes change without the key, as in Linux.
      if (e.type == dirent_type::reg || e.type == dirent_type::dir || e.type == dirent_type::lnk)
        tries.emplace_back("setxattr", w_->setxattr(e.ino, 1, "frozen", bytes("v")));
      if (e.type == dirent_type::reg) {
        auto wr = w_->write(e.ino, 0, bytes("x"));
        tries.emplace_back("write", wr ? Status{} : make_error(wr.error()));
        tries.emplace_back("truncate", w_->truncate(e.ino, 0));
      }
    }
    for (const auto& [what, st] : tries) {
      ASSERT_FALSE(st) << ctx() << " " << what << " in " << top << " without the key succeeded";
      EXPECT_EQ(st.error().sys_errno, ENOKEY) << ctx() << " " << what << ": " << st.error().to_string();
    }
  }

  void op_create(const std::vector<std::string>& dirs) {
    const std::string p = any(dirs) + "/" + new_leaf();
    auto f = w_->create(p, 0640);
    if (m_.find(p)) {
      ASSERT_FALSE(f) << ctx() << " create over " << p;
      EXPECT_EQ(f.error().code, Errc::exists);
      return;
    }
    ASSERT_TRUE(f) << ctx() << " create " << p << ": " << f.error().to_string();
    MInode& n = add(p, 'f', 0640);
    n.ino = *f;
    new_inode_compr(p, n);
  }

  void op_mkdir(const std::vector<std::string>& dirs) {
    const std::string p = any(dirs) + "/" + new_leaf();
    const std::string parent = p.substr(0, p.rfind('/'));
    auto d = w_->mkdir(p, 0750);
    if (m_.find(p)) {
      ASSERT_FALSE(d);
      EXPECT_EQ(d.error().code, Errc::exists);
      return;
    }
    ASSERT_TRUE(d) << ctx() << " mkdir " << p << ": " << d.error().to_string();
    MInode& n = add(p, 'd', 0750);
    n.ino = *d;
    n.cf = m_.casefolded(parent);  // inherited (f2fs_new_inode())
    new_inode_compr(p, n);
    if (::testing::Test::HasFailure()) return;
    if (!pr_.casefold) return;
    auto fl = w_->get_flags(*d);
    ASSERT_TRUE(fl);
    EXPECT_EQ((*fl & iflag::casefold) != 0, n.cf) << ctx() << " casefold flag of new " << p;
    // +F or -F: on the new (empty) directory, or on any, refused when it
    // has entries (ENOTEMPTY).
    std::string target = p;
    if (r(3) == 0) target = any(dirs);
    if (target.empty() || r(2)) return;
    MInode& t = m_.at(target);
    auto tino = ino_of(target);
    ASSERT_TRUE(tino);
    auto s = w_->set_flags(*tino, t.cf ? 0 : iflag::casefold, iflag::casefold);
    if (!m_.empty_dir(target)) {
      ASSERT_FALSE(s) << ctx() << " casefold flag on non-empty " << target;
      EXPECT_EQ(s.error().sys_errno, ENOTEMPTY);
      return;
    }
    ASSERT_TRUE(s) << ctx() << " casefold flag on " << target << ": " << s.error().to_string();
    t.cf = !t.cf;
    t.ctime = now();
  }

  // A file by path, or an open one (maybe unlinked) by inode.
  std::pair<MInode*, nid_t> target_file(const std::vector<std::string>& files) {
    std::vector<int> open;
    for (auto& [id, n] : m_.inodes)
      if (n.opens > 0 && n.type == 'f') open.push_back(id);
    if (!open.empty() && r(4) == 0) {
      MInode& n = m_.inodes.at(open[r(static_cast<std::uint32_t>(open.size()))]);
      return {&n, n.ino};
    }
    const std::string p = any(files);
    auto ino = ino_of(p);
    EXPECT_TRUE(ino) << ctx() << " lookup " << p;
    if (!ino) return {nullptr, 0};
    return {&m_.at(p), *ino};
  }

  void op_write(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    std::string& d = n->data;
    std::uint64_t off = r(4) == 0 ? d.size() : r(static_cast<std::uint32_t>(d.size() + 20000));
    std::size_t len = 1 + r(20000);
    if (r(10) == 0) len = 1 + r(static_cast<std::uint32_t>(pr_.max_write));
    if (pr_.big_write && r(60) == 0) len = pr_.big_write / 2 + r(static_cast<std::uint32_t>(pr_.big_write / 2));
    if (off + len > pr_.big_write + pr_.max_write + (1u << 20)) len = 1 + r(4096);
    if (over_budget(off + len)) {  // rewrite inside the file instead
      if (d.empty()) return;
      len = 1 + r(static_cast<std::uint32_t>(std::min<std::size_t>(d.size(), 4096)));
      off = r(static_cast<std::uint32_t>(d.size() - len + 1));
    }
    std::string buf(len, '\0');
    if (pr_.compression) {
      cluster_aligned(off, len);
      buf = compr_data(len);
    } else {
      const std::uint32_t s = static_cast<std::uint32_t>(rng_());
      for (std::size_t i = 0; i < len; ++i) buf[i] = static_cast<char>((s >> (i % 24)) + i * 131);
    }
    auto w = w_->write(ino, off, bytes(buf));
    if (data_read_only(*n)) {
      ASSERT_FALSE(w) << ctx() << " write to a file whose data is read-only";
      EXPECT_EQ(w.error().sys_errno, EPERM) << ctx() << " write to a read-only file: " << w.error().to_string();
      unchanged(*n, ino, "write");
      return;
    }
    ASSERT_TRUE(w) << ctx() << " write " << len << " at " << off << ": " << w.error().to_string();
    n->blocks = 1;
    if (d.size() < off + len) d.resize(off + len, '\0');
    d.replace(off, len, buf);
    touch(*n);
  }

  void op_truncate(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    std::uint64_t size = r(3) == 0 ? 0 : r(static_cast<std::uint32_t>(n->data.size() + 30000));
    if (size > n->data.size() && over_budget(size)) size = 0;
    // A released compressed file refuses a cut (EPERM) but grows: f2fs_setattr()
    // in Linux 6.1 has no check of FI_COMPRESS_RELEASED; a verity file refuses both.
    if (n->verity || (n->released && size <= n->data.size())) {
      auto t = w_->truncate(ino, size);
      ASSERT_FALSE(t) << ctx() << " truncate of a file whose data is read-only";
      EXPECT_EQ(t.error().sys_errno, EPERM) << ctx() << " truncate of a read-only file: " << t.error().to_string();
      unchanged(*n, ino, "truncate");
      return;
    }
    auto t = w_->truncate(ino, size);
    ASSERT_TRUE(t) << ctx() << " truncate " << size << ": " << t.error().to_string();
    if (size == 0) n->blocks = 0;
    else if (size < n->data.size() && n->blocks) n->blocks = 2;
    if (size < n->data.size()) n->reserved_past_eof = 0;  // blocks past the new end are freed
    n->data.resize(size, '\0');
    touch(*n);
  }

  void op_fallocate(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    static const std::uint32_t modes[] = {0, falloc::keep_size, falloc::punch_hole | falloc::keep_size, falloc::zero_range,
                                          falloc::zero_range | falloc::keep_size};
    const std::uint32_t mode = modes[r(5)];
    std::string& d = n->data;
    const std::uint64_t off = r(static_cast<std::uint32_t>(d.size() + 20000));
    const std::uint64_t len = 1 + (r(8) == 0 ? r(4u << 20) : r(70000));
    if (!(mode & falloc::punch_hole) && over_budget(off + len)) return;
    auto f = w_->fallocate(ino, mode, off, len);
    if (n->verity || n->compr) {
      // fs-verity: EPERM (fsverity_prepare_setattr() and the writer's
      // refusal of every mode); compressed: EOPNOTSUPP for punch_hole and
      // zero_range (f2fs_fallocate() in Linux 6.1), and for preallocation,
      // which the writer does not do in clusters (Writer::fallocate()).
      ASSERT_FALSE(f) << ctx() << " fallocate on a " << (n->verity ? "verity" : "compressed") << " file";
      EXPECT_EQ(f.error().sys_errno, n->verity ? EPERM : EOPNOTSUPP) << ctx() << " fallocate: " << f.error().to_string();
      unchanged(*n, ino, "fallocate");
      return;
    }
    ASSERT_TRUE(f) << ctx() << " fallocate mode " << mode << " " << off << "+" << len << ": " << f.error().to_string();
    if (mode == 0 || mode == falloc::keep_size) n->blocks = 1;
    else if (n->blocks || (mode & falloc::zero_range)) n->blocks = 2;
    const bool keep = mode & falloc::keep_size;
    if (keep && !(mode & falloc::punch_hole) && off + len > d.size()) n->reserved_past_eof += off + len - std::min<std::uint64_t>(off, d.size()) + kBlockSize;
    if (mode & falloc::punch_hole) {
      if (off >= d.size()) return;  // nothing, not even the times
      std::fill(d.begin() + static_cast<std::ptrdiff_t>(off), d.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(d.size(), off + len)), '\0');
    } else if (mode & falloc::zero_range) {
      if (off < d.size())
        std::fill(d.begin() + static_cast<std::ptrdiff_t>(off), d.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(d.size(), off + len)), '\0');
      if (!keep && off + len > d.size()) d.resize(off + len, '\0');
    } else if (!keep && off + len > d.size()) {
      d.resize(off + len, '\0');
    }
    touch(*n);
  }

  void op_unlink(const std::vector<std::string>& nondirs) {
    if (nondirs.empty()) return;
    const std::string p = any(nondirs);
    const int id = m_.paths.at(p);
    if (r(3) == 0 && m_.inodes.at(id).type == 'f') {  // open it first: unlinked while open
      auto ino = ino_of(p);
      ASSERT_TRUE(ino);
      ASSERT_TRUE(w_->open(*ino));
      ++m_.inodes.at(id).opens;
    }
    auto u = w_->unlink(vary(p));
    ASSERT_TRUE(u) << ctx() << " unlink " << p << ": " << u.error().to_string();
    m_.paths.erase(p);
    m_.inodes.at(id).ctime = now();  // also at link count 0 (f2fs_drop_nlink()): an open file keeps it
    m_.forget_if_unused(id);
  }

  void op_rmdir(const std::vector<std::string>& dirs) {
    const std::string p = any(dirs);
    if (p.empty()) return;
    auto rr = w_->rmdir(vary(p));
    if (!m_.empty_dir(p)) {
      ASSERT_FALSE(rr) << ctx() << " rmdir of non-empty " << p;
      EXPECT_EQ(rr.error().code, Errc::invalid_argument);
      return;
    }
    ASSERT_TRUE(rr) << ctx() << " rmdir " << p << ": " << rr.error().to_string();
    const int id = m_.paths.at(p);
    m_.paths.erase(p);
    m_.inodes.erase(id);
  }

  void op_rename(const std::vector<std::string>& dirs) {
    auto all = pick('*');
    if (all.empty()) return;
    const std::string from = any(all);
    std::string given;
    if (r(3) == 0) given = vary(any(all));  // over an existing name
    else given = any(dirs) + "/" + new_leaf();
    if (given.empty()) return;
    const int sid = m_.paths.at(from);
    const bool sdir = m_.inodes.at(sid).type == 'd';
    auto res = w_->rename(vary(from), given);
    // The expected outcome; `to` is the path as stored afterwards (an
    // existing entry keeps its name, f2fs_set_link()).
    const auto found = m_.find(given);
    const std::string to = found ? *found : given;
    Errc want = Errc::ok;
    const bool texists = found.has_value();
    if (sdir && (to == from || to.compare(0, from.size() + 1, from + "/") == 0) && to != from) want = Errc::invalid_argument;
    else if (texists && m_.paths.at(to) == sid) want = Errc::ok;
    else if (exdev(parent_of(to), sid)) want = Errc::invalid_argument;  // fscrypt_prepare_rename(): EXDEV
    else if (texists && m_.is_dir(to) && !sdir) want = Errc::invalid_argument;
    else if (texists && !m_.is_dir(to) && sdir) want = Errc::invalid_argument;
    else if (texists && m_.is_dir(to) && !m_.empty_dir(to)) want = Errc::exists;
    if (want != Errc::ok) {
      ASSERT_FALSE(res) << ctx() << " rename " << from << " -> " << to << " should fail";
      EXPECT_EQ(res.error().code, want) << ctx() << " rename " << from << " -> " << to << ": " << res.error().to_string();
      return;
    }
    ASSERT_TRUE(res) << ctx() << " rename " << from << " -> " << to << ": " << res.error().to_string();
    if (texists && m_.paths.at(to) == sid) return;
    if (texists) {
      const int tid = m_.paths.at(to);
      m_.paths.erase(to);
      m_.inodes.at(tid).ctime = now();
      m_.forget_if_unused(tid);
    }
    std::vector<std::pair<std::string, int>> moved;
    for (auto it = m_.paths.begin(); it != m_.paths.end();) {
      if (it->first == from || it->first.compare(0, from.size() + 1, from + "/") == 0) {
        moved.emplace_back(to + it->first.substr(from.size()), it->second);
        it = m_.paths.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [p, id] : moved) m_.paths[p] = id;
    m_.inodes.at(sid).ctime = now();
  }

  // A name of inode `id` may go into encrypted directory `dir` only with
  // its policy: an encrypted inode (one key, one policy in this test), or
  // a type never encrypted (fscrypt_has_permitted_context()).
  bool exdev(const std::string& dir, int id) const {
    const MInode& n = m_.inodes.at(id);
    return enc_dir(dir) && !n.enc && (n.type == 'f' || n.type == 'd' || n.type == 'l');
  }

  void op_link(const std::vector<std::string>& dirs) {
    auto all = pick('*');
    if (all.empty()) return;
    const std::string src = any(all);
    const std::string p = any(dirs) + "/" + new_leaf();
    auto l = w_->link(vary(src), p);
    const int id = m_.paths.at(src);
    if (m_.inodes.at(id).type == 'd') {
      ASSERT_FALSE(l) << ctx() << " link to a directory";
      EXPECT_EQ(l.error().code, Errc::invalid_argument);
      return;
    }
    if (m_.find(p)) {
      ASSERT_FALSE(l);
      EXPECT_EQ(l.error().code, Errc::exists);
      return;
    }
    if (exdev(parent_of(p), id)) {  // fscrypt_prepare_link()
      ASSERT_FALSE(l) << ctx() << " link " << src << " into encrypted " << p;
      EXPECT_EQ(l.error().sys_errno, EXDEV);
      return;
    }
    ASSERT_TRUE(l) << ctx() << " link " << src << " " << p << ": " << l.error().to_string();
    m_.paths[p] = id;
    m_.inodes.at(id).ctime = now();
  }

  void op_symlink(const std::vector<std::string>& dirs) {
    const std::string p = any(dirs) + "/" + new_leaf();
    std::size_t len = 1 + r(120);
    if (r(5) == 0) len = 3000 + r(1096);  // 3000..4095: inline up to 3452 bytes here, else a block
    // An encrypted target is stored padded with its length and a NUL
    // within the page (fscrypt_prepare_symlink()).
    if (enc_dir(parent_of(p))) len = std::min<std::size_t>(len, 4000);
    std::string target(len, 'x');
    for (std::size_t i = 0; i < len; ++i) target[i] = static_cast<char>('a' + (i * 7 + len) % 26);
    if (len > 3) target[len / 2] = '/';
    auto s = w_->symlink(target, p);
    if (m_.find(p)) {
      ASSERT_FALSE(s);
      EXPECT_EQ(s.error().code, Errc::exists);
      return;
    }
    ASSERT_TRUE(s) << ctx() << " symlink " << p << ": " << s.error().to_string();
    auto back = w_->readlink(*s);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, target);
    MInode& n = add(p, 'l');
    n.data = target;
    n.ino = *s;
  }

  void op_mknod(const std::vector<std::string>& dirs) {
    const std::string p = any(dirs) + "/" + new_leaf();
    static const std::pair<char, std::uint16_t> types[] = {{'c', 0x2000}, {'b', 0x6000}, {'p', 0x1000}, {'s', 0xC000}};
    const auto [tc, tbits] = types[r(4)];
    std::uint32_t major = r(256), minor = r(256);
    if (r(2)) {  // the new encoding: major up to 4095, minor up to 2^20 - 1
      major = r(4096);
      minor = r(1u << 20);
    }
    const std::uint32_t rdev = new_encode_dev(major, minor);
    auto k = w_->mknod(p, static_cast<std::uint16_t>(tbits | 0620), rdev);
    if (m_.find(p)) {
      ASSERT_FALSE(k);
      return;
    }
    ASSERT_TRUE(k) << ctx() << " mknod " << p << ": " << k.error().to_string();
    auto st = w_->stat(*k);
    ASSERT_TRUE(st);
    MInode& n = add(p, tc, 0620);
    n.ino = *k;
    if (tc == 'c' || tc == 'b') {
      n.rdev = rdev;
      EXPECT_EQ(st->rdev, rdev) << ctx() << " mknod rdev";
    }
  }

  void op_setattr() {
    auto all = pick('*');
    if (all.empty()) return;
    const std::string p = any(all);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p << ": " << ino.error().to_string();
    MInode& n = m_.at(p);
    SetAttr a;
    if (r(2)) a.mode = static_cast<std::uint16_t>(r(010000));
    if (r(3) == 0) a.uid = r(70000);
    if (r(3) == 0) a.gid = r(70000);
    if (r(2)) a.atime = Timespec{1600000000u + r(100000000), r(1000000000)};
    if (r(2)) a.mtime = Timespec{1600000000u + r(100000000), r(1000000000)};
    if (r(4) == 0) a.ctime = Timespec{1600000000u + r(100000000), r(1000000000)};
    if ((pr_.features & feature::project_quota) && r(3) == 0) {
      // Project ids are not part of the model's tree; the checkers compare
      // the project quota usage they move. (No PROJINHERIT: the model does
      // not know which renames and links it would refuse with EXDEV;
      // writer_quota_test.cpp tests those.)
      a.projid = r(5);
    }
    auto s = w_->setattr(*ino, a);
    ASSERT_TRUE(s) << ctx() << " setattr " << p << ": " << s.error().to_string();
    if (a.mode) n.perm = *a.mode;
    if (a.uid) n.uid = *a.uid;
    if (a.gid) n.gid = *a.gid;
    if (a.atime) n.atime = *a.atime;
    if (a.mtime) n.mtime = *a.mtime;
    n.ctime = a.ctime ? *a.ctime : now();
  }

  void op_xattr() {
    auto all = pick('*');
    all.push_back("");
    const std::string p = any(all);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p << ": " << ino.error().to_string();
    MInode& n = m_.at(p);
    static const std::uint8_t idx[] = {1, 4, 6};
    std::uint8_t index = idx[r(3)];
    // For the Linux guest: user.* only on files and directories (Linux
    // refuses user xattrs elsewhere, xattr_permission()), no security.*.
    if (pr_.printable_xattrs && (index == 6 || (n.type != 'f' && n.type != 'd'))) index = 4;
    std::string name = std::string(1, static_cast<char>('a' + r(8)));
    if (r(20) == 0) name = std::string(240 + r(16), 'N');
    const auto key = std::make_pair(static_cast<int>(index), name);
    // The full name ("user." / "trusted." / "security." + name) is at most
    // 255 bytes (XATTR_NAME_MAX).
    const std::size_t prefix = index == 1 ? 5 : index == 4 ? 8 : 9;
    if (prefix + name.size() > 255) {
      auto s = r(2) ? w_->setxattr(*ino, index, name, bytes("v")) : w_->removexattr(*ino, index, name);
      ASSERT_FALSE(s) << ctx() << " xattr name over XATTR_NAME_MAX";
      EXPECT_EQ(s.error().code, Errc::invalid_argument);
      return;
    }
    const bool found = n.xattrs.count(key) != 0;
    if (r(4) == 0) {  // remove
      auto rm = w_->removexattr(*ino, index, name);
      if (!found) {
        ASSERT_FALSE(rm);
        EXPECT_EQ(rm.error().code, Errc::not_found);
        return;
      }
      ASSERT_TRUE(rm) << ctx() << " removexattr: " << rm.error().to_string();
      n.xattrs.erase(key);
      n.ctime = now();
      return;
    }
    std::size_t vlen = r(60);
    if (r(4) == 0) vlen = 200 + r(1500);
    std::string value(vlen, '\0');
    for (std::size_t i = 0; i < vlen; ++i) value[i] = pr_.printable_xattrs ? "abcdefghijklmnopqrstuvwxyz0123456789"[r(36)] : static_cast<char>(r(256));
    const XattrSet how = static_cast<XattrSet>(r(3));
    auto s = w_->setxattr(*ino, index, name, bytes(value), how);
    if (how == XattrSet::create && found) {
      ASSERT_FALSE(s);
      EXPECT_EQ(s.error().code, Errc::exists);
      return;
    }
    if (how == XattrSet::replace && !found) {
      ASSERT_FALSE(s);
      EXPECT_EQ(s.error().code, Errc::not_found);
      return;
    }
    // Room: MIN_OFFSET (inline area + 4068 bytes) past the entries.
    const std::size_t min_offset = n.inline_xattr + 4068;
    std::size_t used = m_.xattr_used(n);
    if (found) used -= xattr_entry_size(static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(n.xattrs[key].size()));
    const std::size_t need = xattr_entry_size(static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(vlen));
    if (used + need > min_offset) {
      ASSERT_FALSE(s) << ctx() << " setxattr past the area";
      EXPECT_EQ(s.error().code, Errc::no_space);
      return;
    }
    ASSERT_TRUE(s) << ctx() << " setxattr " << p << ": " << s.error().to_string();
    n.xattrs[key] = value;
    n.ctime = now();
    auto g = w_->getxattr(*ino, index, name);
    ASSERT_TRUE(g);
    EXPECT_TRUE(std::string(g->begin(), g->end()) == value);
  }

  void op_fsync(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    auto s = r(2) ? w_->fsync(ino) : w_->fdatasync(ino);
    ASSERT_TRUE(s) << ctx() << " fsync: " << s.error().to_string();
  }

  void op_open(const std::vector<std::string>& files) {
    const std::string p = any(files);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p << ": " << ino.error().to_string();
    ASSERT_TRUE(w_->open(*ino));
    ++m_.at(p).opens;
  }

  void op_release() {
    std::vector<int> open;
    for (auto& [id, n] : m_.inodes)
      if (n.opens > 0) open.push_back(id);
    if (open.empty()) return;
    const int id = open[r(static_cast<std::uint32_t>(open.size()))];
    MInode& n = m_.inodes.at(id);
    auto s = w_->release(n.ino);
    ASSERT_TRUE(s) << ctx() << " release: " << s.error().to_string();
    --n.opens;
    if (n.opens == 0 && !m_.names(id)) {
      // The last close of an unlinked inode frees it.
      const nid_t ino = n.ino;
      m_.inodes.erase(id);
      EXPECT_EQ(w_->stat(ino).error().code, Errc::not_found) << ctx() << " released orphan still there";
    }
  }

  void op_verify(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    std::string back(n->data.size(), '\0');
    auto got = w_->read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(back.data()), back.size()));
    ASSERT_TRUE(got) << ctx() << " read: " << got.error().to_string();
    ASSERT_TRUE(back == n->data) << ctx() << " read back differs";
    auto st = w_->stat(ino);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->size, n->data.size());
  }


  // ---- Feature sets: compression, fs-verity ----

  // is_extension_exist(name, ext, false) in fs/f2fs/namei.c: "name.ext"
  // with a byte before the dot, the extension compared without case.
  static bool has_ext(const std::string& leaf, const std::string& ext) {
    if (leaf.size() < ext.size() + 2 || leaf[leaf.size() - ext.size() - 1] != '.') return false;
    for (std::size_t k = 0; k < ext.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(leaf[leaf.size() - ext.size() + k])) != std::tolower(static_cast<unsigned char>(ext[k])))
        return false;
    return true;
  }

  std::string compr_suffix() {
    if (!pr_.compression || r(3)) return "";
    static const char* const kExt[] = {".txt", ".TXT", ".raw", ".c"};
    return kExt[r(4)];
  }

  static bool data_read_only(const MInode& n) { return n.released || n.verity; }

  // A refused call changed nothing the model keeps: size, mtime, ctime.
  void unchanged(const MInode& n, nid_t ino, const char* what) {
    ++counts_.refused;
    auto st = w_->stat(ino);
    ASSERT_TRUE(st) << ctx() << " stat after a refused " << what;
    EXPECT_EQ(st->size, n.data.size()) << ctx() << " size after a refused " << what;
    EXPECT_TRUE(st->mtime == n.mtime && st->ctime == n.ctime) << ctx() << " times after a refused " << what;
  }

  // A new inode's F2FS_COMPR_FL, as set_compress_new_inode() in
  // fs/f2fs/namei.c (Linux 6.1): a regular file named with a
  // nocompress_extension is not compressed, one named with a
  // compress_extension is; otherwise (and for a directory) the parent's
  // flag. Checked through get_flags().
  void new_inode_compr(const std::string& p, MInode& n) {
    if (!pr_.compression) return;
    const std::string parent = p.substr(0, p.rfind('/')), leaf = p.substr(p.rfind('/') + 1);
    bool want = m_.at(parent).compr;
    if (n.type == 'f') {
      bool decided = false;
      for (const auto& e : pr_.compression->nocompress_extension)
        if (!decided && has_ext(leaf, e)) want = false, decided = true;
      for (const auto& e : pr_.compression->extension)
        if (!decided && has_ext(leaf, e)) want = true, decided = true;
    }
    n.compr = want;
    counts_.compr_new += want;
    auto fl = w_->get_flags(n.ino);
    ASSERT_TRUE(fl) << ctx() << " get_flags " << p;
    EXPECT_EQ((*fl & iflag::compr) != 0, want) << ctx() << " F2FS_COMPR_FL of new " << p;
  }

  // A third of the writes on a compression volume cover whole clusters
  // (a full cluster in the cache is what gets compressed).
  void cluster_aligned(std::uint64_t& off, std::size_t& len) {
    if (r(3)) return;
    const std::uint64_t cb = std::uint64_t{kBlockSize} << pr_.compression->log_size.value_or(2);
    off = off / cb * cb;
    len = static_cast<std::size_t>((len + cb - 1) / cb * cb);
  }

  // Data that compresses (runs of one byte, zeroes) or does not (random
  // bytes), or both in one write.
  std::string compr_data(std::size_t len) {
    std::string b(len, '\0');
    const std::uint32_t kind = r(4);
    if (kind == 2) return b;  // zeroes
    auto random_fill = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; i += 8) {
        std::uint64_t x = rng_();
        for (std::size_t k = i; k < std::min(to, i + 8); ++k, x >>= 8) b[k] = static_cast<char>(x);
      }
    };
    if (kind == 1) {
      random_fill(0, len);
      return b;
    }
    for (std::size_t i = 0; i < len;) {  // runs; kind 3: random blocks among them
      const std::size_t n = std::min<std::size_t>(len - i, 1 + r(kind == 3 ? 4096 : 12000));
      if (kind == 3 && r(3) == 0) random_fill(i, i + n);
      else std::fill(b.begin() + static_cast<std::ptrdiff_t>(i), b.begin() + static_cast<std::ptrdiff_t>(i + n), static_cast<char>(r(256)));
      i += n;
    }
    return b;
  }

  void feature_step() {
    const std::uint32_t k = r(100);
    auto files = pick('f');
    if (k < 12 || files.empty()) return op_gc();
    if (pr_.compression) {
      if (k < 55) return op_compr_flag();
      if (k < 62) return op_release(files);
      if (k < 67) return op_reserve(files);
      return op_compr_stat(files);
    }
    if (k < 70) return op_verity(files);
    return op_verity_refusals(files);
  }

  // Foreground GC of one or two victims (F2FS_IOC_GARBAGE_COLLECT): the
  // model does not change. Half the time it first gives GC something to
  // move: two new files written in turns of 256 KiB, each turn fsynced (so
  // their blocks alternate on the device), then one of them unlinked.
  void op_gc() {
    if (r(2) && !over_budget(4u << 20)) {
      auto dirs = pick('d');
      std::string keep, drop;
      nid_t ino[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        const std::string p = any(dirs) + "/gc" + std::to_string(gc_files_++) + (k ? "-gone" : "");
        if (m_.find(p)) return;
        auto f = w_->create(p, 0640);
        ASSERT_TRUE(f) << ctx() << " create " << p << ": " << f.error().to_string();
        MInode& n = add(p, 'f', 0640);
        n.ino = ino[k] = *f;
        new_inode_compr(p, n);
        (k ? drop : keep) = p;
      }
      for (std::uint64_t off = 0; off < (2u << 20); off += 256u << 10)
        for (int k = 0; k < 2; ++k) {
          MInode& n = m_.at(k ? drop : keep);
          const std::string buf = pr_.compression ? compr_data(256u << 10) : std::string(256u << 10, static_cast<char>('a' + r(26)));
          ASSERT_TRUE(w_->write(ino[k], off, bytes(buf))) << ctx() << " gc fill";
          n.data += buf;
          n.blocks = 1;
          touch(n);
          ASSERT_TRUE(w_->fsync(ino[k])) << ctx() << " gc fill fsync";
        }
      ASSERT_TRUE(w_->unlink(drop)) << ctx() << " unlink " << drop;
      const int id = m_.paths.at(drop);
      m_.paths.erase(drop);
      m_.inodes.erase(id);
    }
    const std::uint64_t before = w_->stats().gc.data_blocks_moved;
    auto g = w_->gc(1 + r(2));
    ASSERT_TRUE(g) << ctx() << " gc: " << g.error().to_string();
    ++counts_.gc;
    counts_.gc_moved += w_->stats().gc.data_blocks_moved - before;
  }

  // +c / -c (FS_IOC_SETFLAGS, f2fs_setflags_common() in Linux 6.1): on a
  // directory always; on a regular file only while it has no data blocks
  // (F2FS_HAS_BLOCKS(): EINVAL). Files whose blocks the model does not
  // know (after a cut or a punch), released or verity files are left out.
  void op_compr_flag() {
    std::vector<std::string> c;
    for (const auto& p : pick('*')) {
      const MInode& n = m_.at(p);
      if (n.type == 'd' || (n.type == 'f' && n.blocks != 2 && !data_read_only(n))) c.push_back(p);
    }
    if (c.empty()) return;
    const std::string p = any(c);
    MInode& n = m_.at(p);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p;
    const bool set = !n.compr;
    auto s = w_->set_flags(*ino, set ? iflag::compr : 0, iflag::compr);
    if (n.type == 'f' && n.blocks == 1) {
      ASSERT_FALSE(s) << ctx() << (set ? " +c" : " -c") << " on " << p << ", which has data blocks";
      EXPECT_EQ(s.error().sys_errno, EINVAL) << ctx() << " " << s.error().to_string();
      ++counts_.compr_flag_refused;
      unchanged(n, *ino, "set_flags");
      return;
    }
    ASSERT_TRUE(s) << ctx() << (set ? " +c" : " -c") << " on " << p << ": " << s.error().to_string();
    n.compr = set;
    n.ctime = now();
    ++counts_.compr_flag;
  }

  // F2FS_IOC_RELEASE_COMPRESS_BLOCKS, mostly on compressed files: EINVAL on
  // others and on released ones; after it the file's data is read-only.
  void op_release(const std::vector<std::string>& files) {
    std::vector<std::string> c;
    for (const auto& p : files)
      if (m_.at(p).compr && !m_.at(p).released) c.push_back(p);
    const std::string p = c.empty() || r(5) == 0 ? any(files) : any(c);
    MInode& n = m_.at(p);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p;
    auto rel = w_->release_compress_blocks(*ino);
    if (!n.compr || n.released) {
      ASSERT_FALSE(rel) << ctx() << " release_compress_blocks on " << p << (n.compr ? ", released already" : ", not compressed");
      EXPECT_EQ(rel.error().sys_errno, EINVAL) << ctx() << " " << rel.error().to_string();
      unchanged(n, *ino, "release_compress_blocks");
      return;
    }
    ASSERT_TRUE(rel) << ctx() << " release_compress_blocks " << p << ": " << rel.error().to_string();
    n.released = true;
    n.released_blocks = *rel;
    n.ctime = now();
    ++counts_.released;
    counts_.released_blocks += *rel;
    auto st = w_->stat(*ino);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->compr_blocks, 0u) << ctx() << " i_compr_blocks of released " << p;
  }

  // F2FS_IOC_RESERVE_COMPRESS_BLOCKS, mostly on released files: EINVAL on
  // files not compressed or not released; it takes back what the release
  // gave (each compressed cluster its size less its compressed blocks, the
  // COMPRESS_ADDR slot included), and i_compr_blocks is that count again;
  // the file is writable again.
  void op_reserve(const std::vector<std::string>& files) {
    std::vector<std::string> c;
    for (const auto& p : files)
      if (m_.at(p).released) c.push_back(p);
    const std::string p = c.empty() || r(5) == 0 ? any(files) : any(c);
    MInode& n = m_.at(p);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p;
    auto res = w_->reserve_compress_blocks(*ino);
    if (!n.compr || !n.released) {
      ASSERT_FALSE(res) << ctx() << " reserve_compress_blocks on " << p << (n.compr ? ", not released" : ", not compressed");
      EXPECT_EQ(res.error().sys_errno, EINVAL) << ctx() << " " << res.error().to_string();
      unchanged(n, *ino, "reserve_compress_blocks");
      return;
    }
    ASSERT_TRUE(res) << ctx() << " reserve_compress_blocks " << p << ": " << res.error().to_string();
    EXPECT_EQ(*res, n.released_blocks) << ctx() << " blocks reserved back in " << p;
    n.released = false;
    n.ctime = now();
    ++counts_.reserved;
    auto st = w_->stat(*ino);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->compr_blocks, *res) << ctx() << " i_compr_blocks of " << p << " after the reserve";
  }

  // A file's compression flag, released state (i_compr_blocks 0) and
  // contents through the writer.
  void op_compr_stat(const std::vector<std::string>& files) {
    auto [n, ino] = target_file(files);
    if (!n) return;
    auto st = w_->stat(ino);
    ASSERT_TRUE(st);
    EXPECT_EQ((st->flags & iflag::compr) != 0, n->compr) << ctx() << " F2FS_COMPR_FL of inode " << ino;
    if (!n->compr || n->released) EXPECT_EQ(st->compr_blocks, 0u) << ctx() << " i_compr_blocks of inode " << ino;
    op_verify_file(*n, ino);
  }

  void op_verify_file(const MInode& n, nid_t ino) {
    std::string back(n.data.size(), '\0');
    auto got = w_->read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(back.data()), back.size()));
    ASSERT_TRUE(got) << ctx() << " read: " << got.error().to_string();
    EXPECT_TRUE(back == n.data) << ctx() << " inode " << ino << " reads back otherwise";
  }

  // FS_IOC_ENABLE_VERITY on a closed file (a salt of 1 to 32 bytes at
  // times), then FS_IOC_MEASURE_VERITY equals the reference digest of the
  // model's data; the verity xattr holds the descriptor's location
  // (verityref::location()); on a verity file EEXIST.
  void op_verity(const std::vector<std::string>& files) {
    std::vector<std::string> c;
    for (const auto& p : files)
      if (m_.at(p).opens == 0) c.push_back(p);
    if (c.empty()) return;
    const std::string p = any(c);
    MInode& n = m_.at(p);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p;
    Writer::VerityOptions o;
    if (r(3) == 0) o.salt.resize(1 + r(32));
    for (auto& b : o.salt) b = static_cast<std::uint8_t>(r(256));
    auto s = w_->enable_verity(*ino, o);
    if (n.verity) {
      ASSERT_FALSE(s) << ctx() << " enable_verity twice on " << p;
      EXPECT_EQ(s.error().sys_errno, EEXIST) << ctx() << " " << s.error().to_string();
      unchanged(n, *ino, "enable_verity");
      return;
    }
    if (!s && s.error().code == Errc::unsupported && s.error().message.find("OpenSSL") != std::string::npos) {
      no_openssl_ = true;
      return;
    }
    ASSERT_TRUE(s) << ctx() << " enable_verity " << p << ": " << s.error().to_string();
    n.verity = true;
    n.verity_salt.assign(o.salt.begin(), o.salt.end());
    n.ctime = now();  // the xattr's f2fs_setxattr() (f2fs_end_enable_verity())
    ++counts_.verity;
    const auto loc = verityref::location(n.data.size(), verityref::expected(n.data, o.salt));
    n.xattrs[{11, "v"}] = std::string(loc.begin(), loc.end());
    check_digest(n, *ino, p);
  }

  void check_digest(const MInode& n, nid_t ino, const std::string& what) {
    ++counts_.digests;
    auto d = w_->measure_verity(ino);
    ASSERT_TRUE(d) << ctx() << " measure_verity " << what << ": " << d.error().to_string();
    EXPECT_EQ(d->algorithm, 1u);
    const verityref::Bytes salt(n.verity_salt.begin(), n.verity_salt.end());
    EXPECT_EQ(verityref::hex(d->digest), verityref::hex(verityref::expected(n.data, salt).digest))
        << ctx() << " digest of " << what << " (" << n.data.size() << " bytes, salt " << salt.size() << ")";
  }

  // A verity file refuses an open for writing (EPERM, fsverity_file_open()).
  void op_verity_refusals(const std::vector<std::string>& files) {
    std::vector<std::string> c;
    for (const auto& p : files)
      if (m_.at(p).verity) c.push_back(p);
    if (c.empty()) return;
    const std::string p = any(c);
    auto ino = ino_of(p);
    ASSERT_TRUE(ino) << ctx() << " lookup " << p;
    auto o = w_->open(*ino, r(2) ? open_flag::wronly : open_flag::rdwr);
    ASSERT_FALSE(o) << ctx() << " open for writing of verity file " << p;
    EXPECT_EQ(o.error().sys_errno, EPERM) << ctx() << " " << o.error().to_string();
    unchanged(m_.at(p), *ino, "open for writing");
  }

  // After each session, through our reader: every inode's F2FS_COMPR_FL,
  // released state and verity bit as the model has them; the blocks saved
  // (i_compr_blocks) are counted, 0 in released files.
  void check_feature_inodes() {
    if (!pr_.compression && !pr_.verity) return;
    auto v = Volume::open(*dev_);
    ASSERT_TRUE(v);
    for (const auto& [id, n] : m_.inodes) {
      if (n.ino == 0) continue;
      auto in = (*v)->read_inode(n.ino);
      ASSERT_TRUE(in) << ctx() << " inode " << n.ino;
      EXPECT_EQ(in->is_compressed(), n.compr) << ctx() << " F2FS_COMPR_FL of inode " << n.ino;
      EXPECT_EQ(in->is_verity(), n.verity) << ctx() << " verity bit of inode " << n.ino;
      EXPECT_EQ((in->raw.i.i_inline & disk::inline_flag::compress_released) != 0, n.released)
          << ctx() << " F2FS_COMPRESS_RELEASED of inode " << n.ino;
      const std::uint64_t saved = in->is_compressed() ? in->raw.i.extra.i_compr_blocks.get() : 0;
      if (n.released) EXPECT_EQ(saved, 0u) << ctx() << " i_compr_blocks of released inode " << n.ino;
      counts_.saved_blocks_seen += saved;
      counts_.compressed_files_seen += n.compr && n.type == 'f';
    }
  }

 public:
  /// What the feature sets' operations did (summed over the sessions).
  struct Counts {
    std::uint64_t compr_new = 0, compr_flag = 0, compr_flag_refused = 0, released = 0, released_blocks = 0, reserved = 0, gc = 0,
                  gc_moved = 0, verity = 0, digests = 0, refused = 0, saved_blocks_seen = 0, compressed_files_seen = 0;
  };
  const Counts& counts() const { return counts_; }
  std::string counts_line() const {
    const Counts& c = counts_;
    char b[400];
    std::snprintf(b, sizeof b,
                  "seed %u: compressed new %llu, +c/-c %llu (EINVAL %llu), released %llu (%llu blocks), reserved %llu, gc %llu (%llu "
                  "blocks moved), verity %llu, digests %llu, refusals %llu; after unmounts: compressed files %llu, "
                  "i_compr_blocks %llu",
                  seed_, (unsigned long long)c.compr_new, (unsigned long long)c.compr_flag,
                  (unsigned long long)c.compr_flag_refused, (unsigned long long)c.released,
                  (unsigned long long)c.released_blocks, (unsigned long long)c.reserved, (unsigned long long)c.gc, (unsigned long long)c.gc_moved,
                  (unsigned long long)c.verity, (unsigned long long)c.digests, (unsigned long long)c.refused,
                  (unsigned long long)c.compressed_files_seen, (unsigned long long)c.saved_blocks_seen);
    return b;
  }

 private:
  Counts counts_;

  // After each mount: every verity file measures as its data says.
  void check_verity_files() {
    if (!pr_.verity) return;
    for (const auto& [id, n] : m_.inodes)
      if (n.verity) check_digest(n, n.ino, "inode " + std::to_string(n.ino) + " after the mount");
  }

 public:
  bool no_openssl() const { return no_openssl_; }
  /// Why the compression set's first mount was refused as unsupported ("": it was not).
  const std::string& codec_missing() const { return codec_missing_; }

 private:
  bool no_openssl_ = false;
  std::string codec_missing_;
  int gc_files_ = 0;

  std::uint32_t seed_;
  Profile pr_;
  std::mt19937_64 rng_;
  std::unique_ptr<BlockDevice> dev_;
  Writer* w_ = nullptr;
  Model m_;
  fscrypt::Keyring ring_;  ///< keys() when Profile::fscrypt_key
  std::uint64_t first_time_ = 1700000000u;
  bool adopted_ = false;
  int phase_ = 0, op_ = 0;
  std::uint64_t now_ = 0;
  std::uint64_t orphans_seen_ = 0;
};

// ---- writer_model_linux.sh: Linux reads a model run's image, changes it,
// our writer reads Linux's changes and keeps writing ----

Profile oracle_profile() {
  Profile p;
  p.phases = 3;
  p.ops = 120;
  p.deep = 12;
  p.printable_xattrs = true;
  return p;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string manifest_diff(const std::string& want, const std::string& got) {
  std::set<std::string> a, b;
  std::istringstream wa(want), gb(got);
  for (std::string l; std::getline(wa, l);) a.insert(l);
  for (std::string l; std::getline(gb, l);) b.insert(l);
  std::string out;
  int n = 0;
  for (const auto& l : a)
    if (!b.count(l) && n++ < 20) out += "- " + l.substr(0, 300) + "\n";
  for (const auto& l : b)
    if (!a.count(l) && n++ < 40) out += "+ " + l.substr(0, 300) + "\n";
  return out;
}

// A model run (3 sessions) plus fixed entries the guest script changes;
// writes WRITER_IMAGE and WRITER_IMAGE.manifest.
TEST(WriterModelOracle, DISABLED_WriteImage) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  Runner run(77, oracle_profile());
  run.run();
  ASSERT_FALSE(::testing::Test::HasFailure());
  BlockDevice& dev = run.device();
  {
    MountOptions mo;
    mo.fixed_time = 1750000000;
    auto w = Writer::mount(dev, mo);
    ASSERT_TRUE(w);
    Writer& wr = **w;
    ASSERT_TRUE(wr.mkdir("/fixed"));
    ASSERT_TRUE(wr.mkdir("/fixed/dir"));
    ASSERT_TRUE(wr.mkdir("/linux-many"));
    auto a = wr.create("/fixed/a");
    ASSERT_TRUE(a);
    std::string d;
    for (int i = 0; i < 3000; ++i) d += "alpha-" + std::to_string(i) + "\n";
    ASSERT_TRUE(wr.write(*a, 0, bytes(d)));
    ASSERT_TRUE(wr.create("/fixed/rm-me"));
    auto x = wr.create("/fixed/x");
    ASSERT_TRUE(x);
    ASSERT_TRUE(wr.setxattr(*x, 1, "k", bytes("v")));
    ASSERT_TRUE(wr.symlink("a", "/fixed/link"));
    ASSERT_TRUE(wr.unmount());
  }
  our_fsck_clean(dev, "oracle image");
  fsck_f2fs_clean(dev, "oracle image");
  ASSERT_TRUE(save(dev, out));
  auto v = Volume::open(dev);
  ASSERT_TRUE(v);
  std::ofstream(std::string(out) + ".manifest", std::ios::binary) << manifest(**v);
}

// The compression and verity sets' images Linux reads in the same boot
// (/dev/vdb, /dev/vdc): a model run of three sessions, both checkers clean;
// writes WRITER_IMAGE, WRITER_IMAGE.manifest, WRITER_IMAGE.flags ("path
// compr verity", 0 or 1, from the model, for files and directories) and
// WRITER_IMAGE.verity ("path sha256:digest" of each verity file, from
// verity_reference.hpp over the model's data).
void write_feature_image(const Profile& p, std::uint32_t seed) {
  const char* out = std::getenv("WRITER_IMAGE");
  ASSERT_NE(out, nullptr) << "set WRITER_IMAGE";
  Runner run(seed, p);
  run.run();
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_FALSE(run.no_openssl()) << "fs-verity needs OpenSSL";
  BlockDevice& dev = run.device();
  our_fsck_clean(dev, "feature image");
  fsck_f2fs_clean(dev, "feature image");
  ASSERT_TRUE(save(dev, out));
  auto v = Volume::open(dev);
  ASSERT_TRUE(v);
  std::ofstream(std::string(out) + ".manifest", std::ios::binary) << manifest(**v);
  std::ofstream flags(std::string(out) + ".flags", std::ios::binary), ver(std::string(out) + ".verity", std::ios::binary);
  std::set<int> measured;
  for (const auto& [path, id] : run.model().paths) {
    const MInode& n = run.model().inodes.at(id);
    if (path.empty() || (n.type != 'f' && n.type != 'd')) continue;
    flags << path << " " << n.compr << " " << n.verity << "\n";
    if (n.verity && measured.insert(id).second) {
      const verityref::Bytes salt(n.verity_salt.begin(), n.verity_salt.end());
      ver << path << " sha256:" << verityref::hex(verityref::expected(n.data, salt).digest) << "\n";
    }
  }
}

TEST(WriterModelOracle, DISABLED_WriteCompressImage) {
  Profile p = oracle_profile();
  p.deep = 0;
  p.features = kRichFeatures | feature::compression;
  MountOptions::Compression c;
  c.algorithm = 2;  // zstd, clusters of 16 blocks: as writer_model_linux.sh mounts it
  c.log_size = 4;
  c.chksum = true;
  c.extension = {"txt"};
  c.nocompress_extension = {"raw"};
  p.compression = c;
  write_feature_image(p, 79);
}

TEST(WriterModelOracle, DISABLED_WriteVerityImage) {
  Profile p = oracle_profile();
  p.deep = 0;
  p.features = kRichFeatures | feature::verity;
  p.verity = true;
  write_feature_image(p, 80);
}

// After Linux changed the image: our reader's manifest equals the one Linux
// made (WRITER_LINUX_MANIFEST); then the model is read from the volume and
// two more sessions of random operations run on it (each checked); writes
// the image back and WRITER_IMAGE.final.manifest for Linux to compare.
TEST(WriterModelOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  const char* theirs = std::getenv("WRITER_LINUX_MANIFEST");
  ASSERT_TRUE(img && theirs) << "set WRITER_IMAGE and WRITER_LINUX_MANIFEST";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  {
    auto v = Volume::open(*dev);
    ASSERT_OK(v);
    EXPECT_EQ(manifest_diff(read_text(theirs), manifest(**v)), "") << "our reader differs from Linux (- Linux, + ours)";
  }
  our_fsck_clean(*dev, "Linux's image");
  Profile p = oracle_profile();
  p.phases = 2;
  Runner run(78, p, std::move(dev), 1800000000);
  run.run();
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_TRUE(save(run.device(), img));
  auto v = Volume::open(run.device());
  ASSERT_TRUE(v);
  std::ofstream(std::string(img) + ".final.manifest", std::ios::binary) << manifest(**v);
}

std::vector<std::uint32_t> seeds_from_env(std::vector<std::uint32_t> dflt) {
  if (const char* e = std::getenv("WRITER_MODEL_SEEDS")) {
    std::uint32_t first = 1, last = 1;
    if (std::sscanf(e, "%u-%u", &first, &last) < 2) last = first;
    dflt.clear();
    for (std::uint32_t s = first; s <= last; ++s) dflt.push_back(s);
  }
  return dflt;
}

// Unit seeds: small and fast (no threads, no host tools).
TEST(WriterModelNs, Seeds) {
  for (std::uint32_t seed : seeds_from_env({1, 2, 3})) {
    Profile p;
    p.phases = 4;
    p.ops = 150;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

// An encrypt volume Linux wrote (tests/data/linux61-encrypt.img.zst: fscrypt
// v2 directories /enc and /k with the oracle's test key), without the key:
// random sessions with remounts (and sessions ended without unmount) on the
// unencrypted parts; changes tried in /enc and /k are refused with ENOKEY;
// after each session the tree equals the model, the encrypted subtrees as
// Linux left them, and both checkers are clean.
TEST(WriterModelNs, EncryptNoKey) {
  auto img = f2fstest::unzstd(f2fstest::data_dir() / "linux61-encrypt.img.zst");
  if (!img) GTEST_SKIP() << "zstd is not available to unpack the fixture";
  for (std::uint32_t seed : seeds_from_env({31, 32})) {
    Profile p;
    p.features = feature::encrypt;
    p.image_bytes = 64ull << 20;
    p.max_write = 64u << 10;
    p.phases = 4;
    p.ops = 120;
    p.frozen = {"/enc", "/k"};
    Runner run(seed, p, f2fstest::load_image(*img), 1800000000);
    run.run();
    if (::testing::Test::HasFailure()) return;
  }
}

// The same random test with the test key: /enc encrypted (padding 16),
// names, contents and links made, changed and removed in it, renames and
// links into it from unencrypted places refused with EXDEV; sessions
// without the key in between (nokey_session()); after each session our
// reader with the key (fscrypt.hpp) sees the model, both checkers clean.
TEST(WriterModelNs, EncryptWithKey) {
  if (!fscrypt::supported()) GTEST_SKIP() << "built without OpenSSL (F2FSCORE_WITH_OPENSSL)";
  for (std::uint32_t seed : seeds_from_env({41, 42})) {
    Profile p;
    p.features = kRichFeatures | feature::encrypt;
    p.phases = 4;
    p.ops = 150;
    p.fscrypt_key = true;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelNs, NoFeatures) {
  Profile p;
  p.features = 0;
  p.phases = 3;
  p.ops = 150;
  Runner(11, p).run();
}

// A casefold volume: /cf and the directories made in it casefolded, +F set
// and cleared on empty directories (refused on others), names in mixed
// case with ß, KELVIN SIGN and É given in other cases.
TEST(WriterModelNs, Casefold) {
  if (!casefold_supported()) GTEST_SKIP() << "built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF)";
  for (std::uint32_t seed : seeds_from_env({41, 42})) {
    Profile p;
    p.features = kRichFeatures | feature::casefold;
    p.casefold = true;
    p.phases = 4;
    p.ops = 200;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

// Quota and project quota: the quota files' usage is checked by both
// checkers after every unmount and cut (fsck.f2fs in the interop build).
TEST(WriterModelNs, Quota) {
  for (std::uint32_t seed : seeds_from_env({41, 42})) {
    Profile p;
    p.features = kRichFeatures | feature::quota_ino | feature::project_quota;
    p.phases = 5;
    p.ops = 150;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

// A directory of 2,000 entries and a path 40 directories deep.
TEST(WriterModelNs, WideAndDeep) {
  Profile p;
  p.phases = 3;
  p.ops = 120;
  p.wide = 2000;
  p.deep = 40;
  Runner(21, p).run();
}

// ---- Feature sets: compression (4 algorithms x clusters of 4 and 16
// blocks) and fs-verity. Unit: one seed each; WRITER_MODEL_SEEDS and the
// interop build (fsck.f2fs -f after every unmount) run more. ----

struct ComprSet {
  const char* name;
  std::uint8_t algorithm, log_size;
  std::uint32_t seed;  ///< the unit seed; the interop build runs seed + 1 and seed + 101 too
};
const ComprSet kComprSets[] = {{"lzo_log2", 0, 2, 51},    {"lzo_log4", 0, 4, 53},   {"lz4_log2", 1, 2, 55},
                               {"lz4_log4", 1, 4, 57},    {"zstd_log2", 2, 2, 59},  {"zstd_log4", 2, 4, 61},
                               {"lzorle_log2", 3, 2, 63}, {"lzorle_log4", 3, 4, 65}};

Profile compression_profile(const ComprSet& c, std::uint32_t seed) {
  Profile p;
  p.features = kRichFeatures | feature::compression;
  p.phases = 5;
  p.ops = 200;
  MountOptions::Compression o;
  o.algorithm = c.algorithm;
  o.log_size = c.log_size;
  o.chksum = seed % 2 == 0;
  o.extension = {"txt"};
  o.nocompress_extension = {"raw"};
  p.compression = o;
  return p;
}

class WriterModelCompr : public ::testing::TestWithParam<ComprSet> {};

TEST_P(WriterModelCompr, Seeds) {
  const ComprSet& c = GetParam();
  for (std::uint32_t seed : seeds_from_env({c.seed})) {
    Runner run(seed, compression_profile(c, seed));
    run.run();
    if (!run.codec_missing().empty()) GTEST_SKIP() << run.codec_missing();
    std::printf("%s %s\n", c.name, run.counts_line().c_str());
    if (::testing::Test::HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, WriterModelCompr, ::testing::ValuesIn(kComprSets),
                         [](const ::testing::TestParamInfo<ComprSet>& i) { return std::string(i.param.name); });

// A build whose CMake found OpenSSL (VERITY_EXPECT_OPENSSL) must enable
// verity; elsewhere a library without it skips the set.
void verity_seeds(std::vector<std::uint32_t> seeds, int phases, int ops) {
  for (std::uint32_t seed : seeds_from_env(std::move(seeds))) {
    Profile p;
    p.features = kRichFeatures | feature::verity;
    p.verity = true;
    p.phases = phases;
    p.ops = ops;
    Runner run(seed, p);
    run.run();
    std::printf("verity %s\n", run.counts_line().c_str());
    if (run.no_openssl()) {
#ifdef VERITY_EXPECT_OPENSSL
      FAIL() << "enable_verity: no OpenSSL in a build that found it";
#else
      if (f2fstest::required("OPENSSL")) FAIL() << "enable_verity: no OpenSSL and F2FSCORE_REQUIRE_OPENSSL=1";
      GTEST_SKIP() << "built without OpenSSL: no fs-verity";
#endif
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelVerity, Seeds) { verity_seeds({71, 72}, 5, 200); }

#ifdef WRITER_WITH_FSCK
TEST_P(WriterModelCompr, MoreSeeds) {
  const ComprSet& c = GetParam();
  for (std::uint32_t seed : seeds_from_env({c.seed + 1, c.seed + 101})) {
    Profile p = compression_profile(c, seed);
    p.phases = 6;
    p.ops = 250;
    Runner run(seed, p);
    run.run();
    if (!run.codec_missing().empty()) GTEST_SKIP() << run.codec_missing();
    std::printf("%s %s\n", c.name, run.counts_line().c_str());
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelVerity, MoreSeeds) { verity_seeds({73, 74, 75}, 6, 250); }
#endif

// A volume of two devices (mkfs -c) with the rich feature set, and one of
// three with quota: the tree equals the model after every session and both
// checkers are clean (fsck.f2fs opens the other devices by the
// superblock's paths); data lands on every device (blkaddrs past device 0).
void run_on_devices(std::uint32_t seed, Profile p) {
  Runner run(seed, p);
  run.run();
  if (::testing::Test::HasFailure()) return;
  auto* md = dynamic_cast<MultiDevice*>(&run.device());
  ASSERT_NE(md, nullptr);
  // Then a file of half the free space, so that every device holds data.
  {
    MountOptions mo;
    mo.fixed_time = 1800000000;
    auto w = Writer::mount(*md, mo);
    ASSERT_TRUE(w) << w.error().to_string();
    auto ino = (*w)->create("/fill");
    ASSERT_TRUE(ino) << ino.error().to_string();
    const std::uint64_t n = (*w)->statfs().bfree / 2 * kBlockSize;
    std::string chunk(1u << 20, '\0');
    for (std::uint64_t off = 0; off < n; off += chunk.size()) {
      for (std::size_t i = 0; i < chunk.size(); i += 4096) chunk[i] = static_cast<char>(off / 4096 + i / 4096);
      auto r = (*w)->write(*ino, off, bytes(chunk));
      ASSERT_TRUE(r) << r.error().to_string();
    }
    ASSERT_TRUE((*w)->unmount());
    check_clean(*md, "after /fill");
  }
  auto v = Volume::open(*md);
  ASSERT_TRUE(v) << v.error().to_string();
  std::vector<std::uint64_t> blocks(md->members());
  std::function<void(nid_t)> walk = [&](nid_t ino) {
    auto in = (*v)->read_inode(ino);
    ASSERT_TRUE(in) << in.error().to_string();
    auto map = inspect::block_map(**v, *in);
    ASSERT_TRUE(map) << map.error().to_string();
    for (const auto& r : map->runs)
      for (std::uint32_t k = 0; k < r.len; ++k) {
        const std::size_t m = md->member_of(static_cast<std::uint64_t>(r.blkaddr) + k);
        if (m < blocks.size()) ++blocks[m];
      }
    if ((in->mode & 0xF000) != 0x4000) return;
    auto ents = (*v)->read_dir(*in);
    ASSERT_TRUE(ents) << ents.error().to_string();
    for (const auto& e : *ents)
      if (e.name != "." && e.name != "..") walk(e.ino);
  };
  walk((*v)->superblock().root_ino.get());
  for (std::size_t i = 0; i < blocks.size(); ++i) EXPECT_GT(blocks[i], 0u) << "no file block on device " << i;
}

TEST(WriterModelNs, TwoDevices) {
  for (std::uint32_t seed : seeds_from_env({51})) {
    Profile p;
    p.image_bytes = 64ull << 20;
    p.more_devices = {192ull << 20};
    p.phases = 4;
    p.ops = 150;
    p.max_write = 1u << 20;
    run_on_devices(seed, p);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelNs, ThreeDevicesQuota) {
  Profile p;
  p.features = kRichFeatures | feature::quota_ino | feature::project_quota;
  p.image_bytes = 64ull << 20;
  p.more_devices = {32ull << 20, 32ull << 20};
  p.phases = 4;
  p.ops = 200;
  p.max_write = 2u << 20;
  p.big_write = 16u << 20;
  run_on_devices(52, p);
}

#ifdef WRITER_WITH_FSCK
// Interop seeds: more sessions and operations, files up to 64 MiB.
TEST(WriterModelNs, BigFiles) {
  for (std::uint32_t seed : seeds_from_env({31, 32})) {
    Profile p;
    p.image_bytes = 1ull << 30;
    p.phases = 5;
    p.ops = 200;
    p.max_write = 2u << 20;
    p.big_write = 64u << 20;
    p.wide = seed % 2 ? 3000 : 0;
    p.deep = 30;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelNs, CasefoldMoreSeeds) {
  if (!casefold_supported()) GTEST_SKIP() << "built without casefolding (F2FSCORE_WITH_CASEFOLD=OFF)";
  for (std::uint32_t seed : seeds_from_env({43, 44, 45})) {
    Profile p;
    p.features = kRichFeatures | feature::casefold;
    p.casefold = true;
    p.phases = 6;
    p.ops = 250;
    p.wide = seed == 45 ? 1500 : 0;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(WriterModelNs, MoreSeeds) {
  for (std::uint32_t seed : seeds_from_env({4, 5, 6, 7, 8, 9, 10})) {
    Profile p;
    p.phases = 6;
    p.ops = 250;
    Runner(seed, p).run();
    if (::testing::Test::HasFailure()) return;
  }
}
#endif

}  // namespace
