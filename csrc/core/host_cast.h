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

inline void cast_doubles(const double* src, int64_t n, DType dtype, void* dst) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(dst);
    for (int64_t i = 0; i < n; ++i) out[i] = saturate_cast<T>(src[i]);
  });
}

}  // namespace ember
