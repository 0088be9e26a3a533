/* oracle_workload: the acceptance workloads of docs/stats.md, as system
 * calls, for the Linux oracle (built static, run in the guest). The same
 * workloads run through our engine with f2fscore-io fs --workload ...
 * (libf2fscore/src/workload.cpp); both sides issue the same writes, of the
 * same sizes, in the same order.
 *
 *   oracle_workload seqwrite DIR            create DIR/seq, 64 writes of 1 MiB, close, sync()
 *   oracle_workload dbsetup DIR             create DIR/db: 256 writes of 4 KiB, fsync, close
 *   oracle_workload overwrite DIR N         N x (pwrite 4 KiB at block (i*97)%256 of DIR/db, fdatasync)
 *   oracle_workload smallfiles DIR N SIZE   create DIR/fI (I < N) with SIZE bytes each, sync(),
 *                                           unlink them all, sync()
 * Exit: 0 done, 1 a call failed, 2 usage. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned char buf[1 << 20];

static int die(const char *what, const char *path) {
  perror(what);
  fprintf(stderr, "oracle_workload: %s %s failed\n", what, path);
  return 1;
}

static void fill(size_t n, unsigned long long seed) {
  for (size_t i = 0; i < n; ++i) buf[i] = (unsigned char)(seed * 131 + i * 7 + 1);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *op = argv[1], *dir = argv[2];
  char path[4096];
  if (!strcmp(op, "seqwrite")) {
    snprintf(path, sizeof path, "%s/seq", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return die("open", path);
    for (int i = 0; i < 64; ++i) {
      fill(1 << 20, (unsigned long long)i);
      if (write(fd, buf, 1 << 20) != 1 << 20) return die("write", path);
    }
    if (close(fd)) return die("close", path);
    sync();
    return 0;
  }
  if (!strcmp(op, "dbsetup")) {
    snprintf(path, sizeof path, "%s/db", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return die("open", path);
    for (int i = 0; i < 256; ++i) {
      fill(4096, (unsigned long long)i);
      if (write(fd, buf, 4096) != 4096) return die("write", path);
    }
    if (fsync(fd)) return die("fsync", path);
    return close(fd) ? die("close", path) : 0;
  }
  if (!strcmp(op, "overwrite") && argc == 4) {
    snprintf(path, sizeof path, "%s/db", dir);
    long n = atol(argv[3]);
    int fd = open(path, O_WRONLY);
    if (fd < 0) return die("open", path);
    for (long i = 0; i < n; ++i) {
      fill(4096, (unsigned long long)(1000 + i));
      if (pwrite(fd, buf, 4096, (off_t)((i * 97) % 256) * 4096) != 4096) return die("pwrite", path);
      if (fdatasync(fd)) return die("fdatasync", path);
    }
    return close(fd) ? die("close", path) : 0;
  }
  if (!strcmp(op, "smallfiles") && argc == 5) {
    long n = atol(argv[3]), size = atol(argv[4]);
    if (size < 0 || size > (long)sizeof buf) return 2;
    for (long i = 0; i < n; ++i) {
      snprintf(path, sizeof path, "%s/f%ld", dir, i);
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) return die("open", path);
      fill((size_t)size, (unsigned long long)i);
      if (size && write(fd, buf, (size_t)size) != size) return die("write", path);
      if (close(fd)) return die("close", path);
    }
    sync();
    for (long i = 0; i < n; ++i) {
      snprintf(path, sizeof path, "%s/f%ld", dir, i);
      if (unlink(path)) return die("unlink", path);
    }
    sync();
    return 0;
  }
  return 2;
}
