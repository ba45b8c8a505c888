// Python values as op arguments: ints, shapes, dims, and numbers used as operands.
// A bad value raises InvalidArgumentError naming the op, a wrong type InvalidTypeError.
#include <pybind11/gil_safe_call_once.h>

#include <cmath>
#include <string>

#include "bindings.h"

namespace ember::python {

namespace {

[[noreturn]] void throw_bad(const char* op, const std::string& what, py::handle obj) {
  throw_invalid_type(op, what, Py_TYPE(obj.ptr())->tp_name);
}

PyObject* tensor_type() {
  static PyObject* type = py::type::of<Tensor>().ptr();  // registered before any call
  return type;
}

// numpy's scalar types, to accept np.float32(2) and friends as numbers, and ndarray,
// which an operand reads as a CPU tensor.
struct NumpyScalarTypes {
  py::object generic, boolean, integer, floating, ndarray;
};

const NumpyScalarTypes& numpy_scalars() {
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<NumpyScalarTypes> storage;
  return storage
      .call_once_and_store_result([] {
        py::module_ np = py::module_::import("numpy");
        return NumpyScalarTypes{np.attr("generic"), np.attr("bool_"), np.attr("integer"),
                                np.attr("floating"), np.attr("ndarray")};
      })
      .get_stored();
}

// isinstance that never leaves a Python error behind (an odd __class__ can raise).
bool is_instance(PyObject* o, PyObject* type) {
  int r = PyObject_IsInstance(o, type);
  if (r < 0) PyErr_Clear();
  return r == 1;
}

Number read_int(PyObject* o) {
  Number n;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) {
    n.kind = Number::BigInt;
    n.f = PyLong_AsDouble(o);
    if (PyErr_Occurred()) {  // beyond double's range too
      PyErr_Clear();
      n.f = overflow > 0 ? HUGE_VAL : -HUGE_VAL;
    }
    return n;
  }
  n.kind = Number::Int;
  n.i = v;
  n.f = double(v);
  return n;
}


Number read_numpy_scalar(PyObject* o) {
  const NumpyScalarTypes& np = numpy_scalars();
  py::object item;
  if (is_ndarray(o)) {  // a 0-d array is read as its scalar (numpy's arr[()])
    auto arr = py::reinterpret_borrow<py::object>(o);
    if (arr.attr("ndim").cast<int>() != 0) return {};
    item = arr[py::tuple()];
    o = item.ptr();
  }
  Number n;
  if (is_instance(o, np.boolean.ptr())) {
    n.kind = Number::Int;
    n.i = PyObject_IsTrue(o) == 1;
    n.f = double(n.i);
    n.is_bool = true;
  } else if (is_instance(o, np.integer.ptr())) {
    auto index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!index) throw py::error_already_set();
    n = read_int(index.ptr());
  } else if (is_instance(o, np.floating.ptr())) {
    n.kind = Number::Float;
    n.f = PyFloat_AsDouble(o);
    if (PyErr_Occurred()) throw py::error_already_set();
  }
  return n;
}

bool fits(const Number& n, DType dtype) {
  if (n.kind != Number::Int) return false;
  switch (dtype) {
    case DType::U32: return n.i >= 0 && n.i <= int64_t(UINT32_MAX);
    case DType::I32: return n.i >= INT32_MIN && n.i <= INT32_MAX;
    case DType::U8: return n.i >= 0 && n.i <= 255;
    case DType::Bool: return true;  // any integer is true or false, as bool(n)
    default: return true;
  }
}

}  // namespace

bool is_ndarray(PyObject* o) {
  return is_instance(o, numpy_scalars().ndarray.ptr());
}

bool is_tensor(py::handle obj) {
  PyObject* type = tensor_type();
  return Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(type) ||
         is_instance(obj.ptr(), type);
}

int64_t int_arg(py::handle obj, const char* op) {
  PyObject* o = obj.ptr();
  if (!PyLong_Check(o) && (PyFloat_Check(o) || !PyIndex_Check(o)))
    throw_bad(op, "expected an integer", obj);
  auto index = py::reinterpret_steal<py::object>(PyNumber_Index(o));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow)
    throw_invalid(op,
                  "the integer " + py::repr(obj).cast<std::string>() + " does not fit in 64 bits");
  return v;
}

Shape shape_arg(py::handle obj, const char* op) {
  PyObject* o = obj.ptr();
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) return {int_arg(obj, op)};
  if (!PyTuple_Check(o) && !PyList_Check(o))
    throw_bad(op, "expected a shape (ints, or a tuple or list of ints)", obj);
  Shape shape;
  for (py::handle item : py::reinterpret_borrow<py::sequence>(obj))
    shape.push_back(int_arg(item, op));
  return shape;
}

Shape shape_args(const py::args& args, const char* op) {
  if (args.size() == 1) return shape_arg(args[0], op);
  Shape shape;
  for (py::handle item : args) shape.push_back(int_arg(item, op));
  return shape;
}

Dims dims_arg(py::handle obj, const char* op) {
  if (obj.is_none()) return {};
  return shape_arg(obj, op);  // the same rules: an int or a tuple/list of ints
}

py::handle dim_or_axis(py::handle dim, py::handle axis, const char* op) {
  if (axis.is_none()) return dim;
  if (!dim.is_none())
    throw_invalid(op, "got both dim= and axis= (axis is numpy's name for dim); pass one");
  return axis;
}

int64_t one_dim(py::handle dim, py::handle axis, int64_t fallback, const char* op) {
  py::handle d = dim_or_axis(dim, axis, op);
  return d.is_none() ? fallback : int_arg(d, op);
}

// keepdims= is numpy's name for keepdim= (PyTorch takes it too).
bool keepdim_or_keepdims(bool keepdim, py::handle keepdims, const char* op) {
  if (keepdims.is_none()) return keepdim;
  if (keepdim)
    throw_invalid(op, "got both keepdim= and keepdims= (numpy's name for keepdim); pass one");
  return PyObject_IsTrue(keepdims.ptr()) == 1;
}

Number read_number(py::handle obj) {
  PyObject* o = obj.ptr();
  if (PyFloat_Check(o)) {
    Number n;
    n.kind = Number::Float;
    n.f = PyFloat_AS_DOUBLE(o);
    return n;
  }
  if (PyBool_Check(o)) {
    Number n = read_int(o);
    n.is_bool = true;
    return n;
  }
  if (PyLong_Check(o)) return read_int(o);
  if (PyUnicode_Check(o) || o == Py_None) return {};
  return read_numpy_scalar(o);
}

Tensor number_tensor(const Number& n, DType dtype, const DevicePtr& device, const char* op) {
  if (dtype_is_float(dtype)) return full({}, n.f, dtype, device);
  if (n.kind == Number::Float)
    throw_invalid(op, std::string("a Python float needs a float tensor, not ") + dtype_name(dtype));
  if (!fits(n, dtype))
    throw_invalid(op, (n.kind == Number::Int ? "the Python integer " + std::to_string(n.i)
                                             : std::string("a Python integer")) +
                          " is out of range for dtype " + dtype_name(dtype));
  // Past 2**53 a double would round the value: copy the exact int64 instead.
  if (n.i > (int64_t(1) << 53) || n.i < -(int64_t(1) << 53))
    return from_host(&n.i, {}, DType::I64, device);
  return full({}, double(n.i), dtype, device);
}

std::optional<std::pair<Tensor, Tensor>> operands(const Tensor& t, py::handle other,
                                                  bool other_left, const char* op) {
  if (is_tensor(other)) {
    const Tensor& o = other.cast<const Tensor&>();
    return other_left ? std::make_pair(o, t) : std::make_pair(t, o);
  }
  Number n = read_number(other);
  if (n.kind == Number::None) {
    if (!is_ndarray(other.ptr())) return std::nullopt;
    // An ndarray is the CPU tensor ember.tensor makes of it: with a GPU tensor the op
    // raises DeviceMismatchError rather than copying either side.
    Tensor arr = py::module_::import("ember").attr("tensor")(other).cast<Tensor>();
    return other_left ? std::make_pair(arr, t) : std::make_pair(t, arr);
  }
  // PyTorch's scalar rule: a number lifts only the category (bool < integer < float),
  // into its default dtype: a float gives float32, an int with a bool tensor int64.
  DType lifted = t.dtype();
  if (n.kind == Number::Float && !dtype_is_float(t.dtype()))
    lifted = DType::F32;
  else if (t.dtype() == DType::Bool && !n.is_bool)
    lifted = DType::I64;
  Tensor base = lifted == t.dtype() ? t : gil_free_if(t.numel() >= kReleaseGilNumel, [&] {
    return to_dtype(t, lifted);
  });
  Tensor scalar = number_tensor(n, base.dtype(), base.device(), op);
  return other_left ? std::make_pair(scalar, base) : std::make_pair(base, scalar);
}

std::optional<Tensor> number_operand(BinaryOp op, const Tensor& t, py::handle other,
                                     bool other_left) {
  if (t.dtype() != DType::F32 && t.dtype() != DType::F64) return std::nullopt;  // cheap first
  const Number n = read_number(other);
  if (n.kind != Number::Float && n.kind != Number::Int) return std::nullopt;
  return gil_free_if(t.numel() >= kReleaseGilNumel,
                     [&] { return binary_number(op, t, n.f, other_left); });
}

// An int in a (nested) list of ids that no int64 holds: no tensor has such a position.
void check_list_ids(py::handle ids) {
  PyObject* p = ids.ptr();
  if (PyList_Check(p) || PyTuple_Check(p)) {
    for (py::handle item : py::reinterpret_borrow<py::sequence>(ids)) check_list_ids(item);
    return;
  }
  if (!PyLong_Check(p) || PyBool_Check(p)) return;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(p, &overflow);
  if (overflow)
    throw Error(ErrorKind::IndexOutOfRange, "index: the index " + py::repr(ids).cast<std::string>() +
                                                " is out of range: positions are int64")
        .with("op", std::string("index"));
}

Tensor index_arg(py::handle ids, const Tensor& t) {
  if (is_tensor(ids)) return ids.cast<Tensor>();
  check_list_ids(ids);
  // Lists and arrays go through ember.tensor (ints become int64) onto t's device.
  py::object made =
      py::module_::import("ember").attr("tensor")(ids, py::arg("device") = t.device());
  Tensor out = made.cast<Tensor>();
  // An empty list reads as float32; as indices it means "no indices".
  return out.numel() == 0 && dtype_is_float(out.dtype()) ? to_dtype(out, DType::I64) : out;
}

}  // namespace ember::python
