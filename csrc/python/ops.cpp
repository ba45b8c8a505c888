// The op set: each op is registered once as a Tensor method and once as a module
// function (ember.exp(t) == t.exp()), plus the creation functions.
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/autograd.h"

namespace ember::python {

namespace {

// Registers fn as Tensor method `name` and as ember.name(input, ...).
template <typename Fn, typename... Extra>
void def_op(py::module_& m, py::class_<Tensor>& cls, const char* name, Fn&& fn,
            const Extra&... extra) {
  cls.def(name, fn, extra...);
  m.def(name, fn, py::arg("input"), extra...);
}

// ---- unary

template <UnaryOp op>
py::object unary_fn(const Tensor& t, py::handle out) {
  std::optional<Tensor> dst = out_arg(out, unary_name(op));
  Tensor r = gil_free_if(big(t), [&] { return unary(op, t, dst); });
  return dst ? borrowed(out) : py::cast(std::move(r));
}

template <UnaryOp op>
void def_unary(py::module_& m, py::class_<Tensor>& cls) {
  // gelu's two forms are one binding with approximate= (below)
  if constexpr (op != UnaryOp::Gelu && op != UnaryOp::GeluTanh && op != UnaryOp::Round)
    def_op(m, cls, unary_name(op), &unary_fn<op>, py::arg("out") = py::none());
}

// PyTorch's gelu(input, approximate='none'): the erf form, or 'tanh' for its approximation.
py::object gelu_fn(const Tensor& t, py::handle approximate, py::handle out) {
  if (!PyUnicode_Check(approximate.ptr()))
    throw_invalid_type("gelu", "approximate must be 'none' or 'tanh'",
                       Py_TYPE(approximate.ptr())->tp_name);
  const std::string form = approximate.cast<std::string>();
  if (form != "none" && form != "tanh")
    throw_invalid("gelu", "approximate must be 'none' or 'tanh', got '" + form + "'");
  // a dtype gelu refuses is refused by the erf form's row, whose error names gelu
  return form == "tanh" && dtype_is_float(t.dtype()) ? unary_fn<UnaryOp::GeluTanh>(t, out)
                                                     : unary_fn<UnaryOp::Gelu>(t, out);
}

py::object reduced(Tensor r, py::handle out, const char* op, bool exact);

// PyTorch's round(input, *, decimals=0).
py::object round_fn(const Tensor& t, py::handle decimals, py::handle out) {
  const int64_t d = int_arg(decimals, "round");
  if (d == 0) return unary_fn<UnaryOp::Round>(t, out);
  return reduced(gil_free_if(big(t), [&] { return round_decimals(t, d); }), out, "round", false);
}

Tensor clamp_fn(const Tensor& t, std::optional<double> lo, std::optional<double> hi) {
  return gil_free_if(big(t), [&] { return clamp(t, lo, hi); });
}

void bind_unary(py::module_& m, py::class_<Tensor>& cls) {
#define EMBER_UNARY(Enum, name, dtypes) def_unary<UnaryOp::Enum>(m, cls);
#define EMBER_UNARY_PARAMS(Enum, name, dtypes)  // bound below
#include "core/ops.def"
  def_op(m, cls, "clamp", &clamp_fn, py::arg("min") = py::none(), py::arg("max") = py::none());
  def_op(m, cls, "round", &round_fn, py::kw_only(), py::arg("decimals") = 0,
         py::arg("out") = py::none());
  def_op(m, cls, "gelu", &gelu_fn, py::arg("approximate") = "none", py::kw_only(),
         py::arg("out") = py::none());
}

// ---- logical ops (bool results, any dtypes) and any / all

template <bool all>
Tensor any_all_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle axis,
                  py::handle keepdims) {
  const char* name = all ? "all" : "any";
  Dims dims = dims_arg(dim_or_axis(dim, axis, name), name);
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, name);
  return gil_free_if(big(t), [&] { return any_all(all, t, dims, keepdim); });
}

// The other side may be a Python number or an ndarray, as for the binary ops.
Tensor logical_call(const char* op, py::handle a, py::handle b) {
  std::optional<std::pair<Tensor, Tensor>> ab;
  if (is_tensor(a))
    ab = operands(a.cast<const Tensor&>(), b, false, op);
  else if (is_tensor(b))
    ab = operands(b.cast<const Tensor&>(), a, true, op);
  else
    throw_invalid_type(op, "at least one argument must be a Tensor", Py_TYPE(a.ptr())->tp_name);
  if (!ab)
    throw_invalid_type(op, "expected a Tensor, a Python number or a numpy array",
                       Py_TYPE((is_tensor(a) ? b : a).ptr())->tp_name);
  return gil_free_if(big(ab->first) || big(ab->second),
                     [&] { return logical_binary(op, ab->first, ab->second); });
}

void def_logical(py::module_& m, py::class_<Tensor>& cls, const char* name) {
  auto fn = [name](py::handle a, py::handle b) { return logical_call(name, a, b); };
  cls.def(name, fn, py::arg("other"));
  m.def(name, fn, py::arg("input"), py::arg("other"));
}

void bind_logical(py::module_& m, py::class_<Tensor>& cls) {
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) def_logical(m, cls, name);
  def_op(m, cls, "logical_not",
         [](const Tensor& t) { return gil_free_if(big(t), [&] { return logical_not(t); }); });
  auto dim = py::arg("dim") = py::none();
  auto keepdim = py::arg("keepdim").noconvert() = false;
  auto axis = py::arg("axis") = py::none(), keepdims = py::arg("keepdims") = py::none();
  def_op(m, cls, "any", &any_all_fn<false>, dim, keepdim, py::kw_only(), axis, keepdims);
  def_op(m, cls, "all", &any_all_fn<true>, dim, keepdim, py::kw_only(), axis, keepdims);
}

// ---- reductions and matmul

// A reduction's out= (numpy's np.sum(t) passes out=None): the result written into it,
// which must have the result's shape and a dtype the result can be written into (the
// result's own when `exact`: indices are int64 only, as PyTorch's).
void check_out(const Tensor& r, const Tensor& dst, const char* op, bool exact) {
  if (dst.shape() != r.shape())
    throw_shape_mismatch(op, r.shape(), dst.shape(), "the out= tensor must have the result's shape");
  Storage::check_same_device(op, *r.storage(), *dst.storage());
  if (exact ? r.dtype() != dst.dtype() : !can_write_into(r.dtype(), dst.dtype()))
    throw_dtype_mismatch(op, r.dtype(), dst.dtype());
}

py::object reduced(Tensor r, py::handle out, const char* op, bool exact) {
  std::optional<Tensor> dst = out_arg(out, op);
  if (!dst) return py::cast(std::move(r));
  check_out(r, *dst, op, exact);
  gil_free_if(big(r), [&] { copy_into(r, *dst, op); });
  return borrowed(out);
}

// max/min(dim, out=(values, indices)): both out= tensors checked before either is written.
py::tuple extreme_out(bool is_max, const Tensor& t, int64_t dim, bool keepdim, py::handle values,
                      py::handle indices) {
  const char* op = is_max ? "max" : "min";
  std::optional<Tensor> v_out = out_arg(values, op), i_out = out_arg(indices, op);
  if (!v_out || !i_out)
    throw Error(ErrorKind::InvalidType,
                std::string(op) + ": with a dim, out= must be a pair (values, indices) of tensors")
        .with("op", std::string(op));
  auto [v, i] = gil_free_if(big(t), [&] {
    return std::make_pair(reduce(is_max ? ReduceOp::Max : ReduceOp::Min, t, {dim}, keepdim),
                          arg_reduce(is_max ? ReduceOp::ArgMax : ReduceOp::ArgMin, t, dim, keepdim));
  });
  check_out(v, *v_out, op, false);
  check_out(i, *i_out, op, true);
  gil_free_if(big(v), [&] {
    copy_into(v, *v_out, op);
    copy_into(i, *i_out, op);
  });
  return py::make_tuple(values, indices);
}

// sum/mean(dtype=): the input is cast to dtype first, as PyTorch's.
Tensor cast_to(const Tensor& t, std::optional<DType> dtype) {
  return dtype && *dtype != t.dtype() ? to_dtype(t, *dtype) : t;
}
std::optional<DType> opt_dtype(py::handle dtype) {
  if (dtype.is_none()) return std::nullopt;
  return dtype_arg(dtype);
}

template <ReduceOp op>
py::object reduce_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle axis,
                     py::handle keepdims, py::handle out) {
  const char* name = reduce_name(op);
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, name);
  Dims dims = dims_arg(dim_or_axis(dim, axis, name), name);
  return reduced(gil_free_if(big(t), [&] { return reduce(op, t, dims, keepdim); }), out, name, false);
}

py::object sum_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle dtype,
                  py::handle axis, py::handle keepdims, py::handle out) {
  Dims dims = dims_arg(dim_or_axis(dim, axis, "sum"), "sum");
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, "sum");
  std::optional<DType> d = opt_dtype(dtype);
  Tensor r =
      gil_free_if(big(t), [&] { return reduce(ReduceOp::Sum, cast_to(t, d), dims, keepdim); });
  return reduced(std::move(r), out, "sum", false);
}

py::object mean_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle dtype,
                   py::handle axis, py::handle keepdims, py::handle out) {
  Dims dims = dims_arg(dim_or_axis(dim, axis, "mean"), "mean");
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, "mean");
  std::optional<DType> d = opt_dtype(dtype);
  Tensor r = gil_free_if(big(t), [&] { return mean(cast_to(t, d), dims, keepdim); });
  return reduced(std::move(r), out, "mean", false);
}

template <ReduceOp op>
py::object arg_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle axis,
                  py::handle keepdims, py::handle out) {
  const char* name = reduce_name(op);
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, name);
  py::handle d = dim_or_axis(dim, axis, name);
  std::optional<int64_t> one;
  if (!d.is_none()) one = int_arg(d, name);
  return reduced(gil_free_if(big(t), [&] { return arg_reduce(op, t, one, keepdim); }), out, name,
                 true);
}

// argmax/argmin take one dim (or none); the others a dim or a tuple of dims. Every one also
// takes numpy's axis=, keepdims= and out=, so np.sum(t, axis=1) and np.argmax(t) call it.
template <ReduceOp op>
void def_reduce(py::module_& m, py::class_<Tensor>& cls) {
  auto dim = py::arg("dim") = py::none();
  auto keepdim = py::arg("keepdim").noconvert() = false;
  auto axis = py::arg("axis") = py::none();
  auto keepdims = py::arg("keepdims") = py::none();
  auto out = py::arg("out") = py::none();
  if constexpr (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
    def_op(m, cls, reduce_name(op), &arg_fn<op>, dim, keepdim, py::kw_only(), axis, keepdims, out);
  else if constexpr (op == ReduceOp::Sum)
    def_op(m, cls, "sum", &sum_fn, dim, keepdim, py::kw_only(), py::arg("dtype") = py::none(), axis,
           keepdims, out);
  else
    def_op(m, cls, reduce_name(op), &reduce_fn<op>, dim, keepdim, py::kw_only(), axis, keepdims,
           out);
}

// dim=None is the last dim (ember's default; PyTorch asks for one).
template <bool log>
Tensor softmax_fn(const Tensor& t, py::handle dim, py::handle axis) {
  const char* name = log ? "log_softmax" : "softmax";
  py::handle d = dim_or_axis(dim, axis, name);
  int64_t one = d.is_none() ? -1 : int_arg(d, name);
  return gil_free_if(big(t), [&] { return softmax(t, one, log); });
}

Tensor matmul_fn(const Tensor& a, const Tensor& b) {
  bool heavy = a.numel() * (b.ndim() ? b.shape().back() : 1) >= kReleaseGilNumel;
  return gil_free_if(heavy, [&] { return matmul(a, b); });
}

void bind_reductions(py::module_& m, py::class_<Tensor>& cls) {
  auto dim = py::arg("dim") = py::none();
  auto axis = py::arg("axis") = py::none();
#define EMBER_REDUCE(Enum, name, dtypes) def_reduce<ReduceOp::Enum>(m, cls);
#include "core/ops.def"
  def_op(m, cls, "mean", &mean_fn, dim, py::arg("keepdim").noconvert() = false, py::kw_only(),
         py::arg("dtype") = py::none(), axis, py::arg("keepdims") = py::none(),
         py::arg("out") = py::none());
  def_op(m, cls, "softmax", &softmax_fn<false>, dim, py::kw_only(), axis);
  def_op(m, cls, "log_softmax", &softmax_fn<true>, dim, py::kw_only(), axis);
  bind_logical(m, cls);
  m.def("_extreme_out", &extreme_out);
  cls.def("matmul", &matmul_fn, py::arg("other"));
  m.def("matmul", &matmul_fn, py::arg("input"), py::arg("other"));
}

// ---- shape

Tensor reshape_fn(const Tensor& t, const py::args& shape) {
  Shape s = shape_args(shape, "reshape");
  return gil_free_if(big(t), [&] { return reshape(t, std::move(s)); });
}

Tensor t_fn(const Tensor& t) {
  if (t.ndim() > 2)
    throw_invalid("t", "expects a tensor of at most 2 dims, got " + std::to_string(t.ndim()) +
                           "; use transpose(d0, d1) or permute");
  return t.ndim() < 2 ? t : transpose(t, 0, 1);
}

Tensor squeeze_fn(const Tensor& t, py::handle dim, py::handle axis) {
  py::handle d = dim_or_axis(dim, axis, "squeeze");
  if (d.is_none()) return squeeze(t, std::nullopt);
  return squeeze_dims(t, dims_arg(d, "squeeze"));
}

// flatten copies when the strides do not allow a view.
Tensor flatten_fn(const Tensor& t, int64_t start, int64_t end) {
  return gil_free_if(big(t), [&] { return flatten(t, start, end); });
}

// expand(*shape): new dims lead; -1 keeps the existing size of a dim.
Tensor expand_fn(const Tensor& t, const py::args& shape) {
  Shape s = shape_args(shape, "expand");
  if (int64_t(s.size()) < t.ndim())
    throw_shape_mismatch("expand", t.shape(), s, "the target has fewer dims than the tensor");
  size_t lead = s.size() - size_t(t.ndim());
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == -1) {
      if (i < lead) throw_invalid("expand", "-1 is not allowed for a new leading dim");
      s[i] = t.shape()[i - lead];
    }
  return broadcast_to(t, s);
}

std::vector<Tensor> tensor_list(py::handle seq, const char* op) {
  if (!PyList_Check(seq.ptr()) && !PyTuple_Check(seq.ptr()))
    throw_invalid_type(op, "expects a list or tuple of tensors", Py_TYPE(seq.ptr())->tp_name);
  std::vector<Tensor> ts;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(seq)) {
    if (!is_tensor(item))
      throw_invalid_type(op, "every item must be a Tensor", Py_TYPE(item.ptr())->tp_name);
    ts.push_back(item.cast<Tensor>());
  }
  return ts;
}

// dim=None is 0, PyTorch's default; None lets axis= be told apart from a dim given.
template <bool stacked>
Tensor join_fn(py::handle seq, py::handle dim_in, py::handle axis) {
  const char* name = stacked ? "stack" : "cat";
  std::vector<Tensor> ts = tensor_list(seq, name);
  py::handle d = dim_or_axis(dim_in, axis, name);
  const int64_t dim = d.is_none() ? 0 : int_arg(d, name);
  int64_t total = 0;
  for (const Tensor& t : ts) total += t.numel();
  return gil_free_if(total >= kReleaseGilNumel,
                     [&] { return stacked ? stack(ts, dim) : cat(ts, dim); });
}

void bind_shape(py::module_& m, py::class_<Tensor>& cls) {
  def_op(m, cls, "reshape", &reshape_fn);
  def_op(m, cls, "view",
         [](const Tensor& t, const py::args& shape) { return view(t, shape_args(shape, "view")); });
  def_op(
      m, cls, "transpose",
      [](const Tensor& t, int64_t d0, int64_t d1) { return transpose(t, d0, d1); }, py::arg("dim0"),
      py::arg("dim1"));
  def_op(m, cls, "permute", [](const Tensor& t, const py::args& dims) {
    return permute(t, shape_args(dims, "permute"));
  });
  def_op(m, cls, "t", &t_fn);
  def_op(m, cls, "narrow", &narrow, py::arg("dim"), py::arg("start"), py::arg("length"));
  def_op(m, cls, "squeeze", &squeeze_fn, py::arg("dim") = py::none(), py::kw_only(),
         py::arg("axis") = py::none());
  def_op(m, cls, "unsqueeze", &unsqueeze, py::arg("dim"));
  def_op(m, cls, "flatten", &flatten_fn, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  def_op(m, cls, "broadcast_to", [](const Tensor& t, const py::args& shape) {
    return broadcast_to(t, shape_args(shape, "broadcast_to"));
  });
  def_op(m, cls, "expand", &expand_fn);
  m.def("cat", &join_fn<false>, py::arg("tensors"), py::arg("dim") = py::none(), py::kw_only(),
        py::arg("axis") = py::none());
  m.def("stack", &join_fn<true>, py::arg("tensors"), py::arg("dim") = py::none(), py::kw_only(),
        py::arg("axis") = py::none());
  m.def(
      "contiguous",
      [](const Tensor& t) { return gil_free_if(big(t), [&] { return contiguous(t); }); },
      py::arg("input"));
  m.def(
      "clone", [](const Tensor& t) { return gil_free_if(big(t), [&] { return clone(t); }); },
      py::arg("input"));
}

// ---- indexing

template <bool gathered>
Tensor take_fn(const Tensor& t, int64_t dim, py::handle ids) {
  Tensor i = index_arg(ids, t);
  return gil_free_if(big(t) || big(i),
                     [&] { return gathered ? gather(t, dim, i) : index_select(t, dim, i); });
}

void bind_indexing(py::module_& m, py::class_<Tensor>& cls) {
  def_op(m, cls, "index_select", &take_fn<false>, py::arg("dim"), py::arg("index"));
  def_op(m, cls, "gather", &take_fn<true>, py::arg("dim"), py::arg("index"));
}

// ---- creation

DType dtype_or(py::handle dtype, DType fallback) {
  return dtype.is_none() ? fallback : dtype_arg(dtype);
}

// Creates with the GIL released when the shape is large (counted in double: no overflow).
// requires_grad= of a creation function: the new tensor as a leaf that requires grad.
Tensor leaf(Tensor t, py::handle requires_grad, const char* op) {
  if (requires_grad.ptr() == Py_False) return t;
  if (!PyBool_Check(requires_grad.ptr()))
    throw_invalid_type(op, "requires_grad must be True or False",
                       Py_TYPE(requires_grad.ptr())->tp_name);
  autograd::set_requires_grad(t, true);
  return t;
}

template <typename Fn>
Tensor create(const Shape& shape, Fn&& fn) {
  double n = 1;
  for (int64_t d : shape) n *= d > 0 ? double(d) : 0.0;
  return gil_free_if(n >= double(kReleaseGilNumel), fn);
}

Tensor zeros_fn(const py::args& shape, py::handle dtype, py::handle device, py::handle rg) {
  Shape s = shape_args(shape, "zeros");
  DType dt = dtype_or(dtype, DType::F32);
  DevicePtr dev = device_arg(device);
  return leaf(create(s, [&] { return zeros(s, dt, dev); }), rg, "zeros");
}

// Uninitialised memory, as torch.empty: for results an op will write in full (out=).
Tensor empty_fn(const py::args& shape, py::handle dtype, py::handle device, py::handle rg) {
  Shape s = shape_args(shape, "empty");
  DType dt = dtype_or(dtype, DType::F32);
  DevicePtr dev = device_arg(device);
  return leaf(empty(s, dt, dev), rg, "empty");
}

Tensor ones_fn(const py::args& shape, py::handle dtype, py::handle device, py::handle rg) {
  Shape s = shape_args(shape, "ones");
  DType dt = dtype_or(dtype, DType::F32);
  DevicePtr dev = device_arg(device);
  return leaf(create(s, [&] { return ones(s, dt, dev); }), rg, "ones");
}

// full() for a Python number: integers into integer dtypes exactly, also past 2**53.
Tensor full_number(const char* op, const Shape& s, py::handle value, DType dt,
                   const DevicePtr& dev) {
  Number n = read_number(value);
  if (n.kind == Number::None)
    throw_invalid_type(op, "the fill value must be a number", Py_TYPE(value.ptr())->tp_name);
  if (n.kind == Number::Int && !dtype_is_float(dt))
    return create(s, [&] { return full_int(s, n.i, dt, dev); });
  if (n.kind == Number::BigInt && !dtype_is_float(dt))
    throw_invalid(op, "the fill value " + py::repr(value).cast<std::string>() +
                          " is out of range for dtype " + dtype_name(dt));
  check_fill_value(op, n.f, dt);
  return create(s, [&] { return full(s, n.f, dt, dev); });
}

Tensor full_fn(py::handle shape, py::handle value, py::handle dtype, py::handle device,
               py::handle rg) {
  Shape s = shape_arg(shape, "full");
  return leaf(full_number("full", s, value, dtype_or(dtype, DType::F32), device_arg(device)), rg,
              "full");
}

template <bool normal>
Tensor random_fn(const py::args& shape, py::handle dtype, py::handle device, py::handle rg) {
  Shape s = shape_args(shape, normal ? "randn" : "rand");
  DType dt = dtype_or(dtype, DType::F32);
  DevicePtr dev = device_arg(device);
  return leaf(create(s, [&] { return normal ? randn(s, 0, 1, dt, dev) : rand(s, 0, 1, dt, dev); }),
              rg, normal ? "randn" : "rand");
}

// arange(stop) / arange(start, stop, step=1): all ints -> int64, any float -> float32.
Tensor arange_fn(py::handle a, py::handle b, py::handle step, py::handle dtype, py::handle device,
                 py::handle rg) {
  const Number zero{Number::Int, 0, 0.0}, one{Number::Int, 1, 1.0};
  Number start = b.is_none() ? zero : read_number(a);
  Number stop = read_number(b.is_none() ? a : b);
  Number by = step.is_none() ? one : read_number(step);
  bool any_float = false;
  for (const Number* n : {&start, &stop, &by}) {
    if (n->kind == Number::None)
      throw Error(ErrorKind::InvalidType, "arange: start, stop and step must be numbers")
          .with("op", std::string("arange"));
    any_float |= n->kind == Number::Float;
  }
  DType dt = dtype_or(dtype, any_float ? DType::F32 : DType::I64);
  DevicePtr dev = device_arg(device);
  return leaf(arange(start.f, stop.f, by.f, dt, dev), rg, "arange");
}

Tensor eye_fn(int64_t n, std::optional<int64_t> m, py::handle dtype, py::handle device,
              py::handle rg) {
  DType dt = dtype_or(dtype, DType::F32);
  DevicePtr dev = device_arg(device);
  return leaf(eye(n, m.value_or(n), dt, dev), rg, "eye");
}

// *_like: t's shape, and t's dtype and device unless given.
struct Like {
  Shape shape;
  DType dtype;
  DevicePtr device;
};

Like like(const Tensor& t, py::handle dtype, py::handle device) {
  return {t.shape(), dtype_or(dtype, t.dtype()),
          device.is_none() ? t.device() : device_arg(device)};
}

void bind_creation_like(py::module_& m) {
  auto dtype = py::arg("dtype") = py::none();
  auto device = py::arg("device") = py::none();
  auto rg = py::arg("requires_grad") = false;
  m.def(
      "zeros_like",
      [](const Tensor& t, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(create(l.shape, [&] { return zeros(l.shape, l.dtype, l.device); }), rg, "zeros_like");
      },
      py::arg("input"), dtype, device, rg);
  m.def(
      "empty_like",
      [](const Tensor& t, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(empty(l.shape, l.dtype, l.device, "empty_like"), rg, "empty_like");
      },
      py::arg("input"), dtype, device, rg);
  m.def(
      "ones_like",
      [](const Tensor& t, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(create(l.shape, [&] { return ones(l.shape, l.dtype, l.device); }), rg, "ones_like");
      },
      py::arg("input"), dtype, device, rg);
  m.def(
      "full_like",
      [](const Tensor& t, py::handle value, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(full_number("full_like", l.shape, value, l.dtype, l.device), rg, "full_like");
      },
      py::arg("input"), py::arg("fill_value"), dtype, device, rg);
  m.def(
      "rand_like",
      [](const Tensor& t, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(create(l.shape, [&] { return rand(l.shape, 0, 1, l.dtype, l.device); }), rg, "rand_like");
      },
      py::arg("input"), dtype, device, rg);
  m.def(
      "randn_like",
      [](const Tensor& t, py::handle dt, py::handle dev, py::handle rg) {
        Like l = like(t, dt, dev);
        return leaf(create(l.shape, [&] { return randn(l.shape, 0, 1, l.dtype, l.device); }), rg, "randn_like");
      },
      py::arg("input"), dtype, device, rg);
}

void bind_creation(py::module_& m) {
  auto dtype = py::arg("dtype") = py::none();
  auto device = py::arg("device") = py::none();
  auto rg = py::arg("requires_grad") = false;
  m.def("zeros", &zeros_fn, dtype, device, rg,
        "zeros(*shape, dtype=None, device=None, requires_grad=False)");
  m.def("ones", &ones_fn, dtype, device, rg,
        "ones(*shape, dtype=None, device=None, requires_grad=False)");
  m.def("empty", &empty_fn, dtype, device, rg,
        "empty(*shape, dtype=None, device=None, requires_grad=False): uninitialised values");
  m.def("full", &full_fn, py::arg("shape"), py::arg("fill_value"), dtype, device, rg);
  m.def("rand", &random_fn<false>, dtype, device, rg, "Uniform in [0, 1): rand(*shape, ...)");
  m.def("randn", &random_fn<true>, dtype, device, rg, "Standard normal: randn(*shape, ...)");
  m.def("arange", &arange_fn, py::arg("start"), py::arg("stop") = py::none(),
        py::arg("step") = py::none(), dtype, device, rg);
  m.def("eye", &eye_fn, py::arg("n"), py::arg("m") = py::none(), dtype, device, rg);
  bind_creation_like(m);
}

}  // namespace

// The op table as data, for ember's exports and the table-driven tests:
// [(family, name, dtype class, bound by hand)].
py::list op_table_rows() {
  py::list rows;
  for (const OpRow& r : op_table())
    rows.append(py::make_tuple(r.family, r.name, op_class_name(r.cls), r.has_params));
  return rows;
}

void bind_ops(py::module_& m, py::class_<Tensor>& cls) {
  m.def("_op_table", &op_table_rows);
  bind_elementwise_binary(m, cls);
  bind_unary(m, cls);
  bind_reductions(m, cls);
  bind_sort(m, cls);
  bind_shape(m, cls);
  bind_indexing(m, cls);
  bind_scatter(m, cls);
  bind_creation(m);
}

}  // namespace ember::python
