// The binary ops and comparisons (the binary and cmp rows of core/ops.def) and where:
// each a Tensor method and an ember function, either side may be a Python number; div
// takes PyTorch's rounding_mode.
#include <string>

#include "bindings.h"

namespace ember::python {

Tensor run_binary(BinaryOp op, const Tensor& a, const Tensor& b, const std::optional<Tensor>& out) {
  bool heavy = a.numel() >= kReleaseGilNumel || b.numel() >= kReleaseGilNumel;
  return gil_free_if(heavy, [&] { return binary(op, a, b, out); });
}

// out= must be resolved while the GIL is held, before a kernel runs without it.
std::optional<Tensor> out_arg(py::handle out, const char* op) {
  if (out.is_none()) return std::nullopt;
  if (!is_tensor(out)) throw_invalid_type(op, "out= must be a Tensor", Py_TYPE(out.ptr())->tp_name);
  return out.cast<Tensor>();
}

namespace {

[[noreturn]] void throw_operand(const char* op, py::handle obj) {
  throw_invalid_type(op, "expected a Tensor, a Python number or a numpy array",
                     Py_TYPE(obj.ptr())->tp_name);
}

py::object binary_call(BinaryOp op, const Tensor& t, py::handle other, bool other_left,
                       py::handle out) {
  const char* name = binary_name(op);
  std::optional<Tensor> dst = out_arg(out, name);
  auto finish = [&](const Tensor& a, const Tensor& b) {
    Tensor r = run_binary(op, a, b, dst);
    return dst ? borrowed(out) : py::cast(std::move(r));
  };
  if (is_tensor(other)) {  // no copies of the operands on the common path
    const Tensor& o = other.cast<const Tensor&>();
    return other_left ? finish(o, t) : finish(t, o);
  }
  if (!dst)
    if (auto r = number_operand(op, t, other, other_left)) return py::cast(std::move(*r));
  auto ab = operands(t, other, other_left, name);
  if (!ab) throw_operand(name, other);
  return finish(ab->first, ab->second);
}

template <BinaryOp op>
py::object binary_method(const Tensor& t, py::handle other, py::handle out) {
  return binary_call(op, t, other, false, out);
}

// ember.add(2, t) is allowed: either side may be the number.
py::object binary_either(BinaryOp op, py::handle a, py::handle b, py::handle out) {
  if (is_tensor(a)) return binary_call(op, a.cast<const Tensor&>(), b, false, out);
  if (is_tensor(b)) return binary_call(op, b.cast<const Tensor&>(), a, true, out);
  throw_invalid_type(binary_name(op), "at least one argument must be a Tensor",
                     Py_TYPE(a.ptr())->tp_name);
}

template <BinaryOp op>
py::object binary_function(py::handle a, py::handle b, py::handle out) {
  return binary_either(op, a, b, out);
}

// The division ops' semantics, for their docstrings (others have none yet).
const char* binary_doc(BinaryOp op) {
  switch (op) {
    case BinaryOp::Div:
      return "True division (also /): integer and uint8 inputs give float32, floats keep "
             "their promotion. rounding_mode='floor' is floor_divide, 'trunc' rounds toward "
             "zero (trunc_divide).";
    case BinaryOp::FloorDivide:
      return "Floor division (also //): rounds toward -inf, as Python, numpy and PyTorch; "
             "floats give numpy's floor_divide (inf and nan included). Integer x // 0 raises "
             "DivisionByZeroError on the CPU; on GPUs (Metal, CUDA), which cannot raise "
             "without waiting for the result, it gives 0 (numpy's value).";
    case BinaryOp::Remainder:
      return "Remainder with the sign of the divisor (also %), as Python's % and "
             "np.remainder (a zero float result takes the divisor's sign too). Integer "
             "x % 0 raises DivisionByZeroError on the CPU and gives 0 on GPUs (Metal, CUDA).";
    case BinaryOp::TruncDivide:
      return "Division rounded toward zero: div(input, other, rounding_mode='trunc'). "
             "Integer division by zero raises DivisionByZeroError on the CPU and gives 0 on "
             "GPUs.";
    default: return "";
  }
}

// div's rounding_mode (PyTorch's): None true division, "floor" floor_divide, "trunc"
// trunc_divide; anything else names the allowed values.
BinaryOp division_op(py::handle mode) {
  if (mode.is_none()) return BinaryOp::Div;
  if (!PyUnicode_Check(mode.ptr()))
    throw_invalid_type("div", "rounding_mode must be None, 'floor' or 'trunc'",
                       Py_TYPE(mode.ptr())->tp_name);
  const std::string m = mode.cast<std::string>();
  if (m == "floor") return BinaryOp::FloorDivide;
  if (m == "trunc") return BinaryOp::TruncDivide;
  throw_invalid("div",
                "rounding_mode must be None (true division), 'floor' or 'trunc', got '" + m + "'");
}

py::object div_method(const Tensor& t, py::handle other, py::handle mode, py::handle out) {
  return binary_call(division_op(mode), t, other, false, out);
}

py::object div_function(py::handle a, py::handle b, py::handle mode, py::handle out) {
  return binary_either(division_op(mode), a, b, out);
}

template <BinaryOp op>
void def_binary(py::module_& m, py::class_<Tensor>& cls) {
  const char* name = binary_name(op);
  const char* doc = binary_doc(op);
  if constexpr (op == BinaryOp::Div) {  // with rounding_mode; true_divide is the plain form
    cls.def(name, &div_method, py::arg("other"), py::kw_only(),
            py::arg("rounding_mode") = py::none(), py::arg("out") = py::none(), doc);
    m.def(name, &div_function, py::arg("input"), py::arg("other"), py::kw_only(),
          py::arg("rounding_mode") = py::none(), py::arg("out") = py::none(), doc);
    name = "true_divide";
    doc = "True division: div(input, other) without a rounding_mode.";
  }
  cls.def(name, &binary_method<op>, py::arg("other"), py::arg("out") = py::none(), doc);
  m.def(name, &binary_function<op>, py::arg("input"), py::arg("other"), py::arg("out") = py::none(),
        doc);
}

Tensor cmp_call(CmpOp op, const Tensor& t, py::handle other, bool other_left) {
  auto ab = operands(t, other, other_left, cmp_name(op));
  if (!ab) throw_operand(cmp_name(op), other);
  bool heavy = big(ab->first) || big(ab->second);
  return gil_free_if(heavy, [&] { return cmp(op, ab->first, ab->second); });
}

template <CmpOp op>
void def_cmp(py::module_& m, py::class_<Tensor>& cls) {
  const char* name = cmp_name(op);
  cls.def(
      name, [](const Tensor& t, py::handle o) { return cmp_call(op, t, o, false); },
      py::arg("other"));
  m.def(
      name,
      [](py::handle a, py::handle b) {
        if (is_tensor(a)) return cmp_call(op, a.cast<const Tensor&>(), b, false);
        if (is_tensor(b)) return cmp_call(op, b.cast<const Tensor&>(), a, true);
        throw_invalid_type(cmp_name(op), "at least one argument must be a Tensor",
                           Py_TYPE(a.ptr())->tp_name);
      },
      py::arg("input"), py::arg("other"));
}

// where(cond, a, b): a or b may be numbers; two numbers take int64 or float32.
Tensor where_fn(const Tensor& cond, py::handle a, py::handle b) {
  std::optional<std::pair<Tensor, Tensor>> ab;
  if (is_tensor(a)) {
    ab = operands(a.cast<const Tensor&>(), b, false, "where");
    if (!ab) throw_operand("where", b);
  } else if (is_tensor(b)) {
    ab = operands(b.cast<const Tensor&>(), a, true, "where");
    if (!ab) throw_operand("where", a);
  } else {
    Number x = read_number(a), y = read_number(b);
    if (x.kind == Number::None) throw_operand("where", a);
    if (y.kind == Number::None) throw_operand("where", b);
    DType dt = x.kind == Number::Float || y.kind == Number::Float ? DType::F32 : DType::I64;
    if (x.is_bool && y.is_bool) dt = DType::Bool;
    ab = std::make_pair(number_tensor(x, dt, cond.device(), "where"),
                        number_tensor(y, dt, cond.device(), "where"));
  }
  return gil_free_if(big(cond) || big(ab->first) || big(ab->second),
                     [&] { return where(cond, ab->first, ab->second); });
}

}  // namespace

void bind_elementwise_binary(py::module_& m, py::class_<Tensor>& cls) {
#define EMBER_BINARY(Enum, name, dtypes) def_binary<BinaryOp::Enum>(m, cls);
#define EMBER_CMP(Enum, name, dtypes) def_cmp<CmpOp::Enum>(m, cls);
#include "core/ops.def"
  m.def("where", &where_fn, py::arg("condition"), py::arg("input"), py::arg("other"));
}

}  // namespace ember::python
