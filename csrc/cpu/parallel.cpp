#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

thread_local bool in_worker = false;
std::atomic<bool> forked_child{false};  // a fork()ed child has the pool but not its threads

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// A worker woken by the caller can be queued on the caller's CPU while another CPU is idle
// (guest kernels on VMs take idle vCPUs for busy ones); both threads then time-share one
// core for milliseconds, as the scheduler leaves recently run threads where they are. Such
// a worker moves itself: a mask without that CPU, then the whole mask again (which does not
// move it back).
void step_off(int cpu) {
#if defined(__linux__)
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) return;
  if (!CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return;
  cpu_set_t others = mask;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) == 0) sched_setaffinity(0, sizeof mask, &mask);
#else
  (void)cpu;
#endif
}

// The pool runs one job at a time. A job is `chunks` calls of one function; whoever is
// free (the caller or a worker) claims the next chunk from one atomic ticket:
//   bits 32..63 job number, 16..31 chunk count, 0..15 next unclaimed chunk.
// Claims are compare-exchanges, so a worker holding a stale ticket can never take a chunk
// of a later job by mistake. Idle workers spin for a short while (back-to-back kernels
// then start at once), then sleep on a condition variable, woken only if someone sleeps.
class Pool {
 public:
  static constexpr int kMaxChunks = 0xffff;

  explicit Pool(int n) : size_(n) {
    for (int i = 1; i < n; ++i) std::thread([this] { loop(); }).detach();
  }
  int size() const { return size_; }

  // A caller that finds the pool busy (another thread's job) runs its job alone. Workers
  // still spinning join in any case; sleeping ones are woken only if `wake`.
  bool try_run(int chunks, const std::function<void(int)>& job, bool wake) {
    std::unique_lock<std::mutex> busy(job_mu_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    job_.store(&job, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
    running_.store(true, std::memory_order_relaxed);
    const uint64_t gen = (ticket_.load(std::memory_order_relaxed) >> 32) + 1;
    ticket_.store((gen << 32) | (uint64_t(chunks) << 16), std::memory_order_seq_cst);
    if (wake && sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(sleep_mu_);
      wake_.notify_all();
    }
    in_worker = true;  // a parallel_for inside the job runs inline, as on the workers
    run_chunks();
    in_worker = false;
    // Chunks that workers claimed are running now: wait for them briefly.
    for (int i = 0; done_.load(std::memory_order_acquire) < chunks; ++i) {
      if (i < 4096)
        cpu_relax();
      else
        std::this_thread::yield();
    }
    job_.store(nullptr, std::memory_order_relaxed);
    running_.store(false, std::memory_order_relaxed);
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  static bool claimable(uint64_t t) { return (t & 0xffff) < ((t >> 16) & 0xffff); }

  // Claims and runs chunks of the current job until none is left.
  void run_chunks() {
    uint64_t t = ticket_.load(std::memory_order_acquire);
    while (claimable(t)) {
      if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                         std::memory_order_acquire))
        continue;
      // The job cannot finish before this chunk does, so its function is still alive.
      const std::function<void(int)>* job = job_.load(std::memory_order_relaxed);
      try {
        (*job)(int(t & 0xffff));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu_);
        if (!error_) error_ = std::current_exception();
      }
      done_.fetch_add(1, std::memory_order_release);
      t = ticket_.load(std::memory_order_acquire);
    }
  }

  void loop() {
    in_worker = true;
    using Clock = std::chrono::steady_clock;
    for (;;) {
      if (claimable(ticket_.load(std::memory_order_acquire))) {
        step_off(caller_cpu_.load(std::memory_order_relaxed));
        run_chunks();
      }
      // Spin while the caller is still in its job and ~50 µs after: kernels called back to
      // back from Python are a few µs apart, and a sleeping worker, once woken, may wait
      // milliseconds for a CPU.
      constexpr auto kLinger = std::chrono::microseconds(50);
      auto until = Clock::now() + kLinger;
      bool work = false;
      for (int i = 1; !work; ++i) {
        cpu_relax();
        work = claimable(ticket_.load(std::memory_order_relaxed));
        if (work || (i & 63) != 0) continue;
        const auto now = Clock::now();
        if (running_.load(std::memory_order_relaxed))
          until = now + kLinger;
        else if (now > until)
          break;
      }
      if (work) continue;
      std::unique_lock<std::mutex> lock(sleep_mu_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      wake_.wait(lock, [&] { return claimable(ticket_.load(std::memory_order_seq_cst)); });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  const int size_;
  std::mutex job_mu_;
  std::atomic<uint64_t> ticket_{0};
  std::atomic<const std::function<void(int)>*> job_{nullptr};
  std::atomic<int> done_{0};
  std::atomic<int> caller_cpu_{-1};
  std::atomic<bool> running_{false};  // a caller is inside try_run
  std::mutex error_mu_;
  std::exception_ptr error_;
  std::mutex sleep_mu_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
};

int available_cpus() {
#if defined(__linux__)
  // The affinity mask, as os.sched_getaffinity: taskset and cgroup cpusets shrink it.
  for (int ncpu = 1024; ncpu <= (1 << 16); ncpu *= 4) {
    cpu_set_t* set = CPU_ALLOC(size_t(ncpu));
    if (!set) break;
    const size_t bytes = CPU_ALLOC_SIZE(size_t(ncpu));
    CPU_ZERO_S(bytes, set);
    const bool ok = sched_getaffinity(0, bytes, set) == 0;
    const int count = ok ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (ok) return std::max(1, count);
    // EINVAL: the kernel's mask is larger than ours; try a larger one
  }
#endif
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int configured_threads() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return std::min(n, 1024);
  }
  return std::min(available_cpus(), 1024);
}

Pool& pool() {
  // Leaked on purpose (its threads are detached): joining threads during interpreter
  // shutdown can deadlock.
  static Pool* p = [] {
#if defined(__linux__)
    pthread_atfork(nullptr, nullptr, [] { forked_child.store(true); });
#endif
    return new Pool(configured_threads());
  }();
  return *p;
}

}  // namespace

int num_threads() {
  return pool().size();
}

void parallel_for_pooled(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
  const int threads = num_threads();
  // Many chunks per thread, so that whoever is free takes the next one: a worker that
  // wakes late (or a core busy with another process) leaves its share to the others, and
  // the threads finish within a small chunk of each other. A chunk costs ~0.1 µs.
  int64_t chunks = std::min<int64_t>(
      {int64_t(threads) * 16, n / std::max<int64_t>(grain, 1), int64_t(Pool::kMaxChunks)});
  if (chunks <= 1 || threads <= 1 || in_worker || forked_child.load(std::memory_order_relaxed)) {
    fn(0, n);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  if (per >= 4096) per = (per + 63) / 64 * 64;  // whole cache lines per chunk (of any dtype)
  chunks = (n + per - 1) / per;
  auto job = [&](int c) {
    int64_t lo = c * per, hi = std::min(n, lo + per);
    if (lo < hi) fn(lo, hi);
  };
  // Waking a sleeping worker costs the caller a system call and the worker tens of µs
  // before it starts (more on a busy machine): worth it for long jobs only. A grain of 1
  // means items that are each a long job already (callers size the grain as
  // kParallelGrain / work per item, at least 1): two of them are worth a worker.
  const bool wake = n >= 8 * grain || (grain == 1 && n >= 2);
  if (!pool().try_run(int(chunks), job, wake)) fn(0, n);
}

}  // namespace ember::cpu
