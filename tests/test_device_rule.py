"""The device rule on every path that takes two tensors: reads, writes, out=, index keys.

Each public function and Tensor method is classified here: one that takes two tensors
has call forms below, each run with one operand on another Device, and must raise
DeviceMismatchError; every function with an `out=` parameter is also called with its
result tensor on the other Device. A new binding that is in no list fails
`test_every_binding_is_classified`, so none can skip the rule unnoticed.

The pairs of Devices: the CPU and a GPU (both ways), and two instances of one GPU (a
`Device.metal()` or `Device.cuda(new_stream=True)` beside the shared one), which share
hardware but not a queue.
"""

from __future__ import annotations

import inspect
import re

import ember
import numpy as np
import pytest
from conftest import DEVICE_SPECS

GPUS = [s for s in DEVICE_SPECS if s != "cpu"]


def _own_instance(kind: str):
    return ember.Device.metal() if kind == "metal" else ember.Device.cuda(new_stream=True)


# (home, other) device factories; ids so that failures name the pair
PAIRS = []
for _g in GPUS:
    _cpu, _gpu = (lambda: ember.device("cpu")), (lambda g=_g: ember.device(g))
    PAIRS += [
        pytest.param((_cpu, _gpu), id=f"cpu-{_g}"),
        pytest.param((_gpu, _cpu), id=f"{_g}-cpu"),
        pytest.param((_gpu, lambda g=_g: _own_instance(g)), id=f"{_g}-{_g}new"),
    ]

# Call forms of the bindings that take two (or more) tensors. In each, X, I, M, F are on
# the home device (float 2x3, int64 ids 2x3 of zeros, bool mask 2x3, float 3x2), and a
# name ending in Y (XY, IY, MY, FY, VY: a float 3-vector) is the same on the other device.
TWO_TENSOR = {
    "add": ["ember.add(X, XY)", "ember.add(XY, X)"],
    "sub": ["ember.sub(X, XY)"],
    "mul": ["ember.mul(XY, X)"],
    "div": ["ember.div(X, XY)", "ember.div(X, XY, rounding_mode='floor')"],
    "true_divide": ["ember.true_divide(X, XY)"],
    "floor_divide": ["ember.floor_divide(X, XY)"],
    "trunc_divide": ["ember.trunc_divide(X, XY)"],
    "remainder": ["ember.remainder(X, XY)"],
    "pow": ["ember.pow(X, XY)", "ember.pow(XY, X)"],
    "maximum": ["ember.maximum(X, XY)"],
    "minimum": ["ember.minimum(XY, X)"],
    "atan2": ["ember.atan2(X, XY)"],
    "arctan2": ["ember.arctan2(XY, X)"],
    "bitwise_and": ["ember.bitwise_and(I, IY)"],
    "bitwise_or": ["ember.bitwise_or(IY, I)"],
    "bitwise_xor": ["ember.bitwise_xor(I, IY)"],
    "logical_and": ["ember.logical_and(M, MY)"],
    "logical_or": ["ember.logical_or(M, MY)"],
    "logical_xor": ["ember.logical_xor(MY, M)"],
    "eq": ["ember.eq(X, XY)"],
    "ne": ["ember.ne(X, XY)"],
    "lt": ["ember.lt(X, XY)"],
    "le": ["ember.le(XY, X)"],
    "gt": ["ember.gt(X, XY)"],
    "ge": ["ember.ge(X, XY)"],
    "isclose": ["ember.isclose(X, XY)"],
    "allclose": ["ember.allclose(XY, X)"],
    "matmul": ["ember.matmul(X, FY)", "ember.matmul(XY, F)"],
    "dot": ["ember.dot(X[0], XY[0])"],
    "mv": ["ember.mv(F, VY[:2])", "ember.mv(FY, X[0, :2])"],
    "where": ["ember.where(MY, X, X)", "ember.where(M, XY, X)", "ember.where(M, X, XY)"],
    "masked_fill": ["ember.masked_fill(X, MY, 0.0)", "ember.masked_fill(X, M, XY[0, 0])"],
    "masked_select": ["ember.masked_select(X, MY)", "ember.masked_select(XY, M)"],
    "cat": ["ember.cat([X, XY])", "ember.cat([XY, X, X], dim=1)"],
    "stack": ["ember.stack([X, XY])"],
    "meshgrid": ["ember.meshgrid(X[0], XY[0])"],
    "embedding": ["ember.embedding(IY, F)", "ember.embedding(I, FY)"],
    "gather": ["ember.gather(X, 1, IY)", "ember.gather(XY, 0, I)"],
    "index_select": ["ember.index_select(X, 0, IY[0])", "ember.index_select(XY, 1, I[0])"],
    "index_add": [
        "ember.index_add(X, 0, IY[0, :2], X)",
        "ember.index_add(X, 0, I[0, :2], XY)",
        "ember.index_add(XY, 0, I[0, :2], X)",
    ],
    "scatter": [
        "ember.scatter(X, 1, IY, X)",
        "ember.scatter(X, 1, I, XY)",
        "ember.scatter(XY, 1, I, X)",
        "ember.scatter(X, 1, IY, 1.0)",
    ],
    "scatter_add": ["ember.scatter_add(X, 1, IY, X)", "ember.scatter_add(X, 1, I, XY)"],
    "slice_scatter": ["ember.slice_scatter(X, XY[:1], 0, 0, 1)"],
    "max": ["ember.max(X, 1, out=(XY[:, 0], I[:, 0]))",
            "ember.max(X, 1, out=(X[:, 0], IY[:, 0]))"],
    "min": ["ember.min(X, 1, out=(X[:, 0], IY[:, 0]))"],
}  # fmt: skip

# Tensor methods and operators that take a second tensor, beyond the functions' own forms
# (which the methods share: each is run as a method too, see _as_method).
METHOD_FORMS = {
    "__add__": ["X + XY"], "__radd__": ["np.ones((2, 3), np.float32) + G"],
    "__sub__": ["X - XY"], "__rsub__": ["1.0 - X + XY"],
    "__mul__": ["X * XY"], "__rmul__": ["np.ones((2, 3), np.float32) * G"],
    "__truediv__": ["X / XY"], "__rtruediv__": ["np.ones((2, 3), np.float32) / G"],
    "__floordiv__": ["X // XY"], "__rfloordiv__": ["np.ones((2, 3), np.float32) // G"],
    "__mod__": ["X % XY"], "__rmod__": ["np.ones((2, 3), np.float32) % G"],
    "__pow__": ["X ** XY"], "__rpow__": ["np.ones((2, 3), np.float32) ** G"],
    "__matmul__": ["X @ FY", "G @ np.ones((3, 2), np.float32)"],
    "__rmatmul__": ["np.ones((3, 2), np.float32) @ G"],
    "__and__": ["M & MY"], "__rand__": ["np.ones((2, 3), bool) & GM"],
    "__or__": ["M | MY"], "__ror__": ["np.ones((2, 3), bool) | GM"],
    "__xor__": ["M ^ MY"], "__rxor__": ["np.ones((2, 3), bool) ^ GM"],
    "__eq__": ["X == XY"], "__ne__": ["X != XY"], "__lt__": ["X < XY"],
    "__le__": ["X <= XY"], "__gt__": ["X > XY"], "__ge__": ["X >= XY"],
    "__iadd__": ["X += XY"], "__isub__": ["X -= XY"], "__imul__": ["X *= XY"],
    "__itruediv__": ["X /= XY"], "__ifloordiv__": ["X //= XY"], "__imod__": ["X %= XY"],
    "__ipow__": ["X **= XY"], "__iand__": ["M &= MY"], "__ior__": ["M |= MY"],
    "__ixor__": ["M ^= MY"],
    "__getitem__": ["X[IY[0]]", "X[MY]", "X[0, IY[0, :2]]", "X[MY[:, 0]]", "X[:, MY[0]]",
                    "X[IY[0], IY[0]]", "X[ember.tensor(True, device=other)]"],
    "__setitem__": ["X[IY[0]] = 1.0", "X[MY] = 1.0", "X[0, IY[0, :2]] = 1.0",
                    "X[:, MY[0]] = 1.0", "X[IY[0], IY[0]] = 1.0", "X[0] = XY[0]",
                    "X[I[0, :2]] = XY", "X[M] = XY[0, 0]", "X[:, 0] = XY[:, 0]",
                    "X[ember.tensor(True, device=other)] = 1.0"],
    "__array_ufunc__": ["np.add(np.ones((2, 3), np.float32), G)", "np.matmul(G, np.ones((3, 2), np.float32))",
                        "np.logical_and(np.ones((2, 3), bool), GM)", "np.exp(X, out=XY)"],
    "index_add_": ["X.index_add_(0, IY[0, :2], X)", "X.index_add_(0, I[0, :2], XY)"],
    "masked_fill_": ["X.masked_fill_(MY, 0.0)"],
    "scatter_": ["X.scatter_(1, IY, X)", "X.scatter_(1, I, XY)"],
    "scatter_add_": ["X.scatter_add_(1, IY, X)", "X.scatter_add_(1, I, XY)"],
    "backward": ["X.requires_grad_().sum(0).backward(XY[0])"],
}  # fmt: skip

# Extra arguments that make a one-tensor function valid, for its out= form.
OUT_ARGS = {"amax": ", 1", "amin": ", 1", "argmax": ", 1", "argmin": ", 1", "sum": ", 1",
            "mean": ", 1", "bitwise_not": "", "pow": ", 2.0"}  # fmt: skip
# Functions whose out= form needs int or bool operands.
INT_OPS = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"}

# Functions that take one tensor (the device rule has nothing to compare), and functions
# that take none. Both lists are checked against the module, so a new binding must be
# put somewhere.
ONE_TENSOR = """abs all amax argwhere count_nonzero nonzero repeat_interleave sort topk amin any argmax argmin argsort bitwise_not broadcast_to ceil chunk
clamp clone contiguous cos cumprod cumsum elu empty_like erf exp expand expm1 flatten flip
floor full_like gelu interpolate isfinite isinf isnan log log1p log_softmax logical_not
logsumexp mean narrow neg norm ones_like pad permute prod rand_like randint_like randn_like
recip relu reshape roll round rsqrt sigmoid sign silu sin softmax split sqr sqrt squeeze std
sum t tan tanh tile transpose tril triu trunc unsqueeze var view zeros_like""".split()
NOT_TENSOR_OPS = """arange compiled_backends load load_file save save_file cuda_device_count cuda_is_available device empty
eye from_dlpack full get_float32_matmul_precision is_tracking linspace manual_seed
metal_device_count metal_is_available ones rand randint randn set_float32_matmul_precision
set_tracking tensor zeros is_grad_enabled no_grad enable_grad set_grad_enabled
use_deterministic_algorithms are_deterministic_algorithms_enabled""".split()
# Methods that take one tensor or none, or move between devices on purpose.
ONE_TENSOR_METHODS = """copy_ is_contiguous is_pinned item numel numpy pin_memory repeat
size to to_device to_dtype tolist requires_grad_ detach retain_grad""".split()


def _public_functions() -> set[str]:
    return {
        n
        for n in dir(ember)
        if not n.startswith("_") and callable(getattr(ember, n))
        and not inspect.isclass(getattr(ember, n))
    }  # fmt: skip


def _public_methods() -> set[str]:
    return {n for n in dir(ember.Tensor) if not n.startswith("_") and callable(getattr(ember.Tensor, n))}


def _takes_out(name: str) -> bool:
    doc = getattr(ember, name).__doc__ or ""
    return re.search(r"\bout: ", doc.split("\n")[0]) is not None


def test_every_binding_is_classified():
    functions = _public_functions()
    classified = set(TWO_TENSOR) | set(ONE_TENSOR) | set(NOT_TENSOR_OPS)
    assert functions - classified == set(), "classify these in test_device_rule.py"
    assert set(TWO_TENSOR) & set(ONE_TENSOR) == set()
    methods = _public_methods()
    known = functions | set(METHOD_FORMS) | set(ONE_TENSOR_METHODS)
    assert methods - known == set(), "classify these methods in test_device_rule.py"
    ops = {n for n in dir(ember.Tensor) if re.fullmatch(r"__[a-z]+__", n)}
    binary = {n for n in ops if n[2:-2] in {"add", "sub", "mul", "truediv", "floordiv", "mod",
              "pow", "matmul", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge"}}  # fmt: skip
    binary |= {n for n in ops if re.fullmatch(r"__[ri](add|sub|mul|truediv|floordiv|mod|pow|and|or|xor|matmul)__", n)}
    assert binary - set(METHOD_FORMS) == set(), "add the operators' forms to METHOD_FORMS"


def _as_method(form: str) -> str | None:
    """ember.f(A, rest) as A.f(rest), for the functions that are also methods."""
    m = re.fullmatch(r"ember\.(\w+)\((\w+(?:\[[^\]]*\])?), ?(.*)\)", form)
    if not m or not hasattr(ember.Tensor, m.group(1)):
        return None
    return f"{m.group(2)}.{m.group(1)}({m.group(3)})"


def _forms() -> list[str]:
    forms = []
    for name, calls in TWO_TENSOR.items():
        for call in calls:
            forms.append(call)
            method = _as_method(call)
            if method:
                forms.append(method)
    for calls in METHOD_FORMS.values():
        forms.extend(calls)
    for name in sorted(_public_functions()):
        if _takes_out(name):
            a = "I" if name in INT_OPS else "X"
            # both operands at home, only out= elsewhere
            args = OUT_ARGS.get(name, ", " + a if name in TWO_TENSOR else "")
            forms.append(f"ember.{name}({a}{args}, out=ember.zeros_like(ember.{name}({a}{args}), device=other))")
    return forms


FORMS = _forms()


def _scope(home, other) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    scope = {"ember": ember, "np": np, "other": other}
    for suffix, dev in (("", home), ("Y", other)):
        scope["X" + suffix] = ember.tensor(np.abs(x) + 1, device=dev)
        scope["I" + suffix] = ember.zeros(2, 3, dtype=ember.int64, device=dev)
        scope["M" + suffix] = ember.tensor(x > 0, device=dev)
        scope["F" + suffix] = ember.tensor(x.T.copy(), device=dev)
        scope["V" + suffix] = ember.ones(3, device=dev)
    # an operand on a GPU, for forms whose other operand is an ndarray (a CPU tensor)
    gpu = "" if home.kind != "cpu" else "Y"
    scope["G"], scope["GM"] = scope["X" + gpu], scope["M" + gpu]
    return scope


@pytest.mark.skipif(not GPUS, reason="needs a second device kind (a GPU, or Metal's emulator)")
@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("form", FORMS)
def test_two_devices_raise_device_mismatch(pair, form):
    home, other = pair[0](), pair[1]()
    scope = _scope(home, other)
    before = {k: v.tolist() for k, v in scope.items() if isinstance(v, ember.Tensor)}
    with pytest.raises(ember.DeviceMismatchError) as info:
        exec(form, scope)
    assert isinstance(info.value, ValueError) and "device mismatch" in str(info.value)
    # nothing was written before the check
    for k, v in before.items():
        assert scope[k].tolist() == v, (form, k)
