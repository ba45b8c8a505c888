// index_select and gather (kernels/index.metal): one lane per output element. Kernels
// are named by the data's dtype and the ids' dtype (int64, uint32 or uint8).
#include <algorithm>
#include <string>

#include "../kernels/index.h"
#include "core/fast_div.h"
#include "launch.h"

namespace ember::metal {

namespace {

// int32 data moves as uint32's bits: index kernels copy elements, never compute on them.
std::string index_kernel(const char* op, DType data, DType ids) {
  const char* d = data == DType::I32 ? "u32" : dtype_suffix(data);
  return std::string("index_") + op + "_" + d + "_" + dtype_suffix(ids);
}

// `src` re-shaped to `shape` with stride 0 in `dim`: the id's row is added separately.
Layout without_dim(const Layout& src, const Shape& shape, int64_t dim) {
  Strides st = src.strides();
  st[size_t(dim)] = 0;
  return Layout(shape, st, src.offset());
}

}  // namespace

void MetalStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                                const Layout& ids_layout, BackendStorage& dst) const {
  Shape out = src.shape();
  out[size_t(dim)] = ids_layout.numel();
  IndexSelectKParams p{};
  const int64_t n = shape_numel(out);
  if (n == 0) return;
  p.src = kernel_layout("index_select", without_dim(src, out, dim));
  p.ids_offset = ids_layout.offset();
  p.ids_stride = ids_layout.strides()[0];
  p.dim_stride = src.strides()[size_t(dim)];
  p.nsel = ids_layout.numel();
  p.inner = 1;
  for (size_t d = size_t(dim) + 1; d < out.size(); ++d) p.inner *= out[d];
  if (p.src.narrow) {
    const FastDivParams a = fast_div_params(uint32_t(std::max<int64_t>(p.inner, 1)));
    const FastDivParams b = fast_div_params(uint32_t(std::max<int64_t>(p.nsel, 1)));
    p.inner_magic = a.magic, p.inner_shift = a.shift;
    p.nsel_magic = b.magic, p.nsel_shift = b.shift;
  }
  launch_elementwise(metal(), "index", index_kernel("select", dtype_, ids.dtype()),
                     {this, &as_metal(ids), &as_metal(dst)}, p, n);
}

void MetalStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                          const Layout& ids_layout, BackendStorage& dst) const {
  GatherKParams p{};
  const int64_t n = ids_layout.numel();
  if (n == 0) return;
  const std::vector<StridedLayout> kl =
      kernel_layouts("gather", {without_dim(src, ids_layout.shape(), dim), ids_layout});
  p.l[0] = kl[0];
  p.l[1] = kl[1];
  p.dim_stride = src.strides()[size_t(dim)];
  launch_elementwise(metal(), "index", index_kernel("gather", dtype_, ids.dtype()),
                     {this, &as_metal(ids), &as_metal(dst)}, p, n);
}

}  // namespace ember::metal
