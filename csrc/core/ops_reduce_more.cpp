// var, std, prod, logsumexp and norm, composed from sum, max, min and elementwise ops.
#include <cmath>
#include <limits>

#include "tensor.h"
#include "autograd.h"
#include "derivatives.h"

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
void check_float_input(const char* op, const Tensor& t) {
  if (!dtype_is_float(t.dtype()))
    throw_unsupported_dtype(
        op, t.dtype(), t.device(),
        std::string("it needs a float dtype; use t.to_dtype(ember.float32).") + op + "()");
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype(op, t.dtype(), t.device(), "this backend has no kernels for it");
}

Tensor float_input(const char* op, const Tensor& t) {
  check_float_input(op, t);
  const bool half = t.dtype() == DType::F16 || t.dtype() == DType::BF16;
  return half ? to_dtype(t, DType::F32) : t;
}

Tensor as_input_dtype(const Tensor& r, const Tensor& t) {
  return r.dtype() == t.dtype() ? r : to_dtype(r, t.dtype());
}

Tensor scalar(double v, const Tensor& like) {
  return full({}, v, like.dtype(), like.device());
}

// The variance as scale² · q, in float32 for halves. Corrected two-pass (Chan, Golub and
// LeVeque) around a refined mean: the deviations' own sum cancels what is left of the mean's rounding, which the plain sum of
// squares keeps (1e6 + 0.1·noise in float32 loses the std entirely). The deviations are
// divided by the largest one, so that their squares neither underflow (values near
// 1e-36) nor overflow; std then takes scale · sqrt(q) without squaring it.
// Composed from ops, so every backend has it; a fused one-pass kernel would be faster.
struct Spread {
  Tensor scale, q;
};

Spread spread(const Tensor& x, const Reduced& r, const Dims& dims, double correction,
              bool keepdim) {
  Tensor m = mean(x, dims, true);
  // The deviations from the rounded mean are exact (Sterbenz), so their mean moves the
  // center onto the data: a float32 sum's rounding can leave the mean several spreads
  // away (3e7 + noise), which the corrected formula alone cannot take out.
  m = binary(BinaryOp::Add, m, mean(binary(BinaryOp::Sub, x, m), dims, true));
  Tensor c = binary(BinaryOp::Sub, x, m);
  Tensor s = binary(BinaryOp::Maximum, reduce(ReduceOp::Max, c, dims, true),
                    unary(UnaryOp::Neg, reduce(ReduceOp::Min, c, dims, true)));
  // No spread (or NaN, which the sums carry on): scale by one.
  Tensor usable =
      binary(BinaryOp::BitwiseAnd, cmp(CmpOp::Gt, s, scalar(0.0, s)), unary(UnaryOp::IsFinite, s));
  s = where(usable, s, scalar(1.0, s));
  Tensor u = binary(BinaryOp::Div, c, s);
  Tensor squares = reduce(ReduceOp::Sum, unary(UnaryOp::Sqr, u), dims, keepdim);
  Tensor total = reduce(ReduceOp::Sum, u, dims, keepdim);
  // PyTorch divides by max(N - correction, 0): no degrees of freedom give inf or NaN.
  double dof = std::max(double(r.count) - correction, 0.0);
  Tensor excess = affine(unary(UnaryOp::Sqr, total), 1.0 / double(r.count), 0.0);
  Tensor q = affine(binary(BinaryOp::Sub, squares, excess), 1.0 / dof, 0.0);
  // Rounding can leave q a hair below zero when every deviation is equal.
  q = binary(BinaryOp::Maximum, q, scalar(0.0, q));
  return Spread{keepdim ? s : reshape(s, r.kept), q};
}

// var or std of nothing: NaN, as PyTorch's 0 / 0.
Tensor nan_result(const Reduced& r, const Tensor& t, bool keepdim) {
  return full(keepdim ? r.keeped : r.kept, std::nan(""), t.dtype(), t.device());
}

}  // namespace

Tensor var(const Tensor& t, const Dims& dims, double correction, bool keepdim) {
  Reduced r = reduced("var", t, dims);
  check_float_input("var", t);
  if (r.count == 0) return nan_result(r, t, keepdim);
  if (t.dtype() != DType::F64 && !autograd::wants_grad({&t}))
    if (auto v = var_one_pass("var", t, dims, correction, false, keepdim)) return *v;
  // the composition's input: half types widened (after the one-pass kernel declined)
  Tensor x = float_input("var", t);
  Spread v = spread(x, r, dims, correction, keepdim);
  return as_input_dtype(binary(BinaryOp::Mul, binary(BinaryOp::Mul, v.q, v.scale), v.scale), t);
}

Tensor std_dev(const Tensor& t, const Dims& dims, double correction, bool keepdim) {
  Reduced r = reduced("std", t, dims);
  check_float_input("std", t);
  if (r.count == 0) return nan_result(r, t, keepdim);
  if (t.dtype() != DType::F64 && !autograd::wants_grad({&t}))
    if (auto v = var_one_pass("std", t, dims, correction, true, keepdim)) return *v;
  // the composition's input: half types widened (after the one-pass kernel declined)
  Tensor x = float_input("std", t);
  Spread v = spread(x, r, dims, correction, keepdim);
  // The root is taken before a half input's rounding, not after.
  return as_input_dtype(binary(BinaryOp::Mul, unary(UnaryOp::Sqrt, v.q), v.scale), t);
}

Tensor prod(const Tensor& t, const Dims& dims, bool keepdim) {
  if (autograd::wants_grad({&t})) return autograd::d::prod(t, dims, keepdim);
  Reduced r = reduced("prod", t, dims);
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype("prod", t.dtype(), t.device(), "this backend has no kernels for it");
  // Integers multiply in int64 (wrapping, as PyTorch), halves in float32.
  const bool half = t.dtype() == DType::F16 || t.dtype() == DType::BF16;
  DType work = !dtype_is_float(t.dtype()) ? DType::I64 : half ? DType::F32 : t.dtype();
  if (r.count > 0) {
    if (auto p = prod_one_pass(to_dtype(t, work), dims, keepdim))
      return half ? to_dtype(*p, t.dtype()) : *p;
  }
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
  if (x.dtype() == DType::F32 && !autograd::wants_grad({&x}))
    if (auto v = logsumexp_one_pass(x, dims, keepdim)) return as_input_dtype(*v, like);
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
  const bool squares = p == 2;
  Tensor a = squares ? x : unary(UnaryOp::Abs, x), out = a;
  if (p == std::numeric_limits<double>::infinity()) {
    out = reduce(ReduceOp::Max, a, dims, keepdim);
  } else if (p == -std::numeric_limits<double>::infinity()) {
    out = reduce(ReduceOp::Min, a, dims, keepdim);
  } else if (p == 0) {  // the count of non-zeros
    Tensor nonzero = to_dtype(cmp(CmpOp::Ne, x, scalar(0.0, x)), x.dtype());
    out = reduce(ReduceOp::Sum, nonzero, dims, keepdim);
  } else if (p == 1) {
    out = reduce(ReduceOp::Sum, a, dims, keepdim);
  } else if (p == 2) {  // x * x needs no abs first; one pass where the backend fuses them
    std::optional<Tensor> s;
    if (!autograd::wants_grad({&x})) s = sum_squares(x, dims, keepdim);
    if (!s) s = reduce(ReduceOp::Sum, unary(UnaryOp::Sqr, x), dims, keepdim);
    out = unary(UnaryOp::Sqrt, *s);
  } else {
    Tensor s = reduce(ReduceOp::Sum, binary(BinaryOp::Pow, a, scalar(p, a)), dims, keepdim);
    out = binary(BinaryOp::Pow, s, scalar(1.0 / p, s));
  }
  return as_input_dtype(out, t);
}

}  // namespace ember
