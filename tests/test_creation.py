"""Creation: zeros, ones, empty, full, arange, eye, rand/randn, tensor(), *_like, dtypes."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
    FLOAT_DTYPES,
    NP_DTYPE,
    check_exact,
    edtype,
    require_dtype,
    rounded,
    supported,
)

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 5), (2, 3, 4, 2)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_ones(device, dtype, shape):
    if not require_dtype(device, dtype):
        return
    check_exact(ember.zeros(shape, dtype=edtype(dtype), device=device), np.zeros(shape), dtype)
    check_exact(ember.ones(shape, dtype=edtype(dtype), device=device), np.ones(shape), dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_empty_has_the_shape_dtype_and_device_and_takes_writes(device, dtype, shape):
    if not require_dtype(device, dtype):
        return
    t = ember.empty(*shape, dtype=edtype(dtype), device=device)
    assert t.shape == shape and t.dtype == edtype(dtype) and t.device.same_device(device)
    one = True if dtype == "bool" else 1  # a Python int would lift bool to int64
    ember.add(ember.ones(shape, dtype=edtype(dtype), device=device), one, out=t)
    check_exact(t, np.full(shape, 2), dtype)
    like = ember.empty_like(t)
    assert like.shape == shape and like.dtype == t.dtype and like.device.same_device(device)
    assert ember.empty(2, 3).dtype == ember.float32  # PyTorch's default


def test_shape_spellings(device):
    for t in (
        ember.zeros(2, 3, device=device),
        ember.zeros((2, 3), device=device),
        ember.zeros([2, 3], device=device),
        ember.ones(2, 3, device=device),
        ember.ones((2, 3), device=device),
    ):
        assert t.shape == (2, 3)
        assert t.dtype == ember.float32  # the default float dtype
        assert t.device.same_device(device)
    assert ember.zeros((), device=device).shape == ()
    assert ember.zeros(np.int64(4), device=device).shape == (4,)


def test_default_device_is_cpu():
    for t in (ember.zeros(2), ember.ones(2), ember.tensor([1.0]), ember.arange(3), ember.eye(2)):
        assert t.device.same_device(ember.Device.cpu())


@pytest.mark.parametrize("value", [0, 1, 7, 2.5, -3.0])
def test_full(device, dtype, value):
    if not require_dtype(device, dtype):
        return
    if dtype in ("uint32", "uint8") and value < 0:
        return
    v = int(value) if not edtype(dtype).is_float else value
    t = ember.full((2, 3), v, dtype=edtype(dtype), device=device)
    check_exact(t, np.full((2, 3), v), dtype)


def test_full_float_default_dtype(device):
    t = ember.full((2, 2), 2.5, device=device)
    assert t.dtype == ember.float32
    np.testing.assert_array_equal(t.numpy(), np.full((2, 2), 2.5, np.float32))
    assert ember.full(3, 1.5, device=device).shape == (3,)


def test_full_special_values(device):
    t = ember.full((3,), float("inf"), device=device)
    assert np.isposinf(t.numpy()).all()
    t = ember.full((3,), float("nan"), device=device)
    assert np.isnan(t.numpy()).all()


@pytest.mark.parametrize(
    "args",
    [(5,), (0,), (2, 9), (9, 2), (2, 11, 3), (10, 0, -3), (-4, 4), (0, 1, 0.125), (1.5, 4.0, 0.5)],
    ids=str,
)
def test_arange_values(device, args):
    t = ember.arange(*args, device=device)
    is_float_arg = any(isinstance(a, float) for a in args)
    expected = np.arange(*[float(a) for a in args])
    name = "float32" if is_float_arg else "int64"
    check_exact(t, expected, name, device)


def test_arange_float_step_matches_numpy(device):
    t = ember.arange(0, 1, 0.1, device=device)
    assert t.dtype == ember.float32
    expected = np.arange(0, 1, 0.1).astype(np.float32)
    assert t.shape == expected.shape
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6)


def test_arange_dtype(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.arange(0, 20, 3, dtype=edtype(dtype), device=device)
    check_exact(t, np.arange(0, 20, 3), dtype)


def test_arange_keyword_step(device):
    t = ember.arange(1, 10, step=4, device=device)
    check_exact(t, np.array([1, 5, 9]), "int64")


@pytest.mark.parametrize("nm", [(0, None), (1, None), (4, None), (3, 5), (5, 3), (2, 0)], ids=str)
def test_eye(device, dtype, nm):
    if not require_dtype(device, dtype):
        return
    n, m = nm
    t = (
        ember.eye(n, m, dtype=edtype(dtype), device=device)
        if m is not None
        else ember.eye(n, dtype=edtype(dtype), device=device)
    )
    check_exact(t, np.eye(n, m), dtype)


def test_eye_default_dtype(device):
    assert ember.eye(3, device=device).dtype == ember.float32


# ---- random


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_rand_range_and_seed(device, name):
    if not require_dtype(device, name):
        return
    dt = edtype(name)
    device.manual_seed(1234)
    a = ember.rand(100_000, dtype=dt, device=device)
    assert a.shape == (100_000,) and a.dtype == dt and a.device.same_device(device)
    x = a.numpy().astype(np.float64)
    assert x.min() >= 0.0
    assert x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.std() - np.sqrt(1 / 12)) < 0.01
    assert len(np.unique(x)) > 100  # not constant
    device.manual_seed(1234)
    b = ember.rand(100_000, dtype=dt, device=device)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    device.manual_seed(1235)
    c = ember.rand(100_000, dtype=dt, device=device)
    assert not np.array_equal(a.numpy(), c.numpy())


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_randn_moments_and_seed(device, name):
    if not require_dtype(device, name):
        return
    dt = edtype(name)
    device.manual_seed(7)
    a = ember.randn(100_000, dtype=dt, device=device)
    x = a.numpy().astype(np.float64)
    assert np.isfinite(x).all()
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02
    assert (x < 0).mean() > 0.45 and (x > 0).mean() > 0.45
    assert abs(x).max() > 3.0  # the tails exist
    device.manual_seed(7)
    np.testing.assert_array_equal(ember.randn(100_000, dtype=dt, device=device).numpy(), a.numpy())
    device.manual_seed(8)
    assert not np.array_equal(ember.randn(100_000, dtype=dt, device=device).numpy(), a.numpy())


def test_random_stream_advances(device):
    device.manual_seed(99)
    a = ember.rand(1000, device=device).numpy()
    b = ember.rand(1000, device=device).numpy()
    assert not np.array_equal(a, b)  # the second call does not repeat the first
    device.manual_seed(99)
    np.testing.assert_array_equal(ember.rand(1000, device=device).numpy(), a)
    np.testing.assert_array_equal(ember.rand(1000, device=device).numpy(), b)


def test_random_shapes(device):
    device.manual_seed(0)
    assert ember.rand(2, 3, device=device).shape == (2, 3)
    assert ember.randn((4, 0), device=device).shape == (4, 0)
    assert ember.rand((), device=device).shape == ()
    assert ember.rand(2, 3, device=device).dtype == ember.float32


def test_module_manual_seed_seeds_cpu():
    ember.manual_seed(42)
    a = ember.rand(500).numpy()
    ember.manual_seed(42)
    b = ember.rand(500).numpy()
    np.testing.assert_array_equal(a, b)
    ember.manual_seed(43)
    assert not np.array_equal(ember.rand(500).numpy(), a)


def test_module_manual_seed_seeds_cached_devices(device):
    ember.manual_seed(5)
    a = ember.randn(500, device=device).numpy()
    ember.manual_seed(5)
    b = ember.randn(500, device=device).numpy()
    np.testing.assert_array_equal(a, b)


# ---- tensor()


def test_tensor_from_lists(device):
    t = ember.tensor([[1.0, 2.0], [3.0, 4.5]], device=device)
    check_exact(t, np.array([[1.0, 2.0], [3.0, 4.5]]), "float32", device)
    t = ember.tensor([[1, 2, 3]], device=device)
    check_exact(t, np.array([[1, 2, 3]]), "int64", device)
    t = ember.tensor([True, False, True], device=device)
    check_exact(t, np.array([True, False, True]), "bool", device)
    t = ember.tensor([1, 2.5], device=device)  # a float among ints: floats
    check_exact(t, np.array([1.0, 2.5]), "float32", device)
    t = ember.tensor([[[1], [2]], [[3], [4]]], device=device)
    check_exact(t, np.arange(1, 5).reshape(2, 2, 1), "int64", device)


def test_tensor_from_tuples_and_large_ints(device):
    check_exact(ember.tensor((1, 2, 3), device=device), np.array([1, 2, 3]), "int64")
    big = 2**62 + 1  # past float64's exact range: must stay exact
    check_exact(ember.tensor([big, -big], device=device), np.array([big, -big]), "int64")


def test_tensor_from_scalars(device):
    for value, name in [(3, "int64"), (2.5, "float32"), (True, "bool"), (-7, "int64")]:
        t = ember.tensor(value, device=device)
        assert t.shape == ()
        check_exact(t, np.array(value), name)
        assert t.item() == value


def test_tensor_empty_lists(device):
    t = ember.tensor([], device=device)
    assert t.shape == (0,)
    t = ember.tensor([[], []], dtype=ember.int64, device=device)
    assert t.shape == (2, 0) and t.dtype == ember.int64


def test_tensor_with_dtype(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.tensor([[1, 2], [3, 4]], dtype=edtype(dtype), device=device)
    check_exact(t, np.array([[1, 2], [3, 4]]), dtype, device)
    t = ember.tensor([0.5, 2.0], dtype=edtype(dtype), device=device)
    floats = edtype(dtype).is_float or dtype == "bool"  # into bool: nonzero is True
    expected = np.array([0.5, 2.0]) if floats else np.array([0, 2])
    check_exact(t, expected, dtype)


@pytest.mark.parametrize("name", DTYPES)
def test_tensor_from_numpy_keeps_dtype(device, name):
    if name == "bfloat16":
        return  # numpy has no bfloat16
    arr = (np.arange(12) % 7).reshape(3, 4).astype(NP_DTYPE[name])
    if not supported(device, name):
        with pytest.raises(ember.UnsupportedDTypeError):
            ember.tensor(arr, device=device)
        return
    t = ember.tensor(arr, device=device)
    check_exact(t, arr, name, device)


def test_tensor_from_numpy_bool():
    t = ember.tensor(np.array([True, False]))
    check_exact(t, np.array([True, False]), "bool")
    check_exact(ember.tensor(np.array([3, -1], dtype=np.int32)), np.array([3, -1]), "int32")


def test_tensor_from_numpy_scalar_types(device):
    if require_dtype(device, "float64"):
        check_exact(ember.tensor(np.float64(1.5), device=device), np.array(1.5), "float64")
    else:
        with pytest.raises(ember.UnsupportedDTypeError):
            ember.tensor(np.float64(1.5), device=device)
    check_exact(ember.tensor(np.float32(1.5), device=device), np.array(1.5), "float32")
    check_exact(ember.tensor(np.int64(-3), device=device), np.array(-3), "int64")


def test_tensor_from_numpy_views(device, rng):
    base = rng.standard_normal((5, 6)).astype(np.float32)
    for view in (base.T, base[::2, ::-3], base[1:4, 2], np.broadcast_to(base[0], (3, 6))):
        t = ember.tensor(view, device=device)
        check_exact(t, np.ascontiguousarray(view), "float32", device)


def test_tensor_from_numpy_is_a_copy(device):
    arr = np.arange(4, dtype=np.float32)
    t = ember.tensor(arr, device=device)
    arr[0] = 100
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])


def test_tensor_dtype_spellings():
    for spelling in (ember.float16, np.float16, np.dtype("float16"), "float16", "f2"):
        assert ember.zeros(2, dtype=spelling).dtype == ember.float16
    assert ember.zeros(2, dtype="bfloat16").dtype == ember.bfloat16
    assert ember.zeros(2, dtype=np.uint8).dtype == ember.uint8
    assert ember.zeros(2, dtype="f8").dtype == ember.float64


def test_dtype_objects():
    expected = {
        "float32": (4, True),
        "float16": (2, True),
        "bfloat16": (2, True),
        "float64": (8, True),
        "int64": (8, False),
        "int32": (4, False),
        "uint32": (4, False),
        "uint8": (1, False),
        "bool": (1, False),
    }
    for name, (size, is_float) in expected.items():
        d = edtype(name)
        assert isinstance(d, ember.DType)
        assert str(d) == name
        assert d.itemsize == size
        assert d.is_float is is_float
        assert d == name
        assert ember.zeros(1, dtype=d).dtype == d
    assert ember.float32 != ember.float64


# ---- *_like


def test_like_functions(device, dtype):
    if not require_dtype(device, dtype):
        return
    base = ember.zeros(2, 3, dtype=edtype(dtype), device=device)
    check_exact(ember.zeros_like(base), np.zeros((2, 3)), dtype, device)
    check_exact(ember.ones_like(base), np.ones((2, 3)), dtype, device)
    check_exact(ember.full_like(base, 5), np.full((2, 3), 5), dtype, device)
    if edtype(dtype).is_float:
        r = ember.rand_like(base)
        assert r.shape == (2, 3) and r.dtype == edtype(dtype) and r.device.same_device(device)
        x = r.numpy()
        assert ((x >= 0) & (x < 1)).all()
        n = ember.randn_like(base)
        assert n.shape == (2, 3) and n.dtype == edtype(dtype) and n.device.same_device(device)


def test_like_of_a_view_has_the_view_shape(device):
    base = ember.zeros(4, 6, device=device).t()[::2]
    assert ember.ones_like(base).shape == (3, 4)
    np.testing.assert_array_equal(ember.ones_like(base).numpy(), np.ones((3, 4)))


def test_like_with_dtype_override(device):
    base = ember.zeros(2, 2, device=device)
    t = ember.ones_like(base, dtype=ember.int64)
    check_exact(t, np.ones((2, 2)), "int64", device)


def test_rounded_helper_is_numpy_rounding():
    # bfloat16: 1 + 2**-8 is halfway between 1 and 1 + 2**-7: ties to even -> 1
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.0], dtype=np.float32)
    np.testing.assert_array_equal(rounded(x, "bfloat16"), [1.0, 1 + 2**-6, 3.0])
