// Conversions between host doubles and any dtype, for creation ops and scalars.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "dtype.h"

namespace ember {

// Float -> integer without undefined behaviour: NaN gives 0, out-of-range saturates.
template <typename T>
inline T saturate_cast(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
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
    default: return true;
  }
}

// Whether dtype holds v without overflow: a finite value stays finite in a float dtype;
// an integer dtype takes finite values whose truncation is in range.
inline bool double_fits(double v, DType dtype) {
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
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = saturate_cast<T>(src[i]);
  });
}

}  // namespace ember
