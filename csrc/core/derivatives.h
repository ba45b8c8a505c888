// The differentiable forms of the core ops (derivatives.cpp): each computes the op with
// grad mode off and records its backward. An op calls its form here when
// autograd::wants_grad holds for its inputs; the table ops' derivatives are switches over
// the op enums, one case per row of ops.def, so that a row without one is a failing test
// (tests/test_autograd.py runs every row).
#pragma once

#include "autograd.h"
#include "indexing.h"

namespace ember::autograd::d {

Tensor unary(UnaryOp op, const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);
Tensor affine(const Tensor& x, double mul, double add);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
Tensor reduce(ReduceOp op, const Tensor& x, const Dims& dims, bool keepdim);
Tensor mean(const Tensor& x, const Dims& dims, bool keepdim);
Tensor softmax(const Tensor& x, int64_t dim, bool log);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& m, const Tensor& v);
// Ops that only change the shape (reshape, view, flatten, squeeze, unsqueeze): the
// gradient takes the input's shape back.
Tensor reshaped(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op);
// Views of part of the input (narrow, slice, select): the gradient is zeros with the
// output's gradient written into the same view.
Tensor part(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const Dims& order);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);
// to_dtype, contiguous, clone: the gradient passes through (cast back by the engine).
Tensor copy(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op);
Tensor to_device(const Tensor& x, const DevicePtr& device);
// Rows of x at checked ids along d (index_checks::select_checked): what index_select,
// embedding, masked_select, t[mask] and t[ids] read through. Its gradient adds the output's
// rows back at the ids (repeated ids sum).
Tensor select_checked(const Tensor& x, int64_t d, const Tensor& ids);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& ids);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& ids, const Tensor& src, bool accumulate);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& ids, const Tensor& src,
                 const std::optional<Tensor>& alpha);
SortResult sort(const Tensor& x, int64_t dim, bool descending);
Tensor flip(const Tensor& x, const Dims& dims);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor pad_constant(const Tensor& x, const Shape& pads, double value);
Tensor prod(const Tensor& x, const Dims& dims, bool keepdim);
// A copy of x with x[key] = v (what t[key] = v records as, for a t in the graph).
Tensor index_put(const Tensor& x, const IndexKey& key, const Tensor& v);
Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step);

}  // namespace ember::autograd::d
