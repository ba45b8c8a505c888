// Unary math, clamp and affine.
#include <cmath>

#include "core/host_cast.h"
#include "cpu_backend.h"
#include "elementwise.h"
#include "vec_math.h"

namespace ember::cpu {

namespace {

// exp of dense float runs goes to the vectorised kernel; strided runs to libm.
void exp_float(const float* in, const Layout& src, float* out, const Layout& dst) {
  walk<2>(dst.shape(), {&src, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    if (st[0] == 1 && st[1] == 1) return exp_f32(in + off[0], out + off[1], n);
    for (int64_t i = 0; i < n; ++i) out[off[1] + i * st[1]] = std::exp(in[off[0] + i * st[0]]);
  });
}

template <typename T>
void run_unary(UnaryOp op, const UnaryParams& p, const T* in, const Layout& src, T* out,
               const Layout& dst) {
  using C = compute_t<T>;
  auto go = [&](auto f) { map1(in, src, out, dst, [f](T x) { return T(f(C(x))); }); };
  if constexpr (std::is_same_v<T, float>) {
    if (op == UnaryOp::Exp) return exp_float(in, src, out, dst);
  }
  if constexpr (is_float_v<T>) {
    switch (op) {
      case UnaryOp::Exp: return go([](C x) { return std::exp(x); });
      case UnaryOp::Log: return go([](C x) { return std::log(x); });
      case UnaryOp::Sqrt: return go([](C x) { return std::sqrt(x); });
      case UnaryOp::Recip: return go([](C x) { return C(1) / x; });
      case UnaryOp::Sin: return go([](C x) { return std::sin(x); });
      case UnaryOp::Cos: return go([](C x) { return std::cos(x); });
      case UnaryOp::Tanh: return go([](C x) { return std::tanh(x); });
      case UnaryOp::Gelu:  // the exact (erf) form, as PyTorch's default
        return go([](C x) { return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476))); });
      case UnaryOp::Silu: return go([](C x) { return x / (C(1) + std::exp(-x)); });
      case UnaryOp::Sigmoid: return go([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      case UnaryOp::Abs: return go([](C x) { return std::fabs(x); });
      case UnaryOp::Relu:
        return go([](C x) { return x > C(0) || x != x ? x : C(0); });  // NaN stays
      default: break;
    }
  } else {
    switch (op) {
      case UnaryOp::Abs:
        if constexpr (std::is_signed_v<T>)
          return go([](C x) { return x < 0 ? wrap_sub(C(0), x) : x; });
        return go([](C x) { return x; });
      case UnaryOp::Relu: return go([](C x) { return x > C(0) ? x : C(0); });
      default: break;
    }
  }
  switch (op) {
    case UnaryOp::Neg: return go([](C x) { return wrap_sub(C(0), x); });  // wraps, as numpy
    case UnaryOp::Sqr: return go([](C x) { return wrap_mul(x, x); });
    case UnaryOp::Clamp: {
      double lo = p.lo, hi = p.hi;
      return map1(in, src, out, dst, [lo, hi](T x) {
        double v = double(C(x));
        if (v != v) return x;  // NaN stays NaN
        return v < lo ? saturate_cast<T>(lo) : v > hi ? saturate_cast<T>(hi) : x;
      });
    }
    default: break;
  }
  throw Error(ErrorKind::UnsupportedDType, std::string(unary_name(op)) + " has no CPU kernel for " +
                                               dtype_name(DTypeOf<T>::value));
}

}  // namespace

void CpuStorage::unary(UnaryOp op, const UnaryParams& p, const Layout& src, BackendStorage& dst,
                       const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    run_unary<T>(op, p, ptr<T>(), src, as_cpu(dst).ptr<T>(), dst_layout);
  });
}

void CpuStorage::affine(const Layout& src, double mul, double add, BackendStorage& dst,
                        const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    using C = compute_t<T>;
    if constexpr (is_float_v<T>) {
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
