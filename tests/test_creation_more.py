"""linspace, tril, triu and meshgrid against numpy (np.linspace, np.tril, np.triu,
np.meshgrid) and PyTorch's documented results: values, dtypes, views and bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    LAYOUTS,
    check_close,
    check_exact,
    edtype,
    make_view,
    raises_op,
    rand_array,
    require_dtype,
    to_ember,
)

# ---- linspace


@pytest.mark.parametrize(
    "args", [(0, 1, 5), (-2.5, 3.0, 7), (1, 0, 4), (3, 3, 3), (0, 1, 1), (0, 1, 0), (0, 10, 101)]
)
def test_linspace(device, args):
    for name in ["float32", "float64"]:
        if not require_dtype(device, name):
            continue
        t = ember.linspace(*args, dtype=edtype(name), device=device)
        check_close(t, np.linspace(*args), name, device=device)
        assert args[2] == 0 or t.numpy()[0] == np.asarray(args[0], dtype=t.numpy().dtype)
    t = ember.linspace(*args, device=device)
    assert t.dtype == ember.float32 and t.shape == (args[2],)
    if args[2] > 1:  # PyTorch's formula ends exactly at `end`
        assert t.numpy()[-1] == np.float32(args[1])


def test_linspace_integer_dtypes(device):
    # torch.linspace(0, 10, 4, dtype=torch.int64) is tensor([0, 3, 6, 10]): the values are
    # computed in double from both ends and truncated
    check_exact(ember.linspace(0, 10, 4, dtype=ember.int64, device=device), [0, 3, 6, 10], "int64")
    check_exact(ember.linspace(0, 5, 6, dtype=ember.uint8, device=device), np.arange(6), "uint8")
    check_close(ember.linspace(0, 1, 3, dtype=ember.float16, device=device), [0, 0.5, 1], "float16")


def test_linspace_bad_input(device):
    with raises_op(ember.InvalidArgumentError, "linspace", ">= 0"):
        ember.linspace(0, 1, -1, device=device)
    with raises_op(ember.InvalidTypeError, "linspace"):
        ember.linspace("a", 1, 3)
    with raises_op(ember.InvalidTypeError, "linspace"):
        ember.linspace(0, 1, 2.5)


# ---- tril / triu


@pytest.mark.parametrize("k", [0, 1, -1, 2, -3, 10, -10])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 2), (2, 3, 4)], ids=str)
def test_tril_triu(device, dtype, k, shape, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, shape, dtype, device, layout)
        check_exact(t.tril(k), np.tril(x, k), dtype, device)
        check_exact(t.triu(k), np.triu(x, k), dtype, device)
        check_exact(ember.tril(t, diagonal=k), np.tril(x, k), dtype)
        check_exact(ember.triu(t, k), np.triu(x, k), dtype)
    t, x = make_view(rng, shape, dtype, device, "contiguous")
    check_exact(t.tril(), np.tril(x), dtype)
    check_exact(t.triu(), np.triu(x), dtype)


def test_tril_triu_zero_size_and_nan(device):
    assert ember.zeros(0, 3, device=device).tril().shape == (0, 3)
    assert ember.zeros(2, 3, 0, device=device).triu(1).shape == (2, 3, 0)
    t = ember.full((2, 2), float("nan"), device=device)
    check_exact(t.tril(), [[np.nan, 0], [np.nan, np.nan]], "float32")


def test_tril_triu_bad_input(device):
    v = ember.zeros(3, device=device)
    with raises_op(ember.InvalidArgumentError, "tril", "at least 2 dims"):
        v.tril()
    with raises_op(ember.InvalidArgumentError, "triu", "at least 2 dims"):
        ember.triu(v)
    with raises_op(ember.InvalidTypeError, "tril"):
        ember.zeros(2, 2, device=device).tril(1.5)


# ---- meshgrid: broadcast views, "ij" (matrix) or "xy" (Cartesian) indexing


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(3,), (3, 4), (2, 3, 4), (0, 3), (1, 5, 2)], ids=str)
def test_meshgrid(device, indexing, sizes, rng):
    xs = [rand_array(rng, (n,), "float32") for n in sizes]
    ts = [to_ember(x, "float32", device) for x in xs]
    got = ember.meshgrid(*ts, indexing=indexing)
    refs = np.meshgrid(*xs, indexing=indexing)
    assert isinstance(got, tuple) and len(got) == len(refs)
    for g, r in zip(got, refs):
        check_exact(g, r, "float32", device)
    for g, r in zip(ember.meshgrid(ts, indexing=indexing), refs):  # a list works too
        check_exact(g, r, "float32")


def test_meshgrid_default_is_ij_and_views(device):
    a, b = ember.arange(3, device=device), ember.arange(2, device=device)
    x, y = ember.meshgrid(a, b)
    check_exact(x, [[0, 0], [1, 1], [2, 2]], "int64")
    check_exact(y, [[0, 1], [0, 1], [0, 1]], "int64")
    assert x.strides == (1, 0) and y.strides == (0, 1)  # views of the inputs, as PyTorch's


def test_meshgrid_scalars_and_strided(device, rng):
    s = ember.tensor(5, device=device)
    v = ember.arange(6, device=device)[::2]
    x, y = ember.meshgrid(s, v)
    check_exact(x, [[5, 5, 5]], "int64")
    check_exact(y, [[0, 2, 4]], "int64")


def test_meshgrid_bad_input(device):
    a = ember.arange(3, device=device)
    with raises_op(ember.InvalidArgumentError, "meshgrid", "0-d or 1-d", "(2, 2)"):
        ember.meshgrid(a, ember.zeros(2, 2, device=device))
    with raises_op(ember.DTypeMismatchError, "meshgrid"):
        ember.meshgrid(a, ember.zeros(2, device=device))
    with raises_op(ember.InvalidArgumentError, "meshgrid", "'ij' or 'xy'"):
        ember.meshgrid(a, a, indexing="ji")
    with raises_op(ember.InvalidArgumentError, "meshgrid", "at least one"):
        ember.meshgrid()
    with raises_op(ember.InvalidTypeError, "meshgrid"):
        ember.meshgrid(a, [1, 2])
