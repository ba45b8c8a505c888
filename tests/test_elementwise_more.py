"""masked_fill, isclose, allclose and elu against numpy and PyTorch's rules: values,
dtypes (predicates have the dtype of a comparison's result), broadcasting, views and
bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    LAYOUTS,
    check_close,
    check_exact,
    edtype,
    make_view,
    raises_op,
    require_dtype,
    rounded,
    to_ember,
)


def predicate_dtype(device):
    x = ember.zeros(1, device=device)
    return (x == x).dtype


def check_predicate(t, expected, device):
    assert t.dtype == predicate_dtype(device), t.dtype
    assert t.shape == np.shape(expected)
    np.testing.assert_array_equal(t.numpy().astype(bool), np.asarray(expected, dtype=bool))


# ---- masked_fill


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1), (1,), ()], ids=str)
def test_masked_fill(device, dtype, mask_shape, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (3, 4), dtype, device, layout)
        m = rng.random(mask_shape) > 0.5
        mask = to_ember(m.astype(np.float32), "float32", device) > 0
        ref = np.where(m, np.asarray(7, dtype=x.dtype), x)
        check_exact(t.masked_fill(mask, 7), ref, dtype, device)
        check_exact(ember.masked_fill(t, mask, 7), ref, dtype)
        value = ember.tensor(7, dtype=edtype(dtype), device=device)
        check_exact(t.masked_fill(mask, value), ref, dtype)


def test_masked_fill_broadcasts_the_tensor_too(device):
    t = ember.tensor([1.0, 2.0], device=device)
    mask = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], device=device) > 0
    check_exact(t.masked_fill(mask, -1.0), [[-1, 2], [1, -1], [1, 2]], "float32")


def test_masked_fill_values_take_the_tensor_dtype(device):
    i = ember.tensor([1, 2, 3], device=device)
    m = i > 1
    # PyTorch converts the value to the tensor's dtype: 2.7 into int64 is 2
    check_exact(i.masked_fill(m, 2.7), [1, 2, 2], "int64")
    f = ember.tensor([1.0, 2.0], dtype=ember.float16, device=device)
    check_exact(f.masked_fill(f > 1, float("inf")), [1, np.inf], "float16")
    check_exact(f.masked_fill(f > 5, 0), [1, 2], "float16")


def test_masked_fill_in_place(device):
    t = ember.zeros(2, 3, device=device)
    mask = ember.tensor([1.0, 0.0, 1.0], device=device) > 0
    assert t.masked_fill_(mask, 5.0) is t
    check_exact(t, [[5, 0, 5], [5, 0, 5]], "float32")
    with raises_op(ember.ShapeMismatchError, "masked_fill_", "broadcast"):
        ember.zeros(3, device=device).masked_fill_(ember.zeros(2, 3, device=device) > 0, 1.0)


def test_masked_fill_zero_size(device):
    t = ember.zeros(0, 3, device=device)
    assert t.masked_fill(t > 0, 1.0).shape == (0, 3)


def test_masked_fill_bad_input(device):
    t = ember.zeros(2, 3, device=device)
    with raises_op(ember.DTypeMismatchError, "masked_fill", "comparison"):
        t.masked_fill(ember.ones(2, 3, device=device), 1.0)
    with raises_op(ember.DTypeMismatchError, "masked_fill"):
        t.masked_fill(ember.ones(3, dtype=ember.int64, device=device), 1.0)
    with raises_op(ember.ShapeMismatchError, "masked_fill"):
        t.masked_fill(ember.zeros(4, device=device) > 0, 1.0)
    with raises_op(ember.InvalidArgumentError, "masked_fill", "0-d"):
        t.masked_fill(t > 0, ember.zeros(3, device=device))
    with raises_op(ember.InvalidTypeError, "masked_fill"):
        t.masked_fill(t > 0, "x")
    with raises_op(ember.InvalidArgumentError, "masked_fill", "uint8"):
        u = ember.zeros(2, dtype=ember.uint8, device=device)
        u.masked_fill(u == 0, 300)


# ---- isclose / allclose (PyTorch's: |a - b| <= atol + rtol * |b|, as np.isclose)


def near_values(rng, a, name):
    """b equal to a, at 1e-4 of it, or at half of it (integers: equal or 2 apart)."""
    f = rng.choice([0.0, 1e-4, 0.5], size=a.shape)
    b = a * (1 + f) if name in FLOAT_DTYPES else a + 2 * (f > 0.1)
    return rounded(b, name)


def clear_cases(a, b, rtol, atol):
    """Where |a - b| is not within 10% of the allowed error (half-precision rounding of
    the bound cannot decide those)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    diff, allowed = np.abs(a - b), atol + rtol * np.abs(b)
    return (diff == 0) | (np.abs(diff - allowed) > 0.1 * allowed)


@pytest.mark.parametrize("rtol,atol", [(1e-2, 0.0), (1e-5, 1e-8), (0.0, 1e-3), (0.0, 0.0)], ids=str)
def test_isclose(device, dtype, rtol, atol, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ["contiguous", "transposed", "expanded"]:
        t, a = make_view(rng, (3, 4), dtype, device, layout)
        b = near_values(rng, a, dtype)
        u = to_ember(b, dtype, device)
        f64 = np.float64
        ref = np.isclose(a.astype(f64), b.astype(f64), rtol=rtol, atol=atol)
        got = t.isclose(u, rtol=rtol, atol=atol)
        assert got.dtype == predicate_dtype(device)
        clear = clear_cases(a, b, rtol, atol)
        np.testing.assert_array_equal(got.numpy().astype(bool)[clear], ref[clear])
        same = ember.isclose(t, u, rtol, atol).numpy()
        np.testing.assert_array_equal(same, got.numpy())
        if clear.all():
            assert t.allclose(u, rtol=rtol, atol=atol) is bool(ref.all())


def test_isclose_defaults_and_broadcast(device):
    a = ember.tensor([1.0, 1.0 + 1e-6, 1.1], device=device)
    b = ember.tensor([[1.0], [1.1]], device=device)
    ref = np.isclose(a.numpy()[None, :], b.numpy())
    check_predicate(a.isclose(b), ref, device)
    assert ember.allclose(a, a)
    assert not ember.allclose(a, b)


def test_isclose_infinities_and_nan(device):
    inf, nan = float("inf"), float("nan")
    a = ember.tensor([inf, -inf, inf, nan, nan, 1.0], device=device)
    b = ember.tensor([inf, -inf, -inf, nan, 1.0, nan], device=device)
    check_predicate(a.isclose(b), [1, 1, 0, 0, 0, 0], device)
    check_predicate(a.isclose(b, equal_nan=True), [1, 1, 0, 1, 0, 0], device)
    assert not a.allclose(b, equal_nan=True)
    assert a[:2].allclose(b[:2])


def test_isclose_integers(device):
    a = ember.tensor([0, 10, 200, 255], dtype=ember.uint8, device=device)
    b = ember.tensor([1, 10, 201, 0], dtype=ember.uint8, device=device)
    # computed in float32: no uint8 wrap-around of a - b
    check_predicate(a.isclose(b, rtol=0, atol=1), [1, 1, 1, 0], device)
    check_predicate(a.isclose(b), [0, 1, 0, 0], device)


def test_allclose_is_a_bool_and_empty_is_true(device):
    e = ember.zeros(0, 3, device=device)
    assert ember.allclose(e, e) is True
    assert isinstance(
        ember.allclose(ember.ones(2, device=device), ember.ones(2, device=device)), bool
    )
    assert e.isclose(e).shape == (0, 3)


def test_isclose_bad_input(device):
    a = ember.zeros(3, device=device)
    with raises_op(ember.DTypeMismatchError, "isclose"):
        a.isclose(ember.zeros(3, dtype=ember.int64, device=device))
    with raises_op(ember.ShapeMismatchError, "isclose"):
        a.isclose(ember.zeros(4, device=device))
    with raises_op(ember.InvalidArgumentError, "isclose", "rtol and atol must be >= 0"):
        a.isclose(a, rtol=-1.0)
    with raises_op(ember.InvalidArgumentError, "isclose", "rtol and atol must be >= 0"):
        ember.allclose(a, a, atol=-1e-3)


# ---- elu


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_elu(device, alpha, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in LAYOUTS:
            t, x = make_view(rng, (3, 4), name, device, layout)
            x64 = x.astype(np.float64)
            ref = np.where(x64 > 0, x64, alpha * np.expm1(x64))
            check_close(t.elu(alpha), ref, name, device=device)
            check_close(ember.elu(t, alpha=alpha), ref, name)
    t = ember.tensor([-np.inf, 0.0, np.inf, np.nan], device=device)
    check_exact(ember.elu(t), [-1.0, 0.0, np.inf, np.nan], "float32")
    assert ember.elu(ember.zeros(0, device=device)).shape == (0,)


def test_elu_needs_a_float_dtype(device):
    with raises_op(ember.UnsupportedDTypeError, "elu", "float"):
        ember.elu(ember.zeros(3, dtype=ember.int64, device=device))
