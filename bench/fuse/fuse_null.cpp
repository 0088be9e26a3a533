// f2fscore-fuse-null: the FUSE transport alone, for bench/fuse_bench.sh's
// ceiling lines. A root directory that holds one regular file, "f", whose
// writes are answered at once: with --copy after copying the data into a
// 16 MiB ring (what any daemon with a cache of its own does once per byte),
// without it after nothing. The mount is set up as f2fscore-fuse sets up its
// own (max_write 1 MiB, the same request loop), so that the sequential-write
// line of the benchmark run against it measures what the kernel's FUSE
// transport and one copy cost on this machine, with no file system behind.
// Reads return zeroes; nothing is stored.
//
// usage: f2fscore-fuse-null [--copy] MOUNTPOINT   (foreground; fusermount3 -u ends it)
#include "request_loop.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <initializer_list>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr fuse_ino_t kFile = 2;
bool g_copy = false;
std::vector<char> g_ring(16u << 20);
std::size_t g_pos = 0;
std::uint64_t g_size = 0;

void fill(fuse_ino_t ino, struct stat* st) {
  *st = {};
  st->st_ino = ino;
  if (ino == FUSE_ROOT_ID) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
  } else {
    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(g_size);
  }
}

void op_init(void*, fuse_conn_info* conn) {
  conn->max_write = 1u << 20;
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_AUTO_INVAL_DATA);
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent != FUSE_ROOT_ID || std::strcmp(name, "f") != 0) return (void)fuse_reply_err(req, ENOENT);
  fuse_entry_param e{};
  e.ino = kFile;
  e.attr_timeout = e.entry_timeout = 1.0;
  fill(kFile, &e.attr);
  fuse_reply_entry(req, &e);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st;
  fill(ino, &st);
  fuse_reply_attr(req, &st, 1.0);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  if (ino == kFile && (to_set & FUSE_SET_ATTR_SIZE)) g_size = static_cast<std::uint64_t>(attr->st_size);
  struct stat st;
  fill(ino, &st);
  fuse_reply_attr(req, &st, 1.0);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t, fuse_file_info* fi) {
  if (parent != FUSE_ROOT_ID || std::strcmp(name, "f") != 0) return (void)fuse_reply_err(req, EACCES);
  fuse_entry_param e{};
  e.ino = kFile;
  e.attr_timeout = e.entry_timeout = 1.0;
  fill(kFile, &e.attr);
  fi->keep_cache = 1;
  fi->noflush = 1;
  fuse_reply_create(req, &e, fi);
}

void op_open(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  fi->keep_cache = 1;
  fi->noflush = 1;
  fuse_reply_open(req, fi);
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info*) {
  static std::vector<char> zeroes(1u << 20);
  const std::uint64_t o = static_cast<std::uint64_t>(off);
  const std::size_t n = o >= g_size ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>({std::uint64_t{size}, g_size - o, std::uint64_t{zeroes.size()}}));
  fuse_reply_buf(req, zeroes.data(), n);
}

void op_write(fuse_req_t req, fuse_ino_t, const char* data, size_t size, off_t off, fuse_file_info*) {
  if (g_copy) {
    if (g_pos + size > g_ring.size()) g_pos = 0;
    std::memcpy(g_ring.data() + g_pos, data, std::min(size, g_ring.size()));
    g_pos += size;
  }
  g_size = std::max<std::uint64_t>(g_size, static_cast<std::uint64_t>(off) + size);
  fuse_reply_write(req, size);
}

void op_ok(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }
void op_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) { fuse_reply_err(req, 0); }

}  // namespace

int main(int argc, char** argv) {
  std::string mnt;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--copy") == 0) g_copy = true;
    else if (mnt.empty()) mnt = argv[i];
    else mnt.clear(), i = argc;
  }
  if (mnt.empty()) {
    std::fprintf(stderr, "usage: f2fscore-fuse-null [--copy] MOUNTPOINT\n");
    return 2;
  }
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.getattr = op_getattr;
  ops.setattr = op_setattr;
  ops.create = op_create;
  ops.open = op_open;
  ops.read = op_read;
  ops.write = op_write;
  ops.flush = op_ok;
  ops.release = op_ok;
  ops.fsync = op_fsync;
  char prog[] = "f2fscore-fuse-null";
  char* fargv[] = {prog, nullptr};
  fuse_args args = FUSE_ARGS_INIT(1, fargv);
  fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, nullptr);
  if (se == nullptr) return 1;
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, mnt.c_str()) == 0) {
      rc = f2fscore::fuse::serve(se, 7) == 0 ? 0 : 1;
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}
