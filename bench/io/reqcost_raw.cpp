// The floor for bench/io/reqcost.cpp: the same 4 KiB O_DIRECT random reads
// (or writes)
// driven with liburing directly (one io_uring_submit_and_wait per wake-up,
// no Asio, no BlockDevice), with callgrind's collection toggled around the
// same steady-state window. The difference to f2fscore-reqcost is what the
// pipeline (Asio's scheduler, the device, the layer) costs per request.
//
//   f2fscore-reqcost-raw FILE QD N [read|write]
#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

namespace {

struct Loop {
  io_uring ring{};
  int fd = -1;
  unsigned long long blocks = 0;
  unsigned long long rng = 88172645463325252ull;
  char* bufs = nullptr;
  bool write = false;
};

void queue(Loop& l, unsigned slot) {
  l.rng ^= l.rng << 13;
  l.rng ^= l.rng >> 7;
  l.rng ^= l.rng << 17;
  io_uring_sqe* sqe = io_uring_get_sqe(&l.ring);
  if (l.write)
    io_uring_prep_write(sqe, l.fd, l.bufs + 4096ull * slot, 4096, (l.rng % l.blocks) * 4096);
  else
    io_uring_prep_read(sqe, l.fd, l.bufs + 4096ull * slot, 4096, (l.rng % l.blocks) * 4096);
  io_uring_sqe_set_data64(sqe, slot);
}

unsigned long long run(Loop& l, unsigned qd, unsigned long long n) {
  unsigned long long left = n, done = 0, errors = 0;
  for (unsigned i = 0; i < qd && left > 0; ++i, --left) queue(l, i);
  while (done < n) {
    io_uring_submit_and_wait(&l.ring, 1);
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&l.ring, head, cqe) {
      ++seen;
      ++done;
      if (cqe->res != 4096) ++errors;
      if (left > 0) {
        --left;
        queue(l, static_cast<unsigned>(cqe->user_data));
      }
    }
    io_uring_cq_advance(&l.ring, seen);
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE QD N [read|write]\n", argv[0]);
    return 2;
  }
  Loop l;
  const auto qd = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
  const auto n = std::strtoull(argv[3], nullptr, 10);
  l.write = argc > 4 && std::strcmp(argv[4], "write") == 0;
  l.fd = ::open(argv[1], (l.write ? O_RDWR : O_RDONLY) | O_DIRECT);
  struct stat st {};
  if (l.fd < 0 || ::fstat(l.fd, &st) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  l.blocks = static_cast<unsigned long long>(st.st_size) / 4096;
  l.bufs = static_cast<char*>(std::aligned_alloc(4096, 4096ull * qd));
  std::memset(l.bufs, 0x5a, 4096ull * qd);
  io_uring_params p{};
  p.flags = IORING_SETUP_COOP_TASKRUN;
  if (io_uring_queue_init_params(64 > 2 * qd ? 64 : 2 * qd, &l.ring, &p) != 0) {
    std::fprintf(stderr, "io_uring refused\n");
    return 1;
  }
  run(l, qd, 2000 + 4ull * qd);
  CALLGRIND_TOGGLE_COLLECT;
  const unsigned long long errors = run(l, qd, n);
  CALLGRIND_TOGGLE_COLLECT;
  std::printf("reqcost-raw: liburing, %s qd=%u n=%llu errors=%llu\n", l.write ? "write" : "read", qd, n, errors);
  io_uring_queue_exit(&l.ring);
  return errors == 0 ? 0 : 1;
}
