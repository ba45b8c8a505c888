// Reductions over the trailing dims of a view: sum, max, min, argmax, argmin.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

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

// Floats sum in double (dense f32 runs in float blocks of 1024 first: still more accurate
// than numpy's pairwise float sum), integers in int64 with wrap-around.
template <typename T>
struct SumAcc {
  using Acc = std::conditional_t<is_float_v<T>, double, int64_t>;
  Acc total = 0;
  void add_run(const T* p, int64_t stride, int64_t n, int64_t) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1) return add_dense(p, n);
    }
    // Independent chains so additions overlap. Integers add in uint64 with plain `+`:
    // g++ 12 -O3 mis-vectorises wrap_add here for uint8 inputs (sums a quarter of them).
    using Chain = std::conditional_t<is_float_v<T>, double, uint64_t>;
    Chain s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) s[k] += Chain(Acc(compute_t<T>(p[(i + k) * stride])));
    for (; i < n; ++i) s[0] += Chain(Acc(compute_t<T>(p[i * stride])));
    total = wrap_add(total, Acc((s[0] + s[1]) + (s[2] + s[3])));
  }
  // Dense float runs: vectorised blocks of 1024 (float lanes, then double), see sum_f32.
  void add_dense(const float* p, int64_t n) { total += sum_f32(p, n); }
  void add_one(T v, int64_t) { total = wrap_add(total, Acc(compute_t<T>(v))); }
  void merge(const SumAcc& o) { total = wrap_add(total, o.total); }
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
    for (int64_t i = 0; i < n; ++i) {
      take(C(p[i * stride]), first + i);
      if (is_nan(best)) return;
    }
  }
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
  void merge(const ValueAcc& o) { best = pick(best, o.best); }
};

struct ReduceGeom {
  Layout kept;    // the kept dims of src, with src's offset
  Walk<1> red;    // the reduced dims, merged
  int64_t count;  // elements reduced per output
};

ReduceGeom geometry(const Layout& src, int64_t nred) {
  size_t nk = size_t(src.ndim() - nred);
  Shape ks(src.shape().begin(), src.shape().begin() + nk),
      rs(src.shape().begin() + nk, src.shape().end());
  Strides kst(src.strides().begin(), src.strides().begin() + nk),
      rst(src.strides().begin() + nk, src.strides().end());
  Layout red(rs, rst, 0);
  return {Layout(ks, kst, src.offset()), merge_dims<1>(rs, {&red}), shape_numel(rs)};
}

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

template <typename T, typename A, typename Out, typename Result>
void run_reduce(const T* data, const Layout& src, int64_t nred, Out* out, Result result) {
  ReduceGeom g = geometry(src, nred);
  Layout dst(g.kept.shape());
  int64_t nout = dst.numel();
  if (nout == 0) return;
  if (nout < num_threads() && g.count >= 2 * kParallelGrain) {
    // Few outputs, long reductions: split each reduction in parts, one accumulator per
    // part, merged in order at the end (the result does not depend on the thread count).
    const int64_t parts = std::min<int64_t>(g.count / kParallelGrain, 64);
    const int64_t per = (g.count + parts - 1) / parts;
    std::vector<A> accs(static_cast<size_t>(parts));
    for (int64_t o = 0; o < nout; ++o) {
      int64_t base = g.kept.offset();
      for (int64_t d = g.kept.ndim(), r = o; d-- > 0; r /= g.kept.dim(d))
        base += (r % g.kept.dim(d)) * g.kept.strides()[size_t(d)];
      std::fill(accs.begin(), accs.end(), A());
      parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p)
          feed(data, base, g.red, p * per, std::min(g.count, (p + 1) * per), accs[size_t(p)]);
      });
      A total;
      for (const A& a : accs) total.merge(a);
      out[o] = result(total, g.count);
    }
    return;
  }
  Walk<1> kept = merge_dims<1>(g.kept.shape(), {&g.kept});
  if (kept.shape.size() == 1 && kept.strides[0][0] == 1 && g.red.strides[0].back() != 1) {
    // Reducing across rows of a dense block (e.g. sum over dim 0): walk the rows in
    // memory order and update a run of outputs per row, instead of striding per output.
    parallel_for(nout, kParallelGrain / 8, [&](int64_t lo, int64_t hi) {
      std::vector<A> accs(size_t(hi - lo));
      const Shape& sh = g.red.shape;
      const Strides& st = g.red.strides[0];
      std::vector<int64_t> idx(sh.size(), 0);
      int64_t off = g.kept.offset() + lo;
      for (int64_t r = 0; r < g.count; ++r) {
        const T* row = data + off;
        for (int64_t j = 0; j < hi - lo; ++j) accs[size_t(j)].add_one(row[j], r);
        for (size_t d = sh.size(); d-- > 0;) {  // odometer over the reduced dims
          off += st[d];
          if (++idx[d] < sh[d]) break;
          off -= sh[d] * st[d];
          idx[d] = 0;
        }
      }
      for (int64_t j = lo; j < hi; ++j) out[j] = result(accs[size_t(j - lo)], g.count);
    });
    return;
  }
  walk<2>(dst.shape(), {&g.kept, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    for (int64_t i = 0; i < n; ++i) {
      A acc;
      feed(data, off[0] + i * st[0], g.red, 0, g.count, acc);
      out[off[1] + i * st[1]] = result(acc, g.count);
    }
  });
}

}  // namespace

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
