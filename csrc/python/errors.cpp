// Exception translation: every C++ failure crosses into Python as a class of the
// pure-Python module ember.errors, with its facts as attributes. Nothing escapes.
#include <deque>
#include <new>
#include <string>
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
    case ErrorKind::InvalidIndex: return "InvalidIndexError";
    case ErrorKind::DLPack: return "DLPackError";
    case ErrorKind::ZeroDivision: return "DivisionByZeroError";
    case ErrorKind::FileFormat: return "FileFormatError";
    case ErrorKind::OS: return "OSError";
    case ErrorKind::Autograd: return "AutogradError";
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

// Python's own OSError(errno, message, filename), which is the errno's subclass
// (FileNotFoundError, PermissionError, IsADirectoryError, ...).
void set_os_error(const Error& e) {
  int64_t err = 0;
  std::string path;
  for (const auto& [name, value] : e.attrs()) {
    if (name == "errno") err = std::get<int64_t>(value);
    if (name == "path") path = std::get<std::string>(value);
  }
  try {
    py::object exc = py::reinterpret_borrow<py::object>(PyExc_OSError)(err, text(e.what()), text(path));
    PyErr_SetObject(exc.get_type().ptr(), exc.ptr());
  } catch (py::error_already_set& x) {
    x.restore();
  }
}

void translate(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::OS) return set_os_error(e);
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

// ---- pybind11's own "incompatible function arguments" TypeError, as an ember error

// A wrapper of one bound function: its PyMethodDef (with name and doc) lives as long as
// the process, as the function objects made from it may.
struct Wrapper {
  std::string name, doc;
  PyMethodDef def{};
};

std::deque<Wrapper>& wrappers() {
  static auto* all = new std::deque<Wrapper>();  // never freed: functions outlive statics
  return *all;
}

// Re-raises the pending TypeError as InvalidTypeError (with the original as its cause),
// unless it already is an ember error.
void retag_type_error(PyObject* fn) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  py::object errors = py::module_::import("ember.errors");
  if (PyObject_IsInstance(value, errors.attr("EmberError").ptr()) == 1)
    return PyErr_Restore(type, value, tb);
  if (tb) PyException_SetTraceback(value, tb);
  py::object original = py::reinterpret_steal<py::object>(value);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  py::object op = py::getattr(fn, "__name__", py::str("?"));
  py::object exc = errors.attr("InvalidTypeError")(py::str(original), py::arg("op") = op);
  PyException_SetCause(exc.ptr(), original.release().ptr());  // steals the reference
  PyErr_SetObject(exc.get_type().ptr(), exc.ptr());
}

PyObject* call_translated(PyObject* fn, PyObject* const* args, Py_ssize_t nargs,
                          PyObject* kwnames) {
  PyObject* result = PyObject_Vectorcall(fn, args, size_t(nargs), kwnames);
  if (!result && PyErr_ExceptionMatches(PyExc_TypeError)) {
    try {
      retag_type_error(fn);
    } catch (py::error_already_set& e) {
      e.restore();
    }
  }
  return result;
}

py::object translated(py::handle fn) {
  Wrapper& w = wrappers().emplace_back();
  w.name = py::str(py::getattr(fn, "__name__", py::str("function")));
  py::object doc = py::getattr(fn, "__doc__", py::none());
  w.doc = doc.is_none() ? "" : py::str(doc).cast<std::string>();
  // "name(params)\n--\n\n" in front: CPython's text signature, read by inspect.signature
  w.doc = py::module_::import("ember._signatures").attr("with_text_signature")(w.doc)
              .cast<std::string>();
  w.def.ml_name = w.name.c_str();
  w.def.ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call_translated));
  w.def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
  w.def.ml_doc = w.doc.c_str();
  return py::reinterpret_steal<py::object>(PyCFunction_NewEx(&w.def, fn.ptr(), nullptr));
}

// The translated form of a class attribute, or an empty object to leave it alone.
py::object translated_attr(py::handle attr) {
  PyObject* a = attr.ptr();
  if (PyCFunction_Check(a)) return translated(attr);
  if (PyInstanceMethod_Check(a) && PyCFunction_Check(PyInstanceMethod_GET_FUNCTION(a)))
    return py::reinterpret_steal<py::object>(
        PyInstanceMethod_New(translated(PyInstanceMethod_GET_FUNCTION(a)).ptr()));
  if (py::isinstance<py::staticmethod>(attr)) {
    py::object fn = attr.attr("__func__");
    if (PyCFunction_Check(fn.ptr())) return py::staticmethod(translated(fn));
  }
  return {};
}

bool is_bound_class(py::handle obj) {
  return PyType_Check(obj.ptr()) &&
         !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(obj.ptr()),
                           reinterpret_cast<PyTypeObject*>(PyExc_BaseException));
}

}  // namespace

void translate_call_errors(py::module_& m) {
  py::list names = py::list(m.attr("__dict__").attr("items")());  // a copy: m changes below
  for (py::handle item : names) {
    py::object name = item[py::int_(0)], value = item[py::int_(1)];
    if (PyCFunction_Check(value.ptr())) {
      m.attr(name) = translated(value);
    } else if (is_bound_class(value)) {
      py::list attrs = py::list(value.attr("__dict__").attr("items")());
      for (py::handle entry : attrs) {
        py::object attr_name = entry[py::int_(0)];
        if (py::object t = translated_attr(entry[py::int_(1)])) value.attr(attr_name) = t;
      }
    }
  }
}

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
