#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::cpu {

namespace {

thread_local bool in_worker = false;

class Pool {
 public:
  explicit Pool(int n) {
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return int(workers_.size()) + 1; }

  // One job at a time; a caller that finds the pool busy runs its job alone.
  bool try_run(int chunks, const std::function<void(int)>& job) {
    std::unique_lock<std::mutex> busy(job_mu_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      chunks_ = chunks;
      next_.store(1);
      pending_ = chunks - 1;
      ++generation_;
    }
    wake_.notify_all();
    job(0);
    drain();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void drain() {
    for (int c; (c = next_.fetch_add(1)) < chunks_;) {
      (*job_)(c);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_all();
    }
  }
  void loop(int) {
    in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, job_mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int chunks_ = 0, pending_ = 0;
  std::atomic<int> next_{0};
  uint64_t generation_ = 0;
  bool stop_ = false;
};

int configured_threads() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

Pool& pool() {
  // Leaked on purpose: joining threads during interpreter shutdown can deadlock.
  static Pool* p = new Pool(configured_threads());
  return *p;
}

}  // namespace

int num_threads() {
  return pool().size();
}

void parallel_for_pooled(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
  int threads = num_threads();
  int64_t chunks = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
  if (chunks <= 1 || in_worker) {
    fn(0, n);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  auto job = [&](int c) {
    int64_t lo = c * per, hi = std::min(n, lo + per);
    if (lo < hi) fn(lo, hi);
  };
  if (!pool().try_run(int(chunks), job)) fn(0, n);
}

}  // namespace ember::cpu
