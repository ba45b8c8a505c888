// Parameters of the sort kernels (sort.metal), filled by backend/sort.cpp.
#pragma once

#include "common.h"
#include "reduce.h"

// Row r of src starts at offset_of(rows, r) and has n elements `stride` apart. The uint
// work buffer holds 2 * n positions per row: the sorted positions end in its first n.
struct SortKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t n;
  int64_t stride;
  int64_t start, count;  // sort_rows: the rows of this launch; the others: the elements
  uint32_t descending;
};
