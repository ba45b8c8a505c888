// The scatter family with PyTorch's signatures: scatter / scatter_ (src a tensor or a
// number), scatter_add / scatter_add_, index_add / index_add_, slice_scatter, embedding.
#include "bindings.h"
#include "core/autograd.h"

namespace ember::python {

namespace {

std::string type_name(py::handle obj) {
  return py::str(obj.get_type().attr("__name__"));
}

Tensor tensor_arg(py::handle obj, const char* op, const char* what) {
  if (!is_tensor(obj))
    throw_invalid_type(op, std::string(what) + " must be a Tensor", type_name(obj));
  return obj.cast<Tensor>();
}

// src of scatter: a tensor, or a number spread (stride 0) over the index's shape.
Tensor scatter_src(py::handle src, const Tensor& t, const Tensor& ids, const char* op) {
  if (is_tensor(src)) return src.cast<Tensor>();
  const Number n = read_number(src);
  if (n.kind == Number::None)
    throw_invalid_type(op, "src must be a Tensor or a Python number", type_name(src));
  if (n.kind == Number::Float && !dtype_is_float(t.dtype())) {
    // truncated, as PyTorch's Scalar conversion (and masked_fill), unless it cannot fit
    check_fill_value(op, n.f, t.dtype());
    return broadcast_to(full({}, std::trunc(n.f), t.dtype(), t.device()), ids.shape());
  }
  return broadcast_to(number_tensor(n, t.dtype(), t.device(), op), ids.shape());
}

template <bool accumulate, bool inplace>
Tensor scatter_fn(const Tensor& t, py::handle dim, py::handle index, py::handle src) {
  const char* op = accumulate ? "scatter_add" : "scatter";
  const int64_t d = int_arg(dim, op);
  const Tensor ids = index_arg(index, t);
  const Tensor s = accumulate ? tensor_arg(src, op, "src") : scatter_src(src, t, ids, op);
  if (inplace && autograd::wants_grad({&t, &s}))  // recorded as t = scatter(t, ...)
    return gil_free_if(big(t) || big(ids), [&] {
      return autograd::assign_with(accumulate ? "scatter_add_" : "scatter_", t, [&](const Tensor& x) {
        return scatter(x, d, ids, s, accumulate, false);
      }, false);
    });
  return gil_free_if(big(t) || big(ids),
                     [&] { return scatter(t, d, ids, s, accumulate, inplace); });
}

// alpha as a 0-d tensor of t's dtype; none for 1 (no multiply). PyTorch refuses a
// float alpha for integer and bool tensors.
std::optional<Tensor> alpha_arg(py::handle alpha, const Tensor& t) {
  const Number n = read_number(alpha);
  if (n.kind == Number::None)
    throw_invalid_type("index_add", "alpha must be a Python number", type_name(alpha));
  if (n.kind != Number::Float && n.i == 1) return std::nullopt;
  if (n.kind == Number::Float && n.f == 1 && dtype_is_float(t.dtype())) return std::nullopt;
  return number_tensor(n, t.dtype(), t.device(), "index_add");
}

template <bool inplace>
Tensor index_add_fn(const Tensor& t, py::handle dim, py::handle index, py::handle source_obj,
                    py::handle alpha) {
  const Tensor source = tensor_arg(source_obj, "index_add", "source");
  const int64_t d = int_arg(dim, "index_add");
  const Tensor ids = index_arg(index, t);
  const std::optional<Tensor> a = alpha_arg(alpha, t);
  if (inplace && autograd::wants_grad({&t, &source}))  // recorded as t = index_add(t, ...)
    return gil_free_if(big(t) || big(source), [&] {
      return autograd::assign_with("index_add_", t, [&](const Tensor& x) {
        return index_add(x, d, ids, source, a, false);
      }, false);
    });
  return gil_free_if(big(t) || big(source),
                     [&] { return index_add(t, d, ids, source, a, inplace); });
}

// The in-place form of fn: writes `self` and returns the same Python object (PyTorch's).
template <auto fn, typename... A>
py::object inplace(py::object self, A... args) {
  const Tensor r = fn(self.cast<const Tensor&>(), args...);
  // in the graph, self takes the history of what was written (autograd::assign_with)
  if (r.requires_grad() && r.grad_meta() != self.cast<const Tensor&>().grad_meta())
    autograd::adopt(self.cast<Tensor&>(), r);
  return self;
}
using H = py::handle;

std::optional<int64_t> optional_int(py::handle v, const char* op) {
  if (v.is_none()) return std::nullopt;
  return int_arg(v, op);
}

Tensor slice_scatter_fn(const Tensor& t, const Tensor& src, py::handle dim, py::handle start,
                        py::handle end, py::handle step) {
  const char* op = "slice_scatter";
  const int64_t d = int_arg(dim, op), s = int_arg(step, op);
  const std::optional<int64_t> lo = optional_int(start, op), hi = optional_int(end, op);
  return gil_free_if(big(t), [&] { return slice_scatter(t, src, d, lo, hi, s); });
}

Tensor embedding_fn(py::handle input, const Tensor& weight) {
  const Tensor ids = index_arg(input, weight);
  return gil_free_if(big(ids) || big(weight), [&] { return embedding(ids, weight); });
}

// Registers fn as Tensor method `name` and, unless in place only, as ember.name(input, ...).
template <typename Fn, typename... Extra>
void def_both(py::module_& m, py::class_<Tensor>& cls, const char* name, Fn&& fn, const char* doc,
              const Extra&... extra) {
  cls.def(name, fn, extra..., doc);
  m.def(name, fn, py::arg("input"), extra..., doc);
}

}  // namespace

void bind_scatter(py::module_& m, py::class_<Tensor>& cls) {
  const char* scatter_doc =
      "A copy of input with src[i][j][k] written at [index[i][j][k]][j][k] for dim 0 (and "
      "likewise for other dims); src is a tensor of input's dtype or a number. A repeated "
      "index keeps the last value written.";
  const char* add_doc =
      "A copy of input with src[i][j][k] added at [index[i][j][k]][j][k] for dim 0; repeated "
      "indices add up in index order (bool: logical or).";
  const char* index_add_doc =
      "A copy of input with alpha * source[..., i, ...] added at input[..., index[i], ...] "
      "along dim; index is 1-D.";
  def_both(m, cls, "scatter", &scatter_fn<false, false>, scatter_doc, py::arg("dim"),
           py::arg("index"), py::arg("src"));
  cls.def("scatter_", &inplace<&scatter_fn<false, true>, H, H, H>, py::arg("dim"), py::arg("index"),
          py::arg("src"), "In-place scatter: writes into this tensor and returns it.");
  def_both(m, cls, "scatter_add", &scatter_fn<true, false>, add_doc, py::arg("dim"),
           py::arg("index"), py::arg("src"));
  cls.def("scatter_add_", &inplace<&scatter_fn<true, true>, H, H, H>, py::arg("dim"),
          py::arg("index"), py::arg("src"),
          "In-place scatter_add: adds into this tensor and returns it.");
  auto alpha = py::arg("alpha") = 1;
  def_both(m, cls, "index_add", &index_add_fn<false>, index_add_doc, py::arg("dim"),
           py::arg("index"), py::arg("source"), py::kw_only(), alpha);
  cls.def("index_add_", &inplace<&index_add_fn<true>, H, H, H, H>, py::arg("dim"), py::arg("index"),
          py::arg("source"), py::kw_only(), alpha,
          "In-place index_add: adds into this tensor and returns it.");
  def_both(m, cls, "slice_scatter", &slice_scatter_fn,
           "A copy of input with src written into input[start:end:step] along dim.", py::arg("src"),
           py::arg("dim") = 0, py::arg("start") = py::none(), py::arg("end") = py::none(),
           py::arg("step") = 1);
  m.def("embedding", &embedding_fn, py::arg("input"), py::arg("weight"),
        "The rows of weight (num_embeddings, embedding_dim) at the ids in input: a tensor of "
        "input's shape + (embedding_dim,).");
}

}  // namespace ember::python
