// numpy <-> tensor: arrays in through ember::from_host, copies out through
// ember::to_host, and the scalar conversions (item, bool, float, int).
#include <pybind11/numpy.h>

#include <cstring>
#include <string>
#include <vector>

#include "bindings.h"

namespace ember::python {

namespace {

// numpy has no bfloat16: those tensors come back as float32 arrays.
const char* numpy_name(DType d) {
  return d == DType::BF16 ? "float32" : dtype_name(d);
}

std::optional<DType> dtype_of_array(const py::dtype& dt) {
  char kind = dt.kind();
  py::ssize_t size = dt.itemsize();
  if (kind == 'f' && size == 2) return DType::F16;
  if (kind == 'f' && size == 4) return DType::F32;
  if (kind == 'f' && size == 8) return DType::F64;
  if (kind == 'i' && size == 8) return DType::I64;
  if (kind == 'i' && size == 4) return DType::I32;
  if (kind == 'u' && size == 4) return DType::U32;
  if (kind == 'u' && size == 1) return DType::U8;
  if (kind == 'b') return DType::Bool;  // numpy bools are bytes of 0 or 1, as ember's
  return std::nullopt;
}

// A C-contiguous, aligned, native-byte-order view of arr (a copy only if needed).
py::array host_ready(py::array arr) {
  constexpr int wanted = py::array::c_style | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  const uint16_t probe = 1;
  const bool little = *reinterpret_cast<const unsigned char*>(&probe) == 1;
  bool native = arr.dtype().byteorder() != (little ? '>' : '<');
  if ((arr.flags() & wanted) == wanted && native) return arr;
  py::module_ np = py::module_::import("numpy");
  py::object dt = arr.dtype().attr("newbyteorder")("=");
  return np.attr("require")(arr, dt, py::make_tuple("C", "A"));
}

// ember._core._from_numpy(arr, device): the array's own dtype, which must be one of
// ember's; ember.tensor() does the conversions before calling it.
Tensor from_numpy(py::array arr, py::handle device) {
  std::optional<DType> dt = dtype_of_array(arr.dtype());
  if (!dt)
    throw_invalid("tensor", "numpy dtype " + py::str(arr.dtype()).cast<std::string>() +
                                " has no ember dtype");
  arr = host_ready(std::move(arr));
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  DevicePtr dev = device_arg(device);
  const void* data = arr.data();
  return gil_free_if(arr.size() >= kReleaseGilNumel,
                     [&] { return from_host(data, shape, *dt, dev); });
}

py::object item(const Tensor& t) {
  if (t.numel() != 1)
    throw_invalid("item", "needs a tensor with exactly one element, got shape " +
                              shape_str(t.shape()) + " (" + std::to_string(t.numel()) +
                              " elements)");
  unsigned char buf[8] = {};
  gil_free_if(read_may_wait(t), [&] { to_host(t, buf); });
  auto read = [&](auto v) {
    std::memcpy(&v, buf, sizeof(v));
    return v;
  };
  switch (t.dtype()) {
    case DType::F32: return py::float_(read(float{}));
    case DType::F16: return py::float_(f16::to_float(read(uint16_t{})));
    case DType::BF16: return py::float_(bf16::to_float(read(uint16_t{})));
    case DType::F64: return py::float_(read(double{}));
    case DType::I64: return py::int_(read(int64_t{}));
    case DType::U32: return py::int_(read(uint32_t{}));
    case DType::I32: return py::int_(read(int32_t{}));
    case DType::Bool: return py::bool_(read(uint8_t{}) != 0);
    case DType::U8: break;
  }
  return py::int_(read(uint8_t{}));
}

bool truth(const Tensor& t) {
  if (t.numel() != 1)
    throw_invalid("bool", "the truth value of a tensor with " + std::to_string(t.numel()) +
                              " elements is ambiguous; reduce it first with t.any() or t.all()");
  return PyObject_IsTrue(item(t).ptr()) == 1;
}

py::object as_int(const Tensor& t) {
  py::object value = item(t);
  auto r = py::reinterpret_steal<py::object>(PyNumber_Long(value.ptr()));
  if (!r) {
    PyErr_Clear();  // int(nan), int(inf): the same refusal, as an ember error
    throw_invalid("int",
                  "cannot convert " + py::repr(value).cast<std::string>() + " to an integer");
  }
  return r;
}

}  // namespace

py::object to_numpy(const Tensor& t) {
  bool big = t.numel() >= kReleaseGilNumel;
  Tensor src =
      t.dtype() == DType::BF16 ? gil_free_if(big, [&] { return to_dtype(t, DType::F32); }) : t;
  std::vector<py::ssize_t> shape(src.shape().begin(), src.shape().end());
  py::array out(py::dtype(numpy_name(src.dtype())), shape);
  void* dst = out.mutable_data();
  gil_free_if(big || read_may_wait(src), [&] { to_host(src, dst); });
  return std::move(out);
}

void bind_numpy(py::module_& m, py::class_<Tensor>& cls) {
  m.def("_from_numpy", &from_numpy, py::arg("array"), py::arg("device") = py::none());
  cls.def(
         "numpy",
         [](const Tensor& t) {
           if (t.requires_grad())  // PyTorch's rule: the array would silently leave the graph
             throw Error(ErrorKind::Autograd,
                         "numpy: can't call numpy() on a tensor that requires grad; use "
                         "t.detach().numpy()")
                 .with("op", std::string("numpy"));
           return to_numpy(t);
         },
         "A copy as a numpy array (bfloat16 comes back as float32).")
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", &item, "The one element as a Python number.")
      .def("__bool__", &truth)
      .def("__float__", [](const Tensor& t) { return PyFloat_AsDouble(item(t).ptr()); })
      .def("__int__", &as_int);
}

}  // namespace ember::python
