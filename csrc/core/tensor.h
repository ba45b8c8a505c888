// Tensor: a Storage, a Layout that views it, and the op set. Ops check shapes,
// then devices, then dtypes, then hand layouts to the backend.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage.h"

namespace ember {

namespace autograd {
struct Meta;  // autograd.h: requires_grad, grad, grad_fn
}

class Tensor {
 public:
  Tensor(std::shared_ptr<Storage> storage, Layout layout)
      : storage_(std::move(storage)), layout_(std::move(layout)) {}

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  const Layout& layout() const { return layout_; }
  const Shape& shape() const { return layout_.shape(); }
  int64_t ndim() const { return layout_.ndim(); }
  int64_t numel() const { return layout_.numel(); }
  DType dtype() const { return storage_->dtype(); }
  const DevicePtr& device() const { return storage_->device(); }
  bool is_contiguous() const { return layout_.is_contiguous(); }
  // A view of the same storage (not in the autograd graph: ops that record use
  // autograd.h).
  Tensor view_as(Layout layout) const { return Tensor(storage_, std::move(layout)); }

  // Autograd's facts, shared by the copies of this Tensor (a Python tensor and the core
  // values that stand for it); null for the many tensors that never require grad, so
  // that an op pays one pointer test for them.
  const std::shared_ptr<autograd::Meta>& grad_meta() const { return meta_; }
  void set_grad_meta(std::shared_ptr<autograd::Meta> m) { meta_ = std::move(m); }
  // Whether this tensor takes part in the graph (a leaf that requires grad, or an op's
  // result on a path from one).
  bool requires_grad() const;

 private:
  std::shared_ptr<Storage> storage_;
  Layout layout_;
  std::shared_ptr<autograd::Meta> meta_;
};

using Dims = std::vector<int64_t>;

// ---- creation (ops_create.cpp)
void check_shape(const char* op, const Shape& shape);  // no negatives, no overflow
Tensor empty(const Shape& shape, DType dtype, const DevicePtr& device, const char* op = "empty");
// A fresh elementwise result over `inputs` (views of `shape`), laid out as PyTorch lays
// it out: contiguous when the inputs are, else in their memory order (layout_plan.h).
Tensor empty_for(const Shape& shape, DType dtype, const DevicePtr& device, const char* op,
                 const std::vector<const Layout*>& inputs);
Tensor full(const Shape& shape, double value, DType dtype, const DevicePtr& device);
// Integers exactly (a double holds only 53 bits); the value must fit dtype.
Tensor full_int(const Shape& shape, int64_t value, DType dtype, const DevicePtr& device);
// Raises InvalidArgument naming `op` when dtype cannot hold the fill value (overflow).
void check_fill_value(const char* op, double value, DType dtype);
Tensor zeros(const Shape& shape, DType dtype, const DevicePtr& device);
Tensor ones(const Shape& shape, DType dtype, const DevicePtr& device);
Tensor arange(double start, double stop, double step, DType dtype, const DevicePtr& device);
Tensor eye(int64_t n, int64_t m, DType dtype, const DevicePtr& device);
Tensor rand(const Shape& shape, double lo, double hi, DType dtype, const DevicePtr& device);
Tensor randn(const Shape& shape, double mean, double std, DType dtype, const DevicePtr& device);
// Integers uniform in [low, high), drawn as int64 from the device's stream, then cast.
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, const DevicePtr& device);
// From contiguous host data of the given dtype (copied).
Tensor from_host(const void* data, const Shape& shape, DType dtype, const DevicePtr& device);
// A view of host memory that `owner` keeps alive (zero-copy import): `layout` views the
// `numel` elements at `data`. Raises InvalidArgument naming `op` if `device` cannot.
Tensor wrap_host(const char* op, void* data, int64_t numel, const Layout& layout, DType dtype,
                 std::shared_ptr<void> owner, const DevicePtr& device);
// The same over memory of `device` itself (a GPU library's tensor, imported zero-copy).
Tensor wrap_device(const char* op, void* data, int64_t numel, const Layout& layout, DType dtype,
                   std::shared_ptr<void> owner, const DevicePtr& device);

// ---- moves and host copies (ops_move.cpp)
Tensor to_device(const Tensor& t, const DevicePtr& device);
Tensor to_dtype(const Tensor& t, DType dtype);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
// Copies src (broadcast to dst's shape) into dst, as if src were read before any write.
void copy_into(const Tensor& src, const Tensor& dst, const char* op);
// Raises InvalidArgument naming `op` when dst is a view whose elements share memory.
void check_writable(const char* op, const Tensor& dst);
// True when writing dst could clobber elements that `read` (a view of `src`'s storage)
// has not read yet: the two meet in memory and are not the very same view.
bool write_clobbers(const Tensor& src, const Layout& read, const Tensor& dst);
// Copies the elements (row-major) into host memory of t.numel() * dtype_size bytes.
void to_host(const Tensor& t, void* dst);
// Tensor.copy_: src's values (broadcast, cast) into dst, from any device; into a dense
// host tensor of src's shape and dtype straight from the device (DMA when pinned).
void copy_from(const Tensor& dst, const Tensor& src);
// A copy of host tensor t in page-locked memory of a GPU backend, which it copies to
// and from by DMA (Tensor.pin_memory()); is_pinned: t's memory is such memory.
Tensor pin_memory(const Tensor& t);
bool is_pinned(const Tensor& t);

// ---- elementwise (ops_elementwise.cpp). `out`, when given, receives the result.
Tensor unary(UnaryOp op, const Tensor& t, const std::optional<Tensor>& out = std::nullopt);
Tensor clamp(const Tensor& t, std::optional<double> lo, std::optional<double> hi);
// round(decimals=) as PyTorch: rint(x * 10^d) / 10^d (d > 0), rint(x / 10^-d) * 10^-d (d < 0),
// halves in float32; floats only unless d == 0.
Tensor round_decimals(const Tensor& t, int64_t decimals);
Tensor affine(const Tensor& t, double mul, double add);
Tensor binary(BinaryOp op, const Tensor& lhs, const Tensor& rhs,
              const std::optional<Tensor>& out = std::nullopt);
// t + s, t - s, s - t (number_left) or t * s for a number s and a float32/float64 tensor
// t, as one affine pass x * m + a, so that a number costs no more than a second tensor
// (on a GPU, one launch instead of a fill and the op). Exact: the values of the binary op
// with s as a 0-d tensor of t's dtype (a NaN's sign bit aside), since m = +-1 multiplies
// exactly and x * s + (-0.0) is x * s. nullopt for other ops and dtypes, and for a t
// that requires grad (the graph records the binary op, as PyTorch's AddBackward0).
std::optional<Tensor> binary_number(BinaryOp op, const Tensor& t, double s, bool number_left);
Tensor cmp(CmpOp op, const Tensor& lhs, const Tensor& rhs);
Tensor where(const Tensor& cond, const Tensor& on_true, const Tensor& on_false);
// where(cond, on_true, on_false) written into dst in one pass, the values cast to dst's
// dtype; all three broadcast to dst's shape, and on_false may be dst itself (an in-place
// masked fill). `op` names the user's op in errors.
void where_into(const Tensor& cond, const Tensor& on_true, const Tensor& on_false,
                const Tensor& dst, const char* op);

// ---- bool (ops_bool.cpp): PyTorch's rules for bool tensors, and the logical ops
// Raises UnsupportedDTypeError naming the op and the fix where PyTorch refuses bool.
void check_bool_unary(UnaryOp op, const DevicePtr& device);
// The op that computes `op` of two bool tensors on their bytes (+ is maximum), or raises.
BinaryOp bool_binary(BinaryOp op, const DevicePtr& device);
Tensor as_bool(const Tensor& t);  // t != 0, or t itself when it is bool
Tensor logical_not(const Tensor& t);
// op is "logical_and", "logical_or" or "logical_xor"; any dtypes, a bool result
Tensor logical_binary(const char* op, const Tensor& a, const Tensor& b);
// any (all == false) or all over dims (empty: every dim), a bool result
Tensor any_all(bool all, const Tensor& t, const Dims& dims, bool keepdim);

// ---- reductions (ops_reduce.cpp); empty dims = all dims
Tensor reduce(ReduceOp op, const Tensor& t, const Dims& dims, bool keepdim);
// The sum of t * t over dims in one pass, for norm(p=2) of a float tensor outside
// autograd; nullopt where t's backend has no such kernel.
std::optional<Tensor> sum_squares(const Tensor& t, const Dims& dims, bool keepdim);
// var (std when root) of a float32 or half t in one pass where the backend has the
// kernel (BackendStorage::reduce_var); nullopt elsewhere. Not for autograd.
// prod of a float32, float64 or int64 tensor in one pass where its backend has the kernel
std::optional<Tensor> prod_one_pass(const Tensor& t, const Dims& dims, bool keepdim);
// logsumexp of a float32 tensor in one pass where its backend has the kernel
std::optional<Tensor> logsumexp_one_pass(const Tensor& t, const Dims& dims, bool keepdim);
std::optional<Tensor> var_one_pass(const char* op, const Tensor& t, const Dims& dims,
                                   double correction, bool root, bool keepdim);
Tensor mean(const Tensor& t, const Dims& dims, bool keepdim);
// argmax/argmin over one dim, or over the flattened tensor when dim is empty
Tensor arg_reduce(ReduceOp op, const Tensor& t, std::optional<int64_t> dim, bool keepdim);
Tensor softmax(const Tensor& t, int64_t dim, bool log);

// ---- scans (ops_scan.cpp): cumsum / cumprod along `dim`. Without `dtype` integers
// accumulate into int64 (PyTorch's rule), floats keep theirs; with it the input is cast
// to `dtype` first.
Tensor scan(ScanOp op, const Tensor& t, int64_t dim, std::optional<DType> dtype);

// ---- sorting (ops_sort.cpp): always stable; indices are int64
struct SortResult {
  Tensor values, indices;
};
SortResult sort(const Tensor& t, int64_t dim, bool descending);
Tensor argsort(const Tensor& t, int64_t dim, bool descending);
// The k largest (smallest unless `largest`) along `dim`, in sorted order; k in [0, size].
SortResult topk(const Tensor& t, int64_t k, int64_t dim, bool largest);

// ---- linear algebra (ops_matmul.cpp)
Tensor matmul(const Tensor& lhs, const Tensor& rhs);
Tensor dot(const Tensor& a, const Tensor& b);     // 1-D by 1-D, the same length: a 0-d result
Tensor mv(const Tensor& mat, const Tensor& vec);  // (n, m) by (m): (n)

// ---- shape (ops_shape.cpp): views unless said otherwise
Tensor reshape(const Tensor& t, Shape shape);  // copies when the strides need it
Tensor view(const Tensor& t, Shape shape);     // never copies; raises if it would have to
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor permute(const Tensor& t, const Dims& order);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t len);
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t stop, int64_t step);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& t, std::optional<int64_t> dim);
Tensor squeeze_dims(const Tensor& t, const Dims& dims);  // those of size 1; no repeats
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start, int64_t end);
Tensor broadcast_to(const Tensor& t, const Shape& shape);
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);  // copies
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);

// ---- more shape ops (ops_shape_more.cpp), PyTorch's: flip/roll/repeat/tile/pad copy,
// split/chunk give views
Tensor flip(const Tensor& t, const Dims& dims);
// dims empty: the tensor is rolled flat by the one shift, then takes its shape back.
Tensor roll(const Tensor& t, const Dims& shifts, const Dims& dims);
Tensor repeat(const Tensor& t, const Shape& sizes);  // as np.tile with one count per dim
Tensor tile(const Tensor& t, const Shape& reps);
std::vector<Tensor> split(const Tensor& t, int64_t size, int64_t dim);
std::vector<Tensor> split_sizes(const Tensor& t, const Shape& sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim);
enum class PadMode { Constant, Reflect, Replicate, Circular };
// torch.nn.functional.pad: (lo, hi) pairs from the last dim backwards.
Tensor pad(const Tensor& t, const Shape& pads, PadMode mode, double value);

// ---- more creation (ops_create.cpp, ops_create_more.cpp)
Tensor linspace(double start, double end, int64_t steps, DType dtype, const DevicePtr& device);
// The elements on and below (tril) or above (triu) diagonal k of the last two dims.
Tensor tril(const Tensor& t, int64_t k);
Tensor triu(const Tensor& t, int64_t k);
// 0-d or 1-d tensors to broadcast views; xy swaps the first two dims (numpy's default).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& ts, bool xy);

// ---- more elementwise (ops_elementwise_more.cpp); predicates have the comparisons' dtype
DType predicate_dtype();
// `value` (a 0-d tensor, cast to t's dtype) where mask is true; the two broadcast.
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value);
// The same written into t (the mask broadcasts to t's shape), in one pass.
void masked_fill_inplace(const Tensor& t, const Tensor& mask, const Tensor& value);
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
Tensor elu(const Tensor& t, double alpha);

// ---- more reductions (ops_reduce_more.cpp); empty dims = all dims
Tensor var(const Tensor& t, const Dims& dims, double correction, bool keepdim);
Tensor std_dev(const Tensor& t, const Dims& dims, double correction, bool keepdim);
Tensor prod(const Tensor& t, const Dims& dims, bool keepdim);
Tensor logsumexp(const Tensor& t, const Dims& dims, bool keepdim);
// The vector p-norm over dims: any p, inf and -inf included (p = 0 counts non-zeros).
Tensor norm(const Tensor& t, double p, const Dims& dims, bool keepdim);

// ---- masks (ops_mask.cpp): each reads one count to the host, then the device compacts
// the mask (nonzero's kernel); positions are row-major and int64.
Tensor nonzero(const Tensor& t);                      // (count, ndim)
std::vector<Tensor> nonzero_tuple(const Tensor& t);   // ndim tensors of (count,)
Tensor count_nonzero(const Tensor& t, const Dims& dims);  // empty dims: all; int64
Tensor masked_select(const Tensor& t, const Tensor& mask);  // the two broadcast; 1-D
// t[mask] for a bool mask over t's leading dims: (count, t's other dims).
Tensor mask_read(const Tensor& t, const Tensor& mask);
// t[mask] = value: value broadcasts to (count, t's other dims); one that needs no count
// (it broadcasts to t's other dims alone) is written by one where() over t.
void mask_write(const Tensor& t, const Tensor& mask, const Tensor& value);

// ---- indexing (ops_index.cpp): copies
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& ids);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& ids);

// ---- the scatter family (ops_scatter.cpp), PyTorch's semantics. The plain forms write a
// copy of t, the in-place ones (inplace = true) t itself, and return what they wrote.
// src of scatter: ids' shape or larger in every dim; a repeated id takes the last
// value (scatter) or the sum in index order (accumulate).
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& ids, const Tensor& src, bool accumulate,
               bool inplace);
// t[..., ids[i], ...] += alpha * source[..., i, ...] along dim; ids 1-D. alpha: a 0-d
// tensor of t's dtype, or none for 1.
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& ids, const Tensor& source,
                 const std::optional<Tensor>& alpha, bool inplace);
// A copy of t with src written into t[start:end:step] along dim (step > 0).
Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step);
// weight's rows at ids (any shape): ids.shape + [weight.size(1)].
Tensor embedding(const Tensor& ids, const Tensor& weight);

// ---- resampling (ops_resample.cpp), composed from index_select and elementwise ops.
// PyTorch's interpolate of (N, C, W) or (N, C, H, W): `size` or `scales` (one per
// spatial dim, exactly one of the two non-empty); mode "nearest", "linear" (3-D) or
// "bilinear" (4-D); align_corners only with the linear modes (nullopt: False).
Tensor interpolate(const Tensor& t, const Shape& size, const std::vector<double>& scales,
                   const std::string& mode, std::optional<bool> align_corners);
// Each element `repeats` times along `dim` (nullopt: of the flattened input), by
// index_select (ops_shape_more.cpp).
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim);

}  // namespace ember
