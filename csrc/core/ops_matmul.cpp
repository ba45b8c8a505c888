#include "tensor.h"

namespace ember {

Tensor matmul(const Tensor& lhs, const Tensor& rhs) {
  if (lhs.ndim() == 0 || rhs.ndim() == 0)
    throw_shape_mismatch("matmul", lhs.shape(), rhs.shape(),
                         "both sides need at least 1 dim (use mul for scalars)");
  // numpy's rule for 1-D sides: a vector on the left is a row, on the right a column.
  Layout l = lhs.ndim() == 1 ? lhs.layout().unsqueeze(0) : lhs.layout();
  Layout r = rhs.ndim() == 1 ? rhs.layout().unsqueeze(1) : rhs.layout();
  int64_t m = l.dim(l.ndim() - 2), k = l.dim(l.ndim() - 1);
  int64_t k2 = r.dim(r.ndim() - 2), n = r.dim(r.ndim() - 1);
  if (k != k2)
    throw_shape_mismatch(
        "matmul", lhs.shape(), rhs.shape(),
        "lhs has " + std::to_string(k) + " columns but rhs has " + std::to_string(k2) + " rows");
  Shape lb(l.shape().begin(), l.shape().end() - 2), rb(r.shape().begin(), r.shape().end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes("matmul", lb, rb);
  } catch (const Error&) {  // report the operands' shapes, not their batch parts
    throw_shape_mismatch(
        "matmul", lhs.shape(), rhs.shape(),
        "the batch dims " + shape_str(lb) + " and " + shape_str(rb) + " do not broadcast");
  }
  Storage::check_same_device("matmul", *lhs.storage(), *rhs.storage());
  if (lhs.dtype() != rhs.dtype()) throw_dtype_mismatch("matmul", lhs.dtype(), rhs.dtype());
  if (lhs.dtype() == DType::Bool)  // as PyTorch, which has no bool matmul
    throw_unsupported_dtype("matmul", DType::Bool, lhs.device(),
                            "convert first, e.g. a.to(ember.int64) @ b.to(ember.int64)");
  if (!lhs.device()->supports_dtype(lhs.dtype()))
    throw_unsupported_dtype("matmul", lhs.dtype(), lhs.device(),
                            "this backend has no kernels for it");

  Shape lshape = batch, rshape = batch, oshape = batch;
  lshape.insert(lshape.end(), {m, k});
  rshape.insert(rshape.end(), {k, n});
  oshape.insert(oshape.end(), {m, n});
  Tensor dst = empty(oshape, lhs.dtype(), lhs.device(), "matmul");
  {
    StorageLocks locks({lhs.storage().get(), rhs.storage().get()}, {dst.storage().get()});
    lhs.storage()->impl().matmul(l.broadcast_to("matmul", lshape), rhs.storage()->impl(),
                                 r.broadcast_to("matmul", rshape), dst.storage()->impl());
  }
  Shape result = batch;
  if (lhs.ndim() > 1) result.push_back(m);
  if (rhs.ndim() > 1) result.push_back(n);
  return dst.view_as(Layout(result));
}

}  // namespace ember
