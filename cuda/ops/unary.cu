// Unary math, clamp and affine: one functor per row of the op table (core/ops.def),
// applied on the compute type (float for the 16-bit floats), as the CPU does.
#include "elementwise.cuh"

namespace ember::cuda {

namespace {

template <typename C>
constexpr bool is_real_v = std::is_floating_point_v<C>;

// float and double overloads of the math library, by one name each
#define EMBER_CUDA_MATH(name, f32, f64)              \
  __device__ __forceinline__ float name(float x) {   \
    return f32(x);                                   \
  }                                                  \
  __device__ __forceinline__ double name(double x) { \
    return f64(x);                                   \
  }
EMBER_CUDA_MATH(m_exp, expf, exp)
EMBER_CUDA_MATH(m_expm1, expm1f, expm1)
EMBER_CUDA_MATH(m_log, logf, log)
EMBER_CUDA_MATH(m_log1p, log1pf, log1p)
EMBER_CUDA_MATH(m_sqrt, sqrtf, sqrt)
EMBER_CUDA_MATH(m_sin, sinf, sin)
EMBER_CUDA_MATH(m_cos, cosf, cos)
EMBER_CUDA_MATH(m_tan, tanf, tan)
EMBER_CUDA_MATH(m_tanh, tanhf, tanh)
EMBER_CUDA_MATH(m_erf, erff, erf)
EMBER_CUDA_MATH(m_floor, floorf, floor)
EMBER_CUDA_MATH(m_ceil, ceilf, ceil)
EMBER_CUDA_MATH(m_rint, rintf, rint)  // half to even, as numpy and PyTorch
EMBER_CUDA_MATH(m_trunc, truncf, trunc)
EMBER_CUDA_MATH(m_fabs, fabsf, fabs)
#undef EMBER_CUDA_MATH

// ---- the ops: operator()(C) on the compute type C of every dtype their class takes

struct Neg {
  template <typename C>
  __device__ C operator()(C x) const {
    return wrap_sub(C(0), x);  // wraps on integers, as numpy
  }
};
struct Abs {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (is_real_v<C>)
      return m_fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrap_sub(C(0), x) : x;
    else
      return x;
  }
};
struct Sqr {
  template <typename C>
  __device__ C operator()(C x) const {
    return wrap_mul(x, x);
  }
};
struct Relu {
  template <typename C>
  __device__ C operator()(C x) const {
    return x > C(0) || x != x ? x : C(0);  // NaN stays
  }
};
struct BitwiseNot {  // integers only: core computes ~ of bool as t == 0
  template <typename C>
  __device__ C operator()(C x) const {
    return C(~x);
  }
};
struct Sign {  // NaN stays NaN, as numpy (PyTorch gives 0); both zeros give +0
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x > C(0) ? C(1) : C(0);
    else
      return x > C(0) ? C(1) : x < C(0) ? C(-1) : x == C(0) ? C(0) : x;
  }
};
// fn on floats, `on_integers` otherwise: integers are integral already and never NaN.
#define EMBER_CUDA_REAL_OP(Name, R, fn, on_integers) \
  struct Name {                                      \
    template <typename C>                            \
    __device__ R operator()(C x) const {             \
      if constexpr (is_real_v<C>)                    \
        return fn;                                   \
      else                                           \
        return on_integers;                          \
    }                                                \
  };
EMBER_CUDA_REAL_OP(Floor, C, m_floor(x), x)
EMBER_CUDA_REAL_OP(Ceil, C, m_ceil(x), x)
EMBER_CUDA_REAL_OP(Round, C, m_rint(x), x)
EMBER_CUDA_REAL_OP(Trunc, C, m_trunc(x), x)
EMBER_CUDA_REAL_OP(IsNan, bool, x != x, false)
EMBER_CUDA_REAL_OP(IsInf, bool, m_fabs(x) == C(INFINITY), false)
EMBER_CUDA_REAL_OP(IsFinite, bool, m_fabs(x) < C(INFINITY), true)
#undef EMBER_CUDA_REAL_OP

// Float-only ops (is_real_v<C> always holds for them).
#define EMBER_CUDA_FLOAT_OP(Name, expr)  \
  struct Name {                          \
    template <typename C>                \
    __device__ C operator()(C x) const { \
      return expr;                       \
    }                                    \
  };
EMBER_CUDA_FLOAT_OP(Exp, m_exp(x))
EMBER_CUDA_FLOAT_OP(Expm1, m_expm1(x))
EMBER_CUDA_FLOAT_OP(Log, m_log(x))
EMBER_CUDA_FLOAT_OP(Log1p, m_log1p(x))
EMBER_CUDA_FLOAT_OP(Sqrt, m_sqrt(x))
EMBER_CUDA_FLOAT_OP(Rsqrt, C(1) / m_sqrt(x))
EMBER_CUDA_FLOAT_OP(Recip, C(1) / x)
EMBER_CUDA_FLOAT_OP(Sin, m_sin(x))
EMBER_CUDA_FLOAT_OP(Cos, m_cos(x))
EMBER_CUDA_FLOAT_OP(Tan, m_tan(x))
EMBER_CUDA_FLOAT_OP(Tanh, m_tanh(x))
EMBER_CUDA_FLOAT_OP(Erf, m_erf(x))
// the exact (erf) form, as PyTorch's default; at -inf gelu and silu give -0 (not NaN)
EMBER_CUDA_FLOAT_OP(Gelu, x == -C(INFINITY)
                              ? C(-0.0)
                              : C(0.5) * x * (C(1) + m_erf(x * C(0.7071067811865476))))
// gelu's tanh approximation, PyTorch's formula
EMBER_CUDA_FLOAT_OP(GeluTanh,
                    x == -C(INFINITY)
                        ? C(-0.0)
                        : C(0.5) * x *
                              (C(1) + m_tanh(C(0.7978845608028654) * (x + C(0.044715) * x * x * x))))
EMBER_CUDA_FLOAT_OP(Silu, x == -C(INFINITY) ? C(-0.0) : x / (C(1) + m_exp(-x)))
EMBER_CUDA_FLOAT_OP(Sigmoid, C(1) / (C(1) + m_exp(-x)))
#undef EMBER_CUDA_FLOAT_OP

// Op on T through its compute type; predicates give uint8 (1 true, 0 false).
template <typename Op, typename T, typename Out>
struct OnElement {
  __device__ Out operator()(T x) const {
    if constexpr (std::is_same_v<decltype(Op()(to_c(x))), bool>)
      return Out(Op()(to_c(x)) ? 1 : 0);
    else
      return from_c<Out>(Op()(to_c(x)));
  }
};

template <typename Op, OpClass cls, typename T>
void apply(const char* name, const CudaStorage& s, const Layout& src, BackendStorage& dst,
           const Layout& dl) {
  if constexpr (!takes<cls, T>()) {
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CUDA kernel");
  } else {
    using Out = std::conditional_t<cls == OpClass::Predicate, uint8_t, T>;
    launch_map1(name, s.cuda(), s.ptr<T>(), src, as_cuda(dst).ptr<Out>(), dl,
                OnElement<Op, T, Out>{});
  }
}

// clamp compares in double as the bounds are doubles; NaN stays NaN.
template <typename T>
struct Clamp {
  double lo, hi;
  T lo_t, hi_t;
  __device__ T operator()(T x) const {
    const double v = double(to_c(x));
    if (v != v) return x;
    return v < lo ? lo_t : v > hi ? hi_t : x;
  }
};

template <typename T>
struct AffineOp {
  compute_t<T> mul, add;
  double dmul, dadd;
  __device__ T operator()(T x) const {
    if constexpr (is_float_v<T>)
      return from_c<T>(to_c(x) * mul + add);
    else
      return saturate_from_double<T>(double(x) * dmul + dadd);
  }
};

}  // namespace

void CudaStorage::unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,
                        const Layout& dst_layout) const {
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
#define EMBER_UNARY(Enum, name, cls) \
  case UnaryOp::Enum:                \
    return apply<Enum, OpClass::cls, T>(#name, *this, src, dst, dst_layout);
#define EMBER_UNARY_PARAMS(Enum, name, cls)
#include "core/ops.def"
      case UnaryOp::Clamp: {
        Clamp<T> f{p.lo, p.hi, host_value<T>(p.lo), host_value<T>(p.hi)};
        return launch_map1("clamp", cuda(), ptr<T>(), src, as_cuda(dst).ptr<T>(), dst_layout, f);
      }
    }
  });
}

void CudaStorage::affine(const Layout& src, double mul, double add, BackendStorage& dst,
                         const Layout& dst_layout) const {
  dispatch(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    AffineOp<T> f{C(mul), C(add), mul, add};
    launch_map1("affine", cuda(), ptr<T>(), src, as_cuda(dst).ptr<T>(), dst_layout, f);
  });
}

}  // namespace ember::cuda
