// Elementwise loops over 1, 2 or 3 inputs: a dense branch the compiler vectorises,
// and a strided branch for views.
#pragma once

#include <cstring>
#include <memory>

#include "core/host_cast.h"
#include "strided.h"
#include "cpu_level.h"
#include "vec_math.h"

#ifdef EMBER_CPU_X86
#include <immintrin.h>
#endif

namespace ember::cpu {

// Integer arithmetic that wraps (as numpy does) instead of overflowing into UB.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) + U(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) - U(b)));
  } else {
    return a - b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) * U(b)));
  } else {
    return a * b;
  }
}

template <typename In, typename Out, typename F>
void map1(const In* in, const Layout& src, Out* out, const Layout& dst, F f) {
  walk<2>(dst.shape(), {&src, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    const In* a = in + off[0];
    Out* o = out + off[1];
    if (st[0] == 1 && st[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[1]] = f(a[i * st[0]]);
    }
  });
}

// The bits of a rows x cols transpose, dst[r * ld + c] = src[r + c * ls]: 4- and 2-byte
// elements in registers on AVX-512 CPUs, others by blocks.
template <typename T>
void transpose_tile(const T* src, int64_t ls, T* dst, int64_t ld, int64_t rows, int64_t cols) {
  if constexpr (sizeof(T) == 4)
    transpose_u32(reinterpret_cast<const uint32_t*>(src), ls, reinterpret_cast<uint32_t*>(dst), ld,
                  rows, cols);
  else if constexpr (sizeof(T) == 2)
    transpose_u16(reinterpret_cast<const uint16_t*>(src), ls, reinterpret_cast<uint16_t*>(dst), ld,
                  rows, cols);
  else
    transpose_blocks(src, ls, dst, ld, rows, cols);
}

// Tiles of a two-input op with one operand read across its memory order (a.T + b): in
// dst's memory order, dst dense along the last dim, that operand steps by 1 along the dim
// before and by more along the last, and the other is dense or one value along the last.
// A walk along dst's rows reads one of its elements per cache line (and with power-of-two
// strides every line falls in one L1 set, so tiles of runs still miss), so each tile of
// kStageRows x kStageCols of it is first transposed into a dense scratch, and the op runs
// over dense runs: run(x, sx, y, sy, o, 1, n) as walk2 calls it. The tiles are wide: the
// other views' runs are long enough for the prefetchers (runs of 64 elements took twice
// the time). False (nothing done) where the views are not shaped so.
constexpr int64_t kStageRows = 16, kStageCols = 2048;

template <typename A, typename B, typename Out, typename Run>
bool staged2(const A* a, const Layout& la, const B* b, const Layout& lb, Out* out,
             const Layout& dst, Run& run) {
  const Walk<3> w = merge_dims<3>(dst.shape(), {&la, &lb, &dst}, WalkOrder::Memory);
  const size_t nd = w.shape.size();
  if (nd < 2 || w.strides[2][nd - 1] != 1) return false;
  const auto across = [&](size_t k) { return w.strides[k][nd - 2] == 1 && w.strides[k][nd - 1] > 1; };
  const auto along = [&](size_t k) { return w.strides[k][nd - 1] == 1 || w.strides[k][nd - 1] == 0; };
  // 4- and 2-byte elements: their transposes run in registers; by blocks, 8-byte ones
  // staged took longer than the tiled walk
  const bool a_fits = sizeof(A) == 4 || sizeof(A) == 2, b_fits = sizeof(B) == 4 || sizeof(B) == 2;
  const size_t t = a_fits && across(0) && along(1) ? 0 : b_fits && across(1) && along(0) ? 1 : 2;
  const int64_t rows = w.shape[nd - 2], cols = w.shape[nd - 1];
  if (t == 2 || rows < kTransposeBlock || cols < kTransposeBlock) return false;
  const int64_t tiles_r = (rows + kStageRows - 1) / kStageRows;
  const int64_t tiles_c = (cols + kStageCols - 1) / kStageCols;
  const int64_t per_outer = tiles_r * tiles_c;
  const int64_t outer = shape_numel(w.shape) / (rows * cols);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kStageRows * kStageCols));
  parallel_for(outer * per_outer, grain, [&](int64_t lo, int64_t hi) {
    std::unique_ptr<unsigned char[]> held(
        new unsigned char[size_t(kStageRows * kStageCols) * std::max(sizeof(A), sizeof(B))]);
    unsigned char* scratch = held.get();
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t rem = task % per_outer;
      const int64_t r0 = rem / tiles_c * kStageRows, c0 = rem % tiles_c * kStageCols;
      const int64_t nr = std::min(kStageRows, rows - r0), nc = std::min(kStageCols, cols - c0);
      const std::array<int64_t, 3> base = outer_offsets(w, nd - 2, task / per_outer);
      std::array<int64_t, 3> at;  // the tile's first element in each view
      for (size_t k = 0; k < 3; ++k)
        at[k] = base[k] + r0 * w.strides[k][nd - 2] + c0 * w.strides[k][nd - 1];
      const auto stage = [&](const auto* v) {  // the tile of view t, dense rows of kStageCols
        using V = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
        V* tile = reinterpret_cast<V*>(scratch);
        transpose_tile(v + at[t], w.strides[t][nd - 1], tile, kStageCols, nr, nc);
        return tile;
      };
      const int64_t os = w.strides[2][nd - 2];
      if (t == 0) {
        const A* tile = stage(a);
        const int64_t ys = w.strides[1][nd - 2], yc = w.strides[1][nd - 1];
        for (int64_t r = 0; r < nr; ++r)
          run(tile + r * kStageCols, 1, b + at[1] + r * ys, yc, out + at[2] + r * os, 1, nc);
      } else {
        const B* tile = stage(b);
        const int64_t xs = w.strides[0][nd - 2], xc = w.strides[0][nd - 1];
        for (int64_t r = 0; r < nr; ++r)
          run(a + at[0] + r * xs, xc, tile + r * kStageCols, 1, out + at[2] + r * os, 1, nc);
      }
    }
  });
  return true;
}

// Runs of a two-input elementwise op as pointers, run(x, sx, y, sy, o, so, n): the op
// over o[i * so] from x[i * sx] and y[i * sy], i < n; operands read across their memory
// order come staged (staged2), the rest as walk gives them.
template <typename A, typename B, typename Out, typename Run>
void walk2(const A* a, const Layout& la, const B* b, const Layout& lb, Out* out, const Layout& dst,
           Run&& run) {
  if ((!la.is_contiguous() || !lb.is_contiguous()) && staged2(a, la, b, lb, out, dst, run)) return;
  walk<3>(dst.shape(), {&la, &lb, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    run(a + off[0], st[0], b + off[1], st[1], out + off[2], st[2], n);
  });
}

template <typename A, typename B, typename Out, typename F>
void map2(const A* a, const Layout& la, const B* b, const Layout& lb, Out* out, const Layout& dst,
          F f) {
  walk2(a, la, b, lb, out, dst,
        [&](const A* x, int64_t sx, const B* y, int64_t sy, Out* o, int64_t so, int64_t n) {
          if (sx == 1 && sy == 1 && so == 1) {
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
          } else if (sx == 1 && sy == 0 && so == 1) {  // tensor op scalar
            const B yv = y[0];
            for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
          } else {
            for (int64_t i = 0; i < n; ++i) o[i * so] = f(x[i * sx], y[i * sy]);
          }
        });
}

template <typename A, typename B, typename C, typename Out, typename F>
void map3(const A* a, const Layout& la, const B* b, const Layout& lb, const C* c, const Layout& lc,
          Out* out, const Layout& dst, F f) {
  walk<4>(dst.shape(), {&la, &lb, &lc, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    const A* x = a + off[0];
    const B* y = b + off[1];
    const C* z = c + off[2];
    Out* o = out + off[3];
    if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z[i]);
    } else if (st[0] == 1 && st[1] == 0 && st[2] == 1 && st[3] == 1) {  // where(m, scalar, t)
      const B yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv, z[i]);
    } else if (st[0] == 1 && st[1] == 1 && st[2] == 0 && st[3] == 1) {  // where(m, t, scalar)
      const C zv = z[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], zv);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[3]] = f(x[i * st[0]], y[i * st[1]], z[i * st[2]]);
    }
  });
}

// ---- 16-bit floats: runs go through float buffers of kChunk values, converted in and out
// by the vectorised conversions (vec_math.h), the op computed in float between.

constexpr int64_t kChunk = 512;

// The chunk loops each1 and each2 (r[j] = g(x[j]), x[j] = g(x[j], y[j])) are built per
// ISA level by EMBER_CPU_LEVELS (cpu_level.h), g inlined into each loop.

EMBER_CPU_LEVELS(template <typename G EMBER_COMMA typename C EMBER_COMMA typename R>, , each1,
                 (G g, const C* x, R* r, int64_t m), (g, x, r, m),
                 { for (int64_t j = 0; j < m; ++j) r[j] = R(g(x[j])); })

EMBER_CPU_LEVELS(template <typename G EMBER_COMMA typename C>, , each2,
                 (G g, C* x, const C* y, int64_t m), (g, x, y, m),
                 { for (int64_t j = 0; j < m; ++j) x[j] = C(g(x[j], y[j])); })

// A run of a 16-bit float's bits to float32 and back, by the vectorised conversions; the
// type picks which.
inline void half_to_f32(bf16, const uint16_t* h, float* f, int64_t m) { bf16_to_f32(h, f, m); }
inline void half_to_f32(f16, const uint16_t* h, float* f, int64_t m) { f16_to_f32(h, f, m); }
inline void f32_to_half(bf16, const float* f, uint16_t* h, int64_t m) { f32_to_bf16(f, h, m); }
inline void f32_to_half(f16, const float* f, uint16_t* h, int64_t m) { f32_to_f16(f, h, m); }

// n values of T from x (stride st, 0 for a broadcast value) as their compute type. The
// 16-bit floats convert whole runs (vectorised): a strided run's bits are gathered first,
// and a broadcast value converts once.
template <typename T>
void load_chunk(const T* x, int64_t st, compute_t<T>* buf, int64_t n) {
  if constexpr (is_half_v<T>) {
    const auto* bits = reinterpret_cast<const uint16_t*>(x);
    if (st == 1) return half_to_f32(T{}, bits, buf, n);
    if (st == 0) return std::fill(buf, buf + n, float(x[0]));
    uint16_t run[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      for (int64_t i = 0; i < m; ++i) run[i] = bits[(i0 + i) * st];
      half_to_f32(T{}, run, buf + i0, m);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) buf[i] = compute_t<T>(x[i * st]);
  }
}

// n computed values into o (stride st) as T; the 16-bit floats convert whole runs and
// scatter their bits where o is strided.
template <typename T>
void store_chunk(const compute_t<T>* buf, T* o, int64_t st, int64_t n) {
  if constexpr (is_half_v<T>) {
    auto* bits = reinterpret_cast<uint16_t*>(o);
    if (st == 1) return f32_to_half(T{}, buf, bits, n);
    uint16_t run[kChunk];
    for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
      const int64_t m = std::min(kChunk, n - i0);
      f32_to_half(T{}, buf + i0, run, m);
      for (int64_t i = 0; i < m; ++i) bits[(i0 + i) * st] = run[i];
    }
  } else {
    for (int64_t i = 0; i < n; ++i) o[i * st] = T(buf[i]);
  }
}

// out = g(a) for a 16-bit float T: g maps a whole chunk, g(const C* in, R* out, m), in
// place allowed; R is C (stored back as Out = T) or a predicate's uint8 (stored as is).
template <typename T, typename Out, typename G>
void map1_chunked(const T* in, const Layout& src, Out* out, const Layout& dst, G g) {
  using C = compute_t<T>;
  walk<2>(dst.shape(), {&src, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    C x[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      load_chunk(in + off[0] + i * st[0], st[0], x, m);
      if constexpr (std::is_same_v<Out, T>) {
        g(x, x, m);
        store_chunk(x, out + off[1] + i * st[1], st[1], m);
      } else {
        Out r[kChunk];
        g(x, r, m);
        for (int64_t j = 0; j < m; ++j) out[off[1] + (i + j) * st[1]] = r[j];
      }
    }
  });
}

// bfloat16 runs with the op fused between the conversions, one pass: both operands dense,
// or one a broadcast value (kA, kB: the operand steps; 0 or 1).
EMBER_CPU_LEVELS(template <int kA EMBER_COMMA int kB EMBER_COMMA typename G>,
                 <kA EMBER_COMMA kB>, fused2_bf16,
                 (G g, const uint16_t* a, const uint16_t* b, uint16_t* o, int64_t n),
                 (g, a, b, o, n), {
                   for (int64_t j = 0; j < n; ++j)
                     o[j] = bf16::from_float(
                         float(g(bf16::to_float(a[j * kA]), bf16::to_float(b[j * kB]))));
                 })

// An op whose body is plain arithmetic on its operands (+, -, *, /): it applies as well
// to whole registers of floats (GCC's vector types), so float16 runs can convert, compute
// and convert back in registers (fused2_f16). Ops built from branches or library calls
// are not marked and take the chunked path.
template <typename G>
struct LaneWise {
  G g;
  template <typename X>
  auto operator()(X x, X y) const {
    return g(x, y);
  }
};
template <typename G>
LaneWise(G) -> LaneWise<G>;
template <typename G>
inline constexpr bool is_lane_wise_v = false;
template <typename G>
inline constexpr bool is_lane_wise_v<LaneWise<G>> = true;

#ifdef EMBER_CPU_X86
// float16 runs with a lane-wise op between the F16C conversions, one pass in registers:
// both operands dense, or one a broadcast value (kA, kB: the operand steps; 0 or 1). The
// results are those of the chunked path bit for bit: the same conversions (rounding to
// nearest even), the op in float between. Sixteen lanes on AVX-512, the tail masked.
template <int kA, int kB, typename G>
EMBER_CPU_V4 void fused2_f16_v4(G g, const uint16_t* a, const uint16_t* b, uint16_t* o,
                                int64_t n) {
  __m512 x = _mm512_set1_ps(f16::to_float(a[0])), y = _mm512_set1_ps(f16::to_float(b[0]));
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    if constexpr (kA) x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + j)));
    if constexpr (kB) y = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + j),
                        _mm512_cvtps_ph(g(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  if (j < n) {
    const __mmask16 m = __mmask16((1u << (n - j)) - 1);
    if constexpr (kA) x = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, a + j));
    if constexpr (kB) y = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, b + j));
    _mm256_mask_storeu_epi16(o + j, m, _mm512_cvtps_ph(g(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
}

// Eight lanes with AVX2 and F16C, the tail through the scalar conversions.
template <int kA, int kB, typename G>
EMBER_CPU_V3 void fused2_f16_v3(G g, const uint16_t* a, const uint16_t* b, uint16_t* o,
                                int64_t n) {
  __m256 x = _mm256_set1_ps(f16::to_float(a[0])), y = _mm256_set1_ps(f16::to_float(b[0]));
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    if constexpr (kA) x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + j)));
    if constexpr (kB) y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + j)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + j),
                     _mm256_cvtps_ph(g(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; j < n; ++j)
    o[j] = f16::from_float(g(f16::to_float(a[j * kA]), f16::to_float(b[j * kB])));
}
#endif

// Runs fused2_f16 where this CPU has the conversions and the run's layout is one it takes
// (out dense; each operand dense or one value, not both one value); false where not.
template <typename G>
bool fused2_f16(G g, int64_t sa, int64_t sb, const uint16_t* a, const uint16_t* b, uint16_t* o,
                int64_t n) {
#ifdef EMBER_CPU_X86
  const int level = cpu_level();
  const auto run = [&](auto fa, auto fb) {
    constexpr int kA = decltype(fa)::value, kB = decltype(fb)::value;
    if (sa != kA || sb != kB) return false;
    level == 2 ? fused2_f16_v4<kA, kB>(g, a, b, o, n) : fused2_f16_v3<kA, kB>(g, a, b, o, n);
    return true;
  };
  using One = std::integral_constant<int, 1>;
  using Zero = std::integral_constant<int, 0>;
  return level > 0 && (run(One{}, One{}) || run(One{}, Zero{}) || run(Zero{}, One{}));
#else
  return false;
#endif
}

// out = g(a, b) elementwise for a 16-bit float T; g(C, C) gives C (stored as T) or bool
// (a predicate's uint8).
template <typename T, typename Out, typename G>
void map2_chunked(const T* a, const Layout& la, const T* b, const Layout& lb, Out* out,
                  const Layout& dst, G g) {
  using C = compute_t<T>;
  walk2(a, la, b, lb, out, dst,
        [&](const T* pa, int64_t sa, const T* pb, int64_t sb, Out* po, int64_t so, int64_t n) {
          if constexpr (std::is_same_v<T, bf16> && std::is_same_v<Out, T>) {
            const auto* ua = reinterpret_cast<const uint16_t*>(pa);
            const auto* ub = reinterpret_cast<const uint16_t*>(pb);
            auto* uo = reinterpret_cast<uint16_t*>(po);
            if (so == 1 && sa == 1 && sb == 1) return fused2_bf16<1, 1>(g, ua, ub, uo, n);
            if (so == 1 && sa == 1 && sb == 0) return fused2_bf16<1, 0>(g, ua, ub, uo, n);
            if (so == 1 && sa == 0 && sb == 1) return fused2_bf16<0, 1>(g, ua, ub, uo, n);
          }
          if constexpr (std::is_same_v<T, f16> && std::is_same_v<Out, T> && is_lane_wise_v<G>) {
            if (so == 1 && fused2_f16(g, sa, sb, reinterpret_cast<const uint16_t*>(pa),
                                      reinterpret_cast<const uint16_t*>(pb),
                                      reinterpret_cast<uint16_t*>(po), n))
              return;
          }
          C x[kChunk], y[kChunk];
          for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t m = std::min(kChunk, n - i);
            load_chunk(pa + i * sa, sa, x, m);
            load_chunk(pb + i * sb, sb, y, m);
            if constexpr (std::is_same_v<Out, T>) {
              each2(g, x, y, m);
              store_chunk(x, po + i * so, so, m);
            } else {
              Out* o = po + i * so;
              for (int64_t j = 0; j < m; ++j) o[j * so] = Out(g(x[j], y[j]));
            }
          }
        });
}

}  // namespace ember::cpu
