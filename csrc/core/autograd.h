// Reverse-mode autodiff, in core so that every backend differentiates the same way.
//
// A differentiable op checks `wants_grad(inputs...)` (a pointer test per input when no
// input requires grad). When it holds, the op computes its result with grad mode off,
// then `record`s a Node: the backward function (a lambda over core ops, written once in
// derivatives.cpp) and one Edge per input. backward() walks the nodes from a root in
// reverse topological order, summing the gradients that meet at a node, and accumulates
// into the leaves' .grad. Gradients are core ops on the tensors' own device, so they run
// on its queue, in order. An op with no derivative yet refuses a tensor that requires grad
// (refuse_grad) rather than silently cutting the graph.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tensor.h"

namespace ember::autograd {

// Grad mode, per thread (PyTorch's no_grad / enable_grad): on by default.
bool grad_enabled();
void set_grad_enabled(bool on);
class GradMode {
 public:
  explicit GradMode(bool on) : prev_(grad_enabled()) { set_grad_enabled(on); }
  ~GradMode() { set_grad_enabled(prev_); }
  GradMode(const GradMode&) = delete;
  GradMode& operator=(const GradMode&) = delete;

 private:
  bool prev_;
};

struct Node;
struct Meta;

// Where an input's gradient goes: its op's node, or a leaf's accumulator; null when the
// input does not require grad. The input's shape and dtype check (and fit) the gradient.
struct Edge {
  std::shared_ptr<Node> fn;
  Shape shape;
  DType dtype = DType::F32;
};

using Grads = std::vector<std::optional<Tensor>>;
// The backward of one op: the gradient of its output to one per input (nullopt: none).
using Backward = std::function<Grads(const Tensor& grad)>;

struct Node {
  virtual ~Node() = default;
  std::string name;  // PyTorch's: "MulBackward0"; a leaf's accumulator "AccumulateGrad"
  std::vector<Edge> next;
  std::weak_ptr<Meta> retained;  // its output's, after retain_grad()
  virtual Grads apply(const Tensor& grad) = 0;
  // Frees what the backward saved (after a backward without retain_graph).
  virtual void release() {}
};

struct Meta {
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;     // null for a leaf
  std::shared_ptr<Tensor> grad;      // a leaf's accumulated gradient
  std::weak_ptr<Node> accumulator;   // a leaf's AccumulateGrad, while a graph holds it
  bool retains_grad = false;         // a non-leaf keeps its .grad (retain_grad())
  uint64_t history = 0;              // its storage's history count when it was made
  std::mutex grad_mu;                // backward()s on two threads may reach one leaf
};

// Whether an op given these inputs must record: grad mode on and one requires grad.
inline bool any_requires(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t && t->requires_grad()) return true;
  return false;
}
inline bool wants_grad(std::initializer_list<const Tensor*> ts) {
  return any_requires(ts) && grad_enabled();
}
bool wants_grad(const std::vector<Tensor>& ts);

// A tensor a backward reads, held without its autograd facts (no cycle through the
// node) and with its storage's version, so that a change in place is refused.
// Copies share one state, which the node that `record` makes owns: a backward without
// retain_graph frees it (a node that saved nothing can run again, as in PyTorch).
class Saved {
 public:
  struct State {
    std::optional<Tensor> t;
    uint64_t version = 0;
  };
  Saved() = default;
  explicit Saved(const Tensor& t);  // the next `record` on this thread takes it
  const Tensor& get() const;        // raises AutogradError once freed or changed in place

 private:
  std::shared_ptr<State> s_;
};

// Makes `result` the output of a node named `name` over `inputs` (those that require
// grad get edges). Returns result. `backward` maps the output's gradient to one
// gradient per input, in order; gradients of a broadcast input are summed back to its
// shape by the engine.
Tensor record(const char* name, Tensor result, const std::vector<const Tensor*>& inputs,
              Backward backward);

// Raises AutogradError: `op` has no derivative yet and an input requires grad (in grad
// mode). Ops call it before computing.
void refuse_grad(const char* op, std::initializer_list<const Tensor*> ts);
void refuse_grad(const char* op, const std::vector<Tensor>& ts);
// Raises AutogradError: `op` was given out= while an input requires grad (PyTorch's rule:
// out= functions are not differentiable).
[[noreturn]] void refuse_out(const char* op);
// Raises AutogradError for a write into `dst` that requires grad, in grad mode (a leaf
// that requires grad, or a result in the graph: writing in place is not recorded yet).
void check_inplace(const char* op, const Tensor& dst);

// dst op= other (Python's augmented assignment) when dst or other is in the graph, as
// PyTorch records it: dst = dst op other, written into dst's memory, and dst takes that
// result's history. Returns the result whose history dst must take (dst's own Tensor when
// it has autograd facts already shares them). Refused for a leaf that requires grad and
// for a view of another tensor (PyTorch's CopySlices is not done yet).
Tensor assign(BinaryOp op, const Tensor& dst, const Tensor& other);
// The same for any in-place op whose out-of-place form is `compute(dst)` (masked_fill_):
// `reads_self` when its backward reads dst's old values (then it gets a copy of them).
Tensor assign_with(const char* op, const Tensor& dst,
                   const std::function<Tensor(const Tensor&)>& compute, bool reads_self);
// Makes t (a Python tensor's own value) the tensor `result`'s history describes.
void adopt(Tensor& t, const Tensor& result);

// ---- the user's API
void set_requires_grad(Tensor& t, bool on);  // PyTorch's requires_grad_(); leaves only
bool is_leaf(const Tensor& t);
// PyTorch's retain_grad(): backward also fills this non-leaf's .grad (leaves: no-op).
void retain_grad(const Tensor& t);
bool retains_grad(const Tensor& t);
std::optional<Tensor> grad(const Tensor& t);
void set_grad(Tensor& t, const std::optional<Tensor>& g);
std::string grad_fn_name(const Tensor& t);  // empty: none
Tensor detach(const Tensor& t);
// t.backward(gradient, retain_graph)
void backward(const Tensor& root, const std::optional<Tensor>& gradient, bool retain_graph);
// ember.autograd.grad: the gradients of outputs with respect to inputs (nullopt for an
// input no output depends on, when allow_unused), without touching any .grad.
std::vector<std::optional<Tensor>> grad(const std::vector<Tensor>& outputs,
                                        const std::vector<Tensor>& inputs,
                                        const std::vector<std::optional<Tensor>>& grad_outputs,
                                        bool retain_graph, bool allow_unused);

// Sums g over the dims that broadcasting added to reach it from `shape`.
Tensor sum_to(const Tensor& g, const Shape& shape);

}  // namespace ember::autograd
