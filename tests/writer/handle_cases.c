/* handle_cases.c: runs the calls of a case script (handle_cases.txt) as
 * system calls in directory DIR and prints one line per call: its number,
 * the script line, the return value and errno name, and what the call
 * read (data, stat fields, directory entries, xattr values and names).
 * Run by handle_linux.sh in the Linux oracle; handle_cases.hpp runs the
 * same script through f2fscore's handle API; the two outputs must be
 * equal. The script's language is described in handle_cases.txt.
 * usage: handle_cases SCRIPT DIR */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *ename(int e) {
  switch (e) {
#define E(x) case x: return #x;
    E(EPERM) E(ENOENT) E(EIO) E(EBADF) E(EACCES) E(EEXIST) E(EXDEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(EFBIG)
    E(ENOSPC) E(EROFS) E(EMLINK) E(ERANGE) E(ENAMETOOLONG) E(ENOTEMPTY) E(ELOOP) E(ENODATA) E(EOPNOTSUPP)
    E(ENXIO) E(EBUSY) E(E2BIG) E(ETXTBSY) E(ESPIPE) E(ENODEV) E(EDQUOT)
#undef E
    default: return "E?";
  }
}

#define MAXTOK 16
static char *tok[MAXTOK];
static int ntok;

/* {c*N} in a token: N copies of c. '' is the empty string. */
static char *expand(const char *t) {
  if (!strcmp(t, "''")) return strdup("");
  size_t cap = 64, n = 0;
  char *o = malloc(cap);
  for (const char *p = t; *p;) {
    char c;
    long k = 1;
    if (p[0] == '{' && p[1] && p[2] == '*' && strchr(p, '}')) {
      c = p[1];
      k = strtol(p + 3, NULL, 10);
      p = strchr(p, '}') + 1;
    } else {
      c = *p++;
    }
    while (k-- > 0) {
      if (n + 2 > cap) o = realloc(o, cap *= 2);
      o[n++] = c;
    }
  }
  o[n] = 0;
  return o;
}

static int hexval(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c - 'A' + 10; }

/* A value token: hex:... or text; returns the length. */
static size_t value(const char *t, char **out) {
  if (!strncmp(t, "hex:", 4)) {
    size_t n = strlen(t + 4) / 2;
    char *v = malloc(n + 1);
    for (size_t i = 0; i < n; ++i) v[i] = (char)(hexval(t[4 + 2 * i]) << 4 | hexval(t[5 + 2 * i]));
    *out = v;
    return n;
  }
  *out = expand(t);
  return strlen(*out);
}

static int oflags(const char *s) {
  int f = 0;
  char *c = strdup(s), *save = NULL;
  for (char *p = strtok_r(c, "|", &save); p; p = strtok_r(NULL, "|", &save)) {
#define F(n) if (!strcmp(p, #n)) f |= O_##n;
    F(RDONLY) F(WRONLY) F(RDWR) F(ACCMODE) F(CREAT) F(EXCL) F(TRUNC) F(APPEND) F(DIRECTORY) F(NOFOLLOW) F(NONBLOCK)
    F(DSYNC) F(SYNC)
#undef F
  }
  free(c);
  return f;
}

static int fmode(const char *s) {
  int f = 0;
  char *c = strdup(s), *save = NULL;
  for (char *p = strtok_r(c, "|", &save); p; p = strtok_r(NULL, "|", &save)) {
    if (!strcmp(p, "KEEP")) f |= 0x01;
    if (!strcmp(p, "PUNCH")) f |= 0x02;
    if (!strcmp(p, "COLLAPSE")) f |= 0x08;
    if (!strcmp(p, "ZERO")) f |= 0x10;
    if (!strcmp(p, "INSERT")) f |= 0x20;
  }
  free(c);
  return f;
}

static int whence(const char *s) {
  return !strcmp(s, "SET") ? SEEK_SET : !strcmp(s, "CUR") ? SEEK_CUR : !strcmp(s, "END") ? SEEK_END : !strcmp(s, "DATA") ? SEEK_DATA : SEEK_HOLE;
}

static int xflags(const char *s) { return !strcmp(s, "CREATE") ? XATTR_CREATE : !strcmp(s, "REPLACE") ? XATTR_REPLACE : 0; }

/* Bytes as text: printable ASCII as is, others \xNN; at most 64, then (+N). */
static void put_bytes(char *out, size_t cap, const unsigned char *b, long n) {
  size_t o = 0;
  out[o++] = '"';
  for (long i = 0; i < n && i < 64 && o + 8 < cap; ++i) {
    if (b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\') out[o++] = (char)b[i];
    else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", b[i]);
  }
  out[o++] = '"';
  out[o] = 0;
  if (n > 64) snprintf(out + o, cap - o, "(+%ld)", n - 64);
}

static const char *type_name(mode_t m) {
  return S_ISREG(m) ? "reg" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "lnk" : S_ISFIFO(m) ? "fifo" : S_ISCHR(m) ? "chr" : S_ISBLK(m) ? "blk" : "sock";
}

static void stat_text(char *out, size_t cap, const struct stat *st) {
  if (S_ISDIR(st->st_mode))
    snprintf(out, cap, "[%s %04o nlink %lu uid %u gid %u]", type_name(st->st_mode), st->st_mode & 07777,
             (unsigned long)st->st_nlink, st->st_uid, st->st_gid);
  else
    snprintf(out, cap, "[%s %04o nlink %lu uid %u gid %u size %lld]", type_name(st->st_mode), st->st_mode & 07777,
             (unsigned long)st->st_nlink, st->st_uid, st->st_gid, (long long)st->st_size);
}

struct ent {
  char name[260];
  unsigned type;
  int ino_ok;
};
static int ent_cmp(const void *a, const void *b) { return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name); }

/* getdents64 of fd: entries sorted by name, "name:d_type:=" when d_ino is
 * the inode lstat() finds under `dir` ("!=" otherwise). */
static long dents(int fd, const char *dir, char *out, size_t cap) {
  static char buf[65536];
  struct ent *es = NULL;
  int n = 0;
  for (;;) {
    long r = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (r < 0) return -1;
    if (r == 0) break;
    for (long o = 0; o < r;) {
      uint64_t ino;
      unsigned short reclen;
      memcpy(&ino, buf + o, 8);
      memcpy(&reclen, buf + o + 16, 2);
      const char *name = buf + o + 19;
      es = realloc(es, sizeof *es * (size_t)(n + 1));
      snprintf(es[n].name, sizeof es[n].name, "%s", name);
      es[n].type = (unsigned char)buf[o + 18];
      char p[600];
      snprintf(p, sizeof p, "%s/%s", dir, name);
      struct stat st;
      es[n].ino_ok = lstat(p, &st) == 0 && st.st_ino == ino;
      ++n;
      o += reclen;
    }
  }
  qsort(es, (size_t)n, sizeof *es, ent_cmp);
  size_t o = 0;
  out[o++] = '[';
  for (int i = 0; i < n && o + 300 < cap; ++i)
    o += (size_t)snprintf(out + o, cap - o, "%s%s:%u:%s", i ? " " : "", es[i].name, es[i].type, es[i].ino_ok ? "=" : "!=");
  out[o++] = ']';
  out[o] = 0;
  free(es);
  return n;
}

static void names_text(char *out, size_t cap, const char *list, long n) {
  size_t o = 0;
  out[o++] = '[';
  for (long i = 0; i < n && o + 300 < cap; i += (long)strlen(list + i) + 1)
    o += (size_t)snprintf(out + o, cap - o, "%s%s", o > 1 ? "," : "", list + i);
  out[o++] = ']';
  out[o] = 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: handle_cases SCRIPT DIR\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "r");
  if (!in || chdir(argv[2]) != 0) {
    perror("handle_cases");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  umask(0);
  int fds[10];
  char *fd_path[10] = {0};
  for (int i = 0; i < 10; ++i) fds[i] = -1;
  static char line[20000], extra[100000];
  static unsigned char buf[70000];
  int ncase = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0] || line[0] == '#') continue;
    char copy[20000];
    snprintf(copy, sizeof copy, "%s", line);
    ntok = 0;
    for (char *save = NULL, *p = strtok_r(copy, " ", &save); p && ntok < MAXTOK; p = strtok_r(NULL, " ", &save)) tok[ntok++] = p;
    const char *op = tok[0];
    int h = ntok > 1 ? atoi(tok[1]) % 10 : 0;
    long r = 0;
    extra[0] = 0;
    errno = 0;
    char *a = ntok > 1 ? expand(tok[1]) : strdup(""), *b = ntok > 2 ? expand(tok[2]) : strdup("");
    if (!strcmp(op, "open")) {
      char *p = expand(tok[2]);
      int fd = open(p, oflags(tok[3]), ntok > 4 ? (mode_t)strtol(tok[4], NULL, 8) : 0644);
      r = fd < 0 ? -1 : 0;
      if (fd >= 0) fds[h] = fd, free(fd_path[h]), fd_path[h] = p;
      else free(p);
    } else if (!strcmp(op, "close")) {
      r = close(fds[h]);
      fds[h] = -1;
    } else if (!strcmp(op, "read") || !strcmp(op, "pread")) {
      long n = atol(tok[2]);
      r = op[0] == 'r' ? read(fds[h], buf, (size_t)n) : pread(fds[h], buf, (size_t)n, atol(tok[3]));
      if (r >= 0) put_bytes(extra, sizeof extra, buf, r);
    } else if (!strcmp(op, "write") || !strcmp(op, "pwrite")) {
      char *v;
      size_t n = value(tok[2], &v);
      r = op[0] == 'w' ? write(fds[h], v, n) : pwrite(fds[h], v, n, atol(tok[3]));
      free(v);
    } else if (!strcmp(op, "seek")) {
      r = lseek(fds[h], atol(tok[2]), whence(tok[3]));
    } else if (!strcmp(op, "fsync")) {
      r = fsync(fds[h]);
    } else if (!strcmp(op, "fdatasync")) {
      r = fdatasync(fds[h]);
    } else if (!strcmp(op, "ftruncate")) {
      r = ftruncate(fds[h], atol(tok[2]));
    } else if (!strcmp(op, "fallocate")) {
      r = fallocate(fds[h], fmode(tok[2]), atol(tok[3]), atol(tok[4]));
    } else if (!strcmp(op, "fstat") || !strcmp(op, "stat") || !strcmp(op, "lstat")) {
      struct stat st;
      r = op[0] == 'f' ? fstat(fds[h], &st) : op[0] == 's' ? stat(a, &st) : lstat(a, &st);
      if (r == 0) stat_text(extra, sizeof extra, &st);
    } else if (!strcmp(op, "truncate")) {
      r = truncate(a, atol(tok[2]));
    } else if (!strcmp(op, "chmod")) {
      r = chmod(a, (mode_t)strtol(tok[2], NULL, 8));
    } else if (!strcmp(op, "fchmod")) {
      r = fchmod(fds[h], (mode_t)strtol(tok[2], NULL, 8));
    } else if (!strcmp(op, "mkdir")) {
      r = mkdir(a, (mode_t)strtol(tok[2], NULL, 8));
    } else if (!strcmp(op, "mkfifo")) {
      r = mkfifo(a, (mode_t)strtol(tok[2], NULL, 8));
    } else if (!strcmp(op, "rmdir")) {
      r = rmdir(a);
    } else if (!strcmp(op, "unlink")) {
      r = unlink(a);
    } else if (!strcmp(op, "rename")) {
      r = rename(a, b);
    } else if (!strcmp(op, "link")) {
      r = link(a, b);
    } else if (!strcmp(op, "symlink")) {
      r = symlink(a, b);
    } else if (!strcmp(op, "readdir")) {
      int fd = open(a, O_RDONLY);
      if (fd < 0) r = -1;
      else {
        r = dents(fd, a, extra, sizeof extra);
        int e = errno;
        close(fd);
        errno = e;
        if (r > 0) r = 0;
      }
    } else if (!strcmp(op, "freaddir")) {
      r = dents(fds[h], fd_path[h] ? fd_path[h] : ".", extra, sizeof extra);
      if (r > 0) r = 0;
    } else if (!strcmp(op, "getxattr") || !strcmp(op, "lgetxattr") || !strcmp(op, "fgetxattr")) {
      r = op[0] == 'g' ? getxattr(a, b, buf, sizeof buf) : op[0] == 'l' ? lgetxattr(a, b, buf, sizeof buf) : fgetxattr(fds[h], b, buf, sizeof buf);
      if (r >= 0) put_bytes(extra, sizeof extra, buf, r);
    } else if (!strcmp(op, "setxattr") || !strcmp(op, "lsetxattr") || !strcmp(op, "fsetxattr")) {
      char *v;
      size_t n = value(tok[3], &v);
      int fl = xflags(tok[4]);
      r = op[0] == 's' ? setxattr(a, b, v, n, fl) : op[0] == 'l' ? lsetxattr(a, b, v, n, fl) : fsetxattr(fds[h], b, v, n, fl);
      free(v);
    } else if (!strcmp(op, "listxattr") || !strcmp(op, "llistxattr") || !strcmp(op, "flistxattr")) {
      r = op[0] == 'l' && op[1] == 'i' ? listxattr(a, (char *)buf, sizeof buf)
          : op[0] == 'l'              ? llistxattr(a, (char *)buf, sizeof buf)
                                      : flistxattr(fds[h], (char *)buf, sizeof buf);
      if (r >= 0) names_text(extra, sizeof extra, (const char *)buf, r), r = 0;
    } else if (!strcmp(op, "removexattr") || !strcmp(op, "lremovexattr") || !strcmp(op, "fremovexattr")) {
      r = op[0] == 'r' ? removexattr(a, b) : op[0] == 'l' ? lremovexattr(a, b) : fremovexattr(fds[h], b);
    } else {
      fprintf(stderr, "handle_cases: unknown call: %s\n", line);
      return 2;
    }
    const int e = errno;
    free(a), free(b);
    printf("%03d %s: %ld %s%s%s\n", ++ncase, line, r < 0 ? -1L : r, r < 0 ? ename(e) : "0", extra[0] ? " " : "", extra);
  }
  printf("=== %d cases\n", ncase);
  return 0;
}
