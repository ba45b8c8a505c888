// numpy's (and PyTorch's) indexing rules, t[key] and t[key] = value, for every backend:
// a front end (the Python bindings) turns each part of a key into an IndexItem, and core
// does the rest: ints, slices, None and ... make views; integer arrays of any shape
// (negatives count from the end, several broadcast together, numpy's placement of the
// result dims) gather through one index_select and write through one scatter; a bool
// mask as the whole key selects its true positions of t's leading dims (ops_mask.cpp);
// inside a tuple it stands for the integer arrays of its true positions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensor.h"

namespace ember {

struct IndexItem {
  // Bool: a Python bool, numpy's 0-d mask known on the host (t[0, True], t[False]).
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Array, Bool };
  Kind kind = Kind::NewAxis;
  int64_t value = 0;    // Int; Bool: 0 or 1
  std::string too_big;  // Int past int64: its text (out of range for any dim)
  // Slice: bounds as Python's PySlice_Unpack leaves them (a missing start or stop is 0 or
  // INT64_MAX, or for a negative step INT64_MAX or INT64_MIN); core clips them to the dim.
  int64_t start = 0, stop = 0, step = 1;
  std::optional<Tensor> array;  // Array: integer ids or a bool mask, any shape (a 0-d bool
                                // is numpy's 0-d mask)
};
using IndexKey = std::vector<IndexItem>;

// A key checked against t and walked: the view its ints, slices, None and ... make, and
// what the arrays or the mask then select of it. resolve_index does every check of the
// key (its device, dtypes, ranges; numpy's errors) before anything is read or written.
struct ResolvedIndex {
  Tensor view;
  std::optional<Tensor> mask;        // a bool mask as the whole key, over view's leading dims
  std::vector<int64_t> array_dims;   // dims of `view` that index arrays select, increasing
  std::vector<Tensor> ids;           // their ids, each in [0, size) of its dim (but see check
                                     // and deferred)
  Shape ids_shape;                   // the arrays' broadcast shape
  bool arrays_lead = false;          // numpy: separated arrays put their dims first
  // Set by a resolve for_read whose range check is still under way (its one array's ids
  // as the user gave them): read_index calls it once the gather is queued, and it raises.
  std::function<void()> check;
  // Set by a resolve of two to four arrays that records no gradient: their ids as the user
  // gave them (negative ones too), and what read_index or write_index still checks of them.
  // `at` is the array's place in ids, `size` its dim's length, `source_dim` the user's dim
  // that an error names.
  struct Unchecked {
    size_t at;
    int64_t size, source_dim;
  };
  std::vector<Unchecked> unchecked;
  bool deferred = false;  // the ids in `unchecked` are still to be checked and wrapped
};

// for_read: the key will only be read (read_index), so that its range check may end
// after the gather is queued.
ResolvedIndex resolve_index(const Tensor& t, const IndexKey& key, bool for_read = false);
// t[key]: a view when the key has no arrays or mask, else a copy.
Tensor read_index(const ResolvedIndex& r);
// t[key] = value: value (on t's device, any dtype: cast to t's) broadcasts to t[key]'s
// shape; the last of repeated positions wins, as in numpy.
void write_index(const ResolvedIndex& r, const Tensor& value);

inline Tensor index(const Tensor& t, const IndexKey& key) {
  return read_index(resolve_index(t, key, /*for_read=*/true));
}

}  // namespace ember
