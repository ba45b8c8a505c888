// Binary arithmetic and comparisons with broadcasting (inputs arrive already broadcast):
// one functor per row of the op table (core/ops.def). Comparisons give uint8 (1 true,
// 0 false); NaN compares unequal to everything. Division follows numpy and Python:
// `div` is true division (core casts integers to float32 first), floor_divide and
// remainder round toward -inf, trunc_divide toward zero.
#include <atomic>
#include <cmath>

#include "cpu_backend.h"
#include "elementwise.h"

namespace ember::cpu {

namespace {

// Integer division, the divisor already known nonzero: Python's floor (toward -inf),
// its remainder (the sign of the divisor), and C's truncation. INT64_MIN / -1 wraps to
// INT64_MIN as in numpy, never a hardware trap.
template <typename T>
T int_floor_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_sub(T(0), a);
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    return T(a / b);
  }
}

template <typename T>
T int_floor_mod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    return T(a % b);
  }
}

template <typename T>
T int_trunc_div(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return wrap_sub(T(0), a);
  return T(a / b);
}

// numpy's float floor_divide (npy_divmod): the quotient from fmod, so it is exact where
// floor(a / b) would round up; a zero divisor gives a / b (inf or nan).
template <typename C>
C float_floor_div(C a, C b) {
  if (b == 0) return a / b;
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(C(0), a / b);
  const C fl = std::floor(div);
  return div - fl > C(0.5) ? fl + 1 : fl;
}

// PyTorch's rounding_mode="trunc" for floats.
template <typename C>
C float_trunc_div(C a, C b) {
  return std::trunc(a / b);
}

// numpy's float remainder: the sign of the divisor, a zero result included (-0.0 for
// b < 0, where PyTorch's keeps the sign of fmod); x % 0 is nan.
template <typename C>
C float_floor_mod(C a, C b) {
  const C mod = std::fmod(a, b);
  if (b == 0) return mod;
  if (mod == 0) return std::copysign(C(0), b);
  return (b < 0) != (mod < 0) ? mod + b : mod;
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

// Floats through their functions, integers through theirs (the divisor is nonzero).
#define EMBER_CPU_DIVISION(Name, float_fn, int_fn) \
  struct Name {                                    \
    template <typename C>                          \
    C operator()(C x, C y) const {                 \
      if constexpr (std::is_floating_point_v<C>)   \
        return float_fn(x, y);                     \
      else                                         \
        return int_fn(x, y);                       \
    }                                              \
  };
EMBER_CPU_DIVISION(FloorDivide, float_floor_div, int_floor_div)
EMBER_CPU_DIVISION(Remainder, float_floor_mod, int_floor_mod)
EMBER_CPU_DIVISION(TruncDivide, float_trunc_div, int_trunc_div)
#undef EMBER_CPU_DIVISION

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
EMBER_CPU_OP2(Div, C, x / y)  // true division: floats only (ToFloat)
EMBER_CPU_OP2(Pow, C, float_or_int_pow(x, y))
EMBER_CPU_OP2(Maximum, C, nan_max(x, y))
EMBER_CPU_OP2(Minimum, C, nan_min(x, y))
EMBER_CPU_OP2(Atan2, C, std::atan2(x, y))  // floats only (ToFloat)
EMBER_CPU_OP2(BitwiseAnd, C, (x & y))      // integers and bool only (the Integer class)
EMBER_CPU_OP2(BitwiseOr, C, x | y)
EMBER_CPU_OP2(BitwiseXor, C, x ^ y)
EMBER_CPU_OP2(Eq, bool, x == y)
EMBER_CPU_OP2(Ne, bool, x != y)
EMBER_CPU_OP2(Lt, bool, x < y)
EMBER_CPU_OP2(Le, bool, x <= y)
EMBER_CPU_OP2(Gt, bool, x > y)
EMBER_CPU_OP2(Ge, bool, x >= y)
#undef EMBER_CPU_OP2

// The ops whose bodies are plain arithmetic, so they apply to registers of floats.
template <typename Op>
constexpr bool is_lane_wise_op_v = std::is_same_v<Op, Add> || std::is_same_v<Op, Sub> ||
                                   std::is_same_v<Op, Mul> || std::is_same_v<Op, Div>;

template <typename Op>
constexpr bool is_division_v = std::is_same_v<Op, FloorDivide> || std::is_same_v<Op, Remainder> ||
                               std::is_same_v<Op, TruncDivide>;

// Integer //, % and trunc division: a zero divisor writes 0 and sets a flag (a relaxed
// store on that path only: no second pass), raised as DivisionByZeroError after the loop.
template <typename Op, typename T>
void integer_division(const char* name, const T* a, const Layout& la, const T* b, const Layout& lb,
                      T* out, const Layout& dl) {
  std::atomic<bool> zero{false};
  map2(a, la, b, lb, out, dl, [&zero](T x, T y) {
    if (y == 0) {
      zero.store(true, std::memory_order_relaxed);
      return T(0);
    }
    return T(Op()(x, y));
  });
  if (zero.load(std::memory_order_relaxed)) throw_zero_division(name, DTypeOf<T>::value);
}

// Out is T for arithmetic, uint8 for comparisons (the Predicate class).
template <typename Op, OpClass cls, typename T>
void apply(const char* name, const T* a, const Layout& la, const BackendStorage& rhs,
           const Layout& lb, BackendStorage& dst, const Layout& dl) {
  using C = compute_t<T>;
  using Out = std::conditional_t<cls == OpClass::Predicate, uint8_t, T>;
  if constexpr (!op_takes<cls, T>())
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CPU kernel");
  else if constexpr (is_division_v<Op> && !is_float_v<T>)
    integer_division<Op>(name, a, la, as_cpu(rhs).ptr<T>(), lb, as_cpu(dst).ptr<T>(), dl);
  else if constexpr (is_half_v<T> && is_lane_wise_op_v<Op>)
    map2_chunked(a, la, as_cpu(rhs).ptr<T>(), lb, as_cpu(dst).ptr<Out>(), dl,
                 LaneWise{[](auto x, auto y) { return Op()(x, y); }});
  else if constexpr (is_half_v<T>)
    map2_chunked(a, la, as_cpu(rhs).ptr<T>(), lb, as_cpu(dst).ptr<Out>(), dl,
                 [](C x, C y) { return Op()(x, y); });
  else
    map2(a, la, as_cpu(rhs).ptr<T>(), lb, as_cpu(dst).ptr<Out>(), dl,
         [](T x, T y) { return Out(Op()(C(x), C(y))); });
}

// The op's row applied on T: one switch per enum, its cases generated from ops.def.
template <typename T, typename OpEnum>
void apply_row(OpEnum op, const T* a, const Layout& la, const BackendStorage& rhs, const Layout& lb,
               BackendStorage& dst, const Layout& dl) {
#define EMBER_ROW(Enum, name, cls) \
  case OpEnum::Enum: return apply<Enum, OpClass::cls>(#name, a, la, rhs, lb, dst, dl);
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
