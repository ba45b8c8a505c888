// tril, triu and meshgrid, composed from arange, comparisons, where and broadcast views.
#include "tensor.h"

namespace ember {

namespace {

// Keeps t's elements whose column minus row compares with k as `op` says; zeros elsewhere.
Tensor triangle(const char* name, const Tensor& t, int64_t k, CmpOp op) {
  if (t.ndim() < 2)
    throw_invalid(name, "expects a tensor of at least 2 dims (matrices in the last two), got " +
                            std::to_string(t.ndim()));
  const DevicePtr& dev = t.device();
  int64_t n = t.shape()[size_t(t.ndim() - 2)], m = t.shape()[size_t(t.ndim() - 1)];
  Tensor rows = reshape(arange(0, double(n), 1, DType::I64, dev), {n, 1});
  Tensor cols = reshape(arange(0, double(m), 1, DType::I64, dev), {1, m});
  Tensor keep = cmp(op, binary(BinaryOp::Sub, cols, rows), full_int({}, k, DType::I64, dev));
  return where(keep, t, full({}, 0.0, t.dtype(), dev));
}

}  // namespace

Tensor tril(const Tensor& t, int64_t k) {
  return triangle("tril", t, k, CmpOp::Le);
}

Tensor triu(const Tensor& t, int64_t k) {
  return triangle("triu", t, k, CmpOp::Ge);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& ts, bool xy) {
  if (ts.empty()) throw_invalid("meshgrid", "needs at least one tensor");
  for (const Tensor& t : ts)  // shapes, then devices, then dtypes
    if (t.ndim() > 1)
      throw_invalid("meshgrid",
                    "expects 0-d or 1-d tensors, got one of shape " + shape_str(t.shape()));
  for (const Tensor& t : ts) Storage::check_same_device("meshgrid", *ts[0].storage(), *t.storage());
  for (const Tensor& t : ts)
    if (t.dtype() != ts[0].dtype()) throw_dtype_mismatch("meshgrid", ts[0].dtype(), t.dtype());
  // "xy" is "ij" of the inputs with the first two swapped, and its first two outputs swapped.
  std::vector<Tensor> in = ts;
  const bool swap = xy && in.size() >= 2;
  if (swap) std::swap(in[0], in[1]);
  Shape shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape along(in.size(), 1);
    along[i] = in[i].numel();
    out.push_back(broadcast_to(reshape(in[i], along), shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

}  // namespace ember
