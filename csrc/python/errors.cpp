// Exception translation: every C++ failure crosses into Python as a class of the
// pure-Python module ember.errors, with its facts as attributes. Nothing escapes.
#include <new>
#include <variant>

#include "bindings.h"

namespace ember::python {

namespace {

const char* class_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::DeviceMismatch: return "DeviceMismatchError";
    case ErrorKind::MoveNotImplemented: return "MoveNotImplementedError";
    case ErrorKind::DeviceNotFound: return "DeviceNotFoundError";
    case ErrorKind::BackendUnavailable: return "BackendUnavailableError";
    case ErrorKind::ShapeMismatch: return "ShapeMismatchError";
    case ErrorKind::DTypeMismatch: return "DTypeMismatchError";
    case ErrorKind::UnsupportedDType: return "UnsupportedDTypeError";
    case ErrorKind::OutOfMemory: return "OutOfMemoryError";
    case ErrorKind::Device: return "DeviceError";
    case ErrorKind::InvalidArgument: return "InvalidArgumentError";
    case ErrorKind::IndexOutOfRange: return "IndexOutOfRangeError";
    case ErrorKind::InvalidType: return "InvalidTypeError";
  }
  return "EmberError";
}

// Messages may quote user input: never fail on bytes that are not UTF-8.
py::object text(const std::string& s) {
  return py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(s.data(), py::ssize_t(s.size()), "replace"));
}

struct AttrToPython {
  py::object operator()(int64_t v) const { return py::int_(v); }
  py::object operator()(const std::string& s) const { return text(s); }
  py::object operator()(DType d) const { return dtype_object(d); }
  py::object operator()(const Shape& s) const {
    py::tuple out(s.size());
    for (size_t i = 0; i < s.size(); ++i) out[i] = py::int_(s[i]);
    return std::move(out);
  }
  py::object operator()(const std::shared_ptr<BackendDevice>& d) const {
    return d ? py::cast(d) : py::none();
  }
};

using Attrs = std::vector<std::pair<std::string, AttrValue>>;

// Sets the Python error cls(message, **attrs). If even that fails, the failure is
// reported rather than lost.
void set_error(const char* cls_name, const std::string& message, const Attrs& attrs) {
  try {
    py::object cls = py::module_::import("ember.errors").attr(cls_name);
    py::dict kwargs;
    for (const auto& [name, value] : attrs) kwargs[text(name)] = std::visit(AttrToPython{}, value);
    py::object exc = cls(text(message), **kwargs);
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, (message + " (and then: " + e.what() + ")").c_str());
  }
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    set_error(class_name(e.kind()), e.what(), e.attrs());
  } catch (const std::bad_alloc&) {
    set_error("OutOfMemoryError",
              "out of memory: a host allocation failed. Free tensors you no longer need or "
              "use smaller sizes",
              {});
  } catch (const py::builtin_exception&) {
    throw;  // pybind11's own (TypeError, StopIteration, ...): its translator knows them
  } catch (const py::error_already_set&) {
    throw;  // a Python error already set: pybind11 restores it
  } catch (const std::exception& e) {
    set_error("EmberError", std::string("internal error in ember: ") + e.what(), {});
  }
}

}  // namespace

void refuse_bare_new(py::module_& m, const char* name, const char* how) {
  std::string message =
      std::string(name) + ".__new__: ember." + name + " objects cannot be created directly; " + how;
  std::string op = std::string(name) + ".__new__";
  auto refuse = [message, op](const py::args&, const py::kwargs&) -> py::object {
    throw Error(ErrorKind::InvalidType, message).with("op", op);
  };
  m.attr(name).attr("__new__") = py::staticmethod(py::cpp_function(refuse, py::name("__new__")));
}

void bind_errors(py::module_& m) {
  // Local: other extension modules keep their own handling of std::exception.
  py::register_local_exception_translator(&translate);
}

}  // namespace ember::python
