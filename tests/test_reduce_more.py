"""var, std, prod, logsumexp and norm against numpy (np.var/np.std with ddof, np.prod,
a float64 logsumexp and vector norms) and PyTorch's rules: dtypes, dims (int, tuple,
negative, keepdim), zero-size, non-contiguous inputs and bad input."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    check_close,
    check_exact,
    make_view,
    raises_op,
    require_dtype,
    rounded,
    to_ember,
)

SHAPE = (3, 4, 5)
DIMS = [None, 0, 2, -1, -3, (0, 2), (2, 0), (-1, 1), (0, 1, 2)]


def np_axis(dim):
    return dim


# ---- var / std


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_var_std(device, dim, keepdim, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in ("contiguous", "transposed", "stepped", "expanded"):
            t, x = make_view(rng, SHAPE, name, device, layout)
            x64 = x.astype(np.float64)
            for correction in (1, 0, 2, 0.5):
                ref = np.var(x64, axis=np_axis(dim), ddof=correction, keepdims=keepdim)
                got = t.var(dim, keepdim=keepdim, correction=correction)
                check_close(got, ref, name, device=device)
                check_close(t.std(dim, keepdim=keepdim, correction=correction), np.sqrt(ref), name)
            ref = np.var(x64, axis=np_axis(dim), ddof=1, keepdims=keepdim)
            check_close(t.var(dim=dim, keepdim=keepdim), ref, name)  # correction=1 by default
            check_close(ember.var(t, dim, True, keepdim), ref, name)  # PyTorch's unbiased
            check_close(ember.std(t, dim, unbiased=True, keepdim=keepdim), np.sqrt(ref), name)
            ref0 = np.var(x64, axis=np_axis(dim), keepdims=keepdim)
            check_close(t.var(dim, unbiased=False, keepdim=keepdim), ref0, name)


def test_var_unbiased_positional_and_whole_tensor(device, rng):
    t, x = make_view(rng, (4, 6), "float32", device, "contiguous")
    x64 = x.astype(np.float64)
    check_close(t.var(), np.var(x64, ddof=1), "float32")
    check_close(t.var(False), np.var(x64), "float32")  # torch.var(input, unbiased)
    check_close(t.std(True), np.std(x64, ddof=1), "float32")
    check_close(t.var(1, False, True), np.var(x64, axis=1, keepdims=True), "float32")


def test_var_without_degrees_of_freedom(device):
    # PyTorch divides by max(N - correction, 0): one element gives NaN, empty gives NaN,
    # more sum than degrees of freedom gives inf
    one = ember.tensor([3.0], device=device)
    assert math.isnan(one.var().item()) and math.isnan(one.std().item())
    assert one.var(correction=0).item() == 0.0
    e = ember.zeros(0, 3, device=device)
    check_exact(e.var(0), [np.nan] * 3, "float32")
    assert e.var(1).shape == (0,)
    two = ember.tensor([1.0, 3.0], device=device)
    assert two.var(correction=2).item() == math.inf
    s = ember.tensor(2.0, device=device)
    assert s.var().shape == () and math.isnan(s.var().item())


def test_var_std_bad_input(device):
    i = ember.zeros(3, dtype=ember.int64, device=device)
    with raises_op(ember.UnsupportedDTypeError, "var", "float"):
        i.var()
    with raises_op(ember.UnsupportedDTypeError, "std", "float"):
        ember.std(i)
    t = ember.zeros(3, device=device)
    with raises_op(ember.InvalidArgumentError, "var", "not both"):
        t.var(unbiased=True, correction=0)
    with raises_op(ember.IndexOutOfRangeError, "std"):
        t.std(1)
    with raises_op(ember.InvalidArgumentError, "var", "appears twice"):
        ember.zeros(2, 2, device=device).var((0, -2))
    with raises_op(ember.InvalidTypeError, "var"):
        t.var(unbiased=1)


# ---- prod


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_prod(device, dtype, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    shape = (2, 3, 4)
    for layout in LAYOUTS:
        t, x = make_view(rng, shape, dtype, device, layout)
        if dtype in FLOAT_DTYPES:  # magnitudes near 1, both signs: no under- or overflow
            base = rng.uniform(0.6, 1.6, shape) * rng.choice([-1, 1], shape)
            x = rounded(base, dtype)
            t = view_of(x, dtype, device, layout)
            ref = np.prod(x.astype(np.float64), axis=np_axis(dim), keepdims=keepdim)
            check_close(t.prod(dim, keepdim), ref, dtype, atol=0, device=device)
            check_close(ember.prod(t, dim=dim, keepdim=keepdim), ref, dtype, atol=0)
        else:  # PyTorch: integer products are int64, wrapping on overflow (as numpy's)
            ref = np.prod(x.astype(np.int64), axis=np_axis(dim), keepdims=keepdim)
            check_exact(t.prod(dim, keepdim), ref, "int64", device)
            check_exact(ember.prod(t, dim, keepdim=keepdim), ref, "int64")


def view_of(x, name, device, layout):
    """A tensor holding x's values through a transposed, stepped or reversed view."""
    if layout == "transposed":
        return to_ember(np.ascontiguousarray(x.T), name, device).permute(2, 1, 0)
    if layout in ("stepped", "reversed"):
        step = 2 if layout == "stepped" else -2
        base = np.zeros(tuple(2 * n for n in x.shape), dtype=x.dtype)
        idx = tuple(slice(None, None, step) for _ in x.shape)
        base[idx] = x
        return to_ember(base, name, device)[idx]
    return to_ember(x, name, device)


def test_prod_wraps_and_zero_size(device):
    big = ember.tensor([2**40, 2**40, 3], device=device)
    ref = np.prod(np.array([2**40, 2**40, 3], dtype=np.int64))
    check_exact(big.prod(), ref, "int64")
    check_exact(ember.zeros(0, 3, device=device).prod(0), [1, 1, 1], "float32")
    check_exact(ember.zeros(0, dtype=ember.uint8, device=device).prod(), 1, "int64")
    check_exact(ember.tensor(2.5, device=device).prod(), 2.5, "float32")
    odd = ember.arange(1, 8, device=device)  # 7 elements: an odd count at every pass
    check_exact(odd.prod(), 5040, "int64")
    nan = ember.tensor([1.0, float("nan"), 0.0], device=device)
    assert math.isnan(nan.prod().item())


@pytest.mark.parametrize("shape,dim", [((3, 5000), 1), ((5000, 3), 0), ((700, 600), 0),
                                       ((40_000,), 0), ((4, 300, 9), 1)])
def test_prod_of_long_runs(device, shape, dim, rng):
    """Long rows and columns (the CPU's one-pass kernel: lanes, then a tree; column
    blocks; parts merged in order) against float64 products; int64 wraps exactly."""
    x = (rng.uniform(0.999, 1.001, shape) * rng.choice([-1, 1], shape)).astype(np.float32)
    got = ember.tensor(x, device=device).prod(dim).numpy()
    np.testing.assert_allclose(got, np.prod(x.astype(np.float64), axis=dim), rtol=1e-4)
    k = rng.choice(np.array([-3, -2, -1, 1, 2, 3], dtype=np.int64), shape)  # wraps, no 0
    check_exact(ember.tensor(k, device=device).prod(dim), np.prod(k, axis=dim), "int64", device)
    y = x.copy()
    y[(0,) * len(shape)] = np.nan
    assert np.isnan(ember.tensor(y, device=device).prod(dim).numpy().flat[0])


def test_prod_bad_input(device):
    t = ember.zeros(2, 3, device=device)
    with raises_op(ember.IndexOutOfRangeError, "prod"):
        t.prod(2)
    with raises_op(ember.InvalidArgumentError, "prod", "appears twice"):
        t.prod((1, -1))


# ---- logsumexp


def np_logsumexp(x, axis, keepdims):
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_logsumexp(device, dtype, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ("contiguous", "transposed", "reversed", "expanded"):
        t, x = make_view(rng, SHAPE, dtype, device, layout)
        ref = np_logsumexp(x, np_axis(dim), keepdim)
        name = dtype if dtype in FLOAT_DTYPES else "float32"  # integers give float32
        check_close(t.logsumexp(dim, keepdim), ref, name, device=device)
        check_close(ember.logsumexp(t, dim=dim, keepdim=keepdim), ref, name)


def test_logsumexp_range_and_infinities(device):
    inf = float("inf")
    big = ember.tensor([1000.0, 1000.0], device=device)
    check_close(big.logsumexp(0), 1000 + math.log(2), "float32")
    t = ember.tensor([[-inf, -inf], [inf, 1.0], [-inf, 2.0]], device=device)
    check_close(t.logsumexp(1), [-inf, inf, 2.0], "float32")
    check_exact(ember.zeros(0, 2, device=device).logsumexp(0), [-inf, -inf], "float32")
    assert ember.zeros(2, 0, device=device).logsumexp(0).shape == (0,)


@pytest.mark.parametrize("shape,dim,step", [((64, 3000), 1, 1), ((4096, 16), 1, 1),
                                            ((5, 300_001), 1, 1), ((8, 5000), 1, 2),
                                            ((700, 600), 0, 1)])
def test_logsumexp_of_long_and_short_rows(device, shape, dim, step, rng):
    """Rows of every length (chunks of the one-pass kernel, a max that rises along the row,
    rows split over threads and merged, strided rows) and columns, against float64;
    infinities and NaN in the middle of long rows."""
    x = (rng.standard_normal(shape) * 20).astype(np.float32)
    x[0] = np.sort(x[0]) if dim == 1 else x[0]  # the max rises chunk after chunk
    t = ember.tensor(x, device=device)
    view, ref_x = (t[:, ::step], x[:, ::step]) if step > 1 else (t, x)
    np.testing.assert_allclose(view.logsumexp(dim).numpy(), np_logsumexp(ref_x, dim, False),
                               rtol=2e-6, atol=1e-5)
    if dim == 1 and shape[1] > 2000:
        y = x.copy()
        y[1, 1500] = np.inf
        y[2, 1700] = np.nan
        y[-1, :] = -np.inf
        got = ember.tensor(y, device=device).logsumexp(1).numpy()
        assert got[1] == np.inf and np.isnan(got[2]) and got[-1] == -np.inf
        np.testing.assert_allclose(got[3:-1], np_logsumexp(y[3:-1], 1, False), rtol=2e-6)


def test_logsumexp_bad_input(device):
    with raises_op(ember.IndexOutOfRangeError, "logsumexp"):
        ember.zeros(2, device=device).logsumexp(1)


# ---- norm (vector norms over dims, as torch.norm with a number p)


def np_norm(x, p, axis, keepdims):
    a = np.abs(x.astype(np.float64))
    if p == math.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if p == -math.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    return np.sum(a**p, axis=axis, keepdims=keepdims) ** (1 / p)


@pytest.mark.parametrize("p", [2, 1, math.inf, -math.inf, 0, 3, 0.5, "fro"], ids=str)
@pytest.mark.parametrize("dim", [None, 1, -1, (0, 2)], ids=str)
def test_norm(device, p, dim, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in ("contiguous", "transposed", "stepped"):
            t, x = make_view(rng, SHAPE, name, device, layout)
            if p == 0:
                x = np.where(rng.random(SHAPE) > 0.3, x, 0).astype(x.dtype)
                t = to_ember(x, name, device)
            pn = 2 if p == "fro" else p
            for keepdim in (False, True):
                ref = np_norm(x, pn, np_axis(dim), keepdim)
                check_close(t.norm(p, dim, keepdim), ref, name, device=device)
                check_close(ember.norm(t, p=p, dim=dim, keepdim=keepdim), ref, name)


def test_norm_defaults_and_zero_size(device, rng):
    t, x = make_view(rng, (3, 4), "float32", device, "contiguous")
    check_close(t.norm(), np.sqrt(np.sum(x.astype(np.float64) ** 2)), "float32")
    check_exact(ember.zeros(0, 3, device=device).norm(dim=0), [0, 0, 0], "float32")
    check_exact(ember.zeros(0, device=device).norm(1), 0.0, "float32")
    assert ember.zeros(0, 3, device=device).norm(math.inf, dim=1).shape == (0,)


def test_norm_bad_input(device):
    with raises_op(ember.UnsupportedDTypeError, "norm", "float"):
        ember.zeros(3, dtype=ember.int64, device=device).norm()
    t = ember.zeros(3, device=device)
    with raises_op(ember.InvalidArgumentError, "norm", "nuclear"):
        t.norm("nuc")
    with raises_op(ember.InvalidArgumentError, "norm", "no identity"):
        ember.zeros(0, device=device).norm(math.inf)
    with raises_op(ember.InvalidArgumentError, "norm", "no identity"):
        ember.zeros(0, 2, device=device).norm(-1, dim=0)
    with raises_op(ember.InvalidTypeError, "norm"):
        t.norm([2])


@pytest.mark.parametrize("op", ["var", "std", "prod", "logsumexp", "norm"])
def test_result_dtypes(device, op):
    for name in DTYPES:
        if not require_dtype(device, name):
            continue
        t = ember.ones(2, 3, dtype=getattr(ember, name), device=device)
        integral = name in INT_DTYPES or name == "bool"  # bool as PyTorch: like the ints
        if integral and op in ("var", "std", "norm"):
            with raises_op(ember.UnsupportedDTypeError, op):
                getattr(t, op)(1)
            continue
        want = name
        if integral:
            want = "int64" if op == "prod" else "float32"
        assert getattr(t, op)(1).dtype == getattr(ember, want), (op, name)


@pytest.mark.parametrize("dim", [None, 1, 0], ids=str)
def test_norm_of_long_runs(device, dim, rng):
    # runs past the CPU's 1024-value blocks and 512-value half chunks (its one-pass sum of
    # squares), rows and columns, every float dtype
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in ("contiguous", "transposed"):
            t, x = make_view(rng, (5, 3001), name, device, layout)
            check_close(t.norm(2, dim), np_norm(x, 2, dim, False), name, device=device)
