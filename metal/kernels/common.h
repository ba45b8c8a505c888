// Shared by every kernel file and by the backend's C++: parameter structs use only
// types both languages agree on, so the host fills exactly what the kernel reads.
// In MSL this is inlined into each family's source; in C++ (emulator, backend) it is
// an ordinary header (kernels are compiled with emulator/msl_shim.h force-included).
#pragma once

#if defined(__METAL_VERSION__)
#include <metal_stdlib>
using namespace metal;
#define EMBER_HOST_DEVICE_INLINE inline
#else
#include <cstdint>
#define EMBER_HOST_DEVICE_INLINE inline
#endif

#define EMBER_MAX_DIMS 8

// 1 in the source of a family's 64-bit integer library (embed_kernels.py, emulator.cmake).
#ifndef EMBER_I64_LIBRARY
#define EMBER_I64_LIBRARY 0
#endif

// A strided view, dims already collapsed by the backend (at most EMBER_MAX_DIMS).
// Element i (row-major over shape) lives at offset + sum(index_d * strides[d]).
// `narrow`: fewer than 2^31 elements, so element numbers split into coordinates in 32-bit
// arithmetic, dividing by shape[d] as (mulhi(n, magic[d]) + n) >> shift[d]
// (core/fast_div.h) instead of a 64-bit division.
struct StridedLayout {
  int64_t offset;
  int64_t shape[EMBER_MAX_DIMS];
  int64_t strides[EMBER_MAX_DIMS];
  uint32_t magic[EMBER_MAX_DIMS];
  uint32_t shift[EMBER_MAX_DIMS];
  uint32_t ndim;
  uint32_t contiguous;  // 1: element i is at offset + i
  uint32_t narrow;
  uint32_t pad;
};

#if defined(__METAL_VERSION__) || defined(EMBER_MSL_SHIM)

// bfloat16 as 16 stored bits: MSL's `bfloat` needs Metal 3.1, this works everywhere.
struct bf16_t {
  ushort bits;
};

inline float bf16_to_float(bf16_t b) {
  return as_type<float>(uint(b.bits) << 16);
}

// Round to nearest even, NaN stays a (quiet) NaN: the same rule as ember's CPU bf16.
inline bf16_t float_to_bf16(float f) {
  uint u = as_type<uint>(f);
  bf16_t r;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    r.bits = ushort((u >> 16) | 0x40u);
    return r;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  r.bits = ushort(u >> 16);
  return r;
}

// n / d for n < 2^31, given d's magic number and shift (core/fast_div.h).
inline uint div_magic(uint n, uint magic, uint shift) {
  return (mulhi(n, magic) + n) >> shift;
}

// n / shape[d] of a narrow layout (n < 2^31).
inline uint layout_div(constant StridedLayout& l, int d, uint n) {
  return div_magic(n, l.magic[d], l.shift[d]);
}

// The storage offset of element `i` (row-major index over l.shape). What is left of i
// after the inner dims is the outermost index: no division for it.
inline int64_t strided_offset(constant StridedLayout& l, int64_t i) {
  if (l.contiguous) return l.offset + i;
  int64_t off = l.offset;
  if (l.narrow != 0) {
    uint u = uint(i);
    for (int d = int(l.ndim) - 1; d > 0; --d) {
      const uint q = layout_div(l, d, u);
      off += int64_t(u - q * uint(l.shape[d])) * l.strides[d];
      u = q;
    }
    return off + int64_t(u) * l.strides[0];
  }
  for (int d = int(l.ndim) - 1; d > 0; --d) {
    const int64_t n = l.shape[d];
    off += (i % n) * l.strides[d];
    i /= n;
  }
  return off + i * l.strides[0];
}

// Kernel signature convention (the emulator's launcher depends on it):
//   kernel void name(device T* buffers... [[buffer(0..n-1)]],
//                    constant Params& p [[buffer(n)]],
//                    EMBER_THREAD_ARGS)
// Buffers come first, in index order, then exactly one params struct, then these.
#define EMBER_THREAD_ARGS                                                                    \
  uint3 gid [[thread_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]],       \
      uint3 tgid [[threadgroup_position_in_grid]], uint3 tgsize [[threads_per_threadgroup]], \
      uint simd_lane [[thread_index_in_simdgroup]],                                          \
      uint simd_group [[simdgroup_index_in_threadgroup]]

// Each family is built as two Metal libraries: its 64-bit integer kernels (names with an
// i64 or b64 token) with EMBER_I64_LIBRARY 1, the rest with 0. A compiler that rejects
// int64 code then loses the int64 ops only. Every instantiation sits in exactly one of:
#if EMBER_I64_LIBRARY
#define EMBER_IF_I64(...) __VA_ARGS__
#define EMBER_IF_NOT_I64(...)
#else
#define EMBER_IF_I64(...)
#define EMBER_IF_NOT_I64(...) __VA_ARGS__
#endif

// M(name, suffix, T, Op) for every storage type of a dtype class of the op table
// (core/ops.def): a family instantiates an op for its class in one line with these.
// The suffixes are the host's dtype_suffix() names.
#define EMBER_FOR_FLOAT_TYPES(M, name, Op) \
  EMBER_IF_NOT_I64(M(name, f32, float, Op) M(name, f16, half, Op) M(name, bf16, bf16_t, Op))
#define EMBER_FOR_INTEGER_TYPES(M, name, Op) \
  EMBER_IF_I64(M(name, i64, int64_t, Op))    \
  EMBER_IF_NOT_I64(M(name, i32, int, Op) M(name, u32, uint, Op) M(name, u8, uchar, Op))
#define EMBER_FOR_ALL_TYPES(M, name, Op) \
  EMBER_FOR_FLOAT_TYPES(M, name, Op) EMBER_FOR_INTEGER_TYPES(M, name, Op)

#endif  // __METAL_VERSION__ || EMBER_MSL_SHIM

#if defined(__METAL_VERSION__)
// A kernel instance under a host name; kernels that use threadgroup_barrier or simd_*
// are instantiated with EMBER_KERNEL_GROUPED (the emulator runs their lanes as fibers).
#define EMBER_KERNEL(host_name, ...) \
  template [[host_name(#host_name)]] [[kernel]] decltype(__VA_ARGS__) __VA_ARGS__;
#define EMBER_KERNEL_GROUPED(host_name, ...) EMBER_KERNEL(host_name, __VA_ARGS__)
// Per-threadgroup storage declared at the top of a kernel body.
#define EMBER_THREADGROUP(T, name, n) threadgroup T name[n]
#endif
