// Parameters of the scan kernels (scan.metal), filled by backend/scan.cpp.
#pragma once

#include "common.h"
#include "reduce.h"

// Row r of src starts at offset_of(rows, r) and has n elements `stride` apart; dst is
// contiguous [nrows, n]. One threadgroup per row (rows first_row + tgid.x); its lanes
// (a power of two, up to EMBER_REDUCE_GROUP) each scan one run of the row.
// Few long rows split into `chunks` chunks of `per_chunk` (threadgroup g: row
// first_row + g / chunks, chunk g % chunks) in three dispatches: each chunk's total
// (scan_totals), each row's totals into the exclusive offsets of its chunks
// (scan_offsets), each chunk's scan from its offset (scan_chunks).
struct ScanKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t nrows;
  int64_t n;
  int64_t stride;
  int64_t first_row;
  int64_t chunks;      // 1: whole rows
  int64_t per_chunk;
};

// nonzero's compaction of a contiguous bool mask (src's bytes from `offset`, n of them):
// threadgroup g covers `chunk` bytes from first_group + g, each lane a run of `per_lane`
// of them. The count kernel writes each group's count of true bytes; the write kernel,
// given their inclusive scan, writes each true byte's position (flat, or its ndim
// coordinates), no more than `limit` of them.
struct NonzeroKParams {
  int64_t n;
  int64_t offset;
  int64_t per_lane;
  int64_t chunk;
  int64_t limit;  // positions (rows of coordinates) dst holds
  int64_t first_group;
  int64_t shape[EMBER_MAX_DIMS];  // the mask's, for coordinates
  uint32_t ndim;                  // 1: flat positions; else coordinates over shape
  uint32_t pad;
};
