// Autograd's Python surface (PyTorch's spelling): Tensor.requires_grad, .grad, .grad_fn,
// .is_leaf, .backward(), .detach(), requires_grad_(); the per-thread grad mode; and
// ember.autograd.grad. The engine is core's (csrc/core/autograd.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/autograd.h"

namespace ember::python {

namespace {

namespace ag = autograd;

// What Tensor.grad_fn gives: the node's name (PyTorch's: "MulBackward0").
struct GradFn {
  std::string name;
};

std::optional<Tensor> opt_tensor(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return std::nullopt;
  if (!py::isinstance<Tensor>(h))
    throw_invalid_type(op, std::string(what) + " must be an ember.Tensor or None",
                       Py_TYPE(h.ptr())->tp_name);
  return h.cast<Tensor>();
}

bool flag(py::handle h, const char* op, const char* what, bool fallback) {
  if (h.is_none()) return fallback;
  if (!PyBool_Check(h.ptr()))
    throw_invalid_type(op, std::string(what) + " must be True or False", Py_TYPE(h.ptr())->tp_name);
  return h.cast<bool>();
}

}  // namespace

void bind_autograd(py::module_& m, py::class_<Tensor>& cls) {
  py::class_<GradFn>(m, "_GradFn", "The op that made a tensor, as Tensor.grad_fn gives it.")
      .def("name", [](const GradFn& g) { return g.name; })
      .def("__repr__", [](const GradFn& g) { return "<" + g.name + ">"; });

  cls.def_property(
      "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
      [](Tensor& t, py::handle on) {
        ag::set_requires_grad(t, flag(on, "requires_grad", "requires_grad", false));
      },
      "Whether gradients flow to this tensor (a leaf created with requires_grad=True, or a "
      "result computed from one).");
  cls.def(
      "requires_grad_",
      [](py::object self, py::handle on) {
        ag::set_requires_grad(self.cast<Tensor&>(), flag(on, "requires_grad_", "requires_grad", true));
        return self;
      },
      py::arg("requires_grad") = true, "Sets requires_grad in place (leaves only); returns self.");
  cls.def_property_readonly("is_leaf", [](const Tensor& t) { return ag::is_leaf(t); });
  cls.def("retain_grad", [](const Tensor& t) { ag::retain_grad(t); },
          "backward() also fills this non-leaf tensor's .grad.");
  cls.def_property_readonly("retains_grad", [](const Tensor& t) { return ag::retains_grad(t); });
  cls.def_property(
      "grad", [](const Tensor& t) { return ag::grad(t); },
      [](Tensor& t, py::handle g) { ag::set_grad(t, opt_tensor(g, "grad", "grad")); },
      "The gradient accumulated by backward() (a leaf's), or None; assign None to clear it.");
  cls.def_property_readonly("grad_fn", [](const Tensor& t) -> py::object {
    std::string name = ag::grad_fn_name(t);
    if (name.empty()) return py::none();
    return py::cast(GradFn{std::move(name)});
  });
  cls.def("detach", [](const Tensor& t) { return ag::detach(t); },
          "The same values, sharing memory, outside the graph (requires_grad False).");
  cls.def(
      "backward",
      [](const Tensor& t, py::handle gradient, py::handle retain_graph, py::handle create_graph) {
        if (flag(create_graph, "backward", "create_graph", false))
          throw Error(ErrorKind::Autograd,
                      "backward: create_graph=True (gradients of gradients) is not supported yet")
              .with("op", std::string("backward"));
        const std::optional<Tensor> g = opt_tensor(gradient, "backward", "gradient");
        const bool retain = flag(retain_graph, "backward", "retain_graph", false);
        py::gil_scoped_release free;
        ag::backward(t, g, retain);
      },
      py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false,
      "Accumulates the gradient of this tensor into the .grad of every leaf it depends on.");

  m.def("is_grad_enabled", &ag::grad_enabled, "Whether ops record gradients on this thread.");
  m.def("_set_grad_enabled", &ag::set_grad_enabled);
  m.def(
      "_autograd_grad",
      [](const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
         const std::vector<std::optional<Tensor>>& grad_outputs, bool retain_graph,
         bool allow_unused) {
        py::gil_scoped_release free;
        return ag::grad(outputs, inputs, grad_outputs, retain_graph, allow_unused);
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs"), py::arg("retain_graph"),
      py::arg("allow_unused"));
}

}  // namespace ember::python
