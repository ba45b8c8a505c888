// The CUDA backend: a Device is a stream on one GPU (shared per ordinal, or its own with
// new_stream=True), with a cuBLAS handle bound to it and memory from the GPU's
// stream-ordered pool. Host logic lives in this folder; kernels in ../ops, one file per
// op family.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/backend.h"

struct cublasContext;

namespace ember::cuda {

class CudaDevice;

// Throws DeviceError for a failed CUDA call: `what` names the call, `dev` the device.
void check(cudaError_t err, const char* what, const BackendDevice* dev = nullptr);

// Waits until `event` (or everything queued on `stream`) has run; a device fault surfaces
// as DeviceError. CUDA has no timed wait, so a long wait polls, and Ctrl-C reaches it
// between polls when `interruptible`.
void wait_event(cudaEvent_t event, const char* what, const BackendDevice* dev,
                bool interruptible = true);
void wait_stream(cudaStream_t stream, const char* what, const BackendDevice* dev,
                 bool interruptible = true);

// Makes `ordinal` the calling thread's current GPU for its scope (runtime calls act on it).
class GpuScope {
 public:
  explicit GpuScope(int ordinal);
  // For destructors: never throws; ok() says whether `ordinal` is current (false once
  // the CUDA runtime is unloading at exit).
  GpuScope(int ordinal, std::nothrow_t);
  bool ok() const { return ok_; }
  ~GpuScope();
  GpuScope(const GpuScope&) = delete;
  GpuScope& operator=(const GpuScope&) = delete;

 private:
  int previous_ = -1;
  bool ok_ = true;
};

// A point in one stream: cudaEventRecord'ed after the work it stands for.
class CudaEvent : public Event {
 public:
  CudaEvent(const CudaDevice& device, cudaEvent_t event);
  ~CudaEvent() override;
  bool completed() const override;
  void wait() const override;  // a device fault surfaces here as DeviceError
  // cudaEventElapsedTime: both events from record_event() (timing enabled).
  double elapsed_ms_since(const Event& start) const override;
  cudaEvent_t handle() const { return event_; }
  const CudaDevice& device() const { return device_; }

 private:
  std::shared_ptr<const BackendDevice> keep_;  // the stream must outlive its event
  const CudaDevice& device_;
  cudaEvent_t event_;
};

class CudaDevice : public BackendDevice {
 public:
  CudaDevice(int ordinal, bool own_stream);
  ~CudaDevice() override;

  std::string kind() const override { return "cuda"; }
  int64_t ordinal() const override { return ordinal_; }
  std::string location() const override;
  std::string name() const override { return name_; }
  // Waits for all work queued on this instance's stream; a device fault surfaces here.
  void synchronize() override;
  bool query() const override;  // cudaStreamQuery
  // The stream waits for `event` (any CUDA instance, any GPU) on the GPU: no host wait.
  void wait_on_device(const Event& event) override;
  EventPtr record_event() override;  // a timing cudaEvent on the stream, no host wait
  // DLPack: memory of another library on this GPU, and the stream protocol (events).
  std::unique_ptr<BackendStorage> wrap_device(void* data, int64_t numel, DType dtype,
                                              std::shared_ptr<void> owner) override;
  intptr_t stream_handle() const override { return reinterpret_cast<intptr_t>(stream_); }
  void order_before_stream(intptr_t stream) override;

  EMBER_BACKEND_DEVICE_ALLOCATION
  std::map<std::string, std::string> info() const override;
  void empty_cache() override;
  std::map<std::string, int64_t> memory_stats() const override;
  std::map<std::string, int64_t> queue_stats() const override;

  int gpu() const { return ordinal_; }
  cudaStream_t stream() const { return stream_; }
  int sm_count() const { return sm_count_; }
  // An event after all work queued so far on the stream.
  std::shared_ptr<const CudaEvent> record(bool timing = false) const;
  // Stream-ordered memory from the GPU's pool: OOM trims the pool, then raises
  // OutOfMemoryError. free() is ordered after the work queued so far; `bytes` is what
  // allocate() was asked for.
  void* allocate(size_t bytes);
  void free(void* ptr, size_t bytes) const;
  // The cuBLAS handle bound to this stream, with the lock that serialises its use.
  cublasContext* blas(std::unique_lock<std::mutex>& lock);
  // DeviceError naming `kernel` for a launch the runtime refused.
  void check_launch(const char* kernel) const;
  // DeviceError for any CUDA call made in a forked child (CUDA does not survive fork).
  void check_process(const char* op) const;
  // For destructors: waits for the stream; never throws, nothing in a forked child.
  void drain_nothrow() const noexcept;
  // DeviceError naming the device and whether its context is still usable.
  [[noreturn]] void raise(cudaError_t err, const std::string& what) const;

 private:
  int ordinal_;
  bool own_stream_;
  int64_t owner_pid_;
  std::string name_;
  int sm_count_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  std::mutex blas_mu_;
  cublasContext* blas_ = nullptr;
  void* blas_workspace_ = nullptr;
  mutable std::atomic<int64_t> host_waits_{0};

  // Blocks of up to kSmallMax bytes freed on this stream, kept by power-of-two class for
  // reuse on it: a cudaMallocAsync and cudaFreeAsync pair costs as much as a launch.
  // Reuse on the same stream is ordered after the last use, as the pool's own would be.
  static constexpr int kSmallClasses = 12;  // 512 B .. 1 MiB
  static constexpr size_t kSmallMin = 512, kSmallMax = kSmallMin << (kSmallClasses - 1);
  static constexpr size_t kSmallCap = size_t(64) << 20;  // cached bytes per instance
  void release_small() const;                            // gives the cached blocks back to the pool
  mutable std::mutex small_mu_;
  mutable std::vector<void*> small_[kSmallClasses];
  mutable size_t small_bytes_ = 0;
};

class CudaStorage : public BackendStorage {
 public:
  CudaStorage(DevicePtr device, DType dtype, int64_t numel);  // uninitialised
  // Memory another library owns (DLPack import): `owner` is dropped, not freed by us,
  // once the work queued on this device so far is done.
  CudaStorage(DevicePtr device, DType dtype, int64_t numel, void* data,
              std::shared_ptr<void> owner);
  ~CudaStorage() override;

  DType dtype() const override { return dtype_; }
  int64_t numel() const override { return numel_; }
  const DevicePtr& device() const override { return device_; }
  CudaDevice& cuda() const { return static_cast<CudaDevice&>(*device_); }
  cudaStream_t stream() const { return cuda().stream(); }
  template <typename T = void>
  T* ptr() const {
    return static_cast<T*>(data_);
  }

  // Stream-ordered: copies after every write queued before it, through pinned staging.
  void to_host(void* dst) const override;
  // An event after all work queued so far on the stream, so after the last write too.
  EventPtr last_write() const override;
  std::unique_ptr<BackendStorage> copy_to_peer(const DevicePtr& dst) const override;
  void* device_memory() const override { return data_; }
  // One pass into a readback slot; the callable waits for its event only.
  IndexBounds index_bounds(const Layout& src) const override;
  bool index_reads_clamp() const override { return true; }
  bool gather_points(const Layout& src, const std::vector<PointIds>& ids, BackendStorage& dst,
                     int64_t* lo, int64_t* hi, bool offsets) const override;
  bool reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                          BackendStorage& dst) const override;
  // One pass (sums about the row's first element, in double), then one thread per output.
  bool reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const override;
  bool reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                        BackendStorage& dst) const override;
  bool reduce_var(const Layout& src, int64_t reduced_dims, double correction, bool root,
                  BackendStorage& dst) const override;
  // topk by radix selection, a block per row (sort.cu); false for few long rows
  // (row_pass), which core sorts with a device-wide sort each.
  bool topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
            BackendStorage& indices) const override;
  EMBER_BACKEND_STORAGE_OPS

 private:
  DevicePtr device_;
  DType dtype_;
  int64_t numel_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;  // set: the memory is another library's
};

inline const CudaStorage& as_cuda(const BackendStorage& s) {
  return static_cast<const CudaStorage&>(s);
}
inline CudaStorage& as_cuda(BackendStorage& s) {
  return static_cast<CudaStorage&>(s);
}

// Host <-> device copies of `bytes` on `dev`'s stream through pinned staging buffers
// (double-buffered, so host copies overlap the DMA); both return once done.
void copy_host_to_device(const CudaDevice& dev, void* dst, const void* src, size_t bytes);
void copy_device_to_host(const CudaDevice& dev, void* dst, const void* src, size_t bytes);

// A few bytes that the GPU writes straight into page-locked, mapped host memory (a copy
// or a kernel's store), the host then waiting for `done` alone: no staging through the
// driver and no wait for the whole stream. A slot goes back to its GPU's pool when the
// last reference is dropped; the next user waits for `done` first, so that a wait cut
// short (Ctrl-C) never lets a late write land in another read.
struct ReadbackSlot {
  static constexpr size_t kBytes = 256;
  void* host = nullptr;    // kBytes, page-locked and mapped
  void* device = nullptr;  // the same memory as the GPU addresses it
  cudaEvent_t done = nullptr;
  int gpu = 0;
};
std::shared_ptr<ReadbackSlot> readback_slot(const CudaDevice& dev);

// Page-locked host memory for Tensor.pin_memory(): copies from and into it are DMA'd
// directly. is_pinned_host: p lies in a block that pinned_host_alloc gave.
std::shared_ptr<void> pinned_host_alloc(size_t bytes);
bool is_pinned_host(const void* p);

// Tests only (ops/testing.cu): queues a kernel that traps; the launch itself succeeds.
void queue_fault(const CudaDevice& dev);
// Tests only: queues one thread that spins for `seconds` (at the GPU's rated clock).
void queue_busy(const CudaDevice& dev, double seconds);

}  // namespace ember::cuda
