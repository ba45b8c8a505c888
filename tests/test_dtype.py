"""dtype conversion between every pair, rounding as numpy, and the host views of a
tensor: numpy(), tolist(), item(), __array__, __bool__, __repr__."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
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
    supported,
    to_ember,
)


@pytest.mark.parametrize("dst", DTYPES)
def test_to_dtype_every_pair(device, dtype, dst, rng):
    # small non-negative integers are exact in all seven dtypes
    if not (supported(device, dtype) and supported(device, dst)):
        name = dtype if not supported(device, dtype) else dst
        assert not require_dtype(device, name)
        if supported(device, dtype):
            t = ember.ones(3, dtype=edtype(dtype), device=device)
            with pytest.raises(ember.UnsupportedDTypeError):
                t.to_dtype(edtype(dst))
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (3, 4), dtype, device, layout, "small")
        if dtype != "bool":  # bool keeps its 0 / 1 (a bool times 30 is int64)
            x = (x.astype(np.float64) * 30).astype(NP_DTYPE[dtype])  # 0, 30, 60, 90
            t = t * 30
        got = t.to_dtype(edtype(dst))
        check_exact(got, x.astype(np.float64), dst, device)
        check_exact(t.to(edtype(dst)), x.astype(np.float64), dst)


def test_to_dtype_same_dtype_keeps_values(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (5,), dtype)
    t = to_ember(x, dtype, device)
    check_exact(t.to_dtype(edtype(dtype)), x, dtype)


@pytest.mark.parametrize("dst", INT_DTYPES)
def test_float_to_int_truncates_toward_zero(device, dst):
    values = [0.0, 0.5, 2.75, 3.999, 100.5, 250.25]
    if dst == "int64":
        values += [-0.5, -2.75, -100.5]
    for src in FLOAT_DTYPES:
        if not require_dtype(device, src):
            continue
        x = rounded(np.array(values), src)
        t = ember.tensor(x, dtype=edtype(src), device=device)
        check_exact(t.to_dtype(edtype(dst)), x.astype(np.float64).astype(NP_DTYPE[dst]), dst)


@pytest.mark.parametrize("dst", ["float16", "bfloat16", "float32"])
def test_float_narrowing_rounds_to_nearest_even(device, dst, rng):
    for src in ("float64", "float32"):
        if src == dst or not (supported(device, src) and supported(device, dst)):
            continue
        x = rng.standard_normal(1000) * 10.0 ** rng.integers(-3, 4, 1000)
        x = rounded(x, src)
        t = ember.tensor(x, dtype=edtype(src), device=device)
        if src == "float64" and dst != "float32":
            # a conversion through float32 may round twice: within half an ulp of the
            # target plus one float32 ulp of the exact value
            half_ulp = {"float16": 2**-11, "bfloat16": 2**-8}[dst]
            got = t.to_dtype(edtype(dst))
            assert got.dtype == edtype(dst)
            np.testing.assert_allclose(
                got.numpy().astype(np.float64), x, rtol=half_ulp + 2**-23, atol=2**-25
            )
            continue
        # from float32: exactly numpy's rounding (ties to even)
        expected = rounded(x.astype(np.float32), dst) if dst == "bfloat16" else x
        check_exact(t.to_dtype(edtype(dst)), expected.astype(np.float64), dst)


def test_float_narrowing_special_values(device):
    x = np.array([np.inf, -np.inf, np.nan, 1e6, -1e6, 1e-9, 65504.0, 65520.0])
    for dst in ("float16", "bfloat16", "float32"):
        t = ember.tensor(x.astype(np.float32), device=device)
        with np.errstate(over="ignore"):
            check_exact(t.to_dtype(edtype(dst)), rounded(x.astype(np.float32), dst), dst)


def test_int_to_float_rounds_as_numpy(device):
    x = np.array([2**24 + 1, 2**53 + 1, -(2**31) - 1, 123456789, 2**62], dtype=np.int64)
    t = ember.tensor(x, device=device)
    for dst in ("float32", "float16", "bfloat16", "float64"):
        if not supported(device, dst):
            continue
        with np.errstate(over="ignore"):
            if dst == "bfloat16":
                got = t.to_dtype(ember.bfloat16).numpy().astype(np.float64)
                np.testing.assert_allclose(got, x.astype(np.float64), rtol=2**-8 + 2**-23)
                continue
            expected = x.astype(NP_DTYPE[dst])
        check_exact(t.to_dtype(edtype(dst)), expected, dst)


def test_unsigned_and_signed_conversions(device):
    x = np.array([0, 1, 200, 255], dtype=np.uint8)
    t = ember.tensor(x, device=device)
    check_exact(t.to_dtype(ember.int64), x.astype(np.int64), "int64")
    check_exact(t.to_dtype(ember.uint32), x.astype(np.uint32), "uint32")
    big = ember.tensor(np.array([4_000_000_000, 7], dtype=np.uint32), device=device)
    check_exact(big.to_dtype(ember.int64), np.array([4_000_000_000, 7]), "int64")
    check_exact(
        big.to_dtype(ember.float64 if supported(device, "float64") else ember.float32),
        np.array([4e9, 7.0]),
        "float64" if supported(device, "float64") else "float32",
    )
    # wrap-around casts between integers, as numpy's astype
    w = ember.tensor(np.array([256 + 7, -1, 2**33 + 5], dtype=np.int64), device=device)
    check_exact(
        w.to_dtype(ember.uint8), np.array([256 + 7, -1, 2**33 + 5]).astype(np.uint8), "uint8"
    )
    check_exact(
        w.to_dtype(ember.uint32), np.array([256 + 7, -1, 2**33 + 5]).astype(np.uint32), "uint32"
    )


@pytest.mark.parametrize("src", [d for d in DTYPES if d != "bool"])
def test_to_bool_is_nonzero(device, src):
    """Into bool means != 0, as PyTorch and numpy: 0.5, 256, -1 and NaN are all True."""
    if not require_dtype(device, src):
        return
    values = [0, 1, 2, 255, 0.5, -0.0, np.nan, -1, 256] if is_float(src) else [0, 1, 2, 255, 7]
    if src in ("int64", "int32"):
        values += [-1, 256, -(2**31)]
    if src in ("int64", "uint32"):
        values += [2**32 - 1]
    x = rounded(np.array(values, dtype=np.float64), src)
    t = ember.tensor(x, dtype=edtype(src), device=device)
    want = x.astype(np.bool_)
    for got in (t.to_dtype(ember.bool), t.to(ember.bool), t[::-1].to(ember.bool)[::-1]):
        check_exact(got, want, "bool", device)
    out = ember.zeros(len(values), dtype=ember.bool, device=device)
    out.copy_(t)  # copy_ casts the same way
    check_exact(out, want, "bool")
    check_exact(ember.tensor(want, device=device).to(edtype(src)), want.astype(np.float64), src)


def test_int32_conversions(device):
    x = np.array([0, -1, 2**31 - 1, -(2**31), 300, -300], dtype=np.int32)
    t = ember.tensor(x, device=device)
    assert t.dtype == ember.int32 and t.numpy().dtype == np.int32
    check_exact(t.to_dtype(ember.int64), x.astype(np.int64), "int64")
    check_exact(t.to_dtype(ember.uint8), x.astype(np.uint8), "uint8")  # wraps, as numpy
    check_exact(t.to_dtype(ember.uint32), x.astype(np.uint32), "uint32")
    check_exact(t.to_dtype(ember.float32), x.astype(np.float32), "float32")
    w = ember.tensor(np.array([2**40 + 5, -(2**33) - 7], dtype=np.int64), device=device)
    check_exact(
        w.to_dtype(ember.int32), np.array([2**40 + 5, -(2**33) - 7]).astype(np.int32), "int32"
    )
    f = ember.tensor([1e10, -1e10, -2.5, 2.5, np.nan], device=device)
    check_exact(f.to_dtype(ember.int32), np.array([2**31 - 1, -(2**31), -2, 2, 0]), "int32")


def test_to_dtype_accepts_spellings(device):
    t = ember.tensor([1.5, 2.5], device=device)
    for spelling in (ember.float16, "float16", np.float16, np.dtype("float16"), "f2"):
        assert t.to_dtype(spelling).dtype == ember.float16
    assert t.to_dtype("bfloat16").dtype == ember.bfloat16
    assert t.to(ember.uint8).dtype == ember.uint8
    for spelling in (ember.bool, "bool", np.bool_, bool, np.dtype("?")):
        assert t.to_dtype(spelling).dtype == ember.bool
    for spelling in (ember.int32, "int32", np.int32, "i4"):
        assert t.to_dtype(spelling).dtype == ember.int32
    assert str(ember.bool) == "bool" and ember.bool.itemsize == 1 and not ember.bool.is_float
    assert str(ember.int32) == "int32" and ember.int32.itemsize == 4 and not ember.int32.is_float


def test_to_dtype_is_a_copy(device):
    t = ember.tensor([1.0, 2.0], device=device)
    u = t.to_dtype(ember.float16)
    u += 1
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])


# ---- host access


def test_numpy_dtypes_and_values(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (3, 4), dtype, device, layout)
        arr = t.numpy()
        assert isinstance(arr, np.ndarray)
        assert arr.dtype == NP_DTYPE[dtype]
        assert arr.shape == (3, 4)
        np.testing.assert_array_equal(arr, x)
        assert arr.flags.writeable


def test_numpy_of_0d_and_empty(device):
    assert ember.tensor(2.5, device=device).numpy().shape == ()
    assert ember.zeros(0, 3, device=device).numpy().shape == (0, 3)


def test_array_protocol(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    t, x = make_view(rng, (2, 3), dtype, device, "transposed")
    arr = np.asarray(t)
    assert arr.dtype == NP_DTYPE[dtype]
    np.testing.assert_array_equal(arr, x)
    np.testing.assert_array_equal(np.array(t, dtype=np.float64), x.astype(np.float64))
    assert np.asarray(t).shape == (2, 3)


def test_tolist(device):
    t = ember.tensor([[1.5, 2.0], [3.0, -4.25]], device=device)
    assert t.tolist() == [[1.5, 2.0], [3.0, -4.25]]
    assert all(isinstance(v, float) for row in t.tolist() for v in row)
    i = ember.tensor([[1, 2, 3]], device=device)
    assert i.tolist() == [[1, 2, 3]]
    assert all(type(v) is int for v in i.tolist()[0])
    assert t.t().tolist() == [[1.5, 3.0], [2.0, -4.25]]
    assert ember.tensor(7, device=device).tolist() == 7
    assert ember.zeros(2, 0, device=device).tolist() == [[], []]


def test_tolist_all_dtypes(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.tensor([[0, 1], [2, 100]], dtype=edtype(dtype), device=device)
    if dtype == "bool":
        assert t.tolist() == [[False, True], [True, True]]
        assert type(t.tolist()[1][1]) is bool
        return
    assert t.tolist() == [[0, 1], [2, 100]]
    kind = float if edtype(dtype).is_float else int
    assert type(t.tolist()[1][1]) is kind


def test_item(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.tensor([[5]], dtype=edtype(dtype), device=device)
    v = t.item()
    want = True if dtype == "bool" else 5
    assert v == want
    kind = bool if dtype == "bool" else float if edtype(dtype).is_float else int
    assert type(v) is kind
    assert ember.full((), 3, dtype=edtype(dtype), device=device).item() == (
        want if dtype == "bool" else 3
    )
    with pytest.raises(ember.InvalidArgumentError):
        ember.zeros(2, dtype=edtype(dtype), device=device).item()


def test_item_exact_large_int(device):
    assert ember.tensor(2**62 + 3, device=device).item() == 2**62 + 3
    assert (
        ember.tensor(np.array(4_000_000_000, dtype=np.uint32), device=device).item()
        == 4_000_000_000
    )


def test_bool(device):
    assert bool(ember.tensor([1.0], device=device)) is True
    assert bool(ember.tensor(0, device=device)) is False
    assert bool(ember.tensor([[2]], device=device)) is True
    with pytest.raises(ValueError):
        bool(ember.ones(2, device=device))
    m = ember.tensor([True], device=device)
    assert bool(m) is True and bool(~m) is False
    taken = "yes" if ember.tensor([2, 0], device=device)[0:1] > 1 else "no"
    assert taken == "yes"
    with pytest.raises(ember.InvalidArgumentError, match=r"\.any\(\) or t\.all\(\)"):
        if ember.tensor([True, False], device=device):
            pass


def test_bool_and_int32_from_python_and_numpy(device):
    b = ember.tensor([True, False], device=device)
    assert b.dtype == ember.bool and b.numpy().dtype == np.bool_
    assert b.tolist() == [True, False] and type(b.tolist()[0]) is bool
    assert ember.tensor([1, 2], device=device).dtype == ember.int64  # Python ints
    assert ember.tensor(np.array([1, 2], dtype=np.int32), device=device).dtype == ember.int32
    assert ember.tensor(np.array([True]), device=device).dtype == ember.bool
    assert ember.tensor([2, 0, -1], dtype="bool", device=device).tolist() == [True, False, True]
    assert ember.tensor(np.bool_(True), device=device).item() is True
    assert ember.zeros(2, dtype=ember.bool, device=device).tolist() == [False, False]
    assert ember.ones(2, dtype=ember.bool, device=device).tolist() == [True, True]
    assert ember.full((2,), 5, dtype=ember.bool, device=device).tolist() == [True, True]
    assert ember.full((1,), 0.0, dtype=ember.bool, device=device).tolist() == [False]
    assert "bool" in repr(b) and "int32" in repr(ember.tensor(np.int32([1]), device=device))


def test_repr_mentions_values_dtype_and_device(device):
    t = ember.tensor([1.5, 2.5], device=device)
    r = repr(t)
    assert "1.5" in r and "2.5" in r
    big = repr(ember.zeros(1000, 1000, device=device))
    assert len(big) < 10_000  # summarised, not a million numbers


def test_tensor_properties(device):
    t = ember.zeros(2, 3, 4, dtype=ember.uint8, device=device)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.ndim == 3
    assert t.dtype == ember.uint8
    assert t.device.same_device(device)
    assert t.size() == (2, 3, 4) and t.size(-1) == 4 and t.numel() == 24
    assert t.strides == (12, 4, 1)
    assert t.is_contiguous()
    assert len(t) == 2


@pytest.mark.parametrize("name", [d for d in DTYPES if d != "bfloat16"])
def test_dlpack_with_numpy(name, rng):
    # numpy has no bfloat16; CPU tensors only (numpy cannot read device memory)
    x = rand_array(rng, (3, 4), name)
    t = to_ember(x, name, "cpu")
    np.testing.assert_array_equal(np.from_dlpack(t), x)
    np.testing.assert_array_equal(np.from_dlpack(t.t()), x.T)  # strided views too
    back = ember.from_dlpack(x)
    check_exact(back, x, name, ember.Device.cpu())
    check_exact(ember.from_dlpack(x[:, ::-2].copy()), x[:, ::-2], name)
