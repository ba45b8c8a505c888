// Parameters of the matmul kernels (matmul.metal), filled by backend/matmul.cpp.
#pragma once

#include "common.h"

// Output tile of one threadgroup (EMBER_MM_TILE x EMBER_MM_TILE), computed by
// EMBER_MM_LANES x EMBER_MM_LANES lanes, each owning a 2 x 2 block of it; or, where the
// pipeline allows fewer than 256 threads, by EMBER_MM_LANES_SMALL^2 lanes owning 4 x 4.
#define EMBER_MM_TILE 32
#define EMBER_MM_LANES 16
#define EMBER_MM_LANES_SMALL 8

// dst[b] (contiguous [M, N]) = lhs[b] [M, K] @ rhs[b] [K, N] for batch b = batch0 +
// tgid.z; the matrices of batch b start at strided_offset(a_batch / b_batch, b).
struct MatmulKParams {
  StridedLayout a_batch;  // lhs's batch dims (possibly stride 0), with lhs's offset
  StridedLayout b_batch;  // rhs's batch dims, with rhs's offset
  int64_t m, n, k;
  int64_t sam, sak;  // lhs strides along M and K
  int64_t sbk, sbn;  // rhs strides along K and N
  int64_t batch0;    // the first batch of this dispatch
};
