// softmax / log_softmax over the last dim (kernels/softmax.metal): the lanes of one row
// share a threadgroup; short rows share a group with other rows.
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

}  // namespace ember::metal
