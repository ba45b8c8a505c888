// Batched matmul (kernels/matmul.metal): one threadgroup per 32 x 32 output tile of one
// batch; inputs are read through their strides, so transposed views need no copy.
#include <algorithm>
#include <string>

#include "../kernels/matmul.h"
#include "metal_backend.h"

namespace ember::metal {

namespace {

// Batches per dispatch: grid z stays within what every Metal GPU accepts.
constexpr int64_t kMaxBatchesPerDispatch = 65535;

int64_t tiles(int64_t n) {
  return (n + EMBER_MM_TILE - 1) / EMBER_MM_TILE;
}

}  // namespace

void MetalStorage::matmul(const Layout& lhs, const BackendStorage& rhs, const Layout& rhs_layout,
                          BackendStorage& dst) const {
  const int64_t nd = lhs.ndim();
  const size_t nb = size_t(nd - 2);
  MatmulKParams p{};
  p.m = lhs.dim(nd - 2);
  p.k = lhs.dim(nd - 1);
  p.n = rhs_layout.dim(nd - 1);
  const Shape batch(lhs.shape().begin(), lhs.shape().begin() + nb);
  const int64_t batches = shape_numel(batch);
  if (batches == 0 || p.m == 0 || p.n == 0) return;
  p.sam = lhs.strides()[nb];
  p.sak = lhs.strides()[nb + 1];
  p.sbk = rhs_layout.strides()[nb];
  p.sbn = rhs_layout.strides()[nb + 1];
  const Layout a_batch(batch, Strides(lhs.strides().begin(), lhs.strides().begin() + nb),
                       lhs.offset());
  const Layout b_batch(batch,
                       Strides(rhs_layout.strides().begin(), rhs_layout.strides().begin() + nb),
                       rhs_layout.offset());
  const std::vector<StridedLayout> kl = kernel_layouts("matmul", {a_batch, b_batch});
  p.a_batch = kl[0];
  p.b_batch = kl[1];
  // 16 x 16 lanes a tile where the pipeline allows 256 threads, else 8 x 8 (dispatch
  // raises DeviceError where even 64 are too many).
  std::string kernel = std::string("matmul_tiled_") + dtype_suffix(dtype_);
  uint32_t lanes = EMBER_MM_LANES;
  if (metal().max_group("matmul", kernel) < uint32_t(EMBER_MM_LANES * EMBER_MM_LANES)) {
    kernel = std::string("matmul_small_") + dtype_suffix(dtype_);
    lanes = EMBER_MM_LANES_SMALL;
  }
  for (int64_t b0 = 0; b0 < batches; b0 += kMaxBatchesPerDispatch) {
    p.batch0 = b0;
    const int64_t nbatch = std::min(batches - b0, kMaxBatchesPerDispatch);
    metal().dispatch("matmul", kernel, {this, &as_metal(rhs), &as_metal(dst)}, p,
                     rt::Size3{uint32_t(tiles(p.n)), uint32_t(tiles(p.m)), uint32_t(nbatch)},
                     rt::Size3{lanes, lanes, 1});
  }
}

}  // namespace ember::metal
