// Stable sort along the last dim with cub::DeviceSegmentedSort, one segment per row, or
// for few long rows (row_pass) cub::DeviceRadixSort, a device-wide sort per row; topk
// selects k per row by radix digits first (topk_select).
// Values become unsigned keys whose order is the CPU's: NaN above every number (all
// NaNs one key), -0.0 the key of 0.0, complemented when descending; the sort carries each value's
// position in its row, and the sorted values are then read back from src at those positions.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
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

// One stable ascending segmented sort of (keys, positions) in `rows` rows of n on `dev`'s
// stream, the rows' offsets and temporary storage from its stream-ordered pool.
template <typename K>
void segmented_sort(CudaDevice& dev, const K* keys_in, K* keys_out, const int64_t* pos_in,
                    int64_t* pos_out, int64_t n, int64_t rows) {
  const int64_t total = n * rows;
  Scratch offsets_mem(dev, size_t(rows + 1) * sizeof(int64_t));
  const int64_t* offsets = offsets_mem.as<int64_t>();
  row_offsets<<<grid_for(rows + 1), kBlock, 0, dev.stream()>>>(n, rows, offsets_mem.as<int64_t>());
  dev.check_launch("sort");
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

// Few long rows (row_pass): one stable device-wide radix sort of (keys, positions) per
// row, over the key's low `bits` only (a narrower type's widened keys agree above them).
template <typename K>
void radix_sort_rows(CudaDevice& dev, const K* keys_in, K* keys_out, const int64_t* pos_in,
                     int64_t* pos_out, int64_t n, int64_t rows, int bits) {
  auto run = [&](void* temp, size_t& bytes, int64_t row) {
    const int64_t at = row * n;
    return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in + at, keys_out + at,
                                           pos_in + at, pos_out + at, n, 0, bits, dev.stream());
  };
  size_t bytes = 0;
  check(run(nullptr, bytes, 0), "cub::DeviceRadixSort (temporary storage size)", &dev);
  Scratch temp(dev, std::max<size_t>(bytes, 1));
  for (int64_t row = 0; row < rows; ++row)
    check(run(temp.as<void>(), bytes, row), "cub::DeviceRadixSort", &dev);
}

// topk by radix selection, a block per row. The k-th key of the row in sort_key's order
// (the output's) is found 8 bits at a time from the top: each pass counts, in shared
// histograms (one per warp), the keys that share the digits found so far, and picks the
// digit whose bin holds the k-th; after the first pass few keys match, and the row's
// reads after the first come from L2. The keys below it, then the first of those equal
// to it by position, are gathered in position order (a block scan per tile) into k slots
// per row, which a stable segmented sort then orders. Keys compare in their low
// 8 * sizeof(T) bits, where a narrow type's widened keys differ.
constexpr int kSelectWarps = kBlock / 32;
static_assert(kBlock == 256, "topk_select: a thread per bin of 8 bits");

template <typename T>
__device__ __forceinline__ key_t<T> key_mask() {
  using K = key_t<T>;
  if constexpr (sizeof(T) == sizeof(K))
    return K(~K(0));
  else
    return K((K(1) << (8 * sizeof(T))) - 1);
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
    topk_select(const T* src, RowView r, int64_t k, bool largest, key_t<T>* keys, int64_t* pos) {
  using K = key_t<T>;
  using Scan = cub::BlockScan<unsigned long long, kBlock>;
  __shared__ uint32_t hist[kSelectWarps][256];
  __shared__ typename Scan::TempStorage scan_temp;
  __shared__ K found_prefix;
  __shared__ int64_t found_need;
  const int warp = int(threadIdx.x) / 32;
  const K mask = key_mask<T>();
  for (int64_t row = blockIdx.x; row < r.count; row += gridDim.x) {
    const T* x = src + row_start(r, row);
    K prefix = 0, known = 0;  // the digits found so far, and where they are
    int64_t need = k;         // the rank sought among the keys that match them (from 1)
    for (int shift = 8 * int(sizeof(T)) - 8; shift >= 0; shift -= 8) {
      for (int i = threadIdx.x; i < kSelectWarps * 256; i += blockDim.x) (&hist[0][0])[i] = 0;
      __syncthreads();
      for (int64_t j = threadIdx.x; j < r.n; j += blockDim.x) {
        const K key = sort_key(x[j * r.stride], largest) & mask;
        if ((key & known) == prefix) atomicAdd(&hist[warp][(key >> shift) & 0xff], 1u);
      }
      __syncthreads();
      unsigned long long count = 0, below = 0;  // thread b: bin b
      for (int w = 0; w < kSelectWarps; ++w) count += hist[w][threadIdx.x];
      Scan(scan_temp).ExclusiveSum(count, below);
      if (int64_t(below) < need && need <= int64_t(below + count)) {  // one thread's bin
        found_prefix = prefix | (K(threadIdx.x) << shift);
        found_need = need - int64_t(below);
      }
      __syncthreads();
      prefix = found_prefix;
      need = found_need;
      known |= K(0xff) << shift;
      __syncthreads();  // found_* and hist are written again by the next pass
    }
    // prefix is the k-th key: take every key below it and the first `need` equal to it
    const int64_t less = k - need;
    K* row_keys = keys + row * k;
    int64_t* row_pos = pos + row * k;
    unsigned long long taken = 0;  // keys below (high 32 bits) and equal (low) so far
    for (int64_t first = 0; first < r.n; first += blockDim.x) {
      const int64_t j = first + threadIdx.x;
      K key = 0;
      bool lt = false, eq = false;
      if (j < r.n) {
        key = sort_key(x[j * r.stride], largest) & mask;
        lt = key < prefix;
        eq = key == prefix;
      }
      unsigned long long before, tile;
      Scan(scan_temp).ExclusiveSum((lt ? 1ull << 32 : 0ull) | (eq ? 1ull : 0ull), before, tile);
      before += taken;
      int64_t at = -1;
      if (lt)
        at = int64_t(before >> 32);
      else if (eq && int64_t(before & 0xffffffffull) < need)
        at = less + int64_t(before & 0xffffffffull);
      if (at >= 0) {
        row_keys[at] = key;
        row_pos[at] = j;
      }
      taken += tile;  // the same in every thread: the loop's exit is the block's
      __syncthreads();  // scan_temp is reused by the next tile
      if (int64_t(taken >> 32) == less && int64_t(taken & 0xffffffffull) >= need) break;
    }
  }
}

}  // namespace

bool CudaStorage::topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
                       BackendStorage& indices) const {
  const RowView r = row_view("topk", src);
  if (r.count == 0 || k == 0) return true;
  // few long rows: core's sort is device-wide; the tile counts above are 32-bit
  if (row_pass(r, true) == RowPass::DeviceWide || r.n >= (int64_t(1) << 31)) return false;
  const int64_t total = k * r.count;
  GpuScope scope(cuda().gpu());
  CudaDevice& dev = cuda();
  int64_t* idx = as_cuda(indices).ptr<int64_t>();
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using K = key_t<T>;
    Scratch keys(dev, 2 * size_t(total) * sizeof(K)), pos(dev, size_t(total) * sizeof(int64_t));
    topk_select<T><<<unsigned(std::min<int64_t>(r.count, int64_t(1) << 30)), kBlock, 0,
                     stream()>>>(ptr<T>(), r, k, largest, keys.as<K>(), pos.as<int64_t>());
    dev.check_launch("topk");
    segmented_sort<K>(dev, keys.as<K>(), keys.as<K>() + total, pos.as<int64_t>(), idx, k,
                      r.count);
    RowView picked = r;  // k per row, read back from src at their positions
    picked.n = k;
    sort_take<T><<<grid_for(total), kBlock, 0, stream()>>>(ptr<T>(), picked, idx,
                                                           as_cuda(values).ptr<T>());
  });
  dev.check_launch("topk");
  return true;
}

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
    sort_keys<T><<<grid_for(total), kBlock, 0, stream()>>>(ptr<T>(), r, descending, keys.as<K>(),
                                                           pos.as<int64_t>());
    dev.check_launch("sort");
    if (row_pass(r, true) == RowPass::DeviceWide)
      radix_sort_rows<K>(dev, keys.as<K>(), keys.as<K>() + total, pos.as<int64_t>(), idx, r.n,
                         r.count, int(8 * sizeof(T)));
    else
      segmented_sort<K>(dev, keys.as<K>(), keys.as<K>() + total, pos.as<int64_t>(), idx, r.n,
                        r.count);
    sort_take<T>
        <<<grid_for(total), kBlock, 0, stream()>>>(ptr<T>(), r, idx, as_cuda(values).ptr<T>());
  });
  dev.check_launch("sort");
}

}  // namespace ember::cuda
