"""Autograd: requires_grad, backward, grad, no_grad, and each op's derivative.

Every differentiable op is checked three ways: on the CPU in float64 against central
finite differences; on every device in float32 against the CPU's float64 gradients; and,
where PyTorch is installed, against torch's float64 gradients (its tie and kink rules).
Every public function is classified here (differentiable, cutting the graph, refusing a
tensor that requires grad until it has a derivative, or taking no tensor), so a new
binding without a derivative fails `test_every_function_is_classified`.
"""

from __future__ import annotations

import threading

import ember
import numpy as np
import pytest

try:
    import torch
    import torch.nn.functional as torch_F
except ImportError:  # the torch comparisons run where it is installed
    torch = None


def _gelu_tanh(m, x):
    return m.nn.functional.gelu(x, approximate="tanh") if m is torch else ember.gelu(x, approximate="tanh")


def _f(name):
    """A function both libraries spell the same (ember mirrors PyTorch's names)."""
    return lambda m, *xs: getattr(m, name)(*xs)


# Unary rows of the op table: ember name -> (function over the library, input domain).
# Names torch spells differently are mapped here.
UNARY = {
    "neg": "any", "abs": "any", "sqr": "any", "relu": "any", "sign": "any", "floor": "pos",
    "ceil": "pos", "round": "pos", "trunc": "any", "exp": "any", "expm1": "any", "log": "pos",
    "log1p": "pos", "sqrt": "pos", "rsqrt": "pos", "recip": "any", "sin": "any", "cos": "any",
    "tan": "any", "tanh": "any", "erf": "any", "gelu": "any", "gelu_tanh": "any", "silu": "any",
    "sigmoid": "any",
}  # fmt: skip
TORCH_NAMES = {"sqr": "square", "recip": "reciprocal"}
# Binary rows: ember name -> domains of (a, b).
BINARY = {
    "add": ("any", "any"), "sub": ("any", "any"), "mul": ("any", "any"), "div": ("any", "any"),
    "pow": ("pos", "any"), "maximum": ("any", "any"), "minimum": ("any", "any"),
    "atan2": ("any", "any"), "remainder": ("pos", "pos"), "floor_divide": ("pos", "pos"),
    "trunc_divide": ("pos", "pos"),
}  # fmt: skip
# Rows whose results are bool or integer, or that take integers only: they cut the graph.
CUT_ROWS = {"isnan", "isinf", "isfinite", "bitwise_not", "bitwise_and", "bitwise_or",
            "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin"}  # fmt: skip
# Rows differentiated through their own functions below (clamp; sum/max/min reductions).
OTHER_ROWS = {"clamp", "sum", "max", "min"}


def _unary(name):
    if name == "gelu_tanh":
        return _gelu_tanh
    if name in ("gelu", "silu"):
        return lambda m, x: getattr(torch_F, name)(x) if m is torch else getattr(ember, name)(x)
    tname = TORCH_NAMES.get(name, name)
    return lambda m, x: getattr(m, tname if m is torch else name)(x)


def _binary(name):
    if name == "floor_divide":  # torch differentiates the floor division as div(rounding_mode=)
        return lambda m, a, b: m.div(a, b, rounding_mode="floor") if m is torch else ember.floor_divide(a, b)
    if name == "trunc_divide":
        return lambda m, a, b: m.div(a, b, rounding_mode="trunc")
    return _f(name)


# Differentiable cases: name -> (function over the library, [(shape, domain)] per input).
CASES = {f"unary/{n}": (_unary(n), [((2, 3), d)]) for n, d in UNARY.items()}
CASES.update({f"binary/{n}": (_binary(n), [((2, 3), da), ((2, 3), db)]) for n, (da, db) in BINARY.items()})
CASES.update({
    # broadcasting: gradients summed back over the broadcast dims
    "broadcast/add row": (lambda m, a, b: a + b, [((2, 3), "any"), ((3,), "any")]),
    "broadcast/mul column": (lambda m, a, b: a * b, [((2, 3), "any"), ((2, 1), "any")]),
    "broadcast/div 0-d": (lambda m, a, b: a / b, [((2, 3), "any"), ((), "pos")]),
    "broadcast/pow both": (lambda m, a, b: a ** b, [((2, 1), "pos"), ((1, 3), "any")]),
    "number/radd": (lambda m, a: 2.0 + a, [((2, 3), "any")]),
    "number/rsub": (lambda m, a: 1.5 - a, [((2, 3), "any")]),
    "number/rdiv": (lambda m, a: 2.0 / a, [((2, 3), "any")]),
    "number/pow": (lambda m, a: a ** 3, [((2, 3), "any")]),
    "number/rpow": (lambda m, a: 2.0 ** a, [((2, 3), "any")]),
    "number/mul": (lambda m, a: a * -0.5, [((2, 3), "any")]),
    "clamp": (lambda m, a: m.clamp(a, -0.6, 0.9), [((3, 4), "any")]),
    "clamp min": (lambda m, a: m.clamp(a, min=0.1), [((3, 4), "any")]),
    "where": (lambda m, a, b: m.where(a > 0, a, b), [((2, 3), "any"), ((2, 3), "any")]),
    "masked_fill": (lambda m, a: m.masked_fill(a, a < 0, 0.5), [((2, 3), "any")]),
    "masked_fill tensor": (lambda m, a, v: m.masked_fill(a, a < 0, v), [((2, 3), "any"), ((), "any")]),
    "elu": (lambda m, a: torch_F.elu(a) if m is torch else ember.elu(a), [((2, 3), "any")]),
    "tril": (lambda m, a: m.tril(a), [((3, 3), "any")]),
    "triu": (lambda m, a: m.triu(a, 1), [((3, 3), "any")]),
    # reductions
    "sum": (lambda m, a: m.sum(a), [((2, 3), "any")]),
    "sum dim": (lambda m, a: m.sum(a, 1), [((2, 3, 2), "any")]),
    "sum dims keepdim": (lambda m, a: a.sum((0, 2), keepdim=True), [((2, 3, 2), "any")]),
    "mean": (lambda m, a: m.mean(a), [((2, 3), "any")]),
    "mean dim": (lambda m, a: a.mean(-1, keepdim=True), [((2, 3), "any")]),
    "amax": (lambda m, a: m.amax(a, 1), [((3, 4), "any")]),
    "amin": (lambda m, a: m.amin(a, 0), [((3, 4), "any")]),
    "max": (lambda m, a: m.max(a), [((3, 4), "any")]),
    "min": (lambda m, a: m.min(a), [((3, 4), "any")]),
    "max dim values": (lambda m, a: m.max(a, 1)[0], [((3, 4), "any")]),
    "min dim values": (lambda m, a: m.min(a, 0)[0], [((3, 4), "any")]),
    "var": (lambda m, a: m.var(a, 1), [((3, 4), "any")]),
    "std": (lambda m, a: m.std(a, 0, correction=0) if m is torch else ember.std(a, 0, correction=0), [((3, 4), "any")]),
    "logsumexp": (lambda m, a: m.logsumexp(a, 1), [((3, 4), "any")]),
    "norm": (lambda m, a: m.norm(a), [((3, 4), "any")]),
    "softmax": (lambda m, a: m.softmax(a, 1), [((3, 4), "any")]),
    "log_softmax": (lambda m, a: m.log_softmax(a, 0), [((3, 4), "any")]),
    # products
    "matmul": (lambda m, a, b: m.matmul(a, b), [((2, 3), "any"), ((3, 4), "any")]),
    "matmul batched broadcast": (lambda m, a, b: a @ b, [((2, 2, 3), "any"), ((3, 2), "any")]),
    "matmul vector matrix": (lambda m, a, b: a @ b, [((3,), "any"), ((2, 3, 2), "any")]),
    "matmul matrix vector": (lambda m, a, b: a @ b, [((2, 3), "any"), ((3,), "any")]),
    "dot": (lambda m, a, b: m.dot(a, b), [((4,), "any"), ((4,), "any")]),
    "mv": (lambda m, a, b: m.mv(a, b), [((2, 3), "any"), ((3,), "any")]),
    # shapes and views
    "reshape": (lambda m, a: m.reshape(a, (3, 2)), [((2, 3), "any")]),
    "view": (lambda m, a: a.view(6), [((2, 3), "any")]),
    "flatten": (lambda m, a: m.flatten(a), [((2, 3, 2), "any")]),
    "transpose": (lambda m, a: m.transpose(a, 0, 2), [((2, 3, 2), "any")]),
    "t": (lambda m, a: m.t(a) * m.t(a), [((2, 3), "any")]),
    "T": (lambda m, a: a.T, [((2, 3), "any")]),
    "permute": (lambda m, a: m.permute(a, (2, 0, 1)), [((2, 3, 2), "any")]),
    "squeeze": (lambda m, a: m.squeeze(a), [((2, 1, 3), "any")]),
    "unsqueeze": (lambda m, a: m.unsqueeze(a, 1), [((2, 3), "any")]),
    "narrow": (lambda m, a: m.narrow(a, 1, 1, 2), [((2, 3), "any")]),
    "broadcast_to": (lambda m, a: m.broadcast_to(a, (2, 2, 3)), [((2, 1, 3), "any")]),
    "expand": (lambda m, a: a.expand(4, 3), [((1, 3), "any")]),
    "split": (lambda m, a: m.split(a, 2, 1)[1], [((2, 5), "any")]),
    "chunk": (lambda m, a: m.chunk(a, 2, 0)[0], [((4, 2), "any")]),
    "cat": (lambda m, a, b: m.cat([a, b, a], 1), [((2, 3), "any"), ((2, 1), "any")]),
    "stack": (lambda m, a, b: m.stack([a, b], 1), [((2, 3), "any"), ((2, 3), "any")]),
    "roll": (lambda m, a: m.roll(a, 1, 1), [((2, 3), "any")]),
    "tile": (lambda m, a: m.tile(a, (2, 1)), [((2, 3), "any")]),
    "repeat": (lambda m, a: a.repeat(2, 2), [((2, 3), "any")]),
    "repeat_interleave": (lambda m, a: m.repeat_interleave(a, 2, 1), [((2, 3), "any")]),
    "repeat_interleave flat": (lambda m, a: m.repeat_interleave(a, 3), [((2, 2), "any")]),
    "meshgrid": (lambda m, a, b: m.meshgrid(a, b, indexing="ij")[0] * m.meshgrid(a, b, indexing="ij")[1], [((2,), "any"), ((3,), "any")]),
    "getitem slice": (lambda m, a: a[:, 1:], [((2, 3), "any")]),
    "getitem step": (lambda m, a: a.flip(0)[:, ::2] if m is torch else a[::-1, ::2], [((3, 4), "any")]),
    "getitem int": (lambda m, a: a[1], [((2, 3), "any")]),
    "getitem none": (lambda m, a: a[None, :, 0], [((2, 3), "any")]),
    "clone": (lambda m, a: m.clone(a), [((2, 3), "any")]),
    "contiguous": (lambda m, a: a.T.contiguous(), [((2, 3), "any")]),
    "to float32": (lambda m, a: (a * 2).to(m.float32).exp(), [((2, 3), "any")]),
    # scans, sorting, flips, padding, resampling
    "cumsum": (lambda m, a: m.cumsum(a, 1), [((2, 4), "any")]),
    "cumprod": (lambda m, a: m.cumprod(a, 1), [((2, 4), "any")]),
    "cumprod with zeros": (lambda m, a: m.cumprod(a * m.tensor([1.0, 0.0, 1.0, 0.0, 1.0], dtype=a.dtype, device=a.device), 1), [((2, 5), "any")]),
    "cumprod zero first": (lambda m, a: m.cumprod(a * m.tensor([[0.0], [1.0], [1.0]], dtype=a.dtype, device=a.device), 0), [((3, 2), "any")]),
    "prod": (lambda m, a: m.prod(a), [((2, 3), "any")]),
    "prod dim": (lambda m, a: m.prod(a, 1), [((2, 4), "any")]),
    "prod with zeros": (lambda m, a: m.prod(a * m.tensor([1.0, 0.0, 1.0], dtype=a.dtype, device=a.device), 1, keepdim=True), [((2, 3), "any")]),
    "slice_scatter": (lambda m, a, b: m.slice_scatter(a, b, 1, 0, 3, 2), [((2, 3), "any"), ((2, 2), "any")]),
    "flip": (lambda m, a: m.flip(a, [0, 1]), [((2, 3), "any")]),
    "sort": (lambda m, a: m.sort(a, 1)[0], [((2, 4), "any")]),
    "sort descending": (lambda m, a: m.sort(a, 0, descending=True)[0], [((3, 2), "any")]),
    "topk": (lambda m, a: m.topk(a, 2, 1)[0], [((2, 4), "any")]),
    "pad": (lambda m, a: (torch_F if m is torch else ember).pad(a, (1, 2)), [((2, 3), "any")]),
    "pad crop": (lambda m, a: (torch_F if m is torch else ember).pad(a, (-1, 1, 1, -1), value=0.5), [((3, 3), "any")]),
    "pad reflect": (lambda m, a: (torch_F if m is torch else ember).pad(a, (2, 1), mode="reflect"), [((2, 4), "any")]),
    "pad replicate": (lambda m, a: (torch_F if m is torch else ember).pad(a, (1, 2), mode="replicate"), [((2, 3), "any")]),
    "pad circular": (lambda m, a: (torch_F if m is torch else ember).pad(a[None], (1, 2), mode="circular"), [((2, 3), "any")]),
    "interpolate nearest": (lambda m, a: (torch_F if m is torch else ember).interpolate(a[None], size=(5,), mode="nearest"), [((2, 3), "any")]),
    "interpolate linear": (lambda m, a: (torch_F if m is torch else ember).interpolate(a[None], size=(5,), mode="linear", align_corners=False), [((2, 3), "any")]),
    "interpolate bilinear": (lambda m, a: (torch_F if m is torch else ember).interpolate(a[None, None], size=(3, 5), mode="bilinear", align_corners=True), [((2, 3), "any")]),
    # gathers and scatters (ids with repeats: their gradients add up)
    "index_select": (lambda m, a: m.index_select(a, 1, m.tensor([2, 0, 2], device=a.device)), [((2, 3), "any")]),
    "gather": (lambda m, a: m.gather(a, 1, m.tensor([[0, 0], [2, 1]], device=a.device)), [((2, 3), "any")]),
    "scatter": (lambda m, a, b: m.scatter(a, 1, m.tensor([[0, 2], [1, 0]], device=a.device), b), [((2, 3), "any"), ((2, 2), "any")]),
    "scatter_add": (lambda m, a, b: m.scatter_add(a, 1, m.tensor([[0, 0], [2, 2]], device=a.device), b), [((2, 3), "any"), ((2, 2), "any")]),
    "index_add": (lambda m, a, b: m.index_add(a, 0, m.tensor([1, 0, 1], device=a.device), b), [((2, 3), "any"), ((3, 3), "any")]),
    "embedding": (lambda m, w: (torch_F if m is torch else ember).embedding(m.tensor([[1, 0], [1, 2]], device=w.device), w), [((3, 4), "any")]),
    "masked_select": (lambda m, a: m.masked_select(a, a > 0), [((2, 3), "any")]),
    "masked_select broadcast": (lambda m, a: m.masked_select(a, m.tensor([True, False, True], device=a.device)), [((2, 3), "any")]),
    "getitem ids": (lambda m, a: a[m.tensor([1, 0, 1], device=a.device)], [((2, 3), "any")]),
    "getitem column ids": (lambda m, a: a[:, m.tensor([2, 2, 0], device=a.device)], [((2, 3), "any")]),
    "getitem pairs": (lambda m, a: a[m.tensor([0, 1, 1], device=a.device), m.tensor([2, 0, 2], device=a.device)], [((2, 3), "any")]),
    "getitem mask": (lambda m, a: a[a > 0], [((2, 3), "any")]),
    "getitem row mask": (lambda m, a: a[m.tensor([True, False, True], device=a.device)], [((3, 2), "any")]),
    # a composite: one input reaches the output along several paths
    "reused input": (lambda m, a: (a * a).exp() + a.sin() * a, [((2, 3), "any")]),
    "layer norm": (lambda m, a, w: (a - a.mean(-1, keepdim=True)) / (a.var(-1, keepdim=True, correction=0) + 1e-5).sqrt() * w, [((2, 4), "any"), ((4,), "any")]),
})  # fmt: skip


LOSSY = {"to float32"}


def _values(rng, shape, domain):
    mag = np.asarray(rng.uniform(0.3, 1.5, shape))
    if domain == "pos":
        return mag
    return np.asarray(mag * rng.choice([-1.0, 1.0], shape))


def _inputs(name, rng):
    return [_values(rng, s, d) for s, d in CASES[name][1]]


def _ember_grads(name, arrays, upstream, device, dtype):
    fn = CASES[name][0]
    xs = [ember.tensor(a, dtype=dtype, device=device, requires_grad=True) for a in arrays]
    out = fn(ember, *xs)
    out.backward(ember.tensor(upstream(out.shape), dtype=out.dtype, device=device))
    return out, [None if x.grad is None else x.grad.numpy().astype(np.float64) for x in xs]


def _upstream(rng):
    cache = {}

    def make(shape):
        if tuple(shape) not in cache:
            cache[tuple(shape)] = rng.uniform(-1.0, 1.0, tuple(shape))
        return cache[tuple(shape)]

    return make


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name, rng):
    """CPU, float64: analytic gradients against central differences."""
    arrays = _inputs(name, rng)
    up = _upstream(rng)
    _, grads = _ember_grads(name, arrays, up, "cpu", "float64")
    fn = CASES[name][0]

    def f(values):
        with ember.no_grad():
            out = fn(ember, *[ember.tensor(v, dtype="float64") for v in values])
            return float((out.numpy() * up(out.shape)).sum())

    lossy = name in LOSSY  # a float32 step: wider differences, looser match
    eps = 1e-2 if lossy else 1e-6
    for i, a in enumerate(arrays):
        want = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            hi = [v.copy() for v in arrays]
            lo = [v.copy() for v in arrays]
            hi[i][j] += eps
            lo[i][j] -= eps
            want[j] = (f(hi) - f(lo)) / (2 * eps)
        assert grads[i] is not None, f"no gradient reached input {i}"
        tol = 1e-4 if lossy else 1e-5
        np.testing.assert_allclose(grads[i], want, rtol=tol, atol=tol / 10, err_msg=f"input {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_on_every_device(name, device, rng):
    """float32 on each device against the CPU's float64 gradients."""
    arrays = _inputs(name, rng)
    up = _upstream(rng)
    out, grads = _ember_grads(name, arrays, up, device, "float32")
    assert out.device == device
    _, want = _ember_grads(name, arrays, up, "cpu", "float64")
    for i, (g, w) in enumerate(zip(grads, want)):
        assert g is not None, f"no gradient reached input {i}"
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"input {i}")


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_pytorch(name, rng):
    """float64 on the CPU against torch: PyTorch's rules at kinks and ties included."""
    arrays = _inputs(name, rng)
    up = _upstream(rng)
    out, grads = _ember_grads(name, arrays, up, "cpu", "float64")
    xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    tout = CASES[name][0](torch, *xs)
    assert tuple(out.shape) == tuple(tout.shape)
    tout.backward(torch.tensor(up(tuple(tout.shape))))
    tol = 1e-6 if name in LOSSY else 1e-10
    for i, (g, x) in enumerate(zip(grads, xs)):
        np.testing.assert_allclose(g, x.grad.numpy(), rtol=tol, atol=tol / 100, err_msg=f"input {i}")


def test_every_table_row_is_differentiated_or_cuts():
    rows = {row[1] for row in ember._core._op_table()}
    covered = set(UNARY) | set(BINARY) | CUT_ROWS | OTHER_ROWS
    assert rows - covered == set(), "give these op-table rows a derivative (csrc/core/derivatives.cpp) and a case here"


# ---- ties and kinks, PyTorch's rules


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize(
    "expr",
    ["m.maximum(x, y)", "m.minimum(x, y)", "m.amax(x, 1)", "m.amin(x, 0)", "m.max(x)",
     "m.relu(x)", "m.abs(x)", "m.clamp(x, 0.0, 1.0)", "m.sign(x)", "m.max(x, 1)[0]",
     "m.min(x, 0)[0]", "m.sort(x, 1)[0]", "m.topk(x, 2)[0]"],
)  # fmt: skip
def test_ties_and_kinks_follow_pytorch(expr):
    data = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0]])
    other = np.array([[1.0, 0.5, 0.0], [1.0, 2.0, -1.0]])
    got = []
    for m in (ember, torch):
        x = m.tensor(data, requires_grad=True)
        y = m.tensor(other, requires_grad=True)
        out = eval(expr, {"m": m, "x": x, "y": y})
        out.sum().backward()
        got.append([None if t.grad is None else np.asarray(t.grad.numpy()) for t in (x, y)])
    for e, t in zip(*got):
        if t is None:
            assert e is None
        else:
            np.testing.assert_array_equal(e, t)


# ---- the API


def test_leaves_and_results():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None and x.grad_fn is None
    y = x * 3
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    z = ember.tensor([1.0, 2.0])
    assert not z.requires_grad and z.is_leaf and (z + 1).grad_fn is None
    assert (x + z).grad_fn.name() == "AddBackward0"
    assert x.sum().grad_fn.name() == "SumBackward0" and repr(x.sum().grad_fn) == "<SumBackward0>"


@pytest.mark.parametrize(
    "make",
    ["ember.zeros(2, requires_grad=True)", "ember.ones((2, 2), requires_grad=True)",
     "ember.full((2,), 3.0, requires_grad=True)", "ember.rand(3, requires_grad=True)",
     "ember.randn(3, requires_grad=True)", "ember.arange(0.0, 3.0, requires_grad=True)",
     "ember.linspace(0, 1, 5, requires_grad=True)", "ember.eye(2, requires_grad=True)",
     "ember.empty(2, requires_grad=True)", "ember.zeros_like(ember.ones(2), requires_grad=True)",
     "ember.ones_like(ember.ones(2), requires_grad=True)", "ember.tensor(ember.ones(2), requires_grad=True)",
     "ember.full_like(ember.ones(2), 2.0, requires_grad=True)", "ember.rand_like(ember.ones(2), requires_grad=True)",
     "ember.randn_like(ember.ones(2), requires_grad=True)", "ember.empty_like(ember.ones(2), requires_grad=True)"],
)  # fmt: skip
def test_creation_functions_take_requires_grad(make):
    t = eval(make)
    assert t.requires_grad and t.is_leaf


def test_only_floating_tensors_require_grad():
    with pytest.raises(ember.AutogradError, match="floating dtype") as info:
        ember.tensor([1, 2], requires_grad=True)
    assert isinstance(info.value, RuntimeError) and info.value.op == "requires_grad_"
    with pytest.raises(ember.AutogradError):
        ember.arange(3).requires_grad_()
    with pytest.raises(ember.InvalidTypeError):
        ember.ones(2).requires_grad_(1)


def test_requires_grad_setter_and_non_leaves():
    x = ember.ones(2)
    x.requires_grad = True
    assert x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(ember.AutogradError, match="leaf"):
        y.requires_grad_(False)


def test_grad_accumulates_and_clears():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 7.0])
    x.grad = None
    assert x.grad is None
    x.grad = ember.tensor([1.0, 1.0])
    (x * 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(ember.ShapeMismatchError):
        x.grad = ember.ones(3)
    with pytest.raises(ember.DTypeMismatchError):
        x.grad = ember.ones(2, dtype="float64")


def test_retain_grad_keeps_a_non_leafs_gradient():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    z = x * 5  # not retained
    (y * y + z).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [6.0, 12.0])
    assert z.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [23.0, 41.0])
    x.retain_grad()  # a leaf: nothing to do
    with pytest.raises(ember.AutogradError, match="does not require grad"):
        ember.ones(2).retain_grad()


def test_a_gradient_shared_by_two_leaves_is_not_aliased():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    (a + b).sum().backward()  # add's backward gives both inputs the same gradient
    a.grad += 10.0  # .grad is a plain tensor: changed in place, it must not change b's
    np.testing.assert_array_equal(a.grad.numpy(), [11.0, 11.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    (a + b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [12.0, 12.0])
    np.testing.assert_array_equal(b.grad.numpy(), [2.0, 2.0])


def test_numpy_refuses_a_tensor_in_the_graph_and_repr_shows_it():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ember.AutogradError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    with pytest.raises(ember.AutogradError):
        np.asarray(x * 2)
    assert x.tolist() == [1.0, 2.0] and (x * 2).sum().item() == 6.0  # as PyTorch's
    assert repr(x).endswith("requires_grad=True)")
    assert repr(x * 2).endswith("grad_fn=<MulBackward0>)")
    assert "grad" not in repr(x.detach())


def test_detach_shares_memory_outside_the_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    d2 = x.detach()
    with ember.no_grad():
        x += 1.0
    np.testing.assert_array_equal(d2.numpy(), [2.0, 3.0])


def test_backward_of_a_leaf_and_of_a_gradient():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x.backward(ember.ones((2, 2)))
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 2)))
    y = x * 2
    y.backward(gradient=ember.tensor([[1.0, 0.0], [0.0, 1.0]]))
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0, 1.0], [1.0, 3.0]])


def test_autograd_grad():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x * w).sum()
    gx, gw = ember.autograd.grad(y, [x, w])
    np.testing.assert_array_equal(gx.numpy(), w.detach().numpy())
    np.testing.assert_array_equal(gw.numpy(), x.detach().numpy())
    assert x.grad is None and w.grad is None  # grad() touches no .grad
    h = x * 2  # a non-leaf input
    (gh,) = ember.autograd.grad((h * h).sum(), h)
    np.testing.assert_array_equal(gh.numpy(), [4.0, 8.0, 12.0])
    ga, gb = ember.autograd.grad((x * x).sum(), [x, x])  # one input asked twice
    np.testing.assert_array_equal(ga.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(gb.numpy(), [2.0, 4.0, 6.0])
    unused = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="allow_unused"):
        ember.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = ember.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gu is None
    (gv,) = ember.autograd.grad(x * 2, x, grad_outputs=ember.tensor([1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(gv.numpy(), [2.0, 0.0, 4.0])


# ---- grad mode


def test_no_grad_and_enable_grad():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        y = x * 2
        with ember.enable_grad():
            z = x * 2
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @ember.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and ember.is_grad_enabled()
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()
    ember.set_grad_enabled(False)
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_backward_on_two_threads_into_one_leaf():
    w = ember.ones((64, 64), requires_grad=True)
    xs = [ember.full((8, 64), float(i + 1)) for i in range(2)]

    def run(x):
        for _ in range(25):
            (x @ w).sum().backward()

    threads = [threading.Thread(target=run, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # each backward adds 8 * (i + 1) to every element: 25 * (8 + 16)
    np.testing.assert_array_equal(w.grad.numpy(), np.full((64, 64), 25 * 24.0, np.float32))


def test_grad_mode_is_per_thread():
    seen = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        t.start()
        t.join()
        assert not ember.is_grad_enabled()
    assert seen == [True]


# ---- PyTorch's rules, as typed errors


def test_backward_twice_needs_retain_graph():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(ember.AutogradError, match="second time") as info:
        y.backward()
    assert isinstance(info.value, RuntimeError)


def test_changed_saved_tensor_is_refused_at_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1  # a result in the graph
    b = ember.tensor([3.0, 4.0])
    y = (a * b).sum()  # saves b
    b += 1.0  # b needs no grad: the in-place change itself is allowed
    with pytest.raises(ember.AutogradError, match="modified by an in-place"):
        y.backward()


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = ember.ones(2, requires_grad=True)
    for act in (lambda: x.__iadd__(1.0), lambda: x.masked_fill_(x.detach() > 0, 0.0),
                lambda: x.__setitem__(0, 5.0), lambda: x.copy_(ember.zeros(2)),
                lambda: ember.exp(ember.ones(2), out=x)):  # fmt: skip
        with pytest.raises(ember.AutogradError, match="leaf"):
            act()
    with ember.no_grad():
        x += 1.0
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 2.0])


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize(
    "body",
    ["h = x * 2\nh += y\nout = h * h",
     "h = x * 3\nh *= 0.5\nh -= y\nout = h.sin()",
     "h = x * 1\nh **= 2\nh += y\nout = h",
     "h = x * 1\nh /= y\nout = h",
     "h = m.zeros((2, 3), dtype=m.float64)\nh += x\nh *= y\nout = h",
     "h = x * y\nh += x\nh += h\nout = h",
     "h = x @ y.T\nh.masked_fill_(h > 0.5, float('-inf'))\nout = h.softmax(-1)",
     "h = x * 1\nh.masked_fill_(y < 0, 0.0)\nout = h * y",
     "h = x * 1\nh[0] = y[1]\nout = h * y",
     "h = x * 2\nh[:, 1:] = 0.0\nout = h * y",
     "h = x * 2\nh[y < 0] = float('-inf')\nout = h.softmax(-1)",
     "h = x * 1\nh.copy_(y * 2)\nout = h * x",
     "h = m.zeros((2, 3), dtype=m.float64)\nh.copy_(y[0])\nout = h * x",
     "h = x * 1\nh.scatter_(1, m.tensor([[0, 2], [1, 0]]), y[:, :2])\nout = h * h",
     "h = x * 1\nh.scatter_add_(1, m.tensor([[0, 0], [2, 2]]), y[:, :2])\nout = h * h",
     "h = x * 1\nh.index_add_(0, m.tensor([1, 1]), y)\nout = h * h",
     "h = m.zeros((2, 3), dtype=m.float64)\nh[m.tensor([1, 0, 1]), m.tensor([2, 0, 2])] = y[0]\nh[:, 1] = x[:, 0]\nout = h * x"],
)  # fmt: skip
def test_augmented_assignment_in_the_graph_follows_pytorch(body):
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    other = np.array([[1.0, 2.0, -0.5], [0.5, -2.0, 3.0]])
    got = []
    for m in (ember, torch):
        x = m.tensor(data, requires_grad=True)
        y = m.tensor(other, requires_grad=True)
        env = {"m": m, "x": x, "y": y}
        exec(body, env)
        env["out"].sum().backward()
        got.append([env["out"].detach().numpy()] + [None if v.grad is None else v.grad.numpy() for v in (x, y)])
    for e, t in zip(*got):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(e, t, rtol=1e-12)


def test_augmented_assignment_rules():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    v = h[:1]  # a view made before h changes
    h += 1.0
    assert h.grad_fn.name() == "AddBackward0"
    with pytest.raises(ember.AutogradError, match="changed in place"):
        v * 2  # its history no longer describes its values
    wt = x.T  # a view of a leaf, kept across updates of the leaf (weight tying)
    for _ in range(2):
        (wt * 2).sum().backward()
        with ember.no_grad():
            x -= x.grad * 0.1
        x.grad = None
    np.testing.assert_allclose(x.detach().numpy(), [0.6, 1.6], rtol=1e-6)
    with pytest.raises(ember.AutogradError, match="view"):
        g = x * 2
        g[:1] += 1.0
    w = x * 3
    y = w.exp()  # saves its result
    y += 1.0  # changes what exp saved
    with pytest.raises(ember.AutogradError, match="modified by an in-place"):
        y.sum().backward()
    with pytest.raises(ember.ShapeMismatchError):
        small = x * 1
        small += ember.ones((2, 2))


def test_out_is_refused_when_an_input_requires_grad():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ember.AutogradError, match="out="):
        ember.exp(x, out=ember.empty(2))
    with pytest.raises(ember.AutogradError, match="out="):
        ember.add(x, x, out=ember.empty(2))


def test_backward_rules():
    x = ember.ones((2, 2), requires_grad=True)
    with pytest.raises(ember.AutogradError, match="scalar outputs"):
        (x * 2).backward()
    with pytest.raises(ember.AutogradError, match="does not require grad"):
        ember.ones(2).sum().backward()
    with pytest.raises(ember.ShapeMismatchError):
        (x * 2).backward(ember.ones(3))
    with pytest.raises(ember.AutogradError, match="create_graph"):
        x.sum().backward(create_graph=True)
    with ember.no_grad():
        y = (x * 2).sum()
    with pytest.raises(ember.AutogradError, match="does not require grad"):
        y.backward()


# ---- the classification of every public function

# Every public op has a derivative today; an op added without one must refuse a tensor that
# requires grad (autograd::refuse_grad), be listed here, and get a test of its refusal.
REFUSED: set[str] = set()
# Results that are bool or integer, or new tensors: outside the graph, as in PyTorch.
CUTS = """eq ne lt le gt ge isclose allclose argmax argmin argsort argwhere nonzero count_nonzero
isnan isinf isfinite logical_and logical_or logical_xor logical_not any all bitwise_and
bitwise_or bitwise_xor bitwise_not randint_like zeros_like ones_like empty_like full_like
rand_like randn_like""".split()
# Functions that take no tensor to differentiate.
NO_TENSOR = """arange compiled_backends load load_file save save_file cuda_device_count
cuda_is_available device empty eye from_dlpack full get_float32_matmul_precision is_tracking
use_deterministic_algorithms are_deterministic_algorithms_enabled
linspace manual_seed metal_device_count metal_is_available ones rand randint randn
set_float32_matmul_precision set_tracking tensor zeros is_grad_enabled no_grad enable_grad
set_grad_enabled""".split()
# Public functions exercised by CASES under another name.
ALIASES = {"arctan2": "binary/atan2", "true_divide": "binary/div"}


@pytest.mark.parametrize("name", sorted(CUTS))
def test_cut_ops_need_no_derivative(name):
    X = ember.tensor([[1.0, 2.0], [2.0, 0.0]], requires_grad=True)  # noqa: N806
    fn = getattr(ember, name)
    if name.startswith(("logical", "bitwise")) and name not in ("logical_not", "bitwise_not"):
        args = (X > 1, X > 0) if name.startswith("logical") else (ember.ones(2, dtype="int64"),) * 2
    elif name == "bitwise_not":
        args = (ember.ones(2, dtype="int64"),)
    elif name in ("eq", "ne", "lt", "le", "gt", "ge", "isclose", "allclose"):
        args = (X, X * 2)
    elif name in ("full_like", "randint_like"):
        args = (X, 5)
    else:
        args = (X,)
    out = fn(*args)
    outs = out if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if isinstance(o, ember.Tensor):
            assert not o.requires_grad and o.grad_fn is None


def test_every_function_is_classified():
    public = {
        n for n in dir(ember)
        if not n.startswith("_") and callable(getattr(ember, n)) and not isinstance(getattr(ember, n), type)
    }  # fmt: skip
    differentiable = {c.split("/")[-1].split(" ")[0] for c in CASES} | set(ALIASES)
    classified = differentiable | set(REFUSED) | set(CUTS) | set(NO_TENSOR)
    assert public - classified == set(), "classify these in tests/test_autograd.py"


def test_backward_frees_the_graphs_saved_tensors(device):
    n = 256 * 256 * 4  # bytes of one float32 256x256 tensor
    x = ember.randn((256, 256), device=device, requires_grad=True)
    base = device.memory_stats()["bytes_in_use"]
    loss = x.exp().tanh().sum()  # the graph holds exp's and tanh's results
    held = device.memory_stats()["bytes_in_use"] - base
    assert held >= 2 * n
    loss.backward()
    after = device.memory_stats()["bytes_in_use"] - base
    assert after <= n + 64 * 1024, (held, after)  # x.grad and small change, no graph


def test_a_graph_keeps_only_what_its_backward_reads(device):
    n = 256 * 256 * 4
    x = ember.randn((256, 256), device=device, requires_grad=True)
    w = ember.randn((256, 256), device=device)  # outside the graph
    c = x * 2.0
    d = c + 1.0  # an add's backward reads nothing
    e = d @ w  # x @ w with w outside the graph: only w is read back
    before = device.memory_stats()["bytes_in_use"]
    del c, d
    assert before - device.memory_stats()["bytes_in_use"] >= 2 * n
    e.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.broadcast_to(w.numpy().sum(1), (256, 256)),
                               rtol=1e-4, atol=1e-3)


def test_training_memory_stays_flat(device):
    w = ember.randn((64, 64), device=device, requires_grad=True)
    x = ember.randn((32, 64), device=device)
    opt = ember.optim.AdamW([w], lr=1e-3)

    def step():
        opt.zero_grad()
        loss = ((x @ w).tanh() ** 2).mean()
        loss.backward()
        opt.step()

    for _ in range(2):
        step()
    device.synchronize()
    before = device.memory_stats()["bytes_in_use"]
    for _ in range(10):
        step()
    device.synchronize()
    assert device.memory_stats()["bytes_in_use"] <= before


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_gradients(device, dtype, rng):
    """Gradients keep their leaf's dtype and agree with float32's to the half's precision."""
    a = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (8, 3)).astype(np.float32)
    grads = {}
    for dt in (dtype, "float32"):
        xa = ember.tensor(a, dtype=dt, device=device, requires_grad=True)
        xw = ember.tensor(w, dtype=dt, device=device, requires_grad=True)
        loss = (xa @ xw).softmax(-1).log().mean() + (xa * xa).sum() * 0.01
        loss.backward()
        assert xa.grad.dtype == dt and xw.grad.dtype == dt
        grads[dt] = [xa.grad.to_dtype("float32").numpy(), xw.grad.to_dtype("float32").numpy()]
    tol = 2e-2 if dtype == "bfloat16" else 3e-3
    for got, want in zip(grads[dtype], grads["float32"]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_a_training_loop_keeps_its_memory():
    """Each backward frees what its graph saved: the graph of the last step is released."""
    w = ember.randn((8, 8), requires_grad=True)
    x = ember.randn((4, 8))
    for _ in range(3):
        loss = (x @ w).tanh().sum()
        loss.backward()
        with ember.no_grad():
            w -= w.grad * 0.1
        w.grad = None
        with pytest.raises(ember.AutogradError, match="second time"):
            loss.backward()
