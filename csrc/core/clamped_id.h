// The id an index read reaches before its ids' range check has come back, compiled for
// every backend (C++, CUDA and the Metal kernels' MSL): core raises afterwards from the
// ids' bounds (index_reads_clamp, gather_points), and until then no read may leave the dim.
#pragma once

#ifndef __METAL_VERSION__
#include <cstdint>
#endif

#ifdef __CUDACC__
#define EMBER_ID_HD __host__ __device__
#else
#define EMBER_ID_HD
#endif

namespace ember {

// An id of a dim of `size`: one in [-size, 0) counts from the end, as numpy's; one outside
// [-size, size) reads position 0.
EMBER_ID_HD inline int64_t clamped_id(int64_t id, int64_t size) {
  id += id < 0 ? size : 0;
  return uint64_t(id) < uint64_t(size) ? id : 0;
}

}  // namespace ember
