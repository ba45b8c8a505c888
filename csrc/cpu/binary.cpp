// Binary arithmetic with broadcasting (inputs arrive already broadcast): one functor per
// row of the op table (core/ops.def).
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

// ---- the ops, on the compute type (integer / float behaviour by if constexpr)

struct Add {
  template <typename C>
  C operator()(C x, C y) const {
    return wrap_add(x, y);
  }
};
struct Sub {
  template <typename C>
  C operator()(C x, C y) const {
    return wrap_sub(x, y);
  }
};
struct Mul {
  template <typename C>
  C operator()(C x, C y) const {
    return wrap_mul(x, y);
  }
};
struct Div {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>)
      return x / y;
    else
      return int_div(x, y);
  }
};
struct Pow {
  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>)
      return std::pow(x, y);
    else
      return int_pow(x, y);
  }
};
struct Maximum {
  template <typename C>
  C operator()(C x, C y) const {
    return nan_max(x, y);
  }
};
struct Minimum {
  template <typename C>
  C operator()(C x, C y) const {
    return nan_min(x, y);
  }
};

template <typename Op, OpClass cls, typename T>
void apply(const T* a, const Layout& la, const T* b, const Layout& lb, T* out, const Layout& dst) {
  using C = compute_t<T>;
  if constexpr (!op_takes<cls, T>())
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CPU kernel");
  else
    map2(a, la, b, lb, out, dst, [](T x, T y) { return T(Op()(C(x), C(y))); });
}

}  // namespace

void CpuStorage::binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                        const Layout& rhs_layout, BackendStorage& dst,
                        const Layout& dst_layout) const {
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T* b = as_cpu(rhs).ptr<T>();
    T* out = as_cpu(dst).ptr<T>();
    switch (op) {
#define EMBER_BINARY(Enum, name, cls) \
  case BinaryOp::Enum:                \
    return apply<Enum, OpClass::cls>(ptr<T>(), lhs, b, rhs_layout, out, dst_layout);
#include "core/ops.def"
    }
  });
}

}  // namespace ember::cpu
