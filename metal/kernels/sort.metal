// Stable sort along the last dim: one lane per row merge-sorts the row's positions
// bottom-up, through the two halves of its part of the work buffer; then one lane per
// element takes the values at the sorted positions, and another writes them as int64.
// Positions are uint in the work buffer (rows are shorter than 2^32), so that only the
// int64 output needs the int64 library. NaN sorts above every number.
#include "common.h"
#include "sort.h"

namespace ember_k {

// Whether a goes strictly before b; equal values (NaN with NaN, -0.0 with 0.0) do not.
template <typename T>
inline bool sort_before(T a, T b, bool descending) {
  typedef typename Num<T>::C C;
  const C x = Num<T>::load(a), y = Num<T>::load(b);
  const bool xn = Num<T>::is_nan(x), yn = Num<T>::is_nan(y);
  if (descending) return !yn && (xn || x > y);
  return !xn && (yn || x < y);
}

}  // namespace ember_k

template <typename T>
kernel void sort_rows(device const T* src [[buffer(0)]], device uint* work [[buffer(1)]],
                      constant SortKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t row = p.start + int64_t(gid.x), n = p.n;
  const int64_t base = offset_of(p.rows, row);
  device uint* from = work + row * 2 * n;
  device uint* to = from + n;
  for (int64_t i = 0; i < n; ++i) from[i] = uint(i);
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = min(n, lo + width), hi = min(n, lo + 2 * width);
      int64_t i = lo, j = mid;
      for (int64_t k = lo; k < hi; ++k) {
        // The right run's head goes first only when strictly before: stable.
        const bool right = i >= mid || (j < hi && sort_before(src[base + int64_t(from[j]) * p.stride],
                                                              src[base + int64_t(from[i]) * p.stride],
                                                              p.descending != 0));
        to[k] = right ? from[j++] : from[i++];
      }
    }
    device uint* t = from;
    from = to;
    to = t;
  }
  if (from != work + row * 2 * n)
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

template <typename T>
kernel void sort_take(device const T* src [[buffer(0)]], device const uint* work [[buffer(1)]],
                      device T* values [[buffer(2)]], constant SortKParams& p [[buffer(3)]],
                      EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x), row = i / p.n, j = i % p.n;
  values[i] = src[offset_of(p.rows, row) + int64_t(work[row * 2 * p.n + j]) * p.stride];
}

template <typename I>
kernel void sort_positions(device const uint* work [[buffer(0)]], device I* indices [[buffer(1)]],
                           constant SortKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x), row = i / p.n, j = i % p.n;
  indices[i] = I(work[row * 2 * p.n + j]);
}

#define EMBER_SORT_KERNELS(name, suffix, T, unused) \
  EMBER_KERNEL(sort_rows_##suffix, sort_rows<T>) EMBER_KERNEL(sort_take_##suffix, sort_take<T>)
EMBER_FOR_ALL_TYPES(EMBER_SORT_KERNELS, sort, 0)
EMBER_IF_I64(EMBER_KERNEL(sort_positions_i64, sort_positions<int64_t>))

// ---- radix sort of few long rows (sort.h, RadixKParams)

namespace ember_k {

// Keys whose unsigned order is the sort's order (ascending): floats by their bits (NaN
// one key past +inf, -0.0 as 0.0, negatives reversed), signed integers with the sign bit
// flipped. kBits: the key's significant bits, so narrow dtypes take fewer passes.
template <typename T>
struct RadixKey;
template <>
struct RadixKey<float> {
  typedef uint K;
  enum { kBits = 32 };
  static K of(float v) {
    const uint u = as_type<uint>(v);
    if (isnan(v)) return 0xffffffffu;
    if (v == 0.0f) return 0x80000000u;
    return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
  }
};
inline uint radix_key16(ushort b) {  // a 16-bit float's bits
  const uint u = uint(b);
  if ((u & 0x7fffu) > 0x7c00u) return 0xffffu;  // half NaN
  if ((u & 0x7fffu) == 0) return 0x8000u;
  return (u & 0x8000u) != 0 ? (~u & 0xffffu) : (u | 0x8000u);
}
template <>
struct RadixKey<half> {
  typedef uint K;
  enum { kBits = 16 };
  static K of(half v) { return radix_key16(as_type<ushort>(v)); }
};
template <>
struct RadixKey<bf16_t> {
  typedef uint K;
  enum { kBits = 16 };
  static K of(bf16_t v) {
    const uint u = uint(v.bits);
    if ((u & 0x7fffu) > 0x7f80u) return 0xffffu;  // bfloat16 NaN
    if ((u & 0x7fffu) == 0) return 0x8000u;
    return (u & 0x8000u) != 0 ? (~u & 0xffffu) : (u | 0x8000u);
  }
};
template <>
struct RadixKey<int> {
  typedef uint K;
  enum { kBits = 32 };
  static K of(int v) { return uint(v) ^ 0x80000000u; }
};
template <>
struct RadixKey<uint> {
  typedef uint K;
  enum { kBits = 32 };
  static K of(uint v) { return v; }
};
template <>
struct RadixKey<uchar> {
  typedef uint K;
  enum { kBits = 8 };
  static K of(uchar v) { return uint(v); }
};
template <>
struct RadixKey<int64_t> {
  typedef ulong K;
  enum { kBits = 64 };
  static K of(int64_t v) { return ulong(v) ^ (ulong(1) << 63); }
};

template <typename K>
struct RadixItem {
  K key;
  uint pos;
};

}  // namespace ember_k

template <typename T>
kernel void sort_radix_keys(device const T* src [[buffer(0)]],
                            device ember_k::RadixItem<typename ember_k::RadixKey<T>::K>* items
                            [[buffer(1)]],
                            constant RadixKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename RadixKey<T>::K K;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x);
  K key = RadixKey<T>::of(src[offset_of(p.rows, p.row) + i * p.stride]);
  const uint bits = RadixKey<T>::kBits;
  if (p.descending != 0) key = ~key & (bits == 64 ? ~K(0) : K((ulong(1) << (bits & 63)) - 1));
  items[i].key = key;
  items[i].pos = uint(i);
}

template <typename K>
kernel void sort_radix_count(device const ember_k::RadixItem<K>* items [[buffer(0)]],
                             device uint* counts [[buffer(1)]], constant RadixKParams& p [[buffer(2)]],
                             EMBER_THREAD_ARGS) {
  const int64_t l = int64_t(gid.x);
  if (l >= p.lanes) return;
  uint c[EMBER_RADIX_DIGITS];
  for (int d = 0; d < EMBER_RADIX_DIGITS; ++d) c[d] = 0;
  const int64_t lo = min(p.n, l * p.run), hi = min(p.n, lo + p.run);
  for (int64_t i = lo; i < hi; ++i) ++c[uint(items[i].key >> p.shift) & (EMBER_RADIX_DIGITS - 1)];
  for (int d = 0; d < EMBER_RADIX_DIGITS; ++d) counts[int64_t(d) * p.lanes + l] = c[d];
}

// incl: the inclusive scan of counts; a lane's digit d starts at incl - counts there.
template <typename K>
kernel void sort_radix_scatter(device const ember_k::RadixItem<K>* from [[buffer(0)]],
                               device const uint* counts [[buffer(1)]],
                               device const uint* incl [[buffer(2)]],
                               device ember_k::RadixItem<K>* to [[buffer(3)]],
                               constant RadixKParams& p [[buffer(4)]], EMBER_THREAD_ARGS) {
  const int64_t l = int64_t(gid.x);
  if (l >= p.lanes) return;
  uint at[EMBER_RADIX_DIGITS];
  for (int d = 0; d < EMBER_RADIX_DIGITS; ++d) {
    const int64_t k = int64_t(d) * p.lanes + l;
    at[d] = incl[k] - counts[k];
  }
  const int64_t lo = min(p.n, l * p.run), hi = min(p.n, lo + p.run);
  for (int64_t i = lo; i < hi; ++i) to[at[uint(from[i].key >> p.shift) & (EMBER_RADIX_DIGITS - 1)]++] = from[i];
}

template <typename T>
kernel void sort_radix_take(device const T* src [[buffer(0)]],
                            device const ember_k::RadixItem<typename ember_k::RadixKey<T>::K>* items
                            [[buffer(1)]],
                            device T* values [[buffer(2)]], constant RadixKParams& p [[buffer(3)]],
                            EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t j = p.start + int64_t(gid.x);
  values[p.row * p.n + j] = src[ember_k::offset_of(p.rows, p.row) + int64_t(items[j].pos) * p.stride];
}

template <typename K>
kernel void sort_radix_index(device const ember_k::RadixItem<K>* items [[buffer(0)]],
                             device int64_t* indices [[buffer(1)]], constant RadixKParams& p [[buffer(2)]],
                             EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  const int64_t j = p.start + int64_t(gid.x);
  indices[p.row * p.n + j] = int64_t(items[j].pos);
}

#define EMBER_RADIX_KERNELS(name, suffix, T, unused)          \
  EMBER_KERNEL(sort_radix_keys_##suffix, sort_radix_keys<T>) \
  EMBER_KERNEL(sort_radix_take_##suffix, sort_radix_take<T>)
EMBER_FOR_ALL_TYPES(EMBER_RADIX_KERNELS, sort, 0)
// by key width: k32 for every dtype but int64, whose keys are k64 (the int64 library)
EMBER_IF_NOT_I64(EMBER_KERNEL(sort_radix_count_k32, sort_radix_count<uint>))
EMBER_IF_NOT_I64(EMBER_KERNEL(sort_radix_scatter_k32, sort_radix_scatter<uint>))
EMBER_IF_I64(EMBER_KERNEL(sort_radix_count_b64, sort_radix_count<ulong>))
EMBER_IF_I64(EMBER_KERNEL(sort_radix_scatter_b64, sort_radix_scatter<ulong>))
EMBER_IF_I64(EMBER_KERNEL(sort_radix_index_i64_k32, sort_radix_index<uint>))
EMBER_IF_I64(EMBER_KERNEL(sort_radix_index_i64_b64, sort_radix_index<ulong>))

// ---- topk by selection (sort.h, TopkKParams)

namespace ember_k {

// The rank key of a value: larger goes first. The sort's key (NaN past every number), or
// its complement for the smallest k, within the key's bits.
template <typename T>
inline typename RadixKey<T>::K rank_key(T v, bool largest) {
  typedef typename RadixKey<T>::K K;
  const K key = RadixKey<T>::of(v);
  const uint bits = RadixKey<T>::kBits;
  const K all = bits == 8 * sizeof(K) ? ~K(0) : ((K(1) << bits) - K(1));
  return largest ? key : (~key & all);
}

// a goes before b: the larger rank key, then the lower position
template <typename K>
inline bool topk_before(K ka, uint pa, K kb, uint pb) {
  return ka > kb || (ka == kb && pa < pb);
}

}  // namespace ember_k

template <typename T>
[[max_total_threads_per_threadgroup(EMBER_TOPK_GROUP)]]
kernel void topk_rows(device const T* src [[buffer(0)]], device uint* work [[buffer(1)]],
                      constant TopkKParams& p [[buffer(2)]], EMBER_THREAD_ARGS) {
  using namespace ember_k;
  typedef typename RadixKey<T>::K K;
  EMBER_THREADGROUP(uint, counts, EMBER_RADIX_DIGITS * EMBER_TOPK_GROUP);
  EMBER_THREADGROUP(K, keys, EMBER_TOPK_MAX);
  EMBER_THREADGROUP(uint, pos, EMBER_TOPK_MAX);
  EMBER_THREADGROUP(K, state_key, 1);
  EMBER_THREADGROUP(K, state_mask, 1);
  EMBER_THREADGROUP(int64_t, state_need, 1);
  const uint lane = lid.x, lanes = tgsize.x;
  const int64_t row = int64_t(tgid.x), n = p.n;
  const int64_t base = offset_of(p.rows, row);
  const bool largest = p.largest != 0;

  // 1. The k-th rank key T, a digit at a time from the top: the prefix so far, the mask
  // of its bits, and how many of the keys with that prefix are still to take.
  if (lane == 0) {
    state_key[0] = K(0);
    state_mask[0] = K(0);
    state_need[0] = p.k;
  }
  for (int shift = int(RadixKey<T>::kBits) - EMBER_RADIX_BITS; shift >= 0; shift -= EMBER_RADIX_BITS) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const K prefix = state_key[0], mask = state_mask[0];
    uint c[EMBER_RADIX_DIGITS];
    for (uint d = 0; d < EMBER_RADIX_DIGITS; ++d) c[d] = 0;
    for (int64_t i = lane; i < n; i += lanes) {
      const K r = rank_key(src[base + i * p.stride], largest);
      if ((r & mask) == prefix) c[uint(r >> uint(shift)) & (EMBER_RADIX_DIGITS - 1)] += 1;
    }
    for (uint d = 0; d < EMBER_RADIX_DIGITS; ++d) counts[d * lanes + lane] = c[d];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane < EMBER_RADIX_DIGITS) {  // lane d sums digit d over the lanes
      uint total = 0;
      for (uint l = 0; l < lanes; ++l) total += counts[lane * lanes + l];
      counts[lane * lanes] = total;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {  // the digit where the need runs out, from the largest
      int64_t need = state_need[0];
      uint d = EMBER_RADIX_DIGITS - 1;
      for (;; --d) {
        const int64_t here = int64_t(counts[d * lanes]);
        if (here >= need || d == 0) break;
        need -= here;
      }
      state_key[0] = prefix | (K(d) << uint(shift));
      state_mask[0] = mask | (K(EMBER_RADIX_DIGITS - 1) << uint(shift));
      state_need[0] = need;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const K kth = state_key[0];
  const int64_t ties = state_need[0];  // keys equal to kth to take, the first by position

  // 2. Each lane's run of the row: its keys past kth and its ties, counted, then their
  // places (lane 0 scans the counts), then written in the row's order.
  const int64_t run = (n + int64_t(lanes) - 1) / int64_t(lanes);
  const int64_t lo = min(n, int64_t(lane) * run), hi = min(n, lo + run);
  uint above = 0, equal = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const K r = rank_key(src[base + i * p.stride], largest);
    above += r > kth ? 1u : 0u;
    equal += r == kth ? 1u : 0u;
  }
  counts[lane] = above;
  counts[lanes + lane] = equal;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lane == 0) {
    uint a = 0, e = 0;
    for (uint l = 0; l < lanes; ++l) {
      const uint ca = counts[l], ce = counts[lanes + l];
      counts[l] = a;
      counts[lanes + l] = e;
      a += ca;
      e += ce;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint at_above = counts[lane];
  int64_t at_tie = int64_t(counts[lanes + lane]);
  const int64_t first_tie = p.k - ties;  // the ties' places follow the keys past kth
  for (int64_t i = lo; i < hi; ++i) {
    const K r = rank_key(src[base + i * p.stride], largest);
    if (r > kth) {
      keys[at_above] = r;
      pos[at_above] = uint(i);
      ++at_above;
    } else if (r == kth) {
      if (at_tie < ties) {
        keys[first_tie + at_tie] = r;
        pos[first_tie + at_tie] = uint(i);
      }
      ++at_tie;
    }
  }
  for (uint j = uint(p.k) + lane; j < p.kpad; j += lanes) {  // padding sorts last
    keys[j] = K(0);
    pos[j] = 0xffffffffu;
  }

  // 3. Bitonic sort of the kpad entries: the larger key first, then the lower position.
  for (uint size = 2; size <= p.kpad; size <<= 1) {
    for (uint half_ = size >> 1; half_ > 0; half_ >>= 1) {
      threadgroup_barrier(mem_flags::mem_threadgroup);
      for (uint t = lane; t < p.kpad / 2; t += lanes) {
        const uint i = 2 * half_ * (t / half_) + t % half_, j = i + half_;
        const bool first_up = (i & size) == 0;  // this block runs in the sort's order
        const bool swap = first_up ? topk_before(keys[j], pos[j], keys[i], pos[i])
                                   : topk_before(keys[i], pos[i], keys[j], pos[j]);
        if (swap) {
          const K tk = keys[i];
          keys[i] = keys[j];
          keys[j] = tk;
          const uint tp = pos[i];
          pos[i] = pos[j];
          pos[j] = tp;
        }
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (int64_t j = lane; j < p.k; j += lanes) work[row * 2 * p.k + j] = pos[j];
}

// values[i] of [nrows, k]: src at the position topk_rows chose.
template <typename T>
kernel void topk_take(device const T* src [[buffer(0)]], device const uint* work [[buffer(1)]],
                      device T* values [[buffer(2)]], constant TopkKParams& p [[buffer(3)]],
                      EMBER_THREAD_ARGS) {
  using namespace ember_k;
  if (int64_t(gid.x) >= p.count) return;
  const int64_t i = p.start + int64_t(gid.x), row = i / p.k, j = i % p.k;
  values[i] = src[offset_of(p.rows, row) + int64_t(work[row * 2 * p.k + j]) * p.stride];
}

#define EMBER_TOPK_KERNELS(name, suffix, T, unused)          \
  EMBER_KERNEL_GROUPED(topk_rows_##suffix, topk_rows<T>) \
  EMBER_KERNEL(topk_take_##suffix, topk_take<T>)
EMBER_FOR_ALL_TYPES(EMBER_TOPK_KERNELS, topk, 0)
