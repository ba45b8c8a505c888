// Params of the emulator's own test kernels (metal/tests/kernels/emutest.metal).
#pragma once

#include "common.h"

struct EmuTestParams {
  int64_t n;     // elements
  float value;   // written / added by some kernels
  float scale;   // multiplied by some kernels
  uint32_t bad;  // the lane that misbehaves (early return, ...)
  uint32_t pad;
};
