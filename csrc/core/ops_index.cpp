#include <vector>

#include "index_checks.h"
#include "autograd.h"
#include "derivatives.h"

namespace ember {

namespace {

bool is_index_dtype(DType d) {
  return d == DType::I64 || d == DType::I32 || d == DType::U32 || d == DType::U8;
}

// The values of `t` (an index dtype), widened on the host: a cast on the device would
// need int64 kernels, which a Metal GPU may lack while uint32 indices still work.
template <typename T>
void widen(const Tensor& t, int64_t* out) {
  std::vector<T> v(size_t(t.numel()));
  to_host(t, v.data());
  for (size_t i = 0; i < v.size(); ++i) out[i] = int64_t(v[i]);
}

void values_i64(const Tensor& t, int64_t* out) {
  switch (t.dtype()) {
    case DType::U8: return widen<uint8_t>(t, out);
    case DType::U32: return widen<uint32_t>(t, out);
    case DType::I32: return widen<int32_t>(t, out);
    default: return widen<int64_t>(to_dtype(t, DType::I64), out);
  }
}

}  // namespace

namespace index_checks {

Tensor at_least_1d(const Tensor& t) {
  return t.ndim() == 0 ? t.view_as(Layout({1}, {0}, t.layout().offset())) : t;
}

Tensor distinct_elements(const Tensor& t) {
  Shape shape = t.shape();
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.layout().strides()[size_t(d)] == 0) shape[size_t(d)] = 1;
  return t.view_as(Layout(shape, t.layout().strides(), t.layout().offset()));
}

std::function<std::pair<int64_t, int64_t>()> start_bounds(const char* op, const Tensor& ids) {
  const Tensor distinct = distinct_elements(ids);
  {
    StorageLocks locks(op, {distinct.storage().get()}, {});
    if (auto one_pass = distinct.storage()->impl().index_bounds(distinct.layout()))
      return one_pass;
  }
  // min and max queued now, read back together when asked: one wait
  Tensor both = stack({reduce(ReduceOp::Min, distinct, {}, false),
                       reduce(ReduceOp::Max, distinct, {}, false)},
                      0);
  return [both] {
    int64_t bounds[2];
    values_i64(both, bounds);
    return std::pair<int64_t, int64_t>(bounds[0], bounds[1]);
  };
}

// Every index must lie in [0, size): checked here once, for every backend, so that
// no kernel ever reads out of bounds.
void check_bounds(const char* op, int64_t lo, int64_t hi, int64_t size) {
  if (lo < 0 || hi >= size) {
    int64_t bad = lo < 0 ? lo : hi;
    throw Error(ErrorKind::IndexOutOfRange, std::string(op) + ": index " + std::to_string(bad) +
                                                " is out of range for a dim of size " +
                                                std::to_string(size) + " (indices must be in [0, " +
                                                std::to_string(size) + "))")
        .with("op", std::string(op))
        .with("index", bad)
        .with("size", size);
  }
}

void check_range(const char* op, const Tensor& ids, int64_t size) {
  if (ids.numel() == 0) return;
  const auto [lo, hi] = start_bounds(op, ids)();
  check_bounds(op, lo, hi, size);
}

std::function<void()> start_range(const char* op, const Tensor& ids, int64_t size,
                                  const Tensor& data) {
  if (ids.numel() == 0 || size == 0 || !data.storage()->impl().index_reads_clamp()) {
    check_range(op, ids, size);
    return [] {};
  }
  return [op, size, bounds = start_bounds(op, ids)] {
    const auto [lo, hi] = bounds();
    check_bounds(op, lo, hi, size);
  };
}

void check_dtype(const char* op, const Tensor& ids) {
  if (!is_index_dtype(ids.dtype()))
    throw_unsupported_dtype(
        op, ids.dtype(), ids.device(),
        "indices must be int64, int32, uint32 or uint8" +
            std::string(ids.dtype() == DType::Bool ? " (a bool mask selects with t[mask])" : ""));
}

// Range-checked int32 ids as uint32 (they are >= 0 by then): the kernels take int64,
// uint32 and uint8 ids, and a Metal GPU may lack int64 kernels.
Tensor kernel_ids(const Tensor& ids) {
  return ids.dtype() == DType::I32 ? to_dtype(ids, DType::U32) : ids;
}

Tensor select_checked(const Tensor& t, int64_t d, const Tensor& ids) {
  if (autograd::wants_grad({&t})) return autograd::d::select_checked(t, d, ids);
  Shape shape = t.shape();
  shape[size_t(d)] = ids.numel();
  Tensor out = empty(shape, t.dtype(), t.device(), "index_select");
  StorageLocks locks(__func__, {t.storage().get(), ids.storage().get()}, {out.storage().get()});
  t.storage()->impl().index_select(t.layout(), d, ids.storage()->impl(), ids.layout(),
                                   out.storage()->impl());
  return out;
}

void scatter_checked(const Tensor& dst, int64_t d, const Tensor& ids_in, const Tensor& src_in,
                     bool accumulate, bool unique_ids) {
  if (ids_in.numel() == 0) return;
  const auto shares = [&](const Tensor& x) { return x.storage() == dst.storage(); };
  const Tensor ids = kernel_ids(shares(ids_in) ? clone(ids_in) : ids_in);
  const Tensor src = shares(src_in) ? clone(src_in) : src_in;
  const Layout src_view(ids.shape(), src.layout().strides(), src.layout().offset());
  // A value broadcast along d (t[ids] = 1, t[i, j] = 0) writes the same element for every
  // id of a row: repeats need no last-writer order, as unique ids do not.
  if (!accumulate && src_view.strides()[size_t(d)] == 0) unique_ids = true;
  StorageLocks locks(__func__, {ids.storage().get(), src.storage().get()}, {dst.storage().get()});
  dst.storage()->impl().scatter(dst.layout(), d, ids.storage()->impl(), ids.layout(),
                                src.storage()->impl(), src_view, accumulate, unique_ids);
}

void put_along(const char* op, const Tensor& dst, int64_t d, const Tensor& ids,
               const Tensor& src, bool accumulate, bool unique_ids) {
  if (ids.numel() == 0) return;
  check_writable(op, dst);
  Shape line(size_t(dst.ndim()), 1), want = dst.shape();
  line[size_t(d)] = want[size_t(d)] = ids.numel();
  // The same id for every position of the other dims (stride 0).
  const Tensor spread = broadcast_to(reshape(ids, line), want);
  scatter_checked(dst, d, spread, to_dtype(broadcast_to(src, want), dst.dtype()), accumulate,
                  unique_ids);
}

}  // namespace index_checks

using index_checks::kernel_ids;

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& ids_in) {
  int64_t d = wrap_dim("index_select", dim, t.ndim());
  if (ids_in.ndim() != 1)
    throw_shape_mismatch("index_select", t.shape(), ids_in.shape(), "indices must be 1-D");
  Storage::check_same_device("index_select", *t.storage(), *ids_in.storage());
  index_checks::check_dtype("index_select", ids_in);
  const auto checked = index_checks::start_range("index_select", ids_in, t.shape()[size_t(d)], t);
  Tensor out = index_checks::select_checked(t, d, kernel_ids(ids_in));
  checked();
  return out;
}

Tensor gather(const Tensor& t_in, int64_t dim, const Tensor& ids_0d) {
  if (autograd::wants_grad({&t_in})) return autograd::d::gather(t_in, dim, ids_0d);
  // 0-d input and ids act as 1-d of one element, as in PyTorch and scatter
  const Tensor t = index_checks::at_least_1d(t_in), ids_in = index_checks::at_least_1d(ids_0d);
  int64_t d = wrap_dim("gather", dim, t.ndim());
  if (ids_in.ndim() != t.ndim())
    throw_shape_mismatch("gather", t.shape(), ids_in.shape(),
                         "indices need as many dims as the input");
  for (int64_t i = 0; i < t.ndim(); ++i)
    if (i != d && ids_in.shape()[size_t(i)] > t.shape()[size_t(i)])
      throw_shape_mismatch("gather", t.shape(), ids_in.shape(),
                           "indices may not be larger than the input in dim " + std::to_string(i));
  Storage::check_same_device("gather", *t.storage(), *ids_in.storage());
  index_checks::check_dtype("gather", ids_in);
  // The result first: one that cannot be allocated fails before any id is read.
  Tensor out = empty(ids_in.shape(), t.dtype(), t.device(), "gather");
  const int64_t size = t.shape()[size_t(d)];
  if (size > 0 && ids_in.numel() > 0 && ids_in.dtype() != DType::I32) {
    // one pass over the ids where the backend checks them as it gathers (int32 ids would
    // reach it as uint32, their negative values lost)
    int64_t lo = 0, hi = 0;
    bool fused = false;
    {
      StorageLocks locks(__func__, {t.storage().get(), ids_in.storage().get()},
                         {out.storage().get()});
      fused = t.storage()->impl().gather_bounded(t.layout(), d, ids_in.storage()->impl(),
                                                 ids_in.layout(), out.storage()->impl(), &lo, &hi);
    }
    if (fused) {
      index_checks::check_bounds("gather", lo, hi, size);
      return ids_0d.ndim() == 0 ? reshape(out, {}) : out;
    }
  }
  const auto checked = index_checks::start_range("gather", ids_in, size, t);
  const Tensor ids = kernel_ids(ids_in);
  {
    StorageLocks locks(__func__, {t.storage().get(), ids.storage().get()}, {out.storage().get()});
    t.storage()->impl().gather(t.layout(), d, ids.storage()->impl(), ids.layout(),
                               out.storage()->impl());
  }
  checked();
  return ids_0d.ndim() == 0 ? reshape(out, {}) : out;
}

}  // namespace ember
