// Parameters of the random kernels (random.metal), filled by MetalDevice::fill_random
// (backend/random.cpp). The stream is core/random.h's: value i depends only on
// (seed, counter + i), so Metal and the CPU draw the same numbers.
#pragma once

#include "common.h"

struct RandomKParams {
  uint64_t key;          // splitmix64(seed): random_bits(seed, c) = splitmix64(key ^ c)
  uint64_t key2;         // splitmix64(seed ^ 0x5851f42d4c957f2d): the normal's second draw
  uint64_t counter;      // counter of element 0
  int64_t start, count;  // the elements of this launch
  // value = a + scale * x (x: u in [0, 1) or z ~ N(0, 1)), with a and scale (uniform: a
  // and b - a; normal: mean and std) each a double split into two floats, hi + lo.
  float a_hi, a_lo;
  float scale_hi, scale_lo;
  float below;     // uniform: the largest float < b (values past it become a)
  uint32_t bits;   // uniform: significand bits of the dtype (24, 11 or 8)
  uint32_t check;  // uniform: 1 when b > a (the CPU's rule for values rounded up to b)
  uint32_t pad;
};

// randint: dst[i] = low + random_below(seed, counter + i, range) (core/random.h).
struct RandintKParams {
  uint64_t key;          // splitmix64(seed)
  uint64_t counter;      // counter of element 0
  int64_t start, count;  // the elements of this launch
  uint64_t low;          // the int64 low bound's bits
  uint64_t range;        // high - low; 0 stands for 2^64
};
