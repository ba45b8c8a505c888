// Casts between dtypes, strided copies and fills.
//   copy_cast[_strided]_<src>_<dst>   dst = src converted as the CPU's cast does
//   copy_bits[_strided]_b<8|16|32|64> dst = src, moved as bits (any dtype of that size)
//   copy_fill[_strided]_b<8|16|32|64> dst = a value's bits, converted on the host
//   copy_bits_tiled_b<8|16|32|64>     a transposed copy in tiles (copy.h, TileKParams)
// The _strided variants walk views; the others take dense views (no index math).
#include "common.h"
#include "copy.h"

template <typename S, typename D, bool Strided>
kernel void copy_cast(device const S* src [[buffer(0)]], device D* dst [[buffer(1)]],
                      constant CopyKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[2];
  ew_offsets<2, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[1]] = Ew<D>::from(Ew<S>::load(src[off[0]]));
}

template <typename B, bool Strided>
kernel void copy_bits(device const B* src [[buffer(0)]], device B* dst [[buffer(1)]],
                      constant CopyKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[2];
  ew_offsets<2, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[1]] = src[off[0]];
}

// dst[r, c] = src[r, c] through a tile of threadgroup memory (TileKParams).
template <typename B>
[[max_total_threads_per_threadgroup(EMBER_TILE * EMBER_TILE_ROWS)]]
kernel void copy_bits_tiled(device const B* src [[buffer(0)]], device B* dst [[buffer(1)]],
                            constant TileKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(B, tile, EMBER_TILE * (EMBER_TILE + 1));  // +1: no bank conflicts
  const int64_t b = int64_t(tgid.x) / p.tiles, t = int64_t(tgid.x) - b * p.tiles;
  const int64_t tr = t / p.tiles_c, tc = t - tr * p.tiles_c;
  const int64_t r0 = tr * EMBER_TILE, c0 = tc * EMBER_TILE;
  const int64_t sbase = strided_offset(p.batch[0], b), dbase = strided_offset(p.batch[1], b);
  const uint x = lid.x % EMBER_TILE, y = lid.x / EMBER_TILE;
  // read: neighbouring lanes take neighbouring rows (src's dense dim)
  for (uint k = y; k < EMBER_TILE; k += EMBER_TILE_ROWS) {
    const int64_t r = r0 + x, c = c0 + k;
    if (r < p.rows && c < p.cols) tile[k * (EMBER_TILE + 1) + x] = src[sbase + r + c * p.src_col_step];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // write: neighbouring lanes take neighbouring columns (dst's dense dim)
  for (uint k = y; k < EMBER_TILE; k += EMBER_TILE_ROWS) {
    const int64_t r = r0 + k, c = c0 + x;
    if (r < p.rows && c < p.cols) dst[dbase + r * p.dst_row_step + c] = tile[x * (EMBER_TILE + 1) + k];
  }
}

template <typename B, bool Strided>
kernel void copy_fill(device B* dst [[buffer(0)]], constant FillKParams& p [[buffer(1)]],
                      EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[1];
  ew_offsets<1, Strided>(&p.dst, p.start + int64_t(gid.x), off);
  dst[off[0]] = B(uint64_t(p.bits));
}

#define EMBER_COPY_CAST(name, strided_name, S, D) \
  EMBER_KERNEL(name, copy_cast<S, D, false>)      \
  EMBER_KERNEL(strided_name, copy_cast<S, D, true>)

// Same-dtype casts are copies (copy_bits).
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f32_f16, copy_cast_strided_f32_f16, float, half))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f32_bf16, copy_cast_strided_f32_bf16, float, bf16_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_f32_i64, copy_cast_strided_f32_i64, float, int64_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f32_u32, copy_cast_strided_f32_u32, float, uint))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f32_u8, copy_cast_strided_f32_u8, float, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f16_f32, copy_cast_strided_f16_f32, half, float))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f16_bf16, copy_cast_strided_f16_bf16, half, bf16_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_f16_i64, copy_cast_strided_f16_i64, half, int64_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f16_u32, copy_cast_strided_f16_u32, half, uint))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f16_u8, copy_cast_strided_f16_u8, half, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_bf16_f32, copy_cast_strided_bf16_f32, bf16_t, float))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_bf16_f16, copy_cast_strided_bf16_f16, bf16_t, half))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_bf16_i64, copy_cast_strided_bf16_i64, bf16_t, int64_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_bf16_u32, copy_cast_strided_bf16_u32, bf16_t, uint))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_bf16_u8, copy_cast_strided_bf16_u8, bf16_t, uchar))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_f32, copy_cast_strided_i64_f32, int64_t, float))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_f16, copy_cast_strided_i64_f16, int64_t, half))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_bf16, copy_cast_strided_i64_bf16, int64_t, bf16_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_u32, copy_cast_strided_i64_u32, int64_t, uint))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_u8, copy_cast_strided_i64_u8, int64_t, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u32_f32, copy_cast_strided_u32_f32, uint, float))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u32_f16, copy_cast_strided_u32_f16, uint, half))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u32_bf16, copy_cast_strided_u32_bf16, uint, bf16_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_u32_i64, copy_cast_strided_u32_i64, uint, int64_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u32_u8, copy_cast_strided_u32_u8, uint, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u8_f32, copy_cast_strided_u8_f32, uchar, float))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u8_f16, copy_cast_strided_u8_f16, uchar, half))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u8_bf16, copy_cast_strided_u8_bf16, uchar, bf16_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_u8_i64, copy_cast_strided_u8_i64, uchar, int64_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u8_u32, copy_cast_strided_u8_u32, uchar, uint))
// int32 to and from every other dtype.
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_i32_f32, copy_cast_strided_i32_f32, int, float))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f32_i32, copy_cast_strided_f32_i32, float, int))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_i32_f16, copy_cast_strided_i32_f16, int, half))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_f16_i32, copy_cast_strided_f16_i32, half, int))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_i32_bf16, copy_cast_strided_i32_bf16, int, bf16_t))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_bf16_i32, copy_cast_strided_bf16_i32, bf16_t, int))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i32_i64, copy_cast_strided_i32_i64, int, int64_t))
EMBER_IF_I64(EMBER_COPY_CAST(copy_cast_i64_i32, copy_cast_strided_i64_i32, int64_t, int))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_i32_u32, copy_cast_strided_i32_u32, int, uint))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u32_i32, copy_cast_strided_u32_i32, uint, int))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_i32_u8, copy_cast_strided_i32_u8, int, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_CAST(copy_cast_u8_i32, copy_cast_strided_u8_i32, uchar, int))

#define EMBER_COPY_BITS(name, strided_name, B) \
  EMBER_KERNEL(name, copy_bits<B, false>)      \
  EMBER_KERNEL(strided_name, copy_bits<B, true>)

#define EMBER_COPY_FILL(name, strided_name, B) \
  EMBER_KERNEL(name, copy_fill<B, false>)      \
  EMBER_KERNEL(strided_name, copy_fill<B, true>)

EMBER_IF_NOT_I64(EMBER_COPY_BITS(copy_bits_b8, copy_bits_strided_b8, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_BITS(copy_bits_b16, copy_bits_strided_b16, ushort))
EMBER_IF_NOT_I64(EMBER_COPY_BITS(copy_bits_b32, copy_bits_strided_b32, uint))
EMBER_IF_I64(EMBER_COPY_BITS(copy_bits_b64, copy_bits_strided_b64, uint64_t))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(copy_bits_tiled_b8, copy_bits_tiled<uchar>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(copy_bits_tiled_b16, copy_bits_tiled<ushort>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(copy_bits_tiled_b32, copy_bits_tiled<uint>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(copy_bits_tiled_b64, copy_bits_tiled<uint64_t>))
EMBER_IF_NOT_I64(EMBER_COPY_FILL(copy_fill_b8, copy_fill_strided_b8, uchar))
EMBER_IF_NOT_I64(EMBER_COPY_FILL(copy_fill_b16, copy_fill_strided_b16, ushort))
EMBER_IF_NOT_I64(EMBER_COPY_FILL(copy_fill_b32, copy_fill_strided_b32, uint))
EMBER_IF_I64(EMBER_COPY_FILL(copy_fill_b64, copy_fill_strided_b64, uint64_t))
