// Parameters of the unary family (math ops, clamp, affine).
#pragma once

#include "common.h"

struct UnaryKParams {
  StridedLayout l[2];  // src, dst
  int64_t start;
  int64_t count;
  // clamp on integers: x <= lo_cut -> lo (when has_lo), else x >= hi_cut -> hi (when
  // has_hi). The host finds the cuts where the CPU's double compares flip.
  int64_t lo_cut_i;
  int64_t hi_cut_i;
  int64_t lo_i;
  int64_t hi_i;
  // affine on integers: the doubles' bits, evaluated in software double precision so
  // that int64 results match the CPU's double(x) * mul + add exactly.
  int64_t mul_bits;
  int64_t add_bits;
  uint32_t has_lo;
  uint32_t has_hi;
  // clamp on floats: x < lo_cut -> lo, else x > hi_cut -> hi (float thresholds
  // equivalent to the CPU's compares of double(x) with the double bounds).
  float lo_cut_f;
  float hi_cut_f;
  float lo_f;
  float hi_f;
  // affine on floats: x * mul + add in float, as the CPU.
  float mul_f;
  float add_f;
};
