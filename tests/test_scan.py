"""cumsum and cumprod against numpy: result dtypes (PyTorch's: integers accumulate in
int64 unless dtype= is given), every dim and memory layout, long rows, NaN/inf, overflow
wrap-around, zero-size and 0-d tensors, and errors."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    NP_DTYPE,
    check_exact,
    edtype,
    is_float,
    make_view,
    rand_array,
    require_dtype,
    rounded,
    to_ember,
)

SHAPE = (3, 4, 5)
DIMS = [0, 1, 2, -1, -2, -3]
OPS = {"cumsum": np.cumsum, "cumprod": np.cumprod}
# The final rounding to the dtype, and the unit of the accumulator (16-bit floats
# accumulate in float32; float32 in float32 on GPUs, in float64 on the CPU).
ROUND = {"float32": 1.2e-7, "float64": 2.3e-16, "float16": 1e-3, "bfloat16": 8e-3}
ACC = {"float32": 1.2e-7, "float64": 2.3e-16, "float16": 1.2e-7, "bfloat16": 1.2e-7}


def result_dtype(name: str) -> str:
    return name if is_float(name) else "int64"


def check_scan(got, op: str, x: np.ndarray, axis: int, name: str, device):
    """got is op(x) along axis: exact for integers (int64), within the accumulated
    rounding error for floats."""
    if not is_float(name):
        ref = OPS[op](x.astype(np.int64), axis=axis)
        check_exact(got, ref, "int64", device)
        return
    assert got.dtype == edtype(name) and got.shape == x.shape
    x64 = x.astype(np.float64)
    ref = OPS[op](x64, axis=axis)
    n = x.shape[axis] if x.ndim else 1
    # n accumulations, each erring by the accumulator's unit times the partial sum of
    # magnitudes (a product: times itself), then one rounding to the dtype.
    mag = np.cumsum(np.abs(x64), axis=axis) if op == "cumsum" else np.abs(ref)
    g = got.numpy().astype(np.float64)
    bound = ACC[name] * n * mag + ROUND[name] * np.abs(ref) + 1e-30
    assert np.all(np.abs(g - ref) <= bound), (g, ref)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dim", DIMS)
def test_scan_every_dim_and_layout(device, dtype, op, dim, rng):
    if not require_dtype(device, dtype):
        return
    kind = "positive" if op == "cumprod" else "normal"
    for layout in LAYOUTS:
        t, x = make_view(rng, SHAPE, dtype, device, layout, kind)
        got = getattr(t, op)(dim)
        assert got.dtype == edtype(result_dtype(dtype)), (layout, got.dtype)
        check_scan(got, op, x, dim, dtype, device)
        fn = getattr(ember, op)(t, dim)
        np.testing.assert_array_equal(fn.numpy(), got.numpy())


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize(
    "shape, dim",
    [((3000,), 0), ((2, 1500), 1), ((700, 3), 0), ((50, 37), 1), ((1 << 17,), 0), ((1, 70_001), 1),
     ((3, 100_000), 1), ((100_000, 2), 0)],
)
def test_scan_long_and_many_rows(device, dtype, op, shape, dim, rng):
    """Rows longer than a GPU block's tile, many short rows, and rows long enough to split
    over threads or blocks (a scan of parts from their totals; on CUDA few long rows,
    dense or strided, take a device-wide scan each)."""
    if not require_dtype(device, dtype):
        return
    if op == "cumprod":  # values near 1 keep long products finite
        x = rand_array(rng, shape, dtype, "small" if not is_float(dtype) else "uniform")
        if is_float(dtype):
            x = rounded(1 + (x - 1) / 64, dtype)
    else:
        x = rand_array(rng, shape, dtype)
    t = to_ember(x, dtype, device)
    check_scan(getattr(t, op)(dim), op, x, dim, dtype, device)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_cumsum_of_integers_is_int64_without_overflow(device, name):
    top = np.iinfo(NP_DTYPE[name]).max if name != "int64" else 2**40
    x = np.full((1000,), top, dtype=NP_DTYPE[name])
    got = to_ember(x, name, device).cumsum(0)
    check_exact(got, np.cumsum(x.astype(np.int64)), "int64", device)
    assert got[-1].item() == 1000 * top


def test_int64_overflow_wraps_as_numpy(device):
    x = np.array([2**62, 2**62, 2**62, 3], dtype=np.int64)
    t = ember.tensor(x, device=device)
    with np.errstate(over="ignore"):
        check_exact(t.cumsum(0), np.cumsum(x), "int64", device)
        check_exact(t.cumprod(0), np.cumprod(x), "int64", device)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("target", ["uint8", "float32", "int64", "float16"])
def test_dtype_argument_casts_first(device, op, target):
    """dtype= casts the input first, then accumulates in it (uint8 wraps, as numpy)."""
    x = np.array([[200, 100, 3], [7, 250, 2]], dtype=np.int64)
    t = ember.tensor(x, device=device)
    got = getattr(t, op)(1, dtype=edtype(target))
    ref = OPS[op](x.astype(NP_DTYPE[target]), axis=1, dtype=NP_DTYPE[target])
    check_exact(got, ref, target, device)


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_nan_and_inf_propagate(device, name):
    if not require_dtype(device, name):
        return
    x = np.array([1.0, np.nan, 2.0, np.inf, -np.inf, 0.0], dtype=np.float64)
    t = to_ember(x, name, device)
    with np.errstate(invalid="ignore"):
        check_exact(t.cumsum(0), np.cumsum(x), name, device)
        y = np.array([2.0, np.inf, 0.0, 3.0])
        check_exact(to_ember(y, name, device).cumprod(0), np.cumprod(y), name, device)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape, dim", [((3, 0, 4), 1), ((3, 0, 4), 0), ((0,), 0), ((2, 0), -1)])
def test_zero_size(device, op, shape, dim):
    for name in ("float32", "uint8"):
        got = getattr(ember.zeros(*shape, dtype=edtype(name), device=device), op)(dim)
        assert got.shape == shape
        assert got.dtype == edtype(result_dtype(name))
        assert got.numpy().size == 0


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_zero_dim_tensor(device, op):
    t = ember.tensor(3.5, device=device)
    for dim in (0, -1):
        got = getattr(t, op)(dim)
        assert got.shape == () and got.item() == 3.5
    got = getattr(ember.tensor(7, dtype=ember.uint8, device=device), op)(0)
    assert got.shape == () and got.dtype == ember.int64 and got.item() == 7
    with pytest.raises(ember.IndexOutOfRangeError, match=op):
        getattr(t, op)(1)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_dim_out_of_range(device, op):
    t = ember.ones(2, 3, device=device)
    for dim in (2, -3):
        with pytest.raises(ember.IndexOutOfRangeError, match=op) as info:
            getattr(t, op)(dim)
        assert info.value.op == op


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_dim_is_required_and_an_int(device, op):
    t = ember.ones(2, 3, device=device)
    with pytest.raises(ember.InvalidTypeError):
        getattr(t, op)()
    with pytest.raises(ember.InvalidTypeError, match=op):
        getattr(t, op)(1.5)


def test_dtype_the_device_lacks(device):
    t = ember.ones(4, dtype=ember.int64, device=device)
    if device.kind != "metal":
        check_exact(t.cumsum(0, dtype=ember.float64), np.arange(1.0, 5.0), "float64", device)
        return
    with pytest.raises(ember.UnsupportedDTypeError, match="cumsum") as info:
        t.cumsum(0, dtype=ember.float64)
    assert info.value.op == "cumsum" and info.value.dtype == ember.float64


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_metal_scans_a_long_row_on_many_threadgroups(op):
    """One row of 2^24 scans in chunks over many threadgroups (their totals, the chunks'
    offsets, each chunk's scan: three dispatches), not on one threadgroup."""
    d = ember.device("metal")
    t = ember.ones(1 << 24, device=d)
    before = d.queue_stats()
    r = getattr(t, op)(0)
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 3
    assert after["threadgroups"] - before["threadgroups"] > 2 * 64
    got = r[-3:].numpy()
    want = [2**24 - 2, 2**24 - 1, 2**24] if op == "cumsum" else [1.0, 1.0, 1.0]
    np.testing.assert_array_equal(got, np.array(want, np.float32))
