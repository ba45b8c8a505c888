// Parameters of the index kernels (index.metal), filled by backend/index.cpp.
#pragma once

#include "common.h"

// index_select: dst (contiguous, the output's shape) element i comes from
// strided_offset(src, i) + ids[(i / inner) % nsel] * dim_stride, where `src` has the
// output's shape and stride 0 in the selected dim.
// `narrow` (src.narrow: under 2^31 elements): (i / inner) % nsel in 32-bit math by the
// magic numbers of inner and nsel (core/fast_div.h).
struct IndexSelectKParams {
  StridedLayout src;
  int64_t ids_offset, ids_stride;  // ids are 1-D
  int64_t dim_stride;              // src's stride in the selected dim
  int64_t inner;                   // elements of the output after the selected dim
  int64_t nsel;                    // number of ids
  int64_t start, count;            // the output elements of this launch
  uint32_t inner_magic, inner_shift, nsel_magic, nsel_shift;
};

// gather: dst element i comes from offset(l[0], i) + ids[offset(l[1], i)] * dim_stride;
// l[0] is src with the ids' shape and stride 0 in the gathered dim, l[1] the ids: one
// split of i into coordinates serves both.
struct GatherKParams {
  StridedLayout l[2];  // src, ids
  int64_t dim_stride;
  int64_t start, count;  // the output elements of this launch
};
