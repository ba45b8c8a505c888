// Binary arithmetic with the CPU backend's semantics per dtype.
//   binary_<op>[_strided]_<dtype>   op: add sub mul div pow maximum minimum
// The _strided variants walk views (broadcast inputs have 0 strides); the others take
// dense views (no index math). f16 and bf16 compute in float, as the CPU.
#include "binary.h"
#include "common.h"
#include "copy.h"

// numpy's floor division; a zero divisor gives 0 instead of a trap, and
// INT64_MIN / -1 wraps to INT64_MIN.
inline float ew_div(float a, float b) {
  return a / b;
}
inline int64_t ew_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return ew_sub(int64_t(0), a);
  const int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename C>
inline C ew_div(C a, C b) {
  return b == C(0) ? C(0) : C(a / b);
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

template <typename T, typename Op, bool Strided>
kernel void binary_map(device const T* lhs [[buffer(0)]], device const T* rhs [[buffer(1)]],
                       device T* dst [[buffer(2)]], constant BinaryKParams& p [[buffer(3)]],
                       EMBER_THREAD_ARGS) {
  if (int64_t(gid.x) >= p.count) return;
  int64_t off[3];
  ew_offsets<3, Strided>(p.l, p.start + int64_t(gid.x), off);
  dst[off[2]] = Ew<T>::store(Op()(Ew<T>::load(lhs[off[0]]), Ew<T>::load(rhs[off[1]])));
}

#define EMBER_BINARY(name, strided_name, T, Op) \
  EMBER_KERNEL(name, binary_map<T, Op, false>)  \
  EMBER_KERNEL(strided_name, binary_map<T, Op, true>)

EMBER_BINARY(binary_add_f32, binary_add_strided_f32, float, BinaryAdd)
EMBER_BINARY(binary_add_f16, binary_add_strided_f16, half, BinaryAdd)
EMBER_BINARY(binary_add_bf16, binary_add_strided_bf16, bf16_t, BinaryAdd)
EMBER_BINARY(binary_add_i64, binary_add_strided_i64, int64_t, BinaryAdd)
EMBER_BINARY(binary_add_u32, binary_add_strided_u32, uint, BinaryAdd)
EMBER_BINARY(binary_add_u8, binary_add_strided_u8, uchar, BinaryAdd)
EMBER_BINARY(binary_sub_f32, binary_sub_strided_f32, float, BinarySub)
EMBER_BINARY(binary_sub_f16, binary_sub_strided_f16, half, BinarySub)
EMBER_BINARY(binary_sub_bf16, binary_sub_strided_bf16, bf16_t, BinarySub)
EMBER_BINARY(binary_sub_i64, binary_sub_strided_i64, int64_t, BinarySub)
EMBER_BINARY(binary_sub_u32, binary_sub_strided_u32, uint, BinarySub)
EMBER_BINARY(binary_sub_u8, binary_sub_strided_u8, uchar, BinarySub)
EMBER_BINARY(binary_mul_f32, binary_mul_strided_f32, float, BinaryMul)
EMBER_BINARY(binary_mul_f16, binary_mul_strided_f16, half, BinaryMul)
EMBER_BINARY(binary_mul_bf16, binary_mul_strided_bf16, bf16_t, BinaryMul)
EMBER_BINARY(binary_mul_i64, binary_mul_strided_i64, int64_t, BinaryMul)
EMBER_BINARY(binary_mul_u32, binary_mul_strided_u32, uint, BinaryMul)
EMBER_BINARY(binary_mul_u8, binary_mul_strided_u8, uchar, BinaryMul)
EMBER_BINARY(binary_div_f32, binary_div_strided_f32, float, BinaryDiv)
EMBER_BINARY(binary_div_f16, binary_div_strided_f16, half, BinaryDiv)
EMBER_BINARY(binary_div_bf16, binary_div_strided_bf16, bf16_t, BinaryDiv)
EMBER_BINARY(binary_div_i64, binary_div_strided_i64, int64_t, BinaryDiv)
EMBER_BINARY(binary_div_u32, binary_div_strided_u32, uint, BinaryDiv)
EMBER_BINARY(binary_div_u8, binary_div_strided_u8, uchar, BinaryDiv)
EMBER_BINARY(binary_pow_f32, binary_pow_strided_f32, float, BinaryPow)
EMBER_BINARY(binary_pow_f16, binary_pow_strided_f16, half, BinaryPow)
EMBER_BINARY(binary_pow_bf16, binary_pow_strided_bf16, bf16_t, BinaryPow)
EMBER_BINARY(binary_pow_i64, binary_pow_strided_i64, int64_t, BinaryPow)
EMBER_BINARY(binary_pow_u32, binary_pow_strided_u32, uint, BinaryPow)
EMBER_BINARY(binary_pow_u8, binary_pow_strided_u8, uchar, BinaryPow)
EMBER_BINARY(binary_maximum_f32, binary_maximum_strided_f32, float, BinaryMaximum)
EMBER_BINARY(binary_maximum_f16, binary_maximum_strided_f16, half, BinaryMaximum)
EMBER_BINARY(binary_maximum_bf16, binary_maximum_strided_bf16, bf16_t, BinaryMaximum)
EMBER_BINARY(binary_maximum_i64, binary_maximum_strided_i64, int64_t, BinaryMaximum)
EMBER_BINARY(binary_maximum_u32, binary_maximum_strided_u32, uint, BinaryMaximum)
EMBER_BINARY(binary_maximum_u8, binary_maximum_strided_u8, uchar, BinaryMaximum)
EMBER_BINARY(binary_minimum_f32, binary_minimum_strided_f32, float, BinaryMinimum)
EMBER_BINARY(binary_minimum_f16, binary_minimum_strided_f16, half, BinaryMinimum)
EMBER_BINARY(binary_minimum_bf16, binary_minimum_strided_bf16, bf16_t, BinaryMinimum)
EMBER_BINARY(binary_minimum_i64, binary_minimum_strided_i64, int64_t, BinaryMinimum)
EMBER_BINARY(binary_minimum_u32, binary_minimum_strided_u32, uint, BinaryMinimum)
EMBER_BINARY(binary_minimum_u8, binary_minimum_strided_u8, uchar, BinaryMinimum)
