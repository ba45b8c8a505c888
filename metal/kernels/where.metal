// where(cond, on_true, on_false): cond of any dtype, nonzero (as the CPU tests it, in
// float for f16 / bf16) is true; the values move as bits.
//   where[_strided]_<cond dtype>_b<8|16|32|64>   (the values' element size in bits)
// The _strided variant walks views (broadcast inputs have 0 strides); the other takes
// dense views (no index math).
#include "common.h"
#include "copy.h"
#include "where.h"

inline bool ew_nonzero(float c) {
  return c != 0.0f;
}  // NaN is true, -0 false
template <typename C>
inline bool ew_nonzero(C c) {
  return c != C(0);
}

template <typename TC, typename B, bool Strided>
kernel void where_map(device const TC* cond [[buffer(0)]], device const B* on_true [[buffer(1)]],
                      device const B* on_false [[buffer(2)]], device B* dst [[buffer(3)]],
                      constant WhereKParams& p [[buffer(4)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[4];
  ew_offsets<4, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[3]] = ew_nonzero(Ew<TC>::load(cond[off[0]])) ? on_true[off[1]] : on_false[off[2]];
}

#define EMBER_WHERE(name, strided_name, TC, B) \
  EMBER_KERNEL(name, where_map<TC, B, false>)  \
  EMBER_KERNEL(strided_name, where_map<TC, B, true>)

EMBER_IF_NOT_I64(EMBER_WHERE(where_f32_b8, where_strided_f32_b8, float, uchar))
EMBER_IF_NOT_I64(EMBER_WHERE(where_f32_b16, where_strided_f32_b16, float, ushort))
EMBER_IF_NOT_I64(EMBER_WHERE(where_f32_b32, where_strided_f32_b32, float, uint))
EMBER_IF_I64(EMBER_WHERE(where_f32_b64, where_strided_f32_b64, float, uint64_t))
EMBER_IF_NOT_I64(EMBER_WHERE(where_f16_b8, where_strided_f16_b8, half, uchar))
EMBER_IF_NOT_I64(EMBER_WHERE(where_f16_b16, where_strided_f16_b16, half, ushort))
EMBER_IF_NOT_I64(EMBER_WHERE(where_f16_b32, where_strided_f16_b32, half, uint))
EMBER_IF_I64(EMBER_WHERE(where_f16_b64, where_strided_f16_b64, half, uint64_t))
EMBER_IF_NOT_I64(EMBER_WHERE(where_bf16_b8, where_strided_bf16_b8, bf16_t, uchar))
EMBER_IF_NOT_I64(EMBER_WHERE(where_bf16_b16, where_strided_bf16_b16, bf16_t, ushort))
EMBER_IF_NOT_I64(EMBER_WHERE(where_bf16_b32, where_strided_bf16_b32, bf16_t, uint))
EMBER_IF_I64(EMBER_WHERE(where_bf16_b64, where_strided_bf16_b64, bf16_t, uint64_t))
EMBER_IF_I64(EMBER_WHERE(where_i64_b8, where_strided_i64_b8, int64_t, uchar))
EMBER_IF_I64(EMBER_WHERE(where_i64_b16, where_strided_i64_b16, int64_t, ushort))
EMBER_IF_I64(EMBER_WHERE(where_i64_b32, where_strided_i64_b32, int64_t, uint))
EMBER_IF_I64(EMBER_WHERE(where_i64_b64, where_strided_i64_b64, int64_t, uint64_t))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u32_b8, where_strided_u32_b8, uint, uchar))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u32_b16, where_strided_u32_b16, uint, ushort))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u32_b32, where_strided_u32_b32, uint, uint))
EMBER_IF_I64(EMBER_WHERE(where_u32_b64, where_strided_u32_b64, uint, uint64_t))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u8_b8, where_strided_u8_b8, uchar, uchar))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u8_b16, where_strided_u8_b16, uchar, ushort))
EMBER_IF_NOT_I64(EMBER_WHERE(where_u8_b32, where_strided_u8_b32, uchar, uint))
EMBER_IF_I64(EMBER_WHERE(where_u8_b64, where_strided_u8_b64, uchar, uint64_t))
