// cumsum / cumprod along the last dim: one block per row, tiles of the row scanned with
// cub::BlockScan and chained by a running carry; few long rows a cub::DeviceScan each
// (row_pass). 16-bit floats accumulate in float,
// integers in an unsigned type (overflow wraps, as on the CPU). nonzero's compaction:
// cub::DeviceSelect::Flagged of the positions 0, 1, ... by the mask's bytes.
#include <thrust/iterator/counting_iterator.h>

#include <thrust/iterator/transform_iterator.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
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

// A device-wide scan is compiled once per accumulator type (four), not per dtype: its
// input reads element i of a strided row as the accumulator, its output writes each
// result in the row's dtype, both picking the element type by a (warp-uniform) switch.
template <typename A, typename F>
__device__ __forceinline__ decltype(auto) with_elem(DType d, F&& f) {
  if constexpr (std::is_same_v<A, float>) {
    if (d == DType::F16) return f(half{});
    if (d == DType::BF16) return f(bf16{});
    return f(float{});
  } else if constexpr (std::is_same_v<A, double>) {
    return f(double{});
  } else if constexpr (std::is_same_v<A, uint64_t>) {
    return f(int64_t{});
  } else {
    static_assert(std::is_same_v<A, uint32_t>);
    if (d == DType::I32) return f(int32_t{});
    if (d == DType::U32) return f(uint32_t{});
    return f(uint8_t{});
  }
}

template <typename A>
struct LoadRow {
  const void* row;
  int64_t stride;
  DType d;
  __device__ A operator()(int64_t i) const {
    return with_elem<A>(d, [&](auto tag) {
      using T = decltype(tag);
      return load_acc<T, A>(static_cast<const T*>(row)[i * stride]);
    });
  }
};

template <typename A>
class StoreRow {
 public:
  struct Ref {
    void* p;
    int64_t i;
    DType d;
    __device__ Ref& operator=(A v) {
      with_elem<A>(d, [&](auto tag) {
        using T = decltype(tag);
        static_cast<T*>(p)[i] = store_acc<T, A>(v);
      });
      return *this;
    }
  };
  using iterator_category = std::random_access_iterator_tag;
  using value_type = A;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = Ref;

  __host__ __device__ StoreRow(void* row, int64_t first, DType d) : row_(row), first_(first), d_(d) {}
  __host__ __device__ Ref operator[](difference_type i) const { return Ref{row_, first_ + i, d_}; }
  __host__ __device__ Ref operator*() const { return (*this)[0]; }
  __host__ __device__ StoreRow operator+(difference_type n) const {
    return StoreRow(row_, first_ + n, d_);
  }

 private:
  void* row_;
  int64_t first_;
  DType d_;
};

// Each of the few long rows as one device-wide scan (rows one after another on the
// stream, one temporary buffer for all).
template <typename A, bool kProd>
void scan_device_wide(CudaDevice& dev, const Layout& src, const RowView& r, DType d,
                      const void* in, void* out, size_t elem) {
  auto run = [&](void* temp, size_t& bytes, int64_t row) {
    const char* x = static_cast<const char*>(in) + host_row_start(src, row) * int64_t(elem);
    char* y = static_cast<char*>(out) + row * r.n * int64_t(elem);
    const auto items = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0),
                                                       LoadRow<A>{x, r.stride, d});
    return cub::DeviceScan::InclusiveScan(temp, bytes, items, StoreRow<A>(y, 0, d),
                                          Combine<kProd>{}, r.n, dev.stream());
  };
  size_t bytes = 0;
  check(run(nullptr, bytes, 0), "cub::DeviceScan (temporary storage size)", &dev);
  Scratch temp(dev, std::max<size_t>(bytes, 1));
  for (int64_t row = 0; row < r.count; ++row)
    check(run(temp.as<void>(), bytes, row), "cub::DeviceScan", &dev);
}

template <typename T, bool kProd>
void launch_scan(const T* src, const RowView& r, T* dst, cudaStream_t stream) {
  const unsigned blocks = unsigned(std::min<int64_t>(r.count, int64_t(1) << 30));
  if (r.n <= 128)  // short rows: a warp each
    scan_rows<T, kProd, 32, 4><<<blocks, 32, 0, stream>>>(src, r, dst);
  else
    scan_rows<T, kProd, 256, 4><<<blocks, 256, 0, stream>>>(src, r, dst);
}

// An output iterator over positions (int64, or uint32 when the mask has fewer than 2**32
// elements) that drops writes at or past `limit`: the selection writes as many positions
// as it finds, and dst holds the count core read.
template <typename P>
class BoundedPositions {
 public:
  struct Ref {
    P* p;
    bool ok;
    __device__ Ref& operator=(P v) {
      if (ok) *p = v;
      return *this;
    }
  };
  using iterator_category = std::random_access_iterator_tag;
  using value_type = P;
  using difference_type = std::ptrdiff_t;
  using pointer = P*;
  using reference = Ref;

  __host__ __device__ BoundedPositions(P* base, int64_t limit) : base_(base), limit_(limit) {}
  __host__ __device__ Ref operator[](difference_type i) const { return Ref{base_ + i, i < limit_}; }
  __host__ __device__ Ref operator*() const { return (*this)[0]; }
  __host__ __device__ BoundedPositions operator+(difference_type n) const {
    return BoundedPositions(base_ + n, limit_ - n);
  }

 private:
  P* base_;
  int64_t limit_;
};

// A mask's shape, for the coordinates of its positions.
struct MaskShape {
  int64_t dims[kNonzeroMaxDims];
  int ndim;
};

// Each flat position as a row of coordinates (torch does the same second pass). P is
// uint32 when the mask has fewer than 2**32 elements: 32-bit divisions, a quarter of the
// cost of 64-bit ones, which dominate this kernel. kNd > 0 unrolls the dims; two
// coordinates go out as one 16-byte store.
template <typename P, int kNd>
__global__ void unravel(const P* flat, int64_t count, MaskShape shape, int64_t* out) {
  constexpr int kMax = kNd > 0 ? kNd : int(kNonzeroMaxDims);
  const int nd = kNd > 0 ? kNd : shape.ndim;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    P v = flat[i];
    int64_t c[kMax];
#pragma unroll
    for (int d = kMax - 1; d > 0; --d) {
      if (d >= nd) continue;
      const P size = P(shape.dims[d]);
      const P q = v / size;
      c[d] = int64_t(v - q * size);
      v = q;
    }
    c[0] = int64_t(v);
    if constexpr (kNd == 2) {
      reinterpret_cast<longlong2*>(out)[i] = make_longlong2(c[0], c[1]);
    } else {
#pragma unroll
      for (int d = 0; d < kMax; ++d)
        if (d < nd) out[i * nd + d] = c[d];
    }
  }
}

template <typename P>
void launch_unravel(const P* flat, int64_t count, const MaskShape& shape, int64_t* out,
                    cudaStream_t stream) {
  const unsigned grid = grid_for(count);
  if (shape.ndim == 2)
    unravel<P, 2><<<grid, kBlock, 0, stream>>>(flat, count, shape, out);
  else if (shape.ndim == 3)
    unravel<P, 3><<<grid, kBlock, 0, stream>>>(flat, count, shape, out);
  else
    unravel<P, 0><<<grid, kBlock, 0, stream>>>(flat, count, shape, out);
}

// The mask's true positions in order into `out` (at most `limit` of them), as P.
template <typename P>
void select_positions(CudaDevice& dev, const uint8_t* flags, int64_t n, P* into, int64_t limit,
                      cudaStream_t stream) {
  const thrust::counting_iterator<P> positions(0);
  const BoundedPositions<P> out(into, limit);
  Scratch selected(dev, sizeof(int64_t));
  auto run = [&](void* temp, size_t& bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, positions, flags, out,
                                      selected.as<int64_t>(), n, stream);
  };
  size_t bytes = 0;
  check(run(nullptr, bytes), "cub::DeviceSelect::Flagged (temporary storage size)", &dev);
  Scratch temp(dev, std::max<size_t>(bytes, 1));
  check(run(temp.as<void>(), bytes), "cub::DeviceSelect::Flagged", &dev);
}

}  // namespace

void CudaStorage::nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const {
  const int64_t n = src.numel(), nd = coordinates ? src.ndim() : 1;
  const int64_t limit = dst.numel() / nd;
  if (n == 0 || limit == 0) return;
  GpuScope scope(cuda().gpu());
  CudaDevice& dev = cuda();
  const uint8_t* flags = ptr<uint8_t>() + src.offset();
  int64_t* out = as_cuda(dst).ptr<int64_t>();
  if (nd == 1) {  // flat positions, or the one coordinate of a 1-D mask: straight into dst
    select_positions<int64_t>(dev, flags, n, out, limit, stream());
  } else {  // the flat positions into scratch first, then unravelled
    MaskShape shape{};
    shape.ndim = int(nd);
    for (int d = 0; d < shape.ndim; ++d) shape.dims[d] = src.dim(d);
    if (n <= int64_t(UINT32_MAX)) {
      Scratch flat(dev, size_t(limit) * sizeof(uint32_t));
      select_positions<uint32_t>(dev, flags, n, flat.as<uint32_t>(), limit, stream());
      launch_unravel<uint32_t>(flat.as<uint32_t>(), limit, shape, out, stream());
    } else {
      Scratch flat(dev, size_t(limit) * sizeof(int64_t));
      select_positions<int64_t>(dev, flags, n, flat.as<int64_t>(), limit, stream());
      launch_unravel<int64_t>(flat.as<int64_t>(), limit, shape, out, stream());
    }
  }
  dev.check_launch("nonzero");
}

void CudaStorage::scan(ScanOp op, const Layout& src, BackendStorage& dst) const {
  const char* name = op == ScanOp::Sum ? "cumsum" : "cumprod";
  const RowView r = row_view(name, src);
  if (r.count == 0) return;
  GpuScope scope(cuda().gpu());
  if (row_pass(r, false) == RowPass::DeviceWide) {
    dispatch(dtype_, [&](auto tag) {
      using A = scan_acc_t<decltype(tag)>;
      const size_t elem = dtype_size(dtype_);
      if (op == ScanOp::Sum)
        scan_device_wide<A, false>(cuda(), src, r, dtype_, ptr<void>(), as_cuda(dst).ptr<void>(),
                                   elem);
      else
        scan_device_wide<A, true>(cuda(), src, r, dtype_, ptr<void>(), as_cuda(dst).ptr<void>(),
                                  elem);
    });
    cuda().check_launch(name);
    return;
  }
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
