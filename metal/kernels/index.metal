// index_select and gather: one lane per output element. Indices were range-checked by
// core; they come as int64, uint32 or uint8 (I). gather_points reads unchecked int64 ids
// and finds their bounds as it goes.
#include "common.h"
#include "copy.h"
#include "core/clamped_id.h"
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
kernel void index_rows(device const T* src [[buffer(0)]], device const I* ids [[buffer(1)]],
                       device T* dst [[buffer(2)]], constant IndexRowsKParams& p [[buffer(3)]],
                       EMBER_THREAD_ARGS) {
  const int64_t x = int64_t(gid.x), y = int64_t(gid.y);
  if (x >= p.inner || y >= p.rows) return;
  const int64_t r = p.row0 + y;
  int64_t o;
  if (p.narrow != 0)
    o = int64_t(div_magic(uint(r), p.nsel_magic, p.nsel_shift));
  else
    o = r / p.nsel;
  const int64_t j = r - o * p.nsel;
  const int64_t id = int64_t(ids[p.ids_offset + j * p.ids_stride]);
  dst[r * p.inner + x] = src[p.src_offset + o * p.outer_stride + id * p.dim_stride + x];
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

// index_select by rows moves bits: one kernel per element size and id type.
EMBER_IF_I64(EMBER_KERNEL(index_rows_b8_i64, index_rows<uchar, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b8_u32, index_rows<uchar, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b8_u8, index_rows<uchar, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_rows_b16_i64, index_rows<ushort, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b16_u32, index_rows<ushort, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b16_u8, index_rows<ushort, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_rows_b32_i64, index_rows<uint, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b32_u32, index_rows<uint, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(index_rows_b32_u8, index_rows<uint, uchar>))
EMBER_IF_I64(EMBER_KERNEL(index_rows_b64_i64, index_rows<ulong, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(index_rows_b64_u32, index_rows<ulong, uint>))
EMBER_IF_I64(EMBER_KERNEL(index_rows_b64_u8, index_rows<ulong, uchar>))

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

// gather_points (index.h): T moves the data's bits (b8 .. b64); kOffsets stores offsets.
inline int64_t point_id(uint k, device const int64_t* i0, device const int64_t* i1,
                        device const int64_t* i2, device const int64_t* i3, int64_t off) {
  switch (k) {
    case 0: return i0[off];
    case 1: return i1[off];
    case 2: return i2[off];
    default: return i3[off];
  }
}

// Merges the lanes' bounds of n arrays (lo[k], hi[k]) over the threadgroup (g lanes, a
// power of two) and stores the group's into out[2k] and out[2k + 1].
inline void store_group_bounds(threadgroup int64_t* los, threadgroup int64_t* his,
                               thread const int64_t* lo, thread const int64_t* hi, uint n, uint g,
                               uint me, device int64_t* out) {
  for (uint k = 0; k < n; ++k) {
    los[k * g + me] = lo[k];
    his[k * g + me] = hi[k];
  }
  for (uint s = g / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (me < s) {
      for (uint k = 0; k < n; ++k) {
        const int64_t l = los[k * g + me + s], h = his[k * g + me + s];
        los[k * g + me] = l < los[k * g + me] ? l : los[k * g + me];
        his[k * g + me] = h > his[k * g + me] ? h : his[k * g + me];
      }
    }
  }
  if (me != 0) return;
  for (uint k = 0; k < n; ++k) {
    out[2 * k] = los[k * g];
    out[2 * k + 1] = his[k * g];
  }
}

template <typename T, bool kOffsets>
[[max_total_threads_per_threadgroup(EMBER_POINTS_GROUP)]]
kernel void index_points(device const T* src [[buffer(0)]], device const int64_t* i0 [[buffer(1)]],
                         device const int64_t* i1 [[buffer(2)]],
                         device const int64_t* i2 [[buffer(3)]],
                         device const int64_t* i3 [[buffer(4)]], device T* dst [[buffer(5)]],
                         device int64_t* bounds [[buffer(6)]],
                         constant PointsKParams& p [[buffer(7)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(int64_t, los, EMBER_POINTS_MAX * EMBER_POINTS_GROUP);
  EMBER_THREADGROUP(int64_t, his, EMBER_POINTS_MAX * EMBER_POINTS_GROUP);
  int64_t lo[EMBER_POINTS_MAX], hi[EMBER_POINTS_MAX];
  for (uint k = 0; k < EMBER_POINTS_MAX; ++k) {
    lo[k] = int64_t(~(uint64_t(1) << 63));
    hi[k] = int64_t(uint64_t(1) << 63);
  }
  for (int64_t i = int64_t(gid.x); i < p.count; i += p.lanes) {
    int64_t off[1 + EMBER_POINTS_MAX];
    ew_offsets<1 + EMBER_POINTS_MAX, true>(p.l, i, off);
    int64_t at = off[0];
    for (uint k = 0; k < p.n; ++k) {
      const int64_t id = point_id(k, i0, i1, i2, i3, off[1 + k]);
      lo[k] = id < lo[k] ? id : lo[k];
      hi[k] = id > hi[k] ? id : hi[k];
      at += ember::clamped_id(id, p.size[k]) * p.stride[k];
    }
    if (kOffsets)
      dst[i] = T(at);
    else
      dst[i] = src[at];
  }
  store_group_bounds(los, his, lo, hi, p.n, tgsize.x, lid.x,
                     bounds + int64_t(tgid.x) * EMBER_POINTS_MAX * 2);
}

EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_points_b8_i64, index_points<uchar, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_points_b16_i64, index_points<ushort, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_points_b32_i64, index_points<uint, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_points_b64_i64, index_points<ulong, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_points_offsets_i64, index_points<int64_t, true>))

template <typename T>
[[max_total_threads_per_threadgroup(EMBER_POINTS_GROUP)]]
kernel void index_bounds(device const T* src [[buffer(0)]], device int64_t* bounds [[buffer(1)]],
                         constant BoundsKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(int64_t, los, EMBER_POINTS_GROUP);
  EMBER_THREADGROUP(int64_t, his, EMBER_POINTS_GROUP);
  int64_t lo = int64_t(~(uint64_t(1) << 63)), hi = int64_t(uint64_t(1) << 63);
  for (int64_t i = int64_t(gid.x); i < p.count; i += p.lanes) {
    const int64_t v = int64_t(src[strided_offset(p.src, i)]);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  store_group_bounds(los, his, &lo, &hi, 1, tgsize.x, lid.x, bounds + int64_t(tgid.x) * 2);
}

EMBER_IF_I64(EMBER_KERNEL_GROUPED(index_bounds_i64, index_bounds<int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(index_bounds_i32, index_bounds<int>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(index_bounds_u32, index_bounds<uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(index_bounds_u8, index_bounds<uchar>))
