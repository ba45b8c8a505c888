// Ops along the last dim of a view (scans, sorting): where each row starts.
#pragma once

#include <cstdint>

#include "core/layout.h"

namespace ember::cpu {

// Storage offset of row r of `l` (the rows are its leading dims, row-major).
inline int64_t row_offset(const Layout& l, int64_t r) {
  int64_t off = l.offset();
  for (int64_t d = l.ndim() - 1; d-- > 0; r /= l.dim(d))
    off += (r % l.dim(d)) * l.strides()[size_t(d)];
  return off;
}

// The rows of `l` (its last dim): n elements `stride` apart, `count` rows.
struct LastDimRows {
  int64_t n, stride, count;
};
inline LastDimRows last_dim_rows(const Layout& l) {
  const int64_t n = l.dim(l.ndim() - 1);
  return {n, l.strides().back(), n == 0 ? 0 : l.numel() / n};
}

}  // namespace ember::cpu
