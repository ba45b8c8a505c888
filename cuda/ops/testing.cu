// Kernels that only the tests use: a fault on the device, to show how one surfaces, and
// long work on one SM, which leaves the rest of the GPU to other streams.
#include "common.cuh"

namespace ember::cuda {

namespace {

__global__ void trap_kernel() {
  __trap();  // cudaErrorLaunchFailure: sticky, the context is lost
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void queue_busy(const CudaDevice& dev, double seconds) {
  GpuScope scope(dev.gpu());
  int khz = 0;
  check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev.gpu()), "cudaDeviceGetAttribute",
        &dev);
  // At most the clock's rate: a GPU running below it spins longer, never shorter.
  spin_kernel<<<1, 1, 0, dev.stream()>>>((long long)(seconds * khz * 1e3));
  dev.check_launch("spin (work queued by a test)");
}

void queue_fault(const CudaDevice& dev) {
  GpuScope scope(dev.gpu());
  trap_kernel<<<1, 1, 0, dev.stream()>>>();
  dev.check_launch("trap (a fault queued by a test)");
}

}  // namespace ember::cuda
