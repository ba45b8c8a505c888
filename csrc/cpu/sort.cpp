// sort along the last dim: std::stable_sort of (value, position) pairs per row, rows
// across cores. NaN is above every number, as in numpy and PyTorch.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu_backend.h"
#include "rows.h"
#include "strided.h"

namespace ember::cpu {

namespace {

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  return false;
}

// Strict orders for stable_sort; -0.0 == 0.0 (a tie), every NaN ties with every NaN.
template <typename C>
bool ascending(C a, C b) {
  return !is_nan(a) && (is_nan(b) || a < b);
}
template <typename C>
bool descending(C a, C b) {
  return !is_nan(b) && (is_nan(a) || a > b);
}

template <typename T>
void sort_row(const T* x, int64_t stride, int64_t n, bool desc, T* values, int64_t* indices) {
  using C = compute_t<T>;
  thread_local std::vector<std::pair<C, int64_t>> row;
  row.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) row[size_t(i)] = {C(x[i * stride]), i};
  auto by = [desc](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
    return desc ? descending(a.first, b.first) : ascending(a.first, b.first);
  };
  std::stable_sort(row.begin(), row.end(), by);
  for (int64_t j = 0; j < n; ++j) {
    indices[j] = row[size_t(j)].second;
    values[j] = x[indices[j] * stride];  // the stored element itself: NaN payloads, -0.0
  }
}

}  // namespace

void CpuStorage::sort(const Layout& src, bool descending, BackendStorage& values,
                      BackendStorage& indices) const {
  const int64_t n = src.dim(src.ndim() - 1), stride = src.strides().back();
  const int64_t rows = n == 0 ? 0 : src.numel() / n;
  int64_t* idx = as_cpu(indices).ptr<int64_t>();
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>();
    T* out = as_cpu(values).ptr<T>();
    // A row costs about n log n comparisons: a smaller grain than elementwise ops.
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / 16 / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r)
                     sort_row(in + row_offset(src, r), stride, n, descending, out + r * n,
                              idx + r * n);
                 });
  });
}

}  // namespace ember::cpu
