// DLPack: CPU and CUDA tensors export zero-copy through a capsule that keeps their
// storage alive; import shares the producer's host or CUDA memory (read-only memory is
// copied). CUDA honours the stream protocol with events on the GPU, both ways. The
// structs follow the DLPack 1.0 ABI.
#include <cstdint>
#include <optional>
#include <string>

#include "bindings.h"

namespace ember::python {

namespace {

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; nullptr means row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};

constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLMetal = 8;
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
constexpr uint64_t kFlagReadOnly = uint64_t(1) << 0, kFlagIsCopied = uint64_t(1) << 1;
constexpr const char* kLegacy = "dltensor";
constexpr const char* kVersioned = "dltensor_versioned";

[[noreturn]] void throw_dlpack(const std::string& op, const std::string& why) {
  throw Error(ErrorKind::DLPack, op + ": " + why).with("op", op);
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::F32: return {kDLFloat, 32, 1};
    case DType::F16: return {kDLFloat, 16, 1};
    case DType::BF16: return {kDLBfloat, 16, 1};
    case DType::F64: return {kDLFloat, 64, 1};
    case DType::I64: return {kDLInt, 64, 1};
    case DType::U32: return {kDLUInt, 32, 1};
    case DType::I32: return {kDLInt, 32, 1};
    case DType::Bool: return {kDLBool, 8, 1};
    case DType::U8: break;
  }
  return {kDLUInt, 8, 1};
}

std::optional<DType> ember_dtype(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  for (int i = 0; i < kNumDTypes; ++i) {
    DLDataType e = dl_dtype(DType(i));
    if (e.code == t.code && e.bits == t.bits) return DType(i);
  }
  return std::nullopt;
}

// What one exported capsule owns: the storage (kept alive) and the shape and strides.
// Device memory goes back to ember's pool in ember's stream order when the consumer lets
// it go: its own queued reads must be done by then (as with PyTorch's exports).
struct Export {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Strides strides;
  DLManagedTensor legacy{};
  DLManagedTensorVersioned versioned{};
};

template <typename Managed>
void delete_export(Managed* m) {
  delete static_cast<Export*>(m->manager_ctx);
}

// A capsule never consumed still owns its tensor: free it with the capsule.
template <typename Managed>
void destroy_unused(PyObject* capsule, const char* name) {
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: renamed "used_..."
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
}

int32_t dl_device_type(const BackendDevice& d) {
  std::string kind = d.kind();
  return kind == "cpu" ? kDLCPU : kind == "cuda" ? kDLCUDA : kDLMetal;
}

// A pair of Python ints (dl_device=, max_version=), else InvalidTypeError naming `arg`.
std::pair<int64_t, int64_t> int_pair(py::handle obj, const char* arg) {
  PyObject* p = obj.ptr();
  const bool pair = PyTuple_Check(p) && PyTuple_GET_SIZE(p) == 2 &&
                    PyLong_Check(PyTuple_GET_ITEM(p, 0)) && PyLong_Check(PyTuple_GET_ITEM(p, 1));
  if (!pair)
    throw_invalid_type("__dlpack__",
                       std::string(arg) + " must be a tuple of two ints or None",
                       Py_TYPE(p)->tp_name);
  return obj.cast<std::pair<int64_t, int64_t>>();
}

// copy=: None (a copy only where sharing cannot work), True or False.
std::optional<bool> copy_request(py::handle copy) {
  if (copy.is_none()) return std::nullopt;
  if (!PyBool_Check(copy.ptr()))
    throw_invalid_type("__dlpack__", "copy must be True, False or None",
                       Py_TYPE(copy.ptr())->tp_name);
  return copy.ptr() == Py_True;
}

// A view that consumers cannot take as it is: a zero stride lets them write one element
// through many (numpy, via the legacy capsule, cannot be told it is read-only), and a
// negative stride is refused by PyTorch and others outright.
bool must_copy(const Tensor& t) {
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.shape()[size_t(d)] > 1 && t.layout().strides()[size_t(d)] <= 0) return true;
  return false;
}

// Checks a __dlpack__ request; returns the consumer's stream to order before (device
// memory only): None is the legacy default stream, -1 asks for no ordering.
std::optional<intptr_t> check_request(const Tensor& t, py::handle stream, py::handle dl_device) {
  const BackendDevice& d = *t.device();
  const bool host = t.storage()->impl().host_memory() != nullptr;
  if (!host && !t.storage()->impl().device_memory())
    throw_dlpack("__dlpack__", "a tensor on " + d.describe() +
                                   " cannot be shared through DLPack: its memory is private to "
                                   "the device. Copy it to the CPU first: t.to_device(\"cpu\")");
  const std::pair<int64_t, int64_t> own{dl_device_type(d), host ? 0 : d.ordinal()};
  if (!dl_device.is_none() && int_pair(dl_device, "dl_device") != own)
    throw_dlpack("__dlpack__", "this tensor lives on DLPack device (" + std::to_string(own.first) +
                                   ", " + std::to_string(own.second) +
                                   "); move it with ember (t.to_device) instead of asking "
                                   "DLPack for another device");
  if (host) {
    if (!stream.is_none()) throw_dlpack("__dlpack__", "a CPU tensor takes no stream (stream=None)");
    return std::nullopt;
  }
  if (stream.is_none()) return intptr_t(1);
  if (!py::isinstance<py::int_>(stream) || PyBool_Check(stream.ptr()))
    throw Error(ErrorKind::InvalidType, std::string("__dlpack__: stream must be an integer (a CUDA "
                                                    "stream handle), -1 or None, got ") +
                                            Py_TYPE(stream.ptr())->tp_name)
        .with("op", std::string("__dlpack__"));
  const auto s = stream.cast<intptr_t>();
  if (s == 0)
    throw_dlpack("__dlpack__",
                 "stream=0 is ambiguous and not allowed by DLPack; pass 1 for "
                 "the legacy default stream or 2 for the per-thread one");
  if (s == -1) return std::nullopt;
  return s;
}

py::object dlpack_export(const Tensor& self, py::handle stream, py::handle max_version,
                         py::handle dl_device, py::handle copy) {
  std::optional<intptr_t> consumer = check_request(self, stream, dl_device);
  const std::optional<bool> asked = copy_request(copy);
  const bool versioned = !max_version.is_none() && int_pair(max_version, "max_version").first >= 1;
  if (asked == false && must_copy(self))
    throw_dlpack("__dlpack__", "this view (strides " + shape_str(self.layout().strides()) +
                                   ") has a zero or negative stride, which consumers cannot "
                                   "take without a copy; pass copy=None or copy=True");
  const bool copied = asked.value_or(false) || must_copy(self);
  Tensor t = copied ? clone(self) : self;  // clone is contiguous
  BackendStorage& impl = t.storage()->impl();
  const BackendDevice& dev = *t.device();
  char* base = static_cast<char*>(impl.host_memory() ? impl.host_memory() : impl.device_memory());
  if (consumer) t.device()->order_before_stream(*consumer);  // no read before our writes
  auto* e = new Export{t.storage(), t.shape(), t.layout().strides()};
  DLTensor dl{};
  dl.data = base + t.layout().offset() * int64_t(dtype_size(t.dtype()));
  dl.device = {dl_device_type(dev), impl.host_memory() ? 0 : int32_t(dev.ordinal())};
  dl.ndim = int32_t(t.ndim());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  if (versioned) {
    e->versioned = {
        {1, 0}, e, &delete_export<DLManagedTensorVersioned>, copied ? kFlagIsCopied : 0, dl};
    return py::reinterpret_steal<py::object>(PyCapsule_New(
        &e->versioned, kVersioned,
        [](PyObject* c) { destroy_unused<DLManagedTensorVersioned>(c, kVersioned); }));
  }
  e->legacy = {dl, e, &delete_export<DLManagedTensor>};
  return py::reinterpret_steal<py::object>(PyCapsule_New(
      &e->legacy, kLegacy, [](PyObject* c) { destroy_unused<DLManagedTensor>(c, kLegacy); }));
}

// The ember dtype of a producer's tensor; DLPackError when it cannot be imported.
DType import_dtype(const DLTensor& dl) {
  const int32_t type = dl.device.device_type;
  if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDA)
    throw_dlpack("from_dlpack", "only CPU and CUDA memory can be imported (DLPack device type " +
                                    std::to_string(type) +
                                    "); move the data to the CPU on the producer's side first");
  std::optional<DType> dtype = ember_dtype(dl.dtype);
  if (!dtype)
    throw_dlpack("from_dlpack", "DLPack dtype (code " + std::to_string(dl.dtype.code) + ", " +
                                    std::to_string(dl.dtype.bits) + " bits, " +
                                    std::to_string(dl.dtype.lanes) +
                                    " lanes) has no ember dtype; convert it on the producer's "
                                    "side, e.g. to float32 or int64");
  return *dtype;
}

// The ember device that takes a producer's CUDA memory: `device` when given (a CUDA
// instance on the same GPU), else the GPU's shared instance.
DevicePtr import_device(const DLTensor& dl, py::handle device) {
  const std::string gpu = "cuda:" + std::to_string(dl.device.device_id);
  if (device.is_none()) return device_arg(py::str(gpu));
  DevicePtr d = device_arg(device);
  if (d->kind() != "cuda" || d->ordinal() != dl.device.device_id)
    throw_dlpack("from_dlpack", "the data is in the memory of " + gpu + ", not of " +
                                    d->describe() + "; import it on " + gpu +
                                    ", then move it with to_device");
  return d;
}

// Where the producer's elements are: the span [lo, hi) of the view, from `base`.
struct Span {
  char* base;     // element lo
  int64_t numel;  // hi - lo
  Layout layout;  // the producer's view, relative to base
};

Span span_of(const DLTensor& dl, DType dtype) {
  Shape shape(dl.shape, dl.shape + dl.ndim);
  Layout view =
      dl.strides ? Layout(shape, Strides(dl.strides, dl.strides + dl.ndim), 0) : Layout(shape);
  auto [lo, hi] = view.extent();  // lo < 0 for negative strides
  char* base = static_cast<char*>(dl.data) + dl.byte_offset + lo * int64_t(dtype_size(dtype));
  return {base, hi - lo, Layout(shape, view.strides(), -lo)};
}

// The producer's memory, shared: `owner` gives it back when the last view dies. Read-only
// memory (DLPack 1.x flag), empty views and misaligned data are copied instead.
Tensor import_tensor(const DLTensor& dl, bool read_only, std::shared_ptr<void> owner,
                     const DevicePtr& device) {
  const DType dtype = import_dtype(dl);
  Span span = span_of(dl, dtype);
  const bool aligned = reinterpret_cast<uintptr_t>(span.base) % dtype_size(dtype) == 0;
  const bool share = !read_only && aligned && span.numel > 0;
  if (dl.device.device_type == kDLCUDA) {  // read-only memory is copied on the GPU
    if (!aligned) throw_dlpack("from_dlpack", "CUDA data not aligned to its element size");
    Tensor t = wrap_device("from_dlpack", span.base, span.numel, Layout({span.numel}), dtype,
                           std::move(owner), device);
    return read_only ? clone(t.view_as(span.layout)) : t.view_as(span.layout);
  }
  if (share)
    return wrap_host("from_dlpack", span.base, span.numel, span.layout, dtype, std::move(owner),
                     cpu_device());
  py::gil_scoped_release release;
  Tensor copy = from_host(span.base, {span.numel}, dtype, cpu_device());
  return contiguous(copy.view_as(span.layout));  // `owner` goes with this scope
}

template <typename Managed>
Tensor consume(PyObject* capsule, const char* name, const char* used_name, py::handle device) {
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  bool read_only = false;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if (m->version.major != 1)
      throw_dlpack("from_dlpack", "DLPack version " + std::to_string(m->version.major) +
                                      " is not supported (ember reads 1.x)");
    read_only = (m->flags & kFlagReadOnly) != 0;
  }
  import_dtype(m->dl_tensor);  // refuse before taking ownership: the capsule keeps it
  DevicePtr target =
      m->dl_tensor.device.device_type == kDLCUDA ? import_device(m->dl_tensor, device) : nullptr;
  // From here the tensor is ember's: the protocol marks the capsule consumed, and the
  // producer's deleter runs exactly once, when the last view of its memory dies.
  PyCapsule_SetName(capsule, used_name);
  std::shared_ptr<void> owner(m, [](void* p) {
    auto* managed = static_cast<Managed*>(p);
    if (managed->deleter) managed->deleter(managed);
  });
  return import_tensor(m->dl_tensor, read_only, std::move(owner), target);
}

Tensor from_capsule(py::handle capsule, py::handle device) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersioned))
    return consume<DLManagedTensorVersioned>(c, kVersioned, "used_dltensor_versioned", device);
  if (PyCapsule_IsValid(c, kLegacy))
    return consume<DLManagedTensor>(c, kLegacy, "used_dltensor", device);
  throw_dlpack("from_dlpack",
               "expected an unused DLPack capsule (\"dltensor\" or "
               "\"dltensor_versioned\"); a capsule can be consumed only once");
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Tensor>& cls) {
  cls.def("__dlpack__", &dlpack_export, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "A DLPack capsule viewing this tensor's CPU or CUDA memory (no copy unless copy=True); "
          "on CUDA, `stream` (the consumer's) waits on the GPU for the work queued so far.");
  cls.def("__dlpack_device__", [](const Tensor& t) {
    return py::make_tuple(dl_device_type(*t.device()), t.device()->ordinal());
  });
  m.def("_from_dlpack_capsule", &from_capsule, py::arg("capsule"), py::arg("device") = py::none());
  m.def(
      "_stream_handle", [](const BackendDevice& d) { return d.stream_handle(); }, py::arg("device"),
      "The integer that DLPack producers take as __dlpack__(stream=) for this Device's queue.");
}

}  // namespace ember::python
