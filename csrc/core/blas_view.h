// How a BLAS (OpenBLAS, cuBLAS) can read a strided matrix view without a copy.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ember {

struct BlasView {
  bool ok = false;
  bool trans = false;  // stored column-major
  int64_t ld = 0;
};

// A rows x cols matrix with these strides (in elements); leading dimensions above max_ld
// do not fit the library's int. A size-1 dim's stride is never used, so it cannot stop
// the library from reading the view.
inline BlasView blas_view(int64_t rows, int64_t cols, int64_t srow, int64_t scol, int64_t max_ld) {
  if (srow > max_ld || scol > max_ld) return {};
  if (rows == 1 && scol == 1) return {true, false, std::max<int64_t>(cols, 1)};
  if (rows == 1 && scol >= 1) return {true, true, scol};
  if (cols == 1 && srow >= 1) return {true, false, srow};
  if (scol == 1 && srow >= std::max<int64_t>(cols, 1)) return {true, false, srow};
  if (srow == 1 && scol >= std::max<int64_t>(rows, 1)) return {true, true, scol};
  return {};
}

}  // namespace ember
