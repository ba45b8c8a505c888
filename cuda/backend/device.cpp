// CudaDevice: one stream per instance, memory from the GPU's stream-ordered pool, a cuBLAS
// handle bound to the stream; errors, events and registration with core.
#include <cublas_v2.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <thread>

#include "core/blocking.h"
#include "core/error.h"
#include "cuda_backend.h"

namespace ember::cuda {

namespace {

// Errors after which the context is lost: every later call fails the same way.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

std::string error_text(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

std::string fork_advice(int64_t owner_pid) {
  return "opened by process " + std::to_string(owner_pid) +
         ", and CUDA does not survive fork(). Start worker processes with the 'spawn' start "
         "method (multiprocessing.get_context(\"spawn\")) and open the device there";
}

constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;  // cuBLAS's advice for Hopper

}  // namespace

void check(cudaError_t err, const char* what, const BackendDevice* dev) {
  if (err == cudaSuccess) return;
  if (dev) static_cast<const CudaDevice*>(dev)->raise(err, what);
  (void)cudaGetLastError();
  throw Error(ErrorKind::Device, std::string("CUDA: ") + what + " failed: " + error_text(err));
}

GpuScope::GpuScope(int ordinal) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ == ordinal) {
    previous_ = -1;
    return;
  }
  check(cudaSetDevice(ordinal), "cudaSetDevice");
}

GpuScope::GpuScope(int ordinal, std::nothrow_t) {
  ok_ = cudaGetDevice(&previous_) == cudaSuccess &&
        (previous_ == ordinal || cudaSetDevice(ordinal) == cudaSuccess);
  if (previous_ == ordinal || !ok_) previous_ = -1;
  (void)cudaGetLastError();
}

GpuScope::~GpuScope() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

// ---- host waits

namespace {

// Polls `query` (cudaEventQuery, cudaStreamQuery) until it stops answering NotReady:
// spins for the first millisecond, as most waits are shorter, then sleeps in 100 us
// steps so that a long wait leaves the core to others.
template <typename Query>
cudaError_t poll_until_done(Query query, bool interruptible) {
  using Clock = std::chrono::steady_clock;
  cudaError_t err = query();
  const auto start = Clock::now();
  auto next_check = start + kInterruptPoll;
  while (err == cudaErrorNotReady) {
    const auto now = Clock::now();
    if (now - start < std::chrono::milliseconds(1))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (interruptible && now >= next_check) {
      check_interrupt();  // throws KeyboardInterrupt; the queued work runs on regardless
      next_check = now + kInterruptPoll;
    }
    err = query();
  }
  return err;
}

}  // namespace

void wait_event(cudaEvent_t event, const char* what, const BackendDevice* dev, bool interruptible) {
  check(poll_until_done([&] { return cudaEventQuery(event); }, interruptible), what, dev);
}

void wait_stream(cudaStream_t stream, const char* what, const BackendDevice* dev,
                 bool interruptible) {
  check(poll_until_done([&] { return cudaStreamQuery(stream); }, interruptible), what, dev);
}

// ---- events

CudaEvent::CudaEvent(const CudaDevice& device, cudaEvent_t event)
    : keep_(device.shared_from_this()), device_(device), event_(event) {}

CudaEvent::~CudaEvent() {
  (void)cudaEventDestroy(event_);
}

bool CudaEvent::completed() const {
  cudaError_t err = cudaEventQuery(event_);
  if (err == cudaErrorNotReady) return false;
  check(err, "cudaEventQuery", &device_);
  return true;
}

void CudaEvent::wait() const {
  wait_event(event_, "waiting for queued work", &device_);
}

double CudaEvent::elapsed_ms_since(const Event& start) const {
  auto* s = dynamic_cast<const CudaEvent*>(&start);
  if (!s) return Event::elapsed_ms_since(start);
  float ms = 0;
  check(cudaEventElapsedTime(&ms, s->handle(), event_), "cudaEventElapsedTime", &device_);
  return ms;
}

// ---- the device

CudaDevice::CudaDevice(int ordinal, bool own_stream)
    : ordinal_(ordinal), own_stream_(own_stream), owner_pid_(getpid()) {
  GpuScope scope(ordinal);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  name_ = prop.name;
  sm_count_ = prop.multiProcessorCount;
  // Non-blocking: the stream never waits for the legacy default stream of other libraries.
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaDeviceGetDefaultMemPool(&pool_, ordinal), "cudaDeviceGetDefaultMemPool");
  // Keep freed memory cached in the pool across synchronisations (PyTorch's behaviour);
  // empty_cache() and out-of-memory trim it.
  uint64_t keep_all = std::numeric_limits<uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all),
        "cudaMemPoolSetAttribute");
  // Memory freed on one stream may go to another only once the free completed: the
  // pool must not make one instance's stream wait for another's (they are unordered).
  int no = 0;
  check(cudaMemPoolSetAttribute(pool_, cudaMemPoolReuseAllowInternalDependencies, &no),
        "cudaMemPoolSetAttribute");
}

CudaDevice::~CudaDevice() {
  if (getpid() != owner_pid_) return;  // a forked child: the parent's handles are not ours
  GpuScope scope(ordinal_, std::nothrow);
  if (!scope.ok()) return;  // the runtime is unloading at exit: it frees everything itself
  release_small();
  (void)cudaStreamSynchronize(stream_);  // frees queued on it must run before it goes
  if (blas_) cublasDestroy(blas_);
  if (blas_workspace_) (void)cudaFreeAsync(blas_workspace_, stream_);
  (void)cudaStreamSynchronize(stream_);
  (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

std::string CudaDevice::location() const {
  char pci[32] = "?";
  (void)cudaDeviceGetPCIBusId(pci, sizeof pci, ordinal_);
  return "cuda:" + std::to_string(ordinal_) + " (GPU '" + name_ + "', PCI " + pci + ", " +
         (own_stream_ ? "its own stream" : "the shared stream") + ")";
}

void CudaDevice::raise(cudaError_t err, const std::string& what) const {
  (void)cudaGetLastError();  // clears a non-sticky error so later calls work
  std::string state = is_sticky(err)
                          ? " The GPU context is lost: every later CUDA call in this process "
                            "fails. Restart the process."
                          : " The device is still usable.";
  throw Error(ErrorKind::Device,
              describe() + ": " + what + " failed: " + error_text(err) + "." + state)
      .with("device", std::const_pointer_cast<BackendDevice>(shared_from_this()));
}

void CudaDevice::check_process(const char* op) const {
  if (getpid() != owner_pid_)
    throw Error(ErrorKind::Device, describe() + ": cannot " + op +
                                       " in this process: the device was " +
                                       fork_advice(owner_pid_) + ".")
        .with("device", std::const_pointer_cast<BackendDevice>(shared_from_this()));
}

void CudaDevice::drain_nothrow() const noexcept {
  if (getpid() != owner_pid_) return;
  GpuScope scope(ordinal_, std::nothrow);
  if (scope.ok()) (void)cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();
}

// ---- DLPack: another library's memory and streams

std::unique_ptr<BackendStorage> CudaDevice::wrap_device(void* data, int64_t numel, DType dtype,
                                                        std::shared_ptr<void> owner) {
  check_process("import memory");
  return std::make_unique<CudaStorage>(shared_from_this(), dtype, numel, data, std::move(owner));
}

namespace {

// DLPack's integers for the consumer's stream: 1 the legacy default, 2 per-thread.
cudaStream_t dlpack_stream(intptr_t stream) {
  if (stream == 1) return cudaStreamLegacy;
  if (stream == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(stream);
}

}  // namespace

void CudaDevice::order_before_stream(intptr_t stream) {
  check_process("share memory");
  auto ev = record();
  GpuScope scope(ordinal_);
  check(cudaStreamWaitEvent(dlpack_stream(stream), ev->handle(), 0),
        "making the consumer's stream wait (DLPack)", this);
}

void CudaDevice::check_launch(const char* kernel) const {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) raise(err, std::string("launching kernel ") + kernel);
}

void CudaDevice::synchronize() {
  check_process("synchronize");
  ++host_waits_;
  wait_stream(stream_, "waiting for queued work", this);
}

bool CudaDevice::query() const {
  GpuScope scope(ordinal_);
  cudaError_t err = cudaStreamQuery(stream_);
  if (err == cudaErrorNotReady) return false;
  check(err, "cudaStreamQuery", this);
  return true;
}

void CudaDevice::wait_on_device(const Event& event) {
  const auto& e = static_cast<const CudaEvent&>(event);
  GpuScope scope(ordinal_);
  check(cudaStreamWaitEvent(stream_, e.handle(), 0), "cudaStreamWaitEvent", this);
}

std::shared_ptr<const CudaEvent> CudaDevice::record(bool timing) const {
  GpuScope scope(ordinal_);
  cudaEvent_t ev;
  check(cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault : cudaEventDisableTiming),
        "cudaEventCreate", this);
  cudaError_t err = cudaEventRecord(ev, stream_);
  if (err != cudaSuccess) {
    (void)cudaEventDestroy(ev);
    raise(err, "cudaEventRecord");
  }
  return std::make_shared<CudaEvent>(*this, ev);
}

EventPtr CudaDevice::record_event() {
  return record(/*timing=*/true);
}

namespace {

int small_class(size_t bytes, size_t min) {
  int c = 0;
  for (size_t size = min; size < bytes; size <<= 1) ++c;
  return c;
}

}  // namespace

void* CudaDevice::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  check_process("allocate memory");
  if (bytes <= kSmallMax) {
    const int c = small_class(bytes, kSmallMin);
    bytes = kSmallMin << c;  // the whole class, so that any request of it may reuse it
    std::lock_guard<std::mutex> lock(small_mu_);
    if (!small_[c].empty()) {
      void* p = small_[c].back();  // the most recent: likely still in L2
      small_[c].pop_back();
      small_bytes_ -= bytes;
      return p;
    }
  }
  GpuScope scope(ordinal_);
  void* p = nullptr;
  cudaError_t err = cudaMallocAsync(&p, bytes, stream_);
  if (err == cudaErrorMemoryAllocation) {  // give cached memory back, then once more
    (void)cudaGetLastError();
    release_small();
    check(cudaDeviceSynchronize(), "waiting before trimming the pool", this);
    check(cudaMemPoolTrimTo(pool_, 0), "cudaMemPoolTrimTo", this);
    err = cudaMallocAsync(&p, bytes, stream_);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw_out_of_memory(shared_from_this(), int64_t(bytes));
    }
  }
  check(err, "cudaMallocAsync", this);
  return p;
}

void CudaDevice::free(void* ptr, size_t bytes) const {
  if (!ptr || getpid() != owner_pid_) return;
  if (bytes <= kSmallMax) {
    const int c = small_class(bytes, kSmallMin);
    std::lock_guard<std::mutex> lock(small_mu_);
    if (small_bytes_ + (kSmallMin << c) <= kSmallCap) {
      small_[c].push_back(ptr);
      small_bytes_ += kSmallMin << c;
      return;
    }
  }
  GpuScope scope(ordinal_, std::nothrow);
  if (scope.ok()) (void)cudaFreeAsync(ptr, stream_);
  (void)cudaGetLastError();  // after the work queued so far on this stream
}

void CudaDevice::release_small() const {
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(small_mu_);
    for (auto& list : small_) {
      blocks.insert(blocks.end(), list.begin(), list.end());
      list.clear();
    }
    small_bytes_ = 0;
  }
  GpuScope scope(ordinal_, std::nothrow);
  if (scope.ok())
    for (void* p : blocks) (void)cudaFreeAsync(p, stream_);
  (void)cudaGetLastError();
}

cublasContext* CudaDevice::blas(std::unique_lock<std::mutex>& lock) {
  lock = std::unique_lock<std::mutex>(blas_mu_);
  if (blas_) return blas_;
  GpuScope scope(ordinal_);
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::Device, describe() + ": cannot create a cuBLAS handle")
        .with("device", shared_from_this());
  cublasSetStream(h, stream_);
  // The workspace comes from the pool, on this stream, so it is reused in stream order.
  blas_workspace_ = allocate(kBlasWorkspaceBytes);
  cublasSetWorkspace(h, blas_workspace_, kBlasWorkspaceBytes);
  blas_ = h;
  return blas_;
}

std::unique_ptr<BackendStorage> CudaDevice::alloc_uninit(int64_t numel, DType dtype) {
  return std::make_unique<CudaStorage>(shared_from_this(), dtype, numel);
}

std::unique_ptr<BackendStorage> CudaDevice::zeros(int64_t numel, DType dtype) {
  auto s = std::make_unique<CudaStorage>(shared_from_this(), dtype, numel);
  if (numel > 0) {
    GpuScope scope(ordinal_);
    check(cudaMemsetAsync(s->ptr(), 0, size_t(numel) * dtype_size(dtype), stream_),
          "cudaMemsetAsync", this);
  }
  return s;
}

std::unique_ptr<BackendStorage> CudaDevice::from_host(const void* data, int64_t numel,
                                                      DType dtype) {
  auto s = std::make_unique<CudaStorage>(shared_from_this(), dtype, numel);
  if (numel > 0) copy_host_to_device(*this, s->ptr(), data, size_t(numel) * dtype_size(dtype));
  return s;
}

std::map<std::string, std::string> CudaDevice::info() const {
  int driver = 0, runtime = 0, blas_version = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  cublasGetProperty(MAJOR_VERSION, &blas_version);
  int minor = 0;
  cublasGetProperty(MINOR_VERSION, &minor);
  cudaDeviceProp prop{};
  (void)cudaGetDeviceProperties(&prop, ordinal_);
  auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return {{"gpu", name_},
          {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
          {"multiprocessors", std::to_string(sm_count_)},
          {"memory_bytes", std::to_string(prop.totalGlobalMem)},
          {"driver", ver(driver)},
          {"runtime", ver(runtime)},
          {"cublas", std::to_string(blas_version) + "." + std::to_string(minor)},
          {"stream", own_stream_ ? "own" : "shared"}};
}

void CudaDevice::empty_cache() {
  release_small();
  synchronize();
  GpuScope scope(ordinal_);
  // The pool trims only frees it knows completed: a stream query does not tell it, a
  // stream synchronisation does (the stream is idle by now: this returns at once).
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", this);
  check(cudaMemPoolTrimTo(pool_, 0), "cudaMemPoolTrimTo", this);
}

std::map<std::string, int64_t> CudaDevice::memory_stats() const {
  auto attr = [&](cudaMemPoolAttr a) {
    size_t v = 0;
    (void)cudaMemPoolGetAttribute(pool_, a, &v);
    return int64_t(v);
  };
  // The same keys as the other devices' statistics (the pool is shared by the GPU's
  // streams); this instance's small blocks count as cached, not in use.
  int64_t small = 0;
  {
    std::lock_guard<std::mutex> lock(small_mu_);
    small = int64_t(small_bytes_);
  }
  const int64_t used = attr(cudaMemPoolAttrUsedMemCurrent) - small;
  return {{"bytes_in_use", used},
          {"bytes_cached", attr(cudaMemPoolAttrReservedMemCurrent) - used},
          {"peak_bytes_in_use", std::max(attr(cudaMemPoolAttrUsedMemHigh), used)}};
}

std::map<std::string, int64_t> CudaDevice::queue_stats() const {
  return {{"host_waits", host_waits_.load()}};
}

// ---- registration

namespace {

int gpu_count(cudaError_t* err_out = nullptr) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  if (err_out) *err_out = err;
  return err == cudaSuccess ? n : 0;
}

std::string unavailable_reason() {
  cudaError_t err = cudaSuccess;
  int n = gpu_count(&err);
  if (err == cudaErrorInsufficientDriver)
    return "no NVIDIA driver was found (libcuda.so.1), or it is too old for CUDA " +
           std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && n == 0)) return "no CUDA GPU was found";
  if (err != cudaSuccess) return "the CUDA driver failed to start: " + error_text(err);
  return "";
}

// The process that first opened a GPU: a forked child cannot open one.
int64_t& opened_by() {
  static int64_t pid = 0;
  return pid;
}

// Marks CUDA as started by this process; raises in a forked child of the process that did.
void claim_process(const std::string& what = "use CUDA") {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (opened_by() == 0) opened_by() = getpid();
  if (opened_by() != getpid())
    throw Error(ErrorKind::Device, "cannot " + what + " in this forked child: CUDA was first " +
                                       fork_advice(opened_by()) + ".");
}

DevicePtr open_device(int64_t ordinal, bool new_stream) {
  claim_process("open cuda:" + std::to_string(ordinal));
  return std::make_shared<CudaDevice>(int(ordinal), new_stream);
}

const bool registered = register_backend(BackendFactory{
    "cuda", [] { return int64_t(gpu_count()); }, [] { return unavailable_reason(); },
    [](int64_t ordinal, bool new_instance) { return open_device(ordinal, new_instance); },
    [](BackendDevice& d) { queue_fault(static_cast<CudaDevice&>(d)); },
    [](BackendDevice& d, double seconds) { queue_busy(static_cast<CudaDevice&>(d), seconds); },
    [](size_t bytes) {
      claim_process();  // CUDA starts here: a forked child cannot use it
      return pinned_host_alloc(bytes);
    },
    &is_pinned_host});

}  // namespace

}  // namespace ember::cuda
