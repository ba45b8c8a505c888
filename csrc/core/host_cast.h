// Conversions between host doubles and any dtype, for creation ops and scalars.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dtype.h"

namespace ember {

// double -> float rounded to odd: truncated, with the last bit set when inexact. Rounding
// that to a narrower format (half, bfloat16: 13+ bits shorter) is then correctly rounded,
// where going through a round-to-nearest float would round twice (-159.6875 - eps: -159.75).
inline float round_to_odd_float(double v) {
  float f = float(v);
  if (!std::isfinite(f) || double(f) == v) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::fabs(double(f)) > std::fabs(v)) --bits;  // step toward zero: truncation
  bits |= 1u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// A half type (f16, bf16) from a double, rounded once, to nearest even.
template <typename H>
inline H half_from_double(double v) {
  H h;
  h.bits = H::from_float(round_to_odd_float(v));
  return h;
}

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// Float -> integer without undefined behaviour: NaN gives 0, out-of-range saturates.
template <typename T>
inline T saturate_cast(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
  } else if constexpr (is_half_v<T>) {
    return half_from_double<T>(v);
  } else {
    return T(float(v));
  }
}
template <>
inline double saturate_cast<double>(double v) {
  return v;
}

// Whether an integer is a value of dtype (float dtypes take any integer, rounded).
inline bool int_fits(int64_t v, DType dtype) {
  switch (dtype) {
    case DType::U8: return v >= 0 && v <= 255;
    case DType::U32: return v >= 0 && v <= int64_t(UINT32_MAX);
    case DType::I32: return v >= INT32_MIN && v <= INT32_MAX;
    default: return true;
  }
}

// Whether dtype holds v without overflow: a finite value stays finite in a float dtype;
// an integer dtype takes finite values whose truncation is in range.
inline bool double_fits(double v, DType dtype) {
  if (dtype == DType::Bool) return true;  // any value is true or false
  return dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const double lo = double(std::numeric_limits<T>::min());
      const double hi = double(std::numeric_limits<T>::max()) + 1.0;  // exact: a power of 2
      return v < hi && (std::is_signed_v<T> ? v >= lo : v > -1.0);    // false for NaN
    } else {
      return !std::isfinite(v) || std::isfinite(double(float(saturate_cast<T>(v))));
    }
  });
}

inline void cast_doubles(const double* src, int64_t n, DType dtype, void* dst) {
  if (dtype == DType::Bool) {  // nonzero (NaN included) is true, as bool(x) in Python
    for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(dst)[i] = src[i] != 0;
    return;
  }
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = saturate_cast<T>(src[i]);
  });
}

}  // namespace ember
