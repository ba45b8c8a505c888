// cumsum and cumprod along the last dim, one threadgroup per row: each lane combines one
// run of the row, lane 0 scans the run totals, then each lane rescans its run from the
// total before it. Few long rows split over many threadgroups (scan.h). Floats
// accumulate in float, integers in an unsigned type (wraps).
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

namespace ember_k {

// Elements [lo, hi) of the row at `base` (stride apart), split into one run per lane:
// each lane's run total into totals[lane], then lane 0 turns the totals into exclusive
// offsets from `first` (in lane order). Every lane of the group must call this. Returns,
// in lane 0, `first` combined with every run (the whole range's total from `first`).
template <typename T, bool kProd>
inline typename ScanNum<T>::A scan_run_offsets(device const T* src, int64_t base, int64_t stride, int64_t lo,
                             int64_t hi, typename ScanNum<T>::A first, uint lane, uint lanes,
                             threadgroup typename ScanNum<T>::A* totals, thread int64_t& rlo,
                             thread int64_t& rhi) {
  typedef typename ScanNum<T>::A A;
  const int64_t run = (hi - lo + lanes - 1) / lanes;
  rlo = min(hi, lo + int64_t(lane) * run);
  rhi = min(hi, rlo + run);
  A acc = kProd ? A(1) : A(0);
  for (int64_t i = rlo; i < rhi; ++i)
    acc = scan_combine<A, kProd>(acc, ScanNum<T>::load(src[base + i * stride]));
  totals[lane] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  A before = first;
  if (lane == 0) {  // exclusive scan of the run totals, in lane order
    for (uint l = 0; l < lanes; ++l) {
      const A t = totals[l];
      totals[l] = before;
      before = scan_combine<A, kProd>(before, t);
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return before;
}

// Rescans a lane's run [rlo, rhi) from acc into out.
template <typename T, bool kProd>
inline void scan_run(device const T* src, int64_t base, int64_t stride, int64_t rlo, int64_t rhi,
                     typename ScanNum<T>::A acc, device T* out) {
  for (int64_t i = rlo; i < rhi; ++i) {
    acc = scan_combine<typename ScanNum<T>::A, kProd>(acc, ScanNum<T>::load(src[base + i * stride]));
    out[i] = ScanNum<T>::store(acc);
  }
}

}  // namespace ember_k

template <typename T, bool kProd>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void scan_rows(device const T* src [[buffer(0)]], device T* dst [[buffer(1)]],
                      constant ScanKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename ScanNum<T>::A A;
  EMBER_THREADGROUP(A, totals, EMBER_REDUCE_GROUP);
  const int64_t row = p.first_row + int64_t(tgid.x);
  const int64_t base = offset_of(p.rows, row);
  int64_t rlo, rhi;
  scan_run_offsets<T, kProd>(src, base, p.stride, 0, p.n, kProd ? A(1) : A(0), lid.x, tgsize.x,
                             totals, rlo, rhi);
  scan_run<T, kProd>(src, base, p.stride, rlo, rhi, totals[lid.x], dst + row * p.n);
}

// Chunk totals of the split rows: threadgroup g writes its chunk's total to totals[g].
template <typename T, bool kProd>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void scan_totals(device const T* src [[buffer(0)]],
                        device typename ember_k::ScanNum<T>::A* out [[buffer(1)]],
                        constant ScanKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename ScanNum<T>::A A;
  EMBER_THREADGROUP(A, totals, EMBER_REDUCE_GROUP);
  const int64_t g = int64_t(tgid.x), row = p.first_row + g / p.chunks, c = g % p.chunks;
  const int64_t lo = min(p.n, c * p.per_chunk), hi = min(p.n, lo + p.per_chunk);
  int64_t rlo, rhi;
  const A total = scan_run_offsets<T, kProd>(src, offset_of(p.rows, row), p.stride, lo, hi,
                                             kProd ? A(1) : A(0), lid.x, tgsize.x, totals, rlo, rhi);
  if (lid.x == 0) out[g] = total;
}

// Each split row's chunk totals into the exclusive offsets of its chunks, in place; a
// thread per row.
template <typename T, bool kProd>
kernel void scan_offsets(device typename ember_k::ScanNum<T>::A* totals [[buffer(0)]],
                         constant ScanKParams& p [[buffer(1)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename ScanNum<T>::A A;
  const int64_t r = int64_t(gid.x);
  if (r >= p.nrows) return;
  A before = kProd ? A(1) : A(0);
  for (int64_t c = 0; c < p.chunks; ++c) {
    const A t = totals[r * p.chunks + c];
    totals[r * p.chunks + c] = before;
    before = scan_combine<A, kProd>(before, t);
  }
}

// Each chunk's scan from its offset.
template <typename T, bool kProd>
[[max_total_threads_per_threadgroup(EMBER_REDUCE_GROUP)]]
kernel void scan_chunks(device const T* src [[buffer(0)]],
                        device const typename ember_k::ScanNum<T>::A* offsets [[buffer(1)]],
                        device T* dst [[buffer(2)]], constant ScanKParams& p [[buffer(3)]],
                        EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename ScanNum<T>::A A;
  EMBER_THREADGROUP(A, totals, EMBER_REDUCE_GROUP);
  const int64_t g = int64_t(tgid.x), row = p.first_row + g / p.chunks, c = g % p.chunks;
  const int64_t lo = min(p.n, c * p.per_chunk), hi = min(p.n, lo + p.per_chunk);
  const int64_t base = offset_of(p.rows, row);
  int64_t rlo, rhi;
  scan_run_offsets<T, kProd>(src, base, p.stride, lo, hi, offsets[g], lid.x, tgsize.x, totals,
                             rlo, rhi);
  scan_run<T, kProd>(src, base, p.stride, rlo, rhi, totals[lid.x], dst + row * p.n);
}

#define EMBER_SCAN_KERNELS(name, suffix, T, kProd)                       \
  EMBER_KERNEL_GROUPED(scan_##name##_##suffix, scan_rows<T, kProd>)      \
  EMBER_KERNEL_GROUPED(scan_##name##_totals_##suffix, scan_totals<T, kProd>) \
  EMBER_KERNEL(scan_##name##_offsets_##suffix, scan_offsets<T, kProd>)   \
  EMBER_KERNEL_GROUPED(scan_##name##_chunks_##suffix, scan_chunks<T, kProd>)
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
