// Stable sort along the last dim (kernels/sort.metal): one lane per row sorts positions
// in a work buffer, then one lane per element takes the values, and one writes the int64
// indices. Few long rows instead take a radix sort over the whole GPU, a row at a time
// (sort.h, RadixKParams): 4-bit LSD passes whose counts, scan and moves run on thousands
// of lanes. topk (k up to EMBER_TOPK_MAX) selects without sorting rows: a threadgroup per
// row (sort.h, TopkKParams).
#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "../kernels/sort.h"
#include "launch.h"

namespace ember::metal {

namespace {

// Few rows this long or longer take the radix sort, a row at a time over the whole GPU;
// others a lane per row.
constexpr int64_t kRadixRows = 16;
constexpr int64_t kRadixMin = int64_t(1) << 14;
// topk of at most kRadixRows rows this long sorts them (the radix sort's many threadgroups).
constexpr int64_t kTopkSortMin = int64_t(1) << 20;

// The key bits of a dtype's RadixKey (sort.metal).
uint32_t radix_bits(DType d) {
  switch (d) {
    case DType::F16:
    case DType::BF16: return 16;
    case DType::U8:
    case DType::Bool: return 8;
    case DType::I64: return 64;
    default: return 32;
  }
}

}  // namespace

void MetalStorage::sort_radix(const SortKParams& sp, int64_t nrows, BackendStorage& values,
                              BackendStorage& indices) const {
  RadixKParams p{};
  p.rows = sp.rows;
  p.n = sp.n;
  p.stride = sp.stride;
  p.descending = sp.descending;
  p.run = std::max<int64_t>(64, (p.n + 65535) / 65536);
  p.lanes = (p.n + p.run - 1) / p.run;
  const bool wide = dtype_ == DType::I64;
  const std::string kw = wide ? "b64" : "k32", sfx = dtype_suffix(dtype_);
  const int64_t item_words = wide ? 2 : 1;  // RadixItem: a key and a position
  std::unique_ptr<BackendStorage> a = metal().alloc_uninit(p.n * item_words, DType::I64);
  std::unique_ptr<BackendStorage> b = metal().alloc_uninit(p.n * item_words, DType::I64);
  std::unique_ptr<BackendStorage> counts = metal().alloc_uninit(EMBER_RADIX_DIGITS * p.lanes, DType::U32);
  std::unique_ptr<BackendStorage> incl = metal().alloc_uninit(EMBER_RADIX_DIGITS * p.lanes, DType::U32);
  const MetalStorage &c = as_metal(*counts), &s = as_metal(*incl);
  const Layout table(Shape{EMBER_RADIX_DIGITS * p.lanes});
  for (int64_t row = 0; row < nrows; ++row) {
    p.row = row;
    const MetalStorage *from = &as_metal(*a), *to = &as_metal(*b);
    launch_elementwise(metal(), "sort", "sort_radix_keys_" + sfx, {this, from}, p, p.n);
    for (uint32_t shift = 0; shift < radix_bits(dtype_); shift += EMBER_RADIX_BITS) {
      p.shift = shift;
      metal().dispatch_1d("sort", "sort_radix_count_" + kw, {from, &c}, p, p.lanes);
      c.scan(ScanOp::Sum, table, *incl);
      metal().dispatch_1d("sort", "sort_radix_scatter_" + kw, {from, &c, &s, to}, p, p.lanes);
      std::swap(from, to);
    }
    launch_elementwise(metal(), "sort", "sort_radix_take_" + sfx, {this, from, &as_metal(values)},
                       p, p.n);
    launch_elementwise(metal(), "sort", "sort_radix_index_i64_" + kw, {from, &as_metal(indices)},
                       p, p.n);
  }
}

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
  if (nrows <= kRadixRows && p.n >= kRadixMin) {
    sort_radix(p, nrows, values, indices);
    return;
  }
  // Two halves of uint positions per row: the merge passes go back and forth between them.
  std::unique_ptr<BackendStorage> work = metal().alloc_uninit(2 * src.numel(), DType::U32);
  const MetalStorage& w = as_metal(*work);
  launch_elementwise(metal(), "sort", "sort_rows_" + sfx, {this, &w}, p, nrows);
  launch_elementwise(metal(), "sort", "sort_take_" + sfx, {this, &w, &as_metal(values)}, p,
                     src.numel());
  launch_elementwise(metal(), "sort", "sort_positions_i64", {&w, &as_metal(indices)}, p,
                     src.numel());
}

bool MetalStorage::topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
                        BackendStorage& indices) const {
  const int64_t nd = src.ndim();
  TopkKParams p{};
  p.n = src.dim(nd - 1);
  p.k = k;
  const int64_t nrows = p.n == 0 ? 0 : src.numel() / p.n;
  // (tgid.x and the positions are 32 bits wide)
  if (k > EMBER_TOPK_MAX || p.n > int64_t(std::numeric_limits<uint32_t>::max()) ||
      nrows > int64_t(std::numeric_limits<uint32_t>::max()))
    return false;
  // A few rows of millions: one threadgroup per row would leave the GPU idle; the radix
  // sort spreads each row over many (sort above), and core keeps its first k.
  if (nrows <= kRadixRows && p.n >= kTopkSortMin) return false;
  if (nrows == 0 || k == 0) return true;
  const Shape lead(src.shape().begin(), src.shape().end() - 1);
  const Strides lead_strides(src.strides().begin(), src.strides().end() - 1);
  p.rows = kernel_layout("topk", Layout(lead, lead_strides, src.offset()));
  p.stride = src.strides().back();
  p.largest = largest ? 1 : 0;
  p.kpad = 1;
  while (int64_t(p.kpad) < k) p.kpad <<= 1;
  const std::string kernel = std::string("topk_rows_") + dtype_suffix(dtype_);
  const uint32_t group = power_of_two_group(metal(), "sort", kernel, EMBER_TOPK_GROUP);
  // positions in the first k of each row's 2k (sort_positions' layout)
  std::unique_ptr<BackendStorage> work = metal().alloc_uninit(2 * nrows * k, DType::U32);
  const MetalStorage& w = as_metal(*work);
  metal().dispatch("sort", kernel, {this, &w}, p, rt::Size3{uint32_t(nrows), 1, 1},
                   rt::Size3{group, 1, 1});
  launch_elementwise(metal(), "sort", std::string("topk_take_") + dtype_suffix(dtype_),
                     {this, &w, &as_metal(values)}, p, nrows * k);
  SortKParams sp{};
  sp.n = k;
  launch_elementwise(metal(), "sort", "sort_positions_i64", {&w, &as_metal(indices)}, sp, nrows * k);
  return true;
}

}  // namespace ember::metal
