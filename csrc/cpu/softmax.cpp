// softmax and log_softmax over the last dim, computed in float (double for f64).
#include <cmath>
#include <vector>

#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_math.h"

namespace ember::cpu {

namespace {

// Dense float rows: vectorised max, exp-and-sum (sum in double per 1024-value block) and
// scale. A strided row is first gathered into its output row.
void softmax_row_f32(const float* x, int64_t stride, int64_t n, bool log, float* y) {
  if (stride != 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i * stride];
    x = y;
  }
  if (!log) return softmax_dense_f32(x, y, n);
  float mx = max_f32(x, n);
  if (std::isinf(mx) && mx < 0) mx = 0;  // all -inf: keep exp() finite
  // (x - max) - log(sum), not x - (max + log(sum)): that would round away small terms
  thread_local std::vector<float> scratch;
  if (scratch.size() < size_t(n)) scratch.resize(size_t(n));
  const double sum = exp_shift_sum_f32(x, mx, scratch.data(), n);
  sub2_f32(x, mx, float(std::log(sum)), y, n);
}

template <typename T>
void softmax_row(const T* x, int64_t stride, int64_t n, bool log, T* y) {
  if constexpr (std::is_same_v<T, float>) {
    return softmax_row_f32(x, stride, n, log, y);
  } else if constexpr (is_half_v<T>) {
    // through a float row: converted in (vectorised), the float kernels, converted out
    thread_local std::vector<float> row;
    if (row.size() < size_t(n)) row.resize(size_t(n));
    for (int64_t i = 0; i < n; i += kChunk)
      load_chunk(x + i * stride, stride, row.data() + i, std::min(kChunk, n - i));
    softmax_row_f32(row.data(), 1, n, log, row.data());
    for (int64_t i = 0; i < n; i += kChunk)
      store_chunk(row.data() + i, y + i, 1, std::min(kChunk, n - i));
  } else {
    using C = compute_t<T>;
    C mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, C(x[i * stride]));
    if (std::isinf(mx) && mx < 0) mx = 0;  // all -inf: keep exp() finite
    C sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(C(x[i * stride]) - mx);
    if (log) {
      C log_sum = std::log(sum);
      for (int64_t i = 0; i < n; ++i) y[i] = T((C(x[i * stride]) - mx) - log_sum);
    } else {
      C inv = C(1) / sum;
      for (int64_t i = 0; i < n; ++i) y[i] = T(std::exp(C(x[i * stride]) - mx) * inv);
    }
  }
}

}  // namespace

void CpuStorage::softmax(const Layout& src, bool log, BackendStorage& dst) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      const int64_t nd = src.ndim(), n = src.dim(nd - 1), stride = src.strides().back();
      const int64_t rows = n == 0 ? 0 : src.numel() / n;
      const bool dense = src.is_contiguous();
      const T* in = ptr<T>();
      T* out = as_cpu(dst).ptr<T>();
      // Rows are independent: split them across cores, each row's offset from its number.
      // An element costs several times an add (exp, three passes): a smaller grain.
      parallel_for(rows, std::max<int64_t>(1, kParallelGrain / 8 / std::max<int64_t>(n, 1)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t r = lo; r < hi; ++r) {
                       int64_t off = src.offset() + r * n;  // contiguous: no divisions
                       if (!dense) {
                         off = src.offset();
                         for (int64_t d = nd - 1, q = r; d-- > 0; q /= src.dim(d))
                           off += (q % src.dim(d)) * src.strides()[size_t(d)];
                       }
                       softmax_row(in + off, stride, n, log, out + r * n);
                     }
                   });
    }
  });
}

bool CpuStorage::softmax_columns(const Layout& src, int64_t dim, bool log,
                                 BackendStorage& dst) const {
  if (dtype_ != DType::F32) return false;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.dim(d);
  for (int64_t d = dim + 1; d < src.ndim(); ++d) inner *= src.dim(d);
  const int64_t n = src.dim(dim), blocks = (inner + kSoftCols - 1) / kSoftCols;
  const float* in = ptr<float>() + src.offset();
  float* out = as_cpu(dst).ptr<float>();
  // tasks: (outer position, block of columns); each touches n * kSoftCols values thrice
  parallel_for(outer * blocks, std::max<int64_t>(1, kParallelGrain / 8 / (n * kSoftCols)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   const int64_t o = t / blocks, j0 = (t % blocks) * kSoftCols;
                   const int64_t at = o * n * inner + j0;
                   softmax_cols_f32(in + at, n, inner, std::min(kSoftCols, inner - j0), log,
                                    out + at);
                 }
               });
  return true;
}

}  // namespace ember::cpu
