// scatter and scatter_add.
// - Adds take one thread per element and add atomically where the dtype has atomic adds:
//   integer sums are exact in any order; float sums depend on the order the adds land in,
//   as PyTorch's CUDA scatter_add does, unless ember.use_deterministic_algorithms(True),
//   which takes the row kernel below.
// - Sets are deterministic (the last repeated id wins): each destination position first
//   finds its last writer (an atomic max of the id's position in a scratch table), then
//   every element writes at once; where the table would be much larger than the ids, and
//   for deterministic adds, one thread per row of the other dims walks its ids in order
//   (rows write disjoint elements). A set whose ids are the same for every row
//   (t[ids] = rows) finds each slice's last writer, then writes every element at once.
// - Along the last dim, rows with many ids each take a block that scatters into shared
//   memory and writes the row back coalesced (sets, and adds in any order).
#include <optional>

#include "common.cuh"
#include "rows.cuh"

namespace ember::cuda {

namespace {

enum class Combine { Set, Add, Or };  // Or: bool's add

struct ScatterParams {
  Walk<3> rows;  // dst, ids, src over the index's shape with 1 in the scatter dim
  int64_t len, dst_stride, ids_stride, src_stride;
};

template <Combine c, typename T>
__device__ __forceinline__ T combine(T a, T v) {
  if constexpr (c == Combine::Set)
    return v;
  else if constexpr (c == Combine::Or)
    return from_c<T>(to_c(a) != compute_t<T>(0) || to_c(v) != compute_t<T>(0) ? 1 : 0);
  else  // 16-bit floats add in float32 and round once, integers wrap
    return from_c<T>(wrap_add(to_c(a), to_c(v)));
}

template <Combine c, typename T, typename I>
__global__ void scatter_kernel(T* dst, const I* ids, const T* src, int64_t n, ScatterParams p) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += step) {
    int64_t off[3];
    walk_offsets(p.rows, r, off);
    for (int64_t k = 0; k < p.len; ++k) {
      T& o = dst[off[0] + int64_t(ids[off[1] + k * p.ids_stride]) * p.dst_stride];
      o = combine<c>(o, src[off[2] + k * p.src_stride]);
    }
  }
}

// Slices (ids the same for every row: t[ids] = rows, index_copy), set, not added: each
// destination slice keeps the last id that names it, so the writes may all run at once.
template <typename I>
__global__ void last_writers(const I* ids, int64_t len, int64_t stride, long long* winner) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < len;
       k += int64_t(gridDim.x) * blockDim.x)
    atomicMax(&winner[int64_t(ids[k * stride])], (long long)k);
}

// One position per slice (a 1-D write): a thread per id.
template <typename T, typename I>
__global__ void scatter_elements(T* dst, const I* ids, const T* src, const long long* winner,
                                 ScatterParams p) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < p.len;
       k += int64_t(gridDim.x) * blockDim.x) {
    const int64_t id = int64_t(ids[p.rows.offset[1] + k * p.ids_stride]);
    if (!winner || winner[id] == k)
      dst[p.rows.offset[0] + id * p.dst_stride] = src[p.rows.offset[2] + k * p.src_stride];
  }
}

// Ids along grid y, each slice's positions along x (neighbouring threads: one slice).
template <typename T, typename I>
__global__ void scatter_slices(T* dst, const I* ids, const T* src, int64_t rows,
                               const long long* winner, ScatterParams p) {
  for (int64_t k = blockIdx.y; k < p.len; k += gridDim.y) {
    const int64_t id = int64_t(ids[p.rows.offset[1] + k * p.ids_stride]);
    if (winner && winner[id] != k) continue;  // a later id writes this slice
    for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
         r += int64_t(gridDim.x) * blockDim.x) {
      int64_t off[3];
      walk_offsets(p.rows, r, off);
      dst[off[0] + id * p.dst_stride] = src[off[2] + k * p.src_stride];
    }
  }
}

template <typename T>
constexpr bool has_atomic_add_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, half> ||
    std::is_same_v<T, bf16>;

template <typename T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, int64_t>)  // two's complement: the unsigned add wraps alike
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else
    atomicAdd(p, v);
}

// One thread per element, views over the index's shape: dst (0 in dim: the id picks the
// position), ids, src. Adds atomically, or stores (ids known to write each position once).
template <bool kAdd, typename T, typename I>
__global__ void scatter_each(T* dst, const I* ids, const T* src, int64_t n, Walk<3> w,
                             int64_t dst_stride) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3];
    walk_offsets(w, i, off);
    T* to = dst + off[0] + int64_t(ids[off[1]]) * dst_stride;
    if constexpr (kAdd)
      atomic_add(to, src[off[2]]);
    else
      *to = src[off[2]];
  }
}

// Sets through a table of last writers: views 0-2 as above, 3 the row's table (its
// positions along dim: 0 in dim, rows of the table's width elsewhere), 4 the element's
// position along dim (1 in dim, 0 elsewhere).
template <typename I>
__global__ void find_last_writers(const I* ids, int* table, int64_t n, Walk<5> w) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[5];
    walk_offsets(w, i, off);
    atomicMax(table + off[3] + int64_t(ids[off[1]]), int(off[4]));
  }
}

template <typename T, typename I>
__global__ void write_last(T* dst, const I* ids, const T* src, const int* table, int64_t n,
                           Walk<5> w, int64_t dst_stride) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[5];
    walk_offsets(w, i, off);
    const int64_t id = int64_t(ids[off[1]]);
    if (table[off[3] + id] == int(off[4])) dst[off[0] + id * dst_stride] = src[off[2]];
  }
}

// Scatters along the last dim with whole rows of ids, a block per row, through shared
// memory: the row's random writes land in shared memory and reach dst coalesced.
// - set: each position of the row keeps its last writer (an atomic max of the id's place
//   in a shared table, -1 where none writes), then the winners' values are staged and the
//   written positions stored; the last repeated id wins, as everywhere.
// - add: the row's sums gather in shared memory (atomically, in any order: what atomic adds
//   do anyway), starting from -0.0 so that an untouched position adds nothing, not even a
//   sign; then dst's row adds them, each position once. 16-bit floats sum in float32 and
//   round once.
// Worth it while a row has at least a quarter as many ids as positions (kRowIdsShare): the
// table and the final pass cost the row's whole width. Up to kRowStageBytes of shared
// memory a block (past 48 KiB by the kernel's opt-in): a set of 8192 float32 positions
// takes 64 KiB, table and values.
constexpr int64_t kRowStageBytes = 96 * 1024;
constexpr int64_t kRowIdsShare = 4;

struct RowScatter {
  Walk<3> rows;  // dst, ids, src: each row's first element
  int64_t rows_count, len, width, src_stride;
};

template <typename T, typename I>
__global__ void scatter_set_rows(T* dst, const I* __restrict__ ids, const T* __restrict__ src,
                                 RowScatter p) {
  extern __shared__ __align__(16) unsigned char row_bytes[];
  int* table = reinterpret_cast<int*>(row_bytes);
  T* values = reinterpret_cast<T*>(table + ((p.width + 3) / 4) * 4);
  for (int64_t r = blockIdx.x; r < p.rows_count; r += gridDim.x) {
    int64_t off[3];
    walk_offsets(p.rows, r, off);
    const I* id_row = ids + off[1];
    __syncthreads();  // the previous row is written
    for (int64_t k = threadIdx.x; k < p.width; k += blockDim.x) table[k] = -1;
    __syncthreads();
    for (int64_t k = threadIdx.x; k < p.len; k += blockDim.x)
      atomicMax(table + int64_t(id_row[k]), int(k));
    __syncthreads();
    for (int64_t k = threadIdx.x; k < p.len; k += blockDim.x) {
      const int64_t id = int64_t(id_row[k]);
      if (table[id] == int(k)) values[id] = src[off[2] + k * p.src_stride];
    }
    __syncthreads();
    T* row = dst + off[0];
    for (int64_t k = threadIdx.x; k < p.width; k += blockDim.x)
      if (table[k] >= 0) row[k] = values[k];
  }
}

template <typename T>
using row_sum_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T, typename I>
__global__ void scatter_add_rows(T* dst, const I* __restrict__ ids, const T* __restrict__ src,
                                 RowScatter p) {
  using S = row_sum_t<T>;
  extern __shared__ __align__(16) unsigned char row_bytes[];
  S* sums = reinterpret_cast<S*>(row_bytes);
  const S zero = std::is_floating_point_v<S> ? S(-0.0) : S(0);
  for (int64_t r = blockIdx.x; r < p.rows_count; r += gridDim.x) {
    int64_t off[3];
    walk_offsets(p.rows, r, off);
    const I* id_row = ids + off[1];
    __syncthreads();  // the previous row is written
    for (int64_t k = threadIdx.x; k < p.width; k += blockDim.x) sums[k] = zero;
    __syncthreads();
    for (int64_t k = threadIdx.x; k < p.len; k += blockDim.x)
      atomic_add(sums + int64_t(id_row[k]), S(to_c(src[off[2] + k * p.src_stride])));
    __syncthreads();
    T* row = dst + off[0];
    for (int64_t k = threadIdx.x; k < p.width; k += blockDim.x)
      row[k] = from_c<T>(wrap_add(S(to_c(row[k])), sums[k]));
  }
}

// `l` over the index's shape with 1 in `dim`: its rows' first elements.
Layout rows_of(const Layout& l, const Shape& rows) {
  return Layout(rows, l.strides(), l.offset());
}

// Calls f(T{}, I{}, Combine constant): the data's type, the ids' type and the combine.
template <typename F>
void dispatch_scatter(DType data, DType ids, bool accumulate, F&& f) {
  dispatch(data, [&](auto t) {
    const auto with_ids = [&](auto i) {
      if (!accumulate) return f(t, i, std::integral_constant<Combine, Combine::Set>{});
      if (data == DType::Bool) return f(t, i, std::integral_constant<Combine, Combine::Or>{});
      return f(t, i, std::integral_constant<Combine, Combine::Add>{});
    };
    switch (ids) {
      case DType::I64: return with_ids(int64_t{});
      case DType::U32: return with_ids(uint32_t{});
      case DType::U8: return with_ids(uint8_t{});
      default: throw_invalid("scatter", "indices must be an integer tensor");
    }
  });
}

}  // namespace

void CudaStorage::scatter(const Layout& dst_layout, int64_t dim, const BackendStorage& ids,
                          const Layout& ids_layout, const BackendStorage& src,
                          const Layout& src_layout, bool accumulate, bool unique_ids) {
  const Shape& shape = ids_layout.shape();
  if (ids_layout.numel() == 0) return;
  Shape rows = shape;
  rows[size_t(dim)] = 1;
  const Layout dl = rows_of(dst_layout, rows), il = rows_of(ids_layout, rows),
               sl = rows_of(src_layout, rows);
  ScatterParams p;
  p.rows = make_walk<3>("scatter", rows, {&dl, &il, &sl});
  p.len = shape[size_t(dim)];
  p.dst_stride = dst_layout.strides()[size_t(dim)];
  p.ids_stride = ids_layout.strides()[size_t(dim)];
  p.src_stride = src_layout.strides()[size_t(dim)];
  const int64_t n = ids_layout.numel() / p.len;
  GpuScope scope(cuda().gpu());
  bool slices = !accumulate;
  for (size_t d = 0; d < shape.size(); ++d)
    if (int64_t(d) != dim && shape[d] > 1 && ids_layout.strides()[d] != 0) slices = false;
  if (slices) {
    // Repeated ids need each slice's last writer; unique ones (a mask's) write at once.
    std::optional<Scratch> winner;
    long long* last = nullptr;
    if (!unique_ids) {
      const size_t bytes = size_t(dst_layout.shape()[size_t(dim)]) * sizeof(long long);
      last = winner.emplace(cuda(), std::max<size_t>(bytes, 1)).as<long long>();
      check(cudaMemsetAsync(last, 0xff, bytes, stream()), "cudaMemsetAsync", &cuda());
    }
    dispatch_scatter(dtype_, ids.dtype(), false, [&](auto t, auto i, auto) {
      using T = decltype(t);
      using I = decltype(i);
      const I* id = as_cuda(ids).ptr<I>() + il.offset();
      if (last)
        last_writers<I><<<grid_for(p.len), kBlock, 0, stream()>>>(id, p.len, p.ids_stride, last);
      if (n == 1) {
        scatter_elements<T, I><<<grid_for(p.len), kBlock, 0, stream()>>>(
            ptr<T>(), as_cuda(ids).ptr<I>(), as_cuda(src).ptr<T>(), last, p);
        return;
      }
      // A few positions per thread: a block of one store per thread is mostly its launch.
      constexpr int64_t kPer = 4;
      const dim3 grid(unsigned(std::min<int64_t>((n + kBlock * kPer - 1) / (kBlock * kPer), 1 << 16)),
                      unsigned(std::min<int64_t>(p.len, 65535)));
      scatter_slices<T, I><<<grid, kBlock, 0, stream()>>>(
          ptr<T>(), as_cuda(ids).ptr<I>(), as_cuda(src).ptr<T>(), n, last, p);
    });
    cuda().check_launch("scatter");
    return;
  }
  const int64_t total = ids_layout.numel(), width = dst_layout.shape()[size_t(dim)];
  const Layout dl_all = without_dim(dst_layout, shape, dim);
  bool done = false;
  const int64_t nd = int64_t(shape.size());
  const bool add_in_any_order =
      accumulate && (!dtype_is_float(dtype_) || !deterministic_algorithms());
  if (dim == nd - 1 && p.dst_stride == 1 && p.ids_stride == 1 && width <= int64_t(INT32_MAX) &&
      p.len <= int64_t(INT32_MAX) && p.len * kRowIdsShare >= width && dtype_ != DType::Bool &&
      (!accumulate || add_in_any_order)) {
    RowScatter rp{p.rows, n, p.len, width, p.src_stride};
    dispatch_scatter(dtype_, ids.dtype(), false, [&](auto t, auto i, auto) {
      using T = decltype(t);
      using I = decltype(i);
      const size_t bytes =
          accumulate ? size_t(width) * sizeof(row_sum_t<T>)
                     : size_t((width + 3) / 4 * 4) * sizeof(int) + size_t(width) * sizeof(T);
      if (bytes > size_t(kRowStageBytes)) return;
      const unsigned grid = unsigned(std::min<int64_t>(n, int64_t(1) << 30));
      const I* id = as_cuda(ids).ptr<I>();
      const auto launch = [&](auto kernel) {
        if (bytes > 48 * 1024)  // the default limit of a block's dynamic shared memory
          check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(bytes)),
                "cudaFuncSetAttribute", &cuda());
        kernel<<<grid, kBlock, bytes, stream()>>>(ptr<T>(), id, as_cuda(src).ptr<T>(), rp);
        done = true;
      };
      if (!accumulate)
        launch(scatter_set_rows<T, I>);
      else if constexpr (has_atomic_add_v<row_sum_t<T>> && !is_half_v<row_sum_t<T>>)
        launch(scatter_add_rows<T, I>);
    });
  }
  // Atomic adds: integers always (exact in any order), floats unless deterministic; sets
  // whose ids write each position once store at once.
  if (done) {
    cuda().check_launch(accumulate ? "scatter_add" : "scatter");
    return;
  }
  if (add_in_any_order || (!accumulate && unique_ids)) {
    const Walk<3> w = make_walk<3>("scatter", shape, {&dl_all, &ids_layout, &src_layout});
    dispatch_scatter(dtype_, ids.dtype(), accumulate, [&](auto t, auto i, auto) {
      using T = decltype(t);
      using I = decltype(i);
      const I* id = as_cuda(ids).ptr<I>();
      if (!accumulate) {
        scatter_each<false, T, I><<<grid_for(total), kBlock, 0, stream()>>>(
            ptr<T>(), id, as_cuda(src).ptr<T>(), total, w, p.dst_stride);
        done = true;
      } else if constexpr (has_atomic_add_v<T>) {
        scatter_each<true, T, I><<<grid_for(total), kBlock, 0, stream()>>>(
            ptr<T>(), id, as_cuda(src).ptr<T>(), total, w, p.dst_stride);
        done = true;
      }
    });
  } else if (!accumulate && width <= int64_t(INT32_MAX) && p.len <= int64_t(INT32_MAX) &&
             double(n) * double(width) <= 4.0 * double(total) + 1048576.0) {
    // The table of last writers: n rows of `width` positions, -1 where nothing writes.
    Strides tst(shape.size(), 0), kst(shape.size(), 0);
    int64_t step = width;
    for (size_t d = shape.size(); d-- > 0;) {
      if (int64_t(d) == dim) continue;
      tst[d] = step;
      step *= shape[d];
    }
    kst[size_t(dim)] = 1;
    const Layout tl(shape, tst, 0), kl(shape, kst, 0);
    const Walk<5> w =
        make_walk<5>("scatter", shape, {&dl_all, &ids_layout, &src_layout, &tl, &kl});
    const size_t bytes = size_t(n * width) * sizeof(int);
    Scratch table(cuda(), std::max<size_t>(bytes, 1));
    check(cudaMemsetAsync(table.as<int>(), 0xff, bytes, stream()), "cudaMemsetAsync", &cuda());
    dispatch_scatter(dtype_, ids.dtype(), false, [&](auto t, auto i, auto) {
      using T = decltype(t);
      using I = decltype(i);
      const I* id = as_cuda(ids).ptr<I>();
      find_last_writers<I><<<grid_for(total), kBlock, 0, stream()>>>(id, table.as<int>(), total, w);
      write_last<T, I><<<grid_for(total), kBlock, 0, stream()>>>(
          ptr<T>(), id, as_cuda(src).ptr<T>(), table.as<int>(), total, w, p.dst_stride);
    });
    done = true;
  }
  if (done) {
    cuda().check_launch(accumulate ? "scatter_add" : "scatter");
    return;
  }
  dispatch_scatter(dtype_, ids.dtype(), accumulate, [&](auto t, auto i, auto c) {
    using T = decltype(t);
    using I = decltype(i);
    scatter_kernel<decltype(c)::value><<<grid_for(n), kBlock, 0, stream()>>>(
        ptr<T>(), as_cuda(ids).ptr<I>(), as_cuda(src).ptr<T>(), n, p);
  });
  cuda().check_launch(accumulate ? "scatter_add" : "scatter");
}

}  // namespace ember::cuda
