// Parameters of the cmp family.
#pragma once

#include "common.h"

// lhs and rhs come already broadcast to dst's shape (strides may be 0); dst is uint8.
struct CmpKParams {
  StridedLayout l[3];  // lhs, rhs, dst
  int64_t start;
  int64_t count;
};
