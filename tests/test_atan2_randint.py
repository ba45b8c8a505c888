"""atan2 (arctan2), a binary row of the op table, and randint / randint_like, drawn
from each device's seeded stream: values against numpy, PyTorch's result dtypes, and
PyTorch's errors for bad ranges."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    check_close,
    make_view,
    raises_op,
    rand_array,
    require_dtype,
    to_ember,
)

# ---- atan2


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_atan2_matches_numpy(device, rng, dtype):
    if not require_dtype(device, dtype):
        return
    y, x = rand_array(rng, (3, 5), dtype), rand_array(rng, (3, 5), dtype)
    ty, tx = to_ember(y, dtype, device), to_ember(x, dtype, device)
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    for got in (ember.atan2(ty, tx), ty.atan2(tx), ember.arctan2(ty, tx), ty.arctan2(tx)):
        check_close(got, ref, dtype, device=device)


def test_atan2_quadrants_zeros_and_infinities(device):
    """The C library's atan2: signed zeros pick +-0 or +-pi, infinities their angles."""
    inf = np.inf
    y = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, inf, -inf, inf, 1.0, np.nan], np.float32)
    x = np.array([0.0, 0.0, -0.0, -0.0, 0.0, -inf, inf, -inf, 1.0, inf, 1.0], np.float32)
    got = ember.atan2(ember.tensor(y, device=device), ember.tensor(x, device=device)).numpy()
    ref = np.arctan2(y, x)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got[:4]), np.signbit(ref[:4]))


def test_atan2_broadcasts_views_and_scalars(device, rng):
    ty, y = make_view(rng, (4, 3), "float32", device, "transposed")
    x = rand_array(rng, (3,), "float32")
    check_close(ember.atan2(ty, ember.tensor(x, device=device)), np.arctan2(y, x), "float32")
    check_close(ember.atan2(ty, 2.0), np.arctan2(y, np.float32(2.0)), "float32")
    check_close(ember.atan2(-1.5, ty), np.arctan2(np.float32(-1.5), y), "float32")
    empty = ember.atan2(ember.zeros(0, 3, device=device), ember.ones(3, device=device))
    assert empty.shape == (0, 3) and empty.dtype == ember.float32


def test_atan2_of_integers_is_float32_as_true_division(device):
    y = np.array([[1, -2, 0]], np.int64)
    x = np.array([[3], [-1]], np.int32)
    got = ember.atan2(ember.tensor(y, device=device), ember.tensor(x, device=device))
    check_close(got, np.arctan2(y.astype(np.float64), x.astype(np.float64)), "float32")
    b = ember.tensor([True, False], device=device)
    assert ember.atan2(b, b).dtype == ember.float32
    f16 = ember.ones(2, dtype=ember.float16, device=device)
    assert ember.atan2(f16, ember.ones(2, device=device)).dtype == ember.float32
    assert ember.atan2(f16, 2).dtype == ember.float16


def test_atan2_mismatched_shapes_and_out(device):
    a, b = ember.ones(2, 3, device=device), ember.ones(4, device=device)
    with raises_op(ember.ShapeMismatchError, "atan2", "(2, 3)", "(4,)"):
        ember.atan2(a, b)
    out = ember.empty(2, 3, device=device)
    assert ember.atan2(a, a, out=out) is out
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), np.pi / 4, np.float32))
    with pytest.raises(ember.DTypeMismatchError):
        ember.atan2(a, a, out=ember.empty(2, 3, dtype=ember.int64, device=device))


def test_numpy_arctan2_runs_the_ember_op(device):
    t = ember.tensor([1.0, -1.0], device=device)
    got = np.arctan2(t, 1.0)
    assert isinstance(got, ember.Tensor) and got.device.same_device(device)
    np.testing.assert_allclose(got.numpy(), np.arctan2([1.0, -1.0], 1.0), rtol=1e-6)


# ---- randint


def test_randint_range_dtype_and_shape(device):
    t = ember.randint(-3, 7, (40, 50), device=device)
    assert t.dtype == ember.int64 and t.shape == (40, 50) and t.device.same_device(device)
    v = t.numpy()
    assert v.min() >= -3 and v.max() < 7
    assert set(np.unique(v)) == set(range(-3, 7))  # 2000 draws reach all 10 values
    high_only = ember.randint(5, size=(1000,), device=device).numpy()
    assert high_only.min() >= 0 and high_only.max() == 4
    kw = ember.randint(low=2, high=4, size=(100,), device=device).numpy()
    assert set(np.unique(kw)) == {2, 3}
    assert ember.randint(3, (0, 4), device=device).shape == (0, 4)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "bool", "float16"])
def test_randint_into_other_dtypes(device, dtype):
    hi = 2 if dtype == "bool" else 200
    t = ember.randint(0, hi, (500,), dtype=getattr(ember, dtype), device=device)
    assert t.dtype == getattr(ember, dtype)
    v = t.numpy().astype(np.float64)
    assert v.min() >= 0 and v.max() < hi and np.all(v == np.round(v))


def test_randint_is_reproducible_with_the_seed(device):
    ember.manual_seed(1234)
    a = ember.randint(0, 1000, (64,), device=device).numpy()
    b = ember.randint(0, 1000, (64,), device=device).numpy()
    ember.manual_seed(1234)
    np.testing.assert_array_equal(ember.randint(0, 1000, (64,), device=device).numpy(), a)
    assert not np.array_equal(a, b)  # the stream moves on
    cpu = ember.device("cpu")
    ember.manual_seed(99)  # seeds every device
    here = ember.randint(-(10**12), 10**12, (32,), device=device).numpy()
    ember.manual_seed(99)
    on_cpu = ember.randint(-(10**12), 10**12, (32,), device=cpu).numpy()
    np.testing.assert_array_equal(here, on_cpu)  # every backend draws the CPU's numbers


def test_randint_is_uniform(device):
    """Chi-square of 20000 draws over 10 bins, seeded: far below the 0.1% critical
    value (27.9 for 9 degrees of freedom)."""
    ember.manual_seed(7)
    v = ember.randint(10, 20, (20000,), device=device).numpy()
    counts = np.bincount(v - 10, minlength=10)
    chi2 = ((counts - 2000.0) ** 2 / 2000.0).sum()
    assert chi2 < 27.9, counts
    wide = ember.randint(-(2**62), 2**62, (4000,), device=device).numpy()
    assert (wide < 0).mean() == pytest.approx(0.5, abs=0.05)  # both halves of a huge range


def test_randint_like(device):
    base = ember.zeros(3, 4, dtype=ember.int32, device=device)
    t = ember.randint_like(base, 10)
    assert t.shape == (3, 4) and t.dtype == ember.int32 and t.device.same_device(device)
    assert t.numpy().max() < 10 and t.numpy().min() >= 0
    u = ember.randint_like(base, 5, 8, dtype=ember.float32)
    assert u.dtype == ember.float32 and set(np.unique(u.numpy())) <= {5.0, 6.0, 7.0}
    w = ember.randint_like(base, high=3)
    assert w.numpy().max() < 3


@pytest.mark.parametrize(
    "call, facts",
    [
        (lambda d: ember.randint(5, 5, (3,), device=d), ["low < high", "low=5", "high=5"]),
        (lambda d: ember.randint(0, (3,), device=d), ["low < high", "high=0"]),
        (lambda d: ember.randint(8, 2, (3,), device=d), ["low=8, high=2"]),
        (lambda d: ember.randint(0, 300, (3,), dtype=ember.uint8, device=d), ["uint8", "300"]),
        (lambda d: ember.randint(-1, 1, (3,), dtype=ember.bool, device=d), ["bool"]),
        (lambda d: ember.randint(0, 2**25, (3,), dtype=ember.float32, device=d), ["float32"]),
        (lambda d: ember.randint(1, 2, 3, (3,), device=d), ["too many"]),
        (lambda d: ember.randint_like(ember.zeros(2, device=d), 4, 1), ["low=4, high=1"]),
    ],
)
def test_randint_bad_ranges(device, call, facts):
    with pytest.raises(ember.InvalidArgumentError) as info:
        call(device)
    msg = str(info.value)
    assert msg.startswith("randint"), msg  # randint or randint_like
    for fact in facts:
        assert fact in msg, (fact, msg)


@pytest.mark.parametrize(
    "call, facts",
    [
        (lambda d: ember.randint((3,), device=d), ["needs high"]),
        (lambda d: ember.randint(device=d), ["needs a size"]),
        (lambda d: ember.randint(10, device=d), ["needs a size"]),
        (lambda d: ember.randint(high=10, device=d), ["needs a size"]),
        (lambda d: ember.randint_like(ember.zeros(2, device=d)), ["needs high"]),
    ],
)
def test_randint_missing_arguments_are_type_errors(device, call, facts):
    with pytest.raises(ember.InvalidTypeError) as info:  # as Python's for a missing argument
        call(device)
    assert isinstance(info.value, TypeError)
    for fact in facts:
        assert fact in str(info.value), (fact, str(info.value))


def test_randint_rejects_non_integers_and_negative_sizes(device):
    with raises_op(ember.InvalidTypeError, "randint", "integer"):
        ember.randint(0, 2.5, (3,), device=device)
    with pytest.raises(ember.InvalidArgumentError, match="randint"):
        ember.randint(0, 4, (-1,), device=device)
