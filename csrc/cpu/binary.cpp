// Binary arithmetic and comparisons with broadcasting (inputs arrive already broadcast):
// one functor per row of the op table (core/ops.def). Comparisons give uint8 (1 true,
// 0 false); NaN compares unequal to everything.
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

template <typename C>
C true_or_floor_div(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    return x / y;
  else
    return int_div(x, y);
}

template <typename C>
C float_or_int_pow(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    return std::pow(x, y);
  else
    return int_pow(x, y);
}

// ---- the ops, on the compute type; comparisons give bool

#define EMBER_CPU_OP2(Name, R, expr)  \
  struct Name {                       \
    template <typename C>             \
    auto operator()(C x, C y) const { \
      return R(expr);                 \
    }                                 \
  };
EMBER_CPU_OP2(Add, C, wrap_add(x, y))
EMBER_CPU_OP2(Sub, C, wrap_sub(x, y))
EMBER_CPU_OP2(Mul, C, wrap_mul(x, y))
EMBER_CPU_OP2(Div, C, true_or_floor_div(x, y))
EMBER_CPU_OP2(Pow, C, float_or_int_pow(x, y))
EMBER_CPU_OP2(Maximum, C, nan_max(x, y))
EMBER_CPU_OP2(Minimum, C, nan_min(x, y))
EMBER_CPU_OP2(Eq, bool, x == y)
EMBER_CPU_OP2(Ne, bool, x != y)
EMBER_CPU_OP2(Lt, bool, x < y)
EMBER_CPU_OP2(Le, bool, x <= y)
EMBER_CPU_OP2(Gt, bool, x > y)
EMBER_CPU_OP2(Ge, bool, x >= y)
#undef EMBER_CPU_OP2

// Out is T for arithmetic, uint8 for comparisons (the Predicate class).
template <typename Op, OpClass cls, typename T>
void apply(const T* a, const Layout& la, const BackendStorage& rhs, const Layout& lb,
           BackendStorage& dst, const Layout& dl) {
  using C = compute_t<T>;
  using Out = std::conditional_t<cls == OpClass::Predicate, uint8_t, T>;
  if constexpr (!op_takes<cls, T>())
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CPU kernel");
  else
    map2(a, la, as_cpu(rhs).ptr<T>(), lb, as_cpu(dst).ptr<Out>(), dl,
         [](T x, T y) { return Out(Op()(C(x), C(y))); });
}

// The op's row applied on T: one switch per enum, its cases generated from ops.def.
template <typename T, typename OpEnum>
void apply_row(OpEnum op, const T* a, const Layout& la, const BackendStorage& rhs, const Layout& lb,
               BackendStorage& dst, const Layout& dl) {
#define EMBER_ROW(Enum, name, cls) \
  case OpEnum::Enum: return apply<Enum, OpClass::cls>(a, la, rhs, lb, dst, dl);
  if constexpr (std::is_same_v<OpEnum, BinaryOp>) {
    switch (op) {
#define EMBER_BINARY EMBER_ROW
#include "core/ops.def"
    }
  } else {
    switch (op) {
#define EMBER_CMP EMBER_ROW
#include "core/ops.def"
    }
  }
#undef EMBER_ROW
}

template <typename OpEnum>
void run(OpEnum op, const CpuStorage& lhs, const Layout& la, const BackendStorage& rhs,
         const Layout& lb, BackendStorage& dst, const Layout& dl) {
  dispatch_dtype(lhs.dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_row(op, lhs.ptr<T>(), la, rhs, lb, dst, dl);
  });
}

}  // namespace

void CpuStorage::binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                        const Layout& rhs_layout, BackendStorage& dst,
                        const Layout& dst_layout) const {
  run(op, *this, lhs, rhs, rhs_layout, dst, dst_layout);
}

void CpuStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                     const Layout& rhs_layout, BackendStorage& dst,
                     const Layout& dst_layout) const {
  run(op, *this, lhs, rhs, rhs_layout, dst, dst_layout);
}

}  // namespace ember::cpu
