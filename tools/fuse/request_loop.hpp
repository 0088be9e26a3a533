// The daemon's request loop: one receiver thread and a pool of workers.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#endif
#include <fuse_lowlevel.h>

namespace f2fscore::fuse {

/// Serves `se` until it exits (unmount, or fuse_session_exit() from a
/// signal handler). The calling thread receives every request from the
/// FUSE device and runs most itself; a READ or WRITE of more than 16 KiB
/// goes to a worker, up to `max_workers` of them, so that the kernel's
/// copies of the data (into the next WRITE's request, out of a READ's
/// reply) overlap the writer's work on another request. Every other
/// request holds the writer's lock for nearly all of its time, so a second
/// thread would gain nothing on it; and one thread waiting on the device
/// is what keeps a program making one call after another fast: the kernel
/// wakes the waiter of longest standing, and with several waiters
/// (libfuse's multi-threaded loop) each call is served by a thread that
/// has slept since the one before last, a wakeup across CPUs per request
/// (about a third of the time of a SQLite transaction here).
/// FUSE_DESTROY runs once every worker is idle. SIGHUP, SIGINT and SIGTERM
/// reach the receiver only (the workers block them), so that a signal
/// handler's fuse_session_exit() interrupts its read.
/// Returns 0, or the negative errno of a failed read of the device.
int serve(fuse_session* se, unsigned max_workers);

}  // namespace f2fscore::fuse
