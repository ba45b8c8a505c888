// Bindings of atan2's numpy alias, randint, dot, mv, interpolate and repeat_interleave,
// with PyTorch's signatures.
#include <pybind11/stl.h>

#include "bindings.h"

namespace ember::python {

namespace {

// ---- randint

struct IntRange {
  int64_t low = 0, high = 0;
};

// PyTorch's overloads: (high) or (low, high) positionally, either also by keyword.
IntRange int_range(const std::vector<py::handle>& pos, py::handle low, py::handle high,
                   const char* op) {
  const std::string usage = std::string(op) + "(high, ...) or " + op + "(low, high, ...)";
  if (pos.size() > 2 || (pos.size() == 2 && !(low.is_none() && high.is_none())) ||
      (pos.size() == 1 && !high.is_none() && !low.is_none()))
    throw_invalid(op, "takes " + usage + ", got too many bounds");
  IntRange r;
  if (pos.size() == 2) return {int_arg(pos[0], op), int_arg(pos[1], op)};
  py::handle h = pos.size() == 1 ? (high.is_none() ? pos[0] : high) : high;
  py::handle l = pos.size() == 1 && !high.is_none() ? pos[0] : low;
  if (h.is_none())  // a missing argument
    throw Error(ErrorKind::InvalidType, std::string(op) + ": needs high: " + usage)
        .with("op", std::string(op));
  r.high = int_arg(h, op);
  r.low = l.is_none() ? 0 : int_arg(l, op);
  return r;
}

Tensor make_randint(const IntRange& r, const Shape& s, DType dt, const DevicePtr& dev) {
  return gil_free_if(shape_numel(s) >= kReleaseGilNumel,
                     [&] { return randint(r.low, r.high, s, dt, dev); });
}

// randint(high, size) / randint(low, high, size); size= may also be a keyword.
Tensor randint_fn(const py::args& args, py::handle low, py::handle high, py::handle size,
                  py::handle dtype, py::handle device) {
  std::vector<py::handle> pos(args.begin(), args.end());
  if (size.is_none()) {
    // randint() or randint(10): the size is missing (a TypeError, as any missing argument)
    const bool lone_bound = pos.size() == 1 && low.is_none() && high.is_none() &&
                            !PySequence_Check(pos[0].ptr());
    if (pos.empty() || lone_bound)
      throw Error(ErrorKind::InvalidType,
                  "randint: needs a size: randint(high, size) or randint(low, high, size)")
          .with("op", std::string("randint"));
    size = pos.back();
    pos.pop_back();
  }
  Shape s = shape_arg(size, "randint");
  IntRange r = int_range(pos, low, high, "randint");
  DType dt = dtype.is_none() ? DType::I64 : dtype_arg(dtype);
  return make_randint(r, s, dt, device_arg(device));
}

// randint_like(input, high) / randint_like(input, low, high): input's shape, dtype, device.
Tensor randint_like_fn(const Tensor& t, const py::args& args, py::handle low, py::handle high,
                       py::handle dtype, py::handle device) {
  std::vector<py::handle> pos(args.begin(), args.end());
  IntRange r = int_range(pos, low, high, "randint_like");
  DType dt = dtype.is_none() ? t.dtype() : dtype_arg(dtype);
  return make_randint(r, t.shape(), dt, device.is_none() ? t.device() : device_arg(device));
}

// ---- dot, mv

Tensor dot_fn(const Tensor& a, const Tensor& b) {
  return gil_free_if(big(a), [&] { return dot(a, b); });
}

Tensor mv_fn(const Tensor& mat, const Tensor& vec) {
  return gil_free_if(big(mat), [&] { return mv(mat, vec); });
}

// ---- interpolate

// One float per spatial dim: a number repeats, a tuple or list gives each.
std::vector<double> scales_arg(py::handle obj, size_t spatial) {
  if (obj.is_none()) return {};
  auto one = [](py::handle v) {
    Number n = read_number(v);
    if (n.kind == Number::None)
      throw_invalid_type("interpolate", "scale_factor must be a number or a tuple of numbers",
                         Py_TYPE(v.ptr())->tp_name);
    return n.f;
  };
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr()))
    return std::vector<double>(spatial, one(obj));
  std::vector<double> out;
  for (py::handle v : obj) out.push_back(one(v));
  return out;
}

// One size per spatial dim: an int repeats, a tuple or list gives each.
Shape sizes_arg(py::handle obj, size_t spatial) {
  if (obj.is_none()) return {};
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr()))
    return Shape(spatial, int_arg(obj, "interpolate"));
  return shape_arg(obj, "interpolate");
}

Tensor interpolate_fn(const Tensor& t, py::handle size, py::handle scale_factor,
                      const std::string& mode, std::optional<bool> align_corners) {
  const size_t spatial = t.ndim() > 2 ? size_t(t.ndim() - 2) : 0;
  Shape s = sizes_arg(size, spatial);
  const bool listed = PyTuple_Check(size.ptr()) || PyList_Check(size.ptr());
  if (listed && py::len(size) == 0)  // an empty tuple is a size, not "no size"
    throw_invalid("interpolate", "size must name one size per spatial dim, got ()");
  std::vector<double> f = scales_arg(scale_factor, spatial);
  return gil_free_if(big(t), [&] { return interpolate(t, s, f, mode, align_corners); });
}

// ---- repeat_interleave (int repeats only)

Tensor repeat_interleave_fn(const Tensor& t, py::handle repeats, py::handle dim) {
  const int64_t r = int_arg(repeats, "repeat_interleave");
  std::optional<int64_t> d;
  if (!dim.is_none()) d = int_arg(dim, "repeat_interleave");
  return gil_free_if(big(t), [&] { return repeat_interleave(t, r, d); });
}

}  // namespace

void bind_ops_misc(py::module_& m, py::class_<Tensor>& cls) {
  // numpy's name for atan2 (PyTorch has both); the op table binds atan2 itself.
  m.attr("arctan2") = m.attr("atan2");
  cls.attr("arctan2") = cls.attr("atan2");

  auto low = py::arg("low") = py::none(), high = py::arg("high") = py::none();
  auto dtype = py::arg("dtype") = py::none(), device = py::arg("device") = py::none();
  m.def("randint", &randint_fn, low, high, py::arg("size") = py::none(), dtype, device,
        "randint(low=0, high, size, *, dtype=int64, device=None): integers uniform in "
        "[low, high), from the device's stream (ember.manual_seed).");
  m.def("randint_like", &randint_like_fn, py::arg("input"), low, high, dtype, device,
        "randint_like(input, low=0, high, *, dtype=None, device=None): input's shape, and its "
        "dtype and device unless given.");

  cls.def("dot", &dot_fn, py::arg("other"));
  m.def("dot", &dot_fn, py::arg("input"), py::arg("other"),
        "dot(input, other): the inner product of two 1-D tensors of one length and dtype.");
  cls.def("mv", &mv_fn, py::arg("vec"));
  m.def("mv", &mv_fn, py::arg("input"), py::arg("vec"),
        "mv(input, vec): a 2-D matrix times a 1-D vector.");

  m.def("interpolate", &interpolate_fn, py::arg("input"), py::arg("size") = py::none(),
        py::arg("scale_factor") = py::none(), py::arg("mode") = "nearest",
        py::arg("align_corners") = py::none(),
        "interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None): "
        "PyTorch's resampling of (N, C, W) or (N, C, H, W); modes 'nearest', 'linear' (3-D), "
        "'bilinear' (4-D).");

  const char* doc =
      "repeat_interleave(input, repeats, dim=None): each element `repeats` (an int) times "
      "along dim, or of the flattened input without one.";
  cls.def("repeat_interleave", &repeat_interleave_fn, py::arg("repeats"),
          py::arg("dim") = py::none(), doc);
  m.def("repeat_interleave", &repeat_interleave_fn, py::arg("input"), py::arg("repeats"),
        py::arg("dim") = py::none(), doc);
}

}  // namespace ember::python
