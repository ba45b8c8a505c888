// where(cond, on_true, on_false) (kernels/where.metal): one lane per element. The
// kernel is chosen by cond's dtype and the values' element size, as values move as bits.
#include <algorithm>
#include <string>

#include "../kernels/where.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

// gid.x is 32 bits wide: bigger views go in chunks.
constexpr int64_t kChunk = int64_t(1) << 30;

}  // namespace

void MetalStorage::where(const Layout& cond, const BackendStorage& on_true, const Layout& t_layout,
                         const BackendStorage& on_false, const Layout& f_layout,
                         BackendStorage& dst, const Layout& dst_layout) const {
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  WhereKParams p{};
  const std::vector<StridedLayout> kl =
      kernel_layouts("where", {cond, t_layout, f_layout, dst_layout});
  std::copy(kl.begin(), kl.end(), p.l);
  const bool dense =
      std::all_of(kl.begin(), kl.end(), [](const StridedLayout& l) { return l.contiguous != 0; });
  const std::string kernel = std::string(dense ? "where_" : "where_strided_") +
                             dtype_suffix(dtype_) + "_b" +
                             std::to_string(8 * dtype_size(dst.dtype()));
  const KernelBuffers buffers{this, &as_metal(on_true), &as_metal(on_false), &as_metal(dst)};
  for (int64_t s = 0; s < n; s += kChunk) {
    p.start = s;
    p.count = std::min(kChunk, n - s);
    metal().dispatch_1d("where", kernel, buffers, p, p.count);
  }
}

}  // namespace ember::metal
