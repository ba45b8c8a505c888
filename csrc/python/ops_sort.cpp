// Ops along one dim: cumsum / cumprod, and sort / argsort / topk with PyTorch's
// signatures; sort and topk give named pairs like torch.return_types.sort / .topk.
#include "bindings.h"

namespace ember::python {

namespace {

template <ScanOp op>
Tensor scan_fn(const Tensor& t, py::handle dim, py::handle dtype, py::handle axis) {
  const char* name = op == ScanOp::Sum ? "cumsum" : "cumprod";
  if (dim.is_none() && axis.is_none())  // a missing argument: PyTorch's TypeError
    throw_invalid_type(
        name, std::string("needs the dim to scan: ") + name + "(dim) or axis=", "NoneType");
  const int64_t d = one_dim(dim, axis, 0, name);
  const std::optional<DType> out = optional_dtype(dtype);
  return gil_free_if(big(t), [&] { return scan(op, t, d, out); });
}

// The named pair type ember.return_types.<name> (values, indices), looked up once and
// kept for the process.
py::object pair_type(const char* name) {
  return py::module_::import("ember.return_types").attr(name);
}

py::object named_pair(const py::object& type, SortResult r) {
  return type(py::cast(std::move(r.values)), py::cast(std::move(r.indices)));
}

py::object sort_fn(const Tensor& t, py::handle dim, bool descending, bool /*stable*/,
                   py::handle axis) {
  static const auto* type = new py::object(pair_type("sort"));  // leaked: outlives exit
  const int64_t d = one_dim(dim, axis, -1, "sort");
  SortResult r = gil_free_if(big(t), [&] { return sort(t, d, descending); });
  return named_pair(*type, std::move(r));
}

Tensor argsort_fn(const Tensor& t, py::handle dim, bool descending, bool /*stable*/,
                  py::handle axis) {
  const int64_t d = one_dim(dim, axis, -1, "argsort");
  return gil_free_if(big(t), [&] { return argsort(t, d, descending); });
}

py::object topk_fn(const Tensor& t, py::handle k, py::handle dim, bool largest, bool /*sorted*/,
                   py::handle axis) {
  static const auto* type = new py::object(pair_type("topk"));
  const int64_t kk = int_arg(k, "topk"), d = one_dim(dim, axis, -1, "topk");
  SortResult r = gil_free_if(big(t), [&] { return topk(t, kk, d, largest); });
  return named_pair(*type, std::move(r));
}

// Registers fn as Tensor method `name` and as ember.name(input, ...).
template <typename Fn, typename... Extra>
void def_op(py::module_& m, py::class_<Tensor>& cls, const char* name, Fn&& fn, const char* doc,
            const Extra&... extra) {
  cls.def(name, fn, extra..., doc);
  m.def(name, fn, py::arg("input"), extra..., doc);
}

}  // namespace

void bind_sort(py::module_& m, py::class_<Tensor>& cls) {
  auto dtype = py::arg("dtype") = py::none();
  auto axis = py::arg("axis") = py::none();  // numpy's name for dim
  auto dim = py::arg("dim") = py::none();    // the op's default dim when None
  def_op(m, cls, "cumsum", &scan_fn<ScanOp::Sum>,
         "Inclusive sum along `dim` (or axis=); integers accumulate in int64 unless `dtype` "
         "is given (the input is then cast to it first).",
         dim, py::kw_only(), dtype, axis);
  def_op(m, cls, "cumprod", &scan_fn<ScanOp::Prod>,
         "Inclusive product along `dim` (or axis=); integers accumulate in int64 unless "
         "`dtype` is given (the input is then cast to it first).",
         dim, py::kw_only(), dtype, axis);
  auto descending = py::arg("descending").noconvert() = false;
  auto stable = py::arg("stable").noconvert() = false;
  def_op(m, cls, "sort", &sort_fn,
         "The named pair (values, indices) of the values sorted along `dim` (default -1, or "
         "axis=); always a stable "
         "sort (equal values keep their order); NaN sorts above every number.",
         dim, descending, stable, py::kw_only(), axis);
  def_op(m, cls, "argsort", &argsort_fn,
         "The int64 positions that sort `dim` (stable; NaN above every number).", dim, descending,
         stable, py::kw_only(), axis);
  def_op(m, cls, "topk", &topk_fn,
         "The named pair (values, indices) of the k largest (smallest unless `largest`) "
         "along `dim`, in sorted order; ties go to the first position.",
         py::arg("k"), dim, py::arg("largest").noconvert() = true, py::arg("sorted").noconvert() = true, py::kw_only(),
         axis);
}

}  // namespace ember::python
