// Casts, strided copies and fills (kernels/copy.metal): one lane per element. Copies
// and fills move bits, so one kernel per element size serves every dtype.
#include <algorithm>
#include <cstring>
#include <string>

#include "../kernels/copy.h"
#include "core/host_cast.h"
#include "launch.h"

namespace ember::metal {

namespace {

std::string bits_suffix(DType d) {
  return "_b" + std::to_string(8 * dtype_size(d));
}

int64_t elements(const StridedLayout& l) {
  int64_t n = 1;
  for (uint32_t d = 0; d < l.ndim; ++d) n *= l.shape[d];
  return n;
}

// Calls fn(kernel layouts) for the views, or, when they merge into more than
// EMBER_MAX_DIMS dims, once per slice of their first dim: so contiguous() works on any
// view, and with it every other op.
template <typename Fn>
void in_blocks(const char* op, const std::vector<Layout>& views, const Fn& fn) {
  std::vector<StridedLayout> kl;
  try {
    kl = kernel_layouts(op, views, WalkOrder::Memory);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::InvalidArgument || views[0].ndim() <= EMBER_MAX_DIMS) throw;
    for (int64_t i = 0; i < views[0].dim(0); ++i) {
      std::vector<Layout> slice;
      for (const Layout& v : views) slice.push_back(v.select(0, i));
      in_blocks(op, slice, fn);
    }
    return;
  }
  fn(kl);
}

// One lane per element from src into dst: `dense` or `strided` + suffix names the kernel.
void copy_elements(const MetalStorage& from, const char* op, const std::string& dense,
                   const std::string& strided, const Layout& src, BackendStorage& dst,
                   const Layout& dst_layout) {
  in_blocks(op, {src, dst_layout}, [&](const std::vector<StridedLayout>& kl) {
    CopyKParams p{};
    p.l[0] = kl[0];
    p.l[1] = kl[1];
    const bool is_dense = kl[0].contiguous && kl[1].contiguous;
    launch_elementwise(from.metal(), "copy", is_dense ? dense : strided, {&from, &as_metal(dst)}, p,
                       elements(kl[0]));
  });
}

}  // namespace

void MetalStorage::cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const {
  if (dst.dtype() == dtype_) return copy_strided(src, dst, dst_layout);
  if (dst_layout.numel() == 0) return;
  const std::string types = std::string(dtype_suffix(dtype_)) + "_" + dtype_suffix(dst.dtype());
  copy_elements(*this, "to_dtype", "copy_cast_" + types, "copy_cast_strided_" + types, src, dst,
                dst_layout);
}

void MetalStorage::copy_strided(const Layout& src, BackendStorage& dst,
                                const Layout& dst_layout) const {
  if (dst_layout.numel() == 0) return;
  const std::string bits = bits_suffix(dtype_);
  if (copy_tiled(src, dst, dst_layout)) return;
  copy_elements(*this, "copy", "copy_bits" + bits, "copy_bits_strided" + bits, src, dst,
                dst_layout);
}

bool MetalStorage::copy_tiled(const Layout& src, BackendStorage& dst,
                              const Layout& dst_layout) const {
  if (src.ndim() > EMBER_MAX_DIMS) return false;
  const std::vector<StridedLayout> kl = kernel_layouts("copy", {src, dst_layout}, WalkOrder::Memory);
  const uint32_t nd = kl[0].ndim;
  // the plan's last two dims: dst dense along the last, src dense along the one before
  // and stepping along the last (a transpose); both long enough to fill tiles
  if (nd < 2 || kl[1].strides[nd - 1] != 1 || kl[0].strides[nd - 2] != 1 ||
      kl[0].strides[nd - 1] == 1 || kl[0].shape[nd - 1] < 8 || kl[0].shape[nd - 2] < 8)
    return false;
  TileKParams p{};
  p.rows = kl[0].shape[nd - 2];
  p.cols = kl[0].shape[nd - 1];
  p.src_col_step = kl[0].strides[nd - 1];
  p.dst_row_step = kl[1].strides[nd - 2];
  p.tiles_c = (p.cols + EMBER_TILE - 1) / EMBER_TILE;
  p.tiles = p.tiles_c * ((p.rows + EMBER_TILE - 1) / EMBER_TILE);
  Shape batch;
  Strides sb, db;
  for (uint32_t d = 0; d + 2 < nd; ++d) {
    batch.push_back(kl[0].shape[d]);
    sb.push_back(kl[0].strides[d]);
    db.push_back(kl[1].strides[d]);
  }
  const int64_t groups = shape_numel(batch) * p.tiles;
  if (groups > int64_t(UINT32_MAX)) return false;
  const std::vector<StridedLayout> bl = kernel_layouts(
      "copy", {Layout(batch, sb, kl[0].offset), Layout(batch, db, kl[1].offset)});
  p.batch[0] = bl[0];
  p.batch[1] = bl[1];
  const std::string kernel = "copy_bits_tiled" + bits_suffix(dtype_);
  if (metal().max_group("copy", kernel) < EMBER_TILE * EMBER_TILE_ROWS) return false;
  metal().dispatch("copy", kernel, {this, &as_metal(dst)}, p, rt::Size3{uint32_t(groups), 1, 1},
                   rt::Size3{EMBER_TILE * EMBER_TILE_ROWS, 1, 1});
  return true;
}

void MetalStorage::fill(const Layout& dst_layout, double value) {
  if (dst_layout.numel() == 0) return;
  // converted here exactly as the CPU does, and passed as bits: nothing is lost on the way
  int64_t bits = 0;
  dispatch_dtype(dtype_, [&](auto tag) {
    const auto v = saturate_cast<decltype(tag)>(value);
    std::memcpy(&bits, &v, sizeof(v));
  });
  const std::string size = bits_suffix(dtype_);
  in_blocks("full", {dst_layout}, [&](const std::vector<StridedLayout>& kl) {
    FillKParams p{};
    p.dst = kl[0];
    p.bits = bits;
    launch_elementwise(metal(), "copy",
                       (kl[0].contiguous ? "copy_fill" : "copy_fill_strided") + size, {this}, p,
                       elements(kl[0]));
  });
}

}  // namespace ember::metal
