// cumsum and cumprod along the last dim, one threadgroup per row: each lane combines one
// run of the row, lane 0 scans the run totals, then each lane rescans its run from the
// total before it. Floats accumulate in float, integers in an unsigned type (wraps).
#include "common.h"
#include "scan.h"

namespace ember_k {

// The accumulator of a stored type: unsigned for every integer type, so overflow wraps
// without UB and int32 keeps all 32 bits (float would round past 2^24).
template <typename T>
struct ScanNum {
  typedef float A;
  static A load(T v) { return Num<T>::load(v); }
  static T store(A v) { return Num<T>::store(v); }
};
template <>
struct ScanNum<int64_t> {
  typedef ulong A;
  static A load(int64_t v) { return A(v); }
  static int64_t store(A v) { return int64_t(v); }
};
template <>
struct ScanNum<int> {
  typedef uint A;
  static A load(int v) { return A(v); }
  static int store(A v) { return int(v); }
};
template <>
struct ScanNum<uint> {
  typedef uint A;
  static A load(uint v) { return v; }
  static uint store(A v) { return v; }
};
template <>
struct ScanNum<uchar> {
  typedef uint A;
  static A load(uchar v) { return A(v); }
  static uchar store(A v) { return uchar(v); }
};

template <typename A, bool kProd>
inline A scan_combine(A a, A b) {
  return kProd ? A(a * b) : A(a + b);
}

}  // namespace ember_k

template <typename T, bool kProd>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void scan_rows(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                      constant ScanKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename ScanNum<T>::A A;
  EMBER_THREADGROUP(A, totals, EMBER_REDUCE_GROUP);
  const uint lane = lid.x, lanes = tgsize.x;
  const int64_t row = p.first_row + int64_t(tgid.x);
  const int64_t base = offset_of(p.rows, row);
  const int64_t run = (p.n + lanes - 1) / lanes;
  const int64_t lo = min(p.n, int64_t(lane) * run), hi = min(p.n, lo + run);
  const A identity = kProd ? A(1) : A(0);

  A acc = identity;
  for (int64_t i = lo; i < hi; ++i)
    acc = scan_combine<A, kProd>(acc, ScanNum<T>::load(src[base + i * p.stride]));
  totals[lane] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lane == 0) {  // exclusive scan of the run totals, in lane order
    A before = identity;
    for (uint l = 0; l < lanes; ++l) {
      const A t = totals[l];
      totals[l] = before;
      before = scan_combine<A, kProd>(before, t);
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  acc = totals[lane];
  device T* out = dst + row * p.n;
  for (int64_t i = lo; i < hi; ++i) {
    acc = scan_combine<A, kProd>(acc, ScanNum<T>::load(src[base + i * p.stride]));
    out[i] = ScanNum<T>::store(acc);
  }
}

#define EMBER_SCAN_KERNELS(name, suffix, T, kProd) \
  EMBER_KERNEL_GROUPED(scan_##name##_##suffix, scan_rows<T, kProd>)
EMBER_FOR_ALL_TYPES(EMBER_SCAN_KERNELS, cumsum, false)
EMBER_FOR_ALL_TYPES(EMBER_SCAN_KERNELS, cumprod, true)

// nonzero: count each group's true bytes, then (after the host scans the counts) write
// their positions: each lane rescans its run from the group's start plus the runs
// before it. Runs are contiguous, so positions come out in order.
inline void nonzero_run(constant NonzeroKParams& p, int64_t group, uint lane, thread int64_t& lo,
                        thread int64_t& hi) {
  const int64_t start = group * p.chunk;
  lo = min(p.n, start + int64_t(lane) * p.per_lane);
  hi = min(min(p.n, start + p.chunk), lo + p.per_lane);
}

template <typename M>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void nonzero_count(device const M* src [[buffer(0)]], device int64_t* counts [[buffer(1)]],
                          constant NonzeroKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(int64_t, totals, EMBER_REDUCE_GROUP);
  const uint lane = lid.x, lanes = tgsize.x;
  const int64_t group = p.first_group + int64_t(tgid.x);
  int64_t lo = 0, hi = 0;
  nonzero_run(p, group, lane, lo, hi);
  int64_t count = 0;
  for (int64_t i = lo; i < hi; ++i) count += src[p.offset + i] != 0 ? 1 : 0;
  totals[lane] = count;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lane == 0) {
    int64_t sum = 0;
    for (uint l = 0; l < lanes; ++l) sum += totals[l];
    counts[group] = sum;
  }
}

template <typename M>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void nonzero_write(device const M* src [[buffer(0)]],
                          device const int64_t* ends [[buffer(1)]], device int64_t* dst [[buffer(2)]],
                          constant NonzeroKParams& p [[buffer(3)]], EMBER_THREAD_ARGS) {
  EMBER_THREADGROUP(int64_t, totals, EMBER_REDUCE_GROUP);
  const uint lane = lid.x, lanes = tgsize.x;
  const int64_t group = p.first_group + int64_t(tgid.x);
  int64_t lo = 0, hi = 0;
  nonzero_run(p, group, lane, lo, hi);
  int64_t count = 0;
  for (int64_t i = lo; i < hi; ++i) count += src[p.offset + i] != 0 ? 1 : 0;
  totals[lane] = count;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lane == 0) {  // exclusive scan of the runs' counts from the groups before this one
    int64_t before = group == 0 ? 0 : ends[group - 1];
    for (uint l = 0; l < lanes; ++l) {
      const int64_t t = totals[l];
      totals[l] = before;
      before += t;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  int64_t at = totals[lane];
  for (int64_t i = lo; i < hi && at < p.limit; ++i) {
    if (src[p.offset + i] == 0) continue;
    if (p.ndim == 1) {
      dst[at++] = i;
      continue;
    }
    int64_t rest = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
      dst[at * int64_t(p.ndim) + d] = rest % p.shape[d];
      rest /= p.shape[d];
    }
    ++at;
  }
}

EMBER_IF_I64(EMBER_KERNEL_GROUPED(scan_nonzero_count_i64, nonzero_count<uchar>))
EMBER_IF_I64(EMBER_KERNEL_GROUPED(scan_nonzero_write_i64, nonzero_write<uchar>))
