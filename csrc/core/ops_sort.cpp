// sort, argsort and topk: a stable sort along one dim in the backends; topk takes the
// first k of the sorted rows, or the backend's selection of them (BackendStorage::topk).
#include <algorithm>

#include "dim_last.h"
#include "tensor.h"
#include "autograd.h"
#include "derivatives.h"

namespace ember {

SortResult sort(const Tensor& t, int64_t dim, bool descending) {
  if (autograd::wants_grad({&t})) return autograd::d::sort(t, dim, descending);
  if (t.ndim() == 0) {  // PyTorch allows dim 0 / -1 on a 0-d tensor
    wrap_dim("sort", dim, 1);
    SortResult r = sort(unsqueeze(t, 0), 0, descending);
    return {r.values.view_as(Layout(Shape{})), r.indices.view_as(Layout(Shape{}))};
  }
  const int64_t d = wrap_dim("sort", dim, t.ndim());
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype("sort", t.dtype(), t.device(), "this backend has no kernels for it");
  DimLast v = dim_last(t.layout(), d);
  Tensor values = empty(v.layout.shape(), t.dtype(), t.device(), "sort");
  Tensor indices = empty(v.layout.shape(), DType::I64, t.device(), "sort");
  if (values.numel() > 0) {
    StorageLocks locks(__func__, {t.storage().get()}, {values.storage().get(), indices.storage().get()});
    t.storage()->impl().sort(v.layout, descending, values.storage()->impl(),
                             indices.storage()->impl());
  }
  return {values.view_as(values.layout().permute(v.back)),
          indices.view_as(indices.layout().permute(v.back))};
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending) {
  wrap_dim("argsort", dim, std::max<int64_t>(t.ndim(), 1));  // errors name argsort
  return sort(autograd::detach(t), dim, descending).indices;  // indices: outside the graph
}

SortResult topk(const Tensor& t, int64_t k, int64_t dim, bool largest) {
  const int64_t d = wrap_dim("topk", dim, std::max<int64_t>(t.ndim(), 1));
  const int64_t size = t.ndim() == 0 ? 1 : t.shape()[size_t(d)];
  if (k < 0 || k > size)
    throw_invalid("topk", "k=" + std::to_string(k) + " is out of range for dim " +
                              std::to_string(dim) + " of size " + std::to_string(size) +
                              " (shape " + shape_str(t.shape()) + "); k must be in [0, " +
                              std::to_string(size) + "]");
  if (t.ndim() > 0 && !autograd::wants_grad({&t}) && t.device()->supports_dtype(t.dtype())) {
    // the backend's selection of k per row, where it has one
    DimLast v = dim_last(t.layout(), d);
    Shape out = v.layout.shape();
    out.back() = k;
    Tensor values = empty(out, t.dtype(), t.device(), "topk");
    Tensor indices = empty(out, DType::I64, t.device(), "topk");
    bool done = values.numel() == 0;
    if (!done) {
      StorageLocks locks(__func__, {t.storage().get()},
                         {values.storage().get(), indices.storage().get()});
      done = t.storage()->impl().topk(v.layout, k, largest, values.storage()->impl(),
                                      indices.storage()->impl());
    }
    if (done)
      return {contiguous(values.view_as(values.layout().permute(v.back))),
              contiguous(indices.view_as(indices.layout().permute(v.back)))};
  }
  SortResult s = sort(t, d, largest);
  if (t.ndim() == 0) return s;
  return {contiguous(narrow(s.values, d, 0, k)), contiguous(narrow(s.indices, d, 0, k))};
}

}  // namespace ember
