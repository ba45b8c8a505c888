// Tensor provenance: ember.set_tracking, Tensor.creation_site, and the site capture that
// pybind11's type hook (bindings.h) runs for each tensor it hands to Python.
#include <cstdlib>
#include <string>

#include "bindings.h"

namespace ember::python {
namespace {

// Frames of ember's own Python files are skipped: the site is the user's line.
const std::string& package_dir() {
  static const std::string* dir = [] {
    std::string file = py::str(py::module_::import("ember").attr("__file__"));
    return new std::string(file.substr(0, file.find_last_of("/\\") + 1));  // leaked: static
  }();
  return *dir;
}

tracking::Site site_of(PyFrameObject* frame) {
  auto code =
      py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetCode(frame)));
  std::string file = py::str(code.attr("co_filename"));
  if (file.rfind(package_dir(), 0) == 0) return nullptr;
  py::object name = py::getattr(code, "co_qualname", code.attr("co_name"));
  return tracking::intern(file + ":" + std::to_string(PyFrame_GetLineNumber(frame)) + " in " +
                          std::string(py::str(name)));
}

// The innermost frame outside ember's package, as "file.py:12 in function".
tracking::Site current_site() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  if (!frame) return nullptr;
  auto held = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(frame));
  while (true) {
    if (tracking::Site site = site_of(frame)) return site;
    PyFrameObject* back = PyFrame_GetBack(frame);  // a new reference, or null
    if (!back) return nullptr;
    held = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(back));
    frame = back;
  }
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// Compiled out (EMBER_TRACKING=0, the baseline of benchmarks/tracking_cost.py): asking for
// provenance says so instead of silently recording nothing.
void set_tracking(bool on) {
  if (on && !EMBER_TRACKING)
    throw Error(ErrorKind::InvalidArgument,
                "set_tracking(True): this ember was built with -DEMBER_TRACKING=OFF, which "
                "compiles tensor provenance out (a baseline for measuring its cost); reinstall "
                "ember without that option to record creation sites")
        .with("op", "set_tracking");
  tracking::set_enabled(on);
}

}  // namespace

void record_site(const Tensor& t) {
  if (!t.storage()->tracked() || t.storage()->site()) return;
  try {
    if (tracking::Site site = current_site()) t.storage()->set_site(site);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("ember tensor tracking");  // never fail the op that returned t
  }
}

void bind_tracking(py::module_& m, py::class_<Tensor>& cls) {
  if (env_on("EMBER_TRACK_TENSORS")) {
    if (EMBER_TRACKING)
      tracking::set_enabled(true);
    else if (PyErr_WarnEx(PyExc_RuntimeWarning,
                          "EMBER_TRACK_TENSORS is set, but this ember was built with "
                          "-DEMBER_TRACKING=OFF: no creation sites are recorded",
                          1) < 0)
      throw py::error_already_set();
  }
  m.attr("_tracking_compiled") = py::bool_(EMBER_TRACKING);
  m.def("set_tracking", &set_tracking, py::arg("enabled"),
        "Record where each tensor is created (file:line and function), so that a "
        "DeviceMismatchError names both tensors' creation sites. Off by default.");
  m.def("is_tracking", &tracking::enabled, "Whether ember.set_tracking is on.");
  cls.def_property_readonly(
      "creation_site",
      [](const Tensor& t) -> py::object {
        if (tracking::Site site = t.storage()->site()) return py::str(*site);
        return py::none();
      },
      "Where the user's code created this tensor's storage, \"file.py:12 in function\", or "
      "None (tracking was off). A view reports the tensor it views.");
}

}  // namespace ember::python
