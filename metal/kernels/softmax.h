// Parameters of the softmax kernels (softmax.metal), filled by backend/softmax.cpp.
#pragma once

#include "common.h"
#include "reduce.h"

// Row r of src starts at strided_offset(rows, r) and has n elements `stride` apart. A
// threadgroup of up to EMBER_REDUCE_GROUP lanes holds `rows_per_group` rows of `lanes`
// lanes each (both powers of two).
// Rows (columns == 0): the softmax runs along src's last dim (or a permuted view), lane
// l of the group's row k is thread k * lanes + l, and dst is contiguous [nrows, n].
// Columns (columns == 1, softmax_columns): src is contiguous and the softmax runs along
// a dim that is not its last, so that neighbouring rows are neighbours in memory: lane l
// of row k is thread l * rows_per_group + k (a SIMD group's loads read one run), and
// dst, contiguous of src's shape, takes each value where src has it.
struct SoftmaxKParams {
  StridedLayout rows;  // where each row starts, with src's offset
  int64_t nrows;
  int64_t n;
  int64_t stride;
  int64_t src_offset;  // columns: subtracted from a value's offset in src for dst's
  uint32_t lanes;
  uint32_t rows_per_group;
  uint32_t columns;
  uint32_t pad;
};
