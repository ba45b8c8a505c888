// Each differentiable op's backward, written once over core ops (so every backend
// differentiates the same way, on the tensors' own device). The formulas are PyTorch's
// (tools/autograd/derivatives.yaml), including its choices at ties and kinks: relu's and
// clamp's gradient at the kink, maximum's halves at a tie, amax's even split.
#include "derivatives.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "index_checks.h"

namespace ember::autograd::d {

namespace {

// PyTorch's node name for an op: "exp" -> "ExpBackward0".
std::string node_name(const std::string& op) {
  std::string out;
  bool up = true;
  for (char c : op) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out + "Backward0";
}

Tensor scalar(double v, const Tensor& like) {
  return full({}, v, like.dtype(), like.device());
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return ember::binary(BinaryOp::Mul, a, b);
}
Tensor add(const Tensor& a, const Tensor& b) {
  return ember::binary(BinaryOp::Add, a, b);
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return ember::binary(BinaryOp::Sub, a, b);
}
Tensor div(const Tensor& a, const Tensor& b) {
  return ember::binary(BinaryOp::Div, a, b);
}
Tensor scale(const Tensor& a, double k) {
  return ember::affine(a, k, 0.0);
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.shape(), t.dtype(), t.device());
}
// g where `keep` holds, else 0
Tensor keep_where(const Tensor& keep, const Tensor& g) {
  return ember::where(keep, g, scalar(0.0, g));
}

// The reduced dims, wrapped and sorted (empty: all).
Dims reduced_dims(const char* op, const Dims& dims, int64_t ndim) {
  Dims out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(op, d, ndim));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// A reduction's gradient (or result) with its reduced dims back as size 1.
Tensor kept(const Tensor& g, const Dims& reduced, bool keepdim) {
  if (keepdim) return g;
  Tensor out = g;
  for (int64_t d : reduced) out = ember::unsqueeze(out, d);
  return out;
}

// Computes `op` with grad mode off.
template <typename F>
auto quietly(F&& f) {
  GradMode off(false);
  return f();
}

}  // namespace

// Whether op's backward reads its input (x) or its result (y): only those are saved, so
// that a graph keeps no tensor its backward will not read.
bool reads_input(UnaryOp op) {
  switch (op) {
    case UnaryOp::Abs: case UnaryOp::Sqr: case UnaryOp::Log: case UnaryOp::Log1p:
    case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Erf: case UnaryOp::Gelu:
    case UnaryOp::GeluTanh: case UnaryOp::Silu: return true;
    default: return false;
  }
}
bool reads_result(UnaryOp op) {
  switch (op) {
    case UnaryOp::Relu: case UnaryOp::Exp: case UnaryOp::Expm1: case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt: case UnaryOp::Recip: case UnaryOp::Tan: case UnaryOp::Tanh:
    case UnaryOp::Sigmoid: return true;
    default: return false;
  }
}

Tensor unary(UnaryOp op, const Tensor& x) {
  const Tensor y = quietly([&] { return ember::unary(op, x); });
  const Saved sx = reads_input(op) ? Saved(x) : Saved(), sy = reads_result(op) ? Saved(y) : Saved();
  const std::string name = node_name(op == UnaryOp::GeluTanh ? "gelu" : unary_name(op));
  return record(name.c_str(), y, {&x}, [op, sx, sy](const Tensor& g) -> Grads {
    const auto x_ = [&]() -> const Tensor& { return sx.get(); };  // the op's input
    const auto y_ = [&]() -> const Tensor& { return sy.get(); };  // its result
    switch (op) {
      case UnaryOp::Neg: return {scale(g, -1.0)};
      case UnaryOp::Abs: return {mul(g, ember::unary(UnaryOp::Sign, x_()))};
      case UnaryOp::Sqr: return {mul(g, scale(x_(), 2.0))};
      case UnaryOp::Relu:
        return {keep_where(cmp(CmpOp::Gt, y_(), scalar(0.0, y_())), g)};
      case UnaryOp::Sign:
      case UnaryOp::Floor:
      case UnaryOp::Ceil:
      case UnaryOp::Round:
      case UnaryOp::Trunc: return {zeros_like(g)};
      case UnaryOp::Exp: return {mul(g, y_())};
      case UnaryOp::Expm1: return {mul(g, ember::affine(y_(), 1.0, 1.0))};
      case UnaryOp::Log: return {div(g, x_())};
      case UnaryOp::Log1p: return {div(g, ember::affine(x_(), 1.0, 1.0))};
      case UnaryOp::Sqrt: return {div(g, scale(y_(), 2.0))};
      case UnaryOp::Rsqrt:  // -x^(-3/2) / 2 = -y^3 / 2
        return {mul(g, scale(mul(y_(), ember::unary(UnaryOp::Sqr, y_())), -0.5))};
      case UnaryOp::Recip: return {mul(g, scale(ember::unary(UnaryOp::Sqr, y_()), -1.0))};
      case UnaryOp::Sin: return {mul(g, ember::unary(UnaryOp::Cos, x_()))};
      case UnaryOp::Cos: return {mul(g, scale(ember::unary(UnaryOp::Sin, x_()), -1.0))};
      case UnaryOp::Tan: return {mul(g, ember::affine(ember::unary(UnaryOp::Sqr, y_()), 1.0, 1.0))};
      case UnaryOp::Tanh:
        return {mul(g, ember::affine(ember::unary(UnaryOp::Sqr, y_()), -1.0, 1.0))};
      case UnaryOp::Erf:  // 2/sqrt(pi) exp(-x^2)
        return {mul(g, scale(ember::unary(UnaryOp::Exp, scale(ember::unary(UnaryOp::Sqr, x_()), -1.0)),
                             2.0 / std::sqrt(M_PI)))};
      case UnaryOp::Gelu: {  // Phi(x) + x phi(x)
        const Tensor cdf = ember::affine(ember::unary(UnaryOp::Erf, scale(x_(), M_SQRT1_2)), 0.5, 0.5);
        const Tensor pdf = scale(ember::unary(UnaryOp::Exp, scale(ember::unary(UnaryOp::Sqr, x_()), -0.5)),
                                 1.0 / std::sqrt(2.0 * M_PI));
        return {mul(g, add(cdf, mul(x_(), pdf)))};
      }
      case UnaryOp::GeluTanh: {  // PyTorch's GeluBackward with approximate='tanh'
        const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
        const Tensor x2 = ember::unary(UnaryOp::Sqr, x_());
        const Tensor inner = scale(mul(x_(), ember::affine(x2, kappa, 1.0)), beta);
        const Tensor t = ember::unary(UnaryOp::Tanh, inner);
        const Tensor left = ember::affine(t, 0.5, 0.5);  // (1 + t) / 2
        const Tensor right = mul(mul(scale(x_(), 0.5), ember::affine(ember::unary(UnaryOp::Sqr, t), -1.0, 1.0)),
                                 ember::affine(x2, 3.0 * kappa * beta, beta));
        return {mul(g, add(left, right))};
      }
      case UnaryOp::Silu: {  // s (1 + x (1 - s))
        const Tensor s = ember::unary(UnaryOp::Sigmoid, x_());
        return {mul(g, mul(s, ember::affine(mul(x_(), ember::affine(s, -1.0, 1.0)), 1.0, 1.0)))};
      }
      case UnaryOp::Sigmoid: return {mul(g, mul(y_(), ember::affine(y_(), -1.0, 1.0)))};
      case UnaryOp::IsNan:
      case UnaryOp::IsInf:
      case UnaryOp::IsFinite:
      case UnaryOp::BitwiseNot:
      case UnaryOp::Clamp: break;  // bool or integer results; clamp has its own form
    }
    return {std::nullopt};
  });
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  const Tensor y = quietly([&] { return ember::clamp(x, lo, hi); });
  const Saved sx(x);
  return record("ClampBackward1", y, {&x}, [sx, lo, hi](const Tensor& g) -> Grads {
    const Tensor& x = sx.get();
    // PyTorch: the gradient passes where lo <= x <= hi (both ends included)
    std::optional<Tensor> keep;
    if (lo) keep = cmp(CmpOp::Ge, x, scalar(*lo, x));
    if (hi) {
      const Tensor below = cmp(CmpOp::Le, x, scalar(*hi, x));
      keep = keep ? logical_binary("logical_and", *keep, below) : below;
    }
    return {keep ? keep_where(*keep, g) : g};
  });
}

Tensor affine(const Tensor& x, double k, double c) {
  const Tensor y = quietly([&] { return ember::affine(x, k, c); });
  return record(k == 1.0 ? "AddBackward0" : "MulBackward0", y, {&x},
                [k](const Tensor& g) -> Grads { return {k == 1.0 ? g : scale(g, k)}; });
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  const Tensor y = quietly([&] { return ember::binary(op, a, b); });
  const bool na = a.requires_grad(), nb = b.requires_grad();
  // Save only what the backward reads (an add saves nothing; a * b saves the other side).
  bool keep_a = false, keep_b = false, keep_y = false;
  switch (op) {
    case BinaryOp::Mul: keep_a = nb; keep_b = na; break;
    case BinaryOp::Div: keep_b = true; keep_y = nb; break;
    case BinaryOp::Pow: keep_a = keep_b = true; keep_y = nb; break;
    case BinaryOp::Maximum: case BinaryOp::Minimum: case BinaryOp::Atan2:
      keep_a = keep_b = true; break;
    case BinaryOp::Remainder: keep_a = keep_b = nb; break;
    default: break;
  }
  const Saved sa = keep_a ? Saved(a) : Saved(), sb = keep_b ? Saved(b) : Saved(),
              sy = keep_y ? Saved(y) : Saved();
  return record(node_name(binary_name(op)).c_str(), y, {&a, &b},
                [op, sa, sb, sy, na, nb](const Tensor& g) -> Grads {
    switch (op) {
      case BinaryOp::Add: return {g, g};
      case BinaryOp::Sub: return {g, scale(g, -1.0)};
      case BinaryOp::Mul:
        return {na ? std::optional<Tensor>(mul(g, sb.get())) : std::nullopt,
                nb ? std::optional<Tensor>(mul(g, sa.get())) : std::nullopt};
      case BinaryOp::Div: {
        const Tensor ga = div(g, sb.get());
        if (!nb) return {ga, std::nullopt};
        return {ga, scale(mul(ga, sy.get()), -1.0)};  // -g a / b^2 = -(g / b) y
      }
      case BinaryOp::Pow: {
        const Tensor& a = sa.get();
        const Tensor& b = sb.get();
        std::optional<Tensor> ga, gb;
        if (na) {  // b a^(b-1), 0 where b == 0
          const Tensor d = mul(b, ember::binary(BinaryOp::Pow, a, ember::affine(b, 1.0, -1.0)));
          ga = keep_where(cmp(CmpOp::Ne, b, scalar(0.0, b)), mul(g, d));
        }
        if (nb) {  // y log(a), 0 where a == 0 and b >= 0
          const Tensor d = mul(sy.get(), ember::unary(UnaryOp::Log, a));
          const Tensor zero_base = logical_binary("logical_and", cmp(CmpOp::Eq, a, scalar(0.0, a)),
                                                  cmp(CmpOp::Ge, b, scalar(0.0, b)));
          gb = keep_where(logical_not(zero_base), mul(g, d));
        }
        return {ga, gb};
      }
      case BinaryOp::Maximum:
      case BinaryOp::Minimum: {  // the larger (smaller) takes it; a tie splits it in halves
        const Tensor& a = sa.get();
        const Tensor& b = sb.get();
        const CmpOp wins = op == BinaryOp::Maximum ? CmpOp::Gt : CmpOp::Lt;
        const Tensor half = scale(g, 0.5);
        const Tensor tie = cmp(CmpOp::Eq, a, b);
        const Tensor ga = ember::where(cmp(wins, a, b), g, keep_where(tie, half));
        const Tensor gb = ember::where(cmp(wins, b, a), g, keep_where(tie, half));
        return {ga, gb};
      }
      case BinaryOp::Atan2: {  // (b, -a) / (a^2 + b^2)
        const Tensor& a = sa.get();
        const Tensor& b = sb.get();
        const Tensor r = div(g, add(ember::unary(UnaryOp::Sqr, a), ember::unary(UnaryOp::Sqr, b)));
        return {mul(r, b), scale(mul(r, a), -1.0)};
      }
      case BinaryOp::Remainder:  // a - floor(a / b) b
        if (!nb) return {g, std::nullopt};
        return {g, scale(mul(g, ember::binary(BinaryOp::FloorDivide, sa.get(), sb.get())), -1.0)};
      case BinaryOp::FloorDivide:
      case BinaryOp::TruncDivide: return {zeros_like(g), zeros_like(g)};
      case BinaryOp::BitwiseAnd:
      case BinaryOp::BitwiseOr:
      case BinaryOp::BitwiseXor: break;  // integers only
    }
    return {std::nullopt, std::nullopt};
  });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Tensor y = quietly([&] { return ember::where(cond, a, b); });
  const Saved sc(cond);
  return record("WhereBackward0", y, {nullptr, &a, &b}, [sc](const Tensor& g) -> Grads {
    const Tensor& c = sc.get();
    return {std::nullopt, keep_where(c, g), keep_where(logical_not(c), g)};
  });
}

Tensor masked_fill(const Tensor& t, const Tensor& mask, const Tensor& value) {
  const Tensor y = quietly([&] { return ember::masked_fill(t, mask, value); });
  const Saved sm(mask);
  const bool nv = value.requires_grad();
  return record("MaskedFillBackward0", y, {&t, nullptr, &value},
                [sm, nv](const Tensor& g) -> Grads {
    const Tensor m = as_bool(sm.get());
    std::optional<Tensor> gv;
    if (nv) gv = ember::reduce(ReduceOp::Sum, keep_where(m, g), {}, false);
    return {keep_where(logical_not(m), g), std::nullopt, gv};
  });
}

Tensor reduce(ReduceOp op, const Tensor& x, const Dims& dims, bool keepdim) {
  const Tensor y = quietly([&] { return ember::reduce(op, x, dims, keepdim); });
  const Dims red = reduced_dims(reduce_name(op), dims, x.ndim());
  const Shape shape = x.shape();
  if (op == ReduceOp::Sum)
    return record(dims.empty() ? "SumBackward0" : "SumBackward1", y, {&x},
                  [red, shape, keepdim](const Tensor& g) -> Grads {
                    return {ember::broadcast_to(kept(g, red, keepdim), shape)};
                  });
  if (op == ReduceOp::Max || op == ReduceOp::Min) {  // amax/amin: ties share evenly
    const Saved sx(x), sy(y);
    return record(op == ReduceOp::Max ? "AmaxBackward0" : "AminBackward0", y, {&x},
                  [red, keepdim, sx, sy](const Tensor& g) -> Grads {
                    const Tensor& x = sx.get();
                    const Tensor hit = cmp(CmpOp::Eq, x, kept(sy.get(), red, keepdim));
                    const Tensor count = ember::reduce(ReduceOp::Sum, hit, red, true);
                    const Tensor share = div(kept(g, red, keepdim), to_dtype(count, g.dtype()));
                    return {keep_where(hit, share)};
                  });
  }
  return y;  // argmax / argmin: integer results
}

Tensor mean(const Tensor& x, const Dims& dims, bool keepdim) {
  const Tensor y = quietly([&] { return ember::mean(x, dims, keepdim); });
  const Dims red = reduced_dims("mean", dims, x.ndim());
  const Shape shape = x.shape();
  int64_t count = 1;
  for (int64_t d : red) count *= shape[size_t(d)];
  return record(dims.empty() ? "MeanBackward0" : "MeanBackward1", y, {&x},
                [red, shape, keepdim, count](const Tensor& g) -> Grads {
                  return {ember::broadcast_to(scale(kept(g, red, keepdim), 1.0 / double(count)),
                                              shape)};
                });
}

Tensor softmax(const Tensor& x, int64_t dim, bool log) {
  const Tensor y = quietly([&] { return ember::softmax(x, dim, log); });
  const Saved sy(y);
  const int64_t d = x.ndim() == 0 ? 0 : wrap_dim(log ? "log_softmax" : "softmax", dim, x.ndim());
  const bool scalar0 = x.ndim() == 0;
  return record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", y, {&x},
                [sy, d, log, scalar0](const Tensor& g) -> Grads {
    if (scalar0) return {zeros_like(g)};
    const Tensor& y = sy.get();
    if (log)  // g - exp(y) sum(g)
      return {sub(g, mul(ember::unary(UnaryOp::Exp, y), ember::reduce(ReduceOp::Sum, g, {d}, true)))};
    const Tensor gy = mul(g, y);  // y (g - sum(g y))
    return {mul(y, sub(g, ember::reduce(ReduceOp::Sum, gy, {d}, true)))};
  });
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const Tensor y = quietly([&] { return ember::matmul(a, b); });
  const bool na = a.requires_grad(), nb = b.requires_grad();
  // a's gradient reads b and b's reads a: x @ w with x outside the graph keeps only w
  const Saved sa = nb ? Saved(a) : Saved(), sb = na ? Saved(b) : Saved();
  const char* name = a.ndim() == 2 && b.ndim() == 2   ? "MmBackward0"
                     : a.ndim() == 1 && b.ndim() == 1 ? "DotBackward0"
                     : a.ndim() == 2 && b.ndim() == 1 ? "MvBackward0"
                                                      : "MatmulBackward0";
  const Shape as = a.shape(), bs = b.shape();
  return record(name, y, {&a, &b}, [sa, sb, na, nb, as, bs](const Tensor& g) -> Grads {
    const bool a1 = as.size() == 1, b1 = bs.size() == 1;
    // As matrices: a 1-D lhs is a row (1, K), a 1-D rhs a column (K, 1).
    Tensor G = g;
    if (a1 && b1)
      G = ember::reshape(g, {1, 1});
    else if (a1)
      G = ember::unsqueeze(g, g.ndim() - 1);
    else if (b1)
      G = ember::unsqueeze(g, g.ndim());
    std::optional<Tensor> ga, gb;
    if (na) {
      const Tensor B = b1 ? ember::unsqueeze(sb.get(), 1) : sb.get();
      const Shape A = a1 ? Shape{1, as[0]} : as;
      ga = ember::reshape(sum_to(ember::matmul(G, ember::transpose(B, -1, -2)), A), as);
    }
    if (nb) {
      const Tensor A = a1 ? ember::unsqueeze(sa.get(), 0) : sa.get();
      const Shape B = b1 ? Shape{bs[0], 1} : bs;
      gb = ember::reshape(sum_to(ember::matmul(ember::transpose(A, -1, -2), G), B), bs);
    }
    return {ga, gb};
  });
}

Tensor dot(const Tensor& a, const Tensor& b) {
  const Tensor y = quietly([&] { return ember::dot(a, b); });
  const bool na = a.requires_grad(), nb = b.requires_grad();
  const Saved sa = nb ? Saved(a) : Saved(), sb = na ? Saved(b) : Saved();
  return record("DotBackward0", y, {&a, &b}, [sa, sb, na, nb](const Tensor& g) -> Grads {
    return {na ? std::optional<Tensor>(mul(g, sb.get())) : std::nullopt,
            nb ? std::optional<Tensor>(mul(g, sa.get())) : std::nullopt};
  });
}

Tensor mv(const Tensor& m, const Tensor& v) {
  const Tensor y = quietly([&] { return ember::mv(m, v); });
  const bool nm = m.requires_grad(), nv = v.requires_grad();
  const Saved sm = nv ? Saved(m) : Saved(), sv = nm ? Saved(v) : Saved();
  return record("MvBackward0", y, {&m, &v}, [sm, sv, nm, nv](const Tensor& g) -> Grads {
    std::optional<Tensor> gm, gv;
    if (nm) gm = ember::matmul(ember::unsqueeze(g, 1), ember::unsqueeze(sv.get(), 0));
    if (nv) gv = ember::mv(ember::transpose(sm.get(), 0, 1), g);
    return {gm, gv};
  });
}

Tensor reshaped(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op) {
  const Tensor y = quietly([&] { return op(x); });
  const Shape shape = x.shape();
  return record(name, y, {&x},
                [shape](const Tensor& g) -> Grads { return {ember::reshape(g, shape)}; });
}

Tensor part(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op) {
  const Tensor y = quietly([&] { return op(x); });
  const Shape shape = x.shape();
  return record(name, y, {&x}, [shape, op](const Tensor& g) -> Grads {
    const Tensor z = zeros(shape, g.dtype(), g.device());
    copy_into(g, op(z), "backward");
    return {z};
  });
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  const Tensor y = quietly([&] { return ember::transpose(x, d0, d1); });
  return record("TransposeBackward0", y, {&x},
                [d0, d1](const Tensor& g) -> Grads { return {ember::transpose(g, d0, d1)}; });
}

Tensor permute(const Tensor& x, const Dims& order) {
  const Tensor y = quietly([&] { return ember::permute(x, order); });
  Dims inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inverse[size_t(wrap_dim("permute", order[i], x.ndim()))] = int64_t(i);
  return record("PermuteBackward0", y, {&x},
                [inverse](const Tensor& g) -> Grads { return {ember::permute(g, inverse)}; });
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  const Tensor y = quietly([&] { return ember::broadcast_to(x, shape); });
  // the engine sums the gradient back over the broadcast dims
  return record("ExpandBackward0", y, {&x}, [](const Tensor& g) -> Grads { return {g}; });
}

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  const Tensor y = quietly([&] { return ember::cat(ts, dim); });
  const int64_t d = wrap_dim("cat", dim, ts[0].ndim());
  std::vector<int64_t> sizes;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) {
    sizes.push_back(t.shape()[size_t(d)]);
    inputs.push_back(&t);
  }
  return record("CatBackward0", y, inputs, [sizes, d](const Tensor& g) -> Grads {
    Grads out;
    int64_t at = 0;
    for (int64_t n : sizes) {
      out.push_back(ember::narrow(g, d, at, n));
      at += n;
    }
    return out;
  });
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  const Tensor y = quietly([&] { return ember::stack(ts, dim); });
  const int64_t d = wrap_dim("stack", dim, ts[0].ndim() + 1);
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) inputs.push_back(&t);
  const size_t n = ts.size();
  return record("StackBackward0", y, inputs, [n, d](const Tensor& g) -> Grads {
    Grads out;
    for (size_t i = 0; i < n; ++i) out.push_back(ember::select(g, d, int64_t(i)));
    return out;
  });
}

Tensor copy(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op) {
  const Tensor y = quietly([&] { return op(x); });
  return record(name, y, {&x}, [](const Tensor& g) -> Grads { return {g}; });
}

Tensor to_device(const Tensor& x, const DevicePtr& device) {
  const Tensor y = quietly([&] { return ember::to_device(x, device); });
  const DevicePtr home = x.device();
  return record("ToCopyBackward0", y, {&x},
                [home](const Tensor& g) -> Grads { return {ember::to_device(g, home)}; });
}

Tensor select_checked(const Tensor& x, int64_t d, const Tensor& ids) {
  const Tensor y = quietly([&] { return index_checks::select_checked(x, d, ids); });
  const Saved si(ids);
  const Shape shape = x.shape();
  return record("IndexSelectBackward0", y, {&x}, [si, d, shape](const Tensor& g) -> Grads {
    const Tensor z = zeros(shape, g.dtype(), g.device());
    index_checks::put_along("index_select", z, d, si.get(), g, /*accumulate=*/true);
    return {z};
  });
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& ids) {
  const Tensor y = quietly([&] { return ember::gather(x, dim, ids); });
  const Saved si(index_checks::at_least_1d(ids));
  const Shape shape = x.shape();
  const int64_t d = wrap_dim("gather", dim, std::max<int64_t>(x.ndim(), 1));
  return record("GatherBackward0", y, {&x}, [si, d, shape](const Tensor& g) -> Grads {
    const Shape flat = shape.empty() ? Shape{1} : shape;
    const Tensor z = zeros(flat, g.dtype(), g.device());
    index_checks::scatter_checked(z, d, index_checks::kernel_ids(si.get()),
                                  ember::reshape(g, si.get().shape()), /*accumulate=*/true);
    return {ember::reshape(z, shape)};
  });
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& ids, const Tensor& src, bool accumulate) {
  const Tensor y = quietly([&] { return ember::scatter(x, dim, ids, src, accumulate, false); });
  const Saved si(index_checks::at_least_1d(ids));
  const int64_t d = wrap_dim("scatter", dim, std::max<int64_t>(x.ndim(), 1));
  const Shape src_shape = src.shape();
  const bool nx = x.requires_grad(), ns = src.requires_grad();
  return record(accumulate ? "ScatterAddBackward0" : "ScatterBackward0", y, {&x, &src},
                [si, d, src_shape, accumulate, nx, ns](const Tensor& g) -> Grads {
    const Tensor& ids = si.get();
    const Tensor g1 = index_checks::at_least_1d(g);
    std::optional<Tensor> gx, gs;
    if (nx)  // a set replaces: the written positions pass nothing back
      gx = accumulate ? g : ember::reshape(ember::scatter(g1, d, ids, zeros(ids.shape(), g.dtype(), g.device()),
                                                          false, false), g.shape());
    if (ns) {
      Tensor part = ember::gather(g1, d, ids);  // ids' shape; src may be larger
      if (part.shape() != src_shape && int64_t(src_shape.size()) == part.ndim()) {
        const Tensor z = zeros(src_shape, g.dtype(), g.device());
        Tensor corner = z;
        for (int64_t k = 0; k < part.ndim(); ++k) corner = ember::narrow(corner, k, 0, part.shape()[size_t(k)]);
        copy_into(part, corner, "backward");
        part = z;
      }
      gs = part;
    }
    return {gx, gs};
  });
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& ids, const Tensor& src,
                 const std::optional<Tensor>& alpha) {
  refuse_grad("index_add", {alpha ? &*alpha : nullptr});  // alpha's own gradient: not yet
  const Tensor y = quietly([&] { return ember::index_add(x, dim, ids, src, alpha, false); });
  const Saved si(index_checks::at_least_1d(ids));
  const int64_t d = wrap_dim("index_add", dim, std::max<int64_t>(x.ndim(), 1));
  std::optional<Saved> sa;
  if (alpha) sa.emplace(*alpha);
  const Shape src_shape = src.shape();
  return record("IndexAddBackward0", y, {&x, &src}, [si, sa, d, src_shape](const Tensor& g) -> Grads {
    Tensor gs = ember::index_select(index_checks::at_least_1d(g), d, si.get());
    if (sa) gs = mul(gs, sa->get());
    return {g, ember::reshape(gs, src_shape)};
  });
}

SortResult sort(const Tensor& x, int64_t dim, bool descending) {
  SortResult r = quietly([&] { return ember::sort(x, dim, descending); });
  const Saved si(r.indices);
  const Shape shape = x.shape();
  const int64_t d = wrap_dim("sort", dim, std::max<int64_t>(x.ndim(), 1));
  r.values = record("SortBackward0", r.values, {&x}, [si, d, shape](const Tensor& g) -> Grads {
    if (shape.empty()) return {g};
    const Tensor z = zeros(shape, g.dtype(), g.device());
    // each row's indices are a permutation: every position is written once
    index_checks::scatter_checked(z, d, si.get(), g, false, /*unique_ids=*/true);
    return {z};
  });
  return r;
}

Tensor flip(const Tensor& x, const Dims& dims) {
  const Tensor y = quietly([&] { return ember::flip(x, dims); });
  return record("FlipBackward0", y, {&x},
                [dims](const Tensor& g) -> Grads { return {ember::flip(g, dims)}; });
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const Tensor y = quietly([&] { return ember::scan(ScanOp::Sum, x, dim, dtype); });
  const int64_t d = wrap_dim("cumsum", dim, std::max<int64_t>(x.ndim(), 1));
  const bool scalar0 = x.ndim() == 0;
  // the gradient of a running sum is the running sum of the gradient from the other end
  return record("CumsumBackward0", y, {&x}, [d, scalar0](const Tensor& g) -> Grads {
    if (scalar0) return {g};
    return {ember::flip(ember::scan(ScanOp::Sum, ember::flip(g, {d}), d, std::nullopt), {d})};
  });
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const Tensor y = quietly([&] { return ember::scan(ScanOp::Prod, x, dim, dtype); });
  const int64_t d = wrap_dim("cumprod", dim, std::max<int64_t>(x.ndim(), 1));
  const Saved sx(x), sy(y);
  return record("CumprodBackward0", y, {&x}, [d, sx, sy](const Tensor& g) -> Grads {
    const Tensor& x0 = sx.get();
    if (x0.ndim() == 0) return {g};
    const Tensor x = to_dtype(x0, g.dtype()), y = to_dtype(sy.get(), g.dtype());
    const auto rcumsum = [&](const Tensor& v) {  // sums from each position to the row's end
      return ember::flip(ember::scan(ScanOp::Sum, ember::flip(v, {d}), d, std::nullopt), {d});
    };
    // Before a row's first zero: sum_{k>=i} g_k y_k / x_i. At the first zero: the same sum
    // with that zero taken as 1 (the products that skip it). After it: nothing.
    const Tensor zero = scalar(0.0, x), one = scalar(1.0, x);
    const Tensor zeros_before = ember::scan(ScanOp::Sum, cmp(CmpOp::Eq, x, zero), d, std::nullopt);
    const Tensor before = cmp(CmpOp::Eq, zeros_before, full_int({}, 0, zeros_before.dtype(), x.device()));
    const Tensor first = logical_binary("logical_and", cmp(CmpOp::Eq, x, zero),
                                        cmp(CmpOp::Eq, zeros_before, full_int({}, 1, zeros_before.dtype(), x.device())));
    const Tensor head = div(rcumsum(mul(g, y)), ember::where(before, x, one));
    const Tensor y1 = ember::scan(ScanOp::Prod, ember::where(first, one, x), d, std::nullopt);
    const Tensor at_zero = rcumsum(mul(g, y1));
    return {ember::where(before, head, keep_where(first, at_zero))};
  });
}

Tensor pad_constant(const Tensor& x, const Shape& pads, double value) {
  const Tensor y = quietly([&] { return ember::pad(x, pads, PadMode::Constant, value); });
  const Shape shape = x.shape();
  // the gradient is the output's gradient where the input landed; padding crops it back
  return record("ConstantPadNdBackward0", y, {&x}, [pads, shape](const Tensor& g) -> Grads {
    Tensor out = g;
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> grow;  // cropped dims
    for (size_t i = 0; i < pads.size() / 2; ++i) {
      const int64_t d = int64_t(shape.size()) - 1 - int64_t(i), lo = pads[2 * i], hi = pads[2 * i + 1];
      const int64_t n = shape[size_t(d)];
      const int64_t start = std::max<int64_t>(lo, 0);
      const int64_t len = std::min(n - std::max<int64_t>(-lo, 0) - std::max<int64_t>(-hi, 0),
                                   out.shape()[size_t(d)] - start);
      out = ember::narrow(out, d, start, std::max<int64_t>(len, 0));
      if (lo < 0 || hi < 0) grow.push_back({d, {std::max<int64_t>(-lo, 0), std::max<int64_t>(-hi, 0)}});
    }
    if (!grow.empty()) {  // the cropped input positions get zeros
      Shape pads_back(2 * shape.size(), 0);
      for (auto& [d, lh] : grow) {
        const size_t i = shape.size() - 1 - size_t(d);
        pads_back[2 * i] = lh.first;
        pads_back[2 * i + 1] = lh.second;
      }
      out = ember::pad(out, pads_back, PadMode::Constant, 0.0);
    }
    return {out};
  });
}

Tensor prod(const Tensor& x, const Dims& dims, bool keepdim) {
  const Tensor y = quietly([&] { return ember::prod(x, dims, keepdim); });
  const Saved sx(x);
  const Dims red = reduced_dims("prod", dims, x.ndim());
  return record(dims.empty() ? "ProdBackward0" : "ProdBackward1", y, {&x},
                [sx, red](const Tensor& g) -> Grads {
    const Tensor& x = sx.get();
    if (x.ndim() == 0) return {g};
    // Each element's gradient is the product of the others in its group: an exclusive
    // running product from each end, exact where elements are zero.
    Dims order;
    Shape rows;
    int64_t k = 1;
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (!std::binary_search(red.begin(), red.end(), d)) {
        order.push_back(d);
        rows.push_back(x.shape()[size_t(d)]);
      }
    for (int64_t d : red) {
      order.push_back(d);
      k *= x.shape()[size_t(d)];
    }
    if (k == 0) return {zeros(x.shape(), g.dtype(), g.device())};
    const Tensor xp = ember::permute(x, order);
    Shape flat = rows;
    flat.push_back(k);
    const Tensor xr = ember::reshape(xp, flat);
    const int64_t last = int64_t(rows.size());
    Shape one_shape = rows;
    one_shape.push_back(1);
    const Tensor one = ones(one_shape, x.dtype(), x.device());
    const auto exclusive = [&](const Tensor& v) {
      return k == 1 ? one
                    : ember::cat({one, ember::scan(ScanOp::Prod, ember::narrow(v, last, 0, k - 1), last,
                                                   std::nullopt)},
                                 last);
    };
    const Tensor others =
        mul(exclusive(xr), ember::flip(exclusive(ember::flip(xr, {last})), {last}));
    const Tensor gr = mul(ember::reshape(g, one_shape), others);
    Dims inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i) inverse[size_t(order[i])] = int64_t(i);
    return {ember::permute(ember::reshape(gr, xp.shape()), inverse)};
  });
}

Tensor index_put(const Tensor& x, const IndexKey& key, const Tensor& v) {
  const Tensor y = quietly([&] {
    const Tensor c = clone(x);
    write_index(resolve_index(c, key), v);
    return c;
  });
  const Shape vshape = v.shape();
  // x's gradient: the written positions take nothing; v's: the gradient there (summed over
  // v's broadcast by the engine), as PyTorch's index_put
  return record("IndexPutBackward0", y, {&x, &v}, [key, vshape](const Tensor& g) -> Grads {
    const Tensor gx = clone(g);
    write_index(resolve_index(gx, key), scalar(0.0, g));
    Tensor gv = read_index(resolve_index(g, key));
    if (gv.shape() != vshape && gv.numel() == shape_numel(vshape)) gv = ember::reshape(gv, vshape);
    return {gx, gv};
  });
}

Tensor slice_scatter(const Tensor& t, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  const Tensor y = quietly([&] { return ember::slice_scatter(t, src, dim, start, end, step); });
  const int64_t d = wrap_dim("slice_scatter", dim, t.ndim());
  const int64_t size = t.shape()[size_t(d)];
  const auto bound = [&](std::optional<int64_t> v, int64_t fallback) {  // as the op's
    if (!v) return fallback;
    return std::clamp(*v < 0 ? *v + size : *v, int64_t(0), size);
  };
  const int64_t lo = bound(start, 0), hi = bound(end, size);
  const Shape src_shape = src.shape();
  return record("SliceScatterBackward0", y, {&t, &src},
                [d, lo, hi, step, src_shape](const Tensor& g) -> Grads {
    const Tensor gt = ember::slice_scatter(g, zeros(src_shape, g.dtype(), g.device()), d, lo, hi, step);
    return {gt, ember::slice(g, d, lo, hi, step)};
  });
}

}  // namespace ember::autograd::d
