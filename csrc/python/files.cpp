// Files: the safetensors reader and writer of core (core/safetensors.h) and the raw
// bytes of a tensor for pickle. python/ember/_files.py is the API over these.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/safetensors.h"

namespace ember::python {

namespace {

using safetensors::File;
using safetensors::Metadata;

std::optional<Metadata> metadata_arg(py::handle md) {
  if (md.is_none()) return std::nullopt;
  if (!PyDict_Check(md.ptr()))
    throw_invalid_type("save_file", "metadata must be a dict of str to str or None",
                       Py_TYPE(md.ptr())->tp_name);
  Metadata out;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(md)) {
    if (!PyUnicode_Check(k.ptr()) || !PyUnicode_Check(v.ptr()))
      throw_invalid_type("save_file", "metadata must map str to str",
                         std::string(Py_TYPE(k.ptr())->tp_name) + ": " + Py_TYPE(v.ptr())->tp_name);
    out.emplace_back(k.cast<std::string>(), v.cast<std::string>());
  }
  return out;
}

void save_file(py::handle tensors, py::handle metadata, const std::string& path) {
  if (!PyDict_Check(tensors.ptr()))
    throw_invalid_type("save_file", "tensors must be a dict of str to Tensor",
                       Py_TYPE(tensors.ptr())->tp_name);
  std::vector<std::pair<std::string, Tensor>> items;
  for (auto [k, v] : py::reinterpret_borrow<py::dict>(tensors)) {
    if (!PyUnicode_Check(k.ptr()))
      throw_invalid_type("save_file", "tensor names must be str", Py_TYPE(k.ptr())->tp_name);
    if (!is_tensor(v))
      throw_invalid_type("save_file",
                         "the value of '" + k.cast<std::string>() + "' must be an ember Tensor",
                         Py_TYPE(v.ptr())->tp_name);
    items.emplace_back(k.cast<std::string>(), v.cast<Tensor>());
  }
  std::optional<Metadata> md = metadata_arg(metadata);
  py::gil_scoped_release release;
  safetensors::save(items, md, path);
}

// pickle: a tensor's values as bytes (C order, native byte order), and back.
py::bytes tensor_bytes(const Tensor& t) {
  std::string buffer(size_t(t.numel()) * dtype_size(t.dtype()), '\0');
  {
    py::gil_scoped_release release;
    if (!buffer.empty()) to_host(t, buffer.data());
  }
  return py::bytes(buffer);
}

Tensor tensor_from_bytes(const py::bytes& data, py::handle dtype, py::handle shape,
                         py::handle device) {
  const DType dt = dtype_arg(dtype);
  const Shape s = shape_arg(shape, "pickle");
  check_shape("pickle", s);
  std::string_view view = data;
  if (uint64_t(view.size()) != uint64_t(shape_numel(s)) * dtype_size(dt))
    throw_invalid("pickle", "the data has " + std::to_string(view.size()) + " bytes but shape " +
                                shape_str(s) + " of " + dtype_name(dt) + " needs " +
                                std::to_string(shape_numel(s) * int64_t(dtype_size(dt))));
  DevicePtr dev = device_arg(device);
  if (!dev->supports_dtype(dt))
    throw_unsupported_dtype("pickle", dt, dev, "this backend has no kernels for it");
  py::gil_scoped_release release;
  return from_host(view.data(), s, dt, dev);
}

}  // namespace

void bind_files(py::module_& m) {
  m.def(
      "_open_safetensors",
      [](const std::string& path) {
        py::gil_scoped_release release;
        return std::make_shared<File>(path);
      },
      py::arg("path"));
  py::class_<File, std::shared_ptr<File>>(m, "_SafetensorsFile")
      .def_property_readonly("path", &File::path)
      .def("keys",
           [](const File& f) {
             std::vector<std::string> names;
             for (const auto& e : f.entries()) names.push_back(e.name);
             std::sort(names.begin(), names.end());  // as the safetensors package
             return names;
           })
      .def("metadata",
           [](const File& f) -> py::object {
             if (!f.metadata()) return py::none();
             py::dict d;
             for (const auto& [k, v] : *f.metadata()) d[py::str(k)] = py::str(v);
             return std::move(d);
           })
      .def("entries",
           [](const File& f) {
             py::list out;
             for (const auto& e : f.entries())
               out.append(py::make_tuple(e.name, e.code, Shape(e.shape), e.begin, e.end));
             return out;
           })
      .def(
          "get_tensor",
          [](const File& f, const std::string& name, py::handle device) {
            const auto& e = f.entry(name);
            DevicePtr dev = device_arg(device);
            py::gil_scoped_release release;
            return f.load(e, dev);
          },
          py::arg("name"), py::arg("device") = py::none());
  m.def("_save_safetensors", &save_file, py::arg("tensors"), py::arg("metadata"), py::arg("path"));
  m.def("_tensor_bytes", &tensor_bytes, py::arg("tensor"));
  m.def("_tensor_from_bytes", &tensor_from_bytes, py::arg("data"), py::arg("dtype"),
        py::arg("shape"), py::arg("device"));
}

}  // namespace ember::python
