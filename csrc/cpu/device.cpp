// The CPU device: host buffers from the caching allocator, random fills, and
// registration with core.
#include <cstring>
#include <fstream>

#include "allocator.h"
#include "blas.h"
#include "core/random.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "parallel.h"

namespace ember::cpu {

CpuStorage::CpuStorage(DevicePtr device, DType dtype, int64_t numel)
    : device_(std::move(device)), dtype_(dtype), numel_(numel) {
  size_t bytes = size_t(numel) * dtype_size(dtype);
  data_ = host_alloc(bytes);
  if (!data_) throw_out_of_memory(device_, int64_t(bytes));
}

CpuStorage::CpuStorage(DevicePtr device, DType dtype, int64_t numel, void* data,
                       std::shared_ptr<void> owner)
    : device_(std::move(device)),
      dtype_(dtype),
      numel_(numel),
      data_(data),
      owner_(std::move(owner)) {}

CpuStorage::~CpuStorage() {
  if (!owner_) host_free(data_, size_t(numel_) * dtype_size(dtype_));
}

std::unique_ptr<BackendStorage> CpuDevice::wrap_host(void* data, int64_t numel, DType dtype,
                                                     std::shared_ptr<void> owner) {
  return std::make_unique<CpuStorage>(shared_from_this(), dtype, numel, data, std::move(owner));
}

void CpuStorage::to_host(void* dst) const {
  if (numel_ > 0) std::memcpy(dst, data_, size_t(numel_) * dtype_size(dtype_));
}

std::string CpuDevice::name() const {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "host CPU";
}

std::unique_ptr<BackendStorage> CpuDevice::alloc_uninit(int64_t numel, DType dtype) {
  return std::make_unique<CpuStorage>(shared_from_this(), dtype, numel);
}

std::unique_ptr<BackendStorage> CpuDevice::zeros(int64_t numel, DType dtype) {
  auto s = std::make_unique<CpuStorage>(shared_from_this(), dtype, numel);
  std::memset(s->data(), 0,
              size_t(numel) * dtype_size(dtype));  // all-zero bits is 0 in every dtype
  return s;
}

std::unique_ptr<BackendStorage> CpuDevice::from_host(const void* data, int64_t numel, DType dtype) {
  auto s = std::make_unique<CpuStorage>(shared_from_this(), dtype, numel);
  if (numel > 0)
    std::memcpy(s->data(), data, size_t(numel) * dtype_size(dtype));  // data may be null
  return s;
}

void CpuDevice::fill_random(BackendStorage& dst, RandomDist dist, uint64_t seed, uint64_t counter,
                            double a, double b) {
  const int bits = uniform_bits(dst.dtype());
  dispatch_dtype(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = as_cpu(dst).ptr<T>();
    parallel_for(dst.numel(), kParallelGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const uint64_t c = counter + uint64_t(i);
        if (dist == RandomDist::Normal) {
          out[i] = T(a + b * random_normal(seed, c));
          continue;
        }
        T v = T(a + (b - a) * random_uniform(seed, c, bits));
        // [a, b) must hold after rounding to T too: a value rounded up to b becomes a.
        out[i] = double(compute_t<T>(v)) < b || !(b > a) ? v : T(a);
      }
    });
  });
}

void CpuDevice::fill_randint(BackendStorage& dst, uint64_t seed, uint64_t counter, int64_t low,
                             uint64_t range) {
  int64_t* out = as_cpu(dst).ptr<int64_t>();
  parallel_for(dst.numel(), kParallelGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)  // unsigned sum: low + range - 1 may pass INT64_MAX
      out[i] = int64_t(uint64_t(low) + random_below(seed, counter + uint64_t(i), range));
  });
}

std::map<std::string, std::string> CpuDevice::info() const {
  return {{"blas", blas_name()},
          {"blas_threads", std::to_string(blas_threads())},
          {"threads", std::to_string(num_threads())}};
}

void CpuDevice::empty_cache() {
  host_empty_cache();
}

std::map<std::string, int64_t> CpuDevice::memory_stats() const {
  return host_memory_stats();
}

namespace {

// The CPU is the host: always built and present, one device, ordinal 0.
DeviceKind cpu_kind() {
  DeviceKind k;
  k.name = "cpu";
  k.rank = 0;
  k.host = true;
  k.doc = "The one CPU device.";
  return k;
}

const bool described = register_kind(cpu_kind());
const bool registered = register_backend(
    BackendFactory{"cpu", [] { return int64_t(1); }, [] { return std::string(); },
                   [](int64_t, bool) -> DevicePtr { return std::make_shared<CpuDevice>(); }});

}  // namespace

}  // namespace ember::cpu
