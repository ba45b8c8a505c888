// What every kernel file shares: device element types per dtype, their compute types,
// strided views with merged dims, and the launch helpers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/cuda_backend.h"
#include "core/error.h"
#include "core/fast_div.h"
#include "core/host_cast.h"
#include "core/layout_plan.h"

namespace ember::cuda {

// ---- element types

using half = __half;
using bf16 = __nv_bfloat16;

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bf16>;
template <typename T>
constexpr bool is_float_v = is_half_v<T> || std::is_floating_point_v<T>;

// Whether op class `cls` takes device element type T (core's op_takes, for these types).
template <OpClass cls, typename T>
constexpr bool takes() {
  if constexpr (cls == OpClass::Float || cls == OpClass::ToFloat) return is_float_v<T>;
  if constexpr (cls == OpClass::Integer) return !is_float_v<T>;
  return true;
}

// Arithmetic happens on C: float for the 16-bit floats (as on the CPU), else T itself.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T>
__device__ __forceinline__ compute_t<T> to_c(T x) {
  if constexpr (std::is_same_v<T, half>)
    return __half2float(x);
  else if constexpr (std::is_same_v<T, bf16>)
    return __bfloat162float(x);
  else
    return x;
}

// C -> T, rounded to nearest even (C is T's compute type).
template <typename T, typename C>
__device__ __forceinline__ T from_c(C x) {
  if constexpr (std::is_same_v<T, half>)
    return __float2half_rn(float(x));
  else if constexpr (std::is_same_v<T, bf16>)
    return __float2bfloat16_rn(float(x));
  else
    return T(x);
}

// Calls f(T{}) with T the device element type of `d`; bool runs uint8's kernels (core
// sends it only the ops whose uint8 result is the bool one).
template <typename F>
decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
    case DType::F32: return f(float{});
    case DType::F16: return f(half{});
    case DType::BF16: return f(bf16{});
    case DType::F64: return f(double{});
    case DType::I64: return f(int64_t{});
    case DType::U32: return f(uint32_t{});
    case DType::I32: return f(int32_t{});
    case DType::U8:
    case DType::Bool: return f(uint8_t{});
  }
  throw Error(ErrorKind::UnsupportedDType, "unknown dtype reached a CUDA kernel");
}

// Calls f(B{}) with B the unsigned integer of `bytes`: copies move bits, not values.
template <typename F>
decltype(auto) dispatch_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

// Integer arithmetic that wraps (as numpy does), through the unsigned type.
template <typename T>
__device__ __forceinline__ T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) + U(b)));
  } else {
    return a + b;
  }
}
template <typename T>
__device__ __forceinline__ T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) - U(b)));
  } else {
    return a - b;
  }
}
template <typename T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(U(a) * U(b)));
  } else {
    return a * b;
  }
}

// double -> T as the CPU's saturate_cast: NaN gives 0 for integers, out of range saturates,
// 16-bit floats round once.
template <typename T>
__device__ __forceinline__ T saturate_from_double(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (v != v) return T(0);
    if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
  } else if constexpr (std::is_same_v<T, half>) {
    return __double2half(v);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return __double2bfloat16(v);
  } else {
    return T(v);
  }
}

// A host double as T, exactly as the CPU converts it (saturate_cast of core/host_cast.h).
template <typename T>
T host_value(double v) {
  if constexpr (std::is_same_v<T, half>) {
    __half_raw r;
    r.x = saturate_cast<ember::f16>(v).bits;
    return half(r);
  } else if constexpr (std::is_same_v<T, bf16>) {
    __nv_bfloat16_raw r;
    r.x = saturate_cast<ember::bf16>(v).bits;
    return bf16(r);
  } else {
    return saturate_cast<T>(v);
  }
}

// __shfl_down_sync for any element or accumulator field (narrow integers through int).
template <typename T>
__device__ __forceinline__ T shfl_down(T x, int delta) {
  if constexpr (std::is_integral_v<T> && sizeof(T) < 4)
    return T(__shfl_down_sync(0xffffffffu, int(x), delta));
  else if constexpr (std::is_same_v<T, int64_t>)
    return T(__shfl_down_sync(0xffffffffu, (long long)x, delta));
  else
    return __shfl_down_sync(0xffffffffu, x, delta);
}

// ---- strided views

constexpr int kMaxDims = 16;

// Division by a fixed divisor in [1, 2^31] of numbers below 2^31, as a multiply-high, an
// add and a shift (core/fast_div.h): a few instructions where a 64-bit division takes
// dozens.
struct FastDiv {
  uint32_t d = 1, magic = 1, shift = 0;
  FastDiv() = default;
  explicit FastDiv(uint32_t divisor) : d(divisor) {
    const FastDivParams p = fast_div_params(divisor);  // core/fast_div.h
    magic = p.magic;
    shift = p.shift;
  }
  __host__ __device__ __forceinline__ uint32_t div(uint32_t n) const {
#ifdef __CUDA_ARCH__
    return (__umulhi(n, magic) + n) >> shift;
#else
    return uint32_t(((uint64_t(n) * magic >> 32) + n) >> shift);
#endif
  }
};

// N same-shaped views with the dims that are contiguous in all of them merged (all in
// elements): what the general kernels walk. `narrow` (set by make_walk when the shape has
// fewer than 2^31 elements): element indices take 32-bit math with `div`.
template <int N>
struct Walk {
  int ndim = 0;
  bool narrow = false;
  int64_t shape[kMaxDims];
  int64_t stride[N][kMaxDims];
  int64_t offset[N];
  FastDiv div[kMaxDims];
};

// Element i (row-major over the shape, i < its count) of each view. What is left of i
// after the inner dims is the outermost index: no division for it, so a 1-D walk (what
// merging leaves of a contiguous view) costs one multiply.
template <int N>
__device__ __forceinline__ void walk_offsets(const Walk<N>& w, int64_t i, int64_t (&off)[N]) {
  for (int k = 0; k < N; ++k) off[k] = w.offset[k];
  if (w.narrow) {
    uint32_t u = uint32_t(i);
    for (int d = w.ndim - 1; d > 0; --d) {
      const uint32_t q = w.div[d].div(u);
      const int64_t idx = int64_t(u - q * w.div[d].d);
      u = q;
      for (int k = 0; k < N; ++k) off[k] += idx * w.stride[k][d];
    }
    if (w.ndim > 0)
      for (int k = 0; k < N; ++k) off[k] += int64_t(u) * w.stride[k][0];
    return;
  }
  for (int d = w.ndim - 1; d > 0; --d) {
    const int64_t n = w.shape[d];
    const int64_t idx = i % n;
    i /= n;
    for (int k = 0; k < N; ++k) off[k] += idx * w.stride[k][d];
  }
  if (w.ndim > 0)
    for (int k = 0; k < N; ++k) off[k] += i * w.stride[k][0];
}

// Packs core's plan of `views` (all of `shape`, core/layout_plan.h) for the kernels;
// raises naming `op` past kMaxDims dims.
template <int N>
Walk<N> make_walk(const char* op, const Shape& shape, const std::array<const Layout*, N>& views,
                  WalkOrder order = WalkOrder::Logical) {
  const DimPlan p = plan_dims(shape, std::vector<const Layout*>(views.begin(), views.end()), order);
  if (p.ndim() > size_t(kMaxDims))
    throw_invalid(op, "the CUDA kernels take views of at most " + std::to_string(kMaxDims) +
                          " dims that cannot be merged; make the tensor contiguous first");
  Walk<N> w;
  w.ndim = int(p.ndim());
  int64_t count = 1;
  for (int k = 0; k < N; ++k) w.offset[k] = p.offsets[size_t(k)];
  for (int d = 0; d < w.ndim; ++d) {
    w.shape[d] = p.shape[size_t(d)];
    count *= w.shape[d];
    for (int k = 0; k < N; ++k) w.stride[k][d] = p.strides[size_t(k)][size_t(d)];
  }
  w.narrow = count <= int64_t(INT32_MAX);
  if (w.narrow)
    for (int d = 0; d < w.ndim; ++d) w.div[d] = FastDiv(uint32_t(std::max<int64_t>(w.shape[d], 1)));
  return w;
}

// Whether view k of the walk steps by multiples of v elements in every dim (so that v-wide
// vectors stay aligned from one start to the next). A dim of one element steps nowhere:
// core's plan gives a 0-d walk one such dim, of stride 1.
template <int N>
bool steps_by(const Walk<N>& w, int k, int64_t v) {
  for (int d = 0; d < w.ndim; ++d)
    if (w.shape[d] != 1 && w.stride[k][d] % v != 0) return false;
  return true;
}

// `src` re-shaped to `shape` with stride 0 in `dim`: the index family adds the id's
// position along dim separately.
inline Layout without_dim(const Layout& src, const Shape& shape, int64_t dim) {
  Strides st = src.strides();
  st[size_t(dim)] = 0;
  return Layout(shape, st, src.offset());
}

// ---- launching

constexpr int kBlock = 256;

// Blocks for `work` items of which each thread takes `per_thread` (at least one block).
inline unsigned grid_for(int64_t work, int per_thread = 1) {
  int64_t per_block = int64_t(kBlock) * per_thread;
  int64_t blocks = (work + per_block - 1) / per_block;
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t(1) << 30)));
}

// 16-byte vectors of T for the dense kernels.
template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <typename T>
constexpr int vec_width() {
  return 16 / int(sizeof(T)) > 0 ? 16 / int(sizeof(T)) : 1;
}

inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

}  // namespace ember::cuda
