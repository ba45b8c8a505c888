"""Three gaps that candle's tests and PyTorch users meet: gelu's tanh form (candle's
`gelu` is it), round(decimals=), and 0-d scatter/gather as PyTorch does them. Values
against float64 references with PyTorch's formulas; exception classes exact."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, raises_op, require_dtype


def gelu_tanh_ref(x):
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


TOL = {"float32": 2e-6, "float64": 1e-12, "float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gelu_tanh_form(device, dtype):
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(200) * 3, [0.0, -0.0, 10.0, -10.0, 40.0, -40.0]])
    t = ember.tensor(x, dtype=dtype, device=device)
    rounded = t.to_dtype(ember.float64 if device.kind != "metal" else ember.float32).numpy()
    got = t.gelu(approximate="tanh")
    assert got.dtype == getattr(ember, dtype) and got.shape == t.shape
    np.testing.assert_allclose(
        got.numpy().astype(np.float64), gelu_tanh_ref(rounded), rtol=TOL[dtype], atol=TOL[dtype]
    )
    # the forms differ (by up to ~5e-4 near |x| = 2): approximate= is not ignored
    if dtype in ("float32", "float64"):
        diff = (t.gelu(approximate="tanh") - ember.gelu(t, approximate="none")).abs().amax()
        assert 1e-5 < diff.item() < 1e-3
    # transposed and sliced views take the strided kernel
    m = ember.tensor(x[:200].reshape(10, 20), dtype=dtype, device=device)
    view = m.t()[::2]
    np.testing.assert_allclose(
        view.gelu(approximate="tanh").numpy().astype(np.float64),
        gelu_tanh_ref(view.to_dtype(rounded.dtype.name).numpy()),
        rtol=TOL[dtype],
        atol=TOL[dtype],
    )


def test_gelu_tanh_edges_and_out(device):
    t = ember.tensor([math.inf, -math.inf, math.nan], device=device)
    got = t.gelu(approximate="tanh").numpy()
    assert got[0] == math.inf and got[1] == 0.0 and math.isnan(got[2])
    out = ember.empty(3, device=device)
    assert ember.gelu(t, approximate="tanh", out=out) is out
    np.testing.assert_array_equal(out.numpy(), got)


def test_gelu_approximate_is_checked(device):
    t = ember.ones(2, device=device)
    with raises_op(ember.InvalidArgumentError, "gelu", "'none' or 'tanh'"):
        t.gelu(approximate="fast")
    with raises_op(ember.InvalidTypeError, "gelu", "'none' or 'tanh'"):
        t.gelu(approximate=True)
    with raises_op(ember.UnsupportedDTypeError, "gelu"):
        ember.arange(3, device=device).gelu(approximate="tanh")


def round_ref(x, decimals):
    p = 10.0 ** abs(decimals)
    return np.rint(x * p) / p if decimals > 0 else np.rint(x / p) * p


@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, -2])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_round_decimals(device, dtype, decimals):
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(abs(decimals) + 3)
    x = np.concatenate([rng.uniform(-2000, 2000, 300), [0.125, 2.675, -2.5, 15.0, 25.0]])
    t = ember.tensor(x, dtype=dtype, device=device)
    got = t.round(decimals=decimals)
    assert got.dtype == t.dtype and got.shape == t.shape
    # computed in the dtype (halves in float32), as PyTorch: the reference rounds alike
    work = np.float32 if dtype in ("float16", "bfloat16", "float32") else np.float64
    xv = t.to_dtype(ember.float64 if dtype == "float64" else ember.float32).numpy().astype(work)
    want = round_ref(xv, decimals).astype(work)
    want = ember.tensor(want).to_dtype(dtype).to_dtype(ember.float32).numpy()
    np.testing.assert_array_equal(got.to_dtype(ember.float32).numpy(), want)


def test_round_decimals_edges_and_errors(device):
    t = ember.tensor([math.inf, -math.inf, math.nan, -0.004], device=device)
    got = ember.round(t, decimals=2).numpy()
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2])
    assert got[3] == 0.0 and math.copysign(1.0, got[3]) == -1.0  # rint keeps the sign
    out = ember.zeros(4, device=device)
    assert ember.round(t, decimals=1, out=out) is out
    i = ember.tensor([5, 15, 25], device=device)
    assert i.round().tolist() == [5, 15, 25]
    with raises_op(ember.UnsupportedDTypeError, "round", "decimals="):
        i.round(decimals=-1)
    with raises_op(ember.InvalidTypeError, "round"):
        t.round(decimals=1.5)


def test_zero_d_scatter_and_gather_follow_pytorch(device):
    # PyTorch treats a 0-d input as one element along dim 0: ids of one dim may address it.
    s = ember.tensor(5.0, device=device)
    got = s.scatter(0, ember.tensor([0, 0], device=device), 1.0)
    assert got.shape == () and got.item() == 1.0
    g = s.gather(0, ember.tensor([0, 0], device=device))
    assert g.shape == (2,) and g.tolist() == [5.0, 5.0]
    with raises_op(ember.IndexOutOfRangeError, "scatter"):
        s.scatter(0, ember.tensor([1], device=device), 1.0)
    with raises_op(ember.ShapeMismatchError, "scatter"):
        s.scatter(0, ember.tensor([[0]], device=device), 1.0)
