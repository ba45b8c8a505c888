// How the host blocks. The bindings install two hooks, so that core and backends stay
// free of Python: a long wait notices Ctrl-C, and a thread blocked on a lock lets the
// interpreter run (else the waiter, which needs the interpreter to see Ctrl-C, could
// deadlock with it).
#pragma once

#include <chrono>

namespace ember {

struct BlockingHooks {
  // Throws (Python's KeyboardInterrupt, say) when an interrupt is pending; else returns.
  void (*check_interrupt)() = nullptr;
  // Runs fn(arg) with the calling thread's hold on the interpreter released, if it has one.
  void (*run_released)(void (*fn)(void*), void* arg) = nullptr;
};

void set_blocking_hooks(const BlockingHooks& hooks);
void check_interrupt();  // no hook: never interrupts

// How often a long host wait wakes to call check_interrupt().
constexpr std::chrono::milliseconds kInterruptPoll{20};

// Waits until `wait_slice(kInterruptPoll)` returns true (done), checking for an interrupt
// between slices when `interruptible`.
template <typename WaitSlice>
void wait_in_slices(WaitSlice&& wait_slice, bool interruptible) {
  while (!wait_slice(kInterruptPoll))
    if (interruptible) check_interrupt();
}

void run_released_impl(void (*fn)(void*), void* arg);
// Runs `fn` (something that may block, e.g. taking a lock) with the interpreter released.
template <typename Fn>
void run_released(Fn&& fn) {
  run_released_impl([](void* f) { (*static_cast<Fn*>(f))(); }, &fn);
}

}  // namespace ember
