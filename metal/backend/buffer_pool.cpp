#include "buffer_pool.h"

#include <algorithm>
#include <vector>

namespace ember::metal {

size_t BufferPool::size_class(size_t bytes) {
  if (bytes <= 256) return 256;
  if (bytes >= (size_t(64) << 20)) return (bytes + (1 << 20) - 1) & ~size_t((1 << 20) - 1);
  size_t c = 256;
  while (c < bytes) c <<= 1;  // powers of two below 64 MiB: few classes, at most 2x waste
  return c;
}

std::shared_ptr<rt::Buffer> BufferPool::take(size_t bytes) {
  const size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto [lo, hi] = free_.equal_range(cls);
  for (auto it = lo; it != hi; ++it) {
    const EventPtr& last_use = it->second.last_use;
    if (last_use && !last_use->completed()) continue;  // queued work still uses it
    auto buffer = std::move(it->second.buffer);
    free_.erase(it);
    pooled_bytes_ -= int64_t(cls);
    ++hits_;
    note_peak_locked();
    return buffer;
  }
  ++misses_;
  return nullptr;
}

void BufferPool::give(std::shared_ptr<rt::Buffer> buffer, EventPtr last_use) {
  const size_t cls = buffer->length();
  std::vector<std::shared_ptr<rt::Buffer>> dropped;  // freed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  free_.emplace(cls, Entry{std::move(buffer), std::move(last_use)});
  pooled_bytes_ += int64_t(cls);
  trim_locked(&dropped);
}

void BufferPool::trim() {
  std::vector<std::shared_ptr<rt::Buffer>> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  trim_locked(&dropped);
}

void BufferPool::trim_locked(std::vector<std::shared_ptr<rt::Buffer>>* dropped) {
  // Largest first: the fewest buffers to free, and small classes are the most reused.
  for (auto it = free_.end(); pooled_bytes_ > cap_bytes_ && it != free_.begin();) {
    --it;
    const EventPtr& last_use = it->second.last_use;
    if (last_use && !last_use->completed()) continue;
    allocated_bytes_ -= int64_t(it->first);
    pooled_bytes_ -= int64_t(it->first);
    dropped->push_back(std::move(it->second.buffer));
    it = free_.erase(it);
  }
}

EventPtr BufferPool::pending_over_cap() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (pooled_bytes_ <= cap_bytes_) return nullptr;
  for (auto it = free_.rbegin(); it != free_.rend(); ++it)
    if (it->second.last_use && !it->second.last_use->completed()) return it->second.last_use;
  return nullptr;
}

void BufferPool::note_allocated(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  allocated_bytes_ += int64_t(bytes);
  note_peak_locked();
}

void BufferPool::note_peak_locked() {
  peak_in_use_ = std::max(peak_in_use_, allocated_bytes_ - pooled_bytes_);
}

void BufferPool::clear() {
  std::vector<std::shared_ptr<rt::Buffer>> dropped;  // freed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = free_.begin(); it != free_.end();) {
    const EventPtr& last_use = it->second.last_use;
    if (last_use && !last_use->completed()) {
      ++it;
      continue;
    }
    allocated_bytes_ -= int64_t(it->first);
    pooled_bytes_ -= int64_t(it->first);
    dropped.push_back(std::move(it->second.buffer));
    it = free_.erase(it);
  }
}

std::map<std::string, int64_t> BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  // The same keys as the CPU device's statistics.
  return {{"bytes_in_use", allocated_bytes_ - pooled_bytes_},
          {"bytes_cached", pooled_bytes_},
          {"peak_bytes_in_use", peak_in_use_},
          {"cache_hits", hits_},
          {"cache_misses", misses_}};
}

}  // namespace ember::metal
