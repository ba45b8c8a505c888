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
  void add_square(S x) { hi += x * x; }
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
  // x * x, the product's rounding error kept too (norm's sum of squares)
  void add_square(float x) {
    const float sq = x * x;
    add(sq);
    lo += fma(x, x, -sq);
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

// Where thread tid of threadgroup `group` works (see ReduceKParams): its output, its lane
// among that output's lanes, how far apart the output's lanes sit in the group, and the
// range of reduced elements of its group's chunk.
struct Slot {
  int64_t row;
  uint lane, step;
  int64_t lo, hi, part;  // part: the output's partial slot (split reductions)
};

inline Slot slot_of(constant ReduceKParams& p, uint tid, uint group) {
  Slot s;
  const uint chunk = group % p.chunks;
  const int64_t first = int64_t(group / p.chunks) * p.rows;
  if (p.out_minor != 0) {
    s.row = first + tid % p.rows;
    s.lane = tid / p.rows;
    s.step = p.rows;
  } else {
    s.row = first + tid / p.lanes;
    s.lane = tid % p.lanes;
    s.step = 1;
  }
  s.lo = int64_t(chunk) * p.per_chunk;
  s.hi = min(p.count, s.lo + p.per_chunk);
  s.part = s.row * int64_t(p.chunks) + int64_t(chunk);
  return s;
}

// The extreme of the thread's output over its chunk, for the lanes of the output; every
// lane of the group must call this (it has barriers). Valid in the output's lane 0.
template <typename T, bool kMax>
inline Extreme<typename Num<T>::C> extreme_of_row(device const T* src, constant ReduceKParams& p,
                                                  Slot sl, uint tid,
                                                  threadgroup typename Num<T>::C* vals,
                                                  threadgroup int64_t* idxs) {
  typedef typename Num<T>::C C;
  C best = C(0);
  int64_t index = -1;
  if (sl.row < p.nout) {
    const int64_t base = offset_of(p.kept, sl.row);
    for (int64_t i = sl.lo + sl.lane; i < sl.hi; i += p.lanes) {
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
    const uint o = tid + s * sl.step;
    if (sl.lane < s && better<T, kMax>(vals[o], idxs[o], vals[tid], idxs[tid])) {
      vals[tid] = vals[o];
      idxs[tid] = idxs[o];
    }
  }
  Extreme<C> r;
  r.value = vals[tid];
  r.index = idxs[tid];
  return r;
}

// What an extreme reduction writes: the index (argmax / argmin) or the value (O is T).
template <bool kArg>
struct ExtremeOut {
  template <typename T, typename C, typename O>
  static void put(device O* dst, int64_t row, C, int64_t index) {
    dst[row] = O(index < 0 ? 0 : index);
  }
};
template <>
struct ExtremeOut<false> {
  template <typename T, typename C, typename O>
  static void put(device O* dst, int64_t row, C value, int64_t) {
    dst[row] = Num<T>::store(value);
  }
};

// A split reduction's partials, in the scratch buffer bound as dst.
template <typename S>
struct SumPartial {
  S hi, lo;
};

// 2^k as a float, k in [-149, 127] (below -126 a subnormal, still exact).
inline float pow2(int k) {
  return k >= -126 ? as_type<float>(uint(k + 127) << 23) : as_type<float>(1u << uint(k + 149));
}

// The binade of |d|: its exponent, clamped to [-126, 127] (subnormals at the low end,
// inf and NaN at the top).
inline int binade(float d) {
  const int e = int((as_type<uint>(d) >> 23) & 0xffu) - 127;
  return min(max(e, -126), 127);
}

// hi + lo + x as hi + lo, lo gathering each addition's rounding error (two-sum).
struct HiLo {
  float hi, lo;
};
inline HiLo two_sum(HiLo a, float x) {
  const float s = a.hi + x;
  const float b = s - a.hi;
  HiLo r;
  r.lo = a.lo + ((a.hi - (s - b)) + (x - b));
  r.hi = s;
  return r;
}

// The moments of d = x - K (K the row's first element) for var / std in one pass, in
// float32 without overflow or underflow: s1 = sum(d) 2^-e and s2 = sum(d^2) 2^-2e, each
// compensated (hi + lo), e the largest binade of a d seen so far. A larger d rescales the
// sums (by powers of two, exact; what underflows is below 2^-126 of the new largest term),
// so each term d 2^-e is below 2 in magnitude and its square below 4.
struct MomentsAcc {
  float k;  // the row's first element
  HiLo s1, s2;
  int e;
  static MomentsAcc zero() {
    MomentsAcc a;
    a.k = 0.0f;
    a.s1.hi = a.s1.lo = a.s2.hi = a.s2.lo = 0.0f;
    a.e = -126;
    return a;
  }
  void begin(float first) { k = first; }
  void rescale(int to) {  // to >= e
    const int d = e - to;
    const float r = d >= -149 ? pow2(d) : 0.0f;
    const float r2 = 2 * d >= -149 ? pow2(2 * d) : 0.0f;
    s1.hi *= r;
    s1.lo *= r;
    s2.hi *= r2;
    s2.lo *= r2;
    e = to;
  }
  void add(float x) {
    const float d = x - k;
    const int b = binade(d);
    if (b > e) rescale(b);
    const float y = d * pow2(-e);
    s1 = two_sum(s1, y);
    const float sq = y * y;
    s2 = two_sum(s2, sq);
    s2.lo += fma(y, y, -sq);
  }
  void merge(MomentsAcc o) {
    if (o.e > e) rescale(o.e);
    if (e > o.e) o.rescale(e);
    s1 = two_sum(s1, o.s1.hi);
    s1.lo += o.s1.lo;
    s2 = two_sum(s2, o.s2.hi);
    s2.lo += o.s2.lo;
  }
  // sum((d - mean)^2) / max(n - correction, 0), its root when `root`: s2 - s1^2 / n with
  // the mean's rounding carried (m + ml), no cancellation beyond the data's own; an inf or
  // NaN term leaves NaN (inf - inf), as numpy's.
  float result(constant VarKParams& p) const {
    const float nf = float(p.r.count);
    const float m = (s1.hi + s1.lo) / nf;
    const float ml = (fma(-m, nf, s1.hi) + s1.lo) / nf;
    float t = fma(-m, s1.hi, s2.hi) - (m * s1.lo + ml * s1.hi) + s2.lo;
    t = t / max(nf - p.correction, 0.0f);
    t = t < 0.0f ? 0.0f : t;  // NaN stays
    const float sc = pow2(e);
    return p.root != 0 ? sqrt(t) * sc : t * sc * sc;
  }
};

// logsumexp's running max m and s = sum exp(x - m) (compensated), s rescaled by
// exp(m_old - m) when the max rises: core/logsumexp.h's LseState in float32, which is
// all Metal has. A NaN gives NaN, a +inf max +inf, all -inf (or nothing) -inf; -inf
// values add nothing.
struct LseAcc {
  float m;
  HiLo s;
  uint nan;
  static LseAcc of(float m, float hi, float lo, uint nan) {
    LseAcc a;
    a.m = m;
    a.s.hi = hi;
    a.s.lo = lo;
    a.nan = nan;
    return a;
  }
  static LseAcc zero() { return of(-INFINITY, 0.0f, 0.0f, 0u); }
  void begin(float) {}
  void raise_to(float x) {  // x > m
    const float f = m == -INFINITY ? 0.0f : exp(m - x);
    s.hi *= f;
    s.lo *= f;
    m = x;
  }
  void add(float x) {
    if (isnan(x)) {
      nan = 1u;
    } else if (x > m) {
      raise_to(x);
      s = two_sum(s, 1.0f);
    } else if (x != -INFINITY && m != INFINITY) {
      s = two_sum(s, exp(x - m));
    }
  }
  void merge(LseAcc o) {
    nan = nan | o.nan;
    if (o.m == -INFINITY) return;
    if (o.m > m) {
      raise_to(o.m);
      s = two_sum(s, o.s.hi);
      s.lo += o.s.lo;
    } else if (m != INFINITY) {
      const float f = exp(o.m - m);
      s = two_sum(s, o.s.hi * f);
      s.lo += o.s.lo * f;
    }
  }
  float result(constant ReduceKParams&) const {
    if (nan != 0u) return NAN;
    if (isinf(m)) return m;
    return m + log(s.hi + s.lo);
  }
};

// The product in the value's own type; integers wrap around (two's complement, as the
// CPU's and PyTorch's), multiplied as ulong so that an overflow is defined.
template <typename C>
struct ProdAcc {
  C v;
  static C mul(C a, C b) { return a * b; }
  static ProdAcc zero() {
    ProdAcc a;
    a.v = C(1);
    return a;
  }
  void begin(C) {}
  void add(C x) { v = mul(v, x); }
  void merge(ProdAcc o) { v = mul(v, o.v); }
  C result(constant ReduceKParams&) const { return v; }
};
template <>
inline int64_t ProdAcc<int64_t>::mul(int64_t a, int64_t b) {
  return as_type<int64_t>(as_type<ulong>(a) * as_type<ulong>(b));
}

// The reduction parameters of a kernel's parameters.
inline constant ReduceKParams& reduce_params(constant ReduceKParams& p) { return p; }
inline constant ReduceKParams& reduce_params(constant VarKParams& p) { return p.r; }


}  // namespace ember_k

// S: the accumulator: float for float types, carried as hi + lo (compensated: each
// addition's rounding error is recovered exactly and kept in lo), so float sums come out
// as if summed in double, like the CPU's; ulong for integers (wrap-around, as the CPU's
// int64 sum). O: the output type (T for floats, int64_t for integers).
// kSquares: the sum of squares (floats only), norm(p=2)'s one pass.
template <typename T, typename S, typename O, bool kSquares = false>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_sum(device const T* src [[buffer(0)]], device O* dst [[buffer(1)]],
                       constant ReduceKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(S, his, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(S, los, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  const uint tid = lid.x;
  const Slot sl = slot_of(p, tid, tgid.x);
  SumAcc<S> acc = SumAcc<S>::zero();
  if (sl.row < p.nout) {
    const int64_t base = offset_of(p.kept, sl.row);
    for (int64_t i = sl.lo + sl.lane; i < sl.hi; i += p.lanes) {
      const S v = S(Num<T>::load(src[base + offset_of(p.red, i)]));
      if (kSquares)
        acc.add_square(v);
      else
        acc.add(v);
    }
  }
  his[tid] = acc.hi;
  los[tid] = acc.lo;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sl.lane < s) {
      const uint o = tid + s * sl.step;
      SumAcc<S> mine = SumAcc<S>::of(his[tid], los[tid]);
      mine.merge(SumAcc<S>::of(his[o], los[o]));
      his[tid] = mine.hi;
      los[tid] = mine.lo;
    }
  }
  if (sl.lane != 0 || sl.row >= p.nout) return;
  if (p.chunks > 1) {
    device SumPartial<S>* part = reinterpret_cast<device SumPartial<S>*>(dst);
    part[sl.part].hi = his[tid];
    part[sl.part].lo = los[tid];
  } else {
    dst[sl.row] = Num<O>::store(typename Num<O>::C(SumAcc<S>::of(his[tid], los[tid]).total()));
  }
}

// Merges each output's chunks partials in chunk order, a thread per output (T names the
// source's dtype only: one instance per kernel name).
template <typename T, typename S, typename O>
kernel void reduce_sum_finish(device const ember_k::SumPartial<S>* part [[buffer(0)]],
                              device O* dst [[buffer(1)]], constant ReduceKParams& p [[buffer(2)]],
                              EMBER_THREAD_ARGS) {
  using namespace ember_k;
  const int64_t row = int64_t(gid.x);
  if (row >= p.nout) return;
  SumAcc<S> acc = SumAcc<S>::zero();
  for (uint c = 0; c < p.chunks; ++c) {
    const int64_t k = row * int64_t(p.chunks) + int64_t(c);
    acc.merge(SumAcc<S>::of(part[k].hi, part[k].lo));
  }
  dst[row] = Num<O>::store(typename Num<O>::C(acc.total()));
}

// max / min (kArg false: the value) and argmax / argmin (the index).
template <typename T, bool kMax, bool kArg, typename O>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_extreme(device const T* src [[buffer(0)]], device O* dst [[buffer(1)]],
                           constant ReduceKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(typename ember_k::Num<T>::C, vals, EMBER_REDUCE_GROUP);
  EMBER_THREADGROUP(int64_t, idxs, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  typedef typename Num<T>::C C;
  const Slot sl = slot_of(p, lid.x, tgid.x);
  const Extreme<C> r = extreme_of_row<T, kMax>(src, p, sl, lid.x, vals, idxs);
  if (sl.lane != 0 || sl.row >= p.nout) return;
  if (p.chunks > 1)
    reinterpret_cast<device Extreme<C>*>(dst)[sl.part] = r;
  else
    ExtremeOut<kArg>::template put<T>(dst, sl.row, r.value, r.index);
}

template <typename T, bool kMax, bool kArg, typename O>
kernel void reduce_extreme_finish(device const ember_k::Extreme<typename ember_k::Num<T>::C>* part
                                  [[buffer(0)]],
                                  device O* dst [[buffer(1)]], constant ReduceKParams& p [[buffer(2)]],
                                  EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename Num<T>::C C;
  const int64_t row = int64_t(gid.x);
  if (row >= p.nout) return;
  C best = C(0);
  int64_t index = -1;
  for (uint c = 0; c < p.chunks; ++c) {
    const Extreme<C> e = part[row * int64_t(p.chunks) + int64_t(c)];
    if (better<T, kMax>(e.value, e.index, best, index)) {
      best = e.value;
      index = e.index;
    }
  }
  ExtremeOut<kArg>::template put<T>(dst, row, best, index);
}

// A reduction by an accumulator Acc (ProdAcc, LseAcc, MomentsAcc: zero, begin with the
// row's first element, add, merge, result), on reduce_sum's shapes: each lane adds its
// elements, a tree over threadgroup memory merges the lanes, and a split reduction
// writes each chunk's Acc as its partial (EMBER_ACC_PARTIAL_BYTES a slot), which
// reduce_acc_finish merges in chunk order. P: the kernel's parameters (ReduceKParams or
// a struct that holds them, see reduce_params), for result().
template <typename T, typename Acc, typename P>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void reduce_acc(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                       constant P& params [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(Acc, accs, EMBER_REDUCE_GROUP);
  using namespace ember_k;
  static_assert(sizeof(Acc) <= EMBER_ACC_PARTIAL_BYTES, "a partial slot holds an Acc");
  constant ReduceKParams& p = reduce_params(params);
  const uint tid = lid.x;
  const Slot sl = slot_of(p, tid, tgid.x);
  Acc acc = Acc::zero();
  if (sl.row < p.nout) {
    const int64_t base = offset_of(p.kept, sl.row);
    acc.begin(Num<T>::load(src[base + offset_of(p.red, 0)]));
    for (int64_t i = sl.lo + sl.lane; i < sl.hi; i += p.lanes)
      acc.add(Num<T>::load(src[base + offset_of(p.red, i)]));
  }
  accs[tid] = acc;
  for (uint s = p.lanes / 2; s > 0; s >>= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sl.lane < s) {
      Acc mine = accs[tid];
      mine.merge(accs[tid + s * sl.step]);
      accs[tid] = mine;
    }
  }
  if (sl.lane != 0 || sl.row >= p.nout) return;
  const Acc total = accs[tid];
  if (p.chunks > 1)
    reinterpret_cast<device Acc*>(dst)[sl.part] = total;  // dst: the partials
  else
    dst[sl.row] = Num<T>::store(total.result(params));
}

template <typename T, typename Acc, typename P>
kernel void reduce_acc_finish(device const Acc* part [[buffer(0)]], device T* dst [[buffer(1)]],
                              constant P& params [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  constant ReduceKParams& p = reduce_params(params);
  const int64_t row = int64_t(gid.x);
  if (row >= p.nout) return;
  Acc acc = part[row * int64_t(p.chunks)];
  for (uint c = 1; c < p.chunks; ++c) acc.merge(part[row * int64_t(p.chunks) + int64_t(c)]);
  dst[row] = Num<T>::store(acc.result(params));
}

// name_suffix and name_finish_suffix for T by Acc
#define EMBER_ACC_KERNELS(name, suffix, T, Acc, P)                                     \
  EMBER_KERNEL_GROUPED(name##_##suffix, reduce_acc<T, ember_k::Acc, P>)                \
  EMBER_KERNEL(name##_finish_##suffix, reduce_acc_finish<T, ember_k::Acc, P>)
EMBER_IF_NOT_I64(EMBER_ACC_KERNELS(reduce_prod, f32, float, ProdAcc<float>, ReduceKParams))
EMBER_IF_I64(EMBER_ACC_KERNELS(reduce_prod, i64, int64_t, ProdAcc<int64_t>, ReduceKParams))
EMBER_IF_NOT_I64(EMBER_ACC_KERNELS(reduce_lse, f32, float, LseAcc, ReduceKParams))
EMBER_IF_NOT_I64(EMBER_ACC_KERNELS(reduce_var, f32, float, MomentsAcc, VarKParams))
EMBER_IF_NOT_I64(EMBER_ACC_KERNELS(reduce_var, f16, half, MomentsAcc, VarKParams))
EMBER_IF_NOT_I64(EMBER_ACC_KERNELS(reduce_var, bf16, bf16_t, MomentsAcc, VarKParams))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sumsq_f32, reduce_sum<float, float, float, true>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_f32, reduce_sum<float, float, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_f32, reduce_sum_finish<float, float, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_f16, reduce_sum<half, float, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_f16, reduce_sum_finish<half, float, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_bf16, reduce_sum<bf16_t, float, bf16_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_bf16, reduce_sum_finish<bf16_t, float, bf16_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_sum_i64, reduce_sum<int64_t, ulong, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(reduce_sum_finish_i64, reduce_sum_finish<int64_t, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_i32, reduce_sum<int, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_i32, reduce_sum_finish<int, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_u32, reduce_sum<uint, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_u32, reduce_sum_finish<uint, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_sum_u8, reduce_sum<uchar, ulong, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_sum_finish_u8, reduce_sum_finish<uchar, ulong, int64_t>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_f32, reduce_extreme<float, true, false, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_f32, reduce_extreme_finish<float, true, false, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_f16, reduce_extreme<half, true, false, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_f16, reduce_extreme_finish<half, true, false, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_bf16, reduce_extreme<bf16_t, true, false, bf16_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_bf16, reduce_extreme_finish<bf16_t, true, false, bf16_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_max_i64, reduce_extreme<int64_t, true, false, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(reduce_max_finish_i64, reduce_extreme_finish<int64_t, true, false, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_i32, reduce_extreme<int, true, false, int>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_i32, reduce_extreme_finish<int, true, false, int>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_u32, reduce_extreme<uint, true, false, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_u32, reduce_extreme_finish<uint, true, false, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_max_u8, reduce_extreme<uchar, true, false, uchar>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_max_finish_u8, reduce_extreme_finish<uchar, true, false, uchar>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_f32, reduce_extreme<float, false, false, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_f32, reduce_extreme_finish<float, false, false, float>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_f16, reduce_extreme<half, false, false, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_f16, reduce_extreme_finish<half, false, false, half>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_bf16, reduce_extreme<bf16_t, false, false, bf16_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_bf16, reduce_extreme_finish<bf16_t, false, false, bf16_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_min_i64, reduce_extreme<int64_t, false, false, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(reduce_min_finish_i64, reduce_extreme_finish<int64_t, false, false, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_i32, reduce_extreme<int, false, false, int>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_i32, reduce_extreme_finish<int, false, false, int>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_u32, reduce_extreme<uint, false, false, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_u32, reduce_extreme_finish<uint, false, false, uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_min_u8, reduce_extreme<uchar, false, false, uchar>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_min_finish_u8, reduce_extreme_finish<uchar, false, false, uchar>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_f32, reduce_extreme<float, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_f32, reduce_extreme_finish<float, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_f16, reduce_extreme<half, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_f16, reduce_extreme_finish<half, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_bf16, reduce_extreme<bf16_t, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_bf16, reduce_extreme_finish<bf16_t, true, true, int64_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_argmax_i64, reduce_extreme<int64_t, true, true, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(reduce_argmax_finish_i64, reduce_extreme_finish<int64_t, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_i32, reduce_extreme<int, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_i32, reduce_extreme_finish<int, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_u32, reduce_extreme<uint, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_u32, reduce_extreme_finish<uint, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmax_u8, reduce_extreme<uchar, true, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmax_finish_u8, reduce_extreme_finish<uchar, true, true, int64_t>))

EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_f32, reduce_extreme<float, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_f32, reduce_extreme_finish<float, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_f16, reduce_extreme<half, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_f16, reduce_extreme_finish<half, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_bf16, reduce_extreme<bf16_t, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_bf16, reduce_extreme_finish<bf16_t, false, true, int64_t>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(reduce_argmin_i64, reduce_extreme<int64_t, false, true, int64_t>))
EMBER_IF_I64(EMBER_KERNEL(reduce_argmin_finish_i64, reduce_extreme_finish<int64_t, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_i32, reduce_extreme<int, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_i32, reduce_extreme_finish<int, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_u32, reduce_extreme<uint, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_u32, reduce_extreme_finish<uint, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL_GROUPED(reduce_argmin_u8, reduce_extreme<uchar, false, true, int64_t>))
EMBER_IF_NOT_I64(EMBER_KERNEL(reduce_argmin_finish_u8, reduce_extreme_finish<uchar, false, true, int64_t>))
