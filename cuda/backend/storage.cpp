// CudaStorage: a stream-ordered allocation, moves to the host and to other CUDA instances.
#include <cstring>
#include <map>
#include <vector>

#include "core/error.h"
#include "cuda_backend.h"

namespace ember::cuda {

CudaStorage::CudaStorage(DevicePtr device, DType dtype, int64_t numel)
    : device_(std::move(device)), dtype_(dtype), numel_(numel) {
  data_ = cuda().allocate(size_t(numel) * dtype_size(dtype));
}

CudaStorage::CudaStorage(DevicePtr device, DType dtype, int64_t numel, void* data,
                         std::shared_ptr<void> owner)
    : device_(std::move(device)),
      dtype_(dtype),
      numel_(numel),
      data_(data),
      owner_(std::move(owner)) {}

CudaStorage::~CudaStorage() {
  if (!owner_)
    cuda().free(data_, size_t(numel_) * dtype_size(dtype_));  // after the queued kernels
  else
    cuda().drain_nothrow();  // the owner frees at once, not in stream order: wait first
}

void CudaStorage::to_host(void* dst) const {
  cuda().check_process("copy to the host");
  copy_device_to_host(cuda(), dst, data_, size_t(numel_) * dtype_size(dtype_));
}

EventPtr CudaStorage::last_write() const {
  return cuda().record();
}

namespace {

// Whether `to` may read memory of `from`'s pool directly; enabled once per pair.
bool peer_access(int from, int to) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, bool> known;
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find({from, to});
  if (it != known.end()) return it->second;
  int can = 0;
  bool ok = cudaDeviceCanAccessPeer(&can, to, from) == cudaSuccess && can;
  if (ok) {
    cudaMemPool_t pool;
    cudaMemAccessDesc desc{};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = to;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    ok = cudaDeviceGetDefaultMemPool(&pool, from) == cudaSuccess &&
         cudaMemPoolSetAccess(pool, &desc, 1) == cudaSuccess;
  }
  (void)cudaGetLastError();
  known[{from, to}] = ok;
  return ok;
}

}  // namespace

std::unique_ptr<BackendStorage> CudaStorage::copy_to_peer(const DevicePtr& dst) const {
  auto& to = static_cast<CudaDevice&>(*dst);
  const size_t bytes = size_t(numel_) * dtype_size(dtype_);
  auto out = std::make_unique<CudaStorage>(dst, dtype_, numel_);
  if (bytes == 0) return out;
  CudaDevice& from = cuda();
  if (from.gpu() != to.gpu() && !peer_access(from.gpu(), to.gpu())) {
    // No peer path: through the host (pinned staging), ordered by the host waits.
    std::vector<char> host(bytes);
    copy_device_to_host(from, host.data(), data_, bytes);
    copy_host_to_device(to, out->ptr(), host.data(), bytes);
    return out;
  }
  // The destination stream waits for the source's queued work on the GPU, copies, and the
  // source stream waits for the copy before it may free or overwrite the source.
  to.wait_on_device(*from.record());
  {
    GpuScope scope(to.gpu());
    cudaError_t err =
        from.gpu() == to.gpu()
            ? cudaMemcpyAsync(out->ptr(), data_, bytes, cudaMemcpyDeviceToDevice, to.stream())
            : cudaMemcpyPeerAsync(out->ptr(), to.gpu(), data_, from.gpu(), bytes, to.stream());
    check(err, "copying between CUDA devices", &to);
  }
  from.wait_on_device(*to.record());
  return out;
}

}  // namespace ember::cuda
