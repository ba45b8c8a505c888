// t[key] and t[key] = value: each part of a Python key becomes core's IndexItem (ints,
// slices, None, ..., Python bools, and index arrays from tensors, lists and numpy arrays);
// core (core/indexing.h) applies numpy's rules, for every backend.
#include <pybind11/numpy.h>

#include <string>

#include "bindings.h"
#include "core/derivatives.h"
#include "core/indexing.h"

namespace ember::python {

namespace {

using Kind = IndexItem::Kind;

// A key that is no index at all: IndexError-class, as in numpy and PyTorch.
[[noreturn]] void invalid_key(const std::string& why) {
  throw Error(ErrorKind::InvalidIndex, "index: " + why).with("op", std::string("index"));
}

// An index array from a key item: a list that holds no numbers (t[[0, 'a']]) is a key
// that cannot index, as in numpy and PyTorch, not a bad tensor value.
Tensor key_array(py::handle obj, const Tensor& t) {
  try {
    return index_arg(obj, t);
  } catch (py::error_already_set& e) {
    py::module_ ember = py::module_::import("ember");
    if (!e.matches(ember.attr("InvalidArgumentError")) && !e.matches(ember.attr("InvalidTypeError")))
      throw;
    invalid_key("index arrays hold integers or bools; " + py::str(e.value()).cast<std::string>());
  }
}

// One part of a key as core reads it.
IndexItem key_item(py::handle o, const Tensor& t) {
  PyObject* p = o.ptr();
  IndexItem item;
  if (p == Py_None) return item;  // NewAxis
  if (p == Py_Ellipsis) {
    item.kind = Kind::Ellipsis;
    return item;
  }
  if (PyBool_Check(p)) {  // a 0-d mask known here, no tensor needed
    item.kind = Kind::Bool;
    item.value = p == Py_True;
    return item;
  }
  if (PySlice_Check(p)) {
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(p, &start, &stop, &step) < 0) {
      bool wrong_type = PyErr_ExceptionMatches(PyExc_TypeError);  // 1:2.5; else a bad value
      std::string why = py::error_already_set().what();           // fetches and clears it
      throw Error(wrong_type ? ErrorKind::InvalidType : ErrorKind::InvalidArgument,
                  "index: bad slice: " + why)
          .with("op", std::string("index"));
    }
    item.kind = Kind::Slice;
    item.start = start;
    item.stop = stop;
    item.step = step;
    return item;
  }
  if (is_tensor(o) || PyList_Check(p) || py::isinstance<py::array>(o)) {
    item.kind = Kind::Array;
    item.array = key_array(o, t);
    return item;
  }
  if (PyLong_Check(p) || (!PyFloat_Check(p) && PyIndex_Check(p))) {
    item.kind = Kind::Int;
    auto index = py::reinterpret_steal<py::object>(PyNumber_Index(p));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    item.value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow) item.too_big = py::repr(o).cast<std::string>();  // out of range anywhere
    return item;
  }
  invalid_key(std::string("only integers, slices, None, ..., and integer or bool tensors or lists "
                          "are valid indices, not ") +
              Py_TYPE(p)->tp_name);
}

IndexKey index_key(py::handle key, const Tensor& t) {
  IndexKey out;
  if (PyTuple_Check(key.ptr()))
    for (py::handle item : py::reinterpret_borrow<py::tuple>(key)) out.push_back(key_item(item, t));
  else
    out.push_back(key_item(key, t));
  return out;
}

// The value of t[key] = value as a tensor on the view's device.
Tensor assigned_value(const Tensor& view, py::handle value) {
  if (is_tensor(value)) return value.cast<Tensor>();
  Number n = read_number(value);
  if (n.kind != Number::None) {
    bool promote = n.kind == Number::Float && !dtype_is_float(view.dtype());
    // NaN, inf or a float out of range has no integer value (numpy and PyTorch refuse it).
    if (promote) check_fill_value("setitem", n.f, view.dtype());
    return number_tensor(n, promote ? DType::F32 : view.dtype(), view.device(), "setitem");
  }
  py::object made = py::module_::import("ember").attr("tensor")(
      value, py::arg("dtype") = dtype_object(view.dtype()), py::arg("device") = view.device());
  return made.cast<Tensor>();
}

Tensor get_item(const Tensor& t, py::handle key) {
  const IndexKey k = index_key(key, t);
  return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return index(t, k); });
}

void set_item(py::object self, py::handle key, py::handle value) {
  const Tensor& t = self.cast<const Tensor&>();
  const IndexKey k = index_key(key, t);
  const ResolvedIndex r = [&] {
    autograd::GradMode off(false);  // the views a write goes through need no history
    return resolve_index(t, k);
  }();
  if (r.mask) check_writable("setitem", r.view);  // before the value is made, as numpy
  const Tensor src = assigned_value(r.view, value);
  if (autograd::wants_grad({&t, &src})) {  // recorded as t = index_put(t, key, src)
    const Tensor out = gil_free_if(t.numel() >= kReleaseGilNumel, [&] {
      return autograd::assign_with(
          "setitem", t, [&](const Tensor& x) { return autograd::d::index_put(x, k, src); }, false);
    });
    autograd::adopt(self.cast<Tensor&>(), out);
    return;
  }
  gil_free_if(t.numel() >= kReleaseGilNumel, [&] { write_index(r, src); });
}

}  // namespace

void bind_index(py::class_<Tensor>& cls) {
  cls.def("__getitem__", &get_item);
  cls.def("__setitem__", &set_item);
}

}  // namespace ember::python
