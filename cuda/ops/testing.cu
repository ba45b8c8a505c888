// Kernels that only the tests use: a fault on the device, to show how one surfaces, and
// long work on one SM, which leaves the rest of the GPU to other streams.
#include "common.cuh"

namespace ember::cuda {

namespace {

__global__ void trap_kernel() {
  __trap();  // cudaErrorLaunchFailure: sticky, the context is lost
}

// %globaltimer counts nanoseconds whatever the SM clock (the clock rate attribute is 0
// under CUDA 13).
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
}

}  // namespace

void queue_busy(const CudaDevice& dev, double seconds) {
  GpuScope scope(dev.gpu());
  spin_kernel<<<1, 1, 0, dev.stream()>>>((unsigned long long)(seconds * 1e9));
  dev.check_launch("spin (work queued by a test)");
}

void queue_fault(const CudaDevice& dev) {
  GpuScope scope(dev.gpu());
  trap_kernel<<<1, 1, 0, dev.stream()>>>();
  dev.check_launch("trap (a fault queued by a test)");
}

}  // namespace ember::cuda
