// scatter / scatter_add into this storage. Indices were range-checked by core.
#include <algorithm>
#include <type_traits>

#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

// a + b in T: integers wrap, 16-bit floats add in float32 and round once.
template <typename T>
T add_one(T a, T b) {
  if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>)
    return wrap_add(a, b);
  else
    return T(float(a) + float(b));
}

// The storage offsets of position p of `shape` (dim held at 0) in three layouts.
void base_offsets(int64_t p, const Shape& shape, int64_t dim, const Layout* const (&ls)[3],
                  int64_t (&off)[3]) {
  for (int k = 0; k < 3; ++k) off[k] = ls[k]->offset();
  for (int64_t d = int64_t(shape.size()); d-- > 0;) {
    if (d == dim) continue;
    const int64_t i = p % shape[size_t(d)];
    p /= shape[size_t(d)];
    for (int k = 0; k < 3; ++k) off[k] += i * ls[k]->strides()[size_t(d)];
  }
}

}  // namespace

void CpuStorage::scatter(const Layout& dst_layout, int64_t dim, const BackendStorage& ids,
                         const Layout& ids_layout, const BackendStorage& src,
                         const Layout& src_layout, bool accumulate, bool unique_ids) {
  const Shape& shape = ids_layout.shape();
  const int64_t len = shape[size_t(dim)];
  if (ids_layout.numel() == 0) return;
  const int64_t rows = ids_layout.numel() / len;
  const CpuStorage& id = as_cpu(ids);
  const bool logical = dtype_ == DType::Bool;
  const Layout* const ls[3] = {&dst_layout, &ids_layout, &src_layout};
  const int64_t ds = dst_layout.strides()[size_t(dim)], is = ids_layout.strides()[size_t(dim)],
                ss = src_layout.strides()[size_t(dim)];
  // ids the same for every position of the other dims (index_add, t[ids] = rows): whole
  // slices move, so a block of positions takes each id in turn, its writes side by side;
  // where the slices' positions lie apart in dst (dim the inner one, as index_add along
  // dim 1 of a matrix), a block would write a column per id, so the rows below each take
  // their ids in turn instead, their writes within one line.
  bool slices = rows > 1;
  for (int64_t d = int64_t(shape.size()), expect = 1; d-- > 0;) {
    if (d == dim || shape[size_t(d)] == 1) continue;
    if (ids_layout.strides()[size_t(d)] != 0 || dst_layout.strides()[size_t(d)] != expect)
      slices = false;
    expect *= shape[size_t(d)];
  }
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    T* out = ptr<T>();
    const T* in = as_cpu(src).ptr<T>();
    const auto put = [&](T& o, T v) {
      if (!accumulate)
        o = v;
      else if (logical)
        o = T(o != T(0) || v != T(0));
      else
        o = add_one(o, v);
    };
    // Slices whose positions are one dense run in dst and src (index_add over dim 0 of a
    // contiguous tensor, say): each thread takes one long run of positions and adds the
    // slices id by id, whole vectors, so that reads and writes stream.
    bool runs = slices;
    for (int k = 0; k < 3 && runs; k += 2) {
      int64_t expect = 1;
      for (int64_t d = int64_t(shape.size()); d-- > 0;) {
        if (d == dim) continue;
        if (shape[size_t(d)] != 1 && ls[k]->strides()[size_t(d)] != expect) runs = false;
        expect *= shape[size_t(d)];
      }
    }
    if (runs) {
      const int64_t parts = rows * len < kParallelGrain
                                ? 1
                                : std::clamp<int64_t>(rows / 256, 1, num_threads());
      const int64_t per = (rows + parts - 1) / parts;
      const int64_t ids_at = ids_layout.offset();  // the same for every position
      parallel_for(parts, 1, [&](int64_t plo, int64_t phi) {
        for (int64_t part = plo; part < phi; ++part) {
          const int64_t lo = part * per, m = std::min(rows, lo + per) - lo;
          if (m <= 0) continue;
          T* o0 = out + dst_layout.offset() + lo;
          const T* v0 = in + src_layout.offset() + lo;
          for (int64_t k = 0; k < len; ++k) {
            T* o = o0 + id_at(id, ids_at + k * is) * ds;
            const T* v = v0 + k * ss;
            if (!accumulate)
              std::copy(v, v + m, o);
            else if (logical)
              for (int64_t q = 0; q < m; ++q) put(o[q], v[q]);
            else
              each2([](T a, T b) { return add_one(a, b); }, o, v, m);
          }
        }
      });
      return;
    }
    if (slices) {
      constexpr int64_t kBlock = 512;
      const int64_t blocks = (rows + kBlock - 1) / kBlock;
      parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / (len * kBlock)),
                   [&](int64_t lo, int64_t hi) {
                     int64_t dst_at[kBlock], src_at[kBlock], off[3];
                     for (int64_t b = lo; b < hi; ++b) {
                       const int64_t first = b * kBlock, count = std::min(kBlock, rows - first);
                       for (int64_t q = 0; q < count; ++q) {
                         base_offsets(first + q, shape, dim, ls, off);
                         dst_at[q] = off[0];
                         src_at[q] = off[2];
                       }
                       const int64_t ids_at = off[1];  // the same for every position
                       // The block's positions as runs: dst dense, src dense or one value.
                       bool dense = true, src_dense = true, src_one = true;
                       for (int64_t q = 1; q < count; ++q) {
                         dense = dense && dst_at[q] == dst_at[0] + q;
                         src_dense = src_dense && src_at[q] == src_at[0] + q;
                         src_one = src_one && src_at[q] == src_at[0];
                       }
                       for (int64_t k = 0; k < len; ++k) {
                         const int64_t to = id_at(id, ids_at + k * is) * ds, from = k * ss;
                         if (dense && (src_dense || src_one)) {
                           T* o = out + dst_at[0] + to;
                           const T* v = in + src_at[0] + from;
                           if (!accumulate && src_dense)
                             std::copy(v, v + count, o);
                           else if (!accumulate)
                             std::fill(o, o + count, *v);
                           else if (logical)
                             for (int64_t q = 0; q < count; ++q) put(o[q], v[src_dense ? q : 0]);
                           else if (src_dense)  // a run of adds: vectorises
                             for (int64_t q = 0; q < count; ++q) o[q] = add_one(o[q], v[q]);
                           else
                             for (int64_t q = 0; q < count; ++q) o[q] = add_one(o[q], *v);
                           continue;
                         }
                         for (int64_t q = 0; q < count; ++q)
                           put(out[dst_at[q] + to], in[src_at[q] + from]);
                       }
                     }
                   });
      return;
    }
    if (unique_ids && rows == 1) {  // no id repeats: a 1-D write splits across threads
      int64_t off[3];
      base_offsets(0, shape, dim, ls, off);
      parallel_for(len, kParallelGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k)
          put(out[off[0] + id_at(id, off[1] + k * is) * ds], in[off[2] + k * ss]);
      });
      return;
    }
    // Each row (a position of the other dims) writes its own elements: rows run in
    // parallel, a row's ids in order. The loop is compiled per id type and per write.
    const auto by_rows = [&](const auto* idp, auto write) {
      parallel_for(rows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          int64_t off[3];
          base_offsets(p, shape, dim, ls, off);
          T* o = out + off[0];
          const auto* i = idp + off[1];
          const T* v = in + off[2];
          if (is == 1 && ss == 1) {
            for (int64_t k = 0; k < len; ++k) write(o[int64_t(i[k]) * ds], v[k]);
          } else {
            for (int64_t k = 0; k < len; ++k) write(o[int64_t(i[k * is]) * ds], v[k * ss]);
          }
        }
      });
    };
    // dim not the last, the dims after it dense in all three views (the usual layouts):
    // dim's positions go in order, each over a run of the inner positions, so reads and
    // writes sweep lines instead of columns; each inner position still takes its ids in
    // order. Threads split the inner positions: no two write one element.
    // The ids may instead be one per line (stride 0 over the inner dims: index_add along
    // a middle dim): a line then adds a whole run of src into one line of dst.
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < int64_t(shape.size()); ++d) inner *= shape[size_t(d)];
    // whether the dims after dim are dense in view l (unit: its strides there are those
    // of a contiguous run) or all 0 (unit = 0)
    const auto inner_is = [&](const Layout& l, int64_t unit) {
      int64_t expect = unit;
      for (int64_t d = int64_t(shape.size()); d-- > dim + 1;) {
        if (shape[size_t(d)] != 1 && l.strides()[size_t(d)] != expect) return false;
        expect *= shape[size_t(d)];
      }
      return true;
    };
    const bool ids_per_line = inner > 1 && inner_is(ids_layout, 0);
    const bool inner_dense = inner > 1 && inner_is(dst_layout, 1) && inner_is(src_layout, 1) &&
                             (ids_per_line || inner_is(ids_layout, 1));
    const auto by_lines = [&](const auto* idp, auto write) {
      constexpr int64_t kRun = 1024;
      const int64_t runs = (inner + kRun - 1) / kRun, outer = rows / inner;
      parallel_for(outer * runs, std::max<int64_t>(1, kParallelGrain / (len * kRun)),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t t = lo; t < hi; ++t) {
                       const int64_t o = t / runs, j0 = (t % runs) * kRun;
                       const int64_t m = std::min(kRun, inner - j0);
                       int64_t off[3];
                       base_offsets(o * inner + j0, shape, dim, ls, off);
                       for (int64_t k = 0; k < len; ++k) {
                         T* dk = out + off[0];
                         const auto* ik = idp + off[1] + k * is;
                         const T* vk = in + off[2] + k * ss;
                         if (ids_per_line) {  // one line of dst: vectorises
                           T* line = dk + int64_t(ik[0]) * ds;
                           for (int64_t j = 0; j < m; ++j) write(line[j], vk[j]);
                         } else {
                           for (int64_t j = 0; j < m; ++j) write(dk[int64_t(ik[j]) * ds + j], vk[j]);
                         }
                       }
                     }
                   });
    };
    with_ids(id, [&](const auto* idp) {
      if (inner_dense) {
        if (!accumulate)
          by_lines(idp, [](T& o, T v) { o = v; });
        else if (logical)
          by_lines(idp, [](T& o, T v) { o = T(o != T(0) || v != T(0)); });
        else
          by_lines(idp, [](T& o, T v) { o = add_one(o, v); });
      } else if (!accumulate)
        by_rows(idp, [](T& o, T v) { o = v; });
      else if (logical)
        by_rows(idp, [](T& o, T v) { o = T(o != T(0) || v != T(0)); });
      else
        by_rows(idp, [](T& o, T v) { o = add_one(o, v); });
    });
  });
}

}  // namespace ember::cpu
