// Comparisons into uint8 (kernels/cmp.metal): one lane per element; lhs and rhs arrive
// broadcast to dst's shape, so a dim of stride 0 reads one element many times.
#include <algorithm>
#include <string>

#include "../kernels/cmp.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

// gid.x is 32 bits wide: bigger views go in chunks.
constexpr int64_t kChunk = int64_t(1) << 30;

}  // namespace

void MetalStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                       const Layout& rhs_layout, BackendStorage& dst,
                       const Layout& dst_layout) const {
  const char* name = cmp_name(op);
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  CmpKParams p{};
  const std::vector<StridedLayout> kl = kernel_layouts(name, {lhs, rhs_layout, dst_layout});
  std::copy(kl.begin(), kl.end(), p.l);
  const bool dense = kl[0].contiguous && kl[1].contiguous && kl[2].contiguous;
  const std::string kernel =
      std::string("cmp_") + name + (dense ? "_" : "_strided_") + dtype_suffix(dtype_);
  for (int64_t s = 0; s < n; s += kChunk) {
    p.start = s;
    p.count = std::min(kChunk, n - s);
    metal().dispatch_1d("cmp", kernel, {this, &as_metal(rhs), &as_metal(dst)}, p, p.count);
  }
}

}  // namespace ember::metal
