// Kernels that only the tests use: a fault on the device, to show how one surfaces.
#include "common.cuh"

namespace ember::cuda {

namespace {

__global__ void trap_kernel() {
  __trap();  // cudaErrorLaunchFailure: sticky, the context is lost
}

}  // namespace

void queue_fault(const CudaDevice& dev) {
  GpuScope scope(dev.gpu());
  trap_kernel<<<1, 1, 0, dev.stream()>>>();
  dev.check_launch("trap (a fault queued by a test)");
}

}  // namespace ember::cuda
