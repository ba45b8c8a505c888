// cumsum / cumprod along the last dim: one sequential pass per row, rows across cores.
#include <algorithm>
#include <type_traits>

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

template <typename T>
void scan_row(ScanOp op, const T* x, int64_t stride, int64_t n, T* y) {
  using A = scan_acc_t<T>;
  A acc = op == ScanOp::Sum ? A(0) : A(1);
  for (int64_t i = 0; i < n; ++i) {
    const A v = A(compute_t<T>(x[i * stride]));
    acc = op == ScanOp::Sum ? A(acc + v) : A(acc * v);
    y[i] = T(compute_t<T>(acc));
  }
}

}  // namespace

void CpuStorage::scan(ScanOp op, const Layout& src, BackendStorage& dst) const {
  const int64_t n = src.dim(src.ndim() - 1), stride = src.strides().back();
  const int64_t rows = n == 0 ? 0 : src.numel() / n;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>();
    T* out = as_cpu(dst).ptr<T>();
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r)
                     scan_row(op, in + row_offset(src, r), stride, n, out + r * n);
                 });
  });
}

}  // namespace ember::cpu
