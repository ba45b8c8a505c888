// softmax and log_softmax over the last dim, in float for every float dtype, as the CPU
// does: subtract the row's max (0 when it is -inf), sum the exps, then scale or subtract
// the log of the sum. The lanes of a row reduce through threadgroup memory.
#include "common.h"
#include "softmax.h"

template <typename T, bool kLog>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void softmax_rows(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                         constant SoftmaxKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(float, maxes, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(float, sums, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  const uint tid = lid.x;
  const bool cols = p.columns != 0;
  const uint lane = cols ? tid / p.rows_per_group : tid % p.lanes;
  const uint step = cols ? p.rows_per_group : 1u;  // between the row's neighbouring lanes
  const uint first = tid - lane * step;            // the row's lane 0
  const int64_t row = int64_t(tgid.x) * p.rows_per_group + (cols ? tid % p.rows_per_group : tid / p.lanes);
  const bool active = row < p.nrows;
  const int64_t base = active ? offset_of(p.rows, row) : 0;

  // fmax skips NaNs like the CPU's std::max; a NaN still makes the sum (and row) NaN.
  float mx = -INFINITY;
  if (active)
    for (int64_t i = lane; i < p.n; i += p.lanes)
      mx = fmax(mx, Num<T>::load(src[base + i * p.stride]));
  maxes[tid] = mx;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane < s) maxes[tid] = fmax(maxes[tid], maxes[tid + s * step]);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  mx = maxes[first];
  if (isinf(mx) && mx < 0) mx = 0;  // all -inf: keep exp() finite

  float sum = 0;
  if (active)
    for (int64_t i = lane; i < p.n; i += p.lanes)
      sum += exp(Num<T>::load(src[base + i * p.stride]) - mx);
  sums[tid] = sum;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane < s) sums[tid] = sums[tid] + sums[tid + s * step];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  sum = sums[first];

  if (active) {
    // rows: dst's row r; columns: where src has the row, in dst's contiguous layout
    device T* out = cols ? dst + (base - p.src_offset) : dst + row * p.n;
    const int64_t out_step = cols ? p.stride : 1;
    if (kLog) {
      // (x - max) - log(sum), not x - (max + log(sum)): that would round away small terms
      const float log_sum = log(sum);
      for (int64_t i = lane; i < p.n; i += p.lanes)
        out[i * out_step] = Num<T>::store((Num<T>::load(src[base + i * p.stride]) - mx) - log_sum);
    } else {
      const float inv = 1.0f / sum;
      for (int64_t i = lane; i < p.n; i += p.lanes)
        out[i * out_step] = Num<T>::store(exp(Num<T>::load(src[base + i * p.stride]) - mx) * inv);
    }
  }
}

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_softmax_f32, softmax_rows<float, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_softmax_f16, softmax_rows<half, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_softmax_bf16, softmax_rows<bf16_t, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_log_softmax_f32, softmax_rows<float, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_log_softmax_f16, softmax_rows<half, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(softmax_log_softmax_bf16, softmax_rows<bf16_t, true>))
