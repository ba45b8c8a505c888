// softmax / log_softmax over the last dim (kernels/softmax.metal): the lanes of one row
// share a threadgroup; short rows share a group with other rows. Over another dim of a
// contiguous tensor (softmax_columns), neighbouring rows take neighbouring lanes.
#include <string>

#include "../kernels/softmax.h"
#include "launch.h"

namespace ember::metal {

void MetalStorage::softmax(const Layout& src, bool log, BackendStorage& dst) const {
  const char* name = log ? "log_softmax" : "softmax";
  const int64_t nd = src.ndim();
  SoftmaxKParams p{};
  p.n = src.dim(nd - 1);
  p.nrows = p.n == 0 ? 0 : src.numel() / p.n;
  if (p.nrows == 0) return;
  const Shape lead(src.shape().begin(), src.shape().end() - 1);
  const Strides lead_strides(src.strides().begin(), src.strides().end() - 1);
  p.rows = kernel_layout(name, Layout(lead, lead_strides, src.offset()));
  p.stride = src.strides().back();
  const std::string kernel = std::string("softmax_") + name + "_" + dtype_suffix(dtype_);
  const uint32_t group = power_of_two_group(metal(), "softmax", kernel, EMBER_REDUCE_GROUP);
  p.lanes = ember_reduce_lanes(p.n, group);
  p.rows_per_group = group / p.lanes;
  const int64_t groups = (p.nrows + p.rows_per_group - 1) / p.rows_per_group;
  metal().dispatch("softmax", kernel, {this, &as_metal(dst)}, p, rt::Size3{uint32_t(groups), 1, 1},
                   rt::Size3{group, 1, 1});
}

bool MetalStorage::softmax_columns(const Layout& src, int64_t dim, bool log,
                                   BackendStorage& dst) const {
  const char* name = log ? "log_softmax" : "softmax";
  SoftmaxKParams p{};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.dim(d);
  for (int64_t d = dim + 1; d < src.ndim(); ++d) inner *= src.dim(d);
  p.n = src.dim(dim);
  p.nrows = outer * inner;
  if (p.nrows == 0 || p.n == 0) return true;
  // the rows (columns of the [outer, n, inner] view) start at o * n * inner + i
  p.rows = kernel_layout(name, Layout(Shape{outer, inner}, Strides{p.n * inner, 1}, src.offset()));
  p.stride = inner;
  p.src_offset = src.offset();
  p.columns = 1;
  const std::string kernel = std::string("softmax_") + name + "_" + dtype_suffix(dtype_);
  const uint32_t group = power_of_two_group(metal(), "softmax", kernel, EMBER_REDUCE_GROUP);
  // neighbouring rows on neighbouring lanes, as the column reductions (reduce.h)
  const uint32_t rows = ember_column_outputs(p.nrows, group);
  p.rows_per_group = rows;
  p.lanes = group / rows;
  const int64_t groups = (p.nrows + rows - 1) / rows;
  metal().dispatch("softmax", kernel, {this, &as_metal(dst)}, p, rt::Size3{uint32_t(groups), 1, 1},
                   rt::Size3{group, 1, 1});
  return true;
}

}  // namespace ember::metal
