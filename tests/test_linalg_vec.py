"""dot and mv, composed on matmul: values against numpy, result dtypes and shapes,
views, empty vectors, and PyTorch's refusals (not 1-D, lengths, dtypes)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import check_close, check_exact, make_view, raises_op, rand_array, require_dtype

DTYPES = ["float32", "float16", "float64", "int64", "int32"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(device, rng, dtype):
    if not require_dtype(device, dtype):
        return
    a, b = rand_array(rng, (37,), dtype), rand_array(rng, (37,), dtype)
    ta, tb = ember.tensor(a, device=device), ember.tensor(b, device=device)
    ref = np.dot(a.astype(np.float64), b.astype(np.float64))
    for got in (ember.dot(ta, tb), ta.dot(tb)):
        assert got.shape == () and got.dtype == ta.dtype
        if dtype.startswith("int"):
            check_exact(got, np.dot(a, b), dtype)
        else:
            check_close(got, ref, dtype, rtol=2e-2 if dtype == "float16" else 1e-5, atol=5e-2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mv(device, rng, dtype):
    if not require_dtype(device, dtype):
        return
    m, v = rand_array(rng, (5, 9), dtype), rand_array(rng, (9,), dtype)
    tm, tv = ember.tensor(m, device=device), ember.tensor(v, device=device)
    for got in (ember.mv(tm, tv), tm.mv(tv)):
        assert got.shape == (5,) and got.dtype == tm.dtype
        if dtype.startswith("int"):
            check_exact(got, m @ v, dtype)
        else:
            ref = m.astype(np.float64) @ v.astype(np.float64)
            check_close(got, ref, dtype, rtol=2e-2 if dtype == "float16" else 1e-5, atol=5e-2)


@pytest.mark.parametrize("layout", ["transposed", "stepped", "reversed"])
def test_views(device, rng, layout):
    tm, m = make_view(rng, (6, 4), "float32", device, layout)
    tv, v = make_view(rng, (4,), "float32", device, "stepped" if layout != "reversed" else layout)
    check_close(ember.mv(tm, tv), m @ v, "float32")
    check_close(ember.dot(tm[0], tv), m[0] @ v, "float32")
    check_close(ember.dot(tm[:, 1], tm[:, 2]), m[:, 1] @ m[:, 2], "float32")


def test_empty_vectors(device):
    z = ember.zeros(0, device=device)
    d = ember.dot(z, z)
    assert d.shape == () and d.item() == 0.0
    r = ember.mv(ember.zeros(3, 0, device=device), z)
    assert r.shape == (3,)
    np.testing.assert_array_equal(r.numpy(), np.zeros(3, np.float32))
    assert ember.mv(ember.zeros(0, 4, device=device), ember.ones(4, device=device)).shape == (0,)


def test_dot_refuses_what_pytorch_refuses(device):
    a, m = ember.ones(3, device=device), ember.ones(3, 3, device=device)
    with raises_op(ember.ShapeMismatchError, "dot", "1-D", "2-D", "(3, 3)"):
        ember.dot(m, a)
    with raises_op(ember.ShapeMismatchError, "dot", "0-D"):
        ember.dot(a, ember.tensor(2.0, device=device))
    with raises_op(ember.ShapeMismatchError, "dot", "(3,)", "(4,)", "lengths"):
        ember.dot(a, ember.ones(4, device=device))
    with raises_op(ember.DTypeMismatchError, "dot", "float32", "float16"):
        ember.dot(a, ember.ones(3, dtype=ember.float16, device=device))
    b = ember.tensor([True, False, True], device=device)
    with raises_op(ember.UnsupportedDTypeError, "dot", "bool"):
        ember.dot(b, b)


def test_mv_refuses_what_pytorch_refuses(device):
    m, v = ember.ones(2, 3, device=device), ember.ones(3, device=device)
    with raises_op(ember.ShapeMismatchError, "mv", "2-D matrix", "1-D vector"):
        ember.mv(v, v)
    with raises_op(ember.ShapeMismatchError, "mv", "(2, 3)", "(2, 3)"):
        ember.mv(m, m)
    with raises_op(ember.ShapeMismatchError, "mv", "3 columns", "4 elements"):
        ember.mv(m, ember.ones(4, device=device))
    with raises_op(ember.DTypeMismatchError, "mv", "int64"):
        ember.mv(m, ember.ones(3, dtype=ember.int64, device=device))
