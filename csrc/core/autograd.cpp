// The autograd engine (autograd.h): nodes, edges, saved tensors, backward and grad.
#include "autograd.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace ember {

bool Tensor::requires_grad() const {
  return meta_ && meta_->requires_grad;
}

namespace autograd {

namespace {

thread_local bool t_grad_enabled = true;

[[noreturn]] void fail(const std::string& op, const std::string& message) {
  throw Error(ErrorKind::Autograd, message).with("op", op);
}

const char* const kFreed =
    "Trying to backward through the graph a second time (or to read its saved tensors "
    "after they were freed): backward() frees them; pass retain_graph=True to the first "
    "backward() to run it again";

// The saved tensors made since the last record on this thread: the next record's.
thread_local std::vector<std::shared_ptr<Saved::State>> t_pending;

struct FnNode : Node {
  Backward fn;
  std::vector<std::shared_ptr<Saved::State>> saved;
  Grads apply(const Tensor& g) override { return fn(g); }
  void release() override {
    for (auto& s : saved) s->t.reset();
  }
};

// A dense tensor of g's values that nothing else holds: what a leaf's .grad may become
// and later be added into in place.
Tensor own(const Tensor& g) {
  const bool whole = g.is_contiguous() && g.layout().offset() == 0 &&
                     g.numel() == g.storage()->numel();
  return whole && g.storage().use_count() == 1 ? g : clone(g);
}

// .grad += g (the first gradient becomes .grad, a copy when anything else holds it).
void accumulate(Meta& m, const Tensor& g) {
  std::lock_guard<std::mutex> hold(m.grad_mu);
  if (!m.grad)
    m.grad = std::make_shared<Tensor>(own(g));
  else
    binary(BinaryOp::Add, *m.grad, g, *m.grad);
}

struct AccumulateGrad : Node {
  std::shared_ptr<Meta> leaf;
  explicit AccumulateGrad(std::shared_ptr<Meta> m) : leaf(std::move(m)) { name = "AccumulateGrad"; }
  Grads apply(const Tensor& g) override {
    accumulate(*leaf, g);
    return {};
  }
};

std::shared_ptr<Node> node_of(const Tensor& t) {
  if (!t.requires_grad()) return nullptr;
  const std::shared_ptr<Meta>& m = t.grad_meta();
  if (m->grad_fn) return m->grad_fn;
  std::lock_guard<std::mutex> hold(m->grad_mu);  // ops on two threads may share a leaf
  std::shared_ptr<Node> acc = m->accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(m);
    m->accumulator = acc;
  }
  return acc;
}

Edge edge_of(const Tensor& t) {
  if (t.requires_grad() && t.grad_meta()->grad_fn &&
      t.storage()->history() != t.grad_meta()->history)
    fail(t.grad_meta()->grad_fn->name,
         "this tensor shares memory with a tensor that was changed in place in the graph "
         "after it was made (a view taken before h += ...), so its recorded history no longer "
         "describes its values: take the view again after the change, or change a clone()");
  return Edge{node_of(t), t.shape(), t.dtype()};
}

// A gradient fitted to the input it flows into: its dtype, and summed over the dims
// broadcasting added.
Tensor fit(const Tensor& g, const Edge& e, const std::string& from) {
  Tensor out = g;
  if (out.shape() != e.shape) {
    if (broadcast_shapes("backward", e.shape, out.shape()) != out.shape())
      fail(from, "internal error: " + from + " gave a gradient of shape " + shape_str(out.shape()) +
                     " for an input of shape " + shape_str(e.shape));
    out = sum_to(out, e.shape);
  }
  if (out.dtype() != e.dtype) out = to_dtype(out, e.dtype);
  return out;
}

struct Root {
  std::shared_ptr<Node> node;
  Tensor grad;
};

// Runs the graph below `roots`. With `capture` (autograd.grad), the gradients reaching
// those nodes are returned and no leaf's .grad changes; otherwise leaves accumulate.
std::vector<std::optional<Tensor>> run(const std::vector<Root>& roots, bool retain_graph,
                                       const std::vector<std::shared_ptr<Node>>* capture) {
  GradMode off(false);
  // Every node below the roots, and how many edges lead into each.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack, order;
  std::unordered_set<Node*> seen;
  for (const Root& r : roots)
    if (seen.insert(r.node.get()).second) stack.push_back(r.node.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const Edge& e : n->next) {
      if (!e.fn) continue;
      ++deps[e.fn.get()];
      if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
  std::unordered_map<Node*, std::vector<size_t>> wanted;  // an input may be asked twice
  if (capture)
    for (size_t i = 0; i < capture->size(); ++i)
      if ((*capture)[i]) wanted[(*capture)[i].get()].push_back(i);
  std::vector<std::optional<Tensor>> captured(capture ? capture->size() : 0);

  std::unordered_map<Node*, Tensor> buffer;
  const auto add_grad = [&](Node* n, Tensor g) {
    auto it = buffer.find(n);
    if (it == buffer.end())
      buffer.emplace(n, std::move(g));
    else
      it->second = binary(BinaryOp::Add, it->second, g);
  };
  for (const Root& r : roots) add_grad(r.node.get(), r.grad);
  std::vector<Node*> ready;
  for (const Root& r : roots)
    if (deps[r.node.get()] == 0 && std::find(ready.begin(), ready.end(), r.node.get()) == ready.end())
      ready.push_back(r.node.get());
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    std::optional<Tensor> g;
    if (auto it = buffer.find(n); it != buffer.end()) {
      g = std::move(it->second);
      buffer.erase(it);
    }
    Grads outs;
    if (auto w = wanted.find(n); w != wanted.end() && g)
      for (size_t i : w->second) captured[i] = *g;
    if (!capture && g)
      if (std::shared_ptr<Meta> kept = n->retained.lock(); kept && kept->retains_grad)
        accumulate(*kept, detach(*g));
    const bool leaf_acc = dynamic_cast<AccumulateGrad*>(n) != nullptr;
    if (g && !(capture && leaf_acc)) outs = n->apply(*g);
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge& e = n->next[i];
      if (!e.fn) continue;
      if (i < outs.size() && outs[i]) add_grad(e.fn.get(), fit(*outs[i], e, n->name));
      if (--deps[e.fn.get()] == 0) ready.push_back(e.fn.get());
    }
  }
  if (!retain_graph)
    for (Node* n : order) n->release();
  return captured;
}

Root root_of(const Tensor& out, const std::optional<Tensor>& gradient, const char* op) {
  if (!out.requires_grad())
    fail(op, std::string(op) + ": the tensor does not require grad and has no grad_fn: no "
                               "tensor on its path requires grad (create one with "
                               "requires_grad=True)");
  Tensor g = out;
  if (gradient) {
    Storage::check_same_device(op, *out.storage(), *gradient->storage());
    if (gradient->shape() != out.shape())
      throw_shape_mismatch(op, gradient->shape(), out.shape(),
                           "the gradient must have the shape of the tensor");
    g = to_dtype(detach(*gradient), out.dtype());
  } else {
    if (out.numel() != 1)
      fail(op, std::string(op) + ": grad can be implicitly created only for scalar outputs: "
                                 "pass gradient= (a tensor of shape " +
                   shape_str(out.shape()) + ")");
    g = full(out.shape(), 1.0, out.dtype(), out.device());
  }
  return Root{node_of(out), g};
}

}  // namespace

bool grad_enabled() {
  return t_grad_enabled;
}
void set_grad_enabled(bool on) {
  t_grad_enabled = on;
}

bool wants_grad(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.requires_grad()) return grad_enabled();
  return false;
}

Saved::Saved(const Tensor& t)
    : s_(std::make_shared<State>(State{Tensor(t.storage(), t.layout()), t.storage()->version()})) {
  t_pending.push_back(s_);
}

const Tensor& Saved::get() const {
  if (!s_ || !s_->t) fail("backward", kFreed);
  const std::optional<Tensor>& t_ = s_->t;
  if (t_->storage()->version() != s_->version)
    fail("backward",
         "one of the tensors needed for gradient computation has been modified by an in-place "
         "operation after the op that saved it: compute the in-place change on a copy "
         "(clone()), or after backward()");
  return *t_;
}

Tensor record(const char* name, Tensor result, const std::vector<const Tensor*>& inputs,
              Backward backward) {
  std::vector<std::shared_ptr<Saved::State>> saved;
  saved.swap(t_pending);
  if (!dtype_is_float(result.dtype())) return result;  // integer results cut the graph
  auto node = std::make_shared<FnNode>();
  node->name = name;
  node->fn = std::move(backward);
  node->saved = std::move(saved);
  node->next.reserve(inputs.size());
  for (const Tensor* t : inputs) node->next.push_back(t ? edge_of(*t) : Edge{});
  auto meta = std::make_shared<Meta>();
  meta->requires_grad = true;
  meta->grad_fn = std::move(node);
  meta->history = result.storage()->history();
  result.set_grad_meta(std::move(meta));
  return result;
}

namespace {
[[noreturn]] void refuse(const char* op) {
  fail(op, std::string(op) +
               " has no derivative yet and an input requires grad: compute it on a "
               "detach()ed tensor or inside ember.no_grad(), or keep it out of the graph");
}
}  // namespace

void refuse_grad(const char* op, std::initializer_list<const Tensor*> ts) {
  if (wants_grad(ts)) refuse(op);
}
void refuse_grad(const char* op, const std::vector<Tensor>& ts) {
  if (wants_grad(ts)) refuse(op);
}

void refuse_out(const char* op) {
  fail(op, std::string(op) + ": out= cannot be used when an input requires grad (an out= "
                             "result is not recorded): drop out=, or compute inside ember.no_grad()");
}

void check_inplace(const char* op, const Tensor& dst) {
  if (!dst.requires_grad() || !grad_enabled()) return;
  if (is_leaf(dst))
    fail(op, std::string(op) +
                 ": a leaf tensor that requires grad cannot be changed in place (outside "
                 "ember.no_grad()): update it inside `with ember.no_grad():`");
  fail(op, std::string(op) +
               ": an in-place change of a tensor in the graph is not recorded yet: write "
               "the op out of place (y = y + x instead of y += x)");
}

Tensor assign_with(const char* name, const Tensor& dst,
                   const std::function<Tensor(const Tensor&)>& compute, bool reads_self) {
  if (dst.requires_grad() && is_leaf(dst))
    fail(name, std::string(name) +
                   ": a leaf tensor that requires grad cannot be changed in place (outside "
                   "ember.no_grad()): update it inside `with ember.no_grad():`");
  const bool whole = dst.layout().offset() == 0 && dst.is_contiguous() &&
                     dst.numel() == dst.storage()->numel();
  if (!whole)
    fail(name, std::string(name) +
                   ": an in-place change of a view is not recorded yet when a tensor in the "
                   "graph takes part: write it out of place (y = y + x)");
  // Recorded, reading dst before it changes. An op whose backward reads its left side
  // keeps a copy of it, which the write below cannot change (PyTorch's original self).
  const Tensor r = compute(reads_self ? clone(dst) : dst);
  {
    GradMode off(false);
    copy_into(r, detach(dst), name);
  }
  dst.storage()->bump_history();  // views of dst made before now are stale
  if (r.requires_grad()) r.grad_meta()->history = dst.storage()->history();
  return r;
}

Tensor assign(BinaryOp op, const Tensor& dst, const Tensor& other) {
  const bool reads_self = op != BinaryOp::Add && op != BinaryOp::Sub && op != BinaryOp::Div;
  return assign_with(binary_name(op), dst, [&](const Tensor& self) {
    const Tensor r = binary(op, self, other);
    if (r.shape() != dst.shape() || r.dtype() != dst.dtype())
      binary(op, detach(dst), detach(other), detach(dst));  // raises the op's own error
    return r;
  }, reads_self);
}

void adopt(Tensor& t, const Tensor& result) {
  t.set_grad_meta(result.grad_meta());
}

void set_requires_grad(Tensor& t, bool on) {
  if (!is_leaf(t)) {
    if (on) return;
    fail("requires_grad_",
         "requires_grad_: only leaf tensors can change requires_grad; use t.detach() for a "
         "tensor that does not require grad");
  }
  if (on && !dtype_is_float(t.dtype()))
    fail("requires_grad_", "requires_grad_: only tensors of a floating dtype can require "
                           "gradients, not " + std::string(dtype_name(t.dtype())));
  if (!t.grad_meta()) {
    if (!on) return;
    t.set_grad_meta(std::make_shared<Meta>());
  }
  t.grad_meta()->requires_grad = on;
}

void retain_grad(const Tensor& t) {
  if (!t.requires_grad())
    fail("retain_grad", "retain_grad: the tensor does not require grad, so it has no gradient "
                        "to keep");
  const std::shared_ptr<Meta>& m = t.grad_meta();
  if (!m->grad_fn) return;  // a leaf keeps its gradient anyway
  m->retains_grad = true;
  m->grad_fn->retained = m;
}

bool retains_grad(const Tensor& t) {
  return t.grad_meta() && t.grad_meta()->retains_grad;
}

bool is_leaf(const Tensor& t) {
  return !t.grad_meta() || !t.grad_meta()->grad_fn;
}

std::optional<Tensor> grad(const Tensor& t) {
  if (!t.grad_meta()) return std::nullopt;
  std::lock_guard<std::mutex> hold(t.grad_meta()->grad_mu);
  if (!t.grad_meta()->grad) return std::nullopt;
  return *t.grad_meta()->grad;
}

void set_grad(Tensor& t, const std::optional<Tensor>& g) {
  if (!g) {
    if (t.grad_meta()) {
      std::lock_guard<std::mutex> hold(t.grad_meta()->grad_mu);
      t.grad_meta()->grad.reset();
    }
    return;
  }
  Storage::check_same_device("grad", *t.storage(), *g->storage());
  if (g->shape() != t.shape())
    throw_shape_mismatch("grad", g->shape(), t.shape(), "a gradient must have its tensor's shape");
  if (g->dtype() != t.dtype())
    throw Error(ErrorKind::DTypeMismatch, "grad: a gradient of dtype " +
                                              std::string(dtype_name(g->dtype())) +
                                              " for a tensor of dtype " + dtype_name(t.dtype()))
        .with("op", std::string("grad"));
  if (!t.grad_meta()) t.set_grad_meta(std::make_shared<Meta>());
  std::lock_guard<std::mutex> hold(t.grad_meta()->grad_mu);
  t.grad_meta()->grad = std::make_shared<Tensor>(detach(*g));
}

std::string grad_fn_name(const Tensor& t) {
  return t.grad_meta() && t.grad_meta()->grad_fn ? t.grad_meta()->grad_fn->name : "";
}

Tensor detach(const Tensor& t) {
  return Tensor(t.storage(), t.layout());
}

void backward(const Tensor& root, const std::optional<Tensor>& gradient, bool retain_graph) {
  run({root_of(root, gradient, "backward")}, retain_graph, nullptr);
}

std::vector<std::optional<Tensor>> grad(const std::vector<Tensor>& outputs,
                                        const std::vector<Tensor>& inputs,
                                        const std::vector<std::optional<Tensor>>& grad_outputs,
                                        bool retain_graph, bool allow_unused) {
  std::vector<Root> roots;
  for (size_t i = 0; i < outputs.size(); ++i)
    roots.push_back(root_of(outputs[i], i < grad_outputs.size() ? grad_outputs[i] : std::nullopt,
                            "grad"));
  std::vector<std::shared_ptr<Node>> targets;
  for (const Tensor& t : inputs) {
    if (!t.requires_grad())
      fail("grad", "grad: an input does not require grad (create it with requires_grad=True)");
    const std::shared_ptr<Meta>& m = t.grad_meta();
    targets.push_back(m->grad_fn ? m->grad_fn : m->accumulator.lock());
  }
  // A non-leaf input's gradient is the one reaching its node; a leaf's, its accumulator's.
  std::vector<std::optional<Tensor>> out = run(roots, retain_graph, &targets);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i] && !allow_unused)
      fail("grad", "grad: input " + std::to_string(i) +
                       " is not used by the outputs' graph (pass allow_unused=True to get None)");
    if (out[i]) out[i] = fit(*out[i], Edge{nullptr, inputs[i].shape(), inputs[i].dtype()}, "grad");
  }
  return out;
}

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.ndim() - int64_t(shape.size());
  Dims dims;
  for (int64_t d = 0; d < g.ndim(); ++d)
    if (d < lead || (shape[size_t(d - lead)] == 1 && g.shape()[size_t(d)] != 1)) dims.push_back(d);
  Tensor s = dims.empty() ? g : reduce(ReduceOp::Sum, g, dims, true);
  return reshape(s, shape);
}

}  // namespace autograd
}  // namespace ember
