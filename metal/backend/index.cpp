// index_select and gather (kernels/index.metal): one lane per output element. Kernels
// are named by the data's dtype and the ids' dtype (int64, uint32 or uint8).
// gather_points and index_bounds: lanes a wave of threadgroups apart, each group's bounds
// merged here.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../kernels/index.h"
#include "core/fast_div.h"
#include "launch.h"

namespace ember::metal {

namespace {

// int32 data moves as uint32's bits: index kernels copy elements, never compute on them.
std::string index_kernel(const char* op, DType data, DType ids) {
  const char* d = data == DType::I32 ? "u32" : dtype_suffix(data);
  return std::string("index_") + op + "_" + d + "_" + dtype_suffix(ids);
}

// The kernels that move elements without reading them as numbers are named by their size.
const char* bits_suffix(DType d) {
  switch (dtype_size(d)) {
    case 1: return "b8";
    case 2: return "b16";
    case 4: return "b32";
    default: return "b64";
  }
}

// `src` re-shaped to `shape` with stride 0 in `dim`: the id's row is added separately.
Layout without_dim(const Layout& src, const Shape& shape, int64_t dim) {
  Strides st = src.strides();
  st[size_t(dim)] = 0;
  return Layout(shape, st, src.offset());
}

// Groups of the bounds kernels: one lane per element up to a wave of groups, whose lanes
// then loop, so that the bounds come back as a few thousand words, not a pair per group
// of a huge tensor.
int64_t bounds_groups(int64_t count, uint32_t group) {
  constexpr int64_t kMaxGroups = 1024;
  return std::min(kMaxGroups, (count + group - 1) / group);
}

// The smallest and largest of the n arrays' bounds that `groups` groups stored
// (EMBER_POINTS_MAX pairs each in `words`, or one pair each when stride is 1).
void merge_bounds(const std::vector<int64_t>& words, int64_t groups, int64_t stride, size_t n,
                  int64_t* lo, int64_t* hi) {
  for (size_t k = 0; k < n; ++k) {
    lo[k] = std::numeric_limits<int64_t>::max();
    hi[k] = std::numeric_limits<int64_t>::min();
    for (int64_t g = 0; g < groups; ++g) {
      lo[k] = std::min(lo[k], words[size_t((g * stride + int64_t(k)) * 2)]);
      hi[k] = std::max(hi[k], words[size_t((g * stride + int64_t(k)) * 2 + 1)]);
    }
  }
}

}  // namespace

// index_select by rows (IndexRowsKParams) where src's dims after `dim` are one dense run
// and those before it one stride; false otherwise.
bool MetalStorage::index_select_rows(const Layout& src, int64_t dim, const BackendStorage& ids,
                                     const Layout& ids_layout, BackendStorage& dst) const {
  const Shape& shape = src.shape();
  const Strides& st = src.strides();
  IndexRowsKParams p{};
  p.inner = 1;
  for (int64_t d = src.ndim() - 1; d > dim; --d) {  // the run: dense, stride 1 inward
    if (shape[size_t(d)] != 1 && st[size_t(d)] != p.inner) return false;
    p.inner *= shape[size_t(d)];
  }
  int64_t outer = 1, step = 0;  // the dims before: one stride (step) over `outer` positions
  for (int64_t d = dim - 1; d >= 0; --d) {
    if (shape[size_t(d)] == 1) continue;
    if (outer == 1)
      step = st[size_t(d)];
    else if (st[size_t(d)] != step * outer)
      return false;
    outer *= shape[size_t(d)];
  }
  p.nsel = ids_layout.numel();
  const int64_t rows = outer * p.nsel;
  if (rows == 0 || p.inner == 0) return true;
  p.src_offset = src.offset();
  p.outer_stride = step;
  p.dim_stride = st[size_t(dim)];
  p.ids_offset = ids_layout.offset();
  p.ids_stride = ids_layout.strides()[0];
  if (rows <= int64_t(INT32_MAX)) {
    const FastDivParams f = fast_div_params(uint32_t(p.nsel));
    p.narrow = 1;
    p.nsel_magic = f.magic;
    p.nsel_shift = f.shift;
  }
  const std::string kernel =
      std::string("index_rows_") + bits_suffix(dtype_) + "_" + dtype_suffix(ids.dtype());
  // groups of 256 lanes: along a row up to its length (a power of two), the rest across rows
  const uint32_t max = std::min<uint32_t>(256, metal().max_group("index", kernel));
  uint32_t gx = 1;
  while (gx * 2 <= max && int64_t(gx) < p.inner) gx <<= 1;
  const uint32_t gy = std::max<uint32_t>(1, max / gx);
  const int64_t per = int64_t(65535) * gy;  // rows per dispatch: at most 65535 groups down
  for (int64_t r0 = 0; r0 < rows; r0 += per) {
    p.row0 = r0;
    p.rows = std::min(per, rows - r0);
    metal().dispatch("index", kernel, {this, &as_metal(ids), &as_metal(dst)}, p,
                     rt::Size3{uint32_t((p.inner + gx - 1) / gx), uint32_t((p.rows + gy - 1) / gy), 1},
                     rt::Size3{gx, gy, 1});
  }
  return true;
}

void MetalStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                                const Layout& ids_layout, BackendStorage& dst) const {
  Shape out = src.shape();
  out[size_t(dim)] = ids_layout.numel();
  IndexSelectKParams p{};
  const int64_t n = shape_numel(out);
  if (n == 0) return;
  if (index_select_rows(src, dim, ids, ids_layout, dst)) return;
  p.src = kernel_layout("index_select", without_dim(src, out, dim));
  p.ids_offset = ids_layout.offset();
  p.ids_stride = ids_layout.strides()[0];
  p.dim_stride = src.strides()[size_t(dim)];
  p.nsel = ids_layout.numel();
  p.inner = 1;
  for (size_t d = size_t(dim) + 1; d < out.size(); ++d) p.inner *= out[d];
  if (p.src.narrow) {
    const FastDivParams a = fast_div_params(uint32_t(std::max<int64_t>(p.inner, 1)));
    const FastDivParams b = fast_div_params(uint32_t(std::max<int64_t>(p.nsel, 1)));
    p.inner_magic = a.magic, p.inner_shift = a.shift;
    p.nsel_magic = b.magic, p.nsel_shift = b.shift;
  }
  launch_elementwise(metal(), "index", index_kernel("select", dtype_, ids.dtype()),
                     {this, &as_metal(ids), &as_metal(dst)}, p, n);
}

void MetalStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                          const Layout& ids_layout, BackendStorage& dst) const {
  GatherKParams p{};
  const int64_t n = ids_layout.numel();
  if (n == 0) return;
  const std::vector<StridedLayout> kl =
      kernel_layouts("gather", {without_dim(src, ids_layout.shape(), dim), ids_layout});
  p.l[0] = kl[0];
  p.l[1] = kl[1];
  p.dim_stride = src.strides()[size_t(dim)];
  launch_elementwise(metal(), "index", index_kernel("gather", dtype_, ids.dtype()),
                     {this, &as_metal(ids), &as_metal(dst)}, p, n);
}

bool MetalStorage::gather_points(const Layout& src, const std::vector<PointIds>& ids,
                                 BackendStorage& dst, int64_t* lo, int64_t* hi,
                                 bool offsets) const {
  static_assert(kMaxPointIds == EMBER_POINTS_MAX, "core and the kernel agree on the arrays");
  const size_t n = ids.size();
  const int64_t count = src.numel();
  if (n == 0 || n > kMaxPointIds || count == 0) return false;
  std::string kernel = "index_points_offsets_i64";
  if (!offsets) kernel = std::string("index_points_") + bits_suffix(dtype_) + "_i64";
  // src and the arrays share one split of the element number into coordinates; the
  // arrays past n are stand-ins the kernel never reads
  std::vector<Layout> layouts{src};
  KernelBuffers buffers{offsets ? &as_metal(*ids[0].ids) : this};
  PointsKParams p{};
  for (size_t k = 0; k < kMaxPointIds; ++k) {
    const PointIds& a = ids[std::min(k, n - 1)];
    layouts.push_back(k < n ? a.layout : Layout(src.shape(), Strides(src.ndim(), 0), 0));
    buffers.push_back(&as_metal(*a.ids));
    p.stride[k] = k < n ? a.stride : 0;
    p.size[k] = k < n ? a.size : 1;
  }
  const std::vector<StridedLayout> kl = kernel_layouts("index", layouts);
  std::copy(kl.begin(), kl.end(), p.l);
  const uint32_t group = power_of_two_group(metal(), "index", kernel, EMBER_POINTS_GROUP);
  const int64_t groups = bounds_groups(count, group);
  p.count = count;
  p.lanes = groups * group;
  p.n = uint32_t(n);
  std::unique_ptr<BackendStorage> bounds =
      metal().alloc_uninit(groups * EMBER_POINTS_MAX * 2, DType::I64);
  buffers.push_back(&as_metal(dst));
  buffers.push_back(&as_metal(*bounds));
  metal().dispatch("index", kernel, buffers, p, rt::Size3{uint32_t(groups), 1, 1},
                   rt::Size3{group, 1, 1}, /*written=*/2);
  std::vector<int64_t> words(size_t(bounds->numel()));
  read_to_host(*bounds, words.data());
  merge_bounds(words, groups, EMBER_POINTS_MAX, n, lo, hi);
  return true;
}

BackendStorage::IndexBounds MetalStorage::index_bounds(const Layout& src) const {
  if (dtype_ != DType::I64 && dtype_ != DType::I32 && dtype_ != DType::U32 &&
      dtype_ != DType::U8)
    return nullptr;
  const int64_t count = src.numel();
  if (count == 0) return nullptr;
  const std::string kernel = std::string("index_bounds_") + dtype_suffix(dtype_);
  BoundsKParams p{};
  p.src = kernel_layout("index", src);
  const uint32_t group = power_of_two_group(metal(), "index", kernel, EMBER_POINTS_GROUP);
  const int64_t groups = bounds_groups(count, group);
  p.count = count;
  p.lanes = groups * group;
  std::shared_ptr<BackendStorage> bounds = metal().alloc_uninit(groups * 2, DType::I64);
  metal().dispatch("index", kernel, {this, &as_metal(*bounds)}, p,
                   rt::Size3{uint32_t(groups), 1, 1}, rt::Size3{group, 1, 1});
  return [bounds, groups] {
    std::vector<int64_t> words(size_t(groups * 2));
    read_to_host(*bounds, words.data());
    std::pair<int64_t, int64_t> out;
    merge_bounds(words, groups, 1, 1, &out.first, &out.second);
    return out;
  };
}

}  // namespace ember::metal
