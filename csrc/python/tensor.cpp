// ember.Tensor: properties, moves and the Python operators. Operators take the
// lean path (one operand check, then the op) since `a + b` on tiny tensors is common.
#include <cctype>
#include <string>

#include "bindings.h"
#include "core/autograd.h"

namespace ember::python {

namespace {

py::tuple to_tuple(const std::vector<int64_t>& v) {
  py::tuple out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = py::int_(v[i]);
  return out;
}

py::object not_implemented() {
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

// An operand no tensor op takes. A builtin type that never handles a tensor on its side
// (a str, None, a list...) is an InvalidTypeError naming the op; any other type gets
// NotImplemented, so that its own reflected operator can still run.
py::object unsupported_operand(py::handle other, const char* op) {
  PyObject* p = other.ptr();
  const bool builtin = PyUnicode_Check(p) || PyBytes_Check(p) || PyByteArray_Check(p) ||
                       p == Py_None || PyDict_Check(p) || PyAnySet_Check(p) ||
                       PyComplex_Check(p) || PyList_Check(p) || PyTuple_Check(p);
  if (!builtin) return not_implemented();
  std::string name = Py_TYPE(p)->tp_name;
  throw Error(ErrorKind::InvalidType,
              std::string(op) + ": unsupported operand of type " + name +
                  "; a tensor combines with tensors, Python numbers and numpy arrays" +
                  (PyList_Check(p) || PyTuple_Check(p) ? " (make one: ember.tensor(values))" : ""))
      .with("op", std::string(op));
}

[[noreturn]] void throw_float_into_int(const char* op, DType dtype) {
  throw Error(ErrorKind::DTypeMismatch,
              std::string(op) + " in place: a Python float cannot be written into a tensor of " +
                  "dtype " + dtype_name(dtype) + "; convert first: t = t.to_dtype(ember.float32)")
      .with("op", std::string(op))
      .with("lhs", dtype)
      .with("rhs", DType::F32);
}

bool big(const Tensor& a, const Tensor& b) {
  return a.numel() >= kReleaseGilNumel || b.numel() >= kReleaseGilNumel;
}

Tensor reversed_dims(const Tensor& t) {
  Dims order;
  for (int64_t d = t.ndim(); d-- > 0;) order.push_back(d);
  return permute(t, order);
}

// ---- moves

// "cpu", "metal:1", "CUDA" name devices; anything else passed to to() is a dtype.
bool looks_like_device(py::handle obj) {
  if (py::isinstance<BackendDevice>(obj)) return true;
  if (!PyUnicode_Check(obj.ptr())) return false;
  std::string s = obj.cast<std::string>();
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const DeviceKind* kind : device_kinds())
    if (s.rfind(kind->name, 0) == 0) return true;
  return false;
}

// A move that changes nothing returns the very same Python object, as the design says.
py::object move_to_device(py::object self, py::handle device) {
  const Tensor& t = self.cast<const Tensor&>();
  DevicePtr dev = device_arg(device);
  if (t.device()->same_device(*dev)) return self;
  return py::cast(gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return to_device(t, dev); }));
}

py::object move_to_dtype(py::object self, py::handle dtype) {
  const Tensor& t = self.cast<const Tensor&>();
  DType d = dtype_arg(dtype);
  if (t.dtype() == d) return self;
  return py::cast(gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return to_dtype(t, d); }));
}

// t.to(device), t.to(dtype), t.to(device, dtype), t.to(dtype=..., device=...).
py::object move_to(py::object self, const py::args& args, py::handle dtype, py::handle device) {
  if (args.size() > 2)
    throw Error(ErrorKind::InvalidType, "to: takes at most a device and a dtype, got " +
                                            std::to_string(args.size()) + " arguments")
        .with("op", std::string("to"));
  py::object dev = py::reinterpret_borrow<py::object>(device);
  py::object dt = py::reinterpret_borrow<py::object>(dtype);
  for (py::handle a : args)
    (looks_like_device(a) ? dev : dt) = py::reinterpret_borrow<py::object>(a);
  py::object out = self;
  if (!dt.is_none()) out = move_to_dtype(out, dt);
  if (!dev.is_none()) out = move_to_device(out, dev);
  return out;
}

Tensor copied(const Tensor& t) {
  return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return clone(t); });
}

void bind_properties(py::class_<Tensor>& cls) {
  cls.def_property_readonly("shape", [](const Tensor& t) { return to_tuple(t.shape()); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def("numel", &Tensor::numel)
      .def_property_readonly("strides",
                             [](const Tensor& t) { return to_tuple(t.layout().strides()); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def_property_readonly("T", &reversed_dims, "The dims reversed (the transpose for 2-D).")
      .def("__len__", [](const Tensor& t) {
        if (t.ndim() == 0)
          throw Error(ErrorKind::InvalidType, "len() of a 0-d tensor; use t.numel()")
              .with("op", std::string("len"));
        return t.shape()[0];
      });
}

void bind_moves(py::class_<Tensor>& cls) {
  cls.def("to_device", &move_to_device, py::arg("device"))
      .def("to_dtype", &move_to_dtype, py::arg("dtype"))
      .def("to", &move_to, py::kw_only(), py::arg("dtype") = py::none(),
           py::arg("device") = py::none())
      .def("contiguous",
           [](const Tensor& t) {
             return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return contiguous(t); });
           })
      .def("clone", &copied)
      // copy.copy shares the storage like any view; deepcopy copies the elements.
      .def("__copy__", [](const Tensor& t) { return t; })
      .def(
          "__deepcopy__", [](const Tensor& t, py::handle) { return copied(t); }, py::arg("memo"))
      .def(
          "copy_",
          [](py::object self, const Tensor& src, bool /*non_blocking*/) {
            const Tensor& t = self.cast<const Tensor&>();
            if (autograd::wants_grad({&t, &src})) {  // recorded: t takes src's values and history
              const Tensor r = gil_free_if(t.numel() >= kReleaseGilNumel, [&] {
                return autograd::assign_with("copy_", t, [&](const Tensor&) {
                  const Tensor moved = to_dtype(to_device(src, t.device()), t.dtype());
                  return contiguous(broadcast_to(moved, t.shape()));
                }, false);
              });
              autograd::adopt(self.cast<Tensor&>(), r);
              return self;
            }
            gil_free_if(t.numel() >= kReleaseGilNumel, [&] { copy_from(t, src); });
            return self;
          },
          py::arg("src"), py::arg("non_blocking").noconvert() = false,
          "Copies src's values into this tensor (broadcast and cast), from any device; "
          "returns it. The copy is done on return (non_blocking is taken for PyTorch's sake).")
      .def(
          "pin_memory",
          [](const Tensor& t) {
            return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return pin_memory(t); });
          },
          "A copy in page-locked host memory: moves between it and a CUDA device are DMA'd "
          "directly, without staging.")
      .def("is_pinned", &is_pinned, "Whether this host tensor is in page-locked memory.");
}

// ---- operators

template <CmpOp op>
py::object cmp_operator(const Tensor& t, py::handle other) {
  if (is_tensor(other)) {
    const Tensor& o = other.cast<const Tensor&>();
    return py::cast(gil_free_if(big(t, o), [&] { return cmp(op, t, o); }));
  }
  auto ab = operands(t, other, false, cmp_name(op));
  if (!ab)  // == and != with anything else fall back to identity, as Python's
    return op == CmpOp::Eq || op == CmpOp::Ne ? not_implemented()
                                              : unsupported_operand(other, cmp_name(op));
  return py::cast(
      gil_free_if(big(ab->first, ab->second), [&] { return cmp(op, ab->first, ab->second); }));
}

// t @ other (or other @ t, `left`): a tensor or an ndarray, which is read as the CPU
// tensor ember.tensor makes of it (with a GPU tensor: DeviceMismatchError).
py::object matmul_operator(const Tensor& t, py::handle other, bool left) {
  if (!is_tensor(other) && !is_ndarray(other.ptr())) return unsupported_operand(other, "matmul");
  const Tensor o = is_tensor(other)
                       ? other.cast<Tensor>()
                       : py::module_::import("ember").attr("tensor")(other).cast<Tensor>();
  const Tensor& a = left ? o : t;
  const Tensor& b = left ? t : o;
  bool heavy = a.numel() * (b.ndim() ? b.shape().back() : 1) >= kReleaseGilNumel;
  return py::cast(gil_free_if(heavy, [&] { return matmul(a, b); }));
}

Tensor unary_operator(UnaryOp op, const Tensor& t) {
  return gil_free_if(t.numel() >= kReleaseGilNumel, [&] { return unary(op, t); });
}

template <BinaryOp op>
void def_arithmetic(py::class_<Tensor>& cls, const char* name, const char* rname,
                    const char* iname) {
  cls.def(
      name, [](const Tensor& t, py::handle o) { return binary_operator_call(op, t, o, false); },
      py::is_operator());
  cls.def(
      rname, [](const Tensor& t, py::handle o) { return binary_operator_call(op, t, o, true); },
      py::is_operator());
  cls.def(
      iname, [](py::object self, py::handle o) { return inplace_operator_call(op, self, o); },
      py::is_operator());
}

void bind_operators(py::class_<Tensor>& cls) {
  def_arithmetic<BinaryOp::Add>(cls, "__add__", "__radd__", "__iadd__");
  def_arithmetic<BinaryOp::Sub>(cls, "__sub__", "__rsub__", "__isub__");
  def_arithmetic<BinaryOp::Mul>(cls, "__mul__", "__rmul__", "__imul__");
  def_arithmetic<BinaryOp::Div>(cls, "__truediv__", "__rtruediv__", "__itruediv__");
  def_arithmetic<BinaryOp::FloorDivide>(cls, "__floordiv__", "__rfloordiv__", "__ifloordiv__");
  def_arithmetic<BinaryOp::Remainder>(cls, "__mod__", "__rmod__", "__imod__");
  def_arithmetic<BinaryOp::Pow>(cls, "__pow__", "__rpow__", "__ipow__");
  def_arithmetic<BinaryOp::BitwiseAnd>(cls, "__and__", "__rand__", "__iand__");
  def_arithmetic<BinaryOp::BitwiseOr>(cls, "__or__", "__ror__", "__ior__");
  def_arithmetic<BinaryOp::BitwiseXor>(cls, "__xor__", "__rxor__", "__ixor__");
  cls.def(
      "__matmul__", [](const Tensor& t, py::handle o) { return matmul_operator(t, o, false); },
      py::is_operator());
  cls.def(
      "__rmatmul__", [](const Tensor& t, py::handle o) { return matmul_operator(t, o, true); },
      py::is_operator());
  // Identity hash (tensors compare elementwise, so equality cannot define it).
  // Defined before __eq__, which would otherwise make the class unhashable.
  cls.def("__hash__",
          [](py::handle self) { return py::int_(reinterpret_cast<intptr_t>(self.ptr())); });
  cls.def("__eq__", &cmp_operator<CmpOp::Eq>, py::is_operator());
  cls.def("__ne__", &cmp_operator<CmpOp::Ne>, py::is_operator());
  cls.def("__lt__", &cmp_operator<CmpOp::Lt>, py::is_operator());
  cls.def("__le__", &cmp_operator<CmpOp::Le>, py::is_operator());
  cls.def("__gt__", &cmp_operator<CmpOp::Gt>, py::is_operator());
  cls.def("__ge__", &cmp_operator<CmpOp::Ge>, py::is_operator());
  cls.def("__neg__", [](const Tensor& t) { return unary_operator(UnaryOp::Neg, t); });
  cls.def("__abs__", [](const Tensor& t) { return unary_operator(UnaryOp::Abs, t); });
  cls.def("__invert__", [](const Tensor& t) { return unary_operator(UnaryOp::BitwiseNot, t); });
  cls.def("__pos__", [](py::object self) { return self; });
}

}  // namespace

// ---- the arithmetic operators, also called by the number slots (number_slots.cpp)

py::object binary_operator_call(BinaryOp op, const Tensor& t, py::handle other, bool reflected) {
  if (is_tensor(other)) {  // the common case, without copying either tensor
    const Tensor& o = other.cast<const Tensor&>();
    return py::cast(reflected ? run_binary(op, o, t) : run_binary(op, t, o));
  }
  if (auto r = number_operand(op, t, other, reflected)) return py::cast(*r);
  auto ab = operands(t, other, reflected, binary_name(op));
  if (!ab) return unsupported_operand(other, binary_name(op));
  return py::cast(run_binary(op, ab->first, ab->second, std::nullopt));
}

// t op= other writes into t and returns the same Python object.
py::object inplace_operator_call(BinaryOp op, py::object self, py::handle other) {
  const Tensor& t = self.cast<const Tensor&>();
  if (!dtype_is_float(t.dtype()) && !is_tensor(other) && read_number(other).kind == Number::Float)
    throw_float_into_int(binary_name(op), t.dtype());
  auto ab = operands(t, other, false, binary_name(op));
  if (!ab) return unsupported_operand(other, binary_name(op));
  if (autograd::wants_grad({&t, &ab->second})) {  // recorded as t = t op other
    const Tensor r = gil_free_if(t.numel() >= kReleaseGilNumel,
                                 [&] { return autograd::assign(op, t, ab->second); });
    autograd::adopt(self.cast<Tensor&>(), r);
    return self;
  }
  run_binary(op, ab->first, ab->second, t);
  return self;
}

py::class_<Tensor> bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor",
                         "An n-dimensional array on one Device. Create one with ember.tensor, "
                         "ember.zeros, ...");
  bind_properties(cls);
  bind_moves(cls);
  bind_operators(cls);
  return cls;
}

}  // namespace ember::python
