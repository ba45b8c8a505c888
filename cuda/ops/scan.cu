// cumsum / cumprod along the last dim: one block per row, tiles of the row scanned with
// cub::BlockScan and chained by a running carry. 16-bit floats accumulate in float,
// integers in an unsigned type (overflow wraps, as on the CPU). nonzero's compaction:
// cub::DeviceSelect::Flagged of the positions 0, 1, ... by the mask's bytes.
#include <thrust/iterator/counting_iterator.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_select.cuh>
#include <iterator>
#include <optional>

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

// An output iterator over int64 positions that drops writes at or past `limit`: the
// selection writes as many positions as it finds, and dst holds the count core read.
class BoundedPositions {
 public:
  struct Ref {
    int64_t* p;
    bool ok;
    __device__ Ref& operator=(int64_t v) {
      if (ok) *p = v;
      return *this;
    }
  };
  using iterator_category = std::random_access_iterator_tag;
  using value_type = int64_t;
  using difference_type = std::ptrdiff_t;
  using pointer = int64_t*;
  using reference = Ref;

  __host__ __device__ BoundedPositions(int64_t* base, int64_t limit) : base_(base), limit_(limit) {}
  __host__ __device__ Ref operator[](difference_type i) const { return Ref{base_ + i, i < limit_}; }
  __host__ __device__ Ref operator*() const { return (*this)[0]; }
  __host__ __device__ BoundedPositions operator+(difference_type n) const {
    return BoundedPositions(base_ + n, limit_ - n);
  }

 private:
  int64_t* base_;
  int64_t limit_;
};

// A mask's shape, for the coordinates of its positions.
struct MaskShape {
  int64_t dims[kNonzeroMaxDims];
  int ndim;
};

// Each flat position as a row of coordinates (torch does the same second pass).
__global__ void unravel(const int64_t* flat, int64_t count, MaskShape shape, int64_t* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t v = flat[i];
    int64_t* row = out + i * shape.ndim;
    for (int d = shape.ndim - 1; d > 0; --d) {
      const int64_t q = v / shape.dims[d];
      row[d] = v - q * shape.dims[d];
      v = q;
    }
    row[0] = v;
  }
}

}  // namespace

void CudaStorage::nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const {
  const int64_t n = src.numel(), nd = coordinates ? src.ndim() : 1;
  const int64_t limit = dst.numel() / nd;
  if (n == 0 || limit == 0) return;
  GpuScope scope(cuda().gpu());
  CudaDevice& dev = cuda();
  const uint8_t* flags = ptr<uint8_t>() + src.offset();
  const thrust::counting_iterator<int64_t> positions(0);
  // Coordinates: the flat positions into scratch first, then unravelled.
  std::optional<Scratch> flat;
  if (coordinates) flat.emplace(dev, size_t(limit) * sizeof(int64_t));
  int64_t* into = coordinates ? flat->as<int64_t>() : as_cuda(dst).ptr<int64_t>();
  const BoundedPositions out(into, limit);
  Scratch selected(dev, sizeof(int64_t));
  auto run = [&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, positions, flags, out,
                                      selected.as<int64_t>(), n, stream());
  };
  size_t bytes = 0;
  check(run(nullptr, bytes), "cub::DeviceSelect::Flagged (temporary storage size)", &dev);
  Scratch temp(dev, std::max<size_t>(bytes, 1));
  check(run(temp.as<void>(), bytes), "cub::DeviceSelect::Flagged", &dev);
  if (coordinates) {
    MaskShape shape{};
    shape.ndim = int(nd);
    for (int d = 0; d < shape.ndim; ++d) shape.dims[d] = src.dim(d);
    unravel<<<grid_for(limit), kBlock, 0, stream()>>>(into, limit, shape,
                                                      as_cuda(dst).ptr<int64_t>());
  }
  dev.check_launch("nonzero");
}

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
