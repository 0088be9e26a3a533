// The writer on a volume with the encrypt feature, without keys.
//
// Reference: tests/data/linux61-encrypt.img.zst, an image Linux 6.1 wrote
// (an fscrypt v2 directory /enc made by the oracle's `gtool encrypt-dir`,
// files, a subdirectory, symlinks, a 200-byte name, 120 names in /enc/many;
// /plain and /k unencrypted and encrypted), and
// tests/data/linux61-encrypt.out, what Linux printed: "N INO NAME" are the
// names `ls -ai /mnt/enc` shows without the key (no-key names), "E ..." the
// errors of changes without the key (create and append: "Required key not
// available", ENOKEY; a plaintext name: "No such file", ENOENT).
// Both checkers are clean after every session (fsck.f2fs -f in the interop
// build).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

#include "f2fscore/file_handle.hpp"
#include "f2fscore/fscrypt.hpp"
#include "writer/writer_test_util.hpp"

#ifndef ENOKEY
#define ENOKEY 126
#endif

namespace {

using namespace writertest;

class WriterEncryptNoKey : public ::testing::Test {
 protected:
  void SetUp() override {
    auto img = f2fstest::unzstd(f2fstest::data_dir() / "linux61-encrypt.img.zst");
    if (!img) GTEST_SKIP() << "zstd is not available to unpack the fixture";
    dev_ = f2fstest::load_image(*img);
    ASSERT_TRUE(dev_);
    std::ifstream out(f2fstest::data_dir() / "linux61-encrypt.out");
    ASSERT_TRUE(out);
    for (std::string line; std::getline(out, line);) {
      std::istringstream l(line);
      std::string tag, name;
      nid_t ino = 0;
      if (line.rfind("N ", 0) == 0 && (l >> tag >> ino >> name) && name != "." && name != "..") linux_names_[name] = ino;
    }
    ASSERT_EQ(linux_names_.size(), 9u);
  }

  std::string nokey(nid_t ino) const {
    for (const auto& [n, i] : linux_names_)
      if (i == ino) return n;
    ADD_FAILURE() << "no name of inode " << ino;
    return "";
  }

  Tree tree() {
    auto v = Volume::open(*dev_);
    EXPECT_TRUE(v);
    return v ? read_tree(**v) : Tree{};
  }

  std::unique_ptr<BlockDevice> dev_;
  std::map<std::string, nid_t> linux_names_;  ///< no-key name -> inode, as Linux listed /enc
};

// Inodes of the fixture, as Linux printed them (ls -i).
constexpr nid_t kEnc = 5, kSmall = 7, kBig = 8, kSub = 11, kSymlink = 15;

TEST_F(WriterEncryptNoKey, ListsAndFindsNoKeyNamesAsLinux) {
  auto w = mount_fixed_time(*dev_);
  ASSERT_TRUE(w);
  auto es = w->readdir("/enc");
  ASSERT_TRUE(es) << es.error().to_string();
  std::map<std::string, nid_t> got;
  for (const auto& e : *es)
    if (e.name != "." && e.name != "..") got[e.name] = e.ino;
  EXPECT_EQ(got, linux_names_);
  auto at = w->list_at(kEnc);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->size(), linux_names_.size());
  // A no-key name finds its inode; the plaintext name finds nothing (ENOENT,
  // as `cat /mnt/enc/small` in Linux without the key).
  for (const auto& [n, ino] : linux_names_) {
    auto l = w->lookup("/enc/" + n);
    ASSERT_TRUE(l) << n << ": " << l.error().to_string();
    EXPECT_EQ(*l, ino) << n;
    auto la = w->lookup_at(kEnc, n);
    ASSERT_TRUE(la);
    EXPECT_EQ(*la, ino);
  }
  EXPECT_EQ(err_no(w->lookup("/enc/small")), ENOENT);
  EXPECT_EQ(err_no(w->lookup_at(kEnc, "small")), ENOENT);
  // One character changed: no entry.
  std::string wrong = nokey(kSmall);
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(err_no(w->lookup("/enc/" + wrong)), ENOENT);
  // The unencrypted directory reads as usual, the encrypted one's stat too.
  auto plain = w->lookup("/plain/a.txt");
  ASSERT_TRUE(plain);
  std::string a(51, '\0');
  auto n = w->read(*plain, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(a.data()), a.size()));
  ASSERT_TRUE(n);
  EXPECT_EQ(a.substr(0, *n), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n");
  auto st = w->stat("/enc/" + nokey(kBig));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->size, 20000u);  // F big 20000 in Linux's output
  // Reading an encrypted file needs its key (fscrypt_file_open(): ENOKEY).
  std::uint8_t buf[16];
  EXPECT_EQ(err_no(w->read(kSmall, 0, buf)), ENOKEY);
  EXPECT_EQ(err_no(w->open(kSmall, 0)), ENOKEY);
  EXPECT_EQ(err_no(w->open("/enc/" + nokey(kSmall), 0)), ENOKEY);
  // A symlink's target is the no-key form of its ciphertext.
  auto t = w->readlink(kSymlink);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->size(), 54u);  // 8 + 32 bytes (the target padded to 32: FSCRYPT_POLICY_FLAGS_PAD_32) in base64url
  ASSERT_TRUE(w->unmount());
  check_clean(*dev_, "after listing");
}

TEST_F(WriterEncryptNoKey, EveryChangeIsRefusedAndNothingWritten) {
  const Tree before = tree();
  ASSERT_FALSE(before.empty());
  auto w = mount_fixed_time(*dev_);
  ASSERT_TRUE(w);
  const std::string small = "/enc/" + nokey(kSmall), sub = "/enc/" + nokey(kSub);
  auto enokey = [](const auto& r, const char* what) {
    ASSERT_FALSE(r) << what << " succeeded";
    EXPECT_EQ(r.error().sys_errno, ENOKEY) << what << ": " << r.error().to_string();
    EXPECT_EQ(errno_of(r.error()), ENOKEY) << what;
    EXPECT_NE(r.error().message.find("/enc"), std::string::npos) << what << ": the message names no path: " << r.error().message;
  };
  // New names in the encrypted directory (Linux: touch /mnt/enc/new is
  // "Required key not available").
  enokey(w->create("/enc/new"), "create");
  enokey(w->mkdir("/enc/newdir"), "mkdir");
  enokey(w->symlink("x", "/enc/newlink"), "symlink");
  enokey(w->mknod("/enc/fifo", 0x1000 | 0644), "mknod");
  enokey(w->mknod_at(kEnc, "fifo", 0x1000 | 0644), "mknod_at");
  enokey(w->link("/plain/a.txt", "/enc/a"), "link into");
  enokey(w->rename("/plain/a.txt", "/enc/a"), "rename into");
  enokey(w->open("/enc/new2", open_flag::wronly | open_flag::creat), "open O_CREAT");
  // Names going or moving.
  enokey(w->unlink(small), "unlink");
  enokey(w->unlink_at(kEnc, nokey(kSmall)), "unlink_at");
  enokey(w->rmdir(sub), "rmdir");
  enokey(w->rename(small, "/plain/s"), "rename out");
  enokey(w->rename(small, "/enc/" + nokey(kBig)), "rename within");
  enokey(w->rename("/enc", "/enc2"), "rename the directory");
  enokey(w->link(small, "/plain/l"), "link out");
  // The file and directory inodes themselves (Linux: echo x >> small is
  // "Required key not available").
  enokey(w->write(kSmall, 0, bytes("x")), "write");
  {
    auto r = w->write(kSmall, 0, bytes("x"));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("\"" + small + "\" (inode 7)"), std::string::npos) << r.error().message;
  }
  enokey(w->truncate(kSmall, 0), "truncate");
  enokey(w->truncate(small, 1), "truncate by path");
  enokey(w->fallocate(kSmall, 0, 0, 4096), "fallocate");
  enokey(w->open(small, open_flag::wronly | open_flag::append), "open for append");
  enokey(w->setattr(kSmall, {.mode = 0600}), "chmod");
  enokey(w->setattr(kEnc, {.uid = 5}), "chown of the directory");
  enokey(w->setxattr(kSmall, 1, "k", bytes("v")), "setxattr");
  enokey(w->setxattr("/enc", "user.k", bytes("v")), "setxattr by path");
  enokey(w->removexattr(kEnc, 9, "c"), "removexattr of the context");
  enokey(w->set_flags(kEnc, 0x10, 0x10), "chattr +i");
  enokey(w->set_pinned(kBig, true), "pin");
  auto d = w->defragment(kBig, 0, 8192);
  enokey(d, "defragment");
  // A change refused leaves the tree as it was after unmount; unencrypted
  // parts still change.
  ASSERT_TRUE(w->create("/plain/new"));
  ASSERT_TRUE(w->unmount());
  Tree want = before;
  auto after = tree();
  ASSERT_TRUE(after.count("/plain/new"));
  after.erase("/plain/new");
  for (auto& [p, e] : after)
    if (p == "/plain") e = want.at(p);  // its mtime and ctime moved
  EXPECT_EQ(tree_diff(want, after), "");
  check_clean(*dev_, "after the refusals");
}

TEST_F(WriterEncryptNoKey, UnencryptedPartsWriteAndGcMovesCiphertext) {
  const Tree before = tree();
  Tree enc;
  for (const auto& [p, e] : before)
    if (p.rfind("/enc", 0) == 0 || p.rfind("/k", 0) == 0) enc[p] = e;
  ASSERT_GT(enc.size(), 130u);
  for (int session = 0; session < 3; ++session) {
    auto w = mount_fixed_time(*dev_);
    ASSERT_TRUE(w);
    const std::string d = "/d" + std::to_string(session);
    ASSERT_TRUE(w->mkdir(d));
    for (int i = 0; i < 40; ++i) {
      auto f = w->create(d + "/f" + std::to_string(i));
      ASSERT_TRUE(f);
      ASSERT_TRUE(w->write(*f, 0, bytes(std::string(static_cast<std::size_t>(5000 * (i + 1)), static_cast<char>('a' + i % 26)))));
    }
    for (int i = 0; i < 40; i += 2) ASSERT_TRUE(w->unlink(d + "/f" + std::to_string(i)));
    ASSERT_TRUE(w->rename("/plain/a.txt", d + "/a.txt"));
    ASSERT_TRUE(w->rename(d + "/a.txt", "/plain/a.txt"));
    ASSERT_TRUE(w->sync());
    // GC moves the encrypted files' blocks as they are (their IVs are
    // their file offsets, not their addresses).
    for (int k = 0; k < 8; ++k) {
      auto g = w->gc(1);
      ASSERT_TRUE(g) << g.error().to_string();
    }
    ASSERT_TRUE(w->unmount());
    check_clean(*dev_, "session " + std::to_string(session));
    Tree now;
    for (const auto& [p, e] : tree())
      if (p.rfind("/enc", 0) == 0 || p.rfind("/k", 0) == 0) now[p] = e;
    EXPECT_EQ(tree_diff(enc, now), "") << "session " << session;
  }
}

// A key given to a build without OpenSSL: a clear refusal, nothing written.
TEST_F(WriterEncryptNoKey, KeyWithoutOpenSslRefusesTheMount) {
  if (fscrypt::supported()) GTEST_SKIP() << "built with OpenSSL";
  MountOptions mo;
  mo.fscrypt_keys.push_back({});
  auto w = Writer::mount(*dev_, mo);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::unsupported);
  EXPECT_NE(w.error().message.find("OpenSSL"), std::string::npos) << w.error().message;
}

// ---- fscrypt v2 with the oracle's test key, against what Linux wrote ----

// gtool encrypt-dir's key: byte i is 0x5a ^ i.
fscrypt::MasterKey test_key() {
  fscrypt::MasterKey k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(0x5a ^ i);
  return k;
}

class FscryptLinux : public WriterEncryptNoKey {
 protected:
  void SetUp() override {
    if (!fscrypt::supported()) GTEST_SKIP() << "built without OpenSSL (F2FSCORE_WITH_OPENSSL)";
    WriterEncryptNoKey::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::ifstream out(f2fstest::data_dir() / "linux61-encrypt.out");
    for (std::string line; std::getline(out, line);) {
      std::istringstream l(line);
      std::string tag, a, b, c;
      if (line.rfind("F ", 0) == 0 && (l >> tag >> a >> b >> c)) files_[a] = {std::stoull(b), c};
      else if (line.rfind("L ", 0) == 0 && (l >> tag >> a >> b)) links_[a] = b;
      else if (line.rfind("I ", 0) == 0 && (l >> tag >> b >> a)) inos_[static_cast<nid_t>(std::stoull(b))] = a;
    }
    ASSERT_EQ(files_.size(), 6u);
    ASSERT_EQ(links_.size(), 2u);
    ASSERT_EQ(inos_.size(), 9u);
    auto v = Volume::open(*dev_);
    ASSERT_TRUE(v);
    vol_ = std::move(*v);
  }

  fscrypt::Context context_of(nid_t ino) {
    auto in = vol_->read_inode(ino);
    EXPECT_TRUE(in);
    auto xs = vol_->xattrs(*in);
    EXPECT_TRUE(xs);
    for (const auto& x : *xs)
      if (x.index == 9 && x.name == "c") {
        auto c = fscrypt::parse_context(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(x.value.data()), x.value.size()));
        EXPECT_TRUE(c) << c.error().to_string();
        return c ? *c : fscrypt::Context{};
      }
    ADD_FAILURE() << "inode " << ino << " has no encryption context";
    return {};
  }
  fscrypt::InodeKey key_of(nid_t ino) {
    auto k = fscrypt::InodeKey::derive(test_key(), context_of(ino));
    EXPECT_TRUE(k) << k.error().to_string();
    return k ? std::move(*k) : fscrypt::InodeKey{};
  }
  std::unique_ptr<Volume> vol_;
  std::map<std::string, std::pair<std::uint64_t, std::string>> files_;  ///< path -> size, sha256 (Linux)
  std::map<std::string, std::string> links_;                            ///< symlink -> target (Linux)
  std::map<nid_t, std::string> inos_;                                   ///< inode -> plaintext name in /enc (Linux)
};

TEST_F(FscryptLinux, KeyIdentifierIsTheOneLinuxStored) {
  auto id = fscrypt::key_identifier(test_key());
  ASSERT_TRUE(id) << id.error().to_string();
  EXPECT_EQ(*id, context_of(kEnc).identifier);
  EXPECT_EQ(context_of(kEnc).padding(), 32u);
  // Another key is not the one the context names.
  fscrypt::MasterKey other = test_key();
  other[0] ^= 1;
  EXPECT_FALSE(fscrypt::InodeKey::derive(other, context_of(kEnc)));
}

TEST_F(FscryptLinux, NamesDecryptAndEncryptAsLinux) {
  const fscrypt::InodeKey dk = key_of(kEnc);
  auto in = vol_->read_inode(kEnc);
  ASSERT_TRUE(in);
  auto es = vol_->read_dir(*in);
  ASSERT_TRUE(es);
  std::map<nid_t, std::string> got;
  for (const auto& e : *es) {
    if (e.name == "." || e.name == "..") continue;
    auto p = dk.decrypt_name(e.name);
    ASSERT_TRUE(p) << p.error().to_string();
    got[e.ino] = *p;
    // Encrypting the plaintext gives the stored bytes (the IV is zero).
    auto c = dk.encrypt_name(*p);
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, e.name) << *p;
    EXPECT_EQ(e.name.size() % 32, 0u) << *p;  // FSCRYPT_POLICY_FLAGS_PAD_32
  }
  EXPECT_EQ(got, inos_);
}

TEST_F(FscryptLinux, ContentsAndSymlinksDecryptAsLinuxRead) {
  std::map<std::string, nid_t> by_name;
  for (const auto& [ino, n] : inos_) by_name[n] = ino;
  auto sub = vol_->read_inode(by_name.at("sub"));
  ASSERT_TRUE(sub);
  auto sub_es = vol_->read_dir(*sub);
  ASSERT_TRUE(sub_es);
  const fscrypt::InodeKey subk = key_of(sub->ino);
  for (const auto& e : *sub_es)
    if (e.name != "." && e.name != "..") {
      auto p = subk.decrypt_name(e.name);
      ASSERT_TRUE(p);
      by_name["sub/" + *p] = e.ino;
    }
  fscrypt::Keyring ring;
  ASSERT_TRUE(ring.add(test_key()));
  for (const auto& [path, want] : files_) {
    ASSERT_TRUE(by_name.count(path)) << path;
    auto in = vol_->read_inode(by_name.at(path));
    ASSERT_TRUE(in);
    auto k = fscrypt::inode_key(*vol_, *in, ring);
    ASSERT_TRUE(k) << path << ": " << k.error().to_string();
    std::string s(in->size + 10, '\0');
    auto n = fscrypt::read_file(*vol_, *in, *k, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
    ASSERT_TRUE(n) << n.error().to_string();
    EXPECT_EQ(*n, want.first) << path;
    s.resize(*n);
    EXPECT_EQ(f2fstest::sha256_hex(s), want.second) << path;
    // Encrypting the plaintext blocks again gives the stored blocks.
    for (std::uint64_t b = 0; b * 4096 < in->size; ++b) {
      auto a = vol_->map_block(*in, b);
      ASSERT_TRUE(a);
      if (*a == 0) continue;
      std::vector<std::uint8_t> cipher(4096), plain(4096, 0);
      ASSERT_TRUE(read_at(*dev_, std::uint64_t{*a} * 4096, cipher));
      std::memcpy(plain.data(), s.data() + b * 4096, std::min<std::size_t>(4096, s.size() - b * 4096));
      if (s.size() - b * 4096 < 4096) {  // past EOF: the stored block's own plaintext
        std::vector<std::uint8_t> d = cipher;
        ASSERT_TRUE(k->decrypt_block(b, d.data()));
        std::memcpy(plain.data() + (s.size() - b * 4096), d.data() + (s.size() - b * 4096), 4096 - (s.size() - b * 4096));
      }
      ASSERT_TRUE(k->encrypt_block(b, plain.data()));
      EXPECT_TRUE(plain == cipher) << path << " block " << b;
    }
  }
  // Without the key: ENOKEY.
  auto none = fscrypt::inode_key(*vol_, *vol_->read_inode(kSmall), fscrypt::Keyring{});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().sys_errno, ENOKEY);
  for (const auto& [name, target] : links_) {
    auto in = vol_->read_inode(by_name.at(name));
    ASSERT_TRUE(in);
    auto l = vol_->read_link(*in);
    ASSERT_TRUE(l);
    auto t = key_of(in->ino).decrypt_symlink(*l);
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(*t, target) << name;
    auto again = key_of(in->ino).encrypt_symlink(target, 4096 - 2 - 1);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *l) << name;
  }
}

// ---- The writer with the key ----

std::string read_all(Writer& w, nid_t ino) {
  auto st = w.stat(ino);
  EXPECT_TRUE(st);
  std::string s(st ? st->size : 0, '\0');
  auto n = w.read(ino, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size()));
  EXPECT_TRUE(n) << n.error().to_string();
  return n ? s.substr(0, *n) : "READ-ERROR";
}

std::unique_ptr<Writer> mount_with_key(BlockDevice& dev) {
  MountOptions mo;
  mo.fixed_time = 1700000100;
  mo.fscrypt_keys.push_back(test_key());
  auto w = Writer::mount(dev, mo);
  EXPECT_TRUE(w) << (w ? "" : w.error().to_string());
  return w ? std::move(*w) : nullptr;
}

// Linux's files read through the writer with the key: plaintext names,
// contents with the sha256 Linux read, symlink targets as Linux printed.
TEST_F(FscryptLinux, WriterReadsLinuxFilesWithTheKey) {
  vol_.reset();
  auto w = mount_with_key(*dev_);
  ASSERT_TRUE(w);
  auto es = w->readdir("/enc");
  ASSERT_TRUE(es) << es.error().to_string();
  std::map<nid_t, std::string> got;
  for (const auto& e : *es)
    if (e.name != "." && e.name != "..") got[e.ino] = e.name;
  EXPECT_EQ(got, inos_);
  for (const auto& [path, want] : files_) {
    auto ino = w->lookup("/enc/" + path);
    ASSERT_TRUE(ino) << path << ": " << ino.error().to_string();
    const std::string s = read_all(*w, *ino);
    EXPECT_EQ(s.size(), want.first) << path;
    EXPECT_EQ(f2fstest::sha256_hex(s), want.second) << path;
  }
  for (const auto& [name, target] : links_) {
    auto ino = w->lookup("/enc/" + name);
    ASSERT_TRUE(ino);
    auto t = w->readlink(*ino);
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_EQ(*t, target);
  }
  ASSERT_TRUE(w->unmount());
}

// Writing with the key: new files, directories and symlinks in Linux's
// encrypted directory, renames, unlinks, appends, a new policy on an empty
// directory; our reader with fscrypt::read_file() (its own path) and the
// writer after a remount see the same plaintext, without the key the
// names are no-key names; both checkers clean.
TEST_F(FscryptLinux, WriterWritesWithTheKey) {
  vol_.reset();
  std::string big_data;
  for (int i = 0; i < 30000; ++i) big_data += static_cast<char>('a' + (i * 7 + i / 13) % 26);
  {
    auto w = mount_with_key(*dev_);
    ASSERT_TRUE(w);
    auto f = w->create("/enc/new file");
    ASSERT_TRUE(f) << f.error().to_string();
    ASSERT_TRUE(w->write(*f, 0, bytes(big_data)));
    ASSERT_TRUE(w->mkdir("/enc/sub/d2"));
    auto g = w->create("/enc/sub/d2/g");
    ASSERT_TRUE(g);
    ASSERT_TRUE(w->write(*g, 0, bytes("hello")));
    ASSERT_TRUE(w->symlink("sub/d2/g", "/enc/ln"));
    ASSERT_TRUE(w->symlink(std::string(3000, 'T'), "/enc/longln"));  // in a block
    {
      auto rn = w->rename("/enc/small", "/enc/small renamed");
      ASSERT_TRUE(rn) << rn.error().to_string();
    }
    ASSERT_TRUE(w->unlink("/enc/empty"));
    auto big = w->lookup("/enc/big");
    ASSERT_TRUE(big);
    ASSERT_TRUE(w->write(*big, 20000, bytes("tail")));
    ASSERT_TRUE(w->truncate(*big, 19000));
    // A name of another policy (an unencrypted file) cannot come in (EXDEV).
    EXPECT_EQ(err_no(w->link("/plain/a.txt", "/enc/a")), EXDEV);
    EXPECT_EQ(err_no(w->rename("/plain/a.txt", "/enc/a")), EXDEV);
    // A new policy on an empty directory; a non-empty one is refused.
    auto p2 = w->mkdir("/p2");
    ASSERT_TRUE(p2);
    ASSERT_TRUE(w->set_encryption_policy(*p2, test_key(), 16));
    ASSERT_TRUE(w->set_encryption_policy(*p2, test_key(), 16));  // the same again: nothing
    EXPECT_EQ(err_no(w->set_encryption_policy(*p2, test_key(), 32)), EEXIST);
    EXPECT_EQ(err_no(w->set_encryption_policy(w->lookup("/plain").value(), test_key(), 32)), ENOTEMPTY);
    fscrypt::MasterKey other = test_key();
    other[5] ^= 0xff;
    auto p3 = w->mkdir("/p3");
    ASSERT_TRUE(p3);
    EXPECT_EQ(err_no(w->set_encryption_policy(*p3, other, 32)), ENOKEY);
    auto h = w->create("/p2/h");
    ASSERT_TRUE(h);
    ASSERT_TRUE(w->write(*h, 0, bytes(big_data.substr(0, 5000))));
    ASSERT_TRUE(w->unmount());
  }
  check_clean(*dev_, "after writing with the key");
  // Our reader with the key, through fscrypt::read_file().
  {
    auto v = Volume::open(*dev_);
    ASSERT_TRUE(v);
    fscrypt::Keyring ring;
    ASSERT_TRUE(ring.add(test_key()));
    auto enc = (*v)->read_inode(kEnc);
    ASSERT_TRUE(enc);
    auto dk = fscrypt::inode_key(**v, *enc, ring);
    ASSERT_TRUE(dk);
    auto es = (*v)->read_dir(*enc);
    ASSERT_TRUE(es);
    bool found = false;
    for (const auto& e : *es) {
      auto n = dk->decrypt_name(e.name);
      if (!n || *n != "new file") continue;
      found = true;
      EXPECT_EQ(e.hash, dentry_hash(e.name));  // the ciphertext's hash (f2fs_dentry_hash() of the disk name)
      auto in = (*v)->read_inode(e.ino);
      ASSERT_TRUE(in);
      EXPECT_TRUE(in->is_encrypted());
      EXPECT_FALSE(in->has_inline_data());
      auto k = fscrypt::inode_key(**v, *in, ring);
      ASSERT_TRUE(k);
      EXPECT_NE(k->context().nonce, dk->context().nonce);
      std::string s(in->size, '\0');
      ASSERT_TRUE(fscrypt::read_file(**v, *in, *k, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(s.data()), s.size())));
      EXPECT_TRUE(s == big_data);
      // The device holds ciphertext.
      std::string raw(in->size, '\0');
      ASSERT_TRUE((*v)->read(*in, 0, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(raw.data()), raw.size())));
      EXPECT_FALSE(raw == big_data);
    }
    EXPECT_TRUE(found);
  }
  // Remounted with the key: the plaintext; without: no-key names, ENOKEY.
  {
    auto w = mount_with_key(*dev_);
    ASSERT_TRUE(w);
    EXPECT_TRUE(read_all(*w, w->lookup("/enc/new file").value()) == big_data);
    EXPECT_EQ(read_all(*w, w->lookup("/enc/sub/d2/g").value()), "hello");
    EXPECT_EQ(read_all(*w, w->lookup("/p2/h").value()), big_data.substr(0, 5000));
    EXPECT_EQ(w->readlink(w->lookup("/enc/ln").value()).value_or(""), "sub/d2/g");
    EXPECT_EQ(w->readlink(w->lookup("/enc/longln").value()).value_or(""), std::string(3000, 'T'));
    EXPECT_EQ(read_all(*w, w->lookup("/enc/small renamed").value()).size(), 81u);
    EXPECT_EQ(read_all(*w, w->lookup("/enc/big").value()), read_all(*w, w->lookup("/enc/big").value()).substr(0, 19000));
    EXPECT_EQ(err_no(w->lookup("/enc/empty")), ENOENT);
    ASSERT_TRUE(w->unmount());
  }
  {
    auto w = mount_fixed_time(*dev_);
    ASSERT_TRUE(w);
    EXPECT_EQ(err_no(w->lookup("/enc/new file")), ENOENT);
    EXPECT_EQ(err_no(w->create("/p2/x")), ENOKEY);
    ASSERT_TRUE(w->unmount());
  }
  check_clean(*dev_, "after the remounts");
}

// ---- Linux reads what we wrote with the key (tests/writer/encrypt_linux.sh) ----

// "F path size sha256", "L path target", "D path" for every inode under
// `dir` (path relative to the root), sorted: what the guest prints with
// busybox find, stat, sha256sum and readlink.
void manifest_of(Writer& w, const std::string& dir, std::vector<std::string>& out) {
  auto es = w.readdir(dir);
  ASSERT_TRUE(es) << dir << ": " << es.error().to_string();
  for (const auto& e : *es) {
    if (e.name == "." || e.name == "..") continue;
    const std::string p = dir + "/" + e.name;
    if (e.type == dirent_type::dir) {
      out.push_back("D " + p);
      manifest_of(w, p, out);
    } else if (e.type == dirent_type::lnk) {
      auto t = w.readlink(e.ino);
      ASSERT_TRUE(t) << p;
      out.push_back("L " + p + " " + *t);
    } else {
      const std::string d = read_all(w, e.ino);
      out.push_back("F " + p + " " + std::to_string(d.size()) + " " + f2fstest::sha256_hex(d));
    }
  }
}
std::string manifest_text(Writer& w) {
  std::vector<std::string> m;
  manifest_of(w, "/e", m);
  std::sort(m.begin(), m.end());
  std::string t;
  for (const auto& l : m) t += l + "\n";
  return t;
}
std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// Writes WRITER_IMAGE: an encrypt volume with /e (our v2 policy, the test
// key, padding 32): files of 0 to 70,000 bytes, a subdirectory, a 200-byte
// name, a hard link, a renamed file, symlinks inline and in a block; /plain
// unencrypted. WRITER_IMAGE.expect gets the manifest of /e.
TEST(WriterEncryptOracle, DISABLED_WriteImage) {
  const char* img = std::getenv("WRITER_IMAGE");
  ASSERT_TRUE(img) << "set WRITER_IMAGE";
  auto dev = our_mkfs(64ull << 20, feature::encrypt);
  ASSERT_TRUE(dev);
  {
    auto w = mount_with_key(*dev);
    ASSERT_TRUE(w);
    auto e = w->mkdir("/e");
    ASSERT_TRUE(e);
    ASSERT_OK(w->set_encryption_policy(*e, test_key(), 32));
    const std::size_t sizes[] = {0, 1, 100, 4096, 5000, 70000};
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      auto f = w->create("/e/f" + std::to_string(sizes[i]));
      ASSERT_TRUE(f);
      if (sizes[i]) ASSERT_TRUE(w->write(*f, 0, bytes(pattern(sizes[i], static_cast<unsigned>(i)))));
    }
    ASSERT_TRUE(w->mkdir("/e/sub"));
    auto g = w->create("/e/sub/g");
    ASSERT_TRUE(g);
    ASSERT_TRUE(w->write(*g, 0, bytes("inside a subdirectory\n")));
    auto l = w->create("/e/" + std::string(200, 'L'));
    ASSERT_TRUE(l);
    ASSERT_TRUE(w->write(*l, 0, bytes("long name\n")));
    ASSERT_TRUE(w->link("/e/f100", "/e/sub/hard"));
    ASSERT_TRUE(w->rename("/e/f5000", "/e/renamed"));
    ASSERT_TRUE(w->symlink("sub/g", "/e/short-link"));
    ASSERT_TRUE(w->symlink(std::string(3000, 'x'), "/e/block-link"));
    for (int i = 0; i < 60; ++i) ASSERT_TRUE(w->create("/e/sub/many-" + std::to_string(i)));  // past the inline dentries
    ASSERT_TRUE(w->mkdir("/plain"));
    ASSERT_TRUE(w->create("/plain/p"));
    const std::string m = manifest_text(*w);
    ASSERT_TRUE(w->unmount());
    std::ofstream(std::string(img) + ".expect", std::ios::binary) << m;
  }
  check_clean(*dev, "our encrypted image");
  ASSERT_TRUE(save(*dev, img));
}

// After Linux read /e with the key and changed it: the writer with the key
// sees the manifest Linux printed (WRITER_LINUX_MANIFEST), writes more
// (new files, an append to Linux's file, a removal, a rename), and reads it
// back after a remount; both checkers clean. WRITER_IMAGE is written back
// with WRITER_IMAGE.final for Linux to compare.
TEST(WriterEncryptOracle, DISABLED_AfterLinux) {
  const char* img = std::getenv("WRITER_IMAGE");
  const char* theirs = std::getenv("WRITER_LINUX_MANIFEST");
  ASSERT_TRUE(img && theirs) << "set WRITER_IMAGE and WRITER_LINUX_MANIFEST";
  auto dev = f2fstest::load_image(img);
  ASSERT_TRUE(dev);
  std::ifstream in(theirs, std::ios::binary);
  const std::string linux_manifest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(linux_manifest.empty());
  std::string ours;
  {
    auto w = mount_with_key(*dev);
    ASSERT_TRUE(w);
    EXPECT_EQ(manifest_text(*w), linux_manifest) << "our writer with the key differs from what Linux read";
    auto f = w->create("/e/ours-after-linux");
    ASSERT_TRUE(f);
    ASSERT_TRUE(w->write(*f, 0, bytes(pattern(9000, 77))));
    auto lf = w->lookup("/e/linux-file");
    ASSERT_TRUE(lf);
    auto st = w->stat(*lf);
    ASSERT_TRUE(st);
    ASSERT_TRUE(w->write(*lf, st->size, bytes("appended by f2fscore\n")));
    ASSERT_TRUE(w->unlink("/e/f1"));
    ASSERT_TRUE(w->rename("/e/linux-dir/x", "/e/linux-dir/y"));
    ASSERT_TRUE(w->mkdir("/e/linux-dir/ours"));
    ours = manifest_text(*w);
    ASSERT_TRUE(w->unmount());
  }
  check_clean(*dev, "after Linux and our writes");
  {
    auto w = mount_with_key(*dev);
    ASSERT_TRUE(w);
    EXPECT_EQ(manifest_text(*w), ours);
    ASSERT_TRUE(w->unmount());
  }
  ASSERT_TRUE(save(*dev, img));
  std::ofstream(std::string(img) + ".final", std::ios::binary) << ours;
}

}  // namespace
