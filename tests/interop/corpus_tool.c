/* corpus_tool: the corpus builder's helper, built statically on the host by
 * make_corpus.sh and used both on the host (sload source tree) and inside the
 * linux-f2fs guest (passed in with --in). It does what busybox and gtool do
 * not: a manifest of what Linux reads, binary xattr values, fallocate with
 * any mode.
 *
 *   corpus_tool manifest ROOT            print the manifest of the tree ROOT
 *   corpus_tool pwrite FILE OFF LEN SEED write gtool's pattern (same bytes)
 *   corpus_tool setxattr FILE NAME HEX   lsetxattr with a binary value
 *   corpus_tool fallocate FILE MODE OFF LEN   fallocate(2) with a numeric mode
 *                                        (1 KEEP_SIZE, 3 PUNCH_HOLE|KEEP_SIZE,
 *                                        8 COLLAPSE_RANGE, 0x10 ZERO_RANGE,
 *                                        0x20 INSERT_RANGE)
 *   corpus_tool ino PATH                 print lstat's st_ino, or - if absent
 *
 * Manifest: one line per entry, '|'-separated, paths relative to ROOT ("."
 * is ROOT itself), in readdir order, depth first:
 *   T|path|ino=N|mode=0100644|uid=N|gid=N|size=N|nlink=N|mtime=S.NNNNNNNNN|
 *     flags=ioctl:LETTERS or statx:LETTERS|sha256=HEX or -|zsha=HEX or -|
 *     target=HEX or -|rdev=MAJ:MIN or -|xattrs=NAME=HEX;NAME=HEX or -
 * A read or an xattr call that Linux refuses is recorded as ERR:EUCLEAN etc.
 * in place of the value (sha256/zsha, xattrs, or one xattr's value).
 * T: F regular, D directory, L symlink, C/B char/block device, P fifo, S socket.
 * flags letters (FS_IOC_GETFLAGS where the file can be opened: regular files
 * and directories; else statx attributes, which carry only C I A N E V):
 *   C compr  S sync  I immutable  A append  N nodump  T noatime  m nocomp
 *   X index  D dirsync  P projinherit  F casefold  E encrypted  V verity
 * sha256: of the whole content, for regular files up to 64 MiB.
 * zsha: sha256 over (le64 block index, 4096 bytes) for every 4 KiB block of
 * the file that is not all zeroes (the last block padded with zeroes); with
 * the size it determines the content, and it is computed from SEEK_DATA /
 * SEEK_HOLE for large sparse files without reading their holes.
 * Below an encrypted directory (read without its key) names are not
 * readable: every descendant is one line `ENC|ROOT|type=T|flags=statx:...`
 * where ROOT is the top encrypted directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ------------------------------------------------------------ SHA-256 */
typedef struct {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t n;
} sha256_ctx;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256_ctx *c, const uint8_t *p) {
  uint32_t w[64], a, b, d, e, f, g, h, cc;
  for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3]; e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
    h = g; g = f; f = e; e = d + t1; d = cc; cc = b; b = a; a = t1 + t2;
  }
  c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d; c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

static void sha256_init(sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->len = 0;
  c->n = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->len += len;
  if (c->n) {
    size_t k = 64 - c->n < len ? 64 - c->n : len;
    memcpy(c->buf + c->n, p, k);
    c->n += k; p += k; len -= k;
    if (c->n == 64) { sha256_block(c, c->buf); c->n = 0; }
  }
  while (len >= 64) { sha256_block(c, p); p += 64; len -= 64; }
  if (len) { memcpy(c->buf, p, len); c->n = len; }
}

static void sha256_final(sha256_ctx *c, char hex[65]) {
  uint64_t bits = c->len * 8;
  uint8_t pad = 0x80, z = 0, l[8];
  sha256_update(c, &pad, 1);
  while (c->n != 56) sha256_update(c, &z, 1);
  for (int i = 0; i < 8; i++) l[i] = (uint8_t)(bits >> (56 - 8 * i));
  sha256_update(c, l, 8);
  for (int i = 0; i < 8; i++) sprintf(hex + 8 * i, "%08x", c->h[i]);
  hex[64] = 0;
}

/* ------------------------------------------------------------ helpers */
static int failures = 0;

static void warn(const char *what, const char *path) {
  fprintf(stderr, "corpus_tool: %s %s: %s\n", what, path, strerror(errno));
  failures++;
}

/* What Linux refuses (a corrupted xattr area, an unreadable block) is part
 * of what it reads: recorded as ERR:NAME in the field, not a failure. */
static const char *errno_name(int e) {
  static char b[32];
  switch (e) {
    case EIO: return "EIO";
    case EUCLEAN: return "EUCLEAN";
    case EBADMSG: return "EBADMSG";  /* the kernel's EFSBADCRC */
    case ENODATA: return "ENODATA";
    case ENOKEY: return "ENOKEY";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    default: snprintf(b, sizeof b, "errno%d", e); return b;
  }
}

static void put_hex(FILE *o, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(o, "%02x", p[i]);
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static uint8_t pattern_byte(uint64_t seed, uint64_t pos) {  /* as guest-tool.c */
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + (pos >> 3) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29;
  return (uint8_t)(x >> ((pos & 7) * 8));
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

#define BIG_FILE (64ull << 20)
static uint8_t iobuf[1 << 20];

static void zsha_block(sha256_ctx *z, uint64_t index, const uint8_t *blk) {
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(index >> (8 * i));
  sha256_update(z, le, 8);
  sha256_update(z, blk, 4096);
}

/* Hashes the data of [start, end) of fd into z (block-aligned start). */
static int zsha_range(int fd, uint64_t start, uint64_t end, sha256_ctx *z, sha256_ctx *full) {
  uint64_t pos = start;
  while (pos < end) {
    size_t want = end - pos < sizeof iobuf ? (size_t)(end - pos) : sizeof iobuf;
    ssize_t n = pread(fd, iobuf, want, (off_t)pos);
    if (n <= 0) return -1;
    if (full) sha256_update(full, iobuf, (size_t)n);
    /* pad the last partial block with zeroes */
    size_t padded = ((size_t)n + 4095) & ~(size_t)4095;
    memset(iobuf + n, 0, padded - (size_t)n);
    for (size_t b = 0; b < padded; b += 4096)
      if (!all_zero(iobuf + b, 4096)) zsha_block(z, (pos + b) / 4096, iobuf + b);
    pos += (uint64_t)n;
  }
  return 0;
}

static int hash_file(const char *path, uint64_t size, char sha[65], char zsha[65]) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW);
  if (fd < 0) return -1;
  int saved = 0;
  sha256_ctx z, full;
  sha256_init(&z);
  sha256_init(&full);
  int rc = 0;
  if (size <= BIG_FILE) {
    rc = zsha_range(fd, 0, size, &z, &full);
    sha256_final(&full, sha);
  } else {
    strcpy(sha, "-");
    uint64_t pos = 0;
    while (pos < size && rc == 0) {
      off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
      if (d < 0) { if (errno == ENXIO) break; rc = -1; break; }
      off_t h = lseek(fd, d, SEEK_HOLE);
      if (h < 0) { rc = -1; break; }
      uint64_t s = (uint64_t)d & ~4095ull, e = (uint64_t)h < size ? (uint64_t)h : size;
      if (s < pos) s = pos;
      rc = zsha_range(fd, s, e, &z, NULL);
      pos = (e + 4095) & ~4095ull;
    }
  }
  saved = errno;
  sha256_final(&z, zsha);
  close(fd);
  errno = saved;
  return rc;
}

static char type_char(mode_t m) {
  if (S_ISREG(m)) return 'F';
  if (S_ISDIR(m)) return 'D';
  if (S_ISLNK(m)) return 'L';
  if (S_ISCHR(m)) return 'C';
  if (S_ISBLK(m)) return 'B';
  if (S_ISFIFO(m)) return 'P';
  return 'S';
}

static void flag_letters(uint64_t f, char *out) {
  static const struct { uint64_t bit; char c; } map[] = {
      {0x4, 'C'}, {0x8, 'S'}, {0x10, 'I'}, {0x20, 'A'}, {0x40, 'N'}, {0x80, 'T'}, {0x400, 'm'},
      {0x1000, 'X'}, {0x10000, 'D'}, {0x20000000, 'P'}, {0x40000000, 'F'}, {0x800, 'E'}, {0x100000, 'V'}};
  char *p = out;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (f & map[i].bit) *p++ = map[i].c;
  *p = 0;
}

/* "ioctl:..." or "statx:..." */
static void get_flags(const char *path, mode_t mode, int allow_ioctl, char *out) {
  char letters[32];
  if (allow_ioctl && (S_ISREG(mode) || S_ISDIR(mode))) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (S_ISDIR(mode) ? O_DIRECTORY : 0));
    if (fd >= 0) {
      int fl = 0;
      int r = ioctl(fd, FS_IOC_GETFLAGS, &fl);
      close(fd);
      if (r == 0) {
        flag_letters((uint32_t)fl, letters);
        sprintf(out, "ioctl:%s", letters);
        return;
      }
    }
  }
  struct statx sx;
  uint64_t f = 0;
  if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0) {
    const uint64_t a = sx.stx_attributes & sx.stx_attributes_mask;
    if (a & STATX_ATTR_COMPRESSED) f |= 0x4;
    if (a & STATX_ATTR_IMMUTABLE) f |= 0x10;
    if (a & STATX_ATTR_APPEND) f |= 0x20;
    if (a & STATX_ATTR_NODUMP) f |= 0x40;
    if (a & STATX_ATTR_ENCRYPTED) f |= 0x800;
    if (a & STATX_ATTR_VERITY) f |= 0x100000;
  } else {
    warn("statx", path);
  }
  flag_letters(f, letters);
  sprintf(out, "statx:%s", letters);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void print_xattrs(FILE *o, const char *path) {
  static char names[65536];
  static uint8_t val[65536];
  ssize_t n = llistxattr(path, names, sizeof names);
  if (n < 0) { fprintf(o, "ERR:%s", errno_name(errno)); return; }
  char *list[1024];
  int k = 0;
  for (ssize_t i = 0; i < n && k < 1024; i += (ssize_t)strlen(names + i) + 1) list[k++] = names + i;
  if (k == 0) { fputs("-", o); return; }
  qsort(list, (size_t)k, sizeof list[0], cmp_str);
  for (int i = 0; i < k; i++) {
    ssize_t v = lgetxattr(path, list[i], val, sizeof val);
    fprintf(o, "%s%s=", i ? ";" : "", list[i]);
    if (v < 0) fprintf(o, "ERR:%s", errno_name(errno));
    else put_hex(o, val, (size_t)v);
  }
}

static int bad_name(const char *s) { return strchr(s, '|') || strchr(s, '\n'); }

static void walk_encrypted(const char *root_rel, const char *path) {
  DIR *d = opendir(path);
  if (!d) { warn("opendir", path); return; }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *p;
    if (asprintf(&p, "%s/%s", path, e->d_name) < 0) abort();
    struct stat st;
    if (lstat(p, &st)) { warn("lstat", p); free(p); continue; }
    char flags[48];
    get_flags(p, st.st_mode, 0, flags);  /* statx only: without the key files cannot be opened */
    printf("ENC|%s|type=%c|flags=%s\n", root_rel, type_char(st.st_mode), flags);
    if (S_ISDIR(st.st_mode)) walk_encrypted(root_rel, p);
    free(p);
  }
  closedir(d);
}

static void walk(const char *path, const char *rel) {
  struct stat st;
  if (lstat(path, &st)) { warn("lstat", path); return; }
  if (bad_name(rel)) { errno = EINVAL; warn("name with '|' or newline:", rel); return; }
  char flags[48], sha[65] = "-", zsha[65] = "-";
  get_flags(path, st.st_mode, 1, flags);
  if (S_ISREG(st.st_mode) && hash_file(path, (uint64_t)st.st_size, sha, zsha)) {
    snprintf(sha, sizeof sha, "ERR:%s", errno_name(errno));
    strcpy(zsha, sha);
  }
  printf("%c|%s|ino=%llu|mode=0%o|uid=%u|gid=%u|size=%lld|nlink=%lu|mtime=%lld.%09ld|flags=%s|sha256=%s|zsha=%s|target=",
         type_char(st.st_mode), rel, (unsigned long long)st.st_ino, (unsigned)st.st_mode, (unsigned)st.st_uid,
         (unsigned)st.st_gid, (long long)st.st_size, (unsigned long)st.st_nlink, (long long)st.st_mtim.tv_sec,
         st.st_mtim.tv_nsec, flags, sha, zsha);
  if (S_ISLNK(st.st_mode)) {
    static char t[8192];
    ssize_t n = readlink(path, t, sizeof t);
    if (n < 0) { warn("readlink", path); n = 0; }
    put_hex(stdout, (const uint8_t *)t, (size_t)n);
  } else {
    fputs("-", stdout);
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    printf("|rdev=%u:%u|xattrs=", major(st.st_rdev), minor(st.st_rdev));
  else
    fputs("|rdev=-|xattrs=", stdout);
  print_xattrs(stdout, path);
  putchar('\n');
  if (!S_ISDIR(st.st_mode)) return;
  if (strstr(flags, "E")) {  /* encrypted: names are not readable without the key */
    walk_encrypted(rel, path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) { warn("opendir", path); return; }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *p, *r;
    if (asprintf(&p, "%s/%s", path, e->d_name) < 0) abort();
    if (!strcmp(rel, ".")) r = strdup(e->d_name);
    else if (asprintf(&r, "%s/%s", rel, e->d_name) < 0) abort();
    walk(p, r);
    free(p);
    free(r);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: see the top of corpus_tool.c\n"); return 2; }
  const char *op = argv[1];
  if (!strcmp(op, "manifest") && argc == 3) {
    walk(argv[2], ".");
    if (fflush(stdout)) return 1;
    return failures ? 1 : 0;
  }
  if (!strcmp(op, "pwrite") && argc == 6) {
    uint64_t off = strtoull(argv[3], 0, 0), len = strtoull(argv[4], 0, 0), seed = strtoull(argv[5], 0, 0);
    int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
    if (fd < 0) { warn("open", argv[2]); return 1; }
    while (len) {
      size_t n = len < sizeof iobuf ? (size_t)len : sizeof iobuf;
      for (size_t i = 0; i < n; i++) iobuf[i] = pattern_byte(seed, off + i);
      if (pwrite(fd, iobuf, n, (off_t)off) != (ssize_t)n) { warn("pwrite", argv[2]); return 1; }
      off += n; len -= n;
    }
    return close(fd) ? 1 : 0;
  }
  if (!strcmp(op, "setxattr") && argc == 5) {
    size_t n = strlen(argv[4]) / 2;
    for (size_t i = 0; i < n; i++) {
      int hi = hexval(argv[4][2 * i]), lo = hexval(argv[4][2 * i + 1]);
      if (hi < 0 || lo < 0) { fprintf(stderr, "corpus_tool: bad hex value\n"); return 2; }
      iobuf[i] = (uint8_t)(hi << 4 | lo);
    }
    if (lsetxattr(argv[2], argv[3], iobuf, n, 0)) { warn("lsetxattr", argv[2]); return 1; }
    return 0;
  }
  if (!strcmp(op, "fallocate") && argc == 6) {
    int fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
    if (fd < 0) { warn("open", argv[2]); return 1; }
    if (fallocate(fd, (int)strtol(argv[3], 0, 0), strtoll(argv[4], 0, 0), strtoll(argv[5], 0, 0))) {
      warn("fallocate", argv[2]);
      return 1;
    }
    return close(fd) ? 1 : 0;
  }
  if (!strcmp(op, "ino") && argc == 3) {
    struct stat st;
    if (lstat(argv[2], &st)) puts("-");
    else printf("%llu\n", (unsigned long long)st.st_ino);
    return 0;
  }
  fprintf(stderr, "corpus_tool: bad usage (see the top of corpus_tool.c)\n");
  return 2;
}
