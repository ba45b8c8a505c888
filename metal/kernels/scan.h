// Parameters of the scan kernels (scan.metal), filled by backend/scan.cpp.
#pragma once

#include "common.h"
#include "reduce.h"

// Row r of src starts at offset_of(rows, r) and has n elements `stride` apart; dst is
// contiguous [nrows, n]. One threadgroup per row (rows first_row + tgid.x); its lanes
// (a power of two, up to EMBER_REDUCE_GROUP) each scan one run of the row.
struct ScanKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t nrows;
  int64_t n;
  int64_t stride;
  int64_t first_row;
};
