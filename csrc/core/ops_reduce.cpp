#include <algorithm>
#include <optional>

#include "tensor.h"
#include "derivatives.h"

namespace ember {

namespace {

// Wraps dims, rejects repeats; empty means every dim.
std::vector<bool> reduced_mask(const char* op, const Tensor& t, const Dims& dims) {
  std::vector<bool> mask(size_t(t.ndim()), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, t.ndim());
    if (mask[size_t(w)]) throw_invalid(op, "dim " + std::to_string(d) + " appears twice");
    mask[size_t(w)] = true;
  }
  return mask;
}

// A reduction's view for the backends, which want the reduced dims last.
struct Reduction {
  Dims order;             // kept dims, then reduced ones
  Shape kept, keep_shape;  // the result's shape without and with keepdim
  int64_t reduced_count = 1, n_reduced = 0;
};

Reduction plan_reduction(const Tensor& t, const std::vector<bool>& mask) {
  Reduction r;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (!mask[size_t(d)]) {
      r.order.push_back(d);
      r.kept.push_back(t.shape()[size_t(d)]);
    }
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (mask[size_t(d)]) {
      r.order.push_back(d);
      r.reduced_count *= t.shape()[size_t(d)];
      ++r.n_reduced;
    }
  for (int64_t d = 0; d < t.ndim(); ++d)
    r.keep_shape.push_back(mask[size_t(d)] ? 1 : t.shape()[size_t(d)]);
  return r;
}

// Reduces the dims in `mask` with the backend.
Tensor reduce_masked(ReduceOp op, const Tensor& t, const std::vector<bool>& mask, bool keepdim,
                     DType out_dtype) {
  const char* name = reduce_name(op);
  const Reduction r = plan_reduction(t, mask);
  if (op != ReduceOp::Sum && r.reduced_count == 0 && shape_numel(r.kept) > 0)
    throw_invalid(name, "cannot reduce a zero-size dim (shape " + shape_str(t.shape()) +
                            "): there is no identity for " + name);
  Tensor dst = empty(r.kept, out_dtype, t.device(), name);
  {
    StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
    t.storage()->impl().reduce(op, t.layout().permute(r.order), r.n_reduced, dst.storage()->impl());
  }
  return keepdim ? dst.view_as(Layout(r.keep_shape)) : dst;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& t, const Dims& dims, bool keepdim) {
  if (autograd::wants_grad({&t})) return autograd::d::reduce(op, t, dims, keepdim);
  const char* name = reduce_name(op);
  auto mask = reduced_mask(name, t, dims);
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype(name, t.dtype(), t.device(), "this backend has no kernels for it");
  DType out = (op == ReduceOp::Sum && !dtype_is_float(t.dtype())) ? DType::I64 : t.dtype();
  return reduce_masked(op, t, mask, keepdim, out);
}

namespace {

// A one-pass backend hook over `dims` of t into a new tensor of t's dtype:
// hook(impl, src layout with the reduced dims last, their count, dst impl). nullopt where
// the backend declines (core then composes the reduction).
template <typename Hook>
std::optional<Tensor> one_pass(const char* op, const Tensor& t, const Dims& dims, bool keepdim,
                               Hook hook) {
  const Reduction r = plan_reduction(t, reduced_mask(op, t, dims));
  Tensor dst = empty(r.kept, t.dtype(), t.device(), op);
  bool done = false;
  {
    StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
    done = hook(t.storage()->impl(), t.layout().permute(r.order), r.n_reduced,
                dst.storage()->impl());
  }
  if (!done) return std::nullopt;
  return keepdim ? dst.view_as(Layout(r.keep_shape)) : dst;
}

}  // namespace

std::optional<Tensor> sum_squares(const Tensor& t, const Dims& dims, bool keepdim) {
  return one_pass("norm", t, dims, keepdim, [](const BackendStorage& s, const Layout& l, int64_t n,
                                               BackendStorage& d) {
    return s.reduce_sum_squares(l, n, d);
  });
}

std::optional<Tensor> prod_one_pass(const Tensor& t, const Dims& dims, bool keepdim) {
  return one_pass("prod", t, dims, keepdim, [](const BackendStorage& s, const Layout& l, int64_t n,
                                               BackendStorage& d) {
    return s.reduce_prod(l, n, d);
  });
}

std::optional<Tensor> logsumexp_one_pass(const Tensor& t, const Dims& dims, bool keepdim) {
  return one_pass("logsumexp", t, dims, keepdim,
                  [](const BackendStorage& s, const Layout& l, int64_t n, BackendStorage& d) {
                    return s.reduce_logsumexp(l, n, d);
                  });
}

std::optional<Tensor> var_one_pass(const char* op, const Tensor& t, const Dims& dims,
                                   double correction, bool root, bool keepdim) {
  return one_pass(op, t, dims, keepdim,
                  [&](const BackendStorage& s, const Layout& l, int64_t n, BackendStorage& d) {
                    return s.reduce_var(l, n, correction, root, d);
                  });
}

Tensor mean(const Tensor& t, const Dims& dims, bool keepdim) {
  if (autograd::wants_grad({&t})) return autograd::d::mean(t, dims, keepdim);
  if (!dtype_is_float(t.dtype()))
    throw_unsupported_dtype("mean", t.dtype(), t.device(),
                            "it needs a float dtype; use t.to_dtype(ember.float32).mean()");
  auto mask = reduced_mask("mean", t, dims);
  int64_t count = 1;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (mask[size_t(d)]) count *= t.shape()[size_t(d)];
  // A half sum overflows long before the mean does (12 x 5460 > 65504): sum in float32.
  const bool half = t.dtype() == DType::F16 || t.dtype() == DType::BF16;
  Tensor src = half ? to_dtype(t, DType::F32) : t;
  Tensor s = reduce_masked(ReduceOp::Sum, src, mask, keepdim, src.dtype());
  Tensor m = affine(s, 1.0 / double(count), 0.0);
  return half ? to_dtype(m, t.dtype()) : m;
}

Tensor arg_reduce(ReduceOp op, const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  const char* name = reduce_name(op);
  if (!dim) {
    Tensor flat = reshape(t, {t.numel()});
    Tensor r = reduce_masked(op, flat, {true}, false, DType::I64);
    return keepdim ? r.view_as(Layout(Shape(size_t(t.ndim()), 1))) : r;
  }
  if (t.ndim() == 0) {  // numpy allows axis 0 / -1 on a 0-d array
    if (*dim != 0 && *dim != -1) throw_dim_out_of_range(name, *dim, 0);
    return arg_reduce(op, t, std::nullopt, keepdim);
  }
  std::vector<bool> mask(size_t(t.ndim()), false);
  mask[size_t(wrap_dim(name, *dim, t.ndim()))] = true;
  return reduce_masked(op, t, mask, keepdim, DType::I64);
}

Tensor softmax(const Tensor& t, int64_t dim, bool log) {
  if (autograd::wants_grad({&t})) return autograd::d::softmax(t, dim, log);
  const char* name = log ? "log_softmax" : "softmax";
  if (t.ndim() == 0) return softmax(unsqueeze(t, 0), 0, log).view_as(Layout(Shape{}));
  int64_t d = wrap_dim(name, dim, t.ndim());
  if (!dtype_is_float(t.dtype()))
    throw_unsupported_dtype(name, t.dtype(), t.device(), "it needs a float dtype");
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype(name, t.dtype(), t.device(), "this backend has no kernels for it");
  if (t.ndim() > 1 && t.shape()[size_t(d)] > 1 && t.layout().strides()[size_t(d)] != 1 &&
      t.numel() > t.shape()[size_t(d)]) {
    // Over a dim the memory does not run along (softmax over dim 0 of a row-major tensor):
    // column reductions and broadcast elementwise ops, each one pass in memory order (the
    // reduction plan's columns), instead of a row kernel gathering every row from a
    // column. The same math as the row kernels: shift by the max, exp, sum; 16-bit floats
    // compute in float32 and round once. The result is laid out like the input.
    if (t.is_contiguous()) {
      Tensor dst = empty(t.shape(), t.dtype(), t.device(), name);
      bool done = false;
      {
        StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
        done = t.storage()->impl().softmax_columns(t.layout(), d, log, dst.storage()->impl());
      }
      if (done) return dst;
    }
    const bool half = dtype_size(t.dtype()) == 2;
    const Tensor x = half ? to_dtype(t, DType::F32) : t;
    const Tensor shifted = binary(BinaryOp::Sub, x, reduce(ReduceOp::Max, x, {d}, true));
    const Tensor e = unary(UnaryOp::Exp, shifted);
    const Tensor sum = reduce(ReduceOp::Sum, e, {d}, true);
    const Tensor out = log ? binary(BinaryOp::Sub, shifted, unary(UnaryOp::Log, sum))
                           : binary(BinaryOp::Div, e, sum);
    return half ? to_dtype(out, t.dtype()) : out;
  }
  Dims order, inverse(size_t(t.ndim()));
  for (int64_t i = 0; i < t.ndim(); ++i)
    if (i != d) order.push_back(i);
  order.push_back(d);
  for (size_t i = 0; i < order.size(); ++i) inverse[size_t(order[i])] = int64_t(i);
  Layout src = t.layout().permute(order);
  Tensor dst = empty(src.shape(), t.dtype(), t.device(), name);
  {
    StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
    t.storage()->impl().softmax(src, log, dst.storage()->impl());
  }
  return dst.view_as(dst.layout().permute(inverse));
}

}  // namespace ember
