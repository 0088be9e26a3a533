// Private to the library: the request bookkeeping both io_uring backends
// share (io/uring/uring_device.cpp through Asio, io/uring/liburing_device.cpp
// on liburing directly): FIFOs of requests through IoRequest::link, the
// requests waiting for a slot and those completed without the kernel, and
// the free list of slot indices.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f2fscore/device.hpp"

namespace f2fscore::detail {

/// A FIFO of requests through IoRequest::link (no allocation).
struct RequestFifo {
  IoRequest* head = nullptr;
  IoRequest* tail = nullptr;

  bool empty() const noexcept { return head == nullptr; }
  void push(IoRequest& req) noexcept {
    req.link = nullptr;
    if (tail != nullptr) tail->link = &req; else head = &req;
    tail = &req;
  }
  /// The oldest request, dequeued; null when empty.
  IoRequest* pop() noexcept {
    IoRequest* r = head;
    if (r != nullptr) {
      head = r->link;
      if (head == nullptr) tail = nullptr;
    }
    return r;
  }
  /// Every queued request completes with `status` and `sys_errno`, moved
  /// to `to` in order.
  void fail_into(RequestFifo& to, Errc status, int sys_errno) noexcept {
    while (IoRequest* r = pop()) {
      r->status = status;
      r->sys_errno = sys_errno;
      to.push(*r);
    }
  }
};

/// Runs the callbacks of the requests in `ready`, each dequeued and
/// counted (in_flight down, completed up) before its callback, which may
/// submit or poll again. The device's ready list: requests completed at
/// submission (errors, synchronous ops).
inline void deliver_ready(RequestFifo& ready, std::size_t& in_flight, std::uint64_t& completed) noexcept {
  while (IoRequest* r = ready.pop()) {
    --in_flight;
    ++completed;
    if (r->on_complete != nullptr) r->on_complete(*r);
  }
}

/// A free list of slot indices 0..n-1 threaded through the slots' own
/// `next_free` (index + 1 of the next free slot; 0 ends the list).
template <typename Slot>
struct SlotFreeList {
  std::uint32_t first = 0;  // index + 1 of the first free slot; 0: none

  template <typename Slots>
  void init(Slots& slots, std::uint32_t n) noexcept {
    first = 0;
    for (std::uint32_t i = n; i > 0; --i) {
      slot(slots, i - 1).next_free = first;
      first = i;
    }
  }
  bool empty() const noexcept { return first == 0; }
  /// A free slot's index (the list must not be empty).
  template <typename Slots>
  std::uint32_t take(Slots& slots) noexcept {
    const std::uint32_t i = first - 1;
    first = slot(slots, i).next_free;
    return i;
  }
  template <typename Slots>
  void put(Slots& slots, std::uint32_t i) noexcept {
    slot(slots, i).next_free = first;
    first = i + 1;
  }

 private:
  // Slots held by value or through a pointer (std::unique_ptr).
  template <typename Slots>
  static Slot& slot(Slots& slots, std::uint32_t i) noexcept {
    if constexpr (requires { *slots[i]; }) return *slots[i];
    else return slots[i];
  }
};

}  // namespace f2fscore::detail
