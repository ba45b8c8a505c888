// Tensor's number slots: `a + b` with an ember.Tensor goes straight to the operator's
// C++ code. The slot Python builds from a bound __add__ looks the method up, binds it
// and runs pybind11's dispatcher on every call, which is most of a small tensor's add.
#include "bindings.h"

namespace ember::python {

namespace {

PyTypeObject* tensor_py_type = nullptr;

// The Tensor behind obj when obj is an ember.Tensor with its value built; else null.
// Every Tensor is exactly that type: subclasses cannot be instantiated (test_bare_new).
const Tensor* exact_tensor(PyObject* obj) {
  if (Py_TYPE(obj) != tensor_py_type) return nullptr;
  auto vh = reinterpret_cast<py::detail::instance*>(obj)->get_value_and_holder();
  return vh.holder_constructed() ? vh.template value_ptr<Tensor>() : nullptr;
}

// Runs fn; a C++ exception becomes the Python error pybind11's dispatcher would set.
template <typename Fn>
PyObject* guarded(Fn&& fn) {
  try {
    return fn().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    py::detail::try_translate_exceptions();
  }
  return nullptr;
}

template <BinaryOp op>
PyObject* forward(PyObject* a, PyObject* b) {
  const Tensor* x = exact_tensor(a);
  const Tensor* y = exact_tensor(b);
  // two tensors, the hot case: without the caster's type lookup for the second
  if (x && y) return guarded([&] { return py::cast(run_binary(op, *x, *y)); });
  if (x) return guarded([&] { return binary_operator_call(op, *x, b, false); });
  if (y) return guarded([&] { return binary_operator_call(op, *y, a, true); });
  Py_RETURN_NOTIMPLEMENTED;
}

template <BinaryOp op>
PyObject* inplace(PyObject* a, PyObject* b) {
  if (!exact_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  return guarded(
      [&] { return inplace_operator_call(op, py::reinterpret_borrow<py::object>(a), b); });
}

template <BinaryOp op>
void install(binaryfunc PyNumberMethods::*fwd, binaryfunc PyNumberMethods::*inp) {
  PyNumberMethods& nb = *tensor_py_type->tp_as_number;
  nb.*fwd = &forward<op>;
  nb.*inp = &inplace<op>;
}

}  // namespace

void install_number_slots(py::class_<Tensor>& cls) {
  tensor_py_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  using N = PyNumberMethods;
  using B = BinaryOp;
  install<B::Add>(&N::nb_add, &N::nb_inplace_add);
  install<B::Sub>(&N::nb_subtract, &N::nb_inplace_subtract);
  install<B::Mul>(&N::nb_multiply, &N::nb_inplace_multiply);
  install<B::Div>(&N::nb_true_divide, &N::nb_inplace_true_divide);
  install<B::FloorDivide>(&N::nb_floor_divide, &N::nb_inplace_floor_divide);
  install<B::Remainder>(&N::nb_remainder, &N::nb_inplace_remainder);
  install<B::BitwiseAnd>(&N::nb_and, &N::nb_inplace_and);
  install<B::BitwiseOr>(&N::nb_or, &N::nb_inplace_or);
  install<B::BitwiseXor>(&N::nb_xor, &N::nb_inplace_xor);
}

}  // namespace ember::python
