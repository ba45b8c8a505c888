// Masks: nonzero, argwhere, count_nonzero, masked_select, and t[mask] on both sides of =.
// Each reads one number to the host, the mask's count of true elements (the result's
// size depends on it, as in PyTorch); the backends' nonzero op then compacts the mask on
// the device, and the values move by the device's gather and scatter.
#include "index_checks.h"
#include "autograd.h"

namespace ember {

namespace {

[[noreturn]] void bad_mask_dtype(const char* op, DType got) {
  throw Error(ErrorKind::DTypeMismatch,
              std::string(op) + ": the mask must be bool, got " + dtype_name(got) +
                  "; make one with a comparison (t > 0) or mask.to(ember.bool)")
      .with("op", std::string(op))
      .with("lhs", DType::Bool)
      .with("rhs", got);
}

// The row-major positions of t's non-zero elements, int64 on t's device: the count is
// read to the host, then the backend writes exactly that many positions, flat (count,) or
// with `coordinates` as (count, t.ndim()).
Tensor true_positions(const char* op, const Tensor& t, bool coordinates = false) {
  if (!t.device()->supports_dtype(DType::I64))
    throw_unsupported_dtype(op, DType::I64, t.device(), "positions are int64");
  const Tensor mask = contiguous(as_bool(t));
  int64_t count = 0;
  if (mask.numel() > 0) to_host(reduce(ReduceOp::Sum, mask, {}, false), &count);
  Tensor out = coordinates ? empty({count, t.ndim()}, DType::I64, mask.device(), op)
                           : empty({count}, DType::I64, mask.device(), op);
  if (count > 0) {
    StorageLocks locks(op, {mask.storage().get()}, {out.storage().get()});
    mask.storage()->impl().nonzero(Layout(mask.shape(), mask.layout().offset()), coordinates,
                                   out.storage()->impl());
  }
  return out;
}

// The coordinates of row-major positions in `shape`: one int64 column per dim.
std::vector<Tensor> coordinates(const Tensor& flat, const Shape& shape) {
  const size_t nd = shape.size();
  if (nd == 1 || flat.numel() == 0) return std::vector<Tensor>(nd, flat);
  const DevicePtr& dev = flat.device();
  std::vector<Tensor> cols;  // the last dim's first
  int64_t stride = 1;
  for (size_t d = nd; d-- > 0;) {
    Tensor q = stride == 1 ? flat
                           : binary(BinaryOp::TruncDivide, flat,
                                    full_int({}, stride, DType::I64, dev));
    cols.push_back(d == 0 ? q
                          : binary(BinaryOp::Remainder, q,
                                   full_int({}, shape[d], DType::I64, dev)));
    stride *= shape[d];
  }
  return std::vector<Tensor>(cols.rbegin(), cols.rend());
}

// The mask of t[mask]: bool, on t's device, its shape t's leading dims.
void check_leading_mask(const Tensor& t, const Tensor& mask) {
  Storage::check_same_device("index", *t.storage(), *mask.storage());
  if (mask.dtype() != DType::Bool) bad_mask_dtype("index", mask.dtype());
  bool fits = mask.ndim() <= t.ndim();
  for (int64_t d = 0; fits && d < mask.ndim(); ++d)
    fits = mask.shape()[size_t(d)] == t.shape()[size_t(d)];
  if (!fits)
    throw Error(ErrorKind::InvalidIndex, "index: the mask's shape " + shape_str(mask.shape()) +
                                             " must match the leading dims of the tensor's "
                                             "shape " +
                                             shape_str(t.shape()))
        .with("op", std::string("index"));
}

// t's dims after the mask's.
Shape rest_of(const Tensor& t, const Tensor& mask) {
  return Shape(t.shape().begin() + mask.ndim(), t.shape().end());
}

}  // namespace

Tensor nonzero(const Tensor& t) {
  if (t.ndim() >= 2 && t.ndim() <= kNonzeroMaxDims) return true_positions("nonzero", t, true);
  const Tensor flat = true_positions("nonzero", t);
  const int64_t count = flat.numel();
  if (t.ndim() == 0) return empty({count, 0}, DType::I64, t.device(), "nonzero");
  if (t.ndim() == 1) return reshape(flat, {count, 1});
  if (count == 0) return empty({0, t.ndim()}, DType::I64, t.device(), "nonzero");
  return stack(coordinates(flat, t.shape()), 1);
}

std::vector<Tensor> nonzero_tuple(const Tensor& t) {
  // A 0-d tensor counts as 1-d here, as in PyTorch: one column of its one position.
  if (t.ndim() < 2) return {true_positions("nonzero", t)};
  if (t.ndim() <= kNonzeroMaxDims) {
    const Tensor rows = true_positions("nonzero", t, true);  // (count, ndim): its columns
    std::vector<Tensor> cols;
    for (int64_t d = 0; d < t.ndim(); ++d) cols.push_back(select(rows, 1, d));
    return cols;
  }
  return coordinates(true_positions("nonzero", t), t.shape());
}

Tensor count_nonzero(const Tensor& t, const Dims& dims) {
  return reduce(ReduceOp::Sum, as_bool(t), dims, false);
}

Tensor masked_select(const Tensor& t, const Tensor& mask) {
  const char* op = "masked_select";
  Storage::check_same_device(op, *t.storage(), *mask.storage());
  if (mask.dtype() != DType::Bool) bad_mask_dtype(op, mask.dtype());
  const Shape shape = broadcast_shapes(op, t.shape(), mask.shape());
  const Tensor values = reshape(broadcast_to(t, shape), {shape_numel(shape)});
  const Tensor at = true_positions(op, broadcast_to(mask, shape));
  return index_checks::select_checked(values, 0, at);
}

Tensor mask_read(const Tensor& t, const Tensor& mask) {
  check_leading_mask(t, mask);
  Shape rows{mask.numel()};
  const Shape rest = rest_of(t, mask);
  rows.insert(rows.end(), rest.begin(), rest.end());
  const Tensor at = true_positions("index", mask);
  return index_checks::select_checked(reshape(t, rows), 0, at);
}

void mask_write(const Tensor& t, const Tensor& mask, const Tensor& value_in) {
  const char* op = "setitem";
  check_writable(op, t);
  check_leading_mask(t, mask);
  Storage::check_same_device(op, *t.storage(), *value_in.storage());
  const Shape rest = rest_of(t, mask);
  Tensor value = value_in;
  if (value.ndim() == int64_t(rest.size()) + 1 && value.shape()[0] == 1)
    value = squeeze(value, 0);  // one row for every true position
  if (value.ndim() <= int64_t(rest.size())) {
    // The same value at every true position: no count needed, one pass over t.
    if (broadcast_shapes(op, value.shape(), rest) != rest)
      throw_shape_mismatch(op, value.shape(), rest,
                           "the value must broadcast to the masked shape (count of True, ...)");
    Shape hit = mask.shape();
    hit.resize(size_t(t.ndim()), 1);
    where_into(reshape(mask, hit), value, t, t, op);
    return;
  }
  // A row per true position: their positions, then a scatter of the rows into t.
  const Tensor at = true_positions(op, mask);
  Shape target{at.numel()};
  target.insert(target.end(), rest.begin(), rest.end());
  if (value.ndim() > int64_t(target.size()) ||
      broadcast_shapes(op, value.shape(), target) != target)
    throw_shape_mismatch(op, value.shape(), target,
                         "the value must broadcast to the masked shape (count of True, ...)");
  if (at.numel() == 0) return;
  Shape rows = target;
  rows[0] = mask.numel();
  Layout rows_layout;
  if (!t.layout().try_reshape(rows, &rows_layout)) {
    // t's masked dims do not merge into one: write through a copy of t's rows.
    const Tensor copy = reshape(contiguous(t), rows);
    index_checks::put_along(op, copy, 0, at, value, false, true);
    copy_into(reshape(copy, t.shape()), t, op);
    return;
  }
  index_checks::put_along(op, t.view_as(rows_layout), 0, at, value, false, true);
}

}  // namespace ember
