// A small fixed thread pool: large kernels split their range across cores.
#pragma once

#include <cstdint>
#include <functional>

namespace ember::cpu {

// Below this many elements a kernel runs on the calling thread: handing work over costs more.
constexpr int64_t kParallelGrain = 1 << 15;
// What one read at an unpredictable position (a gather's, an id's row) costs, in elements
// streamed: a cache miss that no prefetcher hides. Kernels that read so count it in their
// work per item, so that a gather of 64K elements from a large table, ~20 times a copy of
// as many, wakes the pool's workers as a copy of ~500K elements would.
constexpr int64_t kRandomReadCost = 8;

// Threads the pool uses, the caller included: EMBER_NUM_THREADS, else the CPUs this process
// may run on (its affinity mask, so taskset and cgroup cpusets count).
int num_threads();
void parallel_for_pooled(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Runs fn(lo, hi) over [0, n) split in contiguous chunks of at least `grain` items. Size
// the grain as kParallelGrain / (elements of work per item), at least 1: a grain of 1
// says each item is a long job by itself.
// Runs inline when n is small (without building a std::function: tiny ops stay cheap),
// when called from a worker, or when the pool is busy. The caller works through the
// chunks too, so a worker that is slow to wake never makes a call slower than running
// it alone by more than the cost of the hand-off.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  if (n < 2 * grain) return fn(int64_t(0), n);
  parallel_for_pooled(n, grain, fn);
}

}  // namespace ember::cpu
