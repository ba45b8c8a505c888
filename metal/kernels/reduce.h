// Parameters of the reduction kernels (reduce.metal), filled by backend/reduce.cpp.
// Also the kernel-side value helpers that softmax.metal and matmul.metal share.
#pragma once

#include "common.h"

// Lanes per group of every reduction and softmax kernel (their threadgroup arrays' size);
// a power of two below it where the pipeline allows fewer threads (backend/reduce.cpp).
#define EMBER_REDUCE_GROUP 256

// Output `o` reduces the elements of src at strided_offset(kept, o) + offset of flat
// index i (row-major) of `red`. A threadgroup holds `rows` outputs of `lanes` lanes each
// (lanes * rows == the group's size, both powers of two): lane-major (an output's lanes
// side by side: rows of the reduced elements read in runs), or output-major (`out_minor`:
// neighbouring lanes take neighbouring outputs, which are neighbours in memory when the
// reduced dims step over whole runs of outputs, as in a sum over dim 0).
// With `chunks` > 1 the reduced elements split into chunks of `per_chunk`, group g taking
// chunk g % chunks of its outputs, and write partials (dst is then a scratch buffer of
// nout * chunks ReducePartial slots, output-major); a finish kernel merges each output's.
struct ReduceKParams {
  StridedLayout kept;  // the kept dims of src (the output's shape), with src's offset
  StridedLayout red;   // the reduced dims, offset 0
  int64_t nout;        // outputs
  int64_t count;       // elements reduced per output
  int64_t per_chunk;   // elements per chunk (count when chunks == 1)
  uint32_t lanes;      // lanes per output
  uint32_t rows;       // outputs per threadgroup
  uint32_t chunks;     // groups per output's elements
  uint32_t out_minor;  // 1: lane l of output r is thread l * rows + r
};

// Bytes of one partial of a split reduction (a sum's hi and lo, or an extreme's value and
// index), for the host's scratch buffer.
#define EMBER_REDUCE_PARTIAL_BYTES 16

// var / std in one pass (reduce_var): the reduction's layout and split as above, and what
// the finish applies: divide by max(count - correction, 0), then the root when `root`.
struct VarKParams {
  ReduceKParams r;
  float correction;
  uint32_t root;
};

// Bytes of one partial slot of the accumulator reductions (reduce_acc in reduce.metal:
// prod, logsumexp, var), each the chunk's accumulator.
#define EMBER_ACC_PARTIAL_BYTES 32

#if !defined(__METAL_VERSION__) && !defined(EMBER_MSL_SHIM)
// Host side: lanes per output for `count` elements, about 16 elements a lane, so short
// rows share a group of `group` lanes and long ones get all of it (reduce.cpp, softmax.cpp).
inline uint32_t ember_reduce_lanes(int64_t count, uint32_t group) {
  uint32_t lanes = 1;
  while (lanes < group && int64_t(lanes) * 16 < count) lanes <<= 1;
  return lanes;
}
// Columns (neighbouring outputs on neighbouring lanes): outputs per group of `group`
// lanes, a SIMD group's width (fewer when there are fewer outputs); the rest of the
// group's lanes go down the reduced elements (reduce.cpp, softmax.cpp).
inline uint32_t ember_column_outputs(int64_t nout, uint32_t group) {
  uint32_t rows = 1;
  while (rows < 32 && rows < group && int64_t(rows) < nout) rows <<= 1;
  return rows;
}
#endif

#if defined(__METAL_VERSION__) || defined(EMBER_MSL_SHIM)

namespace ember_k {

// How a stored type computes: f16/bf16 as float, the others as themselves.
template <typename T>
struct Num {
  typedef T C;
  static C load(T v) { return v; }
  static T store(C v) { return v; }
  static bool is_nan(C) { return false; }
};

template <>
struct Num<float> {
  typedef float C;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
  static bool is_nan(float v) { return isnan(v); }
};

template <>
struct Num<half> {
  typedef float C;
  static float load(half v) { return float(v); }
  static half store(float v) { return half(v); }
  static bool is_nan(float v) { return isnan(v); }
};

template <>
struct Num<bf16_t> {
  typedef float C;
  static float load(bf16_t v) { return bf16_to_float(v); }
  static bf16_t store(float v) { return float_to_bf16(v); }
  static bool is_nan(float v) { return isnan(v); }
};

// strided_offset without 64-bit division for the common one-dim case.
inline int64_t offset_of(constant StridedLayout& l, int64_t i) {
  if (l.ndim == 1) return l.offset + i * l.strides[0];
  return strided_offset(l, i);
}

}  // namespace ember_k

#endif  // __METAL_VERSION__ || EMBER_MSL_SHIM
