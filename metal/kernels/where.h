// Parameters of the where family.
#pragma once

#include "common.h"

// cond, on_true and on_false come already broadcast to dst's shape (strides may be 0).
struct WhereKParams {
  StridedLayout l[4];  // cond, on_true, on_false, dst
  int64_t start;
  int64_t count;
};
