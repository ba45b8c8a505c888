// sort along the last dim, rows across cores: each value's integer key (NaN above every
// number, as in numpy and PyTorch; -0.0 tied with 0.0) sorted with its position, so
// equal values keep their order (stable) in both directions; radix passes for rows of
// 32-bit keys. topk selects k per row instead of sorting the rows.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu_backend.h"
#include "simd_sort.h"
#include "elementwise.h"
#include "rows.h"
#include "strided.h"

namespace ember::cpu {

namespace {

// sort and topk rank a row's elements by an integer key per value and then the
// position: keys in the sort's order (`kLargest`: descending), NaN past every number,
// -0.0 tied with 0.0. (key, position) pairs are a strict total order whose order is the
// stable sort's, compared as two integers. Keys are signed, so that SSE2's compares test
// them 4 at a time.
template <typename T>
struct RankKey {
  using C = compute_t<T>;
  using K = std::conditional_t<sizeof(C) == 8, int64_t, int32_t>;
  template <bool kLargest>
  static K of(T x) {
    const C v = C(x);
    K u;
    if constexpr (std::is_floating_point_v<C>) {
      // integer operations on the bits only (they vectorise where float compares do not)
      constexpr K kMax = std::numeric_limits<K>::max();
      constexpr K kInf = std::is_same_v<C, float> ? K(0x7f800000) : K(0x7ff0000000000000);
      std::memcpy(&u, &v, sizeof u);
      const K a = u & kMax;
      // one NaN key above +inf; -0.0 as 0.0; negative floats in reversed order
      u = a > kInf ? kMax : a == 0 ? K(0) : u < 0 ? u ^ kMax : u;
    } else if constexpr (std::is_signed_v<C>) {
      u = K(v);
    } else if constexpr (sizeof(C) == sizeof(K)) {
      u = K(v ^ (C(1) << (8 * sizeof(C) - 1)));  // uint32: the order kept, shifted
    } else {
      u = K(v);
    }
    return kLargest ? K(~u) : u;
  }
  // Integer keys are the values themselves, shifted: a sorted key gives its value back
  // (float keys do not: -0.0 and NaN payloads share keys).
  static constexpr bool kExact = !std::is_floating_point_v<C>;
  template <bool kLargest>
  static T value(K u) {
    static_assert(kExact);
    u = kLargest ? K(~u) : u;
    if constexpr (std::is_unsigned_v<C> && sizeof(C) == sizeof(K))
      return T(C(u) ^ (C(1) << (8 * sizeof(C) - 1)));
    else
      return T(u);
  }
};

// A 32-bit key and a position below 2^32 as one integer whose unsigned order is the
// pair's: (key + 2^31) << 32 | position.
template <typename T, bool kLargest>
uint64_t packed_rank(T x, int64_t i) {
  const uint32_t key = uint32_t(RankKey<T>::template of<kLargest>(x)) ^ 0x80000000u;
  return (uint64_t(key) << 32) | uint64_t(i);
}
inline int64_t packed_position(uint64_t q) {
  return int64_t(q & 0xffffffffu);
}
template <typename T>
typename RankKey<T>::K packed_key(uint64_t q) {
  return typename RankKey<T>::K(uint32_t(q >> 32) ^ 0x80000000u);
}

void radix_sort_keys(std::vector<uint64_t>& a, std::vector<uint64_t>& tmp, uint64_t least);

// a[i] = make(i) for i < n, over threads where the row is sorted alone (a 1-D sort; a row
// among many stays on its thread); returns the least rank(a[i]), which the radix passes
// take their digits above.
template <typename U, typename Item, typename Make, typename Rank>
U fill_least(Item* a, int64_t n, Make make, Rank rank) {
  U least = std::numeric_limits<U>::max();
  std::mutex mu;
  parallel_for(n, kParallelGrain, [&](int64_t lo, int64_t hi) {
    U m = std::numeric_limits<U>::max();
    for (int64_t i = lo; i < hi; ++i) {
      const Item v = make(i);
      a[i] = v;
      m = std::min(m, rank(v));
    }
    std::lock_guard<std::mutex> lock(mu);
    least = std::min(least, m);
  });
  return least;
}

// best = the k best (smallest key, then position) of positions [lo, hi) of the row x
// (stride apart), best first. Few (k * 64 <= the range's length): the k best so far are
// kept, and an element enters only when its key beats the worst kept (a later position
// ties in nothing); keys are tested 32 at a time without branches, so most of a row is
// one vectorised pass. Up to 64 kept stay sorted (an entry shifts the worse ones), more
// are a heap. Else a selection (nth_element) of the whole range and a sort of k, or, for
// a k past an eighth of a range of 256 or more, the range's radix sort (faster there).
template <typename T, bool kLargest>
void select_best(const T* x, int64_t stride, int64_t lo, int64_t hi, int64_t k,
                 std::vector<std::pair<typename RankKey<T>::K, int64_t>>& best) {
  using K = typename RankKey<T>::K;
  using Pair = std::pair<K, int64_t>;
  best.clear();
  const int64_t m = hi - lo;
  k = std::min(k, m);
  if (k <= 0) return;
  if (k * 64 > m && sizeof(K) == 4 && hi <= (int64_t(1) << 32)) {
    // (key, position) packed in one 64-bit integer: half the bytes, one compare
    thread_local std::vector<uint64_t> packed;
    packed.resize(size_t(m));
    const uint64_t least = fill_least<uint64_t>(
        packed.data(), m,
        [x, stride, lo](int64_t i) { return packed_rank<T, kLargest>(x[(lo + i) * stride], lo + i); },
        [](uint64_t q) { return q; });
    if (k * 8 > m && m >= 256) {
      thread_local std::vector<uint64_t> tmp;
      radix_sort_keys(packed, tmp, least);  // positions in order among equal keys: built in order
    } else {
      if (k < m) std::nth_element(packed.begin(), packed.begin() + (k - 1), packed.end());
      std::sort(packed.begin(), packed.begin() + k);
    }
    for (int64_t j = 0; j < k; ++j) {
      const uint64_t q = packed[size_t(j)];
      best.emplace_back(K(uint32_t(q >> 32) ^ 0x80000000u), packed_position(q));
    }
    return;
  }
  if (k * 64 > m) {
    best.reserve(size_t(m));
    for (int64_t i = lo; i < hi; ++i) best.emplace_back(RankKey<T>::template of<kLargest>(x[i * stride]), i);
    if (k < m) std::nth_element(best.begin(), best.begin() + (k - 1), best.end());
    best.resize(size_t(k));
    std::sort(best.begin(), best.end());
    return;
  }
  for (int64_t i = lo; i < lo + k; ++i) best.emplace_back(RankKey<T>::template of<kLargest>(x[i * stride]), i);
  constexpr int64_t kBlock = 32;
  const bool sorted = k <= 64;
  if (sorted)
    std::sort(best.begin(), best.end());
  else
    std::make_heap(best.begin(), best.end());  // the front is the worst kept
  K worst = sorted ? best.back().first : best.front().first;
  using C = compute_t<T>;
  C worst_value = C(x[(sorted ? best.back().second : best.front().second) * stride]);
  // whether v ranks before the worst kept (0 or 1, without branches): floats compared as
  // floats (NaN above every number, -0.0 equal to 0.0, as the keys order them)
  const auto before_worst = [&](T t) -> int {
    if constexpr (std::is_floating_point_v<C>) {
      const C v = C(t), w = worst_value;
      return kLargest ? int(v > w) | (int(v != v) & int(w == w))
                      : int(v < w) | (int(v == v) & int(w != w));
    } else {
      return int(RankKey<T>::template of<kLargest>(t) < worst);
    }
  };
  const auto offer = [&](int64_t i) {
    if (!before_worst(x[i * stride])) return;
    const K key = RankKey<T>::template of<kLargest>(x[i * stride]);
    if (sorted) {  // shift the worse ones up one place; the last drops out
      size_t j = size_t(k - 1);
      for (; j > 0 && key < best[j - 1].first; --j) best[j] = best[j - 1];
      best[j] = Pair(key, i);
    } else {
      std::pop_heap(best.begin(), best.end());
      best.back() = Pair(key, i);
      std::push_heap(best.begin(), best.end());
    }
    const Pair& w = sorted ? best.back() : best.front();
    worst = w.first;
    worst_value = C(x[w.second * stride]);
  };
  const auto any_before = [&](const T* p) {  // of p[0..kBlock): one vectorised pass
    int any = 0;
    for (int64_t j = 0; j < kBlock; ++j) any |= before_worst(p[j]);
    return any != 0;
  };
  int64_t i = lo + k;
  if (stride == 1) {
    for (; i + kBlock <= hi; i += kBlock)
      if (any_before(x + i))
        for (int64_t j = 0; j < kBlock; ++j) offer(i + j);
  }
  for (; i < hi; ++i) offer(i);
  if (!sorted) std::sort_heap(best.begin(), best.end());
}

// Sorts `a` by the kBytes-byte key digit(v, b) gives byte b of, items with equal keys
// kept in their order: LSD radix passes over the bytes (stable counting sorts), skipping
// a byte that every key shares (so 8- and 16-bit dtypes take one or two passes, and
// int64 ids of a small range a few). A long row (one sorted alone, a 1-D sort) is cut in
// parts that threads count and move in parallel: each part's items of one digit go after
// those of the parts before it, so every pass stays stable.
constexpr int64_t kRadixPart = 1 << 15;

template <int kBytes, typename Item, typename Digit>
void radix_sort(std::vector<Item>& a, std::vector<Item>& tmp, Digit digit) {
  const int64_t n = int64_t(a.size());
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(4 * num_threads(), n / kRadixPart));
  const int64_t per = (n + parts - 1) / parts;
  // count[p][d]: part p's items of digit d in this pass, then where the next one goes
  std::vector<std::array<size_t, 256>> count(static_cast<size_t>(parts));
  std::array<std::array<size_t, 256>, kBytes> total{};
  std::mutex mu;
  parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {  // every byte's counts, to skip
    for (int64_t p = lo; p < hi; ++p) {
      std::array<std::array<size_t, 256>, kBytes> c{};
      for (int64_t i = p * per; i < std::min(n, (p + 1) * per); ++i)
        for (int b = 0; b < kBytes; ++b) ++c[b][digit(a[size_t(i)], b)];
      count[size_t(p)] = c[0];
      std::lock_guard<std::mutex> lock(mu);
      for (int b = 0; b < kBytes; ++b)
        for (int d = 0; d < 256; ++d) total[b][d] += c[b][d];
    }
  });
  tmp.resize(size_t(n));
  Item *src = a.data(), *dst = tmp.data();
  bool counted = true;  // count[] holds this pass's byte (byte 0's, counted above)
  for (int b = 0; b < kBytes; ++b, counted = false) {
    if (total[b][digit(src[0], b)] == size_t(n)) continue;
    if (!counted && parts > 1) {
      parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          std::array<size_t, 256> c{};
          for (int64_t i = p * per; i < std::min(n, (p + 1) * per); ++i) ++c[digit(src[i], b)];
          count[size_t(p)] = c;
        }
      });
    } else if (!counted) {
      count[0] = total[b];
    }
    for (size_t d = 0, sum = 0; d < 256; ++d)
      for (int64_t p = 0; p < parts; ++p) {
        const size_t t = count[size_t(p)][d];
        count[size_t(p)][d] = sum;
        sum += t;
      }
    parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
      // locals, not the captures: a store to dst could alias them, and each would be
      // read again per item
      const Item* const from = src;
      Item* const to = dst;
      const Digit dg = digit;
      const int byte = b;
      for (int64_t p = lo; p < hi; ++p) {
        size_t* c = count[size_t(p)].data();
        const int64_t end = std::min(n, (p + 1) * per);
        for (int64_t i = p * per; i < end; ++i) {
          const Item v = from[i];
          to[c[dg(v, byte)]++] = v;
        }
      }
    });
    std::swap(src, dst);
  }
  if (src != a.data()) a.swap(tmp);
}

// packed_rank integers: the key is the high 32 bits. Digits are taken of the key less the
// smallest key (`least`: the smallest integer, which its builder finds), so keys of a
// narrow range (ids, labels, small integers of either sign) share their high bytes and
// skip those passes.
void radix_sort_keys(std::vector<uint64_t>& a, std::vector<uint64_t>& tmp, uint64_t least) {
  const uint64_t bias = least & ~uint64_t(0xffffffff);
  radix_sort<4>(a, tmp, [bias](uint64_t v, int b) { return ((v - bias) >> (32 + 8 * b)) & 0xff; });
}

// Rows at least this long take the radix passes; shorter ones x86-simd-sort's AVX-512
// quicksort (sorting networks in registers) where the CPU has it, else rows up to kRankMax
// are ranked by counting and the others take a comparison sort.
constexpr int64_t kRadixMin = 256, kRankMax = 64;

// out[rank of a[i]] = a[i] for n <= kRankMax distinct keys, the rank counted against every
// key: branch-free and vectorised per ISA level (n^2 compares, a few times faster than a
// comparison sort's mispredicted branches on a short row).
EMBER_CPU_LEVELS(, , rank_sort_short, (const uint64_t* a, int64_t n, uint64_t* out), (a, n, out), {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t v = a[i];
    uint64_t r = 0;
    for (int64_t j = 0; j < n; ++j) r += uint64_t(a[j] < v);
    out[r] = v;
  }
})

// A sorted row's indices and values from its sorted items: position(item) is the
// element's position, key(item) its RankKey. Integer values come back from their keys
// (RankKey::value); float values are read at their positions, the stored elements
// themselves (NaN payloads, -0.0), at unpredictable places. Split over threads where the
// row is sorted alone (a 1-D sort).
template <typename T, bool kDesc, typename Item, typename Position, typename Key>
void emit_sorted(const T* x, int64_t stride, const Item* sorted, int64_t n, T* values,
                 int64_t* indices, Position position, Key key) {
  constexpr bool kExact = RankKey<T>::kExact;
  parallel_for(n, kExact ? kParallelGrain : kParallelGrain / kRandomReadCost,
               [&](int64_t lo, int64_t hi) {
                 for (int64_t j = lo; j < hi; ++j) {
                   const int64_t i = position(sorted[j]);
                   indices[j] = i;
                   if constexpr (kExact)
                     values[j] = RankKey<T>::template value<kDesc>(key(sorted[j]));
                   else
                     values[j] = x[i * stride];
                 }
               });
}

// A stable sort of one row by RankKey (kDesc: descending): the keys and positions
// sorted as one 64-bit integer each where the keys have 32 bits (radix passes, or
// std::sort of short rows: the position makes every integer distinct, so any sort is
// the stable one), else (key, position) pairs.
template <typename T, bool kDesc>
void sort_row(const T* x, int64_t stride, int64_t n, T* values, int64_t* indices) {
  using K = typename RankKey<T>::K;
  if constexpr (sizeof(K) == 4) {
    if (n <= int64_t(UINT32_MAX)) {
      thread_local std::vector<uint64_t> a, tmp;
      a.resize(size_t(n));
      // (the workers reach this thread's buffers through pointers: by name, a thread_local
      // in a lambda is the running thread's own)
      const uint64_t least = fill_least<uint64_t>(
          a.data(), n, [x, stride](int64_t i) { return packed_rank<T, kDesc>(x[i * stride], i); },
          [](uint64_t q) { return q; });
      if (n >= kRadixMin) {
        radix_sort_keys(a, tmp, least);
      } else if (simd_sort_u64(a.data(), n)) {  // AVX-512: sorting networks in registers
      } else if (n <= kRankMax) {
        tmp.resize(size_t(n));
        rank_sort_short(a.data(), n, tmp.data());
        a.swap(tmp);
      } else {
        std::sort(a.begin(), a.end());
      }
      return emit_sorted<T, kDesc>(x, stride, a.data(), n, values, indices, packed_position,
                                   packed_key<T>);
    }
  }
  // 64-bit keys: (key, position) pairs, the radix passes over the key's bytes (its sign
  // bit flipped: unsigned order) for long rows, a comparison sort of short ones
  using Pair = std::pair<K, int64_t>;
  using U = std::make_unsigned_t<K>;
  constexpr U kSign = U(1) << (8 * sizeof(K) - 1);
  thread_local std::vector<Pair> row, tmp;
  row.resize(size_t(n));
  const U least = fill_least<U>(
      row.data(), n,
      [x, stride](int64_t i) { return Pair{RankKey<T>::template of<kDesc>(x[i * stride]), i}; },
      [](const Pair& v) { return U(v.first) ^ kSign; });
  if (n >= kRadixMin) {
    // the keys as unsigned (sign bit flipped), less the smallest: a narrow range's high
    // bytes are then shared and their passes skipped
    radix_sort<sizeof(K)>(row, tmp, [least](const Pair& v, int b) {
      return size_t(((U(v.first) ^ kSign) - least) >> (8 * b)) & 0xff;
    });
  } else {
    std::sort(row.begin(), row.end());
  }
  emit_sorted<T, kDesc>(x, stride, row.data(), n, values, indices,
                        [](const Pair& v) { return v.second; }, [](const Pair& v) { return v.first; });
}

}  // namespace

bool CpuStorage::topk(const Layout& src, int64_t k, bool largest, BackendStorage& values,
                      BackendStorage& indices) const {
  const LastDimRows lr = last_dim_rows(src);
  const int64_t n = lr.n, stride = lr.stride, rows = lr.count;
  int64_t* idx = as_cpu(indices).ptr<int64_t>();
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using Pair = std::pair<typename RankKey<T>::K, int64_t>;
    const T* in = ptr<T>();
    T* out = as_cpu(values).ptr<T>();
    const auto select = [&](const T* x, int64_t s, int64_t lo, int64_t hi, std::vector<Pair>& best) {
      if (largest)
        select_best<T, true>(x, s, lo, hi, k, best);
      else
        select_best<T, false>(x, s, lo, hi, k, best);
    };
    const auto emit = [&](const T* x, const std::vector<Pair>& best, int64_t r) {
      for (int64_t j = 0; j < k; ++j) {
        idx[r * k + j] = best[size_t(j)].second;
        out[r * k + j] = x[best[size_t(j)].second * stride];  // the stored element itself
      }
    };
    // Few long rows: each row's parts select their k best on several threads, then the
    // row's k best of those candidates.
    const int64_t threads = num_threads();
    if (rows < threads && n >= (int64_t(1) << 16) && k * 64 <= n) {
      const int64_t parts = std::min<int64_t>(threads * 4, n / (k * 64));
      const int64_t per = (n + parts - 1) / parts;
      for (int64_t r = 0; r < rows; ++r) {
        const T* x = in + row_offset(src, r);
        std::vector<std::vector<Pair>> cand(static_cast<size_t>(parts));
        parallel_for(parts, 1, [&](int64_t plo, int64_t phi) {
          for (int64_t q = plo; q < phi; ++q)
            select(x, stride, q * per, std::min(n, (q + 1) * per), cand[size_t(q)]);
        });
        std::vector<Pair> all;
        for (const auto& c : cand) all.insert(all.end(), c.begin(), c.end());
        std::partial_sort(all.begin(), all.begin() + k, all.end());
        emit(x, all, r);
      }
      return;
    }
    // A row costs about n comparisons (a heap) or a few n (a selection).
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / 4 / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   thread_local std::vector<Pair> best;
                   for (int64_t r = lo; r < hi; ++r) {
                     const T* x = in + row_offset(src, r);
                     select(x, stride, 0, n, best);
                     emit(x, best, r);
                   }
                 });
  });
  return true;
}

void CpuStorage::sort(const Layout& src, bool descending, BackendStorage& values,
                      BackendStorage& indices) const {
  const LastDimRows lr = last_dim_rows(src);
  const int64_t n = lr.n, stride = lr.stride, rows = lr.count;
  int64_t* idx = as_cpu(indices).ptr<int64_t>();
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>();
    T* out = as_cpu(values).ptr<T>();
    // A row costs about n log n comparisons: a smaller grain than elementwise ops.
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / 16 / std::max<int64_t>(n, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     const T* x = in + row_offset(src, r);
                     if (descending)
                       sort_row<T, true>(x, stride, n, out + r * n, idx + r * n);
                     else
                       sort_row<T, false>(x, stride, n, out + r * n, idx + r * n);
                   }
                 });
  });
}

}  // namespace ember::cpu
