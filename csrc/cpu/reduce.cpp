// Reductions over the trailing dims of a view: sum, max, min, argmax, argmin.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/logsumexp.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_math.h"

namespace ember::cpu {

namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  return false;
}

// acc.add_short(p, n) for a dense run of any length, built per ISA level: the eight
// chains in the widest registers the CPU has. (A long int64 run from memory took 10%
// longer in SSE2's 16-byte loads: four per cache line fill the load queue.)
EMBER_CPU_LEVELS(template <typename A EMBER_COMMA typename T>, , add_short_run,
                 (A& acc, const T* p, int64_t n), (acc, p, n), { acc.add_short(p, n); })

// Floats sum in double (dense f32 runs in float blocks of 1024 first: still more accurate
// than numpy's pairwise float sum), integers in int64 with wrap-around. kSquares (floats
// only, norm's p = 2): each value squared first (in its compute type, as x * x rounds).
template <typename T, bool kSquares = false>
struct SumAcc {
  using Acc = std::conditional_t<is_float_v<T>, double, int64_t>;
  static_assert(!kSquares || is_float_v<T>, "sums of squares are for floats");
  Acc total = 0;
  static Acc take(T v) {
    const compute_t<T> c(v);
    if constexpr (kSquares)
      return Acc(c * c);
    else
      return Acc(c);
  }
  static double dense(const float* p, int64_t n) {
    return kSquares ? sumsq_f32(p, n) : sum_f32(p, n);
  }
  void add_run(const T* p, int64_t stride, int64_t n, int64_t) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1) return add_dense(p, n);
    } else if constexpr (std::is_same_v<T, bf16> && !kSquares) {
      if (stride == 1) {  // widened by a shift inside the vectorised blocks
        total += sum_bf16(reinterpret_cast<const uint16_t*>(p), n);
        return;
      }
    }
    if constexpr (is_half_v<T>) {
      if (stride == 1 && n > kChunk) {  // float chunks (vectorised conversion), summed as float runs
        float buf[kChunk];
        for (int64_t i = 0; i < n; i += kChunk) {
          const int64_t m = std::min(kChunk, n - i);
          load_chunk(p + i, 1, buf, m);
          total += dense(buf, m);
        }
        return;
      }
    }
    if constexpr (!std::is_same_v<T, float>) {
      if (stride == 1) return add_short_run(*this, p, n);
    }
    // Independent chains so additions overlap. Integers add in uint64 with plain `+`:
    // g++ 12 -O3 mis-vectorises wrap_add here for uint8 inputs (sums a quarter of them).
    using Chain = std::conditional_t<is_float_v<T>, double, uint64_t>;
    Chain s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) s[k] += Chain(take(p[(i + k) * stride]));
    for (; i < n; ++i) s[0] += Chain(take(p[i * stride]));
    total = wrap_add(total, Acc((s[0] + s[1]) + (s[2] + s[3])));
  }
  // Dense float runs: vectorised blocks of 1024 (float lanes, then double), see sum_f32.
  void add_dense(const float* p, int64_t n) { total += dense(p, n); }
  // A short dense run. float32: 16 float lanes then a tree, as a block of sum_f32 (one
  // register of lanes and a few shuffles per row, not a widening to double of every
  // value: sum_short_f32); other types: eight chains, which vectorise as one register.
  void add_short(const T* p, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      total += sum_short_f32<kSquares>(p, n);
      return;
    }
    using Chain = std::conditional_t<is_float_v<T>, double, uint64_t>;
    Chain s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) s[k] += Chain(take(p[i + k]));
    for (int k = 0; i < n; ++i, ++k) s[k] += Chain(take(p[i]));
    total = wrap_add(total, Acc(((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))));
  }
  void add_one(T v, int64_t) { total = wrap_add(total, take(v)); }
  void merge(const SumAcc& o) { total = wrap_add(total, o.total); }
};

// Products in the input's type (float32 and float64 as PyTorch's; integers in int64,
// wrapping): a dense run in 16 independent lanes (which vectorise), joined as a tree.
template <typename T>
struct ProdAcc {
  T total = T(1);
  static T mul(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(a) * uint64_t(b));  // two's complement wrap, as PyTorch's
    else
      return a * b;
  }
  void add_one(T v, int64_t) { total = mul(total, v); }
  void add_run(const T* p, int64_t stride, int64_t n, int64_t) {
    constexpr int kLanes = 16;
    T acc[kLanes];
    std::fill(acc, acc + kLanes, T(1));
    int64_t i = 0;
    if (stride == 1)
      for (; i + kLanes <= n; i += kLanes)
        for (int k = 0; k < kLanes; ++k) acc[k] = mul(acc[k], p[i + k]);
    for (int k = 0; i < n; ++i, k = (k + 1) % 4) acc[k] = mul(acc[k], p[i * stride]);
    for (int w = kLanes / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) acc[k] = mul(acc[k], acc[k + w]);
    total = mul(total, acc[0]);
  }
  void add_short(const T* p, int64_t n) { add_run(p, 1, n, 0); }
  void merge(const ProdAcc& o) { total = mul(total, o.total); }
};

// logsumexp in one pass: core/logsumexp.h's running max and rescaled sum (in double). A
// dense run takes its max first, then one vectorised exp-sum at the new max (in chunks
// through a buffer in L1); a strided run is gathered into dense chunks first.
struct LseAcc {
  struct Exp {
    double operator()(double d) const { return std::exp(d); }
  };
  LseState st;
  void add_one(float x, int64_t) { st.add(x, Exp()); }
  static constexpr int64_t kChunk = 1024;
  void add_run(const float* p, int64_t stride, int64_t n, int64_t) {
    if (stride == 1) return add_dense(p, n);
    float buf[kChunk];  // a strided run: gathered a chunk at a time
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t c = std::min(kChunk, n - i);
      for (int64_t k = 0; k < c; ++k) buf[k] = p[(i + k) * stride];
      add_dense(buf, c);
    }
  }
  void add_dense(const float* p, int64_t n) {
    if (n <= 0) return;
    const float mr = extreme_f32<true>(p, n);  // NaN when the run holds one
    if (mr != mr) {
      st.nan = true;
      return;
    }
    if (mr == -INFINITY) return;
    if (mr > st.m) st.raise_to(mr, Exp());
    if (st.m == INFINITY) return;  // the result is +inf (or NaN): s no longer matters
    float buf[kChunk];
    for (int64_t i = 0; i < n; i += kChunk)
      st.s += exp_shift_sum_f32(p + i, st.m, buf, std::min(kChunk, n - i));
  }
  void add_short(const float* p, int64_t n) { add_run(p, 1, n, 0); }
  void merge(const LseAcc& o) { st.merge(o.st, Exp()); }
  float result() const { return st.result(); }
};

// var and std in one pass: the count, mean and sum of squared deviations in double. A
// run's own mean comes first (a second pass over the run while it is in cache), runs and
// threads' parts join by Chan's update, a single element (a column walk's step) by
// Welford's: no cancellation, and float32 or half values can neither overflow nor
// underflow a double's squares.
template <typename T>
struct MomentsAcc {
  double n = 0, mean = 0, m2 = 0;
  static double value(T v) { return double(compute_t<T>(v)); }
  void add_run(const T* p, int64_t stride, int64_t cnt, int64_t) {
    if (cnt <= 1) {
      if (cnt == 1) add_one(p[0], 0);
      return;
    }
    double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= cnt; i += 4)
      for (int k = 0; k < 4; ++k) s[k] += value(p[(i + k) * stride]);
    for (; i < cnt; ++i) s[0] += value(p[i * stride]);
    const double m = ((s[0] + s[1]) + (s[2] + s[3])) / double(cnt);
    for (i = 0; i + 4 <= cnt; i += 4)
      for (int k = 0; k < 4; ++k) {
        const double d = value(p[(i + k) * stride]) - m;
        q[k] += d * d;
      }
    for (; i < cnt; ++i) {
      const double d = value(p[i * stride]) - m;
      q[0] += d * d;
    }
    merge(MomentsAcc{double(cnt), m, (q[0] + q[1]) + (q[2] + q[3])});
  }
  void add_short(const T* p, int64_t cnt) { add_run(p, 1, cnt, 0); }
  void add_one(T v, int64_t) {
    const double x = value(v), d = x - mean;
    n += 1;
    mean += d / n;
    m2 += d * (x - mean);
  }
  void merge(const MomentsAcc& o) {
    if (o.n == 0) return;
    if (n == 0) {
      *this = o;
      return;
    }
    const double total = n + o.n, d = o.mean - mean;
    mean += d * (o.n / total);
    m2 += o.m2 + d * d * (n * (o.n / total));
    n = total;
  }
};

// Max/min and their arg versions: NaN wins (as numpy), the first index wins ties.
template <typename T, bool kMax>
struct ExtremeAcc {
  using C = compute_t<T>;
  C best{};
  int64_t index = -1;
  void take(C v, int64_t i) {
    if (index < 0 || is_nan(best)) {
      if (index < 0) best = v, index = i;
      return;
    }
    if (is_nan(v) || (kMax ? v > best : v < best)) best = v, index = i;
  }
  void add_one(T v, int64_t i) { take(C(v), i); }
  void add_run(const T* p, int64_t stride, int64_t n, int64_t first) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1 && n >= 32) {  // the run's extreme (vectorised), then where it first is
        const float m = extreme_f32<kMax>(p, n);  // NaN when the run holds one
        return take(m, first + find_f32(p, n, m));
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      take(C(p[i * stride]), first + i);
      if (is_nan(best)) return;
    }
  }
  void add_short(const T* p, int64_t n) { add_run(p, 1, n, 0); }
  void merge(const ExtremeAcc& o) {
    if (o.index < 0) return;
    bool better;
    if (index < 0)
      better = true;
    else if (is_nan(best) || is_nan(o.best))
      better = is_nan(best) ? is_nan(o.best) && o.index < index : true;
    else if (kMax ? o.best > best : o.best < best)
      better = true;
    else
      better = o.best == best && o.index < index;
    if (better) best = o.best, index = o.index;
  }
};

// Max/min values alone: no index to track, so each element is one branch-free pick (a
// NaN, once taken, stays), dense float32 runs take the vectorised scan, and the column
// walk (a reduction over dim 0) vectorises across its outputs.
template <typename T, bool kMax>
struct ValueAcc {
  using C = compute_t<T>;
  static C identity() {
    using L = std::numeric_limits<C>;
    if constexpr (std::is_floating_point_v<C>)
      return kMax ? -L::infinity() : L::infinity();
    else
      return kMax ? L::lowest() : L::max();
  }
  C best = identity();
  static C pick(C acc, C v) {
    if constexpr (std::is_floating_point_v<C>)
      return ((kMax ? v > acc : v < acc) || v != v) ? v : acc;
    else
      return (kMax ? v > acc : v < acc) ? v : acc;
  }
  void add_one(T v, int64_t) { best = pick(best, C(v)); }
  void add_run(const T* p, int64_t stride, int64_t n, int64_t) {
    if (n <= 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1) return add_one(extreme_f32<kMax>(p, n), 0);
    }
    constexpr int kChains = 4;
    C acc[kChains] = {best, best, best, best};
    int64_t i = 0;
    for (; i + kChains <= n; i += kChains)
      for (int k = 0; k < kChains; ++k) acc[k] = pick(acc[k], C(p[(i + k) * stride]));
    for (; i < n; ++i) acc[0] = pick(acc[0], C(p[i * stride]));
    for (int k = 0; k < kChains; ++k) best = pick(best, acc[k]);
  }
  // A short dense run: float32 through the vectorised scan (on AVX-512 one masked load
  // and a register reduction for a row of 16), other types eight chains.
  void add_short(const T* p, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      return add_run(p, 1, n, 0);
    } else {
      C acc[8] = {best, best, best, best, best, best, best, best};
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] = pick(acc[k], C(p[i + k]));
      for (int k = 0; i < n; ++i, ++k) acc[k] = pick(acc[k], C(p[i]));
      for (int k = 0; k < 8; ++k) best = pick(best, acc[k]);
    }
  }
  void merge(const ValueAcc& o) { best = pick(best, o.best); }
};

// Feeds the reduced elements with flat indices [lo, hi) of the output at `base`.
template <typename T, typename A>
void feed(const T* data, int64_t base, const Walk<1>& red, int64_t lo, int64_t hi, A& acc) {
  if (lo >= hi) return;
  const Shape& sh = red.shape;
  const Strides& st = red.strides[0];
  const size_t nd = sh.size();
  if (nd == 1) return acc.add_run(data + base + lo * st[0], st[0], hi - lo, lo);
  const int64_t inner = sh.back();
  std::vector<int64_t> idx(nd);
  int64_t r = lo, off = base;
  for (size_t d = nd; d-- > 0;) {
    idx[d] = r % sh[d];
    r /= sh[d];
    off += idx[d] * st[d];
  }
  for (int64_t flat = lo; flat < hi;) {
    int64_t n = std::min(inner - idx[nd - 1], hi - flat);
    acc.add_run(data + off, st[nd - 1], n, flat);
    flat += n;
    off += n * st[nd - 1];
    idx[nd - 1] += n;
    for (size_t d = nd - 1; d > 0 && idx[d] == sh[d]; --d) {  // carry into outer dims
      off -= sh[d] * st[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += st[d - 1];
    }
  }
}

// The offset of outer position o (row-major over shape).
int64_t unravel(int64_t o, const Shape& shape, const Strides& strides) {
  int64_t off = 0;
  for (size_t d = shape.size(); d-- > 0;) {
    off += (o % shape[d]) * strides[d];
    o /= shape[d];
  }
  return off;
}

// accs[j] takes p[i * stride + j], j < m, for the n rows i < n (reduced positions r + i):
// the column walk's steps along the innermost reduced dim, built per ISA level so that
// sums and max/min vectorise across the outputs (one call per run of rows: short rows of
// outputs cost a call each otherwise).
EMBER_CPU_LEVELS(template <typename A EMBER_COMMA typename T>, , column_add,
                 (A* accs, const T* p, int64_t m, int64_t stride, int64_t n, int64_t r),
                 (accs, p, m, stride, n, r), {
                   for (int64_t i = 0; i < n; ++i, p += stride)
                     for (int64_t j = 0; j < m; ++j) accs[j].add_one(p[j], r + i);
                 })

// float32 column kernels for the column walk: s[j] = fold of s[j] and p[i * stride + j]
// over the rows i < n, j < m, by kOp (sum, sum of squares, max, min: a NaN, once taken,
// stays). Up to kRegCols outputs: chunks of 64 stay in eight 8-lane registers while the
// rows pass (a fold through memory costs a load and a store per vector: more than the
// fold itself). Wider rows fold through s row by row: the rows are then read whole, in
// memory order, which streams from memory where chunks a page apart would not.
constexpr int64_t kRegCols = 128;
enum ColumnOp { kFoldSum, kFoldSumSq, kFoldMax, kFoldMin };
typedef float ColV8 __attribute__((vector_size(32)));
template <int kOp, typename V>
__attribute__((always_inline)) inline V column_step(V a, V v) {
  if constexpr (kOp == kFoldSum) {
    return a + v;
  } else if constexpr (kOp == kFoldSumSq) {
    return a + v * v;
  } else {
    const V m = kOp == kFoldMax ? (v > a ? v : a) : (v < a ? v : a);
    return v != v ? v : m;
  }
}
EMBER_CPU_LEVELS(template <int kOp>, <kOp>, column_f32,
                 (float* s, const float* p, int64_t m, int64_t stride, int64_t n),
                 (s, p, m, stride, n), {
                   if (m > kRegCols) {
                     for (int64_t i = 0; i < n; ++i, p += stride)
                       for (int64_t j = 0; j < m; ++j) s[j] = column_step<kOp>(s[j], p[j]);
                     return;
                   }
                   int64_t j = 0;
                   for (; j + 64 <= m; j += 64) {
                     ColV8 a[8];
                     std::memcpy(a, s + j, sizeof a);
                     const float* q = p + j;
                     for (int64_t i = 0; i < n; ++i, q += stride)
                       for (int k = 0; k < 8; ++k) {
                         ColV8 v;
                         std::memcpy(&v, q + 8 * k, sizeof v);
                         a[k] = column_step<kOp>(a[k], v);
                       }
                     std::memcpy(s + j, a, sizeof a);
                   }
                   for (; j < m; ++j) {
                     float a = s[j];
                     for (int64_t i = 0; i < n; ++i) a = column_step<kOp>(a, p[i * stride + j]);
                     s[j] = a;
                   }
                 })

// The column walk's steps for float32 sums and max/min through column_f32: sums in float
// blocks of up to kColBlock rows, each block added to the double totals (the error class
// of a dense run's sum, 32-term float sums; a double per element costs twice the vector
// work), max/min straight into their values. Other accumulators: column_add.
constexpr int64_t kColBlock = 32, kColMax = 2048;
template <typename A>
struct ColumnF32 : std::false_type {};
template <bool kSq>
struct ColumnF32<SumAcc<float, kSq>> : std::true_type {
  static void add(SumAcc<float, kSq>* accs, const float* p, int64_t m, int64_t stride, int64_t n) {
    float s[kColMax];
    for (int64_t i0 = 0; i0 < n; i0 += kColBlock) {
      std::fill(s, s + m, 0.0f);
      column_f32<kSq ? kFoldSumSq : kFoldSum>(s, p + i0 * stride, m, stride, std::min(kColBlock, n - i0));
      for (int64_t j = 0; j < m; ++j) accs[j].total += double(s[j]);
    }
  }
};
template <bool kMax>
struct ColumnF32<ValueAcc<float, kMax>> : std::true_type {
  static void add(ValueAcc<float, kMax>* accs, const float* p, int64_t m, int64_t stride, int64_t n) {
    float s[kColMax];
    for (int64_t j = 0; j < m; ++j) s[j] = accs[j].best;
    for (int64_t i0 = 0; i0 < n; i0 += kColBlock)  // row blocks: the chunks share their lines
      column_f32<kMax ? kFoldMax : kFoldMin>(s, p + i0 * stride, m, stride, std::min(kColBlock, n - i0));
    for (int64_t j = 0; j < m; ++j) accs[j].best = s[j];
  }
};

// Many short dense rows (one outer dim): each row's accumulator inline, the loop built
// per ISA level.
EMBER_CPU_LEVELS(template <typename A EMBER_COMMA typename T EMBER_COMMA typename Out EMBER_COMMA
                     typename Result>,
                 <A EMBER_COMMA T EMBER_COMMA Out EMBER_COMMA Result>, short_rows,
                 (const T* p, int64_t step, int64_t count, int64_t lo, int64_t hi, Out* out,
                  Result result),
                 (p, step, count, lo, hi, out, result), {
                   for (int64_t o = lo; o < hi; ++o) {
                     A acc;
                     acc.add_short(p + o * step, count);
                     out[o] = result(acc, count);
                   }
                 })

// Rows up to this long reduce inline, a row per accumulator in one loop (short_rows);
// longer ones call the vectorised run kernels, whose setup and finish a row of 128
// floats did not repay (sum(1) of 32768 rows of 128: 784 us against 247 for PyTorch).
constexpr int64_t kShortRow = 256;

template <typename T, typename A, typename Out, typename Result>
void run_reduce(const T* data, const Layout& src, int64_t nred, Out* out, Result result) {
  const ReducePlan p = plan_reduce(src, nred);
  const int64_t nout = shape_numel(p.outer) * p.inner;
  if (nout == 0) return;
  Walk<1> red;
  red.shape = p.red;
  red.strides[0] = p.red_strides;
  red.offsets[0] = 0;
  const int64_t count = p.count;
  if (nout < num_threads() && count >= 2 * kParallelGrain) {
    // Few outputs, long reductions: split each reduction in parts, one accumulator per
    // part, merged in order at the end (the result does not depend on the thread count).
    const int64_t parts = std::min<int64_t>(count / kParallelGrain, 64);
    const int64_t per = (count + parts - 1) / parts;
    std::vector<A> accs(static_cast<size_t>(parts));
    for (int64_t o = 0; o < nout; ++o) {
      const int64_t base =
          p.offset + (p.columns ? unravel(o / p.inner, p.outer, p.outer_strides) + o % p.inner
                                : unravel(o, p.outer, p.outer_strides));
      std::fill(accs.begin(), accs.end(), A());
      parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t q = lo; q < hi; ++q)
          feed(data, base, red, q * per, std::min(count, (q + 1) * per), accs[size_t(q)]);
      });
      A total;
      for (const A& a : accs) total.merge(a);
      out[o] = result(total, count);
    }
    return;
  }
  if (p.columns) {
    // The reduced dims step over runs of outputs (sum over dim 0 or a middle dim): walk
    // the reduced elements in memory order, a block of kCols outputs advancing together
    // per step (8 KB of float32 per step: whole pages, which the hardware prefetcher
    // streams, where shorter runs a page apart start cold each time); threads split the
    // blocks and the outer positions. When those are fewer than kTasks, the reduced steps
    // split too, into parts fixed by the shape (never by the thread count, so results do
    // not depend on it), each part with accumulators of its own, merged in order.
    constexpr int64_t kCols = kColMax, kTasks = 16, kMinPart = 128;
    const int64_t blocks = (p.inner + kCols - 1) / kCols;
    const int64_t groups = shape_numel(p.outer) * blocks;
    const int64_t parts =
        groups >= kTasks ? 1
                         : std::clamp<int64_t>(count / kMinPart, 1, (kTasks + groups - 1) / groups);
    const int64_t per = (count + parts - 1) / parts;
    std::vector<A> partial(parts > 1 ? size_t(groups * parts * kCols) : 0);
    parallel_for(groups * parts, std::max<int64_t>(1, kParallelGrain / (per * kCols)),
                 [&](int64_t lo, int64_t hi) {
                   std::vector<A> accs(static_cast<size_t>(kCols));
                   const Shape& sh = red.shape;
                   const Strides& st = red.strides[0];
                   std::vector<int64_t> idx(sh.size());
                   for (int64_t t = lo; t < hi; ++t) {
                     const int64_t g = t / parts, q = t % parts;
                     const int64_t o = g / blocks, j0 = (g % blocks) * kCols;
                     const int64_t m = std::min(kCols, p.inner - j0);
                     const int64_t r0 = q * per, r1 = std::min(count, r0 + per);
                     std::fill(accs.begin(), accs.begin() + m, A());
                     int64_t off = p.offset + unravel(o, p.outer, p.outer_strides) + j0;
                     for (int64_t rest = r0, d = int64_t(sh.size()); d-- > 0;) {  // r0's digits
                       idx[size_t(d)] = rest % sh[size_t(d)];
                       rest /= sh[size_t(d)];
                       off += idx[size_t(d)] * st[size_t(d)];
                     }
                     const size_t last = sh.size() - 1;
                     for (int64_t r = r0; r < r1;) {  // runs along the innermost reduced dim
                       const int64_t n = std::min(r1 - r, sh[last] - idx[last]);
                       if constexpr (ColumnF32<A>::value)
                         ColumnF32<A>::add(accs.data(), data + off, m, st[last], n);
                       else
                         column_add(accs.data(), data + off, m, st[last], n, r);
                       r += n;
                       off += n * st[last];
                       if ((idx[last] += n) < sh[last]) break;  // r == r1
                       off -= sh[last] * st[last];
                       idx[last] = 0;
                       for (size_t d = last; d-- > 0;) {  // odometer over the outer reduced dims
                         off += st[d];
                         if (++idx[d] < sh[d]) break;
                         off -= sh[d] * st[d];
                         idx[d] = 0;
                       }
                     }
                     if (parts > 1) {
                       std::copy(accs.begin(), accs.begin() + m,
                                 partial.begin() + (g * parts + q) * kCols);
                       continue;
                     }
                     Out* dst = out + o * p.inner + j0;
                     for (int64_t j = 0; j < m; ++j) dst[j] = result(accs[size_t(j)], count);
                   }
                 });
    if (parts > 1) {
      parallel_for(groups, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t g = lo; g < hi; ++g) {
          const int64_t o = g / blocks, j0 = (g % blocks) * kCols;
          const int64_t m = std::min(kCols, p.inner - j0);
          const A* first = partial.data() + g * parts * kCols;
          Out* dst = out + o * p.inner + j0;
          for (int64_t j = 0; j < m; ++j) {
            A total = first[j];
            for (int64_t q = 1; q < parts; ++q) total.merge(first[q * kCols + j]);
            dst[j] = result(total, count);
          }
        }
      });
    }
    return;
  }
  if (count <= kShortRow && red.shape.size() == 1 && red.strides[0][0] == 1 &&
      p.outer.size() == 1) {
    const T* base = data + p.offset;
    const int64_t step = p.outer_strides[0];
    parallel_for(nout, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
                 [&](int64_t lo, int64_t hi) {
                   short_rows<A, T, Out, Result>(base, step, count, lo, hi, out, result);
                 });
    return;
  }
  // Rows: one output per reduced run; threads split the outputs, sized by the work each
  // output is (a grain of outputs, not of elements).
  parallel_for(nout, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t o = lo; o < hi; ++o) {
                   A acc;
                   feed(data, p.offset + unravel(o, p.outer, p.outer_strides), red, 0, count, acc);
                   out[o] = result(acc, count);
                 }
               });
}

}  // namespace

bool CpuStorage::reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                                    BackendStorage& dst) const {
  bool done = false;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      using A = SumAcc<T, true>;
      run_reduce<T, A>(ptr<T>(), src, reduced_dims, as_cpu(dst).ptr<T>(),
                       [](const A& a, int64_t) { return T(a.total); });
      done = true;
    }
  });
  return done;
}

bool CpuStorage::reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const {
  bool done = false;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int64_t>) {
      using A = ProdAcc<T>;
      run_reduce<T, A>(ptr<T>(), src, reduced_dims, as_cpu(dst).ptr<T>(),
                       [](const A& a, int64_t) { return a.total; });
      done = true;
    }
  });
  return done;
}

bool CpuStorage::reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                                  BackendStorage& dst) const {
  // Rows only: a column walk would take one scalar exp per element, where core's
  // composition vectorises each of its passes.
  if (dtype_ != DType::F32 || plan_reduce(src, reduced_dims).columns) return false;
  run_reduce<float, LseAcc>(ptr<float>(), src, reduced_dims, as_cpu(dst).ptr<float>(),
                            [](const LseAcc& a, int64_t) { return a.result(); });
  return true;
}

bool CpuStorage::reduce_var(const Layout& src, int64_t reduced_dims, double correction,
                            bool root, BackendStorage& dst) const {
  bool done = false;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T> && !std::is_same_v<T, double>) {
      using A = MomentsAcc<T>;
      run_reduce<T, A>(ptr<T>(), src, reduced_dims, as_cpu(dst).ptr<T>(),
                       [correction, root](const A& a, int64_t) {
                         // PyTorch divides by max(N - correction, 0)
                         double q = a.m2 / std::max(a.n - correction, 0.0);
                         q = q < 0 ? 0.0 : q;  // NaN stays
                         return T(float(root ? std::sqrt(q) : q));
                       });
      done = true;
    }
  });
  return done;
}

void CpuStorage::reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
                        BackendStorage& dst) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* data = ptr<T>();
    auto value = [](const auto& a, int64_t) { return T(a.best); };
    auto index = [](const auto& a, int64_t) { return a.index; };
    switch (op) {
      case ReduceOp::Sum:
        if constexpr (is_float_v<T>)
          return run_reduce<T, SumAcc<T>>(data, src, reduced_dims, as_cpu(dst).ptr<T>(),
                                          [](const SumAcc<T>& a, int64_t) { return T(a.total); });
        else
          return run_reduce<T, SumAcc<T>>(data, src, reduced_dims, as_cpu(dst).ptr<int64_t>(),
                                          [](const SumAcc<T>& a, int64_t) { return a.total; });
      case ReduceOp::Max:
        return run_reduce<T, ValueAcc<T, true>>(data, src, reduced_dims, as_cpu(dst).ptr<T>(),
                                                value);
      case ReduceOp::Min:
        return run_reduce<T, ValueAcc<T, false>>(data, src, reduced_dims, as_cpu(dst).ptr<T>(),
                                                 value);
      case ReduceOp::ArgMax:
        return run_reduce<T, ExtremeAcc<T, true>>(data, src, reduced_dims,
                                                  as_cpu(dst).ptr<int64_t>(), index);
      case ReduceOp::ArgMin:
        return run_reduce<T, ExtremeAcc<T, false>>(data, src, reduced_dims,
                                                   as_cpu(dst).ptr<int64_t>(), index);
    }
  });
}

}  // namespace ember::cpu
