// ember.Device and the module-level device functions. A Device is a shared
// BackendDevice: copying the Python object shares the instance (and its queue).
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {

namespace {

// Directories of the ember package (with a trailing separator): frames there are
// ember's own, not the user's. Filled once `ember` is importable.
const std::vector<std::string>& package_dirs() {
  static std::vector<std::string> dirs;
  static bool found_package = false;
  if (found_package) return dirs;
  py::object os = py::module_::import("os");
  py::dict modules = py::module_::import("sys").attr("modules");
  std::string sep = py::str(os.attr("sep"));
  dirs.clear();
  for (const char* name : {"ember", "ember._core"}) {
    if (!modules.contains(name)) continue;
    py::object file = py::getattr(modules[name], "__file__", py::none());
    if (file.is_none()) continue;
    py::object dir = os.attr("path").attr("dirname")(file);
    dirs.push_back(py::str(dir).cast<std::string>() + sep);
    dirs.push_back(py::str(os.attr("path").attr("realpath")(dir)).cast<std::string>() + sep);
    if (std::string(name) == "ember") found_package = true;
  }
  return dirs;
}

bool inside_package(const std::string& file) {
  for (const std::string& dir : package_dirs())
    if (file.compare(0, dir.size(), dir) == 0) return true;
  return false;
}

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The innermost Python frame outside the ember package: where the user asked.
CreationSite caller_site() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  while (frame) {
    auto code =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetCode(frame)));
    std::string file = py::str(code.attr("co_filename"));
    if (!inside_package(file)) {
      CreationSite site{basename(file), PyFrame_GetLineNumber(frame),
                        py::str(code.attr("co_name")).cast<std::string>()};
      Py_DECREF(frame);
      return site;
    }
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  return {};
}

py::object device_eq(const BackendDevice& d, py::handle other) {
  if (!py::isinstance<BackendDevice>(other))
    return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::bool_(d.same_device(other.cast<const BackendDevice&>()));
}

// Opening a GPU may take a while (driver start-up): no Python is touched meanwhile.
DevicePtr open_device(const std::string& kind, int64_t ordinal, bool fresh) {
  py::gil_scoped_release release;
  return fresh ? new_device(kind, ordinal) : shared_device(kind, ordinal);
}

DevicePtr device_from_spec(py::handle spec) {
  if (py::isinstance<BackendDevice>(spec)) return spec.cast<DevicePtr>();
  if (!PyUnicode_Check(spec.ptr()))
    throw Error(ErrorKind::InvalidType, "device: expected a Device or a spec such as " +
                                            spec_examples() + ", got an object of type " +
                                            Py_TYPE(spec.ptr())->tp_name)
        .with("op", std::string("device"));
  auto [kind, ordinal] = parse_device_spec(spec.cast<std::string>());
  return stamped(open_device(kind, ordinal, false));
}

uint64_t seed_arg(py::handle seed) {
  auto index = py::reinterpret_steal<py::object>(PyNumber_Index(seed.ptr()));
  if (!index) {
    PyErr_Clear();
    throw Error(ErrorKind::InvalidType, "manual_seed: the seed must be an integer")
        .with("op", std::string("manual_seed"));
  }
  return PyLong_AsUnsignedLongLongMask(index.ptr());  // any int: its low 64 bits
}

void seed_all(py::handle seed) {
  uint64_t s = seed_arg(seed);
  cpu_device()->manual_seed(s);
  for (const DevicePtr& d : shared_devices()) d->manual_seed(s);
}

const char* const kPrecisions[] = {"highest", "high", "medium"};

void set_precision(py::handle p) {
  if (!py::isinstance<py::str>(p))
    throw_invalid_type("set_float32_matmul_precision", "the precision must be a str",
                       Py_TYPE(p.ptr())->tp_name);
  const std::string v = p.cast<std::string>();
  for (int i = 0; i < 3; ++i)
    if (v == kPrecisions[i]) return set_float32_matmul_precision(MatmulPrecision(i));
  throw_invalid("set_float32_matmul_precision",
                "unknown precision '" + v + "'; expected 'highest', 'high' or 'medium'");
}

std::string get_precision() {
  return kPrecisions[int(float32_matmul_precision())];
}

// Device.<kind>(...) for one kind, with the signature and docstring its description gives.
void bind_constructor(py::class_<BackendDevice, DevicePtr>& cls, const DeviceKind& k) {
  const std::string kind = k.name;
  if (k.host) {
    cls.def_static(
        kind.c_str(), [kind] { return stamped(shared_device(kind, 0)); }, k.doc.c_str());
  } else if (k.fresh_keyword.empty()) {
    const bool fresh = k.fresh_by_default;
    cls.def_static(
        kind.c_str(),
        [kind, fresh](int64_t ordinal) { return stamped(open_device(kind, ordinal, fresh)); },
        py::arg("ordinal") = 0, k.doc.c_str());
  } else {
    cls.def_static(
        kind.c_str(),
        [kind](int64_t ordinal, bool fresh) { return stamped(open_device(kind, ordinal, fresh)); },
        py::arg("ordinal") = 0, py::arg(k.fresh_keyword.c_str()) = k.fresh_by_default,
        k.doc.c_str());
  }
}

void bind_event_class(py::module_& m) {
  py::class_<Event, std::shared_ptr<Event>>(m, "Event",
                                            "A point in a Device's queue (Device.record_event).")
      .def("query", &Event::completed, "Whether the work before it has completed; never waits.")
      .def("synchronize", &Event::wait, py::call_guard<py::gil_scoped_release>())
      .def(
          "elapsed_time",
          [](const Event& start, const Event& end) { return end.elapsed_ms_since(start); },
          py::arg("end"), "Milliseconds from this event to `end` (both completed).");
}

void bind_device_class(py::module_& m) {
  bind_event_class(m);
  py::class_<BackendDevice, DevicePtr> cls(m, "Device",
                                           "An ordered queue of work on one physical device.");
  for (const DeviceKind* k : device_kinds()) bind_constructor(cls, *k);
  cls.def_property_readonly("id", &BackendDevice::id)
      .def_property_readonly("kind", &BackendDevice::kind)
      .def_property_readonly("ordinal", &BackendDevice::ordinal)
      .def_property_readonly("location", &BackendDevice::location)
      .def_property_readonly("name", &BackendDevice::name)
      .def_property_readonly("created_at", [](const BackendDevice& d) { return d.site().str(); })
      .def(
          "same_device",
          [](const BackendDevice& d, const BackendDevice& other) { return d.same_device(other); },
          py::arg("other"))
      .def("__hash__", [](const BackendDevice& d) { return py::hash(py::int_(d.id())); })
      .def("__eq__", &device_eq, py::is_operator())
      .def("__repr__",
           [](const BackendDevice& d) {
             return "Device(" + d.spec() + ", id=" + std::to_string(d.id()) + ")";
           })
      // A copy shares the instance: that is what makes two handles "the same device".
      .def("__copy__", [](py::object self) { return self; })
      .def(
          "__deepcopy__", [](py::object self, py::handle) { return self; }, py::arg("memo"))
      .def("synchronize", &BackendDevice::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("query", &BackendDevice::query,
           "Whether all work queued on this Device so far has completed; never waits.")
      .def(
          "record_event",
          [](BackendDevice& d) { return std::const_pointer_cast<Event>(d.record_event()); },
          "A timing Event after all work queued so far (CUDA: a cudaEvent on the stream).")
      .def(
          "manual_seed", [](BackendDevice& d, py::handle seed) { d.manual_seed(seed_arg(seed)); },
          py::arg("seed"))
      .def("empty_cache", &BackendDevice::empty_cache, py::call_guard<py::gil_scoped_release>())
      .def("memory_stats", &BackendDevice::memory_stats)
      .def("queue_stats",
           [](const BackendDevice& d) {
             std::map<std::string, int64_t> stats = d.queue_stats();
             if (!kind_of(d).host) {  // reads into host memory, counted by core
               stats["reads_to_host"] = d.host_reads();
               stats["bytes_to_host"] = d.host_read_bytes();
             }
             return stats;
           })
      .def("info", &BackendDevice::info);
}

}  // namespace

DevicePtr stamped(DevicePtr device) {
  if (device && device->site().file.empty()) {
    CreationSite site = caller_site();
    if (!site.file.empty()) device->set_site(std::move(site));
  }
  return device;
}

DevicePtr device_arg(py::handle obj) {
  if (obj.is_none()) return cpu_device();
  return device_from_spec(obj);
}

void bind_device(py::module_& m) {
  bind_device_class(m);
  const std::string device_doc = "The process-wide cached device of a spec (" + spec_examples() +
                                 "); a Device is returned as is.";
  m.def("device", &device_from_spec, py::arg("spec") = host_kind().name, device_doc.c_str());
  for (const DeviceKind* k : device_kinds()) {
    if (k->host) continue;  // always there: no availability question
    const std::string kind = k->name;
    m.def((kind + "_is_available").c_str(), [kind] { return is_available(kind); });
    m.def((kind + "_device_count").c_str(), [kind] { return device_count(kind); });
  }
  m.def("compiled_backends", &compiled_backends);
  m.def(
      "_queue_device_fault",
      [](BackendDevice& d) {
        const BackendFactory* f = find_backend(d.kind());
        if (!f || !f->queue_fault)
          throw_invalid("_queue_device_fault", "the " + d.kind() + " backend has no test fault");
        f->queue_fault(d);
      },
      py::arg("device"), "Tests only: queues a kernel that faults on `device`.");
  m.def(
      "_queue_busy",
      [](BackendDevice& d, double seconds) {
        const BackendFactory* f = find_backend(d.kind());
        if (!f || !f->queue_busy)
          throw_invalid("_queue_busy", "the " + d.kind() + " backend has no test work");
        f->queue_busy(d, seconds);
      },
      py::arg("device"), py::arg("seconds"),
      "Tests only: queues `seconds` of work on one core of `device`.");
  m.def("manual_seed", &seed_all, py::arg("seed"),
        "Seeds the CPU device and every cached device (ember.device(...)).");
  m.def("set_float32_matmul_precision", &set_precision, py::arg("precision"),
        "PyTorch's switch: 'highest' (default) keeps float32 matmul in full float32; 'high' "
        "or 'medium' lets GPUs use TF32 tensor cores (CUDA; the CPU always computes in f32).");
  m.def("get_float32_matmul_precision", &get_precision);
  m.def(
      "use_deterministic_algorithms",
      [](py::handle mode, py::handle warn_only) {
        for (py::handle v : {mode, warn_only})
          if (!py::isinstance<py::bool_>(v))
            throw_invalid_type("use_deterministic_algorithms", "mode and warn_only must be bool",
                               Py_TYPE(v.ptr())->tp_name);
        set_deterministic_algorithms(mode.cast<bool>());
      },
      py::arg("mode"), py::kw_only(), py::arg("warn_only") = false,
      "PyTorch's switch: True makes the ops whose float results may change in the last bits "
      "from run to run (CUDA's scatter_add, index_add and the backward of gather, "
      "index_select and embedding, which add atomically) take their deterministic kernel. "
      "Every ember op has one, so warn_only changes nothing.");
  m.def("are_deterministic_algorithms_enabled", &deterministic_algorithms);
}

}  // namespace ember::python
