// The daemon's request loop: one receiver thread and a pool of workers.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#endif
#include <fuse_lowlevel.h>

#include <cstddef>
#include <memory>

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
/// Requests are received into buffers of whole pages, each read to 80
/// bytes before a page boundary so that a WRITE's data starts on one
/// (lendable_buffer()); a buffer the writer's cache keeps is received into
/// again only once the cache lets it go.
/// FUSE_DESTROY runs once every worker is idle. SIGHUP, SIGINT and SIGTERM
/// reach the receiver only (the workers block them), so that a signal
/// handler's fuse_session_exit() interrupts its read.
/// Returns 0, or the negative errno of a failed read of the device.
int serve(fuse_session* se, unsigned max_workers);

/// For an operation that serve() runs: the owner of the buffer its request
/// was received into, when `size` bytes at `data` lie in it and the buffer
/// may be lent to the writer (WriteFlags::lend: a WRITE's data starts on a
/// 4 KiB boundary there, and the buffer is received into again only once
/// the last reference to the owner goes). Empty otherwise: with libfuse
/// 3.17 or later (which keeps its receive buffers) or system pages other
/// than 4 KiB (libfuse sizes its first read by them), for data elsewhere,
/// for less than 256 KiB (a buffer stays whole while any block of it is
/// cached), and while 48 buffers are lent already.
std::shared_ptr<const void> lendable_buffer(const void* data, std::size_t size);

}  // namespace f2fscore::fuse
