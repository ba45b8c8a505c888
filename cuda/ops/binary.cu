// Binary arithmetic and comparisons with broadcasting (inputs arrive already broadcast):
// one functor per row of the op table (core/ops.def), the CPU's semantics. Comparisons
// give uint8 (1 true, 0 false); NaN compares unequal to everything.
#include "elementwise.cuh"

namespace ember::cuda {

namespace {

// Integer division: a zero divisor gives 0 for //, % and trunc (numpy's value; the GPU
// cannot raise without a host wait, the CPU raises). INT64_MIN / -1 wraps, no trap.
template <typename T>
__device__ T int_floor_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_sub(T(0), a);
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    return T(a / b);
  }
}

template <typename T>
__device__ T int_floor_mod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    return T(a % b);
  }
}

template <typename T>
__device__ T int_trunc_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return wrap_sub(T(0), a);
  return T(a / b);
}

// float and double overloads of the math library, by one name each
#define EMBER_CUDA_MATH2(name, f32, f64)                       \
  __device__ __forceinline__ float name(float x, float y) {    \
    return f32(x, y);                                          \
  }                                                            \
  __device__ __forceinline__ double name(double x, double y) { \
    return f64(x, y);                                          \
  }
EMBER_CUDA_MATH2(m_pow, powf, pow)
EMBER_CUDA_MATH2(m_fmod, fmodf, fmod)
EMBER_CUDA_MATH2(m_copysign, copysignf, copysign)
EMBER_CUDA_MATH2(m_atan2, atan2f, atan2)
#undef EMBER_CUDA_MATH2
__device__ __forceinline__ float m_floor(float x) {
  return floorf(x);
}
__device__ __forceinline__ double m_floor(double x) {
  return floor(x);
}
__device__ __forceinline__ float m_trunc(float x) {
  return truncf(x);
}
__device__ __forceinline__ double m_trunc(double x) {
  return trunc(x);
}

// numpy's float floor_divide (npy_divmod): the quotient from fmod, exact where
// floor(a / b) would round up; a zero divisor gives a / b (inf or nan).
template <typename C>
__device__ C float_floor_div(C a, C b) {
  if (b == 0) return a / b;
  const C mod = m_fmod(a, b);
  C div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return m_copysign(C(0), a / b);
  const C fl = m_floor(div);
  return div - fl > C(0.5) ? fl + 1 : fl;
}

// numpy's float remainder: the sign of the divisor, a zero result included.
template <typename C>
__device__ C float_floor_mod(C a, C b) {
  const C mod = m_fmod(a, b);
  if (b == 0) return mod;
  if (mod == 0) return m_copysign(C(0), b);
  return (b < 0) != (mod < 0) ? mod + b : mod;
}

template <typename T>
__device__ T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = U(base);
  for (U e = U(exp); e; e >>= 1) {
    if (e & 1) result = U(result * b);
    b = U(b * b);
  }
  return T(result);
}

template <typename C>
__device__ C nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}

template <typename C>
__device__ C nan_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

// Floats through their functions, integers through theirs.
#define EMBER_CUDA_DIVISION(Name, float_expr, int_fn) \
  template <typename C>                               \
  __device__ C Name(C x, C y) {                       \
    if constexpr (std::is_floating_point_v<C>)        \
      return float_expr;                              \
    else                                              \
      return int_fn(x, y);                            \
  }
EMBER_CUDA_DIVISION(floor_div_op, float_floor_div(x, y), int_floor_div)
EMBER_CUDA_DIVISION(floor_mod_op, float_floor_mod(x, y), int_floor_mod)
EMBER_CUDA_DIVISION(trunc_div_op, m_trunc(x / y), int_trunc_div)
#undef EMBER_CUDA_DIVISION

template <typename C>
__device__ C pow_op(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    return m_pow(x, y);
  else
    return int_pow(x, y);
}

#define EMBER_CUDA_OP2(Name, expr)               \
  struct Name {                                  \
    template <typename C>                        \
    __device__ auto operator()(C x, C y) const { \
      return expr;                               \
    }                                            \
  };
EMBER_CUDA_OP2(Add, wrap_add(x, y))
EMBER_CUDA_OP2(Sub, wrap_sub(x, y))
EMBER_CUDA_OP2(Mul, wrap_mul(x, y))
EMBER_CUDA_OP2(Div, x / y)  // true division: floats only (ToFloat)
EMBER_CUDA_OP2(FloorDivide, floor_div_op(x, y))
EMBER_CUDA_OP2(Remainder, floor_mod_op(x, y))
EMBER_CUDA_OP2(TruncDivide, trunc_div_op(x, y))
EMBER_CUDA_OP2(Pow, pow_op(x, y))
EMBER_CUDA_OP2(Maximum, nan_max(x, y))
EMBER_CUDA_OP2(Minimum, nan_min(x, y))
EMBER_CUDA_OP2(Atan2, m_atan2(x, y))  // floats only (ToFloat)
EMBER_CUDA_OP2(BitwiseAnd, x& y)      // integers and bool only (the Integer class)
EMBER_CUDA_OP2(BitwiseOr, x | y)
EMBER_CUDA_OP2(BitwiseXor, x ^ y)
EMBER_CUDA_OP2(Eq, x == y)
EMBER_CUDA_OP2(Ne, x != y)
EMBER_CUDA_OP2(Lt, x < y)
EMBER_CUDA_OP2(Le, x <= y)
EMBER_CUDA_OP2(Gt, x > y)
EMBER_CUDA_OP2(Ge, x >= y)
#undef EMBER_CUDA_OP2

template <typename Op, typename T, typename Out>
struct OnPair {
  __device__ Out operator()(T x, T y) const {
    if constexpr (std::is_same_v<decltype(Op()(to_c(x), to_c(y))), bool>)
      return Out(Op()(to_c(x), to_c(y)) ? 1 : 0);
    else
      return from_c<Out>(Op()(to_c(x), to_c(y)));
  }
};

template <typename Op, OpClass cls, typename T>
void apply(const char* name, const CudaStorage& a, const Layout& la, const BackendStorage& rhs,
           const Layout& lb, BackendStorage& dst, const Layout& dl) {
  if constexpr (!takes<cls, T>()) {
    throw Error(ErrorKind::UnsupportedDType, "unsupported dtype reached a CUDA kernel");
  } else {
    using Out = std::conditional_t<cls == OpClass::Predicate, uint8_t, T>;
    launch_map2(name, a.cuda(), a.ptr<T>(), la, as_cuda(rhs).ptr<T>(), lb, as_cuda(dst).ptr<Out>(),
                dl, OnPair<Op, T, Out>{});
  }
}

// The op's row applied on T: one switch per enum, its cases generated from ops.def.
template <typename T, typename OpEnum>
void apply_row(OpEnum op, const CudaStorage& a, const Layout& la, const BackendStorage& rhs,
               const Layout& lb, BackendStorage& dst, const Layout& dl) {
#define EMBER_ROW(Enum, name, cls) \
  case OpEnum::Enum: return apply<Enum, OpClass::cls, T>(#name, a, la, rhs, lb, dst, dl);
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
void run(OpEnum op, const CudaStorage& lhs, const Layout& la, const BackendStorage& rhs,
         const Layout& lb, BackendStorage& dst, const Layout& dl) {
  dispatch(lhs.dtype(), [&](auto tag) {
    using T = decltype(tag);
    apply_row<T>(op, lhs, la, rhs, lb, dst, dl);
  });
}

}  // namespace

void CudaStorage::binary(BinaryOp op, const Layout& lhs, const BackendStorage& rhs,
                         const Layout& rhs_layout, BackendStorage& dst,
                         const Layout& dst_layout) const {
  run(op, *this, lhs, rhs, rhs_layout, dst, dst_layout);
}

void CudaStorage::cmp(CmpOp op, const Layout& lhs, const BackendStorage& rhs,
                      const Layout& rhs_layout, BackendStorage& dst,
                      const Layout& dst_layout) const {
  run(op, *this, lhs, rhs, rhs_layout, dst, dst_layout);
}

}  // namespace ember::cuda
