// The emulator's own test kernels: each shows one thing the runner must get right (or
// must catch). Compiled exactly like metal/kernels/*.metal (msl_shim.h, own namespace).
#include "common.h"
#include "emutest.h"

#define EMUTEST_TG 1024

// Sums each group's tgsize.x elements through threadgroup memory: a tree whose steps
// are separated by barriers. Any group size 1..1024.
template <bool kBarriers>
inline void tree_sum(device const float* src, device float* dst, constant EmuTestParams& p,
                     threadgroup float* part, uint3 gid, uint3 lid, uint3 tgid, uint3 tgsize) {
  part[lid.x] = int64_t(gid.x) < p.n ? src[gid.x] : 0.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint half_span = 1;
  while (half_span < tgsize.x) half_span <<= 1;
  for (uint s = half_span / 2; s > 0; s >>= 1) {
    if (lid.x < s && lid.x + s < tgsize.x) part[lid.x] = part[lid.x] + part[lid.x + s];
    if (kBarriers) threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (lid.x == 0) dst[tgid.x] = part[0];
}

template <bool kBarriers>
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_tg_sum(device const float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                           constant EmuTestParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(float, part, EMUTEST_TG);
  tree_sum<kBarriers>(src, dst, p, part, gid, lid, tgid, tgsize);
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_tg_sum_f32, emutest_tg_sum<true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_tg_sum_nobarrier_f32, emutest_tg_sum<false>))

// Lane p.bad returns before the barrier: an error, never a hang or a silent answer.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_early_return(device const float* src [[buffer(0)]],
                                 device float* dst [[buffer(1)]],
                                 constant EmuTestParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(float, part, 64);
  if (lid.x == p.bad) return;
  part[lid.x % 64] = src[gid.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[gid.x] = part[(lid.x + 1) % 64];
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_early_return_f32, emutest_early_return))

// Lanes below p.bad take one extra barrier: reached by only some lanes.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_extra_barrier(device float* dst [[buffer(0)]],
                                  constant EmuTestParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid.x < p.bad) threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[gid.x] = 1.0f;
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_extra_barrier_f32, emutest_extra_barrier))

// A barrier in a kernel instantiated with plain EMBER_KERNEL.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_barrier_plain(device float* dst [[buffer(0)]],
                                  constant EmuTestParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  dst[gid.x] = 1.0f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_barrier_plain_f32, emutest_barrier_plain))

// Reads one element past the end of src (the last lane).
kernel void emutest_read_past_end(device const float* src [[buffer(0)]],
                                  device float* dst [[buffer(1)]],
                                  constant EmuTestParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) < p.n) dst[gid.x] = src[gid.x + 1];
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_read_past_end_f32, emutest_read_past_end))

// Writes one element past a threadgroup array of 32 (lane 32 of a 33-lane group).
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_tg_overrun(device float* dst [[buffer(0)]],
                               constant EmuTestParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(float, part, 32);
  part[lid.x] = float(lid.x);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  dst[gid.x] = part[0];
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_tg_overrun_f32, emutest_tg_overrun))

// simd_sum / simd_max / simd_min / simd_shuffle_down of each lane's value.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_simd(device const float* src [[buffer(0)]], device float* sum [[buffer(1)]],
                         device float* mx [[buffer(2)]], device float* mn [[buffer(3)]],
                         device float* down [[buffer(4)]], device uint* lane_info [[buffer(5)]],
                         constant EmuTestParams& p [[buffer(6)]], EMBER_THREAD_ARGS) {
  const float v = int64_t(gid.x) < p.n ? src[gid.x] : 0.0f;
  const float s = simd_sum(v);
  const float a = simd_max(v);
  const float b = simd_min(v);
  const float d = simd_shuffle_down(v, ushort(3));
  if (int64_t(gid.x) < p.n) {
    sum[gid.x] = s;
    mx[gid.x] = a;
    mn[gid.x] = b;
    down[gid.x] = d;
    lane_info[gid.x] = simd_group * 32 + simd_lane;
  }
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_simd_f32, emutest_simd))

// A reduction by simd_sum per simdgroup, then threadgroup memory across simdgroups.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_simd_tg_sum(device const float* src [[buffer(0)]],
                                device float* dst [[buffer(1)]],
                                constant EmuTestParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(float, partial, 32);
  const float v = int64_t(gid.x) < p.n ? src[gid.x] : 0.0f;
  const float s = simd_sum(v);
  if (simd_lane == 0) partial[simd_group] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (simd_group == 0) {
    const uint groups = (tgsize.x + 31) / 32;
    const float t = simd_sum(simd_lane < groups ? partial[simd_lane] : 0.0f);
    if (simd_lane == 0) dst[tgid.x] = t;
  }
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_simd_tg_sum_f32, emutest_simd_tg_sum))

// Half the lanes of a simdgroup call simd_sum: an error in the emulator.
[[max_total_threads_per_threadgroup(1024)]]
kernel void emutest_simd_divergent(device float* dst [[buffer(0)]],
                                   constant EmuTestParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  float v = 1.0f;
  if (simd_lane < 16) v = simd_sum(v);
  dst[gid.x] = v;
}
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(emutest_simd_divergent_f32, emutest_simd_divergent))

// dst[i] = dst[i] * p.scale + p.value: order-sensitive, for queue ordering.
kernel void emutest_affine(device float* dst [[buffer(0)]], constant EmuTestParams& p [[buffer(1)]],
                           EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) < p.n) dst[gid.x] = dst[gid.x] * p.scale + p.value;
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_affine_f32, emutest_affine))

template <typename T>
kernel void emutest_copy(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                         constant EmuTestParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) < p.n) dst[gid.x] = src[gid.x];
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_copy_f32, emutest_copy<float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_copy_u8, emutest_copy<uchar>))
EMBER_IF_I64(EMBER_KERNEL(emutest_copy_i64, emutest_copy<int64_t>))

// Writes every thread argument of a 3-D dispatch, 8 uints per lane.
kernel void emutest_thread_args(device uint* out [[buffer(0)]],
                                constant EmuTestParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  const uint3 grid = uint3(tgsize.x * 2, tgsize.y * 3, tgsize.z * 2);  // groups (2, 3, 2)
  const uint i = (gid.z * grid.y + gid.y) * grid.x + gid.x;
  device uint* o = out + i * 8;
  o[0] = lid.x + 100 * lid.y + 10000 * lid.z;
  o[1] = tgid.x + 100 * tgid.y + 10000 * tgid.z;
  o[2] = tgsize.x + 100 * tgsize.y + 10000 * tgsize.z;
  o[3] = simd_lane;
  o[4] = simd_group;
  o[5] = gid.x;
  o[6] = gid.y;
  o[7] = gid.z;
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_thread_args_u32, emutest_thread_args))

// The shim's math, one function per output column, on each input.
#define EMUTEST_MATH_COLS 24
kernel void emutest_math(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                         device half* hout [[buffer(2)]], device bf16_t* bout [[buffer(3)]],
                         constant EmuTestParams& p [[buffer(4)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.n) return;
  const float v = x[gid.x];
  device float* o = out + gid.x * EMUTEST_MATH_COLS;
  o[0] = exp(v);
  o[1] = log(v);
  o[2] = sqrt(v);
  o[3] = rsqrt(v);
  o[4] = sin(v);
  o[5] = cos(v);
  o[6] = tanh(v);
  o[7] = abs(v);
  o[8] = fabs(v);
  o[9] = fmax(v, 0.5f);
  o[10] = fmin(v, 0.5f);
  o[11] = max(v, 0.5f);
  o[12] = min(v, 0.5f);
  o[13] = clamp(v, -1.0f, 1.0f);
  o[14] = pow(v, 1.5f);
  o[15] = powr(v, 1.5f);
  o[16] = floor(v);
  o[17] = ceil(v);
  o[18] = rint(v);
  o[19] = trunc(v);
  o[20] = fma(v, 3.0f, 1.0f);
  o[21] = select(0.0f, 1.0f, isnan(v)) + select(0.0f, 2.0f, isinf(v));
  o[22] = as_type<float>(as_type<uint>(v) ^ 0x80000000u);
  // integer max/abs (only for small finite v: a float->int cast out of range is UB in C++)
  const bool small = fabs(v) < 1e6f;
  o[23] = small ? float(max(int64_t(v), int64_t(-2))) + float(abs(int(v))) * 1000.0f : 0.0f;
  hout[gid.x] = half(v);
  bout[gid.x] = float_to_bf16(v);
}
EMBER_IF_NOT_I64(EMBER_KERNEL(emutest_math_f32, emutest_math))
