// cumsum / cumprod along the last dim (kernels/scan.metal): one threadgroup per row, its
// lanes each scanning a run of about 8 or more elements; few long rows in chunks over
// many threadgroups (chunk totals, their offsets, each chunk's scan). nonzero's compaction: a count
// per threadgroup, their scan (the cumsum above), then each group writes its positions.
#include <algorithm>
#include <memory>
#include <string>

#include "../kernels/scan.h"
#include "launch.h"

namespace ember::metal {

void MetalStorage::scan(ScanOp op, const Layout& src, BackendStorage& dst) const {
  const char* name = op == ScanOp::Sum ? "cumsum" : "cumprod";
  const int64_t nd = src.ndim();
  ScanKParams p{};
  p.n = src.dim(nd - 1);
  p.nrows = p.n == 0 ? 0 : src.numel() / p.n;
  if (p.nrows == 0) return;
  const Shape lead(src.shape().begin(), src.shape().end() - 1);
  const Strides lead_strides(src.strides().begin(), src.strides().end() - 1);
  p.rows = kernel_layout(name, Layout(lead, lead_strides, src.offset()));
  p.stride = src.strides().back();
  const std::string kernel = std::string("scan_") + name + "_" + dtype_suffix(dtype_);
  const uint32_t group = power_of_two_group(metal(), "scan", kernel, EMBER_REDUCE_GROUP);
  uint32_t lanes = 1;
  while (lanes < group && int64_t(lanes) * 8 < p.n) lanes <<= 1;
  p.chunks = 1;
  p.per_chunk = p.n;
  // Few long rows: chunks of at least 8 elements a lane over enough threadgroups to fill
  // the GPU (as the reductions split theirs), in three dispatches (scan.h).
  constexpr int64_t kWantGroups = 256;
  const int64_t min_chunk = int64_t(lanes) * 32;
  if (p.nrows < kWantGroups && p.n >= 2 * min_chunk) {
    p.chunks = std::min((kWantGroups + p.nrows - 1) / p.nrows, p.n / min_chunk);
    p.per_chunk = (p.n + p.chunks - 1) / p.chunks;
    p.chunks = (p.n + p.per_chunk - 1) / p.per_chunk;
  }
  if (p.chunks > 1) {
    const std::string suffix = std::string("_") + dtype_suffix(dtype_);
    const std::string stem = std::string("scan_") + name;
    p.first_row = 0;
    std::unique_ptr<BackendStorage> offsets = metal().alloc_uninit(p.nrows * p.chunks, DType::I64);
    const MetalStorage& o = as_metal(*offsets);
    const rt::Size3 grid{uint32_t(p.nrows * p.chunks), 1, 1}, lanes3{lanes, 1, 1};
    metal().dispatch("scan", stem + "_totals" + suffix, {this, &o}, p, grid, lanes3);
    metal().dispatch_1d("scan", stem + "_offsets" + suffix, {&o}, p, p.nrows);
    metal().dispatch("scan", stem + "_chunks" + suffix, {this, &o, &as_metal(dst)}, p, grid, lanes3);
    return;
  }
  for (int64_t r = 0; r < p.nrows; r += kElementwiseChunk) {  // tgid.x is 32 bits wide
    p.first_row = r;
    const int64_t groups = std::min(kElementwiseChunk, p.nrows - r);
    metal().dispatch("scan", kernel, {this, &as_metal(dst)}, p, rt::Size3{uint32_t(groups), 1, 1},
                     rt::Size3{lanes, 1, 1});
  }
}

void MetalStorage::nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const {
  NonzeroKParams p{};
  p.n = src.numel();
  p.offset = src.offset();
  p.ndim = coordinates ? uint32_t(src.ndim()) : 1;
  for (int64_t d = 0; coordinates && d < src.ndim(); ++d) p.shape[d] = src.dim(d);
  p.limit = dst.numel() / p.ndim;
  if (p.n == 0 || p.limit == 0) return;
  const uint32_t group =
      power_of_two_group(metal(), "scan", "scan_nonzero_write_i64", EMBER_REDUCE_GROUP);
  p.per_lane = 16;
  p.chunk = p.per_lane * group;
  const int64_t groups = (p.n + p.chunk - 1) / p.chunk;
  std::unique_ptr<BackendStorage> counts = metal().alloc_uninit(groups, DType::I64);
  std::unique_ptr<BackendStorage> ends = metal().alloc_uninit(groups, DType::I64);
  const MetalStorage& c = as_metal(*counts);
  const MetalStorage& e = as_metal(*ends);
  for (int64_t g = 0; g < groups; g += kElementwiseChunk) {  // tgid.x is 32 bits wide
    p.first_group = g;
    metal().dispatch("scan", "scan_nonzero_count_i64", {this, &c}, p,
                     rt::Size3{uint32_t(std::min(kElementwiseChunk, groups - g)), 1, 1},
                     rt::Size3{group, 1, 1});
  }
  c.scan(ScanOp::Sum, Layout(Shape{groups}), *ends);
  for (int64_t g = 0; g < groups; g += kElementwiseChunk) {
    p.first_group = g;
    metal().dispatch("scan", "scan_nonzero_write_i64", {this, &e, &as_metal(dst)}, p,
                     rt::Size3{uint32_t(std::min(kElementwiseChunk, groups - g)), 1, 1},
                     rt::Size3{group, 1, 1});
  }
}

}  // namespace ember::metal
