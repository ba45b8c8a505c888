// Reductions over the trailing dims of a view: sum, max, min, argmax, argmin, var, prod,
// logsumexp, sums of squares, each an accumulator (begin, add, merge, down, result) run
// by one launcher. Contiguous rows reduce one block per row with warp shuffles (a long
// row over several blocks, then a second pass; short rows a group of lanes each); a
// strided reduced dim takes the column kernel, whose loads are coalesced across the
// outputs, split over blocks when the outputs are few.
#include "common.cuh"
#include "core/logsumexp.h"

namespace ember::cuda {

namespace {

// Floats sum in double (free next to the memory traffic), integers in int64 with wrap.
// kSquares (floats, norm's p = 2): each value squared first, in its compute type, as the
// CPU's.
template <typename T, bool kSquares = false>
struct SumAcc {
  using Value = std::conditional_t<is_float_v<T>, double, int64_t>;
  Value v = 0;
  __device__ void begin(T) {}
  __device__ void add(T x, int64_t) {
    if constexpr (kSquares)
      v += Value(to_c(x) * to_c(x));
    else
      v = wrap_add(v, Value(to_c(x)));
  }
  __device__ void merge(const SumAcc& o) { v = wrap_add(v, o.v); }
  __device__ SumAcc down(int delta) const {
    SumAcc o;
    o.v = shfl_down(v, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    if constexpr (is_float_v<T>)
      return saturate_from_double<Out>(v);
    else
      return Out(v);
  }
};

// argmax/argmin: NaN wins (as numpy), the first index wins ties. The merge is
// associative and commutative, so any tree gives the CPU's answer.
template <typename T, bool kMax>
struct ArgAcc {
  using C = compute_t<T>;
  C v = C(0);
  int64_t i = -1;  // -1: empty
  __device__ static bool nan(C x) { return x != x; }
  __device__ void begin(T) {}
  __device__ void merge(const ArgAcc& o) {
    if (o.i < 0) return;
    bool take;
    if (i < 0)
      take = true;
    else if (nan(v) || nan(o.v))
      take = nan(v) ? nan(o.v) && o.i < i : true;
    else if (kMax ? o.v > v : o.v < v)
      take = true;
    else
      take = o.v == v && o.i < i;
    if (take) v = o.v, i = o.i;
  }
  __device__ void add(T x, int64_t index) {
    ArgAcc o;
    o.v = to_c(x);
    o.i = index;
    merge(o);
  }
  __device__ ArgAcc down(int delta) const {
    ArgAcc o;
    o.v = shfl_down(v, delta);
    o.i = shfl_down(i, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return Out(i < 0 ? 0 : i);
  }
};

// max/min values alone (amax, amin, any, all): no index to carry. The empty accumulator
// holds the identity (-inf or the type's lowest for max) and NaN wins. Of -0.0 and 0.0
// either may stay, as in numpy's and PyTorch's max.
template <typename T, bool kMax>
struct ValueAcc {
  using C = compute_t<T>;
  __device__ static C identity() {
    if constexpr (is_float_v<T>)
      return kMax ? C(-INFINITY) : C(INFINITY);
    else
      return kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
  C v = identity();
  __device__ void begin(T) {}
  __device__ void take(C o) {
    if (!(v != v) && (o != o || (kMax ? o > v : o < v))) v = o;
  }
  __device__ void add(T x, int64_t) { take(to_c(x)); }
  __device__ void merge(const ValueAcc& o) { take(o.v); }
  __device__ ValueAcc down(int delta) const {
    ValueAcc o;
    o.v = shfl_down(v, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return from_c<Out>(v);
  }
};

// prod in one pass, in the input's type (float32, float64; int64 wrapping, as PyTorch's).
template <typename T>
struct ProdAcc {
  T v = T(1);
  __device__ static T mul(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(a) * uint64_t(b));
    else
      return a * b;
  }
  __device__ void begin(T) {}
  __device__ void add(T x, int64_t) { v = mul(v, x); }
  __device__ void merge(const ProdAcc& o) { v = mul(v, o.v); }
  __device__ ProdAcc down(int delta) const {
    ProdAcc o;
    o.v = shfl_down(v, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return Out(v);
  }
};

// logsumexp of float32 in one pass: core/logsumexp.h's running max and rescaled sum (in
// double), with float exp.
struct LseAcc {
  struct Exp {
    __device__ double operator()(double d) const { return double(expf(float(d))); }
  };
  LseState st;
  __device__ void begin(float) {}
  __device__ void add(float x, int64_t) { st.add(x, Exp()); }
  __device__ void merge(const LseAcc& o) { st.merge(o.st, Exp()); }
  __device__ LseAcc down(int delta) const {
    LseAcc o;
    o.st.m = shfl_down(st.m, delta);
    o.st.s = shfl_down(st.s, delta);
    o.st.nan = shfl_down(int(st.nan), delta) != 0;
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return Out(st.result());
  }
};

// The smallest and largest id together, for core's range check of index arrays.
struct Bounds {
  int64_t lo, hi;
};
template <typename T>
struct BoundsAcc {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  __device__ void begin(T) {}
  __device__ void add(T x, int64_t) {
    lo = min(lo, int64_t(x));
    hi = max(hi, int64_t(x));
  }
  __device__ void merge(const BoundsAcc& o) {
    lo = min(lo, o.lo);
    hi = max(hi, o.hi);
  }
  __device__ BoundsAcc down(int delta) const {
    BoundsAcc o;
    o.lo = shfl_down(lo, delta);
    o.hi = shfl_down(hi, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return Out{lo, hi};
  }
};

// var and std in one pass: sums of the deviations from the row's first element and of
// their squares, in double (begin() takes that element; every accumulator of a row gets
// the same one, so sums merge by addition). A float32 or half value's squares neither
// overflow nor underflow a double, and a sample's own offset from the mean is at most
// the spread of the row, so the shift leaves no cancellation the output could show.
struct Moments {
  double s1, s2;
  int64_t n;
};
template <typename T>
struct MomentsAcc {
  double k = 0, s1 = 0, s2 = 0;
  int64_t n = 0;
  __device__ void begin(T first) { k = double(to_c(first)); }
  __device__ void add(T x, int64_t) {
    const double d = double(to_c(x)) - k;
    s1 += d;
    s2 = fma(d, d, s2);
    ++n;
  }
  __device__ void merge(const MomentsAcc& o) {
    s1 += o.s1;
    s2 += o.s2;
    n += o.n;
  }
  __device__ MomentsAcc down(int delta) const {
    MomentsAcc o;
    o.s1 = shfl_down(s1, delta);
    o.s2 = shfl_down(s2, delta);
    o.n = shfl_down(n, delta);
    return o;
  }
  template <typename Out>
  __device__ Out result() const {
    return Out{s1, s2, n};
  }
};

template <typename T>
__global__ void finish_var(const Moments* m, int64_t outer, double correction, bool root,
                           T* dst) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < outer; i += step) {
    const double n = double(m[i].n);
    // PyTorch divides by max(N - correction, 0)
    double q = (m[i].s2 - m[i].s1 * (m[i].s1 / n)) / fmax(n - correction, 0.0);
    q = q < 0 ? 0.0 : q;  // NaN stays
    dst[i] = saturate_from_double<T>(root ? sqrt(q) : q);
  }
}

template <typename A>
struct arg_of_int64 : std::false_type {};
template <bool kMax>
struct arg_of_int64<ArgAcc<int64_t, kMax>> : std::true_type {};

// The reduced dims (merged) and the kept dims of the source, in elements.
struct ReduceShape {
  Walk<1> kept, reduced;
  int64_t outer = 1, inner = 1;
};

__device__ __forceinline__ int64_t reduced_offset(const Walk<1>& w, int64_t i) {
  if (w.ndim == 1) return i * w.stride[0][0];
  int64_t off[1];
  walk_offsets(w, i, off);
  return off[0];
}

template <typename Acc>
__device__ Acc block_reduce(Acc a) {
  __shared__ unsigned char raw[sizeof(Acc) * 32];
  Acc* part = reinterpret_cast<Acc*>(raw);
  for (int d = 16; d > 0; d >>= 1) a.merge(a.down(d));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < int(blockDim.x >> 5) ? part[lane] : Acc{};
    for (int d = 16; d > 0; d >>= 1) a.merge(a.down(d));
  }
  return a;  // valid in thread 0
}

// Adds row[lo, hi) to `a` with 16-byte loads, four in flight per thread (lo is a whole
// number of vectors into the row, which is 16-byte aligned).
template <typename T, typename Acc>
__device__ void add_dense(Acc& a, const T* row, int64_t lo, int64_t hi) {
  constexpr int V = vec_width<T>();
  auto pv = reinterpret_cast<const Vec<T, V>*>(row);
  const int64_t vhi = hi / V, step = blockDim.x;
  int64_t i = lo / V + threadIdx.x;
  for (; i + 3 * step < vhi; i += 4 * step) {
    Vec<T, V> x[4] = {pv[i], pv[i + step], pv[i + 2 * step], pv[i + 3 * step]};
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int k = 0; k < V; ++k) a.add(x[u].v[k], (i + u * step) * V + k);
  }
  for (; i < vhi; i += step) {
    Vec<T, V> x = pv[i];
#pragma unroll
    for (int k = 0; k < V; ++k) a.add(x.v[k], i * V + k);
  }
  for (int64_t j = vhi * V + threadIdx.x; j < hi; j += step) a.add(row[j], j);
}

// One block per output row (grid-stride over rows); the block may take a slice
// [lo, hi) of the row, writing a partial (for the split pass) instead of the result.
// `dense`: rows contiguous and 16-byte aligned, per_chunk a whole number of vectors.
template <typename T, typename Acc, typename Out>
__global__ void reduce_rows(const T* src, ReduceShape s, Out* dst, Acc* partial, int chunks,
                            int64_t per_chunk, bool dense) {
  const int64_t work = s.outer * chunks;
  for (int64_t job = blockIdx.x; job < work; job += gridDim.x) {
    const int64_t row = job / chunks, chunk = job % chunks;
    int64_t base[1];
    walk_offsets(s.kept, row, base);
    const int64_t lo = min(s.inner, chunk * per_chunk), hi = min(s.inner, lo + per_chunk);
    Acc a;
    if (s.inner > 0) a.begin(src[base[0]]);
    if (dense) {
      add_dense(a, src + base[0], lo, hi);
    } else {
      for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
        a.add(src[base[0] + reduced_offset(s.reduced, i)], i);
    }
    a = block_reduce(a);
    if (threadIdx.x == 0) {
      if (partial)
        partial[job] = a;
      else
        dst[row] = a.template result<Out>();
    }
    __syncthreads();  // the shared partials are reused by the next row
  }
}

// Merges each row's `chunks` partials.
template <typename Acc, typename Out>
__global__ void finish_rows(const Acc* partial, int64_t outer, int chunks, Out* dst) {
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    Acc a;
    for (int c = threadIdx.x; c < chunks; c += blockDim.x) a.merge(partial[row * chunks + c]);
    a = block_reduce(a);
    if (threadIdx.x == 0) dst[row] = a.template result<Out>();
    __syncthreads();
  }
}

// Many short rows: a group of G lanes (a power of two up to a warp) per row, rows of a
// warp side by side, so that no block idles on a row of 16 elements; the group's lanes
// merge by shuffles (a lane only ever takes a value from its own group's lanes above it).
template <typename T, typename Acc, typename Out, int G>
__global__ void reduce_short_rows(const T* src, ReduceShape s, Out* dst) {
  const int lane = int(threadIdx.x) % G;
  const int64_t per_block = blockDim.x / G, step = int64_t(gridDim.x) * per_block;
  const int64_t st = s.reduced.stride[0][0];
  // the loop's trip count is the same for every thread: all of a warp meet at the shuffles
  for (int64_t first = int64_t(blockIdx.x) * per_block; first < s.outer; first += step) {
    const int64_t row = first + threadIdx.x / G;
    Acc a;
    if (row < s.outer) {
      int64_t base[1];
      walk_offsets(s.kept, row, base);
      const T* p = src + base[0];
      if (s.inner > 0) a.begin(p[0]);
#pragma unroll 4
      for (int64_t i = lane; i < s.inner; i += G) a.add(p[i * st], i);
    }
#pragma unroll
    for (int d = G / 2; d > 0; d >>= 1) a.merge(a.down(d));
    if (lane == 0 && row < s.outer) dst[row] = a.template result<Out>();
  }
}

// Reductions across rows (a strided reduced dim; kept outputs side by side in memory): a
// block is kColX outputs by kColY threads down the reduced dim, loads coalesced across
// the outputs, four in flight per thread; the reduced dim splits over `splits` blocks
// when the outputs alone cannot fill the GPU, each writing a partial (split-major).
constexpr int kColX = 32, kColY = kBlock / kColX;

template <typename T, typename Acc, typename Out>
__global__ void reduce_columns(const T* src, ReduceShape s, Out* dst, Acc* partial, int splits,
                               int64_t per_split) {
  __shared__ unsigned char raw[sizeof(Acc) * kBlock];
  Acc* part = reinterpret_cast<Acc*>(raw);
  const int tx = int(threadIdx.x) % kColX, ty = int(threadIdx.x) / kColX;
  const int64_t col_blocks = (s.outer + kColX - 1) / kColX, jobs = col_blocks * splits;
  for (int64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    const int64_t cb = job / splits;
    const int split = int(job - cb * splits);
    const int64_t row = cb * kColX + tx;
    Acc a;
    if (row < s.outer) {
      int64_t base[1];
      walk_offsets(s.kept, row, base);
      const T* p = src + base[0];
      if (s.inner > 0) a.begin(p[0]);
      const int64_t lo = split * per_split, hi = min(s.inner, lo + per_split);
      int64_t i = lo + ty;
      if (s.reduced.ndim == 1) {
        const int64_t st = s.reduced.stride[0][0];
        for (; i + 3 * kColY < hi; i += 4 * kColY) {
          const T x0 = p[i * st], x1 = p[(i + kColY) * st], x2 = p[(i + 2 * kColY) * st],
                  x3 = p[(i + 3 * kColY) * st];
          a.add(x0, i);
          a.add(x1, i + kColY);
          a.add(x2, i + 2 * kColY);
          a.add(x3, i + 3 * kColY);
        }
        for (; i < hi; i += kColY) a.add(p[i * st], i);
      } else {
        for (; i < hi; i += kColY) a.add(p[reduced_offset(s.reduced, i)], i);
      }
    }
    part[threadIdx.x] = a;
    __syncthreads();
    if (ty == 0 && row < s.outer) {
      for (int y = 1; y < kColY; ++y) a.merge(part[y * kColX + tx]);
      if (partial)
        partial[int64_t(split) * s.outer + row] = a;
      else
        dst[row] = a.template result<Out>();
    }
    __syncthreads();  // part is reused by the next job
  }
}

// Merges each output's partials of reduce_columns, a thread per output.
template <typename Acc, typename Out>
__global__ void finish_columns(const Acc* partial, int64_t outer, int splits, Out* dst) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; row < outer; row += step) {
    Acc a;
    for (int c = 0; c < splits; ++c) a.merge(partial[int64_t(c) * outer + row]);
    dst[row] = a.template result<Out>();
  }
}

ReduceShape reduce_shape(const Layout& src, int64_t reduced_dims) {
  const int64_t nd = src.ndim(), kept_nd = nd - reduced_dims;
  Shape kept(src.shape().begin(), src.shape().begin() + kept_nd);
  Shape red(src.shape().begin() + kept_nd, src.shape().end());
  Strides ks(src.strides().begin(), src.strides().begin() + kept_nd);
  Strides rs(src.strides().begin() + kept_nd, src.strides().end());
  Layout kl(kept, ks, src.offset()), rl(red, rs, 0);
  ReduceShape s;
  s.kept = make_walk<1>("reduce", kept, {&kl});
  s.reduced = make_walk<1>("reduce", red, {&rl});
  s.outer = shape_numel(kept);
  s.inner = shape_numel(red);
  if (s.reduced.ndim == 0) {  // a single reduced element (or none): one dim of stride 1
    s.reduced.ndim = 1;
    s.reduced.shape[0] = 1;
    s.reduced.stride[0][0] = 1;
  }
  return s;
}

template <typename T, typename Acc, typename Out>
void launch(const CudaStorage& in, const Layout& src, int64_t reduced_dims, Out* dst) {
  const CudaDevice& dev = in.cuda();
  ReduceShape s = reduce_shape(src, reduced_dims);
  if (s.outer == 0) return;
  GpuScope scope(dev.gpu());
  cudaStream_t st = dev.stream();
  const bool rows = s.reduced.ndim == 1 && s.reduced.stride[0][0] == 1;
  // Exactly the blocks the GPU holds at once: a split row then runs in one wave, with no
  // tail of a second, part-empty one (the kernel's registers decide how many fit).
  static const int per_sm = [] {
    int n = 0;
    (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, reduce_rows<T, Acc, Out>, kBlock, 0);
    (void)cudaGetLastError();
    return std::max(n, 1);
  }();
  const int64_t blocks_wanted = int64_t(dev.sm_count()) * per_sm;
  constexpr int V = vec_width<T>();
  const bool dense = rows && aligned16(in.ptr<T>() + s.kept.offset[0]) && steps_by(s.kept, 0, V);
  auto& d = const_cast<CudaDevice&>(dev);
  if (!rows && s.kept.ndim > 0) {
    // Enough blocks for every SM to hold eight: split the reduced dim while the outputs'
    // blocks fall short, keeping each split at least kColY * 8 elements long.
    const int64_t col_blocks = (s.outer + kColX - 1) / kColX;
    const int64_t want = int64_t(dev.sm_count()) * 8;
    // argmax/argmin of int64 do not split: through the split they gave the first extreme
    // of the second-last split instead of the column's on the H100 (memcheck clean;
    // float64, of the same accumulator size, and every other dtype are right; cause not
    // yet found). amax/amin (ValueAcc) of int64 split and are right.
    const int64_t most = arg_of_int64<Acc>::value ? 1 : std::max<int64_t>(1, s.inner / (kColY * 8));
    int splits = int(std::clamp<int64_t>((want + col_blocks - 1) / col_blocks, 1, most));
    const int64_t per_split = std::max<int64_t>(1, (s.inner + splits - 1) / splits);
    splits = int(std::max<int64_t>(1, (s.inner + per_split - 1) / per_split));
    const unsigned grid = unsigned(std::min<int64_t>(col_blocks * splits, int64_t(1) << 30));
    if (splits <= 1) {
      reduce_columns<T, Acc, Out><<<grid, kBlock, 0, st>>>(in.ptr<T>(), s, dst, nullptr, 1,
                                                          s.inner);
    } else {
      const size_t scratch_bytes = size_t(s.outer) * splits * sizeof(Acc);
      void* scratch = d.allocate(scratch_bytes);
      auto* partial = static_cast<Acc*>(scratch);
      reduce_columns<T, Acc, Out><<<grid, kBlock, 0, st>>>(in.ptr<T>(), s, dst, partial, splits,
                                                          per_split);
      finish_columns<Acc, Out><<<grid_for(s.outer), kBlock, 0, st>>>(partial, s.outer, splits,
                                                                    dst);
      d.free(scratch, scratch_bytes);  // stream-ordered: after the pass that reads it
    }
  } else if (rows && s.inner <= 512 && s.outer > 1) {
    const int g = s.inner <= 2 ? 2 : s.inner <= 4 ? 4 : s.inner <= 8 ? 8 : s.inner <= 16 ? 16 : 32;
    const unsigned grid =
        unsigned(std::min<int64_t>((s.outer * g + kBlock - 1) / kBlock, int64_t(1) << 30));
    auto run = [&](auto group) {
      constexpr int G = decltype(group)::value;
      reduce_short_rows<T, Acc, Out, G><<<grid, kBlock, 0, st>>>(in.ptr<T>(), s, dst);
    };
    switch (g) {
      case 2: run(std::integral_constant<int, 2>{}); break;
      case 4: run(std::integral_constant<int, 4>{}); break;
      case 8: run(std::integral_constant<int, 8>{}); break;
      case 16: run(std::integral_constant<int, 16>{}); break;
      default: run(std::integral_constant<int, 32>{}); break;
    }
  } else if (s.outer < blocks_wanted / 2 && s.inner >= (int64_t(1) << 16)) {
    // Few long rows: each over several blocks, then one pass over the partials.
    int chunks = int(std::min<int64_t>((blocks_wanted + s.outer - 1) / s.outer, s.inner / 4096));
    int64_t per_chunk = (s.inner + chunks - 1) / chunks;
    per_chunk = (per_chunk + V - 1) / V * V;
    chunks = int((s.inner + per_chunk - 1) / per_chunk);
    const size_t scratch_bytes = size_t(s.outer) * chunks * sizeof(Acc);
    void* scratch = d.allocate(scratch_bytes);
    auto* partial = static_cast<Acc*>(scratch);
    const int64_t jobs = s.outer * chunks;
    reduce_rows<T, Acc, Out><<<unsigned(std::min<int64_t>(jobs, 1 << 30)), kBlock, 0, st>>>(
        in.ptr<T>(), s, dst, partial, chunks, per_chunk, dense);
    finish_rows<Acc, Out><<<unsigned(std::min<int64_t>(s.outer, 1 << 30)), kBlock, 0, st>>>(
        partial, s.outer, chunks, dst);
    d.free(scratch, scratch_bytes);  // stream-ordered: after the pass that reads it
  } else {
    reduce_rows<T, Acc, Out><<<unsigned(std::min<int64_t>(s.outer, 1 << 30)), kBlock, 0, st>>>(
        in.ptr<T>(), s, dst, nullptr, 1, s.inner, dense);
  }
  dev.check_launch("reduce");
}

}  // namespace

void CudaStorage::reduce(ReduceOp op, const Layout& src, int64_t reduced_dims,
                         BackendStorage& dst) const {
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using SumOut = std::conditional_t<is_float_v<T>, T, int64_t>;
    auto& out = as_cuda(dst);
    switch (op) {
      case ReduceOp::Sum: return launch<T, SumAcc<T>>(*this, src, reduced_dims, out.ptr<SumOut>());
      case ReduceOp::Max:
        return launch<T, ValueAcc<T, true>>(*this, src, reduced_dims, out.ptr<T>());
      case ReduceOp::Min:
        return launch<T, ValueAcc<T, false>>(*this, src, reduced_dims, out.ptr<T>());
      case ReduceOp::ArgMax:
        return launch<T, ArgAcc<T, true>>(*this, src, reduced_dims, out.ptr<int64_t>());
      case ReduceOp::ArgMin:
        return launch<T, ArgAcc<T, false>>(*this, src, reduced_dims, out.ptr<int64_t>());
    }
  });
}

BackendStorage::IndexBounds CudaStorage::index_bounds(const Layout& src) const {
  if (dtype_ == DType::Bool) return nullptr;
  return dispatch(dtype_, [&](auto tag) -> IndexBounds {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      // the pass stores its one result straight into the slot's mapped host memory
      std::shared_ptr<ReadbackSlot> slot = readback_slot(cuda());
      launch<T, BoundsAcc<T>>(*this, src, src.ndim(), static_cast<Bounds*>(slot->device));
      device_->note_host_read(int64_t(sizeof(Bounds)));  // as a read-back, in queue_stats
      check(cudaEventRecord(slot->done, stream()), "cudaEventRecord", &cuda());
      return [slot, device = device_] {
        wait_event(slot->done, "checking indices", device.get());
        const auto* b = static_cast<const Bounds*>(slot->host);
        return std::pair<int64_t, int64_t>(b->lo, b->hi);
      };
    } else {
      return nullptr;
    }
  });
}

bool CudaStorage::reduce_var(const Layout& src, int64_t reduced_dims, double correction,
                             bool root, BackendStorage& dst) const {
  if (dtype_ != DType::F32 && dtype_ != DType::F16 && dtype_ != DType::BF16) return false;
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T> && !std::is_same_v<T, double>) {
      const int64_t outer = shape_numel(Shape(src.shape().begin(), src.shape().end() - reduced_dims));
      if (outer == 0) return;
      auto& d = cuda();
      const size_t bytes = size_t(outer) * sizeof(Moments);
      auto* sums = static_cast<Moments*>(d.allocate(bytes));
      launch<T, MomentsAcc<T>>(*this, src, reduced_dims, sums);
      GpuScope scope(d.gpu());
      finish_var<T><<<grid_for(outer), kBlock, 0, stream()>>>(sums, outer, correction, root,
                                                                as_cuda(dst).ptr<T>());
      d.check_launch("var");
      d.free(sums, bytes);  // stream-ordered: after the pass that reads it
    }
  });
  return true;
}

bool CudaStorage::reduce_prod(const Layout& src, int64_t reduced_dims, BackendStorage& dst) const {
  if (dtype_ != DType::F32 && dtype_ != DType::F64 && dtype_ != DType::I64) return false;
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int64_t>)
      launch<T, ProdAcc<T>>(*this, src, reduced_dims, as_cuda(dst).ptr<T>());
  });
  return true;
}

bool CudaStorage::reduce_logsumexp(const Layout& src, int64_t reduced_dims,
                                   BackendStorage& dst) const {
  if (dtype_ != DType::F32) return false;
  launch<float, LseAcc>(*this, src, reduced_dims, as_cuda(dst).ptr<float>());
  return true;
}

bool CudaStorage::reduce_sum_squares(const Layout& src, int64_t reduced_dims,
                                     BackendStorage& dst) const {
  if (dtype_ != DType::F32 && dtype_ != DType::F16 && dtype_ != DType::BF16 &&
      dtype_ != DType::F64)
    return false;
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>)
      launch<T, SumAcc<T, true>>(*this, src, reduced_dims, as_cuda(dst).ptr<T>());
  });
  return true;
}

}  // namespace ember::cuda
