// Binary arithmetic with broadcasting (inputs arrive already broadcast).
#include <cmath>
#include <limits>

#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

// numpy's floor division; a zero divisor gives 0 instead of a hardware trap.
template <typename T>
T int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == -1) return a;  // wraps, as numpy
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return a / b;
  }
}

template <typename T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = U(base);  // unsigned arithmetic: overflow wraps without UB
  for (U e = U(exp); e; e >>= 1) {
    if (e & 1) result = wrap_mul(result, b);
    b = wrap_mul(b, b);
  }
  return T(result);
}

template <typename C>
C nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}

template <typename C>
C nan_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

template <typename T>
void run_binary(BinaryOp op, const T* a, const Layout& la, const T* b, const Layout& lb, T* out,
                const Layout& dst) {
  using C = compute_t<T>;
  auto go = [&](auto f) {
    map2(a, la, b, lb, out, dst, [f](T x, T y) { return T(f(C(x), C(y))); });
  };
  switch (op) {
    case BinaryOp::Add: return go([](C x, C y) { return wrap_add(x, y); });
    case BinaryOp::Sub: return go([](C x, C y) { return wrap_sub(x, y); });
    case BinaryOp::Mul: return go([](C x, C y) { return wrap_mul(x, y); });
    case BinaryOp::Div:
      if constexpr (is_float_v<T>)
        return go([](C x, C y) { return x / y; });
      else
        return go([](C x, C y) { return int_div(x, y); });
    case BinaryOp::Pow:
      if constexpr (is_float_v<T>)
        return go([](C x, C y) { return std::pow(x, y); });
      else
        return go([](C x, C y) { return int_pow(x, y); });
    case BinaryOp::Maximum: return go([](C x, C y) { return nan_max(x, y); });
    case BinaryOp::Minimum: return go([](C x, C y) { return nan_min(x, y); });
  }
}

}  // namespace

void CpuStorage::binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                        const Layout& rhs_layout, BackendStorage& dst,
                        const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    run_binary<T>(op, ptr<T>(), lhs, as_cpu(rhs).ptr<T>(), rhs_layout, as_cpu(dst).ptr<T>(),
                  dst_layout);
  });
}

}  // namespace ember::cpu
