// The scatter family: scatter and scatter_add run the backends' one scatter op;
// index_add, slice_scatter and embedding are composed from it and other ops.
#include <algorithm>

#include "index_checks.h"
#include "autograd.h"
#include "derivatives.h"

namespace ember {

namespace {

using index_checks::at_least_1d;

// PyTorch's shape rules; an empty index writes nothing and, as there, skips them.
void check_scatter_shapes(const char* op, const Tensor& t, int64_t d, const Tensor& ids,
                          const Tensor& src) {
  if (ids.numel() == 0) return;
  if (ids.ndim() != t.ndim())
    throw_shape_mismatch(op, t.shape(), ids.shape(), "index needs as many dims as the input");
  if (src.ndim() != t.ndim())
    throw_shape_mismatch(op, t.shape(), src.shape(), "src needs as many dims as the input");
  for (int64_t i = 0; i < t.ndim(); ++i) {
    const size_t k = size_t(i);
    if (ids.shape()[k] > src.shape()[k])
      throw_shape_mismatch(op, ids.shape(), src.shape(),
                           "index may not be larger than src in dim " + std::to_string(i));
    if (i != d && ids.shape()[k] > t.shape()[k])
      throw_shape_mismatch(op, t.shape(), ids.shape(),
                           "index may not be larger than the input in dim " + std::to_string(i));
  }
}

void check_devices_and_dtypes(const char* op, const Tensor& t, const Tensor& ids,
                              const Tensor& src) {
  Storage::check_same_device(op, *t.storage(), *ids.storage());
  Storage::check_same_device(op, *t.storage(), *src.storage());
  index_checks::check_dtype(op, ids);
  if (src.dtype() != t.dtype()) throw_dtype_mismatch(op, t.dtype(), src.dtype());
}

// The tensor an op writes: t itself (checked writable) or a fresh copy of it.
Tensor target(const char* op, const Tensor& t, bool inplace) {
  if (!inplace) return clone(t);
  check_writable(op, t);
  return t;
}

}  // namespace

Tensor scatter(const Tensor& t_in, int64_t dim, const Tensor& ids_in, const Tensor& src_in,
               bool accumulate, bool inplace) {
  if (inplace) autograd::check_inplace(accumulate ? "scatter_add_" : "scatter_", t_in);
  if (autograd::wants_grad({&t_in, &src_in})) {
    if (inplace) autograd::refuse_grad(accumulate ? "scatter_add_" : "scatter_", {&src_in});
    return autograd::d::scatter(t_in, dim, ids_in, src_in, accumulate);
  }
  const char* op =
      accumulate ? (inplace ? "scatter_add_" : "scatter_add") : (inplace ? "scatter_" : "scatter");
  const Tensor t = at_least_1d(t_in), ids = at_least_1d(ids_in), src = at_least_1d(src_in);
  const int64_t d = wrap_dim(op, dim, t.ndim());
  check_scatter_shapes(op, t, d, ids, src);
  check_devices_and_dtypes(op, t, ids, src);
  index_checks::check_range(op, ids, t.shape()[size_t(d)]);
  Tensor out = target(op, t_in, inplace);
  index_checks::scatter_checked(at_least_1d(out), d, ids, src, accumulate);
  return out;
}

Tensor index_add(const Tensor& t_in, int64_t dim, const Tensor& ids_in, const Tensor& source_in,
                 const std::optional<Tensor>& alpha, bool inplace) {
  if (inplace) autograd::check_inplace("index_add_", t_in);
  if (autograd::wants_grad({&t_in, &source_in, alpha ? &*alpha : nullptr})) {
    if (inplace) autograd::refuse_grad("index_add_", {&source_in});
    return autograd::d::index_add(t_in, dim, ids_in, source_in, alpha);
  }
  const char* op = inplace ? "index_add_" : "index_add";
  const Tensor t = at_least_1d(t_in), source = at_least_1d(source_in);
  const int64_t d = wrap_dim(op, dim, t.ndim());
  if (ids_in.ndim() > 1) throw_shape_mismatch(op, t.shape(), ids_in.shape(), "index must be 1-D");
  const Tensor ids = at_least_1d(ids_in);
  Shape want = t.shape();
  want[size_t(d)] = ids.numel();
  if (source.shape() != want)
    throw_shape_mismatch(op, want, source.shape(),
                         "source must have the input's shape with dim " + std::to_string(d) +
                             " of the index's length");
  check_devices_and_dtypes(op, t, ids, source);
  index_checks::check_range(op, ids, t.shape()[size_t(d)]);
  const Tensor scaled = alpha ? binary(BinaryOp::Mul, source, *alpha) : source;
  Tensor out = target(op, t_in, inplace);
  index_checks::put_along(op, at_least_1d(out), d, ids, scaled, true);
  return out;
}

Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  if (autograd::wants_grad({&t, &src})) return autograd::d::slice_scatter(t, src, dim, start, end, step);
  const int64_t d = wrap_dim("slice_scatter", dim, t.ndim());
  if (step <= 0)
    throw_invalid("slice_scatter", "step must be positive, got " + std::to_string(step));
  const int64_t size = t.shape()[size_t(d)];
  // Python's slice bounds: negatives count from the end, then clip to [0, size].
  const auto bound = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    return std::clamp(*v < 0 ? *v + size : *v, int64_t(0), size);
  };
  Tensor out = clone(t);
  const Tensor part = slice(out, d, bound(start, 0), bound(end, size), step);
  if (src.shape() != part.shape())
    throw_shape_mismatch("slice_scatter", part.shape(), src.shape(),
                         "src must have the shape of the slice it replaces");
  Storage::check_same_device("slice_scatter", *t.storage(), *src.storage());
  copy_into(src, part, "slice_scatter");
  return out;
}

Tensor embedding(const Tensor& ids, const Tensor& weight) {
  if (weight.ndim() != 2)
    throw_shape_mismatch("embedding", weight.shape(), ids.shape(),
                         "weight must be 2-D (num_embeddings, embedding_dim)");
  Storage::check_same_device("embedding", *weight.storage(), *ids.storage());
  index_checks::check_dtype("embedding", ids);
  const auto checked = index_checks::start_range("embedding", ids, weight.shape()[0], weight);
  const Tensor flat = index_checks::kernel_ids(reshape(ids, {ids.numel()}));
  Shape shape = ids.shape();
  shape.push_back(weight.shape()[1]);
  Tensor out = reshape(index_checks::select_checked(weight, 0, flat), shape);
  checked();
  return out;
}

}  // namespace ember
