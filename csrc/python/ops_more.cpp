// Bindings of the composed ops: flip, roll, repeat, tile, chunk, split, pad, linspace,
// tril, triu, meshgrid, masked_fill, isclose, allclose, elu, var, std, prod,
// logsumexp and norm, with PyTorch's signatures.
#include <pybind11/stl.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/autograd.h"

namespace ember::python {

namespace {

py::tuple tensor_tuple(const std::vector<Tensor>& ts) {
  py::tuple out(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) out[i] = py::cast(ts[i]);
  return out;
}

// Registers `fn` as ember.name(input, ...) and as the Tensor method.
template <typename Fn, typename... Extra>
void def_both(py::module_& m, py::class_<Tensor>& cls, const char* name, Fn&& fn,
              const Extra&... extra) {
  cls.def(name, fn, extra...);
  m.def(name, fn, py::arg("input"), extra...);
}

// ---- shape

// t.flip(0, 1), t.flip((0, 1)); ember.flip(t, dims)
Tensor flip_method(const Tensor& t, const py::args& dims, py::handle axis) {
  if (!axis.is_none() && dims.size() > 0)
    throw_invalid("flip", "got both dims and axis= (axis is numpy's name for dims); pass one");
  Dims d = axis.is_none() ? shape_args(dims, "flip") : shape_arg(axis, "flip");
  return gil_free_if(big(t), [&] { return flip(t, d); });
}
Tensor flip_fn(const Tensor& t, py::handle dims, py::handle axis) {
  if (dims.is_none() && axis.is_none())
    throw_invalid("flip", "needs the dims to flip: flip(t, dims)");
  if (!dims.is_none() && !axis.is_none())
    throw_invalid("flip", "got both dims and axis= (axis is numpy's name for dims); pass one");
  Dims d = shape_arg(axis.is_none() ? dims : axis, "flip");
  return gil_free_if(big(t), [&] { return flip(t, d); });
}

Tensor roll_fn(const Tensor& t, py::handle shifts, py::handle dims, py::handle axis) {
  if (!dims.is_none() && !axis.is_none())
    throw_invalid("roll", "got both dims and axis= (axis is numpy's name for dims); pass one");
  Dims s = shape_arg(shifts, "roll"), d = dims_arg(axis.is_none() ? dims : axis, "roll");
  return gil_free_if(big(t), [&] { return roll(t, s, d); });
}

Tensor repeat_method(const Tensor& t, const py::args& sizes) {
  Shape s = shape_args(sizes, "repeat");
  return gil_free_if(big(t), [&] { return repeat(t, s); });
}

Tensor tile_method(const Tensor& t, const py::args& reps) {
  Shape r = shape_args(reps, "tile");
  return gil_free_if(big(t), [&] { return tile(t, r); });
}
Tensor tile_fn(const Tensor& t, py::handle reps) {
  Shape r = shape_arg(reps, "tile");
  return gil_free_if(big(t), [&] { return tile(t, r); });
}

py::tuple chunk_fn(const Tensor& t, py::handle chunks, py::handle dim, py::handle axis) {
  return tensor_tuple(chunk(t, int_arg(chunks, "chunk"), one_dim(dim, axis, 0, "chunk")));
}

// split(int) gives parts of that size; split(list) parts of the listed sizes.
py::tuple split_fn(const Tensor& t, py::handle sizes, py::handle dim_in, py::handle axis) {
  const int64_t dim = one_dim(dim_in, axis, 0, "split");
  PyObject* o = sizes.ptr();
  if (PyList_Check(o) || PyTuple_Check(o))
    return tensor_tuple(split_sizes(t, shape_arg(sizes, "split"), dim));
  return tensor_tuple(split(t, int_arg(sizes, "split"), dim));
}

PadMode pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "replicate") return PadMode::Replicate;
  if (mode == "circular") return PadMode::Circular;
  throw_invalid(
      "pad", "mode must be 'constant', 'reflect', 'replicate' or 'circular', got '" + mode + "'");
}

Tensor pad_fn(const Tensor& t, py::handle pads, const std::string& mode, py::handle value) {
  Shape p = shape_arg(pads, "pad");
  PadMode pm = pad_mode(mode);
  double v = 0;
  if (!value.is_none()) {
    Number n = read_number(value);
    if (n.kind == Number::None)
      throw_invalid_type("pad", "the value must be a number", Py_TYPE(value.ptr())->tp_name);
    v = n.f;
  }
  return gil_free_if(big(t), [&] { return pad(t, p, pm, v); });
}

void bind_shape_more(py::module_& m, py::class_<Tensor>& cls) {
  auto axis = py::arg("axis") = py::none();  // numpy's name for dim / dims
  auto dim = py::arg("dim") = py::none();    // 0 when None
  cls.def("flip", &flip_method, axis);
  m.def("flip", &flip_fn, py::arg("input"), py::arg("dims") = py::none(), py::kw_only(), axis);
  def_both(m, cls, "roll", &roll_fn, py::arg("shifts"), py::arg("dims") = py::none(), py::kw_only(),
           axis);
  cls.def("repeat", &repeat_method);  // PyTorch has no torch.repeat function
  cls.def("tile", &tile_method);
  m.def("tile", &tile_fn, py::arg("input"), py::arg("dims"));
  def_both(m, cls, "chunk", &chunk_fn, py::arg("chunks"), dim, py::kw_only(), axis);
  cls.def("split", &split_fn, py::arg("split_size"), dim, py::kw_only(), axis);
  m.def("split", &split_fn, py::arg("tensor"), py::arg("split_size_or_sections"), dim,
        py::kw_only(), axis);
  m.def("pad", &pad_fn, py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
        py::arg("value") = py::none(),
        "torch.nn.functional.pad: (left, right) pairs from the last dim backwards");
}

// ---- creation

Tensor linspace_fn(py::handle start, py::handle end, py::handle steps, py::handle dtype,
                   py::handle device) {
  Number a = read_number(start), b = read_number(end);
  if (a.kind == Number::None || b.kind == Number::None)
    throw Error(ErrorKind::InvalidType, "linspace: start and end must be numbers")
        .with("op", std::string("linspace"));
  int64_t n = int_arg(steps, "linspace");
  DType dt = dtype.is_none() ? DType::F32 : dtype_arg(dtype);
  return linspace(a.f, b.f, n, dt, device_arg(device));
}

// meshgrid(a, b) or meshgrid([a, b])
py::tuple meshgrid_fn(const py::args& args, const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy")
    throw_invalid("meshgrid", "indexing must be 'ij' or 'xy', got '" + indexing + "'");
  py::sequence seq = py::reinterpret_borrow<py::sequence>(args);
  if (args.size() == 1 && (PyList_Check(args[0].ptr()) || PyTuple_Check(args[0].ptr())))
    seq = py::reinterpret_borrow<py::sequence>(args[0]);
  std::vector<Tensor> ts;
  for (py::handle item : seq) {
    if (!is_tensor(item))
      throw_invalid_type("meshgrid", "every argument must be a Tensor",
                         Py_TYPE(item.ptr())->tp_name);
    ts.push_back(item.cast<Tensor>());
  }
  return tensor_tuple(meshgrid(ts, indexing == "xy"));
}

void bind_creation_more(py::module_& m, py::class_<Tensor>& cls) {
  m.def("linspace", &linspace_fn, py::arg("start"), py::arg("end"), py::arg("steps"),
        py::arg("dtype") = py::none(), py::arg("device") = py::none());
  def_both(
      m, cls, "tril", [](const Tensor& t, int64_t k) { return tril(t, k); },
      py::arg("diagonal") = 0);
  def_both(
      m, cls, "triu", [](const Tensor& t, int64_t k) { return triu(t, k); },
      py::arg("diagonal") = 0);
  m.def("meshgrid", &meshgrid_fn, py::kw_only(), py::arg("indexing") = "ij");
}

// ---- elementwise

// The fill value as a 0-d tensor of t's dtype: a float into an integer tensor is
// truncated, as PyTorch's Scalar conversion does, unless it overflows.
Tensor fill_value(const Tensor& t, py::handle value) {
  if (is_tensor(value)) return value.cast<Tensor>();
  Number n = read_number(value);
  if (n.kind == Number::None)
    throw_invalid_type("masked_fill", "the value must be a number or a 0-d Tensor",
                       Py_TYPE(value.ptr())->tp_name);
  if (n.kind == Number::Float && !dtype_is_float(t.dtype())) {
    check_fill_value("masked_fill", n.f, t.dtype());
    return full({}, std::trunc(n.f), t.dtype(), t.device());
  }
  return number_tensor(n, t.dtype(), t.device(), "masked_fill");
}

Tensor masked_fill_fn(const Tensor& t, const Tensor& mask, py::handle value) {
  Tensor v = fill_value(t, value);
  return gil_free_if(big(t), [&] { return masked_fill(t, mask, v); });
}

// In place: the mask broadcasts to t's shape, never t to the mask's.
py::object masked_fill_inplace(py::object self, const Tensor& mask, py::handle value) {
  const Tensor& t = self.cast<const Tensor&>();
  Shape s = broadcast_shapes("masked_fill_", t.shape(), mask.shape());
  if (s != t.shape())
    throw_shape_mismatch("masked_fill_", t.shape(), mask.shape(),
                         "in place, the mask must broadcast to the tensor's shape");
  check_writable("masked_fill_", t);
  Tensor v = fill_value(t, value);
  if (autograd::wants_grad({&t, &v})) {  // recorded as t = masked_fill(t, mask, v)
    const Tensor r = gil_free_if(big(t), [&] {
      return autograd::assign_with("masked_fill_", t, [&](const Tensor& x) {
        return masked_fill(x, mask, v);
      }, false);
    });
    autograd::adopt(self.cast<Tensor&>(), r);
    return self;
  }
  gil_free_if(big(t), [&] { masked_fill_inplace(t, mask, v); });
  return self;  // the same Python object, as PyTorch's in-place ops
}

// ---- masks

py::object nonzero_fn(const Tensor& t, bool as_tuple) {
  if (!as_tuple) return py::cast(gil_free_if(big(t), [&] { return nonzero(t); }));
  std::vector<Tensor> cols = gil_free_if(big(t), [&] { return nonzero_tuple(t); });
  py::tuple out(cols.size());
  for (size_t i = 0; i < cols.size(); ++i) out[i] = py::cast(std::move(cols[i]));
  return std::move(out);
}

Tensor argwhere_fn(const Tensor& t) {
  return gil_free_if(big(t), [&] { return nonzero(t); });
}

Tensor count_nonzero_fn(const Tensor& t, py::handle dim) {
  Dims dims = dims_arg(dim, "count_nonzero");
  return gil_free_if(big(t), [&] { return count_nonzero(t, dims); });
}

Tensor masked_select_fn(const Tensor& t, const Tensor& mask) {
  return gil_free_if(big(t), [&] { return masked_select(t, mask); });
}

void bind_elementwise_more(py::module_& m, py::class_<Tensor>& cls) {
  def_both(m, cls, "nonzero", &nonzero_fn, py::kw_only(), py::arg("as_tuple") = false);
  def_both(m, cls, "argwhere", &argwhere_fn);
  def_both(m, cls, "count_nonzero", &count_nonzero_fn, py::arg("dim") = py::none());
  def_both(m, cls, "masked_select", &masked_select_fn, py::arg("mask"));
  def_both(m, cls, "masked_fill", &masked_fill_fn, py::arg("mask"), py::arg("value"));
  cls.def("masked_fill_", &masked_fill_inplace, py::arg("mask"), py::arg("value"));
  auto tolerances = [](auto fn) {
    return [fn](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
      return gil_free_if(big(a) || big(b), [&] { return fn(a, b, rtol, atol, equal_nan); });
    };
  };
  auto other = py::arg("other");
  auto rtol = py::arg("rtol") = 1e-05, atol = py::arg("atol") = 1e-08;
  auto equal_nan = py::arg("equal_nan").noconvert() = false;
  def_both(m, cls, "isclose", tolerances(&isclose), other, rtol, atol, equal_nan);
  def_both(m, cls, "allclose", tolerances(&allclose), other, rtol, atol, equal_nan);
  def_both(
      m, cls, "elu",
      [](const Tensor& t, double alpha) {
        return gil_free_if(big(t), [&] { return elu(t, alpha); });
      },
      py::arg("alpha") = 1.0);
}

// ---- reductions

// PyTorch's var/std arguments: correction=, or unbiased= (True: 1, False: 0), which may
// also come positionally in place of dim (t.var(False)).
double correction_arg(const char* op, py::handle& dim, py::handle unbiased, py::handle correction) {
  if (PyBool_Check(dim.ptr())) {
    if (!unbiased.is_none()) throw_invalid(op, "unbiased is given twice (as dim and as unbiased)");
    unbiased = dim;
    dim = py::none();
  }
  if (!unbiased.is_none() && !correction.is_none())
    throw_invalid(op, "give either unbiased or correction, not both");
  if (!unbiased.is_none()) {
    if (!PyBool_Check(unbiased.ptr()))
      throw_invalid_type(op, "unbiased must be a bool", Py_TYPE(unbiased.ptr())->tp_name);
    return unbiased.ptr() == Py_True ? 1.0 : 0.0;
  }
  if (correction.is_none()) return 1.0;
  Number n = read_number(correction);
  if (n.kind == Number::None)
    throw_invalid_type(op, "correction must be a number", Py_TYPE(correction.ptr())->tp_name);
  return n.f;
}

template <bool root>
Tensor var_fn(const Tensor& t, py::handle dim, py::handle unbiased, bool keepdim_in,
              py::handle correction, py::handle axis, py::handle keepdims) {
  const char* op = root ? "std" : "var";
  double c = correction_arg(op, dim, unbiased, correction);
  Dims dims = dims_arg(dim_or_axis(dim, axis, op), op);
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, op);
  return gil_free_if(
      big(t), [&] { return root ? std_dev(t, dims, c, keepdim) : var(t, dims, c, keepdim); });
}

template <Tensor (*fn)(const Tensor&, const Dims&, bool)>
Tensor dims_fn(const Tensor& t, py::handle dim, bool keepdim_in, py::handle axis,
               py::handle keepdims, const char* op) {
  Dims dims = dims_arg(dim_or_axis(dim, axis, op), op);
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, op);
  return gil_free_if(big(t), [&] { return fn(t, dims, keepdim); });
}

// p: a number, inf, -inf, or "fro" (the 2-norm).
double norm_p(py::handle p) {
  if (PyUnicode_Check(p.ptr())) {
    std::string s = p.cast<std::string>();
    if (s == "fro") return 2.0;
    throw_invalid("norm", "p must be a number, inf, -inf or 'fro', got '" + s +
                              "' (the nuclear norm is not implemented)");
  }
  Number n = read_number(p);
  if (n.kind == Number::None)
    throw_invalid_type("norm", "p must be a number or 'fro'", Py_TYPE(p.ptr())->tp_name);
  return n.f;
}

Tensor norm_fn(const Tensor& t, py::handle p, py::handle dim, bool keepdim_in, py::handle axis,
               py::handle keepdims) {
  double pv = norm_p(p);
  Dims dims = dims_arg(dim_or_axis(dim, axis, "norm"), "norm");
  const bool keepdim = keepdim_or_keepdims(keepdim_in, keepdims, "norm");
  return gil_free_if(big(t), [&] { return norm(t, pv, dims, keepdim); });
}

void bind_reduce_more(py::module_& m, py::class_<Tensor>& cls) {
  auto dim = py::arg("dim") = py::none();
  auto keepdim = py::arg("keepdim").noconvert() = false;
  auto unbiased = py::arg("unbiased") = py::none();
  auto correction = py::arg("correction") = py::none();
  // numpy's axis= and keepdims= too, as the other reductions (ops.cpp)
  auto axis = py::arg("axis") = py::none(), keepdims = py::arg("keepdims") = py::none();
  def_both(m, cls, "var", &var_fn<false>, dim, unbiased, keepdim, py::kw_only(), correction, axis,
           keepdims);
  def_both(m, cls, "std", &var_fn<true>, dim, unbiased, keepdim, py::kw_only(), correction, axis,
           keepdims);
  def_both(
      m, cls, "prod",
      [](const Tensor& t, py::handle d, bool k, py::handle a, py::handle ks) {
        return dims_fn<&prod>(t, d, k, a, ks, "prod");
      },
      dim, keepdim, py::kw_only(), axis, keepdims);
  def_both(
      m, cls, "logsumexp",
      [](const Tensor& t, py::handle d, bool k, py::handle a, py::handle ks) {
        return dims_fn<&logsumexp>(t, d, k, a, ks, "logsumexp");
      },
      dim, keepdim, py::kw_only(), axis, keepdims);
  def_both(m, cls, "norm", &norm_fn, py::arg("p") = "fro", dim, keepdim, py::kw_only(), axis,
           keepdims);
}

}  // namespace

void bind_ops_more(py::module_& m, py::class_<Tensor>& cls) {
  bind_shape_more(m, cls);
  bind_creation_more(m, cls);
  bind_elementwise_more(m, cls);
  bind_reduce_more(m, cls);
}

}  // namespace ember::python
