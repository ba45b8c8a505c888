// Buffers of one Metal Device instance, kept after their storage died and handed out
// again only once the event of the last work that used them has completed
// (stream-ordered frees).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../runtime/runtime.h"
#include "core/backend.h"

namespace ember::metal {

class BufferPool {
 public:
  // Keeps at most `cap_bytes` of buffers whose last use completed (older work may hold more
  // for a while: see pending_over_cap()).
  explicit BufferPool(int64_t cap_bytes) : cap_bytes_(cap_bytes) {}
  int64_t cap_bytes() const { return cap_bytes_; }
  // The size a request of `bytes` is rounded up to, so that freed buffers fit again.
  static size_t size_class(size_t bytes);

  // A pooled buffer of size_class(bytes) whose last use has completed, or nullptr.
  std::shared_ptr<rt::Buffer> take(size_t bytes);
  // Keeps `buffer` until `last_use` (nullptr: nothing pending) has completed.
  void give(std::shared_ptr<rt::Buffer> buffer, EventPtr last_use);
  // Counts a buffer the device allocated fresh (for the statistics).
  void note_allocated(size_t bytes);
  // Drops every pooled buffer whose last use has completed; the others are still bound
  // by queued work (another thread may queue more while the caller waits).
  void clear();
  // Drops completed buffers, the largest first, until the pool is within its cap.
  void trim();
  // While the pool is over its cap with buffers that queued work still uses: the last use
  // of one of them, to wait for before allocating more; else nullptr.
  EventPtr pending_over_cap() const;
  std::map<std::string, int64_t> stats() const;

 private:
  struct Entry {
    std::shared_ptr<rt::Buffer> buffer;
    EventPtr last_use;
  };
  void note_peak_locked();
  // Moves completed buffers out while over the cap (freed by the caller, after the lock).
  void trim_locked(std::vector<std::shared_ptr<rt::Buffer>>* dropped);

  const int64_t cap_bytes_;
  mutable std::mutex mu_;
  std::multimap<size_t, Entry> free_;  // by size class, oldest first within a class
  int64_t pooled_bytes_ = 0, allocated_bytes_ = 0, hits_ = 0, misses_ = 0;
  int64_t peak_in_use_ = 0;
};

}  // namespace ember::metal
