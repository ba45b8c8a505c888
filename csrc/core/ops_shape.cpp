#include <algorithm>

#include "tensor.h"
#include "derivatives.h"

namespace ember {

namespace {

// Resolves one -1 in `shape` and checks the element count, numpy style.
Shape infer_shape(const char* op, const Tensor& t, Shape shape) {
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) throw_invalid(op, "only one dim can be -1 in " + shape_str(shape));
      infer_at = int64_t(i);
    } else if (shape[i] < 0) {
      throw_invalid(op, "negative dim " + std::to_string(shape[i]) + " in " + shape_str(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || t.numel() % known != 0)
      throw_shape_mismatch(op, t.shape(), shape, "cannot infer the -1 dim");
    shape[size_t(infer_at)] = t.numel() / known;
  } else if (known != t.numel()) {
    throw_shape_mismatch(op, t.shape(), shape,
                         std::to_string(t.numel()) + " elements cannot take shape " +
                             shape_str(shape) + " (" + std::to_string(known) + " elements)");
  }
  return shape;
}

}  // namespace

Tensor reshape(const Tensor& t, Shape shape) {
  if (autograd::wants_grad({&t}))
    return autograd::d::reshaped("ViewBackward0", t, [shape](const Tensor& x) { return reshape(x, shape); });
  shape = infer_shape("reshape", t, std::move(shape));
  Layout l;
  if (t.layout().try_reshape(shape, &l)) return t.view_as(l);
  return clone(t).view_as(Layout(shape));
}

Tensor view(const Tensor& t, Shape shape) {
  if (autograd::wants_grad({&t}))
    return autograd::d::reshaped("ViewBackward0", t, [shape](const Tensor& x) { return view(x, shape); });
  shape = infer_shape("view", t, std::move(shape));
  Layout l;
  if (!t.layout().try_reshape(shape, &l))
    throw_invalid("view", "the strides of this tensor do not allow shape " + shape_str(shape) +
                              " without a copy; use reshape() or contiguous().view()");
  return t.view_as(l);
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  if (autograd::wants_grad({&t})) return autograd::d::transpose(t, d0, d1);
  int64_t a = wrap_dim("transpose", d0, t.ndim()), b = wrap_dim("transpose", d1, t.ndim());
  return t.view_as(t.layout().transpose(a, b));
}

Tensor permute(const Tensor& t, const Dims& order) {
  if (int64_t(order.size()) == t.ndim() && autograd::wants_grad({&t})) return autograd::d::permute(t, order);
  if (int64_t(order.size()) != t.ndim())
    throw_invalid("permute", "got " + std::to_string(order.size()) + " dims for a tensor of " +
                                 std::to_string(t.ndim()) + " dims");
  Dims wrapped;
  std::vector<bool> seen(order.size(), false);
  for (int64_t d : order) {
    int64_t w = wrap_dim("permute", d, t.ndim());
    if (seen[size_t(w)]) throw_invalid("permute", "dim " + std::to_string(d) + " appears twice");
    seen[size_t(w)] = true;
    wrapped.push_back(w);
  }
  return t.view_as(t.layout().permute(wrapped));
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t len) {
  if (autograd::wants_grad({&t}))
    return autograd::d::part("SliceBackward0", t, [=](const Tensor& x) { return narrow(x, dim, start, len); });
  int64_t d = wrap_dim("narrow", dim, t.ndim());
  int64_t size = t.shape()[size_t(d)];
  if (start < 0) start += size;
  if (start < 0 || len < 0 || start > size || len > size - start)
    throw Error(ErrorKind::IndexOutOfRange, "narrow: start " + std::to_string(start) +
                                                " and length " + std::to_string(len) +
                                                " do not fit in dim " + std::to_string(dim) +
                                                " of size " + std::to_string(size))
        .with("op", std::string("narrow"));
  return t.view_as(t.layout().narrow(d, start, len));
}

Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  if (autograd::wants_grad({&t}))
    return autograd::d::part("SliceBackward0", t, [=](const Tensor& x) { return slice(x, dim, start, stop, step); });
  // start/stop already clipped by the caller (Python's slice.indices), step != 0.
  int64_t d = wrap_dim("slice", dim, t.ndim());
  if (step == 0 || step == INT64_MIN)
    throw_invalid("slice", "the slice step must be non-zero and above -2**63");
  // Counted without forming stop - start + step, which overflows for huge steps.
  int64_t len = step > 0 ? (stop > start ? (stop - start - 1) / step + 1 : 0)
                         : (start > stop ? (start - stop - 1) / -step + 1 : 0);
  return t.view_as(t.layout().slice(d, start, len, step));
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  if (autograd::wants_grad({&t}))
    return autograd::d::part("SelectBackward0", t, [=](const Tensor& x) { return select(x, dim, index); });
  int64_t d = wrap_dim("index", dim, t.ndim());
  int64_t size = t.shape()[size_t(d)];
  if (index < -size || index >= size)
    throw Error(ErrorKind::IndexOutOfRange, "index " + std::to_string(index) +
                                                " is out of range for dim " + std::to_string(dim) +
                                                " of size " + std::to_string(size))
        .with("op", std::string("index"));
  return t.view_as(t.layout().select(d, index < 0 ? index + size : index));
}

Tensor squeeze(const Tensor& t, std::optional<int64_t> dim) {
  if (autograd::wants_grad({&t}))
    return autograd::d::reshaped(dim ? "SqueezeBackward1" : "SqueezeBackward0", t, [dim](const Tensor& x) { return squeeze(x, dim); });
  if (dim) {
    int64_t d = wrap_dim("squeeze", *dim, t.ndim());
    return t.shape()[size_t(d)] == 1 ? t.view_as(t.layout().squeeze(d)) : t;
  }
  Layout l = t.layout();
  for (int64_t d = l.ndim(); d-- > 0;)
    if (l.dim(d) == 1) l = l.squeeze(d);
  return t.view_as(l);
}

Tensor squeeze_dims(const Tensor& t, const Dims& dims) {
  if (autograd::wants_grad({&t}))
    return autograd::d::reshaped("SqueezeBackward2", t, [dims](const Tensor& x) { return squeeze_dims(x, dims); });
  std::vector<bool> chosen(size_t(t.ndim()), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim("squeeze", d, t.ndim());
    if (chosen[size_t(w)]) throw_invalid("squeeze", "dim " + std::to_string(d) + " appears twice");
    chosen[size_t(w)] = true;
  }
  Layout l = t.layout();
  for (int64_t d = l.ndim(); d-- > 0;)  // last first: the lower dims keep their numbers
    if (chosen[size_t(d)] && l.dim(d) == 1) l = l.squeeze(d);
  return t.view_as(l);
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  if (autograd::wants_grad({&t}))
    return autograd::d::reshaped("UnsqueezeBackward0", t, [dim](const Tensor& x) { return unsqueeze(x, dim); });
  int64_t d = wrap_dim("unsqueeze", dim, t.ndim() + 1);
  return t.view_as(t.layout().unsqueeze(d));
}

Tensor flatten(const Tensor& t, int64_t start, int64_t end) {
  if (t.ndim() == 0) return reshape(t, {1});
  int64_t s = wrap_dim("flatten", start, t.ndim()), e = wrap_dim("flatten", end, t.ndim());
  if (s > e) throw_invalid("flatten", "start dim comes after end dim");
  Shape shape(t.shape().begin(), t.shape().begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= t.shape()[size_t(i)];
  shape.push_back(n);
  shape.insert(shape.end(), t.shape().begin() + e + 1, t.shape().end());
  return reshape(t, shape);
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (autograd::wants_grad({&t})) return autograd::d::broadcast_to(t, shape);
  check_shape("broadcast_to", shape);
  return t.view_as(t.layout().broadcast_to("broadcast_to", shape));
}

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw_invalid("cat", "needs at least one tensor");
  if (autograd::wants_grad(ts)) return autograd::d::cat(ts, dim);
  const Tensor& first = ts[0];
  int64_t d = wrap_dim("cat", dim, first.ndim());
  Shape shape = first.shape();
  shape[size_t(d)] = 0;
  for (const Tensor& t : ts) {  // shapes, then devices, then dtypes
    if (t.ndim() != first.ndim())
      throw_shape_mismatch("cat", first.shape(), t.shape(),
                           "all tensors need the same number of dims");
    for (int64_t i = 0; i < t.ndim(); ++i)
      if (i != d && t.shape()[size_t(i)] != first.shape()[size_t(i)])
        throw_shape_mismatch("cat", first.shape(), t.shape(),
                             "sizes must match except in dim " + std::to_string(d));
    shape[size_t(d)] += t.shape()[size_t(d)];
  }
  for (const Tensor& t : ts) Storage::check_same_device("cat", *first.storage(), *t.storage());
  DType dtype = first.dtype();  // PyTorch's promotion over all the parts
  for (const Tensor& t : ts) dtype = promote_types(dtype, t.dtype());
  Tensor out = empty(shape, dtype, first.device(), "cat");
  int64_t at = 0;
  for (const Tensor& t : ts) {
    int64_t len = t.shape()[size_t(d)];
    Tensor part = out.view_as(out.layout().narrow(d, at, len));
    StorageLocks locks(__func__, {t.storage().get()}, {out.storage().get()});
    if (t.dtype() == dtype)
      t.storage()->impl().copy_strided(t.layout(), out.storage()->impl(), part.layout());
    else  // a part of a lower dtype is cast as it is copied
      t.storage()->impl().cast(t.layout(), out.storage()->impl(), part.layout());
    at += len;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw_invalid("stack", "needs at least one tensor");
  if (autograd::wants_grad(ts)) return autograd::d::stack(ts, dim);
  int64_t d = wrap_dim("stack", dim, ts[0].ndim() + 1);
  for (const Tensor& t : ts)
    if (t.shape() != ts[0].shape())
      throw_shape_mismatch("stack", ts[0].shape(), t.shape(), "all tensors need the same shape");
  std::vector<Tensor> parts;
  for (const Tensor& t : ts) parts.push_back(unsqueeze(t, d));
  return cat(parts, d);
}

}  // namespace ember
