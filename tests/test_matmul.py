"""matmul / @ against numpy: 1-D, 2-D, batched with broadcast batch dims, transposed
and strided inputs, every dtype."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    check_exact,
    edtype,
    make_view,
    rand_array,
    require_dtype,
    rounded,
    to_ember,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

PAIRS = [
    ((3, 4), (4, 5)),
    ((1, 1), (1, 1)),
    ((7, 13), (13, 9)),
    ((0, 4), (4, 5)),
    ((3, 0), (0, 5)),
    ((3, 4), (4, 0)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 5, 4, 6)),
    ((0, 3, 4), (4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((2, 2, 3, 4), (4, 5)),  # batch dims that fold into the rows where the layout allows
    ((2, 1, 3, 4), (1, 4, 5)),
]

MAT_LAYOUTS = ["contiguous", "T", "stepped", "expanded", "reversed"]

# error bound per unit of (|a| @ |b|)
TOL = {"float32": 2e-6, "float64": 1e-14, "float16": 5e-3, "bfloat16": 2e-2}


def mat_view(rng, shape, name, device, layout):
    kind = "small" if not edtype(name).is_float else "normal"
    if layout == "T" and len(shape) >= 2:
        base_shape = shape[:-2] + (shape[-1], shape[-2])
        base = rand_array(rng, base_shape, name, kind)
        t = to_ember(base, name, device).transpose(-1, -2)
        return t, np.ascontiguousarray(np.swapaxes(base, -1, -2))
    return make_view(rng, shape, name, device, layout, kind)


def check_matmul(got, na, nb, name, device=None):
    if not edtype(name).is_float:
        ref = np.matmul(na.astype(np.int64), nb.astype(np.int64))
        check_exact(got, ref, name, device)
        return
    a64, b64 = na.astype(np.float64), nb.astype(np.float64)
    ref = np.matmul(a64, b64)
    bound = np.matmul(np.abs(a64), np.abs(b64)) * TOL[name] + 1e-30
    assert got.shape == ref.shape, (got.shape, ref.shape)
    assert got.dtype == edtype(name)
    if device is not None:
        assert got.device.same_device(device)
    g = got.numpy().astype(np.float64)
    bad = np.abs(g - ref) > bound
    assert not bad.any(), (g[bad], ref[bad])


def bool_refused(device, dtype) -> bool:
    """PyTorch has no bool matmul: UnsupportedDTypeError naming the op and the fix."""
    if dtype != "bool":
        return False
    m = ember.ones(2, 2, dtype=ember.bool, device=device)
    with pytest.raises(ember.UnsupportedDTypeError, match=r"\.to\(ember\.int64\)") as info:
        m @ m
    assert info.value.op == "matmul" and info.value.dtype == ember.bool
    return True


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}@{p[1]}")
def test_matmul_shapes(device, dtype, pair, rng):
    if not require_dtype(device, dtype) or bool_refused(device, dtype):
        return
    sa, sb = pair
    for la in MAT_LAYOUTS:
        for lb in MAT_LAYOUTS:
            a, na = mat_view(rng, sa, dtype, device, la)
            b, nb = mat_view(rng, sb, dtype, device, lb)
            got = a @ b
            assert got.shape == np.matmul(na, nb).shape
            check_matmul(got, na, nb, dtype, device)
    a, na = mat_view(rng, sa, dtype, device, "T")
    b, nb = mat_view(rng, sb, dtype, device, "T")
    check_matmul(ember.matmul(a, b), na, nb, dtype)
    check_matmul(a.matmul(b), na, nb, dtype)


def test_matmul_large(device, dtype, rng):
    # Past any blocking threshold: BLAS (or the GPU GEMM) with transpose flags.
    if not require_dtype(device, dtype) or bool_refused(device, dtype):
        return
    for la, lb in [
        ("contiguous", "contiguous"),
        ("T", "contiguous"),
        ("contiguous", "T"),
        ("T", "T"),
    ]:
        a, na = mat_view(rng, (65, 130), dtype, device, la)
        b, nb = mat_view(rng, (130, 33), dtype, device, lb)
        check_matmul(a @ b, na, nb, dtype, device)
    a, na = mat_view(rng, (3, 40, 50), dtype, device, "T")
    b, nb = mat_view(rng, (50, 20), dtype, device, "contiguous")
    check_matmul(a @ b, na, nb, dtype, device)


def test_matmul_exact_on_small_integers_in_floats(device):
    # Products and sums of small integers are exact in every float dtype.
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, size=(5, 6)).astype(np.float64)
    y = rng.integers(-3, 4, size=(6, 7)).astype(np.float64)
    for name in ("float32", "float16", "bfloat16", "float64"):
        if not require_dtype(device, name):
            continue
        got = to_ember(x, name, device) @ to_ember(y, name, device)
        check_exact(got, x @ y, name)


def test_matmul_result_is_fresh(device):
    a = ember.ones(2, 2, device=device)
    c = a @ a
    c += 1
    np.testing.assert_array_equal(a.numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(c.numpy(), np.full((2, 2), 3.0))


def test_matmul_accumulates_halves_in_float32(device):
    # 4096 products of 1: a float16 accumulator would stop at 2048
    for name in ("float16", "bfloat16"):
        a = ember.ones(1, 4096, dtype=edtype(name), device=device)
        b = ember.ones(4096, 1, dtype=edtype(name), device=device)
        assert (a @ b).item() == 4096.0


@settings(max_examples=40)
@given(
    shapes=mutually_broadcastable_shapes(
        signature=np.matmul.signature, min_side=0, max_side=5, max_dims=3
    ),
    layouts=st.tuples(st.sampled_from(MAT_LAYOUTS), st.sampled_from(MAT_LAYOUTS)),
    name=st.sampled_from(["float32", "int64"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_matmul_broadcast_batches(device, shapes, layouts, name, seed):
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a, na = mat_view(rng, sa, name, device, layouts[0])
    b, nb = mat_view(rng, sb, name, device, layouts[1])
    got = a @ b
    assert got.shape == shapes.result_shape
    check_matmul(got, na, nb, name, device)


def test_matmul_ref_helper_rejects_wrong_values():
    # the checker itself must notice a wrong product
    na = np.ones((2, 2), np.float32)
    bad = ember.tensor(np.full((2, 2), 2.5, np.float32))
    with pytest.raises(AssertionError):
        check_matmul(bad, na, na, "float32")
    check_matmul(ember.tensor(rounded(na @ na, "float32")), na, na, "float32")
