// Parameters of the scatter kernels (scatter.metal), filled by backend/scatter.cpp.
#pragma once

#include "common.h"

// One lane per row: a position of the index's shape with the scatter dim held at 0.
// Each layout has the index's shape with 1 in that dim, so strided_offset gives a row's
// first element; the row then walks the `len` ids in order, k * *_stride apart.
struct ScatterKParams {
  StridedLayout dst, ids, src;
  int64_t len;                                 // the index's size in the scatter dim
  int64_t dst_stride, ids_stride, src_stride;  // the strides of that dim
  int64_t start, count;                        // the rows of this launch
};
