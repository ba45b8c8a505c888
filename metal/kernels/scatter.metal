// scatter and scatter_add: one lane per row of the other dims, which walks its ids in
// order, so that results are deterministic (the last repeated id wins; adds sum in index
// order). Indices were range-checked by core; they come as int64, uint32 or uint8 (I).
#include "common.h"
#include "scatter.h"

struct ScatterSet {};
struct ScatterAdd {};
struct ScatterOr {};  // bool's add

template <typename T>
inline T scatter_apply(ScatterSet, T, T v) {
  return v;
}
template <typename T>
inline T scatter_apply(ScatterAdd, T a, T v) {
  return T(a + v);  // integers wrap (uchar and uint through int/uint arithmetic)
}
// 16-bit floats add in float32 and round once, as on the CPU.
inline half scatter_apply(ScatterAdd, half a, half v) {
  return half(float(a) + float(v));
}
inline bf16_t scatter_apply(ScatterAdd, bf16_t a, bf16_t v) {
  return float_to_bf16(bf16_to_float(a) + bf16_to_float(v));
}
inline uchar scatter_apply(ScatterOr, uchar a, uchar v) {
  return uchar(a != 0 || v != 0);
}

template <typename T, typename I, typename Op>
kernel void scatter(device const I* ids [[buffer(0)]], device const T* src [[buffer(1)]],
                    device T* dst [[buffer(2)]], constant ScatterKParams& p [[buffer(3)]],
                    EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t row = p.start + int64_t(gid.x);
  const int64_t d0 = strided_offset(p.dst, row), i0 = strided_offset(p.ids, row),
                s0 = strided_offset(p.src, row);
  for (int64_t k = 0; k < p.len; ++k) {
    const int64_t at = d0 + int64_t(ids[i0 + k * p.ids_stride]) * p.dst_stride;
    dst[at] = scatter_apply(Op(), dst[at], src[s0 + k * p.src_stride]);
  }
}

// M(suffix, T) for the data types: int32 runs uint32's kernels (same bits, and wrapping
// adds give the same bits), bool runs uint8's with ScatterOr.
#define EMBER_SCATTER_IDS(name, T, Op)                             \
  EMBER_IF_I64(EMBER_KERNEL(name##_i64, scatter<T, int64_t, Op>))  \
  EMBER_IF_NOT_I64(EMBER_KERNEL(name##_u32, scatter<T, uint, Op>)) \
  EMBER_IF_NOT_I64(EMBER_KERNEL(name##_u8, scatter<T, uchar, Op>))
// Data of type int64: every id dtype goes into the int64 library.
#define EMBER_SCATTER_IDS_I64(name, T, Op)                        \
  EMBER_IF_I64(EMBER_KERNEL(name##_i64, scatter<T, int64_t, Op>)) \
  EMBER_IF_I64(EMBER_KERNEL(name##_u32, scatter<T, uint, Op>))    \
  EMBER_IF_I64(EMBER_KERNEL(name##_u8, scatter<T, uchar, Op>))

EMBER_SCATTER_IDS(scatter_f32, float, ScatterSet)
EMBER_SCATTER_IDS(scatter_f16, half, ScatterSet)
EMBER_SCATTER_IDS(scatter_bf16, bf16_t, ScatterSet)
EMBER_SCATTER_IDS_I64(scatter_i64, int64_t, ScatterSet)
EMBER_SCATTER_IDS(scatter_u32, uint, ScatterSet)
EMBER_SCATTER_IDS(scatter_u8, uchar, ScatterSet)

EMBER_SCATTER_IDS(scatter_add_f32, float, ScatterAdd)
EMBER_SCATTER_IDS(scatter_add_f16, half, ScatterAdd)
EMBER_SCATTER_IDS(scatter_add_bf16, bf16_t, ScatterAdd)
EMBER_SCATTER_IDS_I64(scatter_add_i64, int64_t, ScatterAdd)
EMBER_SCATTER_IDS(scatter_add_u32, uint, ScatterAdd)
EMBER_SCATTER_IDS(scatter_add_u8, uchar, ScatterAdd)
EMBER_SCATTER_IDS(scatter_add_b8, uchar, ScatterOr)
