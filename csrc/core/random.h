// Counter-based random numbers: value i of a stream depends only on (seed, i), so
// every backend produces the same numbers for the same seed, in any order.
#pragma once

#include <math.h>

#include <cstdint>

#include "dtype.h"

// The same functions run in CUDA kernels (cuda/ops/random.cu).
#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember {

EMBER_HOST_DEVICE inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

EMBER_HOST_DEVICE inline uint64_t random_bits(uint64_t seed, uint64_t counter) {
  return splitmix64(splitmix64(seed) ^ counter);
}

// Uniform in [0, 1) with 53 random bits.
EMBER_HOST_DEVICE inline double random_uniform(uint64_t seed, uint64_t counter) {
  return double(random_bits(seed, counter) >> 11) * (1.0 / 9007199254740992.0);
}

// Uniform in [0, 1) on a grid of 2^-bits: with bits = the dtype's significand width the
// value converts to that dtype exactly, so rounding can never produce 1.0.
EMBER_HOST_DEVICE inline double random_uniform(uint64_t seed, uint64_t counter, int bits) {
  return double(random_bits(seed, counter) >> (64 - bits)) * ::ldexp(1.0, -bits);
}

// The significand width of a float dtype: uniform draws on that grid convert exactly.
inline int uniform_bits(DType d) {
  switch (d) {
    case DType::F16: return 11;
    case DType::BF16: return 8;
    case DType::F64: return 53;
    default: return 24;
  }
}

// Uniform in [0, range) for range >= 1 (range 0 stands for 2^64): the bits modulo range,
// whose bias (at most range / 2^64) is below any test's resolution for practical ranges.
EMBER_HOST_DEVICE inline uint64_t random_below(uint64_t seed, uint64_t counter, uint64_t range) {
  const uint64_t bits = random_bits(seed, counter);
  return range == 0 ? bits : bits % range;
}

// Standard normal by Box-Muller on two independent draws of the same counter.
EMBER_HOST_DEVICE inline double random_normal(uint64_t seed, uint64_t counter) {
  double u1 = double((random_bits(seed, counter) >> 11) + 1) * (1.0 / 9007199254740993.0);
  double u2 = random_uniform(seed ^ 0x5851f42d4c957f2dULL, counter);
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
}

}  // namespace ember
