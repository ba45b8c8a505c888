// A small fixed thread pool: large kernels split their range across cores.
#pragma once

#include <cstdint>
#include <functional>

namespace ember::cpu {

// Below this many elements a kernel runs on the calling thread: waking workers costs more.
constexpr int64_t kParallelGrain = 1 << 15;

int num_threads();
void parallel_for_pooled(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Runs fn(lo, hi) over [0, n) split in contiguous chunks of at least `grain` items.
// Runs inline when n is small (without building a std::function: tiny ops stay cheap),
// when called from a worker, or when the pool is busy.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  if (n < 2 * grain) return fn(int64_t(0), n);
  parallel_for_pooled(n, grain, fn);
}

}  // namespace ember::cpu
