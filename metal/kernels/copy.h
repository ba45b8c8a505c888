// Parameters of the copy family (casts, strided copies, fills), and the element
// helpers that every elementwise family shares: loads and stores through the compute
// type, conversions with the CPU's semantics, and the offsets of element i in several
// layouts.
#pragma once

#include "common.h"

// Every elementwise launch covers elements start .. start + count - 1 of the view, one
// per lane: gid.x is 32 bits wide, so the host launches big views in chunks.
struct CopyKParams {
  StridedLayout l[2];  // src, dst
  int64_t start;
  int64_t count;
};

// A copy whose source reads its rows' elements far apart and its columns' side by side
// (a transposed view made contiguous): the last two dims of the plan go in 32 x 32 tiles
// through threadgroup memory, read down the source's dense dim and written along the
// destination's, so both sides move whole runs. Threadgroup t takes tile t % tiles of
// batch position t / tiles (batch: the plan's outer dims, walked by `batch`).
#define EMBER_TILE 32
#define EMBER_TILE_ROWS 8  // threads per tile column: each moves EMBER_TILE / 8 elements
struct TileKParams {
  StridedLayout batch[2];  // the outer dims of src, dst (offsets included)
  int64_t rows, cols;      // the tiled dims: dst row r, column c
  int64_t src_col_step;    // src's stride along c (along r it is 1)
  int64_t dst_row_step;    // dst's stride along r (along c it is 1)
  int64_t tiles_c;         // tiles across the columns
  int64_t tiles;           // tiles per batch position
};

struct FillKParams {
  StridedLayout dst;
  int64_t start;
  int64_t count;
  int64_t bits;  // the value as stored in the dtype, in the low bytes
};

#if defined(__METAL_VERSION__) || defined(EMBER_MSL_SHIM)

// The offsets of element i (row-major over the shared, collapsed shape) in K layouts.
// Dense views need no index math; otherwise one split of i into coordinates serves all
// K layouts, by multiply-high divisions (StridedLayout::narrow) while the numbers fit.
template <int K, bool Strided>
inline void ew_offsets(constant StridedLayout* l, int64_t i, thread int64_t* off) {
  for (int k = 0; k < K; ++k) off[k] = l[k].offset + (Strided ? 0 : i);
  if (!Strided) return;
  if (l[0].ndim == 1) {  // e.g. a tensor with a broadcast scalar: no division at all
    for (int k = 0; k < K; ++k) off[k] += i * l[k].strides[0];
    return;
  }
  // what is left of i after the inner dims is the outermost index: no division for it
  if (l[0].narrow != 0) {
    uint u = uint(i);
    for (int d = int(l[0].ndim) - 1; d > 0; --d) {
      const uint q = layout_div(l[0], d, u);
      const int64_t r = int64_t(u - q * uint(l[0].shape[d]));
      for (int k = 0; k < K; ++k) off[k] += r * l[k].strides[d];
      u = q;
    }
    for (int k = 0; k < K; ++k) off[k] += int64_t(u) * l[k].strides[0];
    return;
  }
  for (int d = int(l[0].ndim) - 1; d > 0; --d) {
    const int64_t n = l[0].shape[d];
    const int64_t q = i / n;
    for (int k = 0; k < K; ++k) off[k] += (i - q * n) * l[k].strides[d];
    i = q;
  }
  for (int k = 0; k < K; ++k) off[k] += i * l[k].strides[0];
}

// Per storage type T: its compute type C (float for the 16-bit floats, as the CPU),
// load / store between the two, and from(): a computed value of any type converted to
// T exactly as the CPU's cast does (float -> integer saturates with NaN -> 0, integers
// wrap, integer -> 16-bit float rounds through float).
template <typename T>
struct Ew;

inline int64_t ew_sat_i64(float v) {
  if (isnan(v)) return 0;
  if (v <= -9223372036854775808.0f) return int64_t(uint64_t(1) << 63);
  if (v >= 9223372036854775808.0f) return int64_t((uint64_t(1) << 63) - 1);
  return int64_t(v);
}
inline int ew_sat_i32(float v) {
  if (isnan(v)) return 0;
  if (v <= -2147483648.0f) return int(0x80000000u);
  if (v >= 2147483648.0f) return 0x7fffffff;
  return int(v);
}
inline uint ew_sat_u32(float v) {
  if (isnan(v) || v <= 0.0f) return 0u;
  if (v >= 4294967296.0f) return 0xffffffffu;
  return uint(v);
}
inline uchar ew_sat_u8(float v) {
  if (isnan(v) || v <= 0.0f) return uchar(0);
  if (v >= 255.0f) return uchar(255);
  return uchar(v);
}

template <>
struct Ew<float> {
  typedef float C;
  static float load(float x) { return x; }
  static float store(float c) { return c; }
  static float from(float v) { return v; }
  static float from(int64_t v) { return float(v); }
  static float from(uint v) { return float(v); }
  static float from(uchar v) { return float(v); }
  static float from(int v) { return float(v); }
};

template <>
struct Ew<half> {
  typedef float C;
  static float load(half x) { return float(x); }
  static half store(float c) { return half(c); }
  static half from(float v) { return half(v); }
  static half from(int64_t v) { return half(float(v)); }
  static half from(uint v) { return half(float(v)); }
  static half from(uchar v) { return half(float(v)); }
  static half from(int v) { return half(float(v)); }
};

template <>
struct Ew<bf16_t> {
  typedef float C;
  static float load(bf16_t x) { return bf16_to_float(x); }
  static bf16_t store(float c) { return float_to_bf16(c); }
  static bf16_t from(float v) { return float_to_bf16(v); }
  static bf16_t from(int64_t v) { return float_to_bf16(float(v)); }
  static bf16_t from(uint v) { return float_to_bf16(float(v)); }
  static bf16_t from(uchar v) { return float_to_bf16(float(v)); }
  static bf16_t from(int v) { return float_to_bf16(float(v)); }
};

template <>
struct Ew<int64_t> {
  typedef int64_t C;
  static int64_t load(int64_t x) { return x; }
  static int64_t store(int64_t c) { return c; }
  static int64_t from(float v) { return ew_sat_i64(v); }
  static int64_t from(int64_t v) { return v; }
  static int64_t from(uint v) { return int64_t(v); }
  static int64_t from(uchar v) { return int64_t(v); }
  static int64_t from(int v) { return int64_t(v); }
};

template <>
struct Ew<int> {
  typedef int C;
  static int load(int x) { return x; }
  static int store(int c) { return c; }
  static int from(float v) { return ew_sat_i32(v); }
  static int from(int64_t v) { return int(uint(uint64_t(v))); }
  static int from(int v) { return v; }
  static int from(uint v) { return int(v); }
  static int from(uchar v) { return int(v); }
};

template <>
struct Ew<uint> {
  typedef uint C;
  static uint load(uint x) { return x; }
  static uint store(uint c) { return c; }
  static uint from(float v) { return ew_sat_u32(v); }
  static uint from(int64_t v) { return uint(uint64_t(v)); }
  static uint from(uint v) { return v; }
  static uint from(uchar v) { return uint(v); }
  static uint from(int v) { return uint(v); }
};

template <>
struct Ew<uchar> {
  typedef uchar C;
  static uchar load(uchar x) { return x; }
  static uchar store(uchar c) { return c; }
  static uchar from(float v) { return ew_sat_u8(v); }
  static uchar from(int64_t v) { return uchar(uint64_t(v)); }
  static uchar from(uint v) { return uchar(v); }
  static uchar from(uchar v) { return v; }
  static uchar from(int v) { return uchar(v); }
};

// Integer arithmetic that wraps (as numpy and the CPU backend): int64 and int go through
// their unsigned types (signed overflow is undefined), uint wraps by itself, uchar promotes to int
// and is truncated back.
inline float ew_add(float a, float b) {
  return a + b;
}
inline int64_t ew_add(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) + uint64_t(b));
}
inline int ew_add(int a, int b) {
  return int(uint(a) + uint(b));
}
template <typename C>
inline C ew_add(C a, C b) {
  return C(a + b);
}
inline float ew_sub(float a, float b) {
  return a - b;
}
inline int64_t ew_sub(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) - uint64_t(b));
}
inline int ew_sub(int a, int b) {
  return int(uint(a) - uint(b));
}
template <typename C>
inline C ew_sub(C a, C b) {
  return C(a - b);
}
inline float ew_mul(float a, float b) {
  return a * b;
}
inline int64_t ew_mul(int64_t a, int64_t b) {
  return int64_t(uint64_t(a) * uint64_t(b));
}
inline int ew_mul(int a, int b) {
  return int(uint(a) * uint(b));
}
inline uint ew_mul(uint a, uint b) {
  return a * b;
}
inline uchar ew_mul(uchar a, uchar b) {
  return uchar(uint(a) * uint(b));
}

#endif  // __METAL_VERSION__ || EMBER_MSL_SHIM
