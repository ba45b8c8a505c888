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

// The radix sort of few long rows, one row r at a time: every element's order-preserving
// key (RadixKey in sort.metal; NaN past every number, -0.0 as 0.0, complemented when
// descending) with its position, then LSD passes of 4 bits each: `lanes` lanes each count
// the digits of one run of `run` items (counts, digit-major: digit d of lane l at
// d * lanes + l), their inclusive scan gives every lane its starts, and each lane moves
// its run's items in order (stable). Then the values and positions come out.
#define EMBER_RADIX_BITS 4
#define EMBER_RADIX_DIGITS 16
struct RadixKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t n;
  int64_t stride;
  int64_t row;         // the row being sorted
  int64_t run;         // items per lane
  int64_t lanes;       // lanes of the count and scatter kernels
  int64_t start, count;  // element kernels: the items of this launch
  uint32_t shift;      // the digit's lowest bit
  uint32_t descending;
};

// topk by selection, one threadgroup of up to EMBER_TOPK_GROUP lanes per row: the k-th
// key by radix selection (EMBER_RADIX_BITS a pass from the top, the lanes' digit counts
// summed in threadgroup memory), the rows's elements past it and the first of its ties by
// position gathered in order, then a bitonic sort of those kpad (k rounded up to a power
// of two, at most EMBER_TOPK_MAX) in threadgroup memory. The positions go into the first
// k of each 2k-block of the uint work buffer; topk_take then writes the values
// [nrows, k] and sort_positions the int64 indices.
#define EMBER_TOPK_GROUP 256
#define EMBER_TOPK_MAX 512
struct TopkKParams {
  StridedLayout rows;  // the leading dims of src, with src's offset
  int64_t n;
  int64_t stride;
  int64_t k;
  int64_t start, count;  // topk_take: the values of this launch
  uint32_t kpad;
  uint32_t largest;
};
