/* verity_measure FILE: prints the fs-verity file digest of FILE as
 * "sha256:HEX" (FS_IOC_MEASURE_VERITY, include/uapi/linux/fsverity.h),
 * as `fsverity measure` does. Built statically for the Linux oracle's
 * guest by verity_linux.sh. Exit 0 printed, 1 failed. */
#include <fcntl.h>
#include <linux/fsverity.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <errno.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: verity_measure FILE\n");
    return 1;
  }
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "verity_measure: open %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  struct {
    struct fsverity_digest d;
    unsigned char buf[64];
  } m;
  memset(&m, 0, sizeof m);
  m.d.digest_size = 64;
  if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m.d) != 0) {
    fprintf(stderr, "verity_measure: FS_IOC_MEASURE_VERITY %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  printf("%s:", m.d.digest_algorithm == FS_VERITY_HASH_ALG_SHA256 ? "sha256" : "other");
  for (unsigned i = 0; i < m.d.digest_size; ++i) printf("%02x", m.d.digest[i]);
  printf("\n");
  close(fd);
  return 0;
}
