// index_select and gather. Indices were range-checked by core.
#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <vector>

#include "core/clamped_id.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_math.h"

namespace ember::cpu {

// Rows of at most this many bytes (four cache lines) are copied inline rather than by memcpy.
constexpr int64_t kInlineCopyBytes = 256;

void CpuStorage::index_select(const Layout& src, int64_t dim, const BackendStorage& ids,
                              const Layout& ids_layout, BackendStorage& dst) const {
  // Each selected index copies one slice, src.select(dim, id) -> dst.select(dim, j). The
  // slice's walk is set up once (not a Layout per id) and the ids are split across threads.
  Shape out_shape = src.shape();
  out_shape[size_t(dim)] = ids_layout.numel();
  const Layout out(out_shape);
  const CpuStorage& id = as_cpu(ids);
  const int64_t n = ids_layout.numel(), id_stride = ids_layout.strides()[0];
  const int64_t src_step = src.strides()[size_t(dim)], dst_step = out.strides()[size_t(dim)];
  Shape shape;
  Strides in_st, out_st;
  for (int64_t d = 0; d < src.ndim(); ++d)
    if (d != dim) {
      shape.push_back(src.shape()[size_t(d)]);
      in_st.push_back(src.strides()[size_t(d)]);
      out_st.push_back(out.strides()[size_t(d)]);
    }
  const int64_t slice = shape_numel(shape);
  if (n == 0 || slice == 0) return;
  if (dim == src.ndim() - 1 && slice > 1) {
    // Ids along the last dim (t[:, ids], t[..., mask]): each slice would be a column,
    // so walk rows instead, each gathering all the ids from one row of src.
    std::vector<int64_t> at(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
      at[size_t(j)] = id_at(id, ids_layout.offset() + j * id_stride) * src_step;
    const size_t nd = shape.size();
    dispatch_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = ptr<T>() + src.offset();
      T* o = as_cpu(dst).ptr<T>();
      parallel_for(slice, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          int64_t off = 0;
          for (int64_t k = int64_t(nd) - 1, rest = r; k >= 0; --k) {
            off += (rest % shape[size_t(k)]) * in_st[size_t(k)];
            rest /= shape[size_t(k)];
          }
          const T* s = in + off;
          T* d = o + r * n;
          for (int64_t j = 0; j < n; ++j) d[j] = s[at[size_t(j)]];
        }
      });
    });
    return;
  }
  // Slices that are one dense run on both sides (rows of a matrix, an embedding table's
  // entries): a copy of `slice` elements per id, the ids read in their own type. Short
  // rows (8 floats) are then a few nanoseconds each, not the walk's setup per id.
  bool one_run = true;
  for (int64_t k = int64_t(shape.size()), expect = 1; k-- > 0;) {
    if (shape[size_t(k)] != 1 && (in_st[size_t(k)] != expect || out_st[size_t(k)] != expect))
      one_run = false;
    expect *= shape[size_t(k)];
  }
  if (one_run) {
    dispatch_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = ptr<T>() + src.offset();
      T* o = as_cpu(dst).ptr<T>();
      with_ids(id, [&](const auto* ip) {
        ip += ids_layout.offset();
        parallel_for(n, std::max<int64_t>(1, kParallelGrain / (slice + kRandomReadCost)),
                     [&](int64_t lo, int64_t hi) {
          if (slice == 1) {  // elements (a 1-D source: t[ids], mask reads)
            for (int64_t j = lo; j < hi; ++j)
              o[j * dst_step] = in[int64_t(ip[j * id_stride]) * src_step];
            return;
          }
          // a short run copied inline (memcpy's call and size dispatch cost more than a
          // row of 8 floats: 3.5 -> 1.5 ms for 256K of them), a long one by memcpy
          if (slice * int64_t(sizeof(T)) <= kInlineCopyBytes) {
            for (int64_t j = lo; j < hi; ++j) {
              const T* __restrict s = in + int64_t(ip[j * id_stride]) * src_step;
              T* __restrict d = o + j * dst_step;
              for (int64_t k = 0; k < slice; ++k) d[k] = s[k];
            }
            return;
          }
          for (int64_t j = lo; j < hi; ++j)
            std::memcpy(o + j * dst_step, in + int64_t(ip[j * id_stride]) * src_step,
                        size_t(slice) * sizeof(T));
        });
      });
    });
    return;
  }
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* in = ptr<T>() + src.offset();
    T* o = as_cpu(dst).ptr<T>();
    const size_t nd = shape.size();
    // the innermost run copied at once when it is contiguous on both sides
    const bool dense_run = nd > 0 && in_st.back() == 1 && out_st.back() == 1;
    parallel_for(n, std::max<int64_t>(1, kParallelGrain / slice), [&](int64_t lo, int64_t hi) {
      std::vector<int64_t> idx(nd);
      for (int64_t j = lo; j < hi; ++j) {
        const T* s = in + id_at(id, ids_layout.offset() + j * id_stride) * src_step;
        T* d = o + j * dst_step;
        const int64_t run = shape[nd - 1];
        std::fill(idx.begin(), idx.end(), 0);
        int64_t si = 0, di = 0;
        for (int64_t done = 0; done < slice; done += run) {
          if (dense_run) {
            std::copy(s + si, s + si + run, d + di);
          } else {
            for (int64_t r = 0; r < run; ++r) d[di + r * out_st[nd - 1]] = s[si + r * in_st[nd - 1]];
          }
          for (size_t k = nd - 1; k-- > 0;) {  // odometer over the outer dims of the slice
            si += in_st[k];
            di += out_st[k];
            if (++idx[k] < shape[k]) break;
            si -= shape[k] * in_st[k];
            di -= shape[k] * out_st[k];
            idx[k] = 0;
          }
        }
      }
    });
  });
}

BackendStorage::IndexBounds CpuStorage::index_bounds(const Layout& src) const {
  std::optional<std::pair<int64_t, int64_t>> result;
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T* in = ptr<T>();
      std::mutex mu;
      T lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::lowest();
      walk<1>(src.shape(), {&src}, [&](const auto& off, int64_t n, const auto& st) {
        T a = std::numeric_limits<T>::max(), b = std::numeric_limits<T>::lowest();
        const T* x = in + off[0];
        if constexpr (std::is_same_v<T, int64_t>) {
          if (st[0] == 1) {  // the usual index dtype: the vectorised clones
            int64_t l = a, h = b;
            minmax_i64(x, n, &l, &h);
            std::lock_guard<std::mutex> lock(mu);
            lo = std::min(lo, l);
            hi = std::max(hi, h);
            return;
          }
        }
        if (st[0] == 1) {
          for (int64_t i = 0; i < n; ++i) {  // branch-free: vectorises
            a = x[i] < a ? x[i] : a;
            b = x[i] > b ? x[i] : b;
          }
        } else {
          for (int64_t i = 0; i < n; ++i) {
            a = std::min(a, x[i * st[0]]);
            b = std::max(b, x[i * st[0]]);
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        lo = std::min(lo, a);
        hi = std::max(hi, b);
      });
      result.emplace(int64_t(lo), int64_t(hi));
    }
  });
  if (!result) return nullptr;
  return [bounds = *result] { return bounds; };
}

namespace {

// The id a gather reads with. A bounded gather (gather_bounded) also notes the smallest
// and largest id it sees, and reads the dim's first element for one outside [0, size),
// since the ids are checked only afterwards.
template <bool kBounded>
struct IdCheck {
  int64_t size, lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  int64_t operator()(int64_t id) {
    if constexpr (kBounded) {
      lo = id < lo ? id : lo;
      hi = id > hi ? id : hi;
      return uint64_t(id) < uint64_t(size) ? id : 0;
    } else {
      return id;
    }
  }
};

// d[k] = s[i[k] * step] along a dense run of ids and output: four loads in flight before
// their stores, none of the three assumed to alias another (the output is a new tensor),
// so a group's loads need not wait for the previous group's stores.
template <bool kBounded, typename T, typename I>
__attribute__((always_inline)) inline void gather_run(const T* __restrict s,
                                                      const I* __restrict i, T* __restrict d,
                                                      int64_t n, int64_t step,
                                                      IdCheck<kBounded>& check) {
  IdCheck<kBounded> c = check;  // in registers, not behind the stores
  int64_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const int64_t j0 = c(int64_t(i[k])), j1 = c(int64_t(i[k + 1])), j2 = c(int64_t(i[k + 2])),
                  j3 = c(int64_t(i[k + 3]));
    const T a = s[j0 * step], b = s[j1 * step], e = s[j2 * step], f = s[j3 * step];
    d[k] = a;
    d[k + 1] = b;
    d[k + 2] = e;
    d[k + 3] = f;
  }
  for (; k < n; ++k) d[k] = s[c(int64_t(i[k])) * step];
  check = c;
}

// out[p] = src[p with dim replaced by ids[p]]: src walked as a view of the ids' shape
// whose dim stride is 0 (the row's start), the id scaled by the dim's stride added per
// element. Runs of the walk are rows of the ids (no index math per element); along the
// last dim a run gathers within one row of src, which stays in cache. kBounded: the ids'
// bounds into *lo and *hi, each run's merged under a lock.
template <bool kBounded>
void gather_ids(const CpuStorage& self, const Layout& src, int64_t dim, const CpuStorage& id,
                const Layout& ids_layout, CpuStorage& dst, int64_t* lo_out, int64_t* hi_out) {
  const Layout out(ids_layout.shape());
  Strides base_st = src.strides();
  base_st.resize(size_t(ids_layout.ndim()));
  base_st[size_t(dim)] = 0;
  const Layout base(ids_layout.shape(), base_st, src.offset());
  const int64_t step = src.strides()[size_t(dim)], size = src.shape()[size_t(dim)];
  std::mutex mu;
  const size_t nd = size_t(ids_layout.ndim());
  const int64_t len = ids_layout.shape()[nd - 1];
  // Along the last dim with dense rows of ids, short ones included ((4096, 4) ids, a
  // top-k's positions): rows split over threads, each chunk walking its rows' offsets by
  // an odometer and merging its bounds once, not a walk's run and a lock per row.
  if (size_t(dim) == nd - 1 && nd > 1 && (len == 1 || ids_layout.strides()[nd - 1] == 1)) {
    const int64_t rows = out.numel() / len;
    dispatch_dtype(self.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = self.ptr<T>();
      T* o = dst.ptr<T>();
      with_ids(id, [&](const auto* idp) {
        const int64_t work = len * kRandomReadCost;
        parallel_for(rows, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t lo, int64_t hi) {
          IdCheck<kBounded> check{size};
          if (nd == 2) {  // one outer dim: the rows' offsets are multiples of its strides
            const int64_t s_step = base_st[0], i_step = ids_layout.strides()[0];
            const T* s = in + base.offset() + lo * s_step;
            const auto* i = idp + ids_layout.offset() + lo * i_step;
            for (int64_t r = lo; r < hi; ++r, s += s_step, i += i_step)
              gather_run(s, i, o + r * len, len, step, check);
          } else {
            // the row's coordinates in the outer dims, and its offsets in src and the ids
            std::vector<int64_t> at(nd - 1);
            int64_t s_off = base.offset(), i_off = ids_layout.offset();
            for (size_t k = nd - 1, rest = size_t(lo); k-- > 0;) {
              at[k] = int64_t(rest % size_t(out.shape()[k]));
              rest /= size_t(out.shape()[k]);
              s_off += at[k] * base_st[k];
              i_off += at[k] * ids_layout.strides()[k];
            }
            for (int64_t r = lo; r < hi; ++r) {
              gather_run(in + s_off, idp + i_off, o + r * len, len, step, check);
              for (size_t k = nd - 1; k-- > 0;) {
                s_off += base_st[k];
                i_off += ids_layout.strides()[k];
                if (++at[k] < out.shape()[k]) break;
                s_off -= out.shape()[k] * base_st[k];
                i_off -= out.shape()[k] * ids_layout.strides()[k];
                at[k] = 0;
              }
            }
          }
          if constexpr (kBounded) {
            std::lock_guard<std::mutex> lock(mu);
            *lo_out = std::min(*lo_out, check.lo);
            *hi_out = std::max(*hi_out, check.hi);
          }
        });
      });
    });
    return;
  }
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = self.ptr<T>();
    T* o = dst.ptr<T>();
    with_ids(id, [&](const auto* idp) {
      walk<3>(out.shape(), {&base, &ids_layout, &out},
              [&](const auto& off, int64_t n, const auto& st) {
                const T* s = in + off[0];
                const auto* i = idp + off[1];
                T* d = o + off[2];
                IdCheck<kBounded> check{size};
                if (st[0] == 0 && st[1] == 1 && st[2] == 1) {
                  gather_run(s, i, d, n, step, check);
                } else {
                  for (int64_t k = 0; k < n; ++k)
                    d[k * st[2]] = s[k * st[0] + check(int64_t(i[k * st[1]])) * step];
                }
                if constexpr (kBounded) {
                  std::lock_guard<std::mutex> lock(mu);
                  *lo_out = std::min(*lo_out, check.lo);
                  *hi_out = std::max(*hi_out, check.hi);
                }
              });
    });
  });
}

// gather_points of K arrays: src, the K arrays and dst walked together over dst's shape.
// Each run adds up its element's offset from the K ids (core/clamped_id.h) and merges the
// ids' bounds it saw under a lock.
// kOffsets: dst (int64) takes the offsets, T is int64_t and src's data is not read.
template <size_t K, bool kOffsets, typename T>
void points_k(const T* in, const Layout& src, const std::vector<BackendStorage::PointIds>& pts,
              T* o, int64_t* lo, int64_t* hi) {
  const Layout out(src.shape());
  std::array<const Layout*, K + 2> views;
  std::array<const int64_t*, K> ids;
  std::array<int64_t, K> step, size;
  views[0] = &src;
  views[K + 1] = &out;
  for (size_t k = 0; k < K; ++k) {
    views[k + 1] = &pts[k].layout;
    ids[k] = as_cpu(*pts[k].ids).ptr<int64_t>();
    step[k] = pts[k].stride;
    size[k] = pts[k].size;
    lo[k] = std::numeric_limits<int64_t>::max();
    hi[k] = std::numeric_limits<int64_t>::min();
  }
  std::mutex mu;
  walk<K + 2>(out.shape(), views, [&](const auto& off, int64_t n, const auto& st) {
    T* __restrict d = o + off[K + 1];
    std::array<const int64_t*, K> i;
    std::array<int64_t, K> l, h;
    for (size_t k = 0; k < K; ++k) {
      i[k] = ids[k] + off[k + 1];
      l[k] = std::numeric_limits<int64_t>::max();
      h[k] = std::numeric_limits<int64_t>::min();
    }
    for (int64_t e = 0; e < n; ++e) {
      int64_t at = off[0] + e * st[0];
      for (size_t k = 0; k < K; ++k) {
        const int64_t id = i[k][e * st[k + 1]];
        l[k] = id < l[k] ? id : l[k];
        h[k] = id > h[k] ? id : h[k];
        at += clamped_id(id, size[k]) * step[k];
      }
      if constexpr (kOffsets)
        d[e * st[K + 1]] = at;
      else
        d[e * st[K + 1]] = in[at];
    }
    std::lock_guard<std::mutex> lock(mu);
    for (size_t k = 0; k < K; ++k) {
      lo[k] = std::min(lo[k], l[k]);
      hi[k] = std::max(hi[k], h[k]);
    }
  });
}

template <size_t K>
void gather_points_k(const CpuStorage& self, const Layout& src,
                     const std::vector<BackendStorage::PointIds>& pts, CpuStorage& dst,
                     int64_t* lo, int64_t* hi, bool offsets) {
  if (offsets)
    return points_k<K, true>(static_cast<const int64_t*>(nullptr), src, pts, dst.ptr<int64_t>(),
                             lo, hi);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    points_k<K, false>(self.ptr<T>(), src, pts, dst.ptr<T>(), lo, hi);
  });
}

}  // namespace

void CpuStorage::gather(const Layout& src, int64_t dim, const BackendStorage& ids,
                        const Layout& ids_layout, BackendStorage& dst) const {
  gather_ids<false>(*this, src, dim, as_cpu(ids), ids_layout, as_cpu(dst), nullptr, nullptr);
}

bool CpuStorage::gather_bounded(const Layout& src, int64_t dim, const BackendStorage& ids,
                                const Layout& ids_layout, BackendStorage& dst, int64_t* lo,
                                int64_t* hi) const {
  // one pass over the ids: a gather of float32 by int64 ids streams 12 bytes an element
  // and is bound by memory, so a bounds pass first cost about a third more
  *lo = std::numeric_limits<int64_t>::max();
  *hi = std::numeric_limits<int64_t>::min();
  gather_ids<true>(*this, src, dim, as_cpu(ids), ids_layout, as_cpu(dst), lo, hi);
  return true;
}

bool CpuStorage::gather_points(const Layout& src, const std::vector<PointIds>& ids,
                               BackendStorage& dst, int64_t* lo, int64_t* hi, bool offsets) const {
  switch (ids.size()) {
    case 1: gather_points_k<1>(*this, src, ids, as_cpu(dst), lo, hi, offsets); return true;
    case 2: gather_points_k<2>(*this, src, ids, as_cpu(dst), lo, hi, offsets); return true;
    case 3: gather_points_k<3>(*this, src, ids, as_cpu(dst), lo, hi, offsets); return true;
    case 4: gather_points_k<4>(*this, src, ids, as_cpu(dst), lo, hi, offsets); return true;
    default: return false;
  }
}

}  // namespace ember::cpu
