// Stable sort along the last dim (kernels/sort.metal): one lane per row sorts positions
// in a work buffer, then one lane per element takes the values, and one writes the int64
// indices. A simple kernel, correct for every row length; not a fast one for long rows.
#include <limits>
#include <string>

#include "../kernels/sort.h"
#include "launch.h"

namespace ember::metal {

void MetalStorage::sort(const Layout& src, bool descending, BackendStorage& values,
                        BackendStorage& indices) const {
  const int64_t nd = src.ndim();
  SortKParams p{};
  p.n = src.dim(nd - 1);
  const int64_t nrows = p.n == 0 ? 0 : src.numel() / p.n;
  if (nrows == 0) return;
  if (p.n > int64_t(std::numeric_limits<uint32_t>::max()))
    throw_invalid("sort", "rows of " + std::to_string(p.n) +
                              " elements are too long for Metal (at most 2^32 - 1); sort on "
                              "the CPU");
  const Shape lead(src.shape().begin(), src.shape().end() - 1);
  const Strides lead_strides(src.strides().begin(), src.strides().end() - 1);
  p.rows = kernel_layout("sort", Layout(lead, lead_strides, src.offset()));
  p.stride = src.strides().back();
  p.descending = descending ? 1 : 0;
  const std::string sfx = dtype_suffix(dtype_);
  // Two halves of uint positions per row: the merge passes go back and forth between them.
  std::unique_ptr<BackendStorage> work = metal().alloc_uninit(2 * src.numel(), DType::U32);
  const MetalStorage& w = as_metal(*work);
  launch_elementwise(metal(), "sort", "sort_rows_" + sfx, {this, &w}, p, nrows);
  launch_elementwise(metal(), "sort", "sort_take_" + sfx, {this, &w, &as_metal(values)}, p,
                     src.numel());
  launch_elementwise(metal(), "sort", "sort_positions_i64", {&w, &as_metal(indices)}, p,
                     src.numel());
}

}  // namespace ember::metal
