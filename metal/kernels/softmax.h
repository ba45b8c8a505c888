// Parameters of the softmax kernels (softmax.metal), filled by backend/softmax.cpp.
#pragma once

#include "common.h"
#include "reduce.h"

// Row r of src starts at strided_offset(rows, r) and has n elements `stride` apart; dst
// is contiguous [nrows, n]. A threadgroup of up to EMBER_REDUCE_GROUP lanes holds
// `rows_per_group` rows of `lanes` lanes each (lanes a power of two).
struct SoftmaxKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t nrows;
  int64_t n;
  int64_t stride;
  uint32_t lanes;
  uint32_t rows_per_group;
};
