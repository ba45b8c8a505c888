// Walking N same-shaped views at once. Dims that are contiguous in every view are
// merged first, so a dense tensor is one long row that kernels can vectorise.
#pragma once

#include <array>
#include <vector>

#include "core/layout.h"
#include "parallel.h"

namespace ember::cpu {

template <size_t N>
struct Walk {
  Shape shape;                     // merged dims, outermost first
  std::array<Strides, N> strides;  // per view, per merged dim
  std::array<int64_t, N> offsets;  // per view
};

template <size_t N>
Walk<N> merge_dims(const Shape& shape, const std::array<const Layout*, N>& views) {
  Walk<N> w;
  for (size_t k = 0; k < N; ++k) w.offsets[k] = views[k]->offset();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !w.shape.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = w.strides[k].back() == views[k]->strides()[d] * shape[d];
    if (merge) {
      w.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) w.strides[k].back() = views[k]->strides()[d];
    } else {
      w.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) w.strides[k].push_back(views[k]->strides()[d]);
    }
  }
  if (w.shape.empty()) {  // a single element
    w.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) w.strides[k].push_back(1);
  }
  return w;
}

// Calls row(offsets, n, inner_strides) for runs of the innermost dim, in parallel
// for large views. Each run covers n elements.
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
  Walk<N> w = merge_dims(shape, views);
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
