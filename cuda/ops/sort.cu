// Stable sort along the last dim with cub::DeviceSegmentedSort, one segment per row.
// Values become unsigned keys whose order is the CPU's: NaN above every number (all
// NaNs one key), -0.0 the key of 0.0, complemented when descending; the sort carries each value's
// position in its row, and the sorted values are then read back from src at those positions.
#include <cub/device/device_segmented_sort.cuh>

#include "common.cuh"
#include "rows.cuh"

namespace ember::cuda {

namespace {

// Keys are 32 or 64 bits wide, and descending orders sort the complemented keys: two
// instantiations of the segmented sort instead of eight keep the compile short.
template <typename T>
using key_t = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
template <typename T>
using bits_t =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

// An unsigned key that orders as the value does (NaN last), complemented for descending
// orders (ties keep their order either way: the sort is stable).
template <typename T>
__device__ __forceinline__ key_t<T> sort_key(T v, bool descending) {
  using B = bits_t<T>;
  B bits;
  memcpy(&bits, &v, sizeof(B));
  constexpr B sign = B(B(1) << (8 * sizeof(B) - 1));
  B k = bits;
  if constexpr (is_float_v<T>) {
    const auto c = to_c(v);  // the compute type: a tiny double stays non-zero
    if (c != c)
      k = B(~B(0));
    else
      k = (c == 0) ? sign : (bits & sign) ? B(~bits) : B(bits | sign);  // -0.0 ties 0.0
  } else if constexpr (std::is_signed_v<T>) {
    k = B(bits ^ sign);
  }
  const key_t<T> key = k;  // widening keeps the order
  return descending ? key_t<T>(~key) : key;
}

template <typename T>
__global__ void sort_keys(const T* src, RowView r, bool descending, key_t<T>* keys, int64_t* pos) {
  const int64_t total = r.n * r.count;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / r.n, j = i - row * r.n;
    keys[i] = sort_key(src[row_start(r, row) + j * r.stride], descending);
    pos[i] = j;
  }
}

__global__ void row_offsets(int64_t n, int64_t count, int64_t* offsets) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i <= count;
       i += int64_t(gridDim.x) * blockDim.x)
    offsets[i] = i * n;
}

template <typename T>
__global__ void sort_take(const T* src, RowView r, const int64_t* indices, T* values) {
  const int64_t total = r.n * r.count;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / r.n;
    values[i] = src[row_start(r, row) + indices[i] * r.stride];
  }
}

// One stable ascending segmented sort of (keys, positions) on `dev`'s stream, temporary
// storage from its stream-ordered pool.
template <typename K>
void segmented_sort(CudaDevice& dev, const K* keys_in, K* keys_out, const int64_t* pos_in,
                    int64_t* pos_out, int64_t total, int64_t rows, const int64_t* offsets) {
  auto run = [&](void* temp, size_t& bytes) {
    return cub::DeviceSegmentedSort::StableSortPairs(temp, bytes, keys_in, keys_out, pos_in,
                                                     pos_out, total, rows, offsets, offsets + 1,
                                                     dev.stream());
  };
  size_t bytes = 0;
  check(run(nullptr, bytes), "cub::DeviceSegmentedSort (temporary storage size)", &dev);
  Scratch temp(dev, std::max<size_t>(bytes, 1));
  check(run(temp.as<void>(), bytes), "cub::DeviceSegmentedSort", &dev);
}

}  // namespace

void CudaStorage::sort(const Layout& src, bool descending, BackendStorage& values,
                       BackendStorage& indices) const {
  const RowView r = row_view("sort", src);
  if (r.count == 0) return;
  const int64_t total = r.n * r.count;
  GpuScope scope(cuda().gpu());
  CudaDevice& dev = cuda();
  int64_t* idx = as_cuda(indices).ptr<int64_t>();
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using K = key_t<T>;
    Scratch keys(dev, 2 * size_t(total) * sizeof(K)), pos(dev, size_t(total) * sizeof(int64_t));
    Scratch offsets(dev, size_t(r.count + 1) * sizeof(int64_t));
    sort_keys<T><<<grid_for(total), kBlock, 0, stream()>>>(ptr<T>(), r, descending, keys.as<K>(),
                                                           pos.as<int64_t>());
    row_offsets<<<grid_for(r.count + 1), kBlock, 0, stream()>>>(r.n, r.count,
                                                                offsets.as<int64_t>());
    dev.check_launch("sort");
    segmented_sort<K>(dev, keys.as<K>(), keys.as<K>() + total, pos.as<int64_t>(), idx, total,
                      r.count, offsets.as<int64_t>());
    sort_take<T>
        <<<grid_for(total), kBlock, 0, stream()>>>(ptr<T>(), r, idx, as_cuda(values).ptr<T>());
  });
  dev.check_launch("sort");
}

}  // namespace ember::cuda
