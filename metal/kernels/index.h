// Parameters of the index kernels (index.metal), filled by backend/index.cpp.
#pragma once

#include "common.h"

// index_select: dst (contiguous, the output's shape) element i comes from
// strided_offset(src, i) + ids[(i / inner) % nsel] * dim_stride, where `src` has the
// output's shape and stride 0 in the selected dim.
struct IndexSelectKParams {
  StridedLayout src;
  int64_t ids_offset, ids_stride;  // ids are 1-D
  int64_t dim_stride;              // src's stride in the selected dim
  int64_t inner;                   // elements of the output after the selected dim
  int64_t nsel;                    // number of ids
  int64_t start, count;            // the output elements of this launch
};

// gather: dst element i comes from strided_offset(src, i) + ids[strided_offset(ids, i)] *
// dim_stride; `src` has the ids' shape and stride 0 in the gathered dim.
struct GatherKParams {
  StridedLayout src;
  StridedLayout ids;
  int64_t dim_stride;
  int64_t start, count;  // the output elements of this launch
};
