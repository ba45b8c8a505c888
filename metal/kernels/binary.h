// Parameters of the binary and cmp families.
#pragma once

#include "common.h"

// lhs and rhs come already broadcast to dst's shape (strides may be 0); cmp writes uint8.
struct BinaryKParams {
  StridedLayout l[3];  // lhs, rhs, dst
  int64_t start;
  int64_t count;
};
