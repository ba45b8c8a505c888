#include "tensor.h"
#include "derivatives.h"

namespace ember {

Tensor matmul(const Tensor& lhs, const Tensor& rhs) {
  if (autograd::wants_grad({&lhs, &rhs})) return autograd::d::matmul(lhs, rhs);
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
  Layout la = l.broadcast_to("matmul", lshape), ra = r.broadcast_to("matmul", rshape);
  // A batch of products with one matrix on the right, whose left operand's rows all lie one
  // stride apart (x @ w for x of (batch, seq, width)), is one product of batch * m rows, as
  // PyTorch folds it: a GPU ran the batch of smaller products slower. dst is the same memory.
  const int64_t count = shape_numel(batch);
  bool shared_rhs = count > 1;
  for (size_t d = 0; d < batch.size(); ++d) shared_rhs = shared_rhs && ra.strides()[d] == 0;
  Layout folded;
  if (shared_rhs && la.try_reshape({count * m, k}, &folded)) {
    la = folded;
    ra = Layout({k, n}, {ra.strides()[batch.size()], ra.strides()[batch.size() + 1]}, ra.offset());
  }
  {
    StorageLocks locks(__func__, {lhs.storage().get(), rhs.storage().get()}, {dst.storage().get()});
    lhs.storage()->impl().matmul(la, rhs.storage()->impl(), ra, dst.storage()->impl());
  }
  Shape result = batch;
  if (lhs.ndim() > 1) result.push_back(m);
  if (rhs.ndim() > 1) result.push_back(n);
  return dst.view_as(Layout(result));
}

namespace {
// The checks matmul makes, in its order, but naming dot or mv (PyTorch's: same dtype, no bool).
void check_vector_operands(const char* op, const Tensor& a, const Tensor& b) {
  Storage::check_same_device(op, *a.storage(), *b.storage());
  if (a.dtype() != b.dtype()) throw_dtype_mismatch(op, a.dtype(), b.dtype());
  if (a.dtype() == DType::Bool)
    throw_unsupported_dtype(op, DType::Bool, a.device(),
                            "convert first, e.g. a.to(ember.int64) and b.to(ember.int64)");
}
}  // namespace

Tensor dot(const Tensor& a, const Tensor& b) {
  if (autograd::wants_grad({&a, &b})) return autograd::d::dot(a, b);
  if (a.ndim() != 1 || b.ndim() != 1)
    throw_shape_mismatch("dot", a.shape(), b.shape(),
                         "expects two 1-D tensors (matmul takes matrices), got " +
                             std::to_string(a.ndim()) + "-D and " + std::to_string(b.ndim()) +
                             "-D");
  if (a.numel() != b.numel())
    throw_shape_mismatch("dot", a.shape(), b.shape(), "the vectors' lengths differ");
  check_vector_operands("dot", a, b);
  return matmul(a, b);  // (k) @ (k) is the 0-d sum of products
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  if (autograd::wants_grad({&mat, &vec})) return autograd::d::mv(mat, vec);
  if (mat.ndim() != 2 || vec.ndim() != 1)
    throw_shape_mismatch("mv", mat.shape(), vec.shape(),
                         "expects a 2-D matrix and a 1-D vector (matmul broadcasts batches), "
                         "got " +
                             std::to_string(mat.ndim()) + "-D and " + std::to_string(vec.ndim()) +
                             "-D");
  if (mat.shape()[1] != vec.numel())
    throw_shape_mismatch("mv", mat.shape(), vec.shape(),
                         "the matrix has " + std::to_string(mat.shape()[1]) +
                             " columns but the vector " + std::to_string(vec.numel()) +
                             " elements");
  check_vector_operands("mv", mat, vec);
  return matmul(mat, vec);
}

}  // namespace ember
