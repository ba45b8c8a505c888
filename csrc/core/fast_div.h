// Division by a fixed divisor d in [1, 2^31] of numbers below 2^31 as a multiply-high, an
// add and a shift (Granlund and Montgomery's method): q = (mulhi(n, magic) + n) >> shift.
// The GPU backends pack a view's dims with these (a 64-bit division takes dozens of
// instructions on a GPU, a 32-bit one about ten); the host computes them here once.
#pragma once

#include <cstdint>

namespace ember {

struct FastDivParams {
  uint32_t magic = 1, shift = 0;
};

inline FastDivParams fast_div_params(uint32_t d) {
  FastDivParams p;
  while ((uint64_t(1) << p.shift) < d) ++p.shift;
  p.magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << p.shift) - d)) / d + 1);
  return p;
}

}  // namespace ember
