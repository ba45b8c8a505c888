// cumsum / cumprod along the last dim: one sequential pass per row, rows across cores,
// a long row split over threads in two passes;
// and nonzero's compaction: a threaded two-pass over chunks of the mask.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "parallel.h"

#include "cpu_backend.h"
#include "rows.h"
#include "strided.h"

namespace ember::cpu {

namespace {

// float32 accumulates in double (PyTorch's CPU accumulator), 16-bit floats in float;
// integers in their unsigned type, so that overflow wraps as numpy's does, without UB.
template <typename T, bool = is_float_v<T>>
struct ScanAcc {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
struct ScanAcc<T, true> {
  using type = std::conditional_t<std::is_same_v<T, float>, double, compute_t<T>>;
};
template <typename T>
using scan_acc_t = typename ScanAcc<T>::type;

// a + b or a * b in the accumulator A; `identity` its unit.
template <typename A>
A combine(ScanOp op, A a, A b) {
  return op == ScanOp::Sum ? A(a + b) : A(a * b);
}
template <typename A>
A identity(ScanOp op) {
  return op == ScanOp::Sum ? A(0) : A(1);
}

// y[i] = acc op x[0] op ... op x[i], from `acc` (the identity for a whole row).
template <typename T>
void scan_row(ScanOp op, const T* x, int64_t stride, int64_t n, T* y,
              scan_acc_t<T> acc) {
  using A = scan_acc_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    acc = combine(op, acc, A(compute_t<T>(x[i * stride])));
    y[i] = T(compute_t<T>(acc));
  }
}

// The sum or product of x[0..n), in the scan's accumulator: eight independent partial
// results (a float accumulator's chain of dependent adds would otherwise set the pace,
// and make this pass cost as much as the scan it saves), combined at the end.
template <typename T>
scan_acc_t<T> fold_row(ScanOp op, const T* x, int64_t stride, int64_t n) {
  using A = scan_acc_t<T>;
  constexpr int kLanes = 8;
  A acc[kLanes];
  for (int k = 0; k < kLanes; ++k) acc[k] = identity<A>(op);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] = combine(op, acc[k], A(compute_t<T>(x[(i + k) * stride])));
  for (; i < n; ++i) acc[0] = combine(op, acc[0], A(compute_t<T>(x[i * stride])));
  for (int k = 1; k < kLanes; ++k) acc[0] = combine(op, acc[0], acc[k]);
  return acc[0];
}

// Long rows split over threads in two passes (each part's total, then each part's scan
// from the totals before it) where the split cannot show in the result: integers wrap
// the same whatever the order, and float32 accumulates in double, whose different
// rounding of a regrouped sum lies far below a float32's ulp. Half types (accumulated in
// float) and float64 keep one sequential pass.
template <typename T>
constexpr bool splits_rows() {
  return !is_float_v<T> || std::is_same_v<T, float>;
}
constexpr int64_t kSplitRow = int64_t(1) << 16;

// The true bytes of mask[lo, hi).
int64_t count_true(const uint8_t* mask, int64_t lo, int64_t hi) {
  int64_t n = 0;
  for (int64_t i = lo; i < hi; ++i) n += mask[i] != 0;
  return n;
}

// Writes the positions of the true bytes of mask[lo, hi) to out[0, limit) in order and
// returns how many it wrote. Blocks with room for all of their positions are written
// without branches (each position is stored, the cursor moves on a true byte); a block
// that could reach past `limit` is written with a test per byte.
int64_t write_true(const uint8_t* mask, int64_t lo, int64_t hi, int64_t* out, int64_t limit) {
  constexpr int64_t kBlock = 64;
  int64_t k = 0, i = lo;
  for (; i + kBlock <= hi && limit - k > kBlock; i += kBlock) {
    uint64_t words[kBlock / 8];
    std::memcpy(words, mask + i, kBlock);
    uint64_t any = 0;
    for (uint64_t w : words) any |= w;
    if (any == 0) continue;  // a sparse mask skips its empty blocks whole
    for (int64_t j = 0; j < kBlock; ++j) {
      out[k] = i + j;
      k += mask[i + j] != 0;
    }
  }
  for (; i < hi && k < limit; ++i)
    if (mask[i]) out[k++] = i;
  return k;
}

}  // namespace

void CpuStorage::nonzero(const Layout& src, bool coordinates, BackendStorage& dst) const {
  const int64_t n = src.numel(), nd = coordinates ? src.ndim() : 1;
  const int64_t limit = dst.numel() / std::max<int64_t>(nd, 1);
  const uint8_t* mask = ptr<uint8_t>() + src.offset();
  int64_t* out = as_cpu(dst).ptr<int64_t>();
  // Chunks fixed before either pass, a few per thread so that uneven densities balance:
  // the first pass counts each chunk, the second writes each from its count's prefix.
  const int64_t chunks =
      std::clamp<int64_t>(n / kParallelGrain, 1, 4 * int64_t(num_threads()));
  const int64_t per = (n + chunks - 1) / chunks;
  std::vector<int64_t> first(size_t(chunks) + 1, 0);
  parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t c = lo; c < hi; ++c)
      first[size_t(c) + 1] = count_true(mask, c * per, std::min(n, (c + 1) * per));
  });
  for (int64_t c = 0; c < chunks; ++c) first[size_t(c) + 1] += first[size_t(c)];
  const Shape& shape = src.shape();
  parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    constexpr int64_t kBuffer = 1024;
    int64_t flat[kBuffer];
    for (int64_t c = lo; c < hi; ++c) {
      int64_t at = std::min(first[size_t(c)], limit);
      const int64_t end = std::min(first[size_t(c) + 1], limit);
      if (nd == 1) {
        if (end > at) write_true(mask, c * per, std::min(n, (c + 1) * per), out + at, end - at);
        continue;
      }
      // Coordinates: positions into a buffer, then each unravelled; the outer coordinates
      // change only when a position leaves the current row, so most take no division.
      const int64_t last = shape[size_t(nd - 1)];
      int64_t row_start = 0, row_end = 0, outer[kNonzeroMaxDims] = {};
      int64_t i = c * per;
      const int64_t stop = std::min(n, (c + 1) * per);
      while (at < end && i < stop) {
        const int64_t step = std::min(kBuffer, stop - i);
        const int64_t got = write_true(mask, i, i + step, flat, std::min(kBuffer, end - at));
        i += step;
        for (int64_t q = 0; q < got; ++q, ++at) {
          const int64_t p = flat[q];
          if (p >= row_end) {
            int64_t row = p / last;
            row_start = row * last;
            row_end = row_start + last;
            for (int64_t d = nd - 2; d >= 0; --d) {
              outer[d] = row % shape[size_t(d)];
              row /= shape[size_t(d)];
            }
          }
          int64_t* o = out + at * nd;
          for (int64_t d = 0; d < nd - 1; ++d) o[d] = outer[d];
          o[nd - 1] = p - row_start;
        }
      }
    }
  });
}

void CpuStorage::scan(ScanOp op, const Layout& src, BackendStorage& dst) const {
  const LastDimRows lr = last_dim_rows(src);
  const int64_t n = lr.n, stride = lr.stride, rows = lr.count;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>();
    T* out = as_cpu(dst).ptr<T>();
    using A = scan_acc_t<T>;
    const int64_t threads = num_threads();
    if constexpr (splits_rows<T>()) {
      if (rows < threads && n >= kSplitRow && threads > 1) {
        const int64_t parts = std::min<int64_t>(4 * threads, n / (kSplitRow / 4));
        const int64_t per = (n + parts - 1) / parts;
        std::vector<A> start(size_t(parts) + 1);
        for (int64_t r = 0; r < rows; ++r) {
          const T* x = in + row_offset(src, r);
          T* y = out + r * n;
          parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t q = lo; q < hi; ++q)
              start[size_t(q) + 1] =
                  fold_row(op, x + q * per * stride, stride, std::min(n, (q + 1) * per) - q * per);
          });
          start[0] = identity<A>(op);
          for (int64_t q = 0; q < parts; ++q)
            start[size_t(q) + 1] = combine(op, start[size_t(q)], start[size_t(q) + 1]);
          parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
            for (int64_t q = lo; q < hi; ++q)
              scan_row(op, x + q * per * stride, stride, std::min(n, (q + 1) * per) - q * per,
                       y + q * per, start[size_t(q)]);
          });
        }
        return;
      }
    }
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r)
                     scan_row(op, in + row_offset(src, r), stride, n, out + r * n, identity<A>(op));
                 });
  });
}

}  // namespace ember::cpu
