// index_select and gather: one thread per output element; the data moves as bits (one
// kernel per element width and ids dtype: int64, uint32 or uint8).
#include "common.cuh"

namespace ember::cuda {

namespace {

// `src` re-shaped to `shape` with stride 0 in `dim`: the id's row is added separately.
Layout without_dim(const Layout& src, const Shape& shape, int64_t dim) {
  Strides st = src.strides();
  st[size_t(dim)] = 0;
  return Layout(shape, st, src.offset());
}

struct SelectParams {
  Walk<1> src;  // dst's shape, src's strides, 0 in dim
  int64_t ids_offset, ids_stride, dim_stride, nsel, inner;
};

template <typename B, typename I>
__global__ void index_select_kernel(const B* src, const I* ids, B* dst, int64_t n, SelectParams p) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1];
    walk_offsets(p.src, i, off);
    const int64_t j = (i / p.inner) % p.nsel;
    dst[i] = src[off[0] + int64_t(ids[p.ids_offset + j * p.ids_stride]) * p.dim_stride];
  }
}

template <typename B, typename I>
__global__ void gather_kernel(const B* src, const I* ids, B* dst, int64_t n, Walk<2> w,
                              int64_t dim_stride) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    walk_offsets(w, i, off);
    dst[i] = src[off[0] + int64_t(ids[off[1]]) * dim_stride];
  }
}

// Calls f(B{}, I{}): the data's bit width and the ids' type.
template <typename F>
void dispatch_index(DType data, DType ids, F&& f) {
  dispatch_width(dtype_size(data), [&](auto b) {
    switch (ids) {
      case DType::I64: return f(b, int64_t{});
      case DType::U32: return f(b, uint32_t{});
      case DType::U8: return f(b, uint8_t{});
      default: throw_invalid("index", "indices must be an integer tensor");
    }
  });
}

}  // namespace

void CudaStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                               const Layout& ids_layout, BackendStorage& dst) const {
  Shape out = src.shape();
  out[size_t(dim)] = ids_layout.numel();
  const int64_t n = shape_numel(out);
  if (n == 0) return;
  SelectParams p;
  Layout sl = without_dim(src, out, dim);
  p.src = make_walk<1>("index_select", out, {&sl});
  p.ids_offset = ids_layout.offset();
  p.ids_stride = ids_layout.strides()[0];
  p.dim_stride = src.strides()[size_t(dim)];
  p.nsel = ids_layout.numel();
  p.inner = 1;
  for (size_t d = size_t(dim) + 1; d < out.size(); ++d) p.inner *= out[d];
  GpuScope scope(cuda().gpu());
  dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
    using B = decltype(b);
    using I = decltype(i);
    index_select_kernel<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(),
                                                              as_cuda(dst).ptr<B>(), n, p);
  });
  cuda().check_launch("index_select");
}

void CudaStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                         const Layout& ids_layout, BackendStorage& dst) const {
  const int64_t n = ids_layout.numel();
  if (n == 0) return;
  Layout sl = without_dim(src, ids_layout.shape(), dim);
  Walk<2> w = make_walk<2>("gather", ids_layout.shape(), {&sl, &ids_layout});
  const int64_t dim_stride = src.strides()[size_t(dim)];
  GpuScope scope(cuda().gpu());
  dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
    using B = decltype(b);
    using I = decltype(i);
    gather_kernel<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(),
                                                        as_cuda(dst).ptr<B>(), n, w, dim_stride);
  });
  cuda().check_launch("gather");
}

}  // namespace ember::cuda
