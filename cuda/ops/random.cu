// uniform, normal and integer fills: the counter-based stream of core/random.h, element i from
// (seed, counter + i), so the GPU draws exactly the CPU's numbers.
#include "common.cuh"
#include "core/random.h"

namespace ember::cuda {

namespace {

template <typename T>
__global__ void fill_random_kernel(T* out, int64_t n, bool normal, uint64_t seed, uint64_t counter,
                                   double a, double b, int bits) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const uint64_t c = counter + uint64_t(i);
    if (normal) {
      out[i] = from_c<T>(compute_t<T>(a + b * random_normal(seed, c)));
      continue;
    }
    T v = from_c<T>(compute_t<T>(a + (b - a) * random_uniform(seed, c, bits)));
    // [a, b) must hold after rounding to T too: a value rounded up to b becomes a.
    out[i] = double(to_c(v)) < b || !(b > a) ? v : from_c<T>(compute_t<T>(a));
  }
}

__global__ void fill_randint_kernel(int64_t* out, int64_t n, uint64_t seed, uint64_t counter,
                                    int64_t low, uint64_t range) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = int64_t(uint64_t(low) + random_below(seed, counter + uint64_t(i), range));
}

}  // namespace

void CudaDevice::fill_randint(BackendStorage& dst, uint64_t seed, uint64_t counter, int64_t low,
                              uint64_t range) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  GpuScope scope(gpu());
  fill_randint_kernel<<<grid_for(n), kBlock, 0, stream()>>>(as_cuda(dst).ptr<int64_t>(), n, seed,
                                                            counter, low, range);
  check_launch("fill_randint");
}

void CudaDevice::fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter,
                             double a, double b) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  GpuScope scope(gpu());
  dispatch(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    fill_random_kernel<T>
        <<<grid_for(n), kBlock, 0, stream()>>>(as_cuda(dst).ptr<T>(), n, dist == RandomDist::Normal,
                                               seed, counter, a, b, uniform_bits(dst.dtype()));
  });
  check_launch("fill_random");
}

}  // namespace ember::cuda
