// softmax and log_softmax over the last dim, one block per row, computed in float
// (double for f64). A row of up to kItems * 1024 values is read once into registers and
// written once; longer rows take three passes over memory.
#include "common.cuh"

namespace ember::cuda {

namespace {

constexpr int kItems = 8;

__device__ __forceinline__ float m_exp(float x) {
  return expf(x);
}
__device__ __forceinline__ double m_exp(double x) {
  return exp(x);
}
__device__ __forceinline__ float m_log(float x) {
  return logf(x);
}
__device__ __forceinline__ double m_log(double x) {
  return log(x);
}

// max or sum over the block, seen by every thread.
template <bool kMax, typename C>
__device__ C block_all(C v) {
  __shared__ C part[32];
  for (int d = 16; d > 0; d >>= 1) {
    C o = __shfl_down_sync(0xffffffffu, v, d);
    v = kMax ? (o > v ? o : v) : v + o;  // NaN never wins a max, as on the CPU
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // part[] may still be read from the previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x >> 5) ? part[lane] : (kMax ? C(-INFINITY) : C(0));
  for (int d = 16; d > 0; d >>= 1) {
    C o = __shfl_xor_sync(0xffffffffu, v, d);
    v = kMax ? (o > v ? o : v) : v + o;
  }
  return v;
}

struct Rows {
  Walk<1> outer;  // the row starts
  int64_t n, stride, count;
  int64_t row_stride;  // between row starts when outer.ndim is 1 (0 when it is 0)
};

template <typename C>
__device__ __forceinline__ C shift(C mx) {
  return mx == C(-INFINITY) ? C(0) : mx;  // all -inf: keep exp() finite
}

template <typename T, bool kCached>
__global__ void softmax_rows(const T* src, Rows r, bool log, T* dst) {
  using C = compute_t<T>;
  for (int64_t row = blockIdx.x; row < r.count; row += gridDim.x) {
    int64_t base[1];
    walk_offsets(r.outer, row, base);
    const T* x = src + base[0];
    T* y = dst + row * r.n;
    C v[kCached ? kItems : 1];
    C mx = C(-INFINITY);
    if constexpr (kCached) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
        v[k] = i < r.n ? to_c(x[i * r.stride]) : C(-INFINITY);
        mx = v[k] > mx ? v[k] : mx;
      }
    } else {
      for (int64_t i = threadIdx.x; i < r.n; i += blockDim.x) {
        C e = to_c(x[i * r.stride]);
        mx = e > mx ? e : mx;
      }
    }
    mx = shift(block_all<true>(mx));
    C sum = 0;
    if constexpr (kCached) {
#pragma unroll
      for (int k = 0; k < kItems; ++k)
        if (threadIdx.x + int64_t(k) * blockDim.x < r.n) sum += m_exp(v[k] - mx);
    } else {
      for (int64_t i = threadIdx.x; i < r.n; i += blockDim.x)
        sum += m_exp(to_c(x[i * r.stride]) - mx);
    }
    sum = block_all<false>(sum);
    // (x - max) - log(sum), not x - (max + log(sum)): that would round away small terms
    const C log_sum = m_log(sum), inv = C(1) / sum;
    auto out = [&](C e) { return from_c<T>(log ? (e - mx) - log_sum : m_exp(e - mx) * inv); };
    if constexpr (kCached) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const int64_t i = threadIdx.x + int64_t(k) * blockDim.x;
        if (i < r.n) y[i] = out(v[k]);
      }
    } else {
      for (int64_t i = threadIdx.x; i < r.n; i += blockDim.x) y[i] = out(to_c(x[i * r.stride]));
    }
  }
}

// max or sum over a warp, seen by every lane.
template <bool kMax, typename C>
__device__ C warp_all(C v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    C o = __shfl_xor_sync(0xffffffffu, v, d);
    v = kMax ? (o > v ? o : v) : v + o;  // NaN never wins a max, as block_all
  }
  return v;
}

// One dense row held in registers: kVecs 16-byte vectors per thread, the thread's at
// first + k * step (nv vectors in the row). The max, one exp per value (kept for the
// output: exp, not memory, bounds these kernels), the sum, the outputs. kWarp: the row is
// one warp's (shuffles alone), else the block's. kExact: every vector lies in the row, so
// no load is conditional and all are issued before the first is used.
template <typename T, int kVecs, bool log, bool kWarp, bool kExact>
__device__ __forceinline__ void softmax_vectors(const Vec<T, vec_width<T>()>* x,
                                                Vec<T, vec_width<T>()>* y, int nv, int first,
                                                int step) {
  using C = compute_t<T>;
  constexpr int V = vec_width<T>();
  auto all = [](auto v, auto is_max) {
    constexpr bool kMax = decltype(is_max)::value;
    if constexpr (kWarp)
      return warp_all<kMax>(v);
    else
      return block_all<kMax>(v);
  };
  C v[kVecs][V];
  C mx = C(-INFINITY);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int j = first + k * step;
    const bool in_row = kExact || j < nv;
    Vec<T, V> in;
    if (in_row) in = x[j];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      v[k][e] = in_row ? to_c(in.v[e]) : C(-INFINITY);
      mx = v[k][e] > mx ? v[k][e] : mx;
    }
  }
  mx = shift(all(mx, std::true_type{}));
  C sum = 0;
#pragma unroll
  for (int k = 0; k < kVecs; ++k)
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const C ex = m_exp(v[k][e] - mx);  // exp(-inf) adds 0
      sum += ex;
      if (!log) v[k][e] = ex;
    }
  sum = all(sum, std::false_type{});
  const C log_sum = log ? m_log(sum) : C(0), inv = C(1) / sum;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int j = first + k * step;
    if (!kExact && j >= nv) continue;
    Vec<T, V> out;
#pragma unroll
    for (int e = 0; e < V; ++e)
      out.v[e] = from_c<T>(log ? (v[k][e] - mx) - log_sum : v[k][e] * inv);
    y[j] = out;
  }
}

// Dense rows (stride 1, every row 16-byte aligned, n a whole number of vectors), a block
// per row, each thread keeping kItems values of its row in registers. kExact: the rows
// sit at one stride and the block holds exactly one row (measured on the H200: 127 us for
// 8192 x 8192 f32 against 186 us with bounds checks and the general walk).
template <typename T, int kItems, bool log, bool kExact>
__global__ void softmax_dense(const T* src, Rows r, T* dst) {
  constexpr int V = vec_width<T>();
  const int nv = int(r.n / V);  // at most kItems * 1024 / V
  for (int64_t row = blockIdx.x; row < r.count; row += gridDim.x) {
    int64_t base[1] = {r.outer.offset[0] + row * r.row_stride};
    if constexpr (!kExact) walk_offsets(r.outer, row, base);
    softmax_vectors<T, kItems / V, log, false, kExact>(
        reinterpret_cast<const Vec<T, V>*>(src + base[0]),
        reinterpret_cast<Vec<T, V>*>(dst + row * r.n), nv, int(threadIdx.x), int(blockDim.x));
  }
}

// Dense short rows (up to kVecs 16-byte vectors per lane): a warp per row, several rows
// per block, the row's max and sum by shuffles alone. A block per row would leave most
// of its threads idle on rows of 128 and pay two block-wide barriers per row.
constexpr int kWarpRows = kBlock / 32;

template <typename T, int kVecs, bool log>
__global__ void softmax_warp(const T* src, Rows r, T* dst) {
  constexpr int V = vec_width<T>();
  const int nv = int(r.n / V);
  const int64_t step = int64_t(gridDim.x) * kWarpRows;
  for (int64_t row = int64_t(blockIdx.x) * kWarpRows + (threadIdx.x >> 5); row < r.count;
       row += step) {
    int64_t base[1];
    walk_offsets(r.outer, row, base);
    softmax_vectors<T, kVecs, log, true, false>(
        reinterpret_cast<const Vec<T, V>*>(src + base[0]),
        reinterpret_cast<Vec<T, V>*>(dst + row * r.n), nv, int(threadIdx.x) & 31, 32);
  }
}

template <typename T, int kVecs>
void launch_warp(const T* src, const Rows& r, T* dst, bool log, cudaStream_t stream) {
  const unsigned blocks =
      unsigned(std::min<int64_t>((r.count + kWarpRows - 1) / kWarpRows, int64_t(1) << 30));
  if (log)
    softmax_warp<T, kVecs, true><<<blocks, kBlock, 0, stream>>>(src, r, dst);
  else
    softmax_warp<T, kVecs, false><<<blocks, kBlock, 0, stream>>>(src, r, dst);
}

template <typename T, int kItems, bool log>
void launch_dense(const T* src, const Rows& r, T* dst, unsigned blocks, int threads,
                  cudaStream_t stream) {
  const bool exact = r.outer.ndim <= 1 && int64_t(threads) * kItems == r.n;
  auto kernel = exact ? softmax_dense<T, kItems, log, true> : softmax_dense<T, kItems, log, false>;
  kernel<<<blocks, threads, 0, stream>>>(src, r, dst);
}

}  // namespace

void CudaStorage::softmax(const Layout& src, bool log, BackendStorage& dst) const {
  const int64_t nd = src.ndim();
  const int64_t n = nd == 0 ? 1 : src.dim(nd - 1);
  if (n == 0 || src.numel() == 0) return;
  Rows r;
  r.n = n;
  r.stride = nd == 0 ? 1 : src.strides().back();
  r.count = src.numel() / n;
  Shape outer_shape(src.shape().begin(), src.shape().end() - (nd == 0 ? 0 : 1));
  Strides outer_strides(src.strides().begin(), src.strides().end() - (nd == 0 ? 0 : 1));
  Layout outer(outer_shape, outer_strides, src.offset());
  r.outer = make_walk<1>("softmax", outer_shape, {&outer});
  r.row_stride = r.outer.ndim == 1 ? r.outer.stride[0][0] : 0;
  const unsigned blocks = unsigned(std::min<int64_t>(r.count, 1 << 30));
  GpuScope scope(cuda().gpu());
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) {
      T* out = as_cuda(dst).ptr<T>();
      constexpr int V = vec_width<T>(), kDenseItems = 32;
      const bool dense = r.stride == 1 && n % V == 0 && aligned16(ptr<T>() + src.offset()) &&
                         aligned16(out) && n <= int64_t(kDenseItems) * 1024 &&
                         steps_by(r.outer, 0, V);
      if (dense && n <= int64_t(32) * V * 8) {  // short rows: a warp each
        const int64_t vecs = (n / V + 31) / 32;
        if (vecs <= 1)
          launch_warp<T, 1>(ptr<T>(), r, out, log, stream());
        else if (vecs <= 2)
          launch_warp<T, 2>(ptr<T>(), r, out, log, stream());
        else if (vecs <= 4)
          launch_warp<T, 4>(ptr<T>(), r, out, log, stream());
        else
          launch_warp<T, 8>(ptr<T>(), r, out, log, stream());
        return;
      }
      if (dense) {  // the fewest threads that hold the row: more rows in flight per SM
        int threads = 32;
        while (int64_t(threads) * kDenseItems < n) threads *= 2;
        if (log)
          launch_dense<T, kDenseItems, true>(ptr<T>(), r, out, blocks, threads, stream());
        else
          launch_dense<T, kDenseItems, false>(ptr<T>(), r, out, blocks, threads, stream());
        return;
      }
      const int threads = n >= 4096 ? 1024 : n >= 1024 ? 512 : n >= 256 ? 256 : n >= 64 ? 64 : 32;
      if (n <= int64_t(kItems) * threads)
        softmax_rows<T, true><<<blocks, threads, 0, stream()>>>(ptr<T>(), r, log, out);
      else
        softmax_rows<T, false><<<blocks, threads, 0, stream()>>>(ptr<T>(), r, log, out);
    } else {
      throw Error(ErrorKind::UnsupportedDType, "softmax of an integer dtype reached CUDA");
    }
  });
  cuda().check_launch("softmax");
}

}  // namespace ember::cuda
