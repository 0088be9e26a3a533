/* compress_ioctl CMD FILE: one f2fs compression ioctl on FILE
 * (include/uapi/linux/f2fs.h), for the Linux oracle's guest, whose busybox
 * has no f2fs_io. Built statically by writer_compress_linux.sh.
 *   get        F2FS_IOC_GET_COMPRESS_BLOCKS: prints i_compr_blocks
 *   release    F2FS_IOC_RELEASE_COMPRESS_BLOCKS: prints the blocks released
 *   reserve    F2FS_IOC_RESERVE_COMPRESS_BLOCKS: prints the blocks reserved
 *   compress   F2FS_IOC_COMPRESS_FILE (FILE opened read-write)
 *   decompress F2FS_IOC_DECOMPRESS_FILE (FILE opened read-write)
 *   getopt     F2FS_IOC_GET_COMPRESS_OPTION: prints "ALGORITHM LOG"
 *   setopt ALGORITHM LOG  F2FS_IOC_SET_COMPRESS_OPTION (FILE read-write;
 *              FILE comes last: compress_ioctl setopt 2 3 FILE)
 * get, release, reserve and getopt open FILE read-only, as f2fs_io does.
 * Exit 0 with the number (or "ok") printed; 1 with "errno N" printed when
 * the ioctl fails; 2 usage or open failure. */
#include <errno.h>
#include <fcntl.h>
#include <linux/f2fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc == 5 && !strcmp(argv[1], "setopt")) {
    struct f2fs_comp_option o;
    o.algorithm = (__u8)atoi(argv[2]);
    o.log_cluster_size = (__u8)atoi(argv[3]);
    int fd = open(argv[4], O_RDWR);
    if (fd < 0) {
      fprintf(stderr, "compress_ioctl: open %s: %s\n", argv[4], strerror(errno));
      return 2;
    }
    if (ioctl(fd, F2FS_IOC_SET_COMPRESS_OPTION, &o) != 0) {
      printf("errno %d\n", errno);
      close(fd);
      return 1;
    }
    printf("ok\n");
    close(fd);
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "getopt")) {
    struct f2fs_comp_option o;
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) {
      fprintf(stderr, "compress_ioctl: open %s: %s\n", argv[2], strerror(errno));
      return 2;
    }
    if (ioctl(fd, F2FS_IOC_GET_COMPRESS_OPTION, &o) != 0) {
      printf("errno %d\n", errno);
      close(fd);
      return 1;
    }
    printf("%u %u\n", o.algorithm, o.log_cluster_size);
    close(fd);
    return 0;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: compress_ioctl get|release|reserve|compress|decompress|getopt FILE | setopt ALG LOG FILE\n");
    return 2;
  }
  const char* cmd = argv[1];
  unsigned long req = 0;
  int with_count = 1, flags = O_RDONLY;
  if (!strcmp(cmd, "get")) req = F2FS_IOC_GET_COMPRESS_BLOCKS;
  else if (!strcmp(cmd, "release")) req = F2FS_IOC_RELEASE_COMPRESS_BLOCKS;
  else if (!strcmp(cmd, "reserve")) req = F2FS_IOC_RESERVE_COMPRESS_BLOCKS;
  else if (!strcmp(cmd, "compress")) req = F2FS_IOC_COMPRESS_FILE, with_count = 0, flags = O_RDWR;
  else if (!strcmp(cmd, "decompress")) req = F2FS_IOC_DECOMPRESS_FILE, with_count = 0, flags = O_RDWR;
  else {
    fprintf(stderr, "compress_ioctl: unknown command %s\n", cmd);
    return 2;
  }
  int fd = open(argv[2], flags);
  if (fd < 0) {
    fprintf(stderr, "compress_ioctl: open %s: %s\n", argv[2], strerror(errno));
    return 2;
  }
  uint64_t n = 0;
  int r = with_count ? ioctl(fd, req, &n) : ioctl(fd, req);
  if (r != 0) {
    printf("errno %d\n", errno);
    close(fd);
    return 1;
  }
  if (with_count) printf("%llu\n", (unsigned long long)n);
  else printf("ok\n");
  close(fd);
  return 0;
}
