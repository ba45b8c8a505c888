// Binary arithmetic and comparisons (kernels/binary.metal, kernels/cmp.metal): one lane
// per element; lhs and rhs arrive broadcast to dst's shape, so a dim of stride 0 reads
// one element many times. Both families share this launch; cmp writes uint8.
#include <algorithm>
#include <string>

#include "../kernels/binary.h"
#include "launch.h"

namespace ember::metal {

namespace {

void launch_two_inputs(const MetalStorage& lhs, const char* family, const char* op,
                       const Layout& lhs_layout, const BackendStorage& rhs,
                       const Layout& rhs_layout, BackendStorage& dst, const Layout& dst_layout) {
  const int64_t n = dst_layout.numel();
  if (n == 0) return;
  BinaryKParams p{};
  const std::vector<StridedLayout> kl = kernel_layouts(op, {lhs_layout, rhs_layout, dst_layout}, WalkOrder::Memory);
  std::copy(kl.begin(), kl.end(), p.l);
  const bool dense = kl[0].contiguous && kl[1].contiguous && kl[2].contiguous;
  launch_elementwise(lhs.metal(), family, kernel_name(family, op, dense, lhs.dtype()),
                     {&lhs, &as_metal(rhs), &as_metal(dst)}, p, n);
}

}  // namespace

void MetalStorage::binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                          const Layout& rhs_layout, BackendStorage& dst,
                          const Layout& dst_layout) const {
  launch_two_inputs(*this, "binary", binary_name(op), lhs, rhs, rhs_layout, dst, dst_layout);
}

void MetalStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                       const Layout& rhs_layout, BackendStorage& dst,
                       const Layout& dst_layout) const {
  launch_two_inputs(*this, "cmp", cmp_name(op), lhs, rhs, rhs_layout, dst, dst_layout);
}

}  // namespace ember::metal
