// MetalStorage: a pooled shared buffer; host reads wait for the instance's queue.
#include <cstring>

#include "metal_backend.h"

namespace ember::metal {

MetalStorage::MetalStorage(DevicePtr device, DType dtype, int64_t numel)
    : device_(std::move(device)), dtype_(dtype), numel_(numel) {
  buffer_ = metal().acquire(size_t(numel) * dtype_size(dtype));
}

MetalStorage::~MetalStorage() {
  metal().release(std::move(buffer_));
}

void MetalStorage::to_host(void* dst) const {
  metal().synchronize();  // pending kernels may still write this buffer
  if (numel_ > 0) std::memcpy(dst, buffer_->contents(), size_t(numel_) * dtype_size(dtype_));
}

}  // namespace ember::metal
