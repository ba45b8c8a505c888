// How elementwise work lays out its result and walks its operands, decided once in core
// for every backend. Each backend packs a DimPlan into its own parameters (the CPU's
// Walk, CUDA's Walk, Metal's StridedLayout) and keeps only what its hardware needs.
#pragma once

#include <cstdint>
#include <vector>

#include "layout.h"

namespace ember {

// N same-shaped views with their dims merged: a dim joins the one before it when, in
// every view, that one steps exactly over it; size-1 dims drop out. A dense tensor is
// one long dim. At least one dim (a single element is one dim of 1).
struct DimPlan {
  Shape shape;                   // merged dims, outermost first
  std::vector<Strides> strides;  // per view, per merged dim (elements)
  std::vector<int64_t> offsets;  // per view

  size_t ndim() const { return shape.size(); }
  int64_t inner() const { return shape.back(); }
  int64_t inner_stride(size_t view) const { return strides[view].back(); }
};

enum class WalkOrder {
  Logical,  // row-major over the shape: callers that map an element's number to something
  Memory,   // any order; dims sorted by the last view's strides (the one written), so a
            // result laid out like its inputs merges into one dense run
};

DimPlan plan_dims(const Shape& shape, const std::vector<const Layout*>& views,
                  WalkOrder order = WalkOrder::Logical);

// The strides of a fresh elementwise result of `shape` over `inputs` (each a view of
// `shape`, broadcast dims with stride 0), by PyTorch's rule: contiguous when every input
// is, else dense in the order of the inputs' strides, the first input that tells two
// dims apart deciding (broadcast dims tell nothing). So `a.T.exp()` is laid out like
// `a.T` and its walk is one dense run.
Strides result_strides(const Shape& shape, const std::vector<const Layout*>& inputs);

// A reduction of the trailing `reduced_dims` dims of `src` (core moves the reduced dims
// last), merged into the two shapes every backend implements:
//   rows:    each output reduces a run of `count` elements (dense when red_strides is one
//            dim of stride 1), outputs walked over the kept dims;
//   columns: the innermost kept dim is a dense run of `inner` outputs and the reduced dims
//            step over whole runs (e.g. sum over dim 0, or over a middle dim): the
//            reduced elements are walked in memory order and `inner` outputs advance
//            together, for each position of the outer kept dims.
struct ReducePlan {
  Shape outer;           // kept dims (merged); for columns, without the inner run
  Strides outer_strides;
  int64_t inner = 1;     // columns: the dense run of outputs (src stride 1)
  Shape red;             // reduced dims (merged), at least one
  Strides red_strides;
  int64_t count = 1;     // elements per output
  int64_t offset = 0;    // src's offset
  bool columns = false;
};

ReducePlan plan_reduce(const Layout& src, int64_t reduced_dims);

}  // namespace ember
