// Reductions over the trailing dims (kernels/reduce.metal): one threadgroup holds one or
// more outputs, the lanes of an output stride over its elements, then a tree combines.
#include <string>

#include "../kernels/reduce.h"
#include "launch.h"

namespace ember::metal {

void MetalStorage::reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
                          BackendStorage& dst) const {
  const char* name = reduce_name(op);
  const size_t nk = size_t(src.ndim() - reduced_dims);
  const Shape& sh = src.shape();
  const Strides& st = src.strides();
  const Shape kept_shape(sh.begin(), sh.begin() + nk), red_shape(sh.begin() + nk, sh.end());
  const Layout kept(kept_shape, Strides(st.begin(), st.begin() + nk), src.offset());
  const Layout red(red_shape, Strides(st.begin() + nk, st.end()), 0);

  ReduceKParams p{};
  p.nout = shape_numel(kept_shape);
  p.count = shape_numel(red_shape);
  if (p.nout == 0) return;
  p.kept = kernel_layout(name, kept);
  p.red = kernel_layout(name, red);
  const std::string kernel = std::string("reduce_") + name + "_" + dtype_suffix(dtype_);
  const uint32_t group = power_of_two_group(metal(), "reduce", kernel, EMBER_REDUCE_GROUP);
  uint32_t lanes = ember_reduce_lanes(p.count, group);
  // Reducing across rows of a dense block (e.g. sum over dim 0): neighbouring outputs are
  // neighbours in memory, so give each output few lanes and let the group's outputs read
  // in runs, as long as there are enough outputs to keep the GPU busy.
  const bool across_rows = !kept.strides().empty() && kept.strides().back() == 1 &&
                           !red.strides().empty() && red.strides().back() != 1;
  if (across_rows) {
    while (lanes > 1 && p.nout * int64_t(lanes) > 16384) lanes >>= 1;
  }
  p.lanes = lanes;
  p.rows = group / lanes;
  const int64_t groups = (p.nout + p.rows - 1) / p.rows;
  metal().dispatch("reduce", kernel, {this, &as_metal(dst)}, p, rt::Size3{uint32_t(groups), 1, 1},
                   rt::Size3{group, 1, 1});
}

}  // namespace ember::metal
