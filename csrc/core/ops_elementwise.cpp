#include <limits>

#include "tensor.h"

namespace ember {

namespace {

// The destination of an elementwise op: `out` checked against the result's facts,
// or a fresh tensor. Shapes first, then devices, then dtypes.
Tensor destination(const char* op, const std::optional<Tensor>& out, const Shape& shape,
                   DType dtype, const Tensor& input) {
  if (!out) return empty(shape, dtype, input.device(), op);
  if (out->shape() != shape)
    throw_shape_mismatch(op, shape, out->shape(), "the out= tensor must have the result's shape");
  Storage::check_same_device(op, *input.storage(), *out->storage());
  if (out->dtype() != dtype) throw_dtype_mismatch(op, dtype, out->dtype());
  check_writable(op, *out);
  return *out;
}

// Runs `kernel(dst)` into `dst`, through a temporary when dst overlaps an input.
template <typename Kernel>
Tensor run_into(Tensor dst, std::initializer_list<const Tensor*> inputs, Kernel&& kernel) {
  for (const Tensor* in : inputs)
    if (write_clobbers(*in, in->layout(), dst)) {
      Tensor tmp = empty(dst.shape(), dst.dtype(), dst.device());
      kernel(tmp);
      copy_into(tmp, dst, "copy");
      return dst;
    }
  kernel(dst);
  return dst;
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& t, const std::optional<Tensor>& out) {
  const OpInfo& info = op_info(op);
  check_op_dtype(info.name, info.cls, t.dtype(), t.device());
  Tensor dst = destination(info.name, out, t.shape(), op_result_dtype(info.cls, t.dtype()), t);
  return run_into(dst, {&t}, [&](Tensor& d) {
    StorageLocks locks({t.storage().get()}, {d.storage().get()});
    t.storage()->impl().unary(op, UnaryParams{}, t.layout(), d.storage()->impl(), d.layout());
  });
}

Tensor clamp(const Tensor& t, std::optional<double> lo, std::optional<double> hi) {
  if (lo && hi && *lo > *hi)
    throw_invalid("clamp",
                  "min " + std::to_string(*lo) + " is greater than max " + std::to_string(*hi));
  UnaryParams p;
  p.lo = lo.value_or(-std::numeric_limits<double>::infinity());
  p.hi = hi.value_or(std::numeric_limits<double>::infinity());
  Tensor dst = empty(t.shape(), t.dtype(), t.device(), "clamp");
  StorageLocks locks({t.storage().get()}, {dst.storage().get()});
  t.storage()->impl().unary(UnaryOp::Clamp, p, t.layout(), dst.storage()->impl(), dst.layout());
  return dst;
}

Tensor affine(const Tensor& t, double mul, double add) {
  Tensor dst = empty(t.shape(), t.dtype(), t.device(), "affine");
  StorageLocks locks({t.storage().get()}, {dst.storage().get()});
  t.storage()->impl().affine(t.layout(), mul, add, dst.storage()->impl(), dst.layout());
  return dst;
}

Tensor binary(BinaryOp op, const Tensor& lhs, const Tensor& rhs, const std::optional<Tensor>& out) {
  const char* name = binary_name(op);
  Shape shape =
      lhs.shape() == rhs.shape() ? lhs.shape() : broadcast_shapes(name, lhs.shape(), rhs.shape());
  Storage::check_same_device(name, *lhs.storage(), *rhs.storage());
  if (lhs.dtype() != rhs.dtype()) throw_dtype_mismatch(name, lhs.dtype(), rhs.dtype());
  check_op_dtype(name, op_info(op).cls, lhs.dtype(), lhs.device());
  Tensor dst = destination(name, out, shape, lhs.dtype(), lhs);
  // Same shapes need no broadcast views (and no copies of the layouts).
  const bool same = lhs.shape() == rhs.shape();
  Layout lb, rb;
  if (!same)
    lb = lhs.layout().broadcast_to(name, shape), rb = rhs.layout().broadcast_to(name, shape);
  const Layout& l = same ? lhs.layout() : lb;
  const Layout& r = same ? rhs.layout() : rb;
  return run_into(dst, {&lhs, &rhs}, [&](Tensor& d) {
    StorageLocks locks({lhs.storage().get(), rhs.storage().get()}, {d.storage().get()});
    lhs.storage()->impl().binary(op, l, rhs.storage()->impl(), r, d.storage()->impl(), d.layout());
  });
}

Tensor cmp(CmpOp op, const Tensor& lhs, const Tensor& rhs) {
  const char* name = cmp_name(op);
  Shape shape = broadcast_shapes(name, lhs.shape(), rhs.shape());
  Storage::check_same_device(name, *lhs.storage(), *rhs.storage());
  if (lhs.dtype() != rhs.dtype()) throw_dtype_mismatch(name, lhs.dtype(), rhs.dtype());
  check_op_dtype(name, op_info(op).cls, lhs.dtype(), lhs.device());
  Tensor dst = empty(shape, op_result_dtype(op_info(op).cls, lhs.dtype()), lhs.device(), name);
  Layout l = lhs.layout().broadcast_to(name, shape), r = rhs.layout().broadcast_to(name, shape);
  StorageLocks locks({lhs.storage().get(), rhs.storage().get()}, {dst.storage().get()});
  lhs.storage()->impl().cmp(op, l, rhs.storage()->impl(), r, dst.storage()->impl(), dst.layout());
  return dst;
}

Tensor where(const Tensor& cond, const Tensor& on_true, const Tensor& on_false) {
  Shape shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape(), on_true.shape()),
                                 on_false.shape());
  Storage::check_same_device("where", *cond.storage(), *on_true.storage());
  Storage::check_same_device("where", *on_true.storage(), *on_false.storage());
  if (on_true.dtype() != on_false.dtype())
    throw_dtype_mismatch("where", on_true.dtype(), on_false.dtype());
  Tensor dst = empty(shape, on_true.dtype(), cond.device(), "where");
  Layout c = cond.layout().broadcast_to("where", shape);
  Layout t = on_true.layout().broadcast_to("where", shape);
  Layout f = on_false.layout().broadcast_to("where", shape);
  StorageLocks locks({cond.storage().get(), on_true.storage().get(), on_false.storage().get()},
                     {dst.storage().get()});
  cond.storage()->impl().where(c, on_true.storage()->impl(), t, on_false.storage()->impl(), f,
                               dst.storage()->impl(), dst.layout());
  return dst;
}

}  // namespace ember
