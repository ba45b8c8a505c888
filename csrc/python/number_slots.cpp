// Tensor's number slots: `a + b` with an ember.Tensor goes straight to the operator's
// C++ code. The slot Python builds from a bound __add__ looks the method up, binds it
// and runs pybind11's dispatcher on every call, which is most of a small tensor's add.
// A subclass of Tensor on either side keeps Python's protocol, through its methods.
#include "bindings.h"

namespace ember::python {

namespace {

PyTypeObject* tensor_py_type = nullptr;

// The Tensor behind obj when obj is exactly an ember.Tensor with its value built; else null.
const Tensor* exact_tensor(PyObject* obj) {
  if (Py_TYPE(obj) != tensor_py_type) return nullptr;
  auto vh = reinterpret_cast<py::detail::instance*>(obj)->get_value_and_holder();
  return vh.holder_constructed() ? vh.template value_ptr<Tensor>() : nullptr;
}

bool any_tensor(PyObject* obj) {
  return PyObject_TypeCheck(obj, tensor_py_type);
}

// The Python error for the exception being handled (as pybind11's dispatcher would set).
PyObject* raise_current() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (...) {
    set_python_error(std::current_exception());
  }
  return nullptr;
}

template <typename Fn>
PyObject* guarded(Fn&& fn) {
  try {
    return fn().release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyObject* call_method(PyObject* self, PyObject* name, PyObject* other) {
  PyObject* args[] = {self, other};
  return PyObject_VectorcallMethod(name, args, 2, nullptr);
}

// Python's protocol for a binary slot, as its generated slot runs it: a subclass on the
// right is asked first, then the left operand, then the right.
PyObject* by_methods(PyObject* a, PyObject* b, PyObject* name, PyObject* rname) {
  bool left = any_tensor(a), right = any_tensor(b);
  if (left && right && Py_TYPE(a) != Py_TYPE(b) && PyType_IsSubtype(Py_TYPE(b), Py_TYPE(a))) {
    PyObject* r = call_method(b, rname, a);
    if (r != Py_NotImplemented) return r;
    Py_DECREF(r);
    right = false;
  }
  if (left) {
    PyObject* r = call_method(a, name, b);
    if (r != Py_NotImplemented || Py_TYPE(a) == Py_TYPE(b)) return r;
    Py_DECREF(r);
  }
  if (right) return call_method(b, rname, a);
  Py_RETURN_NOTIMPLEMENTED;
}

struct Names {
  PyObject* name;
  PyObject* rname;
  PyObject* iname;
};

template <BinaryOp op>
Names names;

template <BinaryOp op>
PyObject* forward(PyObject* a, PyObject* b) {
  const Tensor* x = exact_tensor(a);
  const Tensor* y = exact_tensor(b);
  if (x && y) return guarded([&] { return py::cast(run_binary(op, *x, *y)); });
  if (x && !any_tensor(b)) return guarded([&] { return binary_operator_call(op, *x, b, false); });
  if (y && !any_tensor(a)) return guarded([&] { return binary_operator_call(op, *y, a, true); });
  return by_methods(a, b, names<op>.name, names<op>.rname);
}

template <BinaryOp op>
PyObject* inplace(PyObject* a, PyObject* b) {
  if (!exact_tensor(a)) return call_method(a, names<op>.iname, b);
  return guarded(
      [&] { return inplace_operator_call(op, py::reinterpret_borrow<py::object>(a), b); });
}

template <BinaryOp op>
void install(const char* name, const char* rname, const char* iname,
             binaryfunc PyNumberMethods::*fwd, binaryfunc PyNumberMethods::*inp) {
  // Interned for the life of the process, as the type that uses them.
  names<op> = {PyUnicode_InternFromString(name), PyUnicode_InternFromString(rname),
               PyUnicode_InternFromString(iname)};
  PyNumberMethods& nb = *tensor_py_type->tp_as_number;
  nb.*fwd = &forward<op>;
  nb.*inp = &inplace<op>;
}

}  // namespace

void install_number_slots(py::class_<Tensor>& cls) {
  tensor_py_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  using N = PyNumberMethods;
  using B = BinaryOp;
  install<B::Add>("__add__", "__radd__", "__iadd__", &N::nb_add, &N::nb_inplace_add);
  install<B::Sub>("__sub__", "__rsub__", "__isub__", &N::nb_subtract, &N::nb_inplace_subtract);
  install<B::Mul>("__mul__", "__rmul__", "__imul__", &N::nb_multiply, &N::nb_inplace_multiply);
  install<B::Div>("__truediv__", "__rtruediv__", "__itruediv__", &N::nb_true_divide,
                  &N::nb_inplace_true_divide);
  install<B::FloorDivide>("__floordiv__", "__rfloordiv__", "__ifloordiv__", &N::nb_floor_divide,
                          &N::nb_inplace_floor_divide);
  install<B::Remainder>("__mod__", "__rmod__", "__imod__", &N::nb_remainder,
                        &N::nb_inplace_remainder);
  install<B::BitwiseAnd>("__and__", "__rand__", "__iand__", &N::nb_and, &N::nb_inplace_and);
  install<B::BitwiseOr>("__or__", "__ror__", "__ior__", &N::nb_or, &N::nb_inplace_or);
  install<B::BitwiseXor>("__xor__", "__rxor__", "__ixor__", &N::nb_xor, &N::nb_inplace_xor);
}

}  // namespace ember::python
