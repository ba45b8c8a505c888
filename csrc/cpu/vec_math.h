// Float math written so the compiler vectorises it: branch-free, no libm calls.
#pragma once

#include <cstdint>

namespace ember::cpu {

// exp over a dense run, within 2 ulp of libm; NaN, +-inf and overflow as libm.
void exp_f32(const float* x, float* y, int64_t n);

}  // namespace ember::cpu
