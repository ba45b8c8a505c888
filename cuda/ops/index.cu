// index_select and gather: the data moves as bits (one kernel per element width and ids
// dtype: int64, uint32 or uint8). index_select of rows copies each row with a block and
// vector loads, along the last dim it needs no division per element; other layouts and
// gather take one thread per output element (32-bit index math where the walk allows),
// except a gather along the last dim with long rows of ids, which reads each row of src
// once into shared memory. gather_points reads t[i, j] through several arrays at once.
#include <climits>

#include "common.cuh"
#include "core/clamped_id.h"
#include "rows.cuh"

namespace ember::cuda {

namespace {

// Core queues a read before its ids' range check has come back (index_reads_clamp) and
// raises once it has: until then ids take core/clamped_id.h's rule (ids of every index
// dtype fit int64).
template <typename I>
__device__ __forceinline__ int64_t safe_id(I raw, int64_t size) {
  return clamped_id(int64_t(raw), size);
}

struct SelectParams {
  Walk<1> src;  // dst's shape, src's strides, 0 in dim
  int64_t ids_offset, ids_stride, dim_stride, nsel, inner, size;
};

template <typename B, typename I>
__global__ void index_select_kernel(const B* src, const I* ids, B* dst, int64_t n, SelectParams p) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1];
    walk_offsets(p.src, i, off);
    const int64_t j = (i / p.inner) % p.nsel;
    dst[i] = src[off[0] + safe_id(ids[p.ids_offset + j * p.ids_stride], p.size) * p.dim_stride];
  }
}

template <typename B, typename I>
__global__ void gather_kernel(const B* src, const I* ids, B* dst, int64_t n, Walk<2> w,
                              int64_t dim_stride, int64_t size) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    walk_offsets(w, i, off);
    dst[i] = src[off[0] + safe_id(ids[off[1]], size) * dim_stride];
  }
}

// gather whose ids run contiguous along their last dim: a job is kBlock * kGatherUnroll
// neighbouring elements of one row of the ids, the row's starts found by one walk per
// job, not per element; each thread keeps kGatherUnroll id-then-data load chains in
// flight (one chain per thread leaves a gather bound by latency). src's step along the
// last dim is 0 when that is the gathered dim (without_dim).
constexpr int kGatherUnroll = 4;

template <typename B, typename I>
__global__ void gather_rows(const B* __restrict__ src, const I* __restrict__ ids,
                            B* __restrict__ dst, Walk<2> rows_walk, int64_t rows, int64_t len,
                            int64_t last_stride, int64_t dim_stride, int64_t size) {
  constexpr int64_t kJob = int64_t(kBlock) * kGatherUnroll;
  const int64_t per_row = (len + kJob - 1) / kJob, jobs = rows * per_row;
  for (int64_t job = blockIdx.x; job < jobs; job += gridDim.x) {
    const int64_t r = job / per_row, k0 = (job - r * per_row) * kJob + threadIdx.x;
    int64_t off[2];
    walk_offsets(rows_walk, r, off);
    const B* row = src + off[0];
    const I* id_row = ids + off[1];
    I id[kGatherUnroll];
    B v[kGatherUnroll];
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const int64_t k = k0 + u * kBlock;
      if (k < len) id[u] = id_row[k];
    }
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const int64_t k = k0 + u * kBlock;
      if (k < len) v[u] = row[k * last_stride + safe_id(id[u], size) * dim_stride];
    }
#pragma unroll
    for (int u = 0; u < kGatherUnroll; ++u) {
      const int64_t k = k0 + u * kBlock;
      if (k < len) dst[r * len + k] = v[u];
    }
  }
}

// gather along the last dim with whole rows of ids: a block copies src's row into shared
// memory with coalesced loads, then serves the row's ids from there. Each id read from
// global memory would fetch a 32-byte sector for a few bytes (L1 and L2 replaying the
// row's sectors to every block that reads it); from shared memory a warp's 32 random
// reads cost a few bank conflicts. Worth it while a row's ids are at least an eighth of
// its length (kStagedPerRow), within kStagedBytes of shared memory (no opt-in needed).
constexpr int64_t kStagedBytes = 48 * 1024;
constexpr int64_t kStagedPerRow = 8;

template <typename B, typename I>
__global__ void gather_staged(const B* __restrict__ src, const I* __restrict__ ids,
                              B* __restrict__ dst, Walk<2> rows_walk, int64_t rows, int64_t len,
                              int64_t size) {
  extern __shared__ __align__(16) unsigned char staged_bytes[];
  B* row_s = reinterpret_cast<B*>(staged_bytes);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t off[2];
    walk_offsets(rows_walk, r, off);
    const B* row = src + off[0];
    const I* id_row = ids + off[1];
    __syncthreads();  // the previous row's reads are done
#pragma unroll 4
    for (int64_t k = threadIdx.x; k < size; k += blockDim.x) row_s[k] = row[k];
    __syncthreads();
    B* out = dst + r * len;
#pragma unroll 4
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) out[k] = row_s[safe_id(id_row[k], size)];
  }
}

// index_select as rows: src viewed as (outer, dim, inner) with the inner block contiguous
// and the outer dims one stride. Each output row (o, j) is src's row (o, ids[j]): a block
// copies it with 16-byte vectors where it can (kRowsVec), else element by element.
struct RowsParams {
  int64_t outer, nsel, inner, outer_stride, dim_stride, ids_offset, ids_stride, size;
};

// Each thread keeps kRowsUnroll loads in flight before it stores them.
constexpr int kRowsUnroll = 4;

template <typename B, typename I, bool kVec>
__global__ void select_rows(const B* __restrict__ src, const I* __restrict__ ids,
                            B* __restrict__ dst, RowsParams p) {
  constexpr int V = kVec ? vec_width<B>() : 1;
  using W = Vec<B, V>;
  const int64_t rows = p.outer * p.nsel, width = p.inner / V, t = blockDim.x;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t o = r / p.nsel, j = r - o * p.nsel;
    const int64_t id = safe_id(ids[p.ids_offset + j * p.ids_stride], p.size);
    const W* __restrict__ from =
        reinterpret_cast<const W*>(src + o * p.outer_stride + id * p.dim_stride);
    W* __restrict__ to = reinterpret_cast<W*>(dst + r * p.inner);
    int64_t k = threadIdx.x;
    for (; k + (kRowsUnroll - 1) * t < width; k += kRowsUnroll * t) {
      W x[kRowsUnroll];
#pragma unroll
      for (int u = 0; u < kRowsUnroll; ++u) x[u] = from[k + u * t];
#pragma unroll
      for (int u = 0; u < kRowsUnroll; ++u) to[k + u * t] = x[u];
    }
    for (; k < width; k += t) to[k] = from[k];
  }
}

// index_select along the last dim (inner == 1): output (o, j) = src[o, ids[j]], ids along
// grid x, rows along grid y, no division per element. A thread reads its id once and
// then serves kLastRows rows with independent loads in flight: one load per thread at a
// time leaves a random gather bound by latency, not bandwidth.
constexpr int kLastRows = 4;

template <typename B, typename I>
__global__ void select_last(const B* src, const I* ids, B* dst, RowsParams p) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= p.nsel) return;
  const int64_t at = safe_id(ids[p.ids_offset + j * p.ids_stride], p.size) * p.dim_stride;
  const int64_t step = int64_t(gridDim.y) * kLastRows;
  for (int64_t o0 = int64_t(blockIdx.y) * kLastRows; o0 < p.outer; o0 += step) {
    B v[kLastRows];
#pragma unroll
    for (int r = 0; r < kLastRows; ++r)
      if (o0 + r < p.outer) v[r] = src[(o0 + r) * p.outer_stride + at];
#pragma unroll
    for (int r = 0; r < kLastRows; ++r)
      if (o0 + r < p.outer) dst[(o0 + r) * p.nsel + j] = v[r];
  }
}

// gather_points (t[i, j]): dst[e] = src[at(e) + sum over k of id_k(e) * stride_k], view 0
// of the walk src over dst's shape and views 1..K the K arrays' ids. A thread takes
// kPointsUnroll elements a block apart, their ids loaded before their data (a chain per
// element in flight), and keeps its arrays' smallest and largest ids; a warp merges them
// and its first lane folds them into bounds (lo, hi per array) atomically. kOffsets: B is
// uint64_t and dst takes the offsets (a write's linear ids), src unread.
constexpr int kPointsUnroll = 4;

template <int K>
struct PointsParams {
  Walk<K + 1> w;
  const int64_t* ids[K];
  int64_t stride[K], size[K];
};

__global__ void init_bounds(long long* bounds, int k) {
  if (threadIdx.x < 2 * k)
    bounds[threadIdx.x] = threadIdx.x % 2 == 0 ? LLONG_MAX : LLONG_MIN;
}

template <typename B, int K, bool kOffsets>
__global__ void gather_points_kernel(const B* __restrict__ src, B* __restrict__ dst, int64_t n,
                                     PointsParams<K> p, long long* bounds) {
  long long lo[K], hi[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    lo[k] = LLONG_MAX;
    hi[k] = LLONG_MIN;
  }
  constexpr int64_t kTile = int64_t(kBlock) * kPointsUnroll;
  for (int64_t e0 = int64_t(blockIdx.x) * kTile + threadIdx.x; e0 < n;
       e0 += int64_t(gridDim.x) * kTile) {
    int64_t at[kPointsUnroll];
#pragma unroll
    for (int u = 0; u < kPointsUnroll; ++u) {
      const int64_t e = e0 + u * kBlock;
      if (e >= n) break;
      int64_t off[K + 1];
      walk_offsets(p.w, e, off);
      at[u] = off[0];
#pragma unroll
      for (int k = 0; k < K; ++k) {
        const int64_t id = p.ids[k][off[k + 1]];
        lo[k] = min(lo[k], (long long)id);
        hi[k] = max(hi[k], (long long)id);
        at[u] += safe_id(id, p.size[k]) * p.stride[k];
      }
    }
    B v[kPointsUnroll];
#pragma unroll
    for (int u = 0; u < kPointsUnroll; ++u)
      if (e0 + u * kBlock < n) v[u] = kOffsets ? B(at[u]) : src[at[u]];
#pragma unroll
    for (int u = 0; u < kPointsUnroll; ++u)
      if (e0 + u * kBlock < n) dst[e0 + u * kBlock] = v[u];
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    for (int d = 16; d > 0; d /= 2) {
      lo[k] = min(lo[k], shfl_down(lo[k], d));
      hi[k] = max(hi[k], shfl_down(hi[k], d));
    }
    if (threadIdx.x % 32 == 0) {
      atomicMin(bounds + 2 * k, lo[k]);
      atomicMax(bounds + 2 * k + 1, hi[k]);
    }
  }
}

// Whether dims [lo, hi) of `l` merge into one run of stride `*stride` (size-1 dims skip).
bool merges(const Layout& l, int64_t lo, int64_t hi, int64_t* stride) {
  bool first = true;
  int64_t expect = 0;  // strides may be negative (a reversed view)
  *stride = 0;
  for (int64_t d = hi - 1; d >= lo; --d) {
    if (l.dim(d) == 1) continue;
    const int64_t st = l.strides()[size_t(d)];
    if (!first && st != expect) return false;
    if (first) *stride = st;
    first = false;
    expect = st * l.dim(d);
  }
  return true;
}

// Calls f(B{}, I{}): the data's bit width and the ids' type.
template <typename F>
void dispatch_index(DType data, DType ids, F&& f) {
  dispatch_width(dtype_size(data), [&](auto b) {
    switch (ids) {
      case DType::I64: return f(b, int64_t{});
      case DType::U32: return f(b, uint32_t{});
      case DType::U8: return f(b, uint8_t{});
      default: throw_invalid("index", "indices must be an integer tensor");
    }
  });
}

}  // namespace

void CudaStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                               const Layout& ids_layout, BackendStorage& dst) const {
  Shape out = src.shape();
  out[size_t(dim)] = ids_layout.numel();
  const int64_t n = shape_numel(out);
  if (n == 0) return;
  SelectParams p;
  Layout sl = without_dim(src, out, dim);
  p.src = make_walk<1>("index_select", out, {&sl});
  p.ids_offset = ids_layout.offset();
  p.ids_stride = ids_layout.strides()[0];
  p.dim_stride = src.strides()[size_t(dim)];
  p.nsel = ids_layout.numel();
  p.size = src.dim(dim);
  p.inner = 1;
  for (size_t d = size_t(dim) + 1; d < out.size(); ++d) p.inner *= out[d];
  GpuScope scope(cuda().gpu());
  RowsParams rp{};
  int64_t inner_stride = 0;
  rp.outer = 1;
  for (int64_t d = 0; d < dim; ++d) rp.outer *= out[size_t(d)];
  rp.nsel = p.nsel;
  rp.inner = p.inner;
  rp.dim_stride = p.dim_stride;
  rp.ids_offset = p.ids_offset;
  rp.ids_stride = p.ids_stride;
  rp.size = p.size;
  const bool rows = merges(src, 0, dim, &rp.outer_stride) &&
                    merges(src, dim + 1, src.ndim(), &inner_stride) &&
                    (p.inner == 1 || inner_stride == 1);
  if (rows) {
    dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
      using B = decltype(b);
      using I = decltype(i);
      const B* base = ptr<B>() + src.offset();
      B* out_p = as_cuda(dst).ptr<B>();
      if (p.inner == 1) {
        const dim3 grid(unsigned((p.nsel + kBlock - 1) / kBlock),
                        unsigned(std::min<int64_t>((rp.outer + kLastRows - 1) / kLastRows, 65535)));
        select_last<B, I><<<grid, kBlock, 0, stream()>>>(base, as_cuda(ids).ptr<I>(), out_p, rp);
        return;
      }
      constexpr int64_t V = vec_width<B>();
      const bool vec = aligned16(base) && aligned16(out_p) && p.inner % V == 0 &&
                       rp.outer_stride % V == 0 && rp.dim_stride % V == 0;
      const int64_t per_row = vec ? p.inner / V : p.inner;
      const int threads = int(std::min<int64_t>(kBlock, std::max<int64_t>(32, per_row)));
      const unsigned blocks = unsigned(std::min<int64_t>(rp.outer * rp.nsel, int64_t(1) << 30));
      if (vec)
        select_rows<B, I, true><<<blocks, threads, 0, stream()>>>(base, as_cuda(ids).ptr<I>(),
                                                                  out_p, rp);
      else
        select_rows<B, I, false><<<blocks, threads, 0, stream()>>>(base, as_cuda(ids).ptr<I>(),
                                                                   out_p, rp);
    });
    cuda().check_launch("index_select");
    return;
  }
  dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
    using B = decltype(b);
    using I = decltype(i);
    index_select_kernel<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(),
                                                              as_cuda(dst).ptr<B>(), n, p);
  });
  cuda().check_launch("index_select");
}

void CudaStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                         const Layout& ids_layout, BackendStorage& dst) const {
  const int64_t n = ids_layout.numel();
  if (n == 0) return;
  Layout sl = without_dim(src, ids_layout.shape(), dim);
  const int64_t dim_stride = src.strides()[size_t(dim)];
  GpuScope scope(cuda().gpu());
  const int64_t nd = ids_layout.ndim(), len = ids_layout.dim(nd - 1);
  if (ids_layout.strides()[size_t(nd - 1)] == 1 && len >= 128) {
    // rows of the ids: the walk covers the dims before the last
    const Shape outer(ids_layout.shape().begin(), ids_layout.shape().end() - 1);
    const Layout so(outer, Strides(sl.strides().begin(), sl.strides().end() - 1), sl.offset());
    const Layout io(outer, Strides(ids_layout.strides().begin(), ids_layout.strides().end() - 1),
                    ids_layout.offset());
    const Walk<2> rw = make_walk<2>("gather", outer, {&so, &io});
    const int64_t rows = n / len, last_stride = sl.strides()[size_t(nd - 1)];
    const int64_t size = src.dim(dim), bytes = size * int64_t(dtype_size(dtype_));
    if (dim == nd - 1 && dim_stride == 1 && bytes <= kStagedBytes &&
        len * kStagedPerRow >= size) {
      dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
        using B = decltype(b);
        using I = decltype(i);
        gather_staged<B, I><<<unsigned(std::min<int64_t>(rows, int64_t(1) << 30)), kBlock,
                              size_t(bytes), stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(),
                                                         as_cuda(dst).ptr<B>(), rw, rows, len,
                                                         size);
      });
      cuda().check_launch("gather");
      return;
    }
    const int64_t jobs = rows * ((len + kBlock * kGatherUnroll - 1) / (kBlock * kGatherUnroll));
    dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
      using B = decltype(b);
      using I = decltype(i);
      gather_rows<B, I><<<unsigned(std::min<int64_t>(jobs, int64_t(1) << 30)), kBlock, 0,
                          stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(), as_cuda(dst).ptr<B>(), rw,
                                      rows, len, last_stride, dim_stride, src.dim(dim));
    });
    cuda().check_launch("gather");
    return;
  }
  Walk<2> w = make_walk<2>("gather", ids_layout.shape(), {&sl, &ids_layout});
  dispatch_index(dtype_, ids.dtype(), [&](auto b, auto i) {
    using B = decltype(b);
    using I = decltype(i);
    gather_kernel<<<grid_for(n), kBlock, 0, stream()>>>(ptr<B>(), as_cuda(ids).ptr<I>(),
                                                        as_cuda(dst).ptr<B>(), n, w, dim_stride,
                                                        src.dim(dim));
  });
  cuda().check_launch("gather");
}

namespace {

template <int K>
void launch_points(const CudaStorage& self, const Layout& src,
                   const std::vector<BackendStorage::PointIds>& pts, BackendStorage& dst,
                   long long* bounds, bool offsets) {
  const Layout out(src.shape());
  std::array<const Layout*, K + 1> views;
  views[0] = &src;
  PointsParams<K> p;
  for (int k = 0; k < K; ++k) {
    views[size_t(k) + 1] = &pts[size_t(k)].layout;
    p.ids[k] = as_cuda(*pts[size_t(k)].ids).ptr<int64_t>();
    p.stride[k] = pts[size_t(k)].stride;
    p.size[k] = pts[size_t(k)].size;
  }
  p.w = make_walk<K + 1>("index", out.shape(), views);
  const int64_t n = out.numel();
  // One wave of blocks, each looping over its tiles: a block per tile gave a warp's four
  // atomics on the same four words to every 1024 elements, and at 2^25 elements those
  // contended atomics took longer than the gather itself.
  const auto launch = [&](auto kernel, const auto* from, auto* to) {
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor", &self.cuda());
    const int64_t wave = int64_t(self.cuda().sm_count()) * std::max(per_sm, 1);
    const unsigned grid = unsigned(std::min<int64_t>(grid_for(n, kPointsUnroll), wave));
    kernel<<<grid, kBlock, 0, self.stream()>>>(from, to, n, p, bounds);
  };
  if (offsets) {
    launch(gather_points_kernel<uint64_t, K, true>, static_cast<const uint64_t*>(nullptr),
           as_cuda(dst).ptr<uint64_t>());
    return;
  }
  dispatch_width(dtype_size(self.dtype()), [&](auto b) {
    using B = decltype(b);
    launch(gather_points_kernel<B, K, false>, self.ptr<B>(), as_cuda(dst).ptr<B>());
  });
}

}  // namespace

bool CudaStorage::gather_points(const Layout& src, const std::vector<PointIds>& ids,
                                BackendStorage& dst, int64_t* lo, int64_t* hi,
                                bool offsets) const {
  const int k = int(ids.size());
  if (k < 1 || k > int(kMaxPointIds)) return false;
  auto& d = cuda();
  GpuScope scope(d.gpu());
  Scratch bounds(d, 2 * kMaxPointIds * sizeof(long long));
  init_bounds<<<1, 32, 0, stream()>>>(bounds.as<long long>(), k);
  switch (k) {
    case 1: launch_points<1>(*this, src, ids, dst, bounds.as<long long>(), offsets); break;
    case 2: launch_points<2>(*this, src, ids, dst, bounds.as<long long>(), offsets); break;
    case 3: launch_points<3>(*this, src, ids, dst, bounds.as<long long>(), offsets); break;
    default: launch_points<4>(*this, src, ids, dst, bounds.as<long long>(), offsets); break;
  }
  d.check_launch("index");
  // the bounds come back through a slot of mapped host memory, as index_bounds' do
  std::shared_ptr<ReadbackSlot> slot = readback_slot(d);
  const size_t bytes = 2 * size_t(k) * sizeof(long long);
  check(cudaMemcpyAsync(slot->host, bounds.as<long long>(), bytes, cudaMemcpyDeviceToHost,
                        stream()),
        "cudaMemcpyAsync", &d);
  device_->note_host_read(int64_t(bytes));
  check(cudaEventRecord(slot->done, stream()), "cudaEventRecord", &d);
  wait_event(slot->done, "checking indices", device_.get());
  const auto* b = static_cast<const long long*>(slot->host);
  for (int j = 0; j < k; ++j) {
    lo[j] = b[2 * j];
    hi[j] = b[2 * j + 1];
  }
  return true;
}

}  // namespace ember::cuda
