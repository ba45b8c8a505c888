// masked_fill, isclose, allclose and elu, composed from comparisons, where and unary ops.
#include "tensor.h"
#include "derivatives.h"

namespace ember {

namespace {

// Logical or / and of two predicates through where, whatever the predicate dtype is.
Tensor either(const Tensor& x, const Tensor& y) {
  return where(x, x, y);
}
Tensor both(const Tensor& x, const Tensor& y) {
  return where(x, y, x);
}

Tensor scalar(double v, const Tensor& like) {
  return full({}, v, like.dtype(), like.device());
}

}  // namespace

DType predicate_dtype() {
  return op_result_dtype(OpClass::Predicate, DType::F32);  // what comparisons give
}

namespace {

void check_masked_fill(const char* op, const Tensor& t, const Tensor& mask, const Tensor& value) {
  broadcast_shapes(op, t.shape(), mask.shape());
  if (value.ndim() != 0)
    throw_invalid(op, "the value must be a number or a 0-d tensor, got shape " +
                          shape_str(value.shape()));
  Storage::check_same_device(op, *t.storage(), *mask.storage());
  Storage::check_same_device(op, *t.storage(), *value.storage());
  if (mask.dtype() != predicate_dtype())
    throw Error(ErrorKind::DTypeMismatch,
                std::string(op) + ": the mask must be a comparison's result (dtype " +
                    dtype_name(predicate_dtype()) + "), got " + dtype_name(mask.dtype()) +
                    "; make one with a comparison, e.g. t > 0, or mask != 0")
        .with("op", std::string(op))
        .with("lhs", predicate_dtype())
        .with("rhs", mask.dtype());
}

}  // namespace

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value) {
  check_masked_fill("masked_fill", t, mask, value);
  if (autograd::wants_grad({&t, &value})) return autograd::d::masked_fill(t, mask, value);
  return where(mask, to_dtype(value, t.dtype()), t);
}

void masked_fill_inplace(const Tensor& t, const Tensor& mask, const Tensor& value) {
  const char* op = "masked_fill_";
  check_masked_fill(op, t, mask, value);
  if (broadcast_shapes(op, t.shape(), mask.shape()) != t.shape())
    throw_shape_mismatch(op, t.shape(), mask.shape(),
                         "in place, the mask must broadcast to the tensor's shape");
  where_into(mask, value, t, t, op);  // one pass over t (refuses a t or value in the graph)
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  broadcast_shapes("isclose", a.shape(), b.shape());
  Storage::check_same_device("isclose", *a.storage(), *b.storage());
  if (a.dtype() != b.dtype()) throw_dtype_mismatch("isclose", a.dtype(), b.dtype());
  if (!(rtol >= 0) || !(atol >= 0))
    throw_invalid("isclose", "rtol and atol must be >= 0, got rtol=" + std::to_string(rtol) +
                                 " and atol=" + std::to_string(atol));
  // PyTorch's definition: equal (infinities too), or NaN both with equal_nan, or a
  // finite |a - b| <= atol + rtol * |b|, computed in float32 for integer inputs.
  Tensor close = cmp(CmpOp::Eq, a, b);
  const bool fl = dtype_is_float(a.dtype());
  if (equal_nan && fl)
    close = either(close, both(unary(UnaryOp::IsNan, a), unary(UnaryOp::IsNan, b)));
  if (rtol == 0 && atol == 0) return close;
  Tensor x = fl ? a : to_dtype(a, DType::F32), y = fl ? b : to_dtype(b, DType::F32);
  Tensor error = unary(UnaryOp::Abs, binary(BinaryOp::Sub, x, y));
  Tensor allowed = affine(unary(UnaryOp::Abs, y), rtol, atol);
  Tensor within = both(unary(UnaryOp::IsFinite, error), cmp(CmpOp::Le, error, allowed));
  return either(close, within);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  Tensor close = isclose(a, b, rtol, atol, equal_nan);
  Tensor count = reduce(ReduceOp::Sum, to_dtype(close, DType::U8), {}, false);
  int64_t n = 0;
  to_host(count, &n);
  return n == close.numel();
}

Tensor elu(const Tensor& t, double alpha) {
  check_op_dtype("elu", OpClass::Float, t.dtype(), t.device());
  Tensor negative = affine(unary(UnaryOp::Expm1, t), alpha, 0.0);
  return where(cmp(CmpOp::Gt, t, scalar(0.0, t)), t, negative);
}

}  // namespace ember
