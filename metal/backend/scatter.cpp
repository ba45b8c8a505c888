// scatter and scatter_add (kernels/scatter.metal): one lane per row of the other dims.
// Kernels are named by op, the data's dtype and the ids' dtype (int64, uint32 or uint8).
#include <string>

#include "../kernels/scatter.h"
#include "launch.h"

namespace ember::metal {

namespace {

// int32 runs uint32's kernels (same bits; wrapping adds agree); bool's add is an or.
std::string scatter_kernel(bool accumulate, DType data, DType ids) {
  const char* d = data == DType::I32 ? "u32" : dtype_suffix(data);
  if (accumulate && data == DType::Bool) d = "b8";
  return std::string(accumulate ? "scatter_add_" : "scatter_") + d + "_" + dtype_suffix(ids);
}

// `l` over the index's shape with 1 in `dim`: its rows' first elements.
Layout rows_of(const Layout& l, const Shape& shape, int64_t dim) {
  Shape rows = shape;
  rows[size_t(dim)] = 1;
  return Layout(rows, l.strides(), l.offset());
}

}  // namespace

void MetalStorage::scatter(const Layout& dst_layout, int64_t dim, const BackendStorage& ids,
                           const Layout& ids_layout, const BackendStorage& src,
                           const Layout& src_layout, bool accumulate, bool unique_ids) {
  const Shape& shape = ids_layout.shape();
  if (ids_layout.numel() == 0) return;
  ScatterKParams p{};
  if (unique_ids) {
    // No id repeats along dim: no order to keep, so every element is a row of one, a lane
    // each (dst's layout with stride 0 in dim gives the element's row start).
    Strides zero = dst_layout.strides();
    zero[size_t(dim)] = 0;
    const std::vector<StridedLayout> kl = kernel_layouts(
        "scatter", {Layout(shape, zero, dst_layout.offset()), ids_layout, src_layout});
    p.dst = kl[0];
    p.ids = kl[1];
    p.src = kl[2];
    p.len = 1;
    p.dst_stride = dst_layout.strides()[size_t(dim)];
    launch_elementwise(metal(), "scatter", scatter_kernel(accumulate, dtype_, ids.dtype()),
                       {&as_metal(ids), &as_metal(src), this}, p, ids_layout.numel());
    return;
  }
  // One lane per row of the other dims, which walks its ids in order.
  const std::vector<StridedLayout> kl =
      kernel_layouts("scatter", {rows_of(dst_layout, shape, dim), rows_of(ids_layout, shape, dim),
                                 rows_of(src_layout, shape, dim)});
  p.dst = kl[0];
  p.ids = kl[1];
  p.src = kl[2];
  p.len = shape[size_t(dim)];
  p.dst_stride = dst_layout.strides()[size_t(dim)];
  p.ids_stride = ids_layout.strides()[size_t(dim)];
  p.src_stride = src_layout.strides()[size_t(dim)];
  // The written buffer goes last (the queue tracks writes by position).
  launch_elementwise(metal(), "scatter", scatter_kernel(accumulate, dtype_, ids.dtype()),
                     {&as_metal(ids), &as_metal(src), this}, p, ids_layout.numel() / p.len);
}

}  // namespace ember::metal
