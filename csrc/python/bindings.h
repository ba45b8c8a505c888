// Shared pieces of the ember._core bindings: argument conversion from Python values
// and the per-file registration functions. Bindings and translation only, no kernels.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "core/device.h"
#include "core/tensor.h"
#include "core/tracking.h"

namespace ember::python {

namespace py = pybind11;

// Below this many elements releasing the GIL costs more than the kernel itself.
constexpr int64_t kReleaseGilNumel = 32768;

// Whether reading `t` on the host may wait for a device's queue (then without the GIL).
inline bool read_may_wait(const Tensor& t) {
  const DeviceKind* k = find_kind(t.device()->kind());
  return !(k && k->host);
}

// Runs fn with the GIL released when `big`; tiny tensors keep it (cheaper).
template <typename Fn>
decltype(auto) gil_free_if(bool big, Fn&& fn) {
  if (big) {
    py::gil_scoped_release release;
    return fn();
  }
  return fn();
}

// ---- registration, one per file (module.cpp calls them in this order)
void bind_errors(py::module_& m);
void install_blocking_hooks();  // blocking.cpp: Ctrl-C in long waits
void bind_dtype(py::module_& m);
void bind_device(py::module_& m);
py::class_<Tensor> bind_tensor(py::module_& m);
void bind_index(py::class_<Tensor>& cls);
void bind_ops(py::module_& m, py::class_<Tensor>& cls);
void bind_ops_more(py::module_& m, py::class_<Tensor>& cls);  // ops_more.cpp: composed ops
void bind_ops_misc(py::module_& m, py::class_<Tensor>& cls);  // ops_misc.cpp
void bind_numpy(py::module_& m, py::class_<Tensor>& cls);
void bind_dlpack(py::module_& m, py::class_<Tensor>& cls);
void bind_files(py::module_& m);  // files.cpp: safetensors, pickle bytes
void bind_autograd(py::module_& m, py::class_<Tensor>& cls);  // autograd.cpp

// ---- errors.cpp
// Makes `cls.__new__(cls)` (and cls()) raise InvalidTypeError saying `how` to get one:
// an instance made that way has no C++ value behind it, and any use would crash.
void refuse_bare_new(py::module_& m, const char* name, const char* how);
// Wraps every function and method of m so that pybind11's own TypeError for arguments
// it cannot convert ("incompatible function arguments") arrives as InvalidTypeError.
void translate_call_errors(py::module_& m);

// ---- tensor.cpp: t op other (reflected: other op t) and t op= other, as the operators
// do; NotImplemented for an operand they do not take.
py::object binary_operator_call(BinaryOp op, const Tensor& t, py::handle other, bool reflected);
py::object inplace_operator_call(BinaryOp op, py::object self, py::handle other);

// ---- number_slots.cpp
// a + b (and the other binary operators) with a tensor, without the method lookup and
// pybind11's dispatcher. After every setattr on the class: setting __add__ resets its slot.
void install_number_slots(py::class_<Tensor>& cls);

// ---- dtype.cpp
DType dtype_arg(py::handle obj);  // a DType, a numpy dtype or type, or a name ("f4")
std::optional<DType> optional_dtype(py::handle obj);  // None -> nullopt
py::object dtype_object(DType d);                     // the module's singleton for d

// ---- device.cpp
DevicePtr device_arg(py::handle obj);  // a Device, a spec string, or None (the CPU)
DevicePtr stamped(DevicePtr device);   // records the Python caller as its creation site

// ---- args.cpp: Python values as op arguments; bad values raise InvalidArgumentError,
// values of the wrong type InvalidTypeError
bool is_tensor(py::handle obj);
bool is_ndarray(PyObject* o);
int64_t int_arg(py::handle obj, const char* op);
Shape shape_arg(py::handle obj, const char* op);         // an int or a tuple/list of ints
Shape shape_args(const py::args& args, const char* op);  // f(2, 3) or f((2, 3))
Dims dims_arg(py::handle obj, const char* op);           // None (all), an int, or a tuple
// axis= is numpy's name for dim= (PyTorch takes it too): `axis` when given, else `dim`;
// both given is an InvalidArgumentError naming op.
py::handle dim_or_axis(py::handle dim, py::handle axis, const char* op);
// One dim from dim= or axis= (as dim_or_axis); `fallback` when neither is given.
int64_t one_dim(py::handle dim, py::handle axis, int64_t fallback, const char* op);
// keepdims= likewise for keepdim=: keepdims when given (keepdim=True as well is an error).
bool keepdim_or_keepdims(bool keepdim, py::handle keepdims, const char* op);

// A Python number (int, float, bool, numpy scalar, 0-d ndarray) read as an operand.
struct Number {
  enum Kind { None, Int, BigInt, Float } kind = None;
  int64_t i = 0;         // Int
  double f = 0;          // Float, and the value of Int / BigInt as a double
  bool is_bool = false;  // True / False (or numpy's): keeps a tensor's dtype, bool included
};
Number read_number(py::handle obj);
// A 0-d tensor holding n with the given dtype on the given device.
Tensor number_tensor(const Number& n, DType dtype, const DevicePtr& device, const char* op);
// The two operands of a binary op, a number taking the tensor's dtype (a float with
// an integer tensor promotes both to float32; a 0-d ndarray is a number), an ndarray
// the CPU tensor ember.tensor makes of it; nullopt when `other` is none of these.
// t op other through core's binary_number when other is a Python number and t a float
// tensor (one pass, no 0-d tensor); nullopt when that does not apply.
std::optional<Tensor> number_operand(BinaryOp op, const Tensor& t, py::handle other,
                                     bool other_left);
std::optional<std::pair<Tensor, Tensor>> operands(const Tensor& t, py::handle other,
                                                  bool other_left, const char* op);
// ids for index_select/gather: a Tensor, or anything ember.tensor takes, on t's device.
Tensor index_arg(py::handle ids, const Tensor& t);

// ---- ops_binary.cpp
void bind_elementwise_binary(py::module_& m, py::class_<Tensor>& cls);  // called by bind_ops
// A binary op with the GIL released for large operands; `out` receives the result.
Tensor run_binary(BinaryOp op, const Tensor& a, const Tensor& b,
                  const std::optional<Tensor>& out = std::nullopt);
// out= checked to be a Tensor (or None), while the GIL is held.
std::optional<Tensor> out_arg(py::handle out, const char* op);

// ---- ops_sort.cpp
void bind_sort(py::module_& m, py::class_<Tensor>& cls);  // called by bind_ops

// ---- ops_scatter.cpp
void bind_scatter(py::module_& m, py::class_<Tensor>& cls);  // called by bind_ops

inline bool big(const Tensor& t) {  // large enough to release the GIL around its op
  return t.numel() >= kReleaseGilNumel;
}
inline py::object borrowed(py::handle h) {
  return py::reinterpret_borrow<py::object>(h);
}

// ---- numpy.cpp
py::object to_numpy(const Tensor& t);  // a fresh array; bfloat16 comes back as float32

// ---- tracking.cpp
// Records the calling user code's file:line on t's storage, if it has no site yet.
void record_site(const Tensor& t);
void bind_tracking(py::module_& m, py::class_<Tensor>& cls);

}  // namespace ember::python

namespace pybind11 {
// pybind11 calls this for every Tensor it hands to Python, which is where a tensor
// meets user code; with tracking off it costs one relaxed load.
template <>
struct polymorphic_type_hook<ember::Tensor> {
  static const void* get(const ember::Tensor* src, const std::type_info*&) {
    if (src && ember::tracking::enabled()) ember::python::record_site(*src);
    return src;
  }
};
}  // namespace pybind11
