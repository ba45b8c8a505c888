// Stable sort along the last dim: one lane per row merge-sorts the row's positions
// bottom-up, through the two halves of its part of the work buffer; then one lane per
// element takes the values at the sorted positions, and another writes them as int64.
// Positions are uint in the work buffer (rows are shorter than 2^32), so that only the
// int64 output needs the int64 library. NaN sorts above every number.
#include "common.h"
#include "sort.h"

namespace ember_k {

// Whether a goes strictly before b; equal values (NaN with NaN, -0.0 with 0.0) do not.
template <typename T>
inline bool sort_before(T a, T b, bool descending) {
  typedef typename Num<T>::C C;
  const C x = Num<T>::load(a), y = Num<T>::load(b);
  const bool xn = Num<T>::is_nan(x), yn = Num<T>::is_nan(y);
  if (descending) return !yn && (xn || x > y);
  return !xn && (yn || x < y);
}

}  // namespace ember_k

template <typename T>
kernel void sort_rows(device const T* src [[buffer(0)]], device uint* work [[buffer(1)]],
                      constant SortKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t row = p.start + int64_t(gid.x), n = p.n;
  const int64_t base = offset_of(p.rows, row);
  device uint* from = work + row * 2 * n;
  device uint* to = from + n;
  for (int64_t i = 0; i < n; ++i) from[i] = uint(i);
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = min(n, lo + width), hi = min(n, lo + 2 * width);
      int64_t i = lo, j = mid;
      for (int64_t k = lo; k < hi; ++k) {
        // The right run's head goes first only when strictly before: stable.
        const bool right = i >= mid || (j < hi && sort_before(src[base + int64_t(from[j]) * p.stride],
                                                              src[base + int64_t(from[i]) * p.stride],
                                                              p.descending != 0));
        to[k] = right ? from[j++] : from[i++];
      }
    }
    device uint* t = from;
    from = to;
    to = t;
  }
  if (from != work + row * 2 * n)
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

template <typename T>
kernel void sort_take(device const T* src [[buffer(0)]], device const uint* work [[buffer(1)]],
                      device T* values [[buffer(2)]], constant SortKParams& p [[buffer(3)]],
                      EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x), row = i / p.n, j = i % p.n;
  values[i] = src[offset_of(p.rows, row) + int64_t(work[row * 2 * p.n + j]) * p.stride];
}

template <typename I>
kernel void sort_positions(device const uint* work [[buffer(0)]], device I* indices [[buffer(1)]],
                           constant SortKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x), row = i / p.n, j = i % p.n;
  indices[i] = I(work[row * 2 * p.n + j]);
}

#define EMBER_SORT_KERNELS(name, suffix, T, unused) \
  EMBER_KERNEL(sort_rows_##suffix, sort_rows<T>) EMBER_KERNEL(sort_take_##suffix, sort_take<T>)
EMBER_FOR_ALL_TYPES(EMBER_SORT_KERNELS, sort, 0)
EMBER_IF_I64(EMBER_KERNEL(sort_positions_i64, sort_positions<int64_t>))
