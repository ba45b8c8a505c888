// where(cond, on_true, on_false) (kernels/where.metal): one lane per element. The
// kernel is chosen by cond's dtype and the values' element size, as values move as bits.
#include <algorithm>
#include <string>

#include "../kernels/where.h"
#include "launch.h"

namespace ember::metal {

void MetalStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                         const BackendStorage& on_false, const Layout& f_layout,
                         BackendStorage& dst, const Layout& dst_layout) const {
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  WhereKParams p{};
  const std::vector<StridedLayout> kl =
      kernel_layouts("where", {cond, t_layout, f_layout, dst_layout}, WalkOrder::Memory);
  std::copy(kl.begin(), kl.end(), p.l);
  const bool dense =
      std::all_of(kl.begin(), kl.end(), [](const StridedLayout& l) { return l.contiguous != 0; });
  const std::string kernel = std::string(dense ? "where_" : "where_strided_") +
                             dtype_suffix(dtype_) + "_b" +
                             std::to_string(8 * dtype_size(dst.dtype()));
  const KernelBuffers buffers{this, &as_metal(on_true), &as_metal(on_false), &as_metal(dst)};
  launch_elementwise(metal(), "where", kernel, buffers, p, n);
}

}  // namespace ember::metal
