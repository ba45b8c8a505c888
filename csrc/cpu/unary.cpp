// Unary math, clamp and affine: one functor per row of the op table (core/ops.def),
// applied on the compute type (float for the 16-bit floats, as everywhere on the CPU).
#include <cmath>

#include "core/host_cast.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_fn.h"
#include "vec_math.h"

namespace ember::cpu {

namespace {

template <typename C>
constexpr bool is_real_v = std::is_floating_point_v<C>;

// ---- the ops: operator()(C) on the compute type C of every dtype their class takes

struct Neg {
  template <typename C>
  C operator()(C x) const {
    return wrap_sub(C(0), x);  // wraps on integers, as numpy
  }
};
struct Abs {
  template <typename C>
  C operator()(C x) const {
    if constexpr (is_real_v<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrap_sub(C(0), x) : x;
    else
      return x;
  }
};
struct Sqr {
  template <typename C>
  C operator()(C x) const {
    return wrap_mul(x, x);
  }
};
struct Relu {
  template <typename C>
  C operator()(C x) const {
    return x > C(0) || x != x ? x : C(0);  // NaN stays
  }
};
struct Sign {  // NaN stays NaN, as numpy (PyTorch gives 0); both zeros give +0
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x > C(0) ? C(1) : C(0);
    else
      return x > C(0) ? C(1) : x < C(0) ? C(-1) : x == C(0) ? C(0) : x;
  }
};
// fn on floats, `on_integers` otherwise: integers are integral already (the rounding
// ops give them back unchanged) and never NaN or infinite (the predicates).
#define EMBER_CPU_REAL_OP(Name, R, fn, on_integers) \
  struct Name {                                     \
    template <typename C>                           \
    R operator()(C x) const {                       \
      if constexpr (is_real_v<C>)                   \
        return fn(x);                               \
      else                                          \
        return on_integers;                         \
    }                                               \
  };
EMBER_CPU_REAL_OP(Floor, C, std::floor, x)
EMBER_CPU_REAL_OP(Ceil, C, std::ceil, x)
EMBER_CPU_REAL_OP(Round, C, std::nearbyint, x)  // half to even, as numpy and PyTorch
EMBER_CPU_REAL_OP(Trunc, C, std::trunc, x)
EMBER_CPU_REAL_OP(IsNan, bool, std::isnan, false)
EMBER_CPU_REAL_OP(IsInf, bool, std::isinf, false)
EMBER_CPU_REAL_OP(IsFinite, bool, std::isfinite, true)
#undef EMBER_CPU_REAL_OP

struct BitwiseNot {  // integers only: core computes ~ of bool as t == 0
  template <typename C>
  C operator()(C x) const {
    return C(~x);
  }
};

// Float-only ops (is_real_v<C> always holds for them).
#define EMBER_CPU_FLOAT_OP(Name, expr) \
  struct Name {                        \
    template <typename C>              \
    C operator()(C x) const {          \
      return expr;                     \
    }                                  \
  };
EMBER_CPU_FLOAT_OP(Exp0, std::exp(x))
EMBER_CPU_FLOAT_OP(Sqrt, std::sqrt(x))
EMBER_CPU_FLOAT_OP(Rsqrt, C(1) / std::sqrt(x))
EMBER_CPU_FLOAT_OP(Recip, C(1) / x)
// float32 through vec_fn.h (vectorised runs), float64 through libm. -inf * 0 would be
// NaN: at -inf gelu and silu tend to -0 (PyTorch's result).
#define EMBER_CPU_VF_OP(Name, vf_fn, expr) \
  struct Name {                            \
    template <typename C>                  \
    C operator()(C x) const {              \
      if constexpr (std::is_same_v<C, float>) \
        return vf::vf_fn(x);               \
      else                                 \
        return expr;                       \
    }                                      \
  };
EMBER_CPU_VF_OP(Log0, log, std::log(x))
EMBER_CPU_VF_OP(Expm1, expm1, std::expm1(x))
EMBER_CPU_VF_OP(Log1p, log1p, std::log1p(x))
EMBER_CPU_VF_OP(Tanh0, tanh, std::tanh(x))
EMBER_CPU_VF_OP(Erf0, erf, std::erf(x))
// the exact (erf) form, as PyTorch's default
EMBER_CPU_VF_OP(Gelu0, gelu,
                x == -INFINITY ? C(-0.0) : C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476))))
// gelu's tanh approximation, PyTorch's formula: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
EMBER_CPU_VF_OP(GeluTanh, gelu_tanh,
                x == -INFINITY
                    ? C(-0.0)
                    : C(0.5) * x *
                          (C(1) + std::tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x))))
EMBER_CPU_VF_OP(Silu, silu, x == -INFINITY ? C(-0.0) : x / (C(1) + std::exp(-x)))
EMBER_CPU_VF_OP(Sigmoid, sigmoid, C(1) / (C(1) + std::exp(-x)))
#undef EMBER_CPU_VF_OP
// exp, log, gelu, tanh and erf runs of float32 take vec_math's kernels (16 lanes on
// AVX-512), and dense bfloat16 runs their bf16 forms (converted in registers)
#define EMBER_CPU_VEC_RUNS(Name, Base, fn)                                      \
  struct Name : Base {                                                          \
    static void run(const float* x, float* r, int64_t m) { fn##_f32(x, r, m); } \
    static void run_bf16(const uint16_t* x, uint16_t* r, int64_t m) {          \
      fn##_bf16(x, r, m);                                                       \
    }                                                                           \
  };
EMBER_CPU_VEC_RUNS(Exp, Exp0, exp)
EMBER_CPU_VEC_RUNS(Tanh, Tanh0, tanh)
EMBER_CPU_VEC_RUNS(Erf, Erf0, erf)
EMBER_CPU_VEC_RUNS(Log, Log0, log)
EMBER_CPU_VEC_RUNS(Gelu, Gelu0, gelu)
#undef EMBER_CPU_VEC_RUNS

// sin, cos and tan: vec_fn.h's reduction holds for |x| <= kTrigMax; a chunk with a
// larger value (or inf or NaN) goes to libm whole (`large`).
#define EMBER_CPU_TRIG_OP(Name, fn)   \
  struct Name {                       \
    template <typename C>             \
    C operator()(C x) const {         \
      if constexpr (std::is_same_v<C, float>) \
        return vf::fn(x);             \
      else                            \
        return std::fn(x);            \
    }                                 \
    static float large(float x) { return std::fn(x); } \
  };
EMBER_CPU_TRIG_OP(Sin, sin)
EMBER_CPU_TRIG_OP(Cos, cos)
EMBER_CPU_TRIG_OP(Tan, tan)
#undef EMBER_CPU_TRIG_OP

template <typename Op, typename = void>
struct has_run : std::false_type {};
template <typename Op>
struct has_run<Op, std::void_t<decltype(&Op::run)>> : std::true_type {};

template <typename Op, typename = void>
struct has_run_bf16 : std::false_type {};
template <typename Op>
struct has_run_bf16<Op, std::void_t<decltype(&Op::run_bf16)>> : std::true_type {};

template <typename Op, typename = void>
struct has_large : std::false_type {};
template <typename Op>
struct has_large<Op, std::void_t<decltype(Op::large(0.0f))>> : std::true_type {};

// Whether any of x[0..m) is outside [-kTrigMax, kTrigMax] (NaN included): a reduction the
// compiler vectorises.
bool beyond_trig(const float* x, int64_t m) {
  int any = 0;
  for (int64_t j = 0; j < m; ++j) any |= !(std::fabs(x[j]) <= vf::kTrigMax);
  return any != 0;
}

// r = Op(x) over m floats, in place allowed, large arguments through libm.
template <typename Op>
void float_chunk(const float* x, float* r, int64_t m) {
  if constexpr (has_run<Op>::value) return Op::run(x, r, m);
  if constexpr (has_large<Op>::value) {
    if (beyond_trig(x, m)) {
      for (int64_t j = 0; j < m; ++j) r[j] = Op::large(x[j]);
      return;
    }
  }
  each1(Op(), x, r, m);
}
#undef EMBER_CPU_FLOAT_OP


// Op over every run of src into dst (same shape): `dense(in, out, n)` where both are
// dense, else through a float buffer in chunks (strided loads and stores around
// float_chunk, which is also what `dense` computes).
template <typename Op, typename T, typename Dense>
void op_runs(const T* in, const Layout& src, T* out, const Layout& dst, Dense dense) {
  walk<2>(dst.shape(), {&src, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    if (st[0] == 1 && st[1] == 1) return dense(in + off[0], out + off[1], n);
    float x[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      load_chunk(in + off[0] + i * st[0], st[0], x, m);
      float_chunk<Op>(x, x, m);
      store_chunk(x, out + off[1] + i * st[1], st[1], m);
    }
  });
}

// float32: dense runs a chunk at a time (each1 is compiled for each ISA level).
template <typename Op>
void float_runs(const float* in, const Layout& src, float* out, const Layout& dst) {
  op_runs<Op>(in, src, out, dst, [](const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; i += kChunk) float_chunk<Op>(x + i, y + i, std::min(kChunk, n - i));
  });
}

// bfloat16 where Op has run_bf16 (widen, the float32 run, round; in registers).
template <typename Op>
void bf16_runs(const bf16* in, const Layout& src, bf16* out, const Layout& dst) {
  op_runs<Op>(in, src, out, dst, [](const bf16* x, bf16* y, int64_t n) {
    Op::run_bf16(reinterpret_cast<const uint16_t*>(x), reinterpret_cast<uint16_t*>(y), n);
  });
}

// Applies Op to every element; core checked the dtype against the op's class, so the
// classes that exclude T are never instantiated.
template <typename Op, OpClass cls, typename T>
void apply(const T* in, const Layout& src, BackendStorage& dst, const Layout& dst_layout) {
  using C = compute_t<T>;
  if constexpr (!op_takes<cls, T>()) {
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CPU kernel");
  } else if constexpr (is_half_v<T> && cls == OpClass::Predicate) {
    map1_chunked(in, src, as_cpu(dst).ptr<uint8_t>(), dst_layout,
                 [](const C* x, uint8_t* r, int64_t m) { each1(Op(), x, r, m); });
  } else if constexpr (std::is_same_v<T, bf16> && has_run_bf16<Op>::value) {
    bf16_runs<Op>(in, src, as_cpu(dst).ptr<bf16>(), dst_layout);
  } else if constexpr (is_half_v<T>) {
    map1_chunked(in, src, as_cpu(dst).ptr<T>(), dst_layout, [](const C* x, C* r, int64_t m) {
      float_chunk<Op>(x, r, m);
    });
  } else if constexpr (cls == OpClass::Predicate) {
    map1(in, src, as_cpu(dst).ptr<uint8_t>(), dst_layout,
         [](T x) { return uint8_t(Op()(C(x)) ? 1 : 0); });
  } else if constexpr (std::is_same_v<T, float>) {
    float_runs<Op>(in, src, as_cpu(dst).ptr<float>(), dst_layout);
  } else {
    map1(in, src, as_cpu(dst).ptr<T>(), dst_layout, [](T x) { return T(Op()(C(x))); });
  }
}

// clamp compares in double as the bounds are doubles; NaN stays NaN.
template <typename T>
void clamp(const T* in, const Layout& src, T* out, const Layout& dst, double lo, double hi) {
  using C = compute_t<T>;
  map1(in, src, out, dst, [lo, hi](T x) {
    double v = double(C(x));
    if (v != v) return x;
    return v < lo ? saturate_cast<T>(lo) : v > hi ? saturate_cast<T>(hi) : x;
  });
}

}  // namespace

void CpuStorage::unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,
                       const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
#define EMBER_UNARY(Enum, name, cls) \
  case UnaryOp::Enum:                \
    return apply<Enum, OpClass::cls>(ptr<T>(), src, dst, dst_layout);
#define EMBER_UNARY_PARAMS(Enum, name, cls)
#include "core/ops.def"
      case UnaryOp::Clamp:
        return clamp(ptr<T>(), src, as_cpu(dst).ptr<T>(), dst_layout, p.lo, p.hi);
    }
  });
}

void CpuStorage::affine(const Layout& src, double mul, double add, BackendStorage& dst,
                        const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (is_half_v<T>) {
      const C m = C(mul), a = C(add);
      map1_chunked(ptr<T>(), src, as_cpu(dst).ptr<T>(), dst_layout,
                   [m, a](const C* x, C* r, int64_t k) {
                     each1([m, a](C v) { return v * m + a; }, x, r, k);
                   });
    } else if constexpr (is_float_v<T>) {
      C m = C(mul), a = C(add);
      map1(ptr<T>(), src, as_cpu(dst).ptr<T>(), dst_layout,
           [m, a](T x) { return T(C(x) * m + a); });
    } else {
      map1(ptr<T>(), src, as_cpu(dst).ptr<T>(), dst_layout,
           [mul, add](T x) { return saturate_cast<T>(double(x) * mul + add); });
    }
  });
}

}  // namespace ember::cpu
