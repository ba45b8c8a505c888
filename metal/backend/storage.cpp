// MetalStorage: a pooled shared buffer that remembers which command buffers wrote and
// used it, so that host reads wait for its last write only and frees are stream-ordered.
#include <cstring>

#include "metal_backend.h"

namespace ember::metal {

MetalStorage::MetalStorage(DevicePtr device, DType dtype, int64_t numel)
    : device_(std::move(device)), dtype_(dtype), numel_(numel) {
  buffer_ = metal().acquire(size_t(numel) * dtype_size(dtype));
}

MetalStorage::~MetalStorage() {
  metal().release(std::move(buffer_), last_use_seq_.load(std::memory_order_acquire));
}

void MetalStorage::note_use(uint64_t seq, bool write) const {
  last_use_seq_.store(seq, std::memory_order_release);
  if (write) last_write_seq_.store(seq, std::memory_order_release);
}

EventPtr MetalStorage::last_write() const {
  return metal().event_at(last_write_seq_.load(std::memory_order_acquire));
}

void MetalStorage::to_host(void* dst) const {
  metal().wait_for(last_write_seq_.load(std::memory_order_acquire));
  if (numel_ > 0) std::memcpy(dst, buffer_->contents(), size_t(numel_) * dtype_size(dtype_));
}

}  // namespace ember::metal
