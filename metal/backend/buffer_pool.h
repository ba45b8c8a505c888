// Buffers of one Metal Device instance, kept after their storage died and handed out
// again only once the last command buffer that could use them has completed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "../runtime/runtime.h"

namespace ember::metal {

class BufferPool {
 public:
  // The size a request of `bytes` is rounded up to, so that freed buffers fit again.
  static size_t size_class(size_t bytes);

  // A pooled buffer of size_class(bytes) whose last use has completed, or nullptr.
  std::shared_ptr<rt::Buffer> take(size_t bytes, uint64_t completed_seq);
  // Keeps `buffer` until command buffer `last_use_seq` (and all before it) completed.
  void give(std::shared_ptr<rt::Buffer> buffer, uint64_t last_use_seq);
  // Counts a buffer the device allocated fresh (for the statistics).
  void note_allocated(size_t bytes);
  // Drops every pooled buffer; the caller waited for the queue first.
  void clear();
  std::map<std::string, int64_t> stats() const;

 private:
  struct Entry {
    std::shared_ptr<rt::Buffer> buffer;
    uint64_t last_use_seq;
  };
  void note_peak_locked();

  mutable std::mutex mu_;
  std::multimap<size_t, Entry> free_;  // by size class, oldest first within a class
  int64_t pooled_bytes_ = 0, allocated_bytes_ = 0, hits_ = 0, misses_ = 0;
  int64_t peak_in_use_ = 0;
};

}  // namespace ember::metal
