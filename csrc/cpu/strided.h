// Walking N same-shaped views at once. Dims that are contiguous in every view are
// merged first (core's plan), so a dense tensor is one long row that kernels can vectorise.
#pragma once

#include <array>
#include <cstdlib>
#include <vector>

#include "core/layout.h"
#include "core/layout_plan.h"
#include "parallel.h"

namespace ember::cpu {

template <size_t N>
struct Walk {
  Shape shape;                     // merged dims, outermost first
  std::array<Strides, N> strides;  // per view, per merged dim
  std::array<int64_t, N> offsets;  // per view
};

// The core plan (core/layout_plan.h) as the CPU walks it.
template <size_t N>
Walk<N> merge_dims(const Shape& shape, const std::array<const Layout*, N>& views,
                   WalkOrder order = WalkOrder::Logical) {
  DimPlan p = plan_dims(shape, std::vector<const Layout*>(views.begin(), views.end()), order);
  Walk<N> w;
  w.shape = std::move(p.shape);
  for (size_t k = 0; k < N; ++k) {
    w.strides[k] = std::move(p.strides[k]);
    w.offsets[k] = p.offsets[k];
  }
  return w;
}

// Each view's offset of outer position o, row-major over w's first `dims` dims.
template <size_t N>
std::array<int64_t, N> outer_offsets(const Walk<N>& w, size_t dims, int64_t o) {
  std::array<int64_t, N> base = w.offsets;
  for (size_t d = dims; d-- > 0;) {
    const int64_t idx = o % w.shape[d];
    o /= w.shape[d];
    for (size_t k = 0; k < N; ++k) base[k] += idx * w.strides[k][d];
  }
  return base;
}

// Rows and columns of one tile of a transposed walk (see walk).
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 128;

// Calls row(offsets, n, inner_strides) for runs of the innermost dim, in parallel
// for large views. Each run covers n elements. The dims are walked in the written
// (last) view's memory order, so a result laid out like its inputs is one dense run.
// Where a view steps through the inner dim with a stride and the next dim out with a
// smaller one (a transposed operand), the last two dims go in tiles of kTileRows runs of
// kTileCols: the lines that view reads for one run are read again by the next runs
// while they are in cache.
template <size_t N, typename Row>
void walk(const Shape& shape, const std::array<const Layout*, N>& views, Row&& row) {
  const int64_t numel = shape_numel(shape);
  if (numel == 0) return;
  bool dense = true;
  for (size_t k = 0; k < N && dense; ++k) dense = views[k]->is_contiguous();
  if (dense) {  // the common case, without building the merged description
    std::array<int64_t, N> ones;
    ones.fill(1);
    parallel_for(numel, kParallelGrain, [&](int64_t lo, int64_t hi) {
      std::array<int64_t, N> off;
      for (size_t k = 0; k < N; ++k) off[k] = views[k]->offset() + lo;
      row(off, hi - lo, ones);
    });
    return;
  }
  Walk<N> w = merge_dims(shape, views, WalkOrder::Memory);
  const size_t nd = w.shape.size();
  const int64_t inner = w.shape.back();
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = w.strides[k].back();

  if (nd == 1) {  // one run: split it
    parallel_for(inner, kParallelGrain, [&](int64_t lo, int64_t hi) {
      std::array<int64_t, N> off;
      for (size_t k = 0; k < N; ++k) off[k] = w.offsets[k] + lo * inner_strides[k];
      row(off, hi - lo, inner_strides);
    });
    return;
  }

  bool transposed = false;
  for (size_t k = 0; k < N; ++k) {
    const int64_t si = std::abs(inner_strides[k]), so = std::abs(w.strides[k][nd - 2]);
    transposed = transposed || (si > 1 && so < si && so != 0);
  }
  if (transposed && inner > kTileCols) {
    const int64_t rows = w.shape[nd - 2];
    const int64_t tiles_r = (rows + kTileRows - 1) / kTileRows;
    const int64_t tiles_c = (inner + kTileCols - 1) / kTileCols;
    const int64_t per_outer = tiles_r * tiles_c;
    const int64_t outer = numel / (rows * inner);
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kTileRows * kTileCols));
    parallel_for(outer * per_outer, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t rem = t % per_outer;
        const int64_t r0 = (rem / tiles_c) * kTileRows, c0 = (rem % tiles_c) * kTileCols;
        const std::array<int64_t, N> base = outer_offsets(w, nd - 2, t / per_outer);
        const int64_t n = std::min(kTileCols, inner - c0);
        for (int64_t r = r0; r < std::min(rows, r0 + kTileRows); ++r) {
          std::array<int64_t, N> off;
          for (size_t k = 0; k < N; ++k)
            off[k] = base[k] + r * w.strides[k][nd - 2] + c0 * inner_strides[k];
          row(off, n, inner_strides);
        }
      }
    });
    return;
  }

  int64_t rows = 1;
  for (size_t d = 0; d + 1 < nd; ++d) rows *= w.shape[d];
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1));
  parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(nd - 1);
    std::array<int64_t, N> off = w.offsets;
    int64_t r = lo;
    for (size_t d = nd - 1; d-- > 0;) {  // row number -> multi-index and offsets
      idx[d] = r % w.shape[d];
      r /= w.shape[d];
      for (size_t k = 0; k < N; ++k) off[k] += idx[d] * w.strides[k][d];
    }
    for (int64_t i = lo; i < hi; ++i) {
      row(off, inner, inner_strides);
      for (size_t d = nd - 1; d-- > 0;) {  // odometer step
        for (size_t k = 0; k < N; ++k) off[k] += w.strides[k][d];
        if (++idx[d] < w.shape[d]) break;
        for (size_t k = 0; k < N; ++k) off[k] -= w.shape[d] * w.strides[k][d];
        idx[d] = 0;
      }
    }
  });
}

// Promotes 16-bit floats to float for arithmetic; other types compute as themselves.
template <typename T>
struct Compute {
  using type = T;
};
template <>
struct Compute<f16> {
  using type = float;
};
template <>
struct Compute<bf16> {
  using type = float;
};
template <typename T>
using compute_t = typename Compute<T>::type;

template <typename T>
constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

}  // namespace ember::cpu
