// Binary arithmetic and comparisons with broadcasting (inputs arrive already broadcast):
// one functor per row of the op table (core/ops.def), the CPU's semantics. Comparisons
// give uint8 (1 true, 0 false); NaN compares unequal to everything.
#include "elementwise.cuh"

namespace ember::cuda {

namespace {

// numpy's floor division; a zero divisor gives 0 instead of a trap.
template <typename T>
__device__ T int_div(T a, T b) {
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

template <typename C>
__device__ C div_op(C x, C y) {
  if constexpr (std::is_floating_point_v<C>)
    return x / y;
  else
    return int_div(x, y);
}

__device__ __forceinline__ float m_pow(float x, float y) {
  return powf(x, y);
}
__device__ __forceinline__ double m_pow(double x, double y) {
  return pow(x, y);
}

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
EMBER_CUDA_OP2(Div, div_op(x, y))
EMBER_CUDA_OP2(Pow, pow_op(x, y))
EMBER_CUDA_OP2(Maximum, nan_max(x, y))
EMBER_CUDA_OP2(Minimum, nan_min(x, y))
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
