// The blocking hooks (blocking.h): set once by the bindings, read by any thread.
#include "blocking.h"

#include <atomic>

namespace ember {

namespace {
std::atomic<void (*)()> interrupt_check{nullptr};
std::atomic<void (*)(void (*)(void*), void*)> releaser{nullptr};
}  // namespace

void set_blocking_hooks(const BlockingHooks& hooks) {
  interrupt_check.store(hooks.check_interrupt);
  releaser.store(hooks.run_released);
}

void check_interrupt() {
  if (auto check = interrupt_check.load()) check();
}

void run_released_impl(void (*fn)(void*), void* arg) {
  if (auto release = releaser.load()) return release(fn, arg);
  fn(arg);
}

}  // namespace ember
