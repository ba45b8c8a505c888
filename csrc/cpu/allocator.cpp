#include "allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/sysinfo.h>
#endif

namespace ember::cpu {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kSmall = 4096;                 // below this, malloc's own bins are fine
constexpr size_t kMaxCached = size_t(1) << 31;  // keep at most 2 GiB of free blocks
// Blocks from 4 MiB up (numpy's threshold too) are whole 2 MiB huge pages where the OS
// lends them (transparent huge pages in "madvise" mode, as most distributions ship):
// streaming over them is much faster, since the hardware prefetchers stop at page
// boundaries and the TLB covers them.
constexpr size_t kHuge = size_t(4) << 20;
constexpr size_t kHugePage = size_t(2) << 20;

// Size classes: four steps per power of two, so at most 25% is wasted.
size_t size_class(size_t bytes) {
  if (bytes <= kSmall) return (bytes + kAlign - 1) / kAlign * kAlign;
  size_t p = size_t(1) << (63 - __builtin_clzll(bytes - 1));  // largest power of 2 < bytes
  size_t step = p >= kHuge ? std::max(p / 4, kHugePage) : p / 4;
  return (bytes + step - 1) / step * step;
}

// The most memory this machine can ever back: its RAM and swap (Linux). A request past
// it fails at once, as out of memory: where the kernel overcommits, malloc would hand out
// the address space and the process be killed when the pages are touched.
size_t backing_limit() {
#if defined(__linux__)
  static const size_t limit = [] {
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return ~size_t(0);
    return (size_t(info.totalram) + size_t(info.totalswap)) * size_t(info.mem_unit);
  }();
  return limit;
#else
  return ~size_t(0);
#endif
}

void* os_alloc(size_t size) {
  if (size > backing_limit()) return nullptr;
  if (size < kHuge) return std::aligned_alloc(kAlign, size);
  void* p = std::aligned_alloc(kHugePage, size);  // size is a multiple of kHugePage
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) madvise(p, size, MADV_HUGEPAGE);  // a hint: failure leaves ordinary pages
#endif
  return p;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free_blocks;
  size_t cached = 0, in_use = 0, peak = 0;  // large blocks, under mu
  std::atomic<int64_t> small_in_use{0};
  int64_t hits = 0, misses = 0;
};

Cache& cache() {
  static Cache* c = new Cache();  // outlives every tensor freed at exit
  return *c;
}

}  // namespace

void* host_alloc(size_t bytes) {
  size_t size = size_class(bytes == 0 ? kAlign : bytes);
  Cache& c = cache();
  if (size <= kSmall) {  // small blocks: plain malloc (16-byte aligned, fast bins), no lock
    c.small_in_use.fetch_add(int64_t(size), std::memory_order_relaxed);
    return std::malloc(size);
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_blocks.find(size);
    if (it != c.free_blocks.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.cached -= size;
      c.in_use += size;
      c.peak = std::max(c.peak, c.in_use + size_t(std::max<int64_t>(0, c.small_in_use.load())));
      ++c.hits;
      return p;
    }
    ++c.misses;
  }
  void* p = os_alloc(size);
  if (!p) {
    host_empty_cache();  // give cached blocks back and try once more
    p = os_alloc(size);
    if (!p) return nullptr;
  }
  std::lock_guard<std::mutex> lock(c.mu);
  c.in_use += size;
  c.peak = std::max(c.peak, c.in_use + size_t(std::max<int64_t>(0, c.small_in_use.load())));
  return p;
}

void host_free(void* p, size_t bytes) {
  if (!p) return;
  size_t size = size_class(bytes == 0 ? kAlign : bytes);
  Cache& c = cache();
  if (size <= kSmall) {
    c.small_in_use.fetch_sub(int64_t(size), std::memory_order_relaxed);
    std::free(p);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.in_use -= size;
    if (c.cached + size <= kMaxCached) {
      c.free_blocks[size].push_back(p);
      c.cached += size;
      return;
    }
  }
  std::free(p);
}

void host_empty_cache() {
  std::vector<void*> blocks;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto& [size, list] : c.free_blocks) blocks.insert(blocks.end(), list.begin(), list.end());
    c.free_blocks.clear();
    c.cached = 0;
  }
  for (void* p : blocks) std::free(p);
}

std::map<std::string, int64_t> host_memory_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  const int64_t in_use = int64_t(c.in_use) + c.small_in_use.load();
  // small blocks are counted without the lock: the peak covers what is in use now too
  return {{"bytes_in_use", in_use},
          {"bytes_cached", int64_t(c.cached)},
          {"peak_bytes_in_use", std::max(int64_t(c.peak), in_use)},
          {"cache_hits", c.hits},
          {"cache_misses", c.misses}};
}

}  // namespace ember::cpu
