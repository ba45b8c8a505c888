// ember.DType: the nine element types as singleton module attributes, and the
// normalisation of whatever a user passes as a dtype (DType, numpy dtype, name).
#include <string>

#include "bindings.h"

namespace ember::python {

namespace {

// One Python object per dtype, so that `t.dtype is ember.float32` and pickling by
// name work. Owned for the life of the process (never released at exit).
PyObject* singletons[kNumDTypes] = {};

std::optional<DType> from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(DType(i))) return DType(i);
  if (name == "bf16") return DType::BF16;  // numpy has no bfloat16 to ask
  return std::nullopt;
}

std::string describe(py::handle obj) {
  try {
    return py::repr(obj).cast<std::string>();
  } catch (const std::exception&) {
    return std::string("an object of type ") + Py_TYPE(obj.ptr())->tp_name;
  }
}

[[noreturn]] void throw_not_dtype(const std::string& what) {
  throw Error(ErrorKind::InvalidType,
              "dtype: " + what +
                  " is not an ember dtype; use one of float32, float16, bfloat16, float64, "
                  "int64, int32, uint32, uint8, bool (or the numpy dtype / name of one)")
      .with("op", std::string("dtype"));
}

// Asks numpy what the object means ("f4", np.float32, float, np.dtype(...)).
DType via_numpy(py::handle obj) {
  py::object np_dtype;
  try {
    np_dtype = py::module_::import("numpy").attr("dtype")(obj);
  } catch (const py::error_already_set&) {
    throw_not_dtype(describe(obj));
  }
  std::string name = py::str(np_dtype.attr("name"));
  if (auto d = from_name(name)) return *d;
  throw_not_dtype("numpy's " + name);
}

py::object equals(DType d, py::handle other) {
  if (py::isinstance<DType>(other)) return py::bool_(d == other.cast<DType>());
  if (PyUnicode_Check(other.ptr())) {
    auto o = from_name(other.cast<std::string>());
    return py::bool_(o && *o == d);
  }
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

}  // namespace

py::object dtype_object(DType d) {
  return py::reinterpret_borrow<py::object>(singletons[int(d)]);
}

DType dtype_arg(py::handle obj) {
  if (py::isinstance<DType>(obj)) return obj.cast<DType>();
  if (PyUnicode_Check(obj.ptr()))
    if (auto d = from_name(obj.cast<std::string>())) return *d;
  if (obj.is_none()) throw_not_dtype("None");
  return via_numpy(obj);
}

std::optional<DType> optional_dtype(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return dtype_arg(obj);
}

void bind_dtype(py::module_& m) {
  py::class_<DType>(m, "DType", "An ember element type: float32, float16, bfloat16, ...")
      .def_property_readonly("name", [](DType d) { return dtype_name(d); })
      .def_property_readonly("itemsize", [](DType d) { return dtype_size(d); })
      .def_property_readonly("is_float", [](DType d) { return dtype_is_float(d); })
      .def("__str__", [](DType d) { return dtype_name(d); })
      .def("__repr__", [](DType d) { return std::string("ember.") + dtype_name(d); })
      // Hash as the name, since a DType also equals its name ("float32").
      .def("__hash__", [](DType d) { return py::hash(py::str(dtype_name(d))); })
      .def("__eq__", &equals, py::is_operator())
      // Pickled by name: unpickling finds the module's singleton.
      .def("__reduce__", [](DType d) { return dtype_name(d); })
      .def("__copy__", [](py::object self) { return self; })
      .def("__deepcopy__", [](py::object self, py::handle) { return self; });
  for (int i = 0; i < kNumDTypes; ++i) {
    py::object obj = py::cast(DType(i));
    m.attr(dtype_name(DType(i))) = obj;
    singletons[i] = obj.release().ptr();
  }
  m.def(
      "_as_dtype", [](py::handle obj) { return dtype_object(dtype_arg(obj)); },
      "The ember DType meant by a DType, numpy dtype or name.");
}

}  // namespace ember::python
