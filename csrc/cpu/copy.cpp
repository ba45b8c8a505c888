// Casts between dtypes, strided copies, and fills.
#include <cstring>

#include "core/host_cast.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_math.h"

namespace ember::cpu {

namespace {

// One element from S to D; float -> integer saturates (no UB on NaN or overflow).
template <typename D, typename S>
D convert(S x) {
  if constexpr (std::is_same_v<D, S>) {
    return x;
  } else if constexpr (is_float_v<S> && std::is_integral_v<D>) {
    return saturate_cast<D>(double(compute_t<S>(x)));
  } else if constexpr (is_half_v<D> && (std::is_same_v<S, double> || std::is_integral_v<S>)) {
    return saturate_cast<D>(double(x));  // one rounding, not two through float
  } else if constexpr (is_half_v<D>) {
    return D(float(compute_t<S>(x)));
  } else {
    return D(compute_t<S>(x));
  }
}

// A copy whose last two dims (in dst's memory order) are a transpose: dst steps by 1
// along the last and src by 1 along the one before (t.T.contiguous(), a permute of the
// last two dims). Blocks of both dims, tasks of kTransposeBlock dst rows. False when the
// views are not shaped so.
template <typename B>
bool transposed_copy(const B* in, const Layout& src, B* out, const Layout& dst) {
  const Walk<2> w = merge_dims<2>(dst.shape(), {&src, &dst}, WalkOrder::Memory);
  const size_t nd = w.shape.size();
  if (nd < 2 || w.strides[1][nd - 1] != 1 || w.strides[0][nd - 2] != 1) return false;
  const int64_t rows = w.shape[nd - 2], cols = w.shape[nd - 1];
  if (rows < kTransposeBlock || cols < kTransposeBlock) return false;
  const int64_t ls = w.strides[0][nd - 1], ld = w.strides[1][nd - 2];
  const int64_t blocks = (rows + kTransposeBlock - 1) / kTransposeBlock;
  const int64_t outer = shape_numel(w.shape) / (rows * cols);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kTransposeBlock * cols));
  parallel_for(outer * blocks, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t r0 = t % blocks * kTransposeBlock;
      const std::array<int64_t, 2> base = outer_offsets(w, nd - 2, t / blocks);
      const B* s = in + base[0] + r0;
      B* d = out + base[1] + r0 * ld;
      const int64_t n = std::min(kTransposeBlock, rows - r0);
      transpose_tile(s, ls, d, ld, n, cols);
    }
  });
  return true;
}

}  // namespace

void CpuStorage::cast(const Layout& src, BackendStorage& dst, const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto stag) {
    using S = decltype(stag);
    dispatch_dtype(dst.dtype(), [&](auto dtag) {
      using D = decltype(dtag);
      D* out = as_cpu(dst).ptr<D>();
      if constexpr (std::is_same_v<S, float> && is_half_v<D>) {
        walk<2>(dst_layout.shape(), {&src, &dst_layout},
                [&](const auto& off, int64_t n, const auto& st) {
                  if (st[0] == 1) return store_chunk(ptr<S>() + off[0], out + off[1], st[1], n);
                  for (int64_t i = 0; i < n; ++i)
                    out[off[1] + i * st[1]] = convert<D>(ptr<S>()[off[0] + i * st[0]]);
                });
      } else if constexpr (is_half_v<S> && std::is_same_v<D, float>) {
        walk<2>(dst_layout.shape(), {&src, &dst_layout},
                [&](const auto& off, int64_t n, const auto& st) {
                  if (st[1] == 1) return load_chunk(ptr<S>() + off[0], st[0], out + off[1], n);
                  for (int64_t i = 0; i < n; ++i)
                    out[off[1] + i * st[1]] = convert<D>(ptr<S>()[off[0] + i * st[0]]);
                });
      } else if constexpr (!is_half_v<S> && !is_half_v<D>) {
        // dense runs through the op loops built per ISA level (int64 <-> float conversions
        // vectorise with AVX-512)
        const auto cvt = [](S x) { return convert<D>(x); };
        walk<2>(dst_layout.shape(), {&src, &dst_layout},
                [&](const auto& off, int64_t n, const auto& st) {
                  if (st[0] == 1 && st[1] == 1) return each1(cvt, ptr<S>() + off[0], out + off[1], n);
                  for (int64_t i = 0; i < n; ++i) out[off[1] + i * st[1]] = cvt(ptr<S>()[off[0] + i * st[0]]);
                });
      } else {
        map1(ptr<S>(), src, out, dst_layout, [](S x) { return convert<D>(x); });
      }
    });
  });
}

void CpuStorage::copy_strided(const Layout& src, BackendStorage& dst,
                              const Layout& dst_layout) const {
  size_t es = dtype_size(dtype_);
  if (src.numel() == 0) return;
  if (src.is_contiguous() && dst_layout.is_contiguous()) {  // memcpy, split over threads
    char* to = static_cast<char*>(as_cpu(dst).data()) + dst_layout.offset() * es;
    const char* from = static_cast<const char*>(data_) + src.offset() * es;
    parallel_for(src.numel(), kParallelGrain * 4, [&](int64_t lo, int64_t hi) {
      std::memcpy(to + lo * es, from + lo * es, size_t(hi - lo) * es);
    });
    return;
  }
  // Copies move bits, so one loop per element size serves every dtype.
  auto go = [&](auto tag) {
    using B = decltype(tag);
    if (transposed_copy(ptr<B>(), src, as_cpu(dst).ptr<B>(), dst_layout)) return;
    map1(ptr<B>(), src, as_cpu(dst).ptr<B>(), dst_layout, [](B x) { return x; });
  };
  switch (es) {
    case 1: return go(uint8_t{});
    case 2: return go(uint16_t{});
    case 4: return go(uint32_t{});
    default: return go(uint64_t{});
  }
}

void CpuStorage::fill(const Layout& dst_layout, double value) {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T v = saturate_cast<T>(value);
    T* out = ptr<T>();
    walk<1>(dst_layout.shape(), {&dst_layout}, [&](const auto& off, int64_t n, const auto& st) {
      for (int64_t i = 0; i < n; ++i) out[off[0] + i * st[0]] = v;
    });
  });
}

}  // namespace ember::cpu
