// cumsum / cumprod along the last dim: one block per row, tiles of the row scanned with
// cub::BlockScan and chained by a running carry. 16-bit floats accumulate in float,
// integers in an unsigned type (overflow wraps, as on the CPU).
#include <cub/block/block_scan.cuh>

#include "common.cuh"
#include "rows.cuh"

namespace ember::cuda {

namespace {

// 16-bit floats accumulate in float; integers unsigned, at least 32 bits wide.
template <typename T, bool = is_float_v<T>>
struct ScanAcc {
  using type = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
};
template <typename T>
struct ScanAcc<T, true> {
  using type = compute_t<T>;
};
template <typename T>
using scan_acc_t = typename ScanAcc<T>::type;

template <bool kProd>
struct Combine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return kProd ? A(a * b) : A(a + b);
  }
};

template <typename T, typename A>
__device__ __forceinline__ A load_acc(T v) {
  if constexpr (is_float_v<T>)
    return to_c(v);
  else
    return A(v);
}

template <typename T, typename A>
__device__ __forceinline__ T store_acc(A v) {
  if constexpr (is_float_v<T>)
    return from_c<T>(v);
  else
    return T(v);
}

template <typename T, bool kProd, int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads) scan_rows(const T* src, RowView r, T* dst) {
  using A = scan_acc_t<T>;
  using BlockScan = cub::BlockScan<A, kThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  const Combine<kProd> op;
  const A identity = kProd ? A(1) : A(0);
  for (int64_t row = blockIdx.x; row < r.count; row += gridDim.x) {
    const T* x = src + row_start(r, row);
    T* y = dst + row * r.n;
    A carry = identity;
    for (int64_t tile = 0; tile < r.n; tile += int64_t(kThreads) * kItems) {
      const int64_t first = tile + int64_t(threadIdx.x) * kItems;
      A items[kItems];
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        items[k] = first + k < r.n ? load_acc<T, A>(x[(first + k) * r.stride]) : identity;
      A total;
      BlockScan(temp).InclusiveScan(items, items, op, total);
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        if (first + k < r.n) y[first + k] = store_acc<T, A>(op(carry, items[k]));
      carry = op(carry, total);
      __syncthreads();  // temp is reused by the next tile
    }
  }
}

template <typename T, bool kProd>
void launch_scan(const T* src, const RowView& r, T* dst, cudaStream_t stream) {
  const unsigned blocks = unsigned(std::min<int64_t>(r.count, int64_t(1) << 30));
  if (r.n <= 128)  // short rows: a warp each
    scan_rows<T, kProd, 32, 4><<<blocks, 32, 0, stream>>>(src, r, dst);
  else
    scan_rows<T, kProd, 256, 4><<<blocks, 256, 0, stream>>>(src, r, dst);
}

}  // namespace

void CudaStorage::scan(ScanOp op, const Layout& src, BackendStorage& dst) const {
  const char* name = op == ScanOp::Sum ? "cumsum" : "cumprod";
  const RowView r = row_view(name, src);
  if (r.count == 0) return;
  GpuScope scope(cuda().gpu());
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    T* out = as_cuda(dst).ptr<T>();
    if (op == ScanOp::Sum)
      launch_scan<T, false>(ptr<T>(), r, out, stream());
    else
      launch_scan<T, true>(ptr<T>(), r, out, stream());
  });
  cuda().check_launch(name);
}

}  // namespace ember::cuda
