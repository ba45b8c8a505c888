// Binary arithmetic with the CPU backend's semantics per dtype: one functor per row of
// the op table (core/ops.def), instantiated for its dtype class in one line.
//   binary_<op>[_strided]_<dtype>
// The _strided variants walk views (broadcast inputs have 0 strides); the others take
// dense views (no index math). f16 and bf16 compute in float, as the CPU.
#include "binary.h"
#include "common.h"
#include "copy.h"

// True division: floats only (core casts integer inputs to float32 first).
inline float ew_div(float a, float b) {
  return a / b;
}

// numpy's float floor_divide (npy_divmod): the quotient from fmod, exact where
// floor(a / b) would round up; a zero divisor gives a / b (inf or nan).
inline float ew_floor_div(float a, float b) {
  if (b == 0.0f) return a / b;
  const float mod = fmod(a, b);
  float div = (a - mod) / b;
  if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
  if (div == 0.0f) return copysign(0.0f, a / b);
  const float fl = floor(div);
  return div - fl > 0.5f ? fl + 1.0f : fl;
}
// numpy's float remainder: the sign of the divisor, a zero result included.
inline float ew_floor_mod(float a, float b) {
  const float mod = fmod(a, b);
  if (b == 0.0f) return mod;
  if (mod == 0.0f) return copysign(0.0f, b);
  return (b < 0.0f) != (mod < 0.0f) ? mod + b : mod;
}
inline float ew_trunc_div(float a, float b) {
  return trunc(a / b);
}

// Integer division by zero gives 0 for //, % and trunc (numpy's value: a GPU cannot raise
// without a host wait; the CPU raises). INT64_MIN / -1 wraps to INT64_MIN, no trap.
inline int64_t ew_floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return ew_sub(int64_t(0), a);
  const int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t ew_floor_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline int64_t ew_trunc_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  return b == -1 ? ew_sub(int64_t(0), a) : a / b;
}
inline int ew_floor_div(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return ew_sub(0, a);
  const int q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int ew_floor_mod(int a, int b) {
  if (b == 0 || b == -1) return 0;
  const int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline int ew_trunc_div(int a, int b) {
  if (b == 0) return 0;
  return b == -1 ? ew_sub(0, a) : a / b;
}
// Unsigned: floor and trunc agree.
template <typename C>
inline C ew_floor_div(C a, C b) {
  return b == C(0) ? C(0) : C(a / b);
}
template <typename C>
inline C ew_floor_mod(C a, C b) {
  return b == C(0) ? C(0) : C(a % b);
}
template <typename C>
inline C ew_trunc_div(C a, C b) {
  return ew_floor_div(a, b);
}

// Integer powers by squaring in wrapping unsigned arithmetic, truncated to the dtype;
// negative int64 exponents give what 1 / base**-e truncates to.
inline uint64_t ew_upow(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e != 0; e >>= 1) {
    if (e & 1u) r *= b;
    b *= b;
  }
  return r;
}
inline float ew_pow(float a, float b) {
  return pow(a, b);
}
inline int64_t ew_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  return int64_t(ew_upow(uint64_t(a), uint64_t(b)));
}
inline int ew_pow(int a, int b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  return int(uint(ew_upow(uint64_t(a), uint64_t(b))));
}
template <typename C>
inline C ew_pow(C a, C b) {
  return C(ew_upow(uint64_t(a), uint64_t(b)));
}

// NaN in either input propagates (the first one), as numpy's maximum / minimum.
inline float ew_max(float a, float b) {
  return isnan(a) ? a : isnan(b) ? b : a > b ? a : b;
}
template <typename C>
inline C ew_max(C a, C b) {
  return a > b ? a : b;
}
inline float ew_min(float a, float b) {
  return isnan(a) ? a : isnan(b) ? b : a < b ? a : b;
}
template <typename C>
inline C ew_min(C a, C b) {
  return a < b ? a : b;
}

struct BinaryAdd {
  template <typename C>
  C operator()(C a, C b) {
    return ew_add(a, b);
  }
};
struct BinarySub {
  template <typename C>
  C operator()(C a, C b) {
    return ew_sub(a, b);
  }
};
struct BinaryMul {
  template <typename C>
  C operator()(C a, C b) {
    return ew_mul(a, b);
  }
};
struct BinaryDiv {
  template <typename C>
  C operator()(C a, C b) {
    return ew_div(a, b);
  }
};
struct BinaryFloorDivide {
  template <typename C>
  C operator()(C a, C b) {
    return ew_floor_div(a, b);
  }
};
struct BinaryRemainder {
  template <typename C>
  C operator()(C a, C b) {
    return ew_floor_mod(a, b);
  }
};
struct BinaryTruncDivide {
  template <typename C>
  C operator()(C a, C b) {
    return ew_trunc_div(a, b);
  }
};
struct BinaryPow {
  template <typename C>
  C operator()(C a, C b) {
    return ew_pow(a, b);
  }
};
struct BinaryMaximum {
  template <typename C>
  C operator()(C a, C b) {
    return ew_max(a, b);
  }
};
struct BinaryMinimum {
  template <typename C>
  C operator()(C a, C b) {
    return ew_min(a, b);
  }
};
// Floats only (ToFloat: core casts integer inputs to float32 first).
struct BinaryAtan2 {
  template <typename C>
  C operator()(C a, C b) {
    return atan2(a, b);
  }
};

// Integers and bool only (the Integer class); bool's bytes stay 0 or 1.
struct BinaryBitwiseAnd {
  template <typename C>
  C operator()(C a, C b) {
    return C(a & b);
  }
};
struct BinaryBitwiseOr {
  template <typename C>
  C operator()(C a, C b) {
    return C(a | b);
  }
};
struct BinaryBitwiseXor {
  template <typename C>
  C operator()(C a, C b) {
    return C(a ^ b);
  }
};

template <typename T, typename Op, bool Strided>
kernel void binary_map(device const T* lhs [[buffer(0)]], device const T* rhs [[buffer(1)]],
                       device T* dst [[buffer(2)]], constant BinaryKParams& p [[buffer(3)]],
                       EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[3];
  ew_offsets<3, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[2]] = Ew<T>::store(Op()(Ew<T>::load(lhs[off[0]]), Ew<T>::load(rhs[off[1]])));
}

#define EMBER_BINARY_KERNELS(name, sfx, T, Op)                  \
  EMBER_KERNEL(binary_##name##_##sfx, binary_map<T, Op, false>) \
  EMBER_KERNEL(binary_##name##_strided_##sfx, binary_map<T, Op, true>)

// One line per op, for the dtype class of its row in core/ops.def.
#define EMBER_BINARY_ALL(name, Op) EMBER_FOR_ALL_TYPES(EMBER_BINARY_KERNELS, name, Op)
#define EMBER_BINARY_TO_FLOAT(name, Op) EMBER_FOR_FLOAT_TYPES(EMBER_BINARY_KERNELS, name, Op)
#define EMBER_BINARY_INTEGER(name, Op) EMBER_FOR_INTEGER_TYPES(EMBER_BINARY_KERNELS, name, Op)

EMBER_BINARY_ALL(add, BinaryAdd)
EMBER_BINARY_ALL(sub, BinarySub)
EMBER_BINARY_ALL(mul, BinaryMul)
EMBER_BINARY_TO_FLOAT(div, BinaryDiv)
EMBER_BINARY_ALL(floor_divide, BinaryFloorDivide)
EMBER_BINARY_ALL(remainder, BinaryRemainder)
EMBER_BINARY_ALL(trunc_divide, BinaryTruncDivide)
EMBER_BINARY_ALL(pow, BinaryPow)
EMBER_BINARY_ALL(maximum, BinaryMaximum)
EMBER_BINARY_ALL(minimum, BinaryMinimum)
EMBER_BINARY_TO_FLOAT(atan2, BinaryAtan2)
EMBER_BINARY_INTEGER(bitwise_and, BinaryBitwiseAnd)
EMBER_BINARY_INTEGER(bitwise_or, BinaryBitwiseOr)
EMBER_BINARY_INTEGER(bitwise_xor, BinaryBitwiseXor)
