// Elementwise kernels over 1, 2 or 3 inputs: a dense branch with 16-byte vector loads
// and stores, and a general strided branch for views. F is a functor on elements.
#pragma once

#include "common.cuh"

namespace ember::cuda {

template <typename A, typename Out>
constexpr int pair_width() {
  return vec_width<A>() < vec_width<Out>() ? vec_width<A>() : vec_width<Out>();
}

template <typename In, typename Out, typename F>
__global__ void map1_dense(const In* a, Out* o, int64_t n, bool vec, F f) {
  constexpr int V = pair_width<In, Out>();
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  int64_t head = 0;
  if (vec) {
    const int64_t nv = n / V;
    auto av = reinterpret_cast<const Vec<In, V>*>(a);
    auto ov = reinterpret_cast<Vec<Out, V>*>(o);
    for (int64_t i = tid; i < nv; i += step) {
      Vec<In, V> x = av[i];
      Vec<Out, V> y;
#pragma unroll
      for (int k = 0; k < V; ++k) y.v[k] = f(x.v[k]);
      ov[i] = y;
    }
    head = nv * V;
  }
  for (int64_t i = head + tid; i < n; i += step) o[i] = f(a[i]);
}

// The general strided walk: a thread takes kStridedUnroll elements a block apart, finds
// their offsets, loads (and computes) every one of them, then stores them: several loads
// in flight per thread. One at a time, a strided copy (a[:, ::2].contiguous()) left too
// few bytes in flight to reach the memory's bandwidth. Launch with grid_for(n,
// kStridedUnroll). A store never clobbers another element's input: core sends overlapping
// outputs through a temporary, so in and out are the same memory or apart.
constexpr int kStridedUnroll = 4;

template <int N, typename Load, typename Store>
__device__ __forceinline__ void strided_walk(const Walk<N>& w, int64_t n, Load load, Store store) {
  constexpr int U = kStridedUnroll;
  const int64_t tile = int64_t(blockDim.x) * U;
  for (int64_t i0 = int64_t(blockIdx.x) * tile + threadIdx.x; i0 < n;
       i0 += int64_t(gridDim.x) * tile) {
    int64_t off[U][N];
    decltype(load(off[0])) v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t i = i0 + int64_t(u) * blockDim.x;
      if (i < n) {
        walk_offsets(w, i, off[u]);
        v[u] = load(off[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i0 + int64_t(u) * blockDim.x < n) store(off[u], v[u]);
  }
}

template <typename In, typename Out, typename F>
__global__ void map1_strided(const In* a, Out* o, int64_t n, Walk<2> w, F f) {
  strided_walk(
      w, n, [&](const int64_t(&off)[2]) { return f(a[off[0]]); },
      [&](const int64_t(&off)[2], Out v) { o[off[1]] = v; });
}

// A dense pair where either side may be one value broadcast (a_one / b_one).
template <typename T, typename Out, typename F>
__global__ void map2_dense(const T* a, const T* b, Out* o, int64_t n, bool a_one, bool b_one,
                           bool vec, F f) {
  constexpr int V = pair_width<T, Out>();
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  int64_t head = 0;
  if (vec) {
    const int64_t nv = n / V;
    auto av = reinterpret_cast<const Vec<T, V>*>(a);
    auto bv = reinterpret_cast<const Vec<T, V>*>(b);
    auto ov = reinterpret_cast<Vec<Out, V>*>(o);
    const T a0 = a[0], b0 = b[0];
    for (int64_t i = tid; i < nv; i += step) {
      Vec<T, V> x, y;
      if (a_one) {
#pragma unroll
        for (int k = 0; k < V; ++k) x.v[k] = a0;
      } else {
        x = av[i];
      }
      if (b_one) {
#pragma unroll
        for (int k = 0; k < V; ++k) y.v[k] = b0;
      } else {
        y = bv[i];
      }
      Vec<Out, V> r;
#pragma unroll
      for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k], y.v[k]);
      ov[i] = r;
    }
    head = nv * V;
  }
  for (int64_t i = head + tid; i < n; i += step) o[i] = f(a[a_one ? 0 : i], b[b_one ? 0 : i]);
}

template <typename T, typename Out, typename F>
__global__ void map2_strided(const T* a, const T* b, Out* o, int64_t n, Walk<3> w, F f) {
  strided_walk(
      w, n, [&](const int64_t(&off)[3]) { return f(a[off[0]], b[off[1]]); },
      [&](const int64_t(&off)[3], Out v) { o[off[2]] = v; });
}

// A dense triple (where's condition and branches) where any input may be one value
// broadcast: vector loads of each dense input, the one values held in registers.
template <typename A, typename B, typename C, typename Out>
constexpr int triple_width() {
  return pair_width<A, Out>() < pair_width<B, C>() ? pair_width<A, Out>() : pair_width<B, C>();
}

template <typename T, int V>
__device__ __forceinline__ Vec<T, V> load_or_one(const T* p, int64_t i, bool one, T v0) {
  Vec<T, V> x;
  if (one) {
#pragma unroll
    for (int k = 0; k < V; ++k) x.v[k] = v0;
  } else {
    x = reinterpret_cast<const Vec<T, V>*>(p)[i];
  }
  return x;
}

template <typename A, typename B, typename C, typename Out, typename F>
__global__ void map3_dense(const A* a, const B* b, const C* c, Out* o, int64_t n, bool a_one,
                           bool b_one, bool c_one, bool vec, F f) {
  constexpr int V = triple_width<A, B, C, Out>();
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  int64_t head = 0;
  if (vec) {
    const int64_t nv = n / V;
    auto ov = reinterpret_cast<Vec<Out, V>*>(o);
    const A a0 = a[0];
    const B b0 = b[0];
    const C c0 = c[0];
    for (int64_t i = tid; i < nv; i += step) {
      const Vec<A, V> x = load_or_one<A, V>(a, i, a_one, a0);
      const Vec<B, V> y = load_or_one<B, V>(b, i, b_one, b0);
      const Vec<C, V> z = load_or_one<C, V>(c, i, c_one, c0);
      Vec<Out, V> r;
#pragma unroll
      for (int k = 0; k < V; ++k) r.v[k] = f(x.v[k], y.v[k], z.v[k]);
      ov[i] = r;
    }
    head = nv * V;
  }
  for (int64_t i = head + tid; i < n; i += step)
    o[i] = f(a[a_one ? 0 : i], b[b_one ? 0 : i], c[c_one ? 0 : i]);
}

template <typename A, typename B, typename C, typename Out, typename F>
__global__ void map3_strided(const A* a, const B* b, const C* c, Out* o, int64_t n, Walk<4> w,
                             F f) {
  strided_walk(
      w, n, [&](const int64_t(&off)[4]) { return f(a[off[0]], b[off[1]], c[off[2]]); },
      [&](const int64_t(&off)[4], Out v) { o[off[3]] = v; });
}

// ---- rows: views whose innermost dim is dense (stride 1) or one value per row (stride 0)
// after the plan, e.g. an operand broadcast as a row or a column, or whole rows of a wider
// tensor (cat's pieces): threads take V-wide vectors of a row, its offsets found from the
// outer dims once per vector, instead of a division per element and dim.

template <int N>
struct Rows {
  Walk<N> outer;  // the plan's dims but the last
  bool one[N];    // inner stride 0: one value per row; else inner stride 1
};

template <typename T, int V>
__device__ __forceinline__ Vec<T, V> row_load(const T* p, bool one) {
  Vec<T, V> x;
  if (one) {
    const T v = *p;
#pragma unroll
    for (int k = 0; k < V; ++k) x.v[k] = v;
  } else if constexpr (V == 1) {
    x.v[0] = *p;
  } else {
    x = *reinterpret_cast<const Vec<T, V>*>(p);
  }
  return x;
}

template <typename T, int V>
__device__ __forceinline__ void row_store(T* p, const Vec<T, V>& x) {
  if constexpr (V == 1)
    *p = x.v[0];
  else
    *reinterpret_cast<Vec<T, V>*>(p) = x;
}

// Slot s is vector s % lv of row s / lv (32-bit division where the slots fit).
template <typename I, int N>
__device__ __forceinline__ int64_t row_slot(const Rows<N>& r, I s, I lv, int64_t (&off)[N]) {
  const I row = s / lv;
  walk_offsets(r.outer, int64_t(row), off);
  return int64_t(s - row * lv);
}

template <typename I, int V, typename In, typename Out, typename F>
__global__ void map1_rows(const In* a, Out* o, Rows<2> r, I slots, I lv, F f) {
  for (I s = I(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += I(gridDim.x) * blockDim.x) {
    int64_t off[2];
    const int64_t j = row_slot(r, s, lv, off) * V;
    const Vec<In, V> x = row_load<In, V>(a + off[0] + (r.one[0] ? 0 : j), r.one[0]);
    Vec<Out, V> y;
#pragma unroll
    for (int k = 0; k < V; ++k) y.v[k] = f(x.v[k]);
    row_store<Out, V>(o + off[1] + j, y);
  }
}

template <typename I, int V, typename T, typename Out, typename F>
__global__ void map2_rows(const T* a, const T* b, Out* o, Rows<3> r, I slots, I lv, F f) {
  for (I s = I(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += I(gridDim.x) * blockDim.x) {
    int64_t off[3];
    const int64_t j = row_slot(r, s, lv, off) * V;
    const Vec<T, V> x = row_load<T, V>(a + off[0] + (r.one[0] ? 0 : j), r.one[0]);
    const Vec<T, V> y = row_load<T, V>(b + off[1] + (r.one[1] ? 0 : j), r.one[1]);
    Vec<Out, V> z;
#pragma unroll
    for (int k = 0; k < V; ++k) z.v[k] = f(x.v[k], y.v[k]);
    row_store<Out, V>(o + off[2] + j, z);
  }
}

template <typename I, int V, typename A, typename B, typename C, typename Out, typename F>
__global__ void map3_rows(const A* a, const B* b, const C* c, Out* o, Rows<4> r, I slots, I lv,
                          F f) {
  for (I s = I(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += I(gridDim.x) * blockDim.x) {
    int64_t off[4];
    const int64_t j = row_slot(r, s, lv, off) * V;
    const Vec<A, V> x = row_load<A, V>(a + off[0] + (r.one[0] ? 0 : j), r.one[0]);
    const Vec<B, V> y = row_load<B, V>(b + off[1] + (r.one[1] ? 0 : j), r.one[1]);
    const Vec<C, V> z = row_load<C, V>(c + off[2] + (r.one[2] ? 0 : j), r.one[2]);
    Vec<Out, V> q;
#pragma unroll
    for (int k = 0; k < V; ++k) q.v[k] = f(x.v[k], y.v[k], z.v[k]);
    row_store<Out, V>(o + off[3] + j, q);
  }
}

// Whether a (memory-ordered) plan is rows: two dims or more, the written view (last)
// dense along the inner dim, every other view dense or one value per row there.
template <int N>
int64_t shape_rows(const Walk<N>& w) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < w.ndim; ++d) rows *= w.shape[d];
  return rows;
}

template <int N>
bool as_rows(const Walk<N>& w, Rows<N>& r) {
  if (w.ndim < 2 || w.stride[N - 1][w.ndim - 1] != 1) return false;
  for (int k = 0; k < N; ++k) {
    const int64_t s = w.stride[k][w.ndim - 1];
    if (s != 0 && s != 1) return false;
    r.one[k] = s == 0;
  }
  r.outer.ndim = w.ndim - 1;
  r.outer.narrow = w.narrow;  // fewer rows than elements
  for (int k = 0; k < N; ++k) r.outer.offset[k] = w.offset[k];
  for (int d = 0; d + 1 < w.ndim; ++d) {
    r.outer.shape[d] = w.shape[d];
    r.outer.div[d] = w.div[d];
    for (int k = 0; k < N; ++k) r.outer.stride[k][d] = w.stride[k][d];
  }
  return true;
}

// Whether every dense view of the rows starts each row on a V-element boundary of a
// 16-byte aligned pointer (so that vector loads and stores are aligned), and V divides
// the row.
template <int N>
bool rows_vectorise(const Rows<N>& r, int64_t len, int V, const std::array<const void*, 4>& base) {
  if (V <= 1 || len % V != 0) return false;
  for (int k = 0; k < N; ++k) {
    if (r.one[k]) continue;
    if (!aligned16(base[size_t(k)]) || r.outer.offset[k] % V != 0 || !steps_by(r.outer, k, V))
      return false;
  }
  return true;
}

// Launches kernel<I, V> over the rows: V-wide vectors where rows_vectorise allows, 32-bit
// slot math where the slots fit.
template <int V, int N, typename Launch>
void launch_rows(const Walk<N>& w, const Rows<N>& r, const std::array<const void*, 4>& base,
                 Launch&& launch) {
  const int64_t len = w.shape[w.ndim - 1];
  const int64_t rows = shape_rows(w);
  auto go = [&](auto v) {
    constexpr int W = decltype(v)::value;
    const int64_t lv = len / W, slots = rows * lv;
    if (slots <= int64_t(INT32_MAX))
      launch(std::integral_constant<int, W>{}, uint32_t(slots), uint32_t(lv), grid_for(slots));
    else
      launch(std::integral_constant<int, W>{}, int64_t(slots), int64_t(lv), grid_for(slots));
  };
  if (rows_vectorise(r, len, V, base))
    go(std::integral_constant<int, V>{});
  else
    go(std::integral_constant<int, 1>{});
}

// ---- host launchers: dense when every view is, strided otherwise

// Whether a plan is one run that every view walks densely (stride 1), or, where `one`
// says so, reads as one broadcast value.
template <int N>
bool dense_run(const Walk<N>& w, const std::array<bool, N>& one) {
  if (w.ndim != 1) return false;
  for (int k = 0; k < N; ++k)
    if (w.stride[k][0] != 1 && !(one[size_t(k)] && w.stride[k][0] == 0)) return false;
  return true;
}

template <typename In, typename Out, typename F>
void launch_map1(const char* op, const CudaDevice& dev, const In* in, const Layout& src, Out* out,
                 const Layout& dst, F f) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  GpuScope scope(dev.gpu());
  // Dense, or dense once the dims are taken in memory order (a result laid out like a
  // transposed input): one run, vector loads.
  const bool contiguous = src.is_contiguous() && dst.is_contiguous();
  Walk<2> w;
  if (!contiguous) w = make_walk<2>(op, dst.shape(), {&src, &dst}, WalkOrder::Memory);
  if (contiguous || dense_run(w, {false, false})) {
    const In* a = in + (contiguous ? src.offset() : w.offset[0]);
    Out* o = out + (contiguous ? dst.offset() : w.offset[1]);
    constexpr int V = pair_width<In, Out>();
    map1_dense<<<grid_for(n, V), kBlock, 0, dev.stream()>>>(a, o, n, aligned16(a) && aligned16(o),
                                                            f);
  } else if (Rows<2> r; as_rows(w, r)) {
    launch_rows<pair_width<In, Out>()>(w, r, {in, out}, [&](auto v, auto slots, auto lv, unsigned grid) {
      using I = decltype(slots);
      map1_rows<I, decltype(v)::value><<<grid, kBlock, 0, dev.stream()>>>(in, out, r, slots, lv, f);
    });
  } else {
    map1_strided<<<grid_for(n, kStridedUnroll), kBlock, 0, dev.stream()>>>(in, out, n, w, f);
  }
  dev.check_launch(op);
}

// Whether `l` is one element broadcast over everything (every stride 0).
inline bool is_one_value(const Layout& l) {
  for (int64_t s : l.strides())
    if (s != 0) return false;
  return true;
}

template <typename T, typename Out, typename F>
void launch_map2(const char* op, const CudaDevice& dev, const T* a, const Layout& la, const T* b,
                 const Layout& lb, Out* out, const Layout& dst, F f) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  GpuScope scope(dev.gpu());
  const bool a_one = is_one_value(la) && n > 1, b_one = is_one_value(lb) && n > 1;
  const bool contiguous =
      (a_one || la.is_contiguous()) && (b_one || lb.is_contiguous()) && dst.is_contiguous();
  Walk<3> w;
  if (!contiguous) w = make_walk<3>(op, dst.shape(), {&la, &lb, &dst}, WalkOrder::Memory);
  if (contiguous || dense_run(w, {a_one, b_one, false})) {
    const T* pa = a + (contiguous ? la.offset() : w.offset[0]);
    const T* pb = b + (contiguous ? lb.offset() : w.offset[1]);
    Out* o = out + (contiguous ? dst.offset() : w.offset[2]);
    const bool vec = (a_one || aligned16(pa)) && (b_one || aligned16(pb)) && aligned16(o);
    constexpr int V = pair_width<T, Out>();
    map2_dense<<<grid_for(n, V), kBlock, 0, dev.stream()>>>(pa, pb, o, n, a_one, b_one, vec, f);
  } else if (Rows<3> r; as_rows(w, r)) {
    launch_rows<pair_width<T, Out>()>(w, r, {a, b, out}, [&](auto v, auto slots, auto lv, unsigned grid) {
      using I = decltype(slots);
      map2_rows<I, decltype(v)::value><<<grid, kBlock, 0, dev.stream()>>>(a, b, out, r, slots, lv, f);
    });
  } else {
    map2_strided<<<grid_for(n, kStridedUnroll), kBlock, 0, dev.stream()>>>(a, b, out, n, w, f);
  }
  dev.check_launch(op);
}

template <typename A, typename B, typename C, typename Out, typename F>
void launch_map3(const char* op, const CudaDevice& dev, const A* a, const Layout& la, const B* b,
                 const Layout& lb, const C* c, const Layout& lc, Out* out, const Layout& dst, F f) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  GpuScope scope(dev.gpu());
  const bool a_one = is_one_value(la) && n > 1, b_one = is_one_value(lb) && n > 1,
             c_one = is_one_value(lc) && n > 1;
  const bool contiguous = (a_one || la.is_contiguous()) && (b_one || lb.is_contiguous()) &&
                          (c_one || lc.is_contiguous()) && dst.is_contiguous();
  Walk<4> w;
  if (!contiguous) w = make_walk<4>(op, dst.shape(), {&la, &lb, &lc, &dst}, WalkOrder::Memory);
  if (contiguous || dense_run(w, {a_one, b_one, c_one, false})) {
    const A* pa = a + (contiguous ? la.offset() : w.offset[0]);
    const B* pb = b + (contiguous ? lb.offset() : w.offset[1]);
    const C* pc = c + (contiguous ? lc.offset() : w.offset[2]);
    Out* o = out + (contiguous ? dst.offset() : w.offset[3]);
    const bool vec = (a_one || aligned16(pa)) && (b_one || aligned16(pb)) &&
                     (c_one || aligned16(pc)) && aligned16(o);
    constexpr int V = triple_width<A, B, C, Out>();
    map3_dense<<<grid_for(n, V), kBlock, 0, dev.stream()>>>(pa, pb, pc, o, n, a_one, b_one, c_one,
                                                            vec, f);
  } else if (Rows<4> r; as_rows(w, r)) {
    launch_rows<triple_width<A, B, C, Out>()>(
        w, r, {a, b, c, out}, [&](auto v, auto slots, auto lv, unsigned grid) {
          using I = decltype(slots);
          map3_rows<I, decltype(v)::value>
              <<<grid, kBlock, 0, dev.stream()>>>(a, b, c, out, r, slots, lv, f);
        });
  } else {
    map3_strided<<<grid_for(n, kStridedUnroll), kBlock, 0, dev.stream()>>>(a, b, c, out, n, w, f);
  }
  dev.check_launch(op);
}

}  // namespace ember::cuda
