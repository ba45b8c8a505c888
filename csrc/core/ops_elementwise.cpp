#include <cmath>
#include <limits>

#include "tensor.h"
#include "derivatives.h"

namespace ember {

namespace {

// The destination of an elementwise op: `out` checked against the result's facts,
// or a fresh tensor. Shapes first, then devices, then dtypes. With `cast_ok`, `out` may
// have another dtype that the result can be written into (the caller casts into it);
// `hint` ends the dtype message.
// A fresh result is laid out like `inputs` (views of `shape`; see empty_for).
Tensor destination(const char* op, const std::optional<Tensor>& out, const Shape& shape,
                   DType dtype, const Tensor& input, const std::vector<const Layout*>& inputs,
                   bool cast_ok = false, const char* hint = "") {
  if (!out) return empty_for(shape, dtype, input.device(), op, inputs);
  if (out->shape() != shape)
    throw_shape_mismatch(op, shape, out->shape(), "the out= tensor must have the result's shape");
  Storage::check_same_device(op, *input.storage(), *out->storage());
  if (out->dtype() != dtype && !(cast_ok && can_write_into(dtype, out->dtype())))
    throw Error(ErrorKind::DTypeMismatch,
                std::string(op) + ": the result is " + dtype_name(dtype) +
                    ", which cannot be written into a tensor of dtype " + dtype_name(out->dtype()) +
                    " (out= or in place); " +
                    (!cast_ok                      ? ""
                     : out->dtype() == DType::Bool ? "only a bool result goes into a bool tensor: "
                                                   : "a float result never goes into an integer "
                                                     "tensor: ") +
                    "write into a " + dtype_name(dtype) + " tensor instead" + hint)
        .with("op", std::string(op))
        .with("lhs", dtype)
        .with("rhs", out->dtype());
  check_writable(op, *out);
  return *out;
}

// `t` in dtype `d`: itself when it has it (no copy), else its cast, kept in `keep`.
const Tensor& promoted(const Tensor& t, DType d, std::optional<Tensor>& keep) {
  return t.dtype() == d ? t : keep.emplace(to_dtype(t, d));
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

// The bool forms of sqr (PyTorch's square is pow(t, 2): int64) and ~ (logical not, where
// the uint8 kernel would give ~1 = 254).
std::optional<Tensor> bool_unary(UnaryOp op, const Tensor& t, const std::optional<Tensor>& out) {
  check_bool_unary(op, t.device());
  if (op == UnaryOp::Sqr) return unary(op, to_dtype(t, DType::I64), out);
  if (op != UnaryOp::BitwiseNot) return std::nullopt;
  const char* name = unary_name(op);
  Tensor dst = destination(name, out, t.shape(), DType::Bool, t, {&t.layout()});
  copy_into(logical_not(t), dst, name);
  return dst;
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& t, const std::optional<Tensor>& out) {
  if (out) autograd::check_inplace(unary_name(op), *out);
  if (autograd::wants_grad({&t})) {
    if (out) autograd::refuse_out(unary_name(op));
    return autograd::d::unary(op, t);
  }
  const OpInfo& info = op_info(op);
  if (t.dtype() == DType::Bool)
    if (auto r = bool_unary(op, t, out)) return *r;
  check_op_dtype(info.name, info.cls, t.dtype(), t.device());
  Tensor dst = destination(info.name, out, t.shape(), op_result_dtype(info.cls, t.dtype()), t,
                           {&t.layout()});
  return run_into(dst, {&t}, [&](Tensor& d) {
    StorageLocks locks(__func__, {t.storage().get()}, {d.storage().get()});
    t.storage()->impl().unary(op, UnaryParams{}, t.layout(), d.storage()->impl(), d.layout());
  });
}

Tensor clamp(const Tensor& t, std::optional<double> lo, std::optional<double> hi) {
  if (autograd::wants_grad({&t})) return autograd::d::clamp(t, lo, hi);
  if (lo && hi && *lo > *hi)
    throw_invalid("clamp",
                  "min " + std::to_string(*lo) + " is greater than max " + std::to_string(*hi));
  if (t.dtype() == DType::Bool) check_bool_unary(UnaryOp::Clamp, t.device());
  // A NaN bound makes every element NaN (numpy 2 and PyTorch); the kernels' min/max
  // would drop it instead.
  if ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi))) {
    if (!dtype_is_float(t.dtype()))
      throw_invalid("clamp", std::string("a NaN bound cannot clamp a tensor of dtype ") +
                                 dtype_name(t.dtype()) + "; convert it to a float dtype first");
    return full(t.shape(), std::nan(""), t.dtype(), t.device());
  }
  UnaryParams p;
  p.lo = lo.value_or(-std::numeric_limits<double>::infinity());
  p.hi = hi.value_or(std::numeric_limits<double>::infinity());
  Tensor dst = empty_for(t.shape(), t.dtype(), t.device(), "clamp", {&t.layout()});
  StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
  t.storage()->impl().unary(UnaryOp::Clamp, p, t.layout(), dst.storage()->impl(), dst.layout());
  return dst;
}

Tensor round_decimals(const Tensor& t, int64_t decimals) {
  if (decimals == 0) return unary(UnaryOp::Round, t);
  if (!dtype_is_float(t.dtype()))
    throw_unsupported_dtype("round", t.dtype(), t.device(),
                            "decimals= rounds floating-point tensors only (as PyTorch); integers "
                            "are whole already");
  const bool half = dtype_size(t.dtype()) == 2;
  const Tensor x = half ? to_dtype(t, DType::F32) : t;
  const double p = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  const Tensor scale = full({}, p, x.dtype(), x.device());
  const Tensor r =
      decimals > 0
          ? binary(BinaryOp::Div, unary(UnaryOp::Round, binary(BinaryOp::Mul, x, scale)), scale)
          : binary(BinaryOp::Mul, unary(UnaryOp::Round, binary(BinaryOp::Div, x, scale)), scale);
  return half ? to_dtype(r, t.dtype()) : r;
}

Tensor affine(const Tensor& t, double mul, double add) {
  if (autograd::wants_grad({&t})) return autograd::d::affine(t, mul, add);
  Tensor dst = empty_for(t.shape(), t.dtype(), t.device(), "affine", {&t.layout()});
  StorageLocks locks(__func__, {t.storage().get()}, {dst.storage().get()});
  t.storage()->impl().affine(t.layout(), mul, add, dst.storage()->impl(), dst.layout());
  return dst;
}

std::optional<Tensor> binary_number(BinaryOp op, const Tensor& t, double s, bool number_left) {
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64) return std::nullopt;
  if (op != BinaryOp::Add && op != BinaryOp::Sub && op != BinaryOp::Mul) return std::nullopt;
  if (autograd::wants_grad({&t})) return std::nullopt;  // the graph records the binary op
  if (t.dtype() == DType::F32) s = double(float(s));    // as a float32 0-d tensor holds it
  switch (op) {
    case BinaryOp::Add: return affine(t, 1.0, s);
    case BinaryOp::Sub: return number_left ? affine(t, -1.0, s) : affine(t, 1.0, -s);
    default: return affine(t, s, -0.0);  // x * s + (-0.0) keeps the product's zero sign
  }
}

Tensor binary(BinaryOp op, const Tensor& lhs_in, const Tensor& rhs_in,
              const std::optional<Tensor>& out) {
  const char* name = binary_name(op);
  if (out) autograd::check_inplace(name, *out);
  if (autograd::wants_grad({&lhs_in, &rhs_in})) {
    if (out) autograd::refuse_out(name);
    return autograd::d::binary(op, lhs_in, rhs_in);
  }
  Shape shape = lhs_in.shape() == rhs_in.shape()
                    ? lhs_in.shape()
                    : broadcast_shapes(name, lhs_in.shape(), rhs_in.shape());
  Storage::check_same_device(name, *lhs_in.storage(), *rhs_in.storage());
  // PyTorch's promotion; true division (ToFloat) of integers computes in float32.
  const OpClass cls = op_info(op).cls;
  const DType dtype = op_result_dtype(cls, promote_types(lhs_in.dtype(), rhs_in.dtype()));
  check_op_dtype(name, cls, dtype, lhs_in.device());
  const BinaryOp kernel_op = dtype == DType::Bool ? bool_binary(op, lhs_in.device()) : op;
  const char* hint = cls == OpClass::ToFloat
                         ? " (integer true division gives float; for an integer result "
                           "use // or div(..., rounding_mode='floor' or 'trunc'))"
                         : "";
  // Same shapes need no broadcast views (and no copies of the layouts).
  const bool same = lhs_in.shape() == rhs_in.shape();
  Layout lb, rb;
  if (!same)
    lb = lhs_in.layout().broadcast_to(name, shape), rb = rhs_in.layout().broadcast_to(name, shape);
  Tensor dst = destination(name, out, shape, dtype, lhs_in,
                           {same ? &lhs_in.layout() : &lb, same ? &rhs_in.layout() : &rb},
                           /*cast_ok=*/true, hint);
  if (dst.dtype() != dtype) {  // e.g. float16 += float32: computed in float32, then cast
    copy_into(binary(op, lhs_in, rhs_in, std::nullopt), dst, name);
    return dst;
  }
  std::optional<Tensor> lhs_cast, rhs_cast;
  const Tensor& lhs = promoted(lhs_in, dtype, lhs_cast);
  const Tensor& rhs = promoted(rhs_in, dtype, rhs_cast);
  if (!same && lhs_cast) lb = lhs.layout().broadcast_to(name, shape);  // a cast has its own
  if (!same && rhs_cast) rb = rhs.layout().broadcast_to(name, shape);
  const Layout& l = same ? lhs.layout() : lb;
  const Layout& r = same ? rhs.layout() : rb;
  return run_into(dst, {&lhs, &rhs}, [&](Tensor& d) {
    StorageLocks locks(__func__, {lhs.storage().get(), rhs.storage().get()}, {d.storage().get()});
    lhs.storage()->impl().binary(kernel_op, l, rhs.storage()->impl(), r, d.storage()->impl(),
                                 d.layout());
  });
}

Tensor cmp(CmpOp op, const Tensor& lhs_in, const Tensor& rhs_in) {
  const char* name = cmp_name(op);
  Shape shape = broadcast_shapes(name, lhs_in.shape(), rhs_in.shape());
  Storage::check_same_device(name, *lhs_in.storage(), *rhs_in.storage());
  const DType common = promote_types(lhs_in.dtype(), rhs_in.dtype());  // compared in it
  std::optional<Tensor> lhs_cast, rhs_cast;
  const Tensor& lhs = promoted(lhs_in, common, lhs_cast);
  const Tensor& rhs = promoted(rhs_in, common, rhs_cast);
  check_op_dtype(name, op_info(op).cls, lhs.dtype(), lhs.device());
  Layout l = lhs.layout().broadcast_to(name, shape), r = rhs.layout().broadcast_to(name, shape);
  Tensor dst = empty_for(shape, op_result_dtype(op_info(op).cls, lhs.dtype()), lhs.device(), name,
                         {&l, &r});
  StorageLocks locks(__func__, {lhs.storage().get(), rhs.storage().get()}, {dst.storage().get()});
  lhs.storage()->impl().cmp(op, l, rhs.storage()->impl(), r, dst.storage()->impl(), dst.layout());
  return dst;
}

Tensor where(const Tensor& cond_in, const Tensor& true_in, const Tensor& false_in) {
  if (autograd::wants_grad({&true_in, &false_in})) return autograd::d::where(cond_in, true_in, false_in);
  Shape shape = broadcast_shapes(
      "where", broadcast_shapes("where", cond_in.shape(), true_in.shape()), false_in.shape());
  Storage::check_same_device("where", *cond_in.storage(), *true_in.storage());
  Storage::check_same_device("where", *true_in.storage(), *false_in.storage());
  // The branches' common dtype; where_into casts each to it.
  const Layout c = cond_in.layout().broadcast_to("where", shape);
  const Layout t = true_in.layout().broadcast_to("where", shape);
  const Layout f = false_in.layout().broadcast_to("where", shape);
  Tensor dst = empty_for(shape, promote_types(true_in.dtype(), false_in.dtype()), cond_in.device(),
                         "where", {&c, &t, &f});
  where_into(cond_in, true_in, false_in, dst, "where");
  return dst;
}

void where_into(const Tensor& cond_in, const Tensor& true_in, const Tensor& false_in,
                const Tensor& dst, const char* op) {
  const Shape shape = dst.shape();
  const Shape branches = broadcast_shapes(op, true_in.shape(), false_in.shape());
  if (broadcast_shapes(op, broadcast_shapes(op, cond_in.shape(), branches), shape) != shape)
    throw_shape_mismatch(op, broadcast_shapes(op, cond_in.shape(), branches), shape,
                         "the condition and values must broadcast to the written tensor's shape");
  Storage::check_same_device(op, *dst.storage(), *cond_in.storage());
  Storage::check_same_device(op, *dst.storage(), *true_in.storage());
  Storage::check_same_device(op, *dst.storage(), *false_in.storage());
  check_writable(op, dst);
  autograd::check_inplace(op, dst);
  autograd::refuse_grad(op, {&true_in, &false_in});
  const bool byte_cond = cond_in.dtype() == DType::Bool || cond_in.dtype() == DType::U8;
  const Tensor cond = byte_cond ? cond_in : as_bool(cond_in);
  const Tensor on_true = to_dtype(true_in, dst.dtype()), on_false = to_dtype(false_in, dst.dtype());
  const Layout c = cond.layout().broadcast_to(op, shape);
  const Layout t = on_true.layout().broadcast_to(op, shape);
  const Layout f = on_false.layout().broadcast_to(op, shape);
  // An operand that meets dst in memory without being dst's very view is read first.
  run_into(dst, {&cond, &on_true, &on_false}, [&](Tensor& d) {
    StorageLocks locks(__func__,
                       {cond.storage().get(), on_true.storage().get(), on_false.storage().get()},
                       {d.storage().get()});
    cond.storage()->impl().where(c, on_true.storage()->impl(), t, on_false.storage()->impl(), f,
                                 d.storage()->impl(), d.layout());
  });
}

}  // namespace ember
