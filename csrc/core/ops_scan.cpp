// cumsum and cumprod: PyTorch's result dtypes, the scan itself in the backends.
#include "dim_last.h"
#include "tensor.h"
#include "autograd.h"
#include "derivatives.h"

namespace ember {

namespace {

const char* scan_name(ScanOp op) {
  return op == ScanOp::Sum ? "cumsum" : "cumprod";
}

}  // namespace

Tensor scan(ScanOp op, const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  if (autograd::wants_grad({&t}))
    return op == ScanOp::Sum ? autograd::d::cumsum(t, dim, dtype) : autograd::d::cumprod(t, dim, dtype);
  const char* name = scan_name(op);
  if (t.ndim() == 0) {  // PyTorch allows dim 0 / -1 on a 0-d tensor
    wrap_dim(name, dim, 1);
    return scan(op, unsqueeze(t, 0), 0, dtype).view_as(Layout(Shape{}));
  }
  const int64_t d = wrap_dim(name, dim, t.ndim());
  // PyTorch: integers accumulate in int64 unless a dtype is asked for (it then casts
  // the input first), so that sums of small integer types do not wrap at once.
  const DType out = dtype ? *dtype : dtype_is_float(t.dtype()) ? t.dtype() : DType::I64;
  if (!t.device()->supports_dtype(t.dtype()))
    throw_unsupported_dtype(name, t.dtype(), t.device(), "this backend has no kernels for it");
  if (!t.device()->supports_dtype(out))
    throw_unsupported_dtype(name, out, t.device(), "this backend has no kernels for it");
  // A bool sum saturates (numpy's logical-or): count in int64, then test for non-zero,
  // since a one-byte count would wrap at 256.
  if (out == DType::Bool && op == ScanOp::Sum)
    return to_dtype(scan(op, to_dtype(t, DType::Bool), d, DType::I64), DType::Bool);
  Tensor src = to_dtype(t, out);
  DimLast v = dim_last(src.layout(), d);
  Tensor dst = empty(v.layout.shape(), out, t.device(), name);
  if (dst.numel() > 0) {
    StorageLocks locks(__func__, {src.storage().get()}, {dst.storage().get()});
    src.storage()->impl().scan(op, v.layout, dst.storage()->impl());
  }
  return dst.view_as(dst.layout().permute(v.back));
}

}  // namespace ember
