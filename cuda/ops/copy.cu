// Casts between dtypes, strided copies and fills.
#include "elementwise.cuh"

namespace ember::cuda {

namespace {

// One element from S to D, as the CPU converts: float -> integer saturates (NaN gives 0),
// integers and doubles reach the 16-bit floats with one rounding.
template <typename D, typename S>
struct Convert {
  __device__ D operator()(S x) const {
    if constexpr (std::is_same_v<D, S>) {
      return x;
    } else if constexpr (is_float_v<S> && std::is_integral_v<D>) {
      return saturate_from_double<D>(double(to_c(x)));
    } else if constexpr (is_half_v<D> && (std::is_same_v<S, double> || std::is_integral_v<S>)) {
      return saturate_from_double<D>(double(x));
    } else if constexpr (is_half_v<D>) {
      return from_c<D>(float(to_c(x)));
    } else {
      return D(to_c(x));
    }
  }
};

template <typename T>
struct Identity {
  __device__ T operator()(T x) const { return x; }
};

template <typename T>
__global__ void fill_dense(T* o, int64_t n, T v) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) o[i] = v;
}

template <typename T>
__global__ void fill_strided(T* o, int64_t n, Walk<1> w, T v) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1];
    walk_offsets(w, i, off);
    o[off[0]] = v;
  }
}

}  // namespace

void CudaStorage::cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const {
  dispatch(dtype_, [&](auto stag) {
    using S = decltype(stag);
    dispatch(dst.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      launch_map1("to_dtype", cuda(), ptr<S>(), src, as_cuda(dst).ptr<D>(), dst_layout,
                  Convert<D, S>{});
    });
  });
}

void CudaStorage::copy_strided(const Layout& src, BackendStorage& dst,
                               const Layout& dst_layout) const {
  const size_t es = dtype_size(dtype_);
  const int64_t n = src.numel();
  if (n == 0) return;
  if (src.is_contiguous() && dst_layout.is_contiguous()) {
    GpuScope scope(cuda().gpu());
    check(cudaMemcpyAsync(as_cuda(dst).ptr<char>() + dst_layout.offset() * es,
                          ptr<char>() + src.offset() * es, size_t(n) * es, cudaMemcpyDeviceToDevice,
                          stream()),
          "cudaMemcpyAsync", device_.get());
    return;
  }
  dispatch_width(es, [&](auto tag) {  // copies move bits: one kernel per element size
    using B = decltype(tag);
    launch_map1("copy", cuda(), ptr<B>(), src, as_cuda(dst).ptr<B>(), dst_layout, Identity<B>{});
  });
}

void CudaStorage::fill(const Layout& dst_layout, double value) {
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T v = host_value<T>(value);
    dispatch_width(sizeof(T), [&](auto btag) {
      using B = decltype(btag);
      B bits;
      std::memcpy(&bits, &v, sizeof bits);
      GpuScope scope(cuda().gpu());
      if (dst_layout.is_contiguous()) {
        fill_dense<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>() + dst_layout.offset(), n, bits);
      } else {
        Walk<1> w = make_walk<1>("fill", dst_layout.shape(), {&dst_layout});
        fill_strided<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>(), n, w, bits);
      }
      cuda().check_launch("fill");
    });
  });
}

}  // namespace ember::cuda
