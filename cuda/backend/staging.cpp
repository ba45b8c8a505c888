// Host <-> device copies through pinned staging buffers: pageable memory (numpy arrays,
// ember CPU tensors) cannot be DMA'd, so large copies go in chunks through two pinned
// buffers per GPU, the host copy of one chunk overlapping the DMA of the other.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "cpu/parallel.h"
#include "cuda_backend.h"

namespace ember::cuda {

namespace {

constexpr size_t kChunk = size_t(32) << 20;
// Below this the driver's own staging costs less than ours.
constexpr size_t kDirect = size_t(1) << 20;

struct Staging {
  std::mutex mu;  // one copy at a time per GPU uses the buffers
  void* buf[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
};

Staging& staging(const CudaDevice& dev) {
  static std::mutex mu;
  static std::map<int, Staging*> per_gpu;  // kept for the process: pinned memory is costly
  std::lock_guard<std::mutex> lock(mu);
  Staging*& s = per_gpu[dev.gpu()];
  if (!s) {
    auto fresh = new Staging;
    for (int i = 0; i < 2; ++i) {
      check(cudaHostAlloc(&fresh->buf[i], kChunk, cudaHostAllocPortable), "cudaHostAlloc", &dev);
      check(cudaEventCreateWithFlags(&fresh->done[i], cudaEventDisableTiming), "cudaEventCreate",
            &dev);
    }
    s = fresh;
  }
  return *s;
}

// memcpy on the host's thread pool: one thread cannot keep up with the DMA engine.
void host_copy(void* dst, const void* src, size_t bytes) {
  constexpr int64_t kGrain = int64_t(1) << 20;
  cpu::parallel_for(int64_t(bytes), kGrain, [&](int64_t lo, int64_t hi) {
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, size_t(hi - lo));
  });
}

bool is_pinned(const void* p) {
  if (is_pinned_host(p)) return true;  // ours (pin_memory()): no driver call
  cudaPointerAttributes attr{};
  bool pinned =
      cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost;
  (void)cudaGetLastError();
  return pinned;
}

// The blocks pin_memory() gave, by start: is_pinned_host() answers without the driver,
// which would otherwise start CUDA in a process that never used it.
std::mutex pinned_mu;
std::map<const char*, size_t>& pinned_blocks() {
  static auto* blocks = new std::map<const char*, size_t>;  // outlives static destructors
  return *blocks;
}

struct SlotPool {
  std::mutex mu;
  std::map<int, std::vector<ReadbackSlot*>> free;  // by GPU; kept for the process
};

SlotPool& slot_pool() {
  static auto* pool = new SlotPool;  // outlives static destructors
  return *pool;
}

}  // namespace

std::shared_ptr<ReadbackSlot> readback_slot(const CudaDevice& dev) {
  SlotPool& pool = slot_pool();
  ReadbackSlot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    auto& mine = pool.free[dev.gpu()];
    if (!mine.empty()) {
      slot = mine.back();
      mine.pop_back();
    }
  }
  if (slot) {
    wait_event(slot->done, "reading back from the GPU", &dev, /*interruptible=*/false);
  } else {
    GpuScope scope(dev.gpu());
    auto fresh = std::make_unique<ReadbackSlot>();
    fresh->gpu = dev.gpu();
    check(cudaHostAlloc(&fresh->host, ReadbackSlot::kBytes,
                        cudaHostAllocPortable | cudaHostAllocMapped),
          "cudaHostAlloc", &dev);
    check(cudaHostGetDevicePointer(&fresh->device, fresh->host, 0), "cudaHostGetDevicePointer",
          &dev);
    check(cudaEventCreateWithFlags(&fresh->done, cudaEventDisableTiming), "cudaEventCreate", &dev);
    slot = fresh.release();
  }
  return std::shared_ptr<ReadbackSlot>(slot, [](ReadbackSlot* s) {
    SlotPool& p = slot_pool();
    std::lock_guard<std::mutex> lock(p.mu);
    p.free[s->gpu].push_back(s);
  });
}

std::shared_ptr<void> pinned_host_alloc(size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  void* p = nullptr;
  cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);  // for every GPU
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(err == cudaErrorMemoryAllocation ? ErrorKind::OutOfMemory : ErrorKind::Device,
                "pin_memory: cudaHostAlloc of " + std::to_string(bytes) +
                    " bytes failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) +
                    "; page-locked memory is limited by the OS: pin less, or use the tensor as "
                    "it is (copies go through ember's staging buffers)")
        .with("bytes", int64_t(bytes));
  }
  {
    std::lock_guard<std::mutex> lock(pinned_mu);
    pinned_blocks()[static_cast<const char*>(p)] = bytes;
  }
  const int64_t pid = getpid();
  return std::shared_ptr<void>(p, [pid](void* q) {
    {
      std::lock_guard<std::mutex> lock(pinned_mu);
      pinned_blocks().erase(static_cast<const char*>(q));
    }
    if (getpid() == pid) (void)cudaFreeHost(q);  // not in a forked child: not its context
    (void)cudaGetLastError();
  });
}

bool is_pinned_host(const void* p) {
  auto* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(pinned_mu);
  auto& blocks = pinned_blocks();
  auto it = blocks.upper_bound(c);
  if (it == blocks.begin()) return false;
  --it;
  return c < it->first + it->second;
}

void copy_host_to_device(const CudaDevice& dev, void* dst, const void* src, size_t bytes) {
  GpuScope scope(dev.gpu());
  cudaStream_t s = dev.stream();
  if (bytes <= kDirect || is_pinned(src)) {
    // The wait for queued work may be long: it may end in Ctrl-C while nothing of `src`
    // is queued yet. The copy's own wait is short and is not interrupted.
    wait_stream(s, "copying to the GPU", &dev);
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync", &dev);
    // The caller may free or change `src` once we return.
    wait_stream(s, "copying to the GPU", &dev, /*interruptible=*/false);
    return;
  }
  Staging& st = staging(dev);
  std::lock_guard<std::mutex> lock(st.mu);
  for (size_t off = 0, i = 0; off < bytes; off += kChunk, i ^= 1) {
    const size_t n = std::min(kChunk, bytes - off);
    wait_event(st.done[i], "copying to the GPU", &dev, false);  // buffer i is free
    host_copy(st.buf[i], static_cast<const char*>(src) + off, n);
    check(cudaMemcpyAsync(static_cast<char*>(dst) + off, st.buf[i], n, cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync", &dev);
    check(cudaEventRecord(st.done[i], s), "cudaEventRecord", &dev);
  }
  // The source has been read; the last DMAs finish in stream order before later work.
}

void copy_device_to_host(const CudaDevice& dev, void* dst, const void* src, size_t bytes) {
  GpuScope scope(dev.gpu());
  cudaStream_t s = dev.stream();
  if (bytes <= ReadbackSlot::kBytes) {  // item(), a count, a few values: one event
    auto slot = readback_slot(dev);
    check(cudaMemcpyAsync(slot->host, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync",
          &dev);
    check(cudaEventRecord(slot->done, s), "cudaEventRecord", &dev);
    wait_event(slot->done, "copying from the GPU", &dev);  // a late DMA lands in the slot
    std::memcpy(dst, slot->host, bytes);
    return;
  }
  // As above: only the wait before anything is copied into `dst` may end in Ctrl-C.
  wait_stream(s, "copying from the GPU", &dev);
  if (bytes <= kDirect || is_pinned(dst)) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync", &dev);
    wait_stream(s, "copying from the GPU", &dev, /*interruptible=*/false);
    return;
  }
  Staging& st = staging(dev);
  std::lock_guard<std::mutex> lock(st.mu);
  auto start = [&](size_t off, int i) {
    const size_t n = std::min(kChunk, bytes - off);
    check(cudaMemcpyAsync(st.buf[i], static_cast<const char*>(src) + off, n, cudaMemcpyDeviceToHost,
                          s),
          "cudaMemcpyAsync", &dev);
    check(cudaEventRecord(st.done[i], s), "cudaEventRecord", &dev);
  };
  start(0, 0);
  for (size_t off = 0, i = 0; off < bytes; off += kChunk, i ^= 1) {
    if (off + kChunk < bytes) start(off + kChunk, int(i ^ 1));  // the next DMA runs meanwhile
    wait_event(st.done[i], "copying from the GPU", &dev, /*interruptible=*/false);
    host_copy(static_cast<char*>(dst) + off, st.buf[i], std::min(kChunk, bytes - off));
  }
}

}  // namespace ember::cuda
