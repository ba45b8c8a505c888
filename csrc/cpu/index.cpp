// index_select and gather. Indices were range-checked by core.
#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

template <typename I>
int64_t read_index(const CpuStorage& ids, int64_t off) {
  return int64_t(ids.ptr<I>()[off]);
}

int64_t index_at(const CpuStorage& ids, int64_t off) {
  switch (ids.dtype()) {
    case DType::I64: return read_index<int64_t>(ids, off);
    case DType::U32: return read_index<uint32_t>(ids, off);
    default: return read_index<uint8_t>(ids, off);
  }
}

}  // namespace

void CpuStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                              const Layout& ids_layout, BackendStorage& dst) const {
  // Each selected index is a strided copy of one slice: src.select(dim, id) -> dst.select(dim, j).
  Shape out_shape = src.shape();
  out_shape[size_t(dim)] = ids_layout.numel();
  Layout out(out_shape);
  const CpuStorage& id = as_cpu(ids);
  for (int64_t j = 0; j < ids_layout.numel(); ++j) {
    int64_t k = index_at(id, ids_layout.offset() + j * ids_layout.strides()[0]);
    copy_strided(src.select(dim, k), dst, out.select(dim, j));
  }
}

void CpuStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                        const Layout& ids_layout, BackendStorage& dst) const {
  const CpuStorage& id = as_cpu(ids);
  Layout out(ids_layout.shape());
  int64_t n = out.numel(), nd = out.ndim();
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>();
    T* o = as_cpu(dst).ptr<T>();
    parallel_for(n, kParallelGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t flat = lo; flat < hi; ++flat) {
        int64_t src_off = src.offset(), ids_off = ids_layout.offset();
        for (int64_t d = nd, r = flat; d-- > 0; r /= out.dim(d)) {
          int64_t i = r % out.dim(d);
          ids_off += i * ids_layout.strides()[size_t(d)];
          if (d != dim) src_off += i * src.strides()[size_t(d)];
        }
        o[flat] = in[src_off + index_at(id, ids_off) * src.strides()[size_t(dim)]];
      }
    });
  });
}

}  // namespace ember::cpu
