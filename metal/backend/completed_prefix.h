// How far a queue's command buffers have completed. Metal promises only that command
// buffers *start* in commit order: an independent later one may finish first. So a
// completion advances the watermark only over the contiguous completed prefix and never
// lowers it; the pool and the events trust every buffer at or below it to be done.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

namespace ember::metal {

class CompletedPrefix {
 public:
  // Every sequence number <= load() has completed.
  uint64_t load(std::memory_order order = std::memory_order_acquire) const {
    return prefix_.load(order);
  }
  // Called from completion handlers, in any order, once per sequence number.
  void complete(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t p = prefix_.load(std::memory_order_relaxed);
    if (seq <= p) return;
    if (seq != p + 1) {
      ahead_.insert(seq);  // past a gap: waits for the earlier ones
      return;
    }
    p = seq;
    for (auto it = ahead_.begin(); it != ahead_.end() && *it == p + 1; it = ahead_.erase(it)) ++p;
    prefix_.store(p, std::memory_order_release);
    advanced_.notify_all();
  }
  // Waits at most `slice` for `seq` to complete; true when it has.
  bool wait_for(uint64_t seq, std::chrono::milliseconds slice) {
    std::unique_lock<std::mutex> lock(mu_);
    return advanced_.wait_for(lock, slice, [&] { return load() >= seq; });
  }

 private:
  std::atomic<uint64_t> prefix_{0};
  std::mutex mu_;
  std::condition_variable advanced_;
  std::set<uint64_t> ahead_;  // completed, but after a gap
};

}  // namespace ember::metal
