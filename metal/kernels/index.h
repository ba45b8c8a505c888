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

// index_select by rows (an embedding's lookup, rows of a matrix): where the dims after
// the selected one are one dense run and those before it one stride, output row r (outer
// position o = r / nsel, id j = r % nsel) is the run at src_offset + o * outer_stride +
// ids[j] * dim_stride, and lane (x, y) copies element x of row row0 + y: no division per
// element, neighbouring lanes on neighbouring elements.
struct IndexRowsKParams {
  int64_t src_offset, outer_stride, dim_stride;
  int64_t ids_offset, ids_stride;
  int64_t inner;  // elements of a row
  int64_t nsel;   // ids
  int64_t row0;   // the first row of this dispatch
  int64_t rows;   // rows in this dispatch
  uint32_t nsel_magic, nsel_shift;  // r / nsel in 32-bit math (core/fast_div.h) when narrow
  uint32_t narrow, pad;
};

// gather: dst element i comes from offset(l[0], i) + ids[offset(l[1], i)] * dim_stride;
// l[0] is src with the ids' shape and stride 0 in the gathered dim, l[1] the ids: one
// split of i into coordinates serves both.
struct GatherKParams {
  StridedLayout l[2];  // src, ids
  int64_t dim_stride;
  int64_t start, count;  // the output elements of this launch
};

// gather_points (numpy's t[i, j], core/backend.h): dst element i (dst is new and
// contiguous) is src at offset(l[0], i) + the sum over arrays k < n of
// clamped_id(id_k, size[k]) * stride[k], id_k being the int64 array k at offset(l[1 + k],
// i); `offsets` kernels store that offset itself (an int64 dst) and read no data. Each
// threadgroup writes each array's smallest and largest id to bounds[(group * 4 + k) * 2]
// and the word after, which the host merges. Lanes walk the elements `lanes` apart.
// index_bounds (core/backend.h) does the same for one integer tensor, any layout: its
// groups' smallest and largest value go to bounds[group * 2] and the word after.
#define EMBER_POINTS_MAX 4
#define EMBER_POINTS_GROUP 256
struct PointsKParams {
  StridedLayout l[1 + EMBER_POINTS_MAX];  // src over dst's shape, then the id arrays
  int64_t stride[EMBER_POINTS_MAX];       // the stride of the dim of src each array indexes
  int64_t size[EMBER_POINTS_MAX];         // and its length
  int64_t count;                          // dst's elements
  int64_t lanes;                          // the dispatch's lanes
  uint32_t n;                             // arrays, 1 .. EMBER_POINTS_MAX
  uint32_t pad;
};

struct BoundsKParams {
  StridedLayout src;
  int64_t count;  // src's elements
  int64_t lanes;  // the dispatch's lanes
};
