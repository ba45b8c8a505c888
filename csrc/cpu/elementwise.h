// Elementwise loops over 1, 2 or 3 inputs: a dense branch the compiler vectorises,
// and a strided branch for views.
#pragma once

#include "strided.h"

namespace ember::cpu {

// Integer arithmetic that wraps (as numpy does) instead of overflowing into UB.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) + U(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) - U(b)));
  } else {
    return a - b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) * U(b)));
  } else {
    return a * b;
  }
}

template <typename In, typename Out, typename F>
void map1(const In* in, const Layout& src, Out* out, const Layout& dst, F f) {
  walk<2>(dst.shape(), {&src, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    const In* a = in + off[0];
    Out* o = out + off[1];
    if (st[0] == 1 && st[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[1]] = f(a[i * st[0]]);
    }
  });
}

template <typename A, typename B, typename Out, typename F>
void map2(const A* a, const Layout& la, const B* b, const Layout& lb, Out* out, const Layout& dst,
          F f) {
  walk<3>(dst.shape(), {&la, &lb, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    const A* x = a + off[0];
    const B* y = b + off[1];
    Out* o = out + off[2];
    if (st[0] == 1 && st[1] == 1 && st[2] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (st[0] == 1 && st[1] == 0 && st[2] == 1) {  // tensor op scalar
      const B yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[2]] = f(x[i * st[0]], y[i * st[1]]);
    }
  });
}

template <typename A, typename B, typename C, typename Out, typename F>
void map3(const A* a, const Layout& la, const B* b, const Layout& lb, const C* c, const Layout& lc,
          Out* out, const Layout& dst, F f) {
  walk<4>(dst.shape(), {&la, &lb, &lc, &dst}, [&](const auto& off, int64_t n, const auto& st) {
    const A* x = a + off[0];
    const B* y = b + off[1];
    const C* z = c + off[2];
    Out* o = out + off[3];
    if (st[0] == 1 && st[1] == 1 && st[2] == 1 && st[3] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], z[i]);
    } else if (st[0] == 1 && st[1] == 0 && st[2] == 1 && st[3] == 1) {  // where(m, scalar, t)
      const B yv = y[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv, z[i]);
    } else if (st[0] == 1 && st[1] == 1 && st[2] == 0 && st[3] == 1) {  // where(m, t, scalar)
      const C zv = z[0];
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i], zv);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * st[3]] = f(x[i * st[0]], y[i * st[1]], z[i * st[2]]);
    }
  });
}

}  // namespace ember::cpu
