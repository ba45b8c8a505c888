// MSL as C++ (g++ 12, -std=c++17 -Wno-attributes): force-included (-include) into each
// generated kernel TU, which wraps one kernels/<family>.metal in its own namespace.
// It provides the MSL surface the kernel rules allow (see metal/emulator/README.md), so
// a kernel that strays outside it fails here before it can fail on a Mac. MSL's
// builtin attributes ([[buffer(0)]], ...) are unknown to g++ and ignored.
#pragma once

// Every standard header first: the address-space words below are macros (`thread`
// would break <thread>), and kernel files are included inside a namespace, so a
// standard header they pull in must already have been seen.
#include <algorithm>
#include <array>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_registry.h"

#define EMBER_MSL_SHIM 1

// ---- scalar types -------------------------------------------------------------------
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;  // MSL long/ulong are 64-bit, as on LP64 Linux
typedef _Float16 half;

// ---- vector types (no swizzles; MSL sizes and alignments) ---------------------------
namespace metal {

template <typename T, int N>
struct vec;

template <typename T>
struct alignas(2 * sizeof(T)) vec<T, 2> {
  T x, y;
  vec() = default;
  constexpr vec(T s) : x(s), y(s) {}
  constexpr vec(T a, T b) : x(a), y(b) {}
  template <typename U>
  constexpr explicit vec(const vec<U, 2>& o) : x(T(o.x)), y(T(o.y)) {}
};

template <typename T>
struct alignas(4 * sizeof(T)) vec<T, 3> {
  T x, y, z;
  vec() = default;
  constexpr vec(T s) : x(s), y(s), z(s) {}
  constexpr vec(T a, T b, T c) : x(a), y(b), z(c) {}
  template <typename U>
  constexpr explicit vec(const vec<U, 3>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)) {}
};

template <typename T>
struct alignas(4 * sizeof(T)) vec<T, 4> {
  T x, y, z, w;
  vec() = default;
  constexpr vec(T s) : x(s), y(s), z(s), w(s) {}
  constexpr vec(T a, T b, T c, T d) : x(a), y(b), z(c), w(d) {}
  template <typename U>
  constexpr explicit vec(const vec<U, 4>& o) : x(T(o.x)), y(T(o.y)), z(T(o.z)), w(T(o.w)) {}
};

// Component i of a vector (0 = x); the members are consecutive.
template <typename T, int N>
inline T& vec_at(vec<T, N>& v, int i) {
  return (&v.x)[i];
}
template <typename T, int N>
inline T vec_at(const vec<T, N>& v, int i) {
  return vec_at(const_cast<vec<T, N>&>(v), i);
}

template <typename T, int N, typename F>
inline vec<T, N> vec_map2(const vec<T, N>& a, const vec<T, N>& b, F f) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) vec_at(r, i) = f(vec_at(a, i), vec_at(b, i));
  return r;
}

// clang-format would split `op##=`.
// clang-format off
#define EMBER_SHIM_VEC_OP(op)                                             \
  template <typename T, int N>                                            \
  inline vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {  \
    return vec_map2(a, b, [](T u, T v) { return T(u op v); });            \
  }                                                                       \
  template <typename T, int N>                                            \
  inline vec<T, N> operator op(const vec<T, N>& a, T s) {                 \
    return a op vec<T, N>(s);                                             \
  }                                                                       \
  template <typename T, int N>                                            \
  inline vec<T, N> operator op(T s, const vec<T, N>& a) {                 \
    return vec<T, N>(s) op a;                                             \
  }                                                                       \
  template <typename T, int N>                                            \
  inline vec<T, N>& operator op##=(vec<T, N>& a, const vec<T, N>& b) {    \
    return a = a op b;                                                    \
  }
EMBER_SHIM_VEC_OP(+)
EMBER_SHIM_VEC_OP(-)
EMBER_SHIM_VEC_OP(*)
EMBER_SHIM_VEC_OP(/)
#undef EMBER_SHIM_VEC_OP
// clang-format on

template <typename T, int N>
inline vec<T, N> operator-(const vec<T, N>& a) {
  return vec<T, N>(T(0)) - a;
}

}  // namespace metal

#define EMBER_SHIM_VEC_TYPES(T)  \
  typedef metal::vec<T, 2> T##2; \
  typedef metal::vec<T, 3> T##3; \
  typedef metal::vec<T, 4> T##4;
EMBER_SHIM_VEC_TYPES(float)
EMBER_SHIM_VEC_TYPES(half)
EMBER_SHIM_VEC_TYPES(int)
EMBER_SHIM_VEC_TYPES(uint)
EMBER_SHIM_VEC_TYPES(short)
EMBER_SHIM_VEC_TYPES(ushort)
EMBER_SHIM_VEC_TYPES(char)
EMBER_SHIM_VEC_TYPES(uchar)
EMBER_SHIM_VEC_TYPES(long)
EMBER_SHIM_VEC_TYPES(ulong)
#undef EMBER_SHIM_VEC_TYPES

// ---- the metal namespace: reinterpretation, math, sync, simd ------------------------
// Float overloads call the C library's float functions (exact, not fast-math); half
// overloads compute in float. Integer overloads exist where MSL has them (abs, min,
// max, clamp). Every overload is a non-template, as in MSL, so the same calls are
// ambiguous (or not) here as there.
#ifndef M_PI_F
#define M_PI_F 3.14159265358979323846264338327950288f
#define M_PI_2_F 1.57079632679489661923132169163975144f
#define M_2_PI_F 0.636619772367581343075535053490057448f
#define M_2_SQRTPI_F 1.12837916709551257389615890312154517f
#define M_SQRT2_F 1.41421356237309504880168872420969808f
#define M_SQRT1_2_F 0.707106781186547524400844362104849039f
#define M_LN2_F 0.693147180559945309417232121458176568f
#define M_LOG2E_F 1.44269504088896340735992468100189214f
#endif
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif

namespace metal {

template <typename To, typename From>
inline To as_type(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "as_type: both types must have the same size");
  static_assert(std::is_trivially_copyable<From>::value && std::is_trivially_copyable<To>::value,
                "as_type: types must be trivially copyable");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

#define EMBER_SHIM_F1(name, expr) \
  inline float name(float x) {    \
    return expr;                  \
  }                               \
  inline half name(half h) {      \
    const float x = float(h);     \
    return half(expr);            \
  }
EMBER_SHIM_F1(exp, std::exp(x))
EMBER_SHIM_F1(log, std::log(x))
EMBER_SHIM_F1(sqrt, std::sqrt(x))
EMBER_SHIM_F1(rsqrt, 1.0f / std::sqrt(x))
EMBER_SHIM_F1(sin, std::sin(x))
EMBER_SHIM_F1(cos, std::cos(x))
EMBER_SHIM_F1(tan, std::tan(x))
EMBER_SHIM_F1(tanh, std::tanh(x))
EMBER_SHIM_F1(fabs, std::fabs(x))
EMBER_SHIM_F1(floor, std::floor(x))
EMBER_SHIM_F1(ceil, std::ceil(x))
EMBER_SHIM_F1(rint, std::rint(x))
EMBER_SHIM_F1(trunc, std::trunc(x))
#undef EMBER_SHIM_F1

inline float pow(float x, float y) {
  return std::pow(x, y);
}
inline half pow(half x, half y) {
  return half(std::pow(float(x), float(y)));
}
inline float atan2(float y, float x) {
  return std::atan2(y, x);
}
inline half atan2(half y, half x) {
  return half(std::atan2(float(y), float(x)));
}
// powr: defined for x >= 0 only (NaN below).
inline float powr(float x, float y) {
  return x < 0.0f ? NAN : std::pow(x, y);
}
inline half powr(half x, half y) {
  return half(powr(float(x), float(y)));
}
inline float fma(float a, float b, float c) {
  return std::fma(a, b, c);
}
inline half fma(half a, half b, half c) {
  return half(std::fma(float(a), float(b), float(c)));
}

inline float fmod(float x, float y) {
  return std::fmod(x, y);
}
inline float copysign(float x, float y) {
  return std::copysign(x, y);
}

// MSL fmax/fmin (and max/min on floats): a NaN argument yields the other argument.
inline float fmax(float a, float b) {
  return std::fmax(a, b);
}
inline float fmin(float a, float b) {
  return std::fmin(a, b);
}
inline half fmax(half a, half b) {
  return half(std::fmax(float(a), float(b)));
}
inline half fmin(half a, half b) {
  return half(std::fmin(float(a), float(b)));
}

#define EMBER_SHIM_PREDICATE(name) \
  inline bool name(float x) {      \
    return std::name(x);           \
  }                                \
  inline bool name(half x) {       \
    return std::name(float(x));    \
  }
EMBER_SHIM_PREDICATE(isnan)
EMBER_SHIM_PREDICATE(isinf)
EMBER_SHIM_PREDICATE(isfinite)
#undef EMBER_SHIM_PREDICATE

using ::abs;  // int abs(int) from <cstdlib>: the same function, so no ambiguity
inline float abs(float x) {
  return std::fabs(x);
}
inline half abs(half x) {
  return half(std::fabs(float(x)));
}

#define EMBER_SHIM_MINMAX(T, MAX, MIN) \
  inline T max(T a, T b) {             \
    return MAX;                        \
  }                                    \
  inline T min(T a, T b) {             \
    return MIN;                        \
  }                                    \
  inline T clamp(T x, T lo, T hi) {    \
    return min(max(x, lo), hi);        \
  }
EMBER_SHIM_MINMAX(float, std::fmax(a, b), std::fmin(a, b))
EMBER_SHIM_MINMAX(half, half(std::fmax(float(a), float(b))), half(std::fmin(float(a), float(b))))
EMBER_SHIM_MINMAX(char, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(uchar, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(short, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(ushort, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(int, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(uint, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(long, a < b ? b : a, b < a ? b : a)
EMBER_SHIM_MINMAX(ulong, a < b ? b : a, b < a ? b : a)
#undef EMBER_SHIM_MINMAX

#define EMBER_SHIM_IABS(T)    \
  inline T abs(T x) {         \
    return x < 0 ? T(-x) : x; \
  }
EMBER_SHIM_IABS(char)
EMBER_SHIM_IABS(short)
EMBER_SHIM_IABS(long)
#undef EMBER_SHIM_IABS
inline uchar abs(uchar x) {
  return x;
}
inline ushort abs(ushort x) {
  return x;
}
inline uint abs(uint x) {
  return x;
}
inline ulong abs(ulong x) {
  return x;
}

// mulhi(x, y): the high half of the full product.
inline uint mulhi(uint x, uint y) {
  return uint((ulong(x) * ulong(y)) >> 32);
}
inline int mulhi(int x, int y) {
  return int((long(x) * long(y)) >> 32);
}

// select(a, b, c): c ? b : a.
template <typename T>
inline T select(T a, T b, bool c) {
  return c ? b : a;
}

enum class mem_flags : uint { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
inline mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags(uint(a) | uint(b));
}

// A yield until every lane of the threadgroup arrives (EMBER_KERNEL_GROUPED kernels).
inline void threadgroup_barrier(mem_flags, const char* file = __builtin_FILE(),
                                int line = __builtin_LINE()) {
  ::ember::metal::emu::lane_barrier(file, line);
}

namespace shim_detail {
template <typename T>
struct SimdValues {
  T all[32];
  uint32_t lanes, self;
  SimdValues(const char* op, T mine) {
    static_assert(sizeof(T) <= 16 && std::is_trivially_copyable<T>::value,
                  "simd_* takes a scalar (or small vector) value");
    ::ember::metal::emu::lane_simd_exchange(op, &mine, sizeof(T), all, &lanes, &self);
  }
};
}  // namespace shim_detail

// 32-lane simdgroups; every lane of the simdgroup must call (the runner checks).
template <typename T>
inline T simd_sum(T x) {
  shim_detail::SimdValues<T> v("simd_sum", x);
  T acc = v.all[0];
  for (uint32_t i = 1; i < v.lanes; ++i) acc = T(acc + v.all[i]);
  return acc;
}
template <typename T>
inline T simd_max(T x) {
  shim_detail::SimdValues<T> v("simd_max", x);
  T acc = v.all[0];
  for (uint32_t i = 1; i < v.lanes; ++i) acc = max(acc, v.all[i]);
  return acc;
}
template <typename T>
inline T simd_min(T x) {
  shim_detail::SimdValues<T> v("simd_min", x);
  T acc = v.all[0];
  for (uint32_t i = 1; i < v.lanes; ++i) acc = min(acc, v.all[i]);
  return acc;
}
// The value of lane (simd_lane + delta); lanes past the end keep their own (no wrap).
template <typename T>
inline T simd_shuffle_down(T x, ushort delta) {
  shim_detail::SimdValues<T> v("simd_shuffle_down", x);
  const uint32_t src = v.self + delta;
  return src < v.lanes ? v.all[src] : x;
}

}  // namespace metal

using namespace metal;

// ---- kernel registration ------------------------------------------------------------
namespace ember::metal::emu {

inline ::uint3 shim_uint3(const uint32_t v[3]) {
  return ::uint3(v[0], v[1], v[2]);
}

// The launcher of one kernel instance: leading pointer params are buffers 0..n-1, then
// one params struct by reference, then the six EMBER_THREAD_ARGS.
template <typename F, F Fn>
struct KernelEntry;

template <typename... A, void (*Fn)(A...)>
struct KernelEntry<void (*)(A...), Fn> {
  using Args = std::tuple<A...>;
  static constexpr size_t kArgs = sizeof...(A);
  static_assert(kArgs >= 7, "a kernel takes its buffers, one `constant P&` and EMBER_THREAD_ARGS");
  static constexpr size_t kBuffers = kArgs - 7;
  template <size_t I>
  using Arg = std::tuple_element_t<I, Args>;
  using ParamsRef = Arg<kBuffers>;
  using Params = std::remove_cv_t<std::remove_reference_t<ParamsRef>>;
  static_assert(std::is_reference<ParamsRef>::value,
                "the argument after the buffers must be the params struct by `constant P&`");
  static_assert(std::is_trivially_copyable<Params>::value, "params must be a plain struct");
  static_assert(std::is_same<Arg<kArgs - 6>, ::uint3>::value &&
                    std::is_same<Arg<kArgs - 5>, ::uint3>::value &&
                    std::is_same<Arg<kArgs - 4>, ::uint3>::value &&
                    std::is_same<Arg<kArgs - 3>, ::uint3>::value &&
                    std::is_same<Arg<kArgs - 2>, ::uint>::value &&
                    std::is_same<Arg<kArgs - 1>, ::uint>::value,
                "a kernel's last parameters must be EMBER_THREAD_ARGS");

  template <size_t... I>
  static void call(void* const* b, const void* p, const ThreadArgs& t, std::index_sequence<I...>) {
    static_assert((std::is_pointer<Arg<I>>::value && ...),
                  "a kernel's leading parameters must be `device T*` buffers");
    Fn(static_cast<Arg<I>>(b[I])..., *static_cast<Params*>(const_cast<void*>(p)), shim_uint3(t.gid),
       shim_uint3(t.lid), shim_uint3(t.tgid), shim_uint3(t.tgsize), t.simd_lane, t.simd_group);
  }
  static void invoke(void* const* b, const void* p, const ThreadArgs& t) {
    call(b, p, t, std::make_index_sequence<kBuffers>{});
  }
  static KernelInfo info(const char* family, const char* name, bool grouped) {
    return KernelInfo{family, name, grouped, kBuffers, sizeof(Params), &invoke};
  }
};

}  // namespace ember::metal::emu

// The family a kernel TU registers under; the generated TU redefines it.
#ifndef EMBER_KERNEL_FAMILY
#define EMBER_KERNEL_FAMILY "default"
#endif

#define EMBER_SHIM_REGISTER(host_name, grouped, ...)                                    \
  [[maybe_unused]] static const bool ember_kernel_registered_##host_name =              \
      ::ember::metal::emu::register_kernel(                                             \
          ::ember::metal::emu::KernelEntry<decltype(&__VA_ARGS__), &__VA_ARGS__>::info( \
              EMBER_KERNEL_FAMILY, #host_name, grouped));
#define EMBER_KERNEL(host_name, ...) EMBER_SHIM_REGISTER(host_name, false, __VA_ARGS__)
#define EMBER_KERNEL_GROUPED(host_name, ...) EMBER_SHIM_REGISTER(host_name, true, __VA_ARGS__)

// Threadgroup memory: one heap allocation of exactly n elements per group, shared by
// its lanes (so AddressSanitizer sees an out-of-bounds index).
#define EMBER_THREADGROUP(T, name, n) \
  T* const name = static_cast<T*>(    \
      ::ember::metal::emu::lane_threadgroup_alloc(sizeof(T), size_t(n), alignof(T)))

// ---- address spaces and function qualifiers: nothing in C++ -------------------------
// (`constant` cannot be `const`: `constant const T*` would be a duplicate const.)
#define device
#define constant
#define threadgroup
#define thread
#define kernel
