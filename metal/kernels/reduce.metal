// Reductions over the trailing dims of a strided view: sum, max, min, argmax, argmin.
// Each output gets p.lanes lanes of one threadgroup: the lanes stride over the reduced
// elements, then a tree over threadgroup memory combines them (see reduce.h).
#include "common.h"
#include "reduce.h"

namespace ember_k {

// A running sum. Integers: plain (ulong wraps around).
template <typename S>
struct SumAcc {
  S hi, lo;
  static SumAcc zero() { return of(S(0), S(0)); }
  static SumAcc of(S hi, S lo) {
    SumAcc a;
    a.hi = hi;
    a.lo = lo;
    return a;
  }
  void add(S x) { hi += x; }
  void merge(SumAcc o) { hi += o.hi; }
  S total() const { return hi; }
};

// Floats: hi + lo with lo the exact rounding errors of the additions into hi (two-sum;
// exact in IEEE arithmetic, which the runtime asks for with Metal's safe math mode).
template <>
struct SumAcc<float> {
  float hi, lo;
  static SumAcc zero() { return of(0.0f, 0.0f); }
  static SumAcc of(float hi, float lo) {
    SumAcc a;
    a.hi = hi;
    a.lo = lo;
    return a;
  }
  void add(float x) {
    const float s = hi + x;
    const float b = s - hi;
    lo += (hi - (s - b)) + (x - b);
    hi = s;
  }
  void merge(SumAcc o) {
    add(o.hi);
    lo += o.lo;
  }
  // Once hi is inf or NaN it stays so, and lo is NaN (inf - inf): hi is the answer.
  float total() const { return isinf(hi) || isnan(hi) ? hi : hi + lo; }
};

// Is (v, i) a better extreme than (best, bi)? A NaN wins (the first one), then the larger
// (smaller) value, then the lower index on ties; index < 0 means "nothing yet". The
// order of combining never changes the answer, so lanes and trees agree with the CPU.
template <typename T, bool kMax>
inline bool better(typename Num<T>::C v, int64_t i, typename Num<T>::C best, int64_t bi) {
  if (i < 0) return false;
  if (bi < 0) return true;
  if (Num<T>::is_nan(best)) return Num<T>::is_nan(v) && i < bi;
  if (Num<T>::is_nan(v)) return true;
  if (kMax ? v > best : v < best) return true;
  return v == best && i < bi;
}

template <typename C>
struct Extreme {
  C value;
  int64_t index;  // into the flattened reduced dims; -1 for an empty reduction
};

// The extreme of output `row` for the lanes of its segment; every lane of the group
// must call this (it has barriers). The answer is valid in the segment's lane 0.
template <typename T, bool kMax>
inline Extreme<typename Num<T>::C> extreme_of_row(device const T* src, constant ReduceKParams& p,
                                                  uint tid, uint group,
                                                  threadgroup typename Num<T>::C* vals,
                                                  threadgroup int64_t* idxs) {
  typedef typename Num<T>::C C;
  const uint lane = tid % p.lanes;
  const int64_t row = int64_t(group) * p.rows + tid / p.lanes;
  C best = C(0);
  int64_t index = -1;
  if (row < p.nout) {
    const int64_t base = offset_of(p.kept, row);
    for (int64_t i = lane; i < p.count; i += p.lanes) {
      const C v = Num<T>::load(src[base + offset_of(p.red, i)]);
      if (better<T, kMax>(v, i, best, index)) {
        best = v;
        index = i;
      }
    }
  }
  vals[tid] = best;
  idxs[tid] = index;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane < s && better<T, kMax>(vals[tid + s], idxs[tid + s], vals[tid], idxs[tid])) {
      vals[tid] = vals[tid + s];
      idxs[tid] = idxs[tid + s];
    }
  }
  Extreme<C> r;
  r.value = vals[tid];
  r.index = idxs[tid];
  return r;
}

}  // namespace ember_k

// S: the accumulator: float for float types, carried as hi + lo (compensated: each
// addition's rounding error is recovered exactly and kept in lo), so float sums come out
// as if summed in double, like the CPU's; ulong for integers (wrap-around, as the CPU's
// int64 sum). O: the output type (T for floats, int64_t for integers).
template <typename T, typename S, typename O>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_sum(device const T* src [[buffer(0)]], device O* dst [[buffer(1)]],
                       constant ReduceKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(S, his, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(S, los, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  const uint tid = lid.x;
  const uint lane = tid % p.lanes;
  const int64_t row = int64_t(tgid.x) * p.rows + tid / p.lanes;
  SumAcc<S> acc = SumAcc<S>::zero();
  if (row < p.nout) {
    const int64_t base = offset_of(p.kept, row);
    for (int64_t i = lane; i < p.count; i += p.lanes)
      acc.add(S(Num<T>::load(src[base + offset_of(p.red, i)])));
  }
  his[tid] = acc.hi;
  los[tid] = acc.lo;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane < s) {
      SumAcc<S> mine = SumAcc<S>::of(his[tid], los[tid]);
      mine.merge(SumAcc<S>::of(his[tid + s], los[tid + s]));
      his[tid] = mine.hi;
      los[tid] = mine.lo;
    }
  }
  if (lane == 0 && row < p.nout)
    dst[row] = Num<O>::store(typename Num<O>::C(SumAcc<S>::of(his[tid], los[tid]).total()));
}

template <typename T, bool kMax>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_extreme(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                           constant ReduceKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(typename ember_k::Num<T>::C, vals, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(int64_t, idxs, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  const ember_k::Extreme<typename Num<T>::C> r =
      extreme_of_row<T, kMax>(src, p, lid.x, tgid.x, vals, idxs);
  const int64_t row = int64_t(tgid.x) * p.rows + lid.x / p.lanes;
  if (lid.x % p.lanes == 0 && row < p.nout) dst[row] = Num<T>::store(r.value);
}

template <typename T, bool kMax>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_arg(device const T* src [[buffer(0)]], device int64_t* dst [[buffer(1)]],
                       constant ReduceKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(typename ember_k::Num<T>::C, vals, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(int64_t, idxs, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  const ember_k::Extreme<typename Num<T>::C> r =
      extreme_of_row<T, kMax>(src, p, lid.x, tgid.x, vals, idxs);
  const int64_t row = int64_t(tgid.x) * p.rows + lid.x / p.lanes;
  if (lid.x % p.lanes == 0 && row < p.nout) dst[row] = r.index;
}

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_f32, reduce_sum<float, float, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_f16, reduce_sum<half, float, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_bf16, reduce_sum<bf16_t, float, bf16_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_sum_i64, reduce_sum<int64_t, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_i32, reduce_sum<int, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_u32, reduce_sum<uint, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_u8, reduce_sum<uchar, ulong, int64_t>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_f32, reduce_extreme<float, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_f16, reduce_extreme<half, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_bf16, reduce_extreme<bf16_t, true>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_max_i64, reduce_extreme<int64_t, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_i32, reduce_extreme<int, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_u32, reduce_extreme<uint, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_u8, reduce_extreme<uchar, true>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_f32, reduce_extreme<float, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_f16, reduce_extreme<half, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_bf16, reduce_extreme<bf16_t, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_min_i64, reduce_extreme<int64_t, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_i32, reduce_extreme<int, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_u32, reduce_extreme<uint, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_u8, reduce_extreme<uchar, false>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_f32, reduce_arg<float, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_f16, reduce_arg<half, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_bf16, reduce_arg<bf16_t, true>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_argmax_i64, reduce_arg<int64_t, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_i32, reduce_arg<int, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_u32, reduce_arg<uint, true>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_u8, reduce_arg<uchar, true>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_f32, reduce_arg<float, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_f16, reduce_arg<half, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_bf16, reduce_arg<bf16_t, false>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_argmin_i64, reduce_arg<int64_t, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_i32, reduce_arg<int, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_u32, reduce_arg<uint, false>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_u8, reduce_arg<uchar, false>))
