// var, std, prod, logsumexp and norm, composed from sum, max, min and elementwise ops.
#include <cmath>
#include <limits>

#include "tensor.h"

namespace ember {

namespace {

// The dims a reduction removes (empty: all), wrapped and checked once each.
struct Reduced {
  std::vector<bool> mask;
  int64_t count = 1;   // elements reduced into each result
  Shape kept, keeped;  // the result's shape without and with keepdim
};

Reduced reduced(const char* op, const Tensor& t, const Dims& dims) {
  Reduced r;
  r.mask.assign(size_t(t.ndim()), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(op, d, t.ndim());
    if (r.mask[size_t(w)]) throw_invalid(op, "dim " + std::to_string(d) + " appears twice");
    r.mask[size_t(w)] = true;
  }
  for (int64_t d = 0; d < t.ndim(); ++d) {
    int64_t n = t.shape()[size_t(d)];
    if (r.mask[size_t(d)])
      r.count *= n;
    else
      r.kept.push_back(n);
    r.keeped.push_back(r.mask[size_t(d)] ? 1 : n);
  }
  return r;
}

// Float dtypes only; halves are computed in float32 (their sums overflow early).
Tensor float_input(const char* op, const Tensor& t) {
  if (!dtype_is_float(t.dtype()))
    throw_unsupported_dtype(
        op, t.dtype(), t.device(),
        std::string("it needs a float dtype; use t.to_dtype(ember.float32).") + op + "()");
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype(op, t.dtype(), t.device(), "this backend has no kernels for it");
  const bool half = t.dtype() == DType::F16 || t.dtype() == DType::BF16;
  return half ? to_dtype(t, DType::F32) : t;
}

Tensor as_input_dtype(const Tensor& r, const Tensor& t) {
  return r.dtype() == t.dtype() ? r : to_dtype(r, t.dtype());
}

Tensor scalar(double v, const Tensor& like) {
  return full({}, v, like.dtype(), like.device());
}

}  // namespace

Tensor var(const Tensor& t, const Dims& dims, double correction, bool keepdim) {
  Reduced r = reduced("var", t, dims);
  Tensor x = float_input("var", t);
  Tensor centered = binary(BinaryOp::Sub, x, mean(x, dims, true));
  Tensor squares = reduce(ReduceOp::Sum, unary(UnaryOp::Sqr, centered), dims, keepdim);
  // PyTorch divides by max(N - correction, 0): no degrees of freedom give inf or NaN.
  double dof = std::max(double(r.count) - correction, 0.0);
  return as_input_dtype(affine(squares, 1.0 / dof, 0.0), t);
}

Tensor std_dev(const Tensor& t, const Dims& dims, double correction, bool keepdim) {
  reduced("std", t, dims);  // so that a bad dim's or dtype's error names std
  float_input("std", t);
  return unary(UnaryOp::Sqrt, var(t, dims, correction, keepdim));
}

Tensor prod(const Tensor& t, const Dims& dims, bool keepdim) {
  Reduced r = reduced("prod", t, dims);
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype("prod", t.dtype(), t.device(), "this backend has no kernels for it");
  // Integers multiply in int64 (wrapping, as PyTorch), halves in float32.
  const bool half = t.dtype() == DType::F16 || t.dtype() == DType::BF16;
  DType work = !dtype_is_float(t.dtype()) ? DType::I64 : half ? DType::F32 : t.dtype();
  Dims order;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (!r.mask[size_t(d)]) order.push_back(d);
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (r.mask[size_t(d)]) order.push_back(d);
  Shape rows = r.kept;
  rows.push_back(r.count);
  Tensor x = reshape(to_dtype(permute(t, order), work), rows);
  if (r.count == 0) x = ones(r.kept, work, t.device());
  // Pairwise products halve the reduced dim each pass: log2(N) elementwise launches.
  for (int64_t n = r.count; n > 1; n /= 2) {  // an odd one out joins the first product
    int64_t h = n / 2, last = int64_t(rows.size()) - 1;
    Tensor y = binary(BinaryOp::Mul, narrow(x, last, 0, h), narrow(x, last, h, h));
    if (n % 2) {
      Tensor first = narrow(y, last, 0, 1);
      binary(BinaryOp::Mul, first, narrow(x, last, n - 1, 1), first);
    }
    x = y;
  }
  Tensor out = reshape(x, keepdim ? r.keeped : r.kept);
  return half ? to_dtype(out, t.dtype()) : out;
}

Tensor logsumexp(const Tensor& t, const Dims& dims, bool keepdim) {
  Reduced r = reduced("logsumexp", t, dims);
  // Integers give float32, as PyTorch's.
  Tensor x = float_input("logsumexp", dtype_is_float(t.dtype()) ? t : to_dtype(t, DType::F32));
  const Tensor& like = dtype_is_float(t.dtype()) ? t : x;
  if (r.count == 0)
    return full(keepdim ? r.keeped : r.kept, -std::numeric_limits<double>::infinity(), like.dtype(),
                t.device());
  // The max is subtracted for range; an infinite max is not (inf - inf would be NaN).
  Tensor m = reduce(ReduceOp::Max, x, dims, true);
  m = where(unary(UnaryOp::IsFinite, m), m, scalar(0.0, m));
  Tensor s = reduce(ReduceOp::Sum, unary(UnaryOp::Exp, binary(BinaryOp::Sub, x, m)), dims, true);
  Tensor out = binary(BinaryOp::Add, unary(UnaryOp::Log, s), m);
  return as_input_dtype(reshape(out, keepdim ? r.keeped : r.kept), like);
}

Tensor norm(const Tensor& t, double p, const Dims& dims, bool keepdim) {
  Reduced r = reduced("norm", t, dims);
  Tensor x = float_input("norm", t);
  if (std::isnan(p)) throw_invalid("norm", "p must be a number, inf or -inf, not NaN");
  if (r.count == 0 && (p < 0 || std::isinf(p)))
    throw_invalid("norm", "the " + std::string(p > 0 ? "inf" : "negative p") +
                              " norm of a zero-size dim (shape " + shape_str(t.shape()) +
                              ") has no value: the operation has no identity");
  Tensor a = unary(UnaryOp::Abs, x), out = a;
  if (p == std::numeric_limits<double>::infinity()) {
    out = reduce(ReduceOp::Max, a, dims, keepdim);
  } else if (p == -std::numeric_limits<double>::infinity()) {
    out = reduce(ReduceOp::Min, a, dims, keepdim);
  } else if (p == 0) {  // the count of non-zeros
    Tensor nonzero = to_dtype(cmp(CmpOp::Ne, x, scalar(0.0, x)), x.dtype());
    out = reduce(ReduceOp::Sum, nonzero, dims, keepdim);
  } else if (p == 1) {
    out = reduce(ReduceOp::Sum, a, dims, keepdim);
  } else if (p == 2) {
    out = unary(UnaryOp::Sqrt, reduce(ReduceOp::Sum, unary(UnaryOp::Sqr, a), dims, keepdim));
  } else {
    Tensor s = reduce(ReduceOp::Sum, binary(BinaryOp::Pow, a, scalar(p, a)), dims, keepdim);
    out = binary(BinaryOp::Pow, s, scalar(1.0 / p, s));
  }
  return as_input_dtype(out, t);
}

}  // namespace ember
