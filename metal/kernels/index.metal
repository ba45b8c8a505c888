// index_select and gather: one lane per output element. Indices were range-checked by
// core; they come as int64, uint32 or uint8 (I).
#include "common.h"
#include "copy.h"
#include "index.h"

template <typename T, typename I>
kernel void index_select(device const T* src [[buffer(0)]], device const I* ids [[buffer(1)]],
                         device T* dst [[buffer(2)]], constant IndexSelectKParams& p [[buffer(3)]],
                         EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  int64_t j;
  if (p.src.narrow != 0) {
    const uint q = div_magic(uint(i), p.inner_magic, p.inner_shift);
    j = int64_t(q - div_magic(q, p.nsel_magic, p.nsel_shift) * uint(p.nsel));
  } else {
    j = (i / p.inner) % p.nsel;
  }
  const int64_t id = int64_t(ids[p.ids_offset + j * p.ids_stride]);
  dst[i] = src[strided_offset(p.src, i) + id * p.dim_stride];
}

template <typename T, typename I>
kernel void index_gather(device const T* src [[buffer(0)]], device const I* ids [[buffer(1)]],
                         device T* dst [[buffer(2)]], constant GatherKParams& p [[buffer(3)]],
                         EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  int64_t off[2];
  ew_offsets<2, true>(p.l, i, off);
  dst[i] = src[off[0] + int64_t(ids[off[1]]) * p.dim_stride];
}

EMBER_IF_I64(EMBER_KERNEL(index_select_f32_i64, index_select<float, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_f32_u32, index_select<float, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_f32_u8, index_select<float, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_select_f16_i64, index_select<half, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_f16_u32, index_select<half, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_f16_u8, index_select<half, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_select_bf16_i64, index_select<bf16_t, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_bf16_u32, index_select<bf16_t, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_bf16_u8, index_select<bf16_t, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_select_i64_i64, index_select<int64_t, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(index_select_i64_u32, index_select<int64_t, uint>))
EMBER_IF_I64(EMBER_KERNEL(index_select_i64_u8, index_select<int64_t, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_select_u32_i64, index_select<uint, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_u32_u32, index_select<uint, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_u32_u8, index_select<uint, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_select_u8_i64, index_select<uchar, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_u8_u32, index_select<uchar, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_select_u8_u8, index_select<uchar, uchar>))

EMBER_IF_I64(EMBER_KERNEL(index_gather_f32_i64, index_gather<float, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_f32_u32, index_gather<float, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_f32_u8, index_gather<float, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_f16_i64, index_gather<half, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_f16_u32, index_gather<half, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_f16_u8, index_gather<half, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_bf16_i64, index_gather<bf16_t, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_bf16_u32, index_gather<bf16_t, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_bf16_u8, index_gather<bf16_t, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_i64_i64, index_gather<int64_t, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_i64_u32, index_gather<int64_t, uint>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_i64_u8, index_gather<int64_t, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_u32_i64, index_gather<uint, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_u32_u32, index_gather<uint, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_u32_u8, index_gather<uint, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_gather_u8_i64, index_gather<uchar, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_u8_u32, index_gather<uchar, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_gather_u8_u8, index_gather<uchar, uchar>))
