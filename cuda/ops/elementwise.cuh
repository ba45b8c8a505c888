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

template <typename In, typename Out, typename F>
__global__ void map1_strided(const In* a, Out* o, int64_t n, Walk<2> w, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    walk_offsets(w, i, off);
    o[off[1]] = f(a[off[0]]);
  }
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
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    walk_offsets(w, i, off);
    o[off[2]] = f(a[off[0]], b[off[1]]);
  }
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
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[4];
    walk_offsets(w, i, off);
    o[off[3]] = f(a[off[0]], b[off[1]], c[off[2]]);
  }
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
  } else {
    map1_strided<<<grid_for(n), kBlock, 0, dev.stream()>>>(in, out, n, w, f);
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
  } else {
    map2_strided<<<grid_for(n), kBlock, 0, dev.stream()>>>(a, b, out, n, w, f);
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
  } else {
    map3_strided<<<grid_for(n), kBlock, 0, dev.stream()>>>(a, b, c, out, n, w, f);
  }
  dev.check_launch(op);
}

}  // namespace ember::cuda
