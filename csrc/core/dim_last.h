// Ops along one dim (softmax, scans, sorting) hand backends a view with that dim last;
// the result is viewed back in the input's dim order.
#pragma once

#include <cstdint>
#include <vector>

#include "layout.h"

namespace ember {

struct DimLast {
  Layout layout;              // the input's view with `dim` moved last
  std::vector<int64_t> back;  // permutation that restores the input's dim order
};

inline DimLast dim_last(const Layout& l, int64_t dim) {
  std::vector<int64_t> order, back(size_t(l.ndim()));
  for (int64_t i = 0; i < l.ndim(); ++i)
    if (i != dim) order.push_back(i);
  order.push_back(dim);
  for (size_t i = 0; i < order.size(); ++i) back[size_t(order[i])] = int64_t(i);
  return {l.permute(order), back};
}

}  // namespace ember
