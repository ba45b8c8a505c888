"""16-bit float elementwise ops at every layout class: each value computed in float32 from
the half inputs and rounded once to nearest even (bfloat16 as the top half of the float,
float16 as IEEE half), the same bits whether the operands are dense, broadcast as a row
or a 0-d tensor, transposed or sliced; NaN, infinities and rounding ties kept."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from helpers import pytest_at_cpu_level


def round_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 (rounded to nearest even, NaN kept quiet) -> float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = np.where(nan, (u >> 16) | 0x40, r).astype(np.uint32)
    return (r << 16).view(np.float32)


def round_half(x: np.ndarray, dt: str) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return round_bf16(x) if dt == "bfloat16" else x.astype(np.float16).astype(np.float32)


def values(shape, rng, dt):
    x = rng.standard_normal(shape).astype(np.float32) * 3
    flat = x.reshape(-1)
    if flat.size >= 8:  # the special values, and a bfloat16 rounding tie
        flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, np.float32(1.00390625)]
    return round_half(x, dt)


LAYOUTS = {
    "dense": (lambda x: x, lambda x: x),
    "transposed": (lambda x: x.T, lambda x: x.T),
    "sliced": (lambda x: x[:, ::3], lambda x: x[:, ::3]),
}
OPERANDS = ["same layout", "row", "0-d"]
BINARY = {"add": np.add, "mul": np.multiply, "div": np.divide, "maximum": np.maximum}


def _half(t, dt):
    return ember.tensor(t).to_dtype(getattr(ember, dt))


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("other", OPERANDS)
@pytest.mark.parametrize("op", BINARY)
def test_binary_rounds_once_at_every_layout(device, dt, layout, other, op, rng):
    view_e, view_n = LAYOUTS[layout]
    x = values((40, 600), rng, dt)
    xn = view_n(x)
    a = view_e(_half(x, dt).to_device(device))
    if other == "same layout":
        y = values((40, 600), rng, dt)
        b, yn = view_e(_half(y, dt).to_device(device)), view_n(y)
    else:  # a row as long as the view's rows, or one value
        yn = values((xn.shape[1],), rng, dt) if other == "row" else round_half(np.float32(1.7), dt)
        b = _half(yn, dt).to_device(device)
    with np.errstate(all="ignore"):
        want = round_half(BINARY[op](xn, yn), dt)
    got = getattr(ember, op)(a, b)
    assert got.dtype == getattr(ember, dt)
    np.testing.assert_array_equal(got.to_dtype(ember.float32).numpy(), want)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_unary_and_casts_at_every_layout(device, dt, layout, rng):
    view_e, view_n = LAYOUTS[layout]
    x = values((40, 600), rng, dt)
    a = view_e(_half(x, dt).to_device(device))
    xn = view_n(x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((-a).to_dtype(ember.float32).numpy(), -xn)
        np.testing.assert_array_equal(a.sqrt().to_dtype(ember.float32).numpy(), round_half(np.sqrt(xn), dt))
        np.testing.assert_array_equal((a * 2.0 + 1.0).to_dtype(ember.float32).numpy(),
                                      round_half(xn * 2 + 1, dt))  # fmt: skip
        np.testing.assert_array_equal((a > 0).numpy(), xn > 0)
        np.testing.assert_array_equal(a.isnan().numpy(), np.isnan(xn))
        # exp within one unit of the half type's last place (float32 exp, then one rounding)
        got = a.exp().to_dtype(ember.float32).numpy()
        want = round_half(np.exp(xn.astype(np.float64)).astype(np.float32), dt)
    finite = np.isfinite(want) & (want != 0)
    ulp = 2.0 ** (np.floor(np.log2(np.abs(want[finite]))) - (7 if dt == "bfloat16" else 10))
    assert np.all(np.abs(got[finite] - want[finite]) <= ulp)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    # float32 -> half -> float32 from any layout, bit for bit
    f = view_e(ember.tensor(x * 1.37).to_device(device))
    np.testing.assert_array_equal(f.to_dtype(getattr(ember, dt)).to_dtype(ember.float32).numpy(),
                                  round_half(view_n(x * 1.37), dt))  # fmt: skip


def test_bfloat16_rounding_edges():
    edges = np.array([1.00390625, 1.01171875, 1.0039063, -1.00390625, 3.3895314e38, 3.4028235e38,
                      np.nan, -np.nan, np.inf, 1e-40, -0.0], np.float32)  # fmt: skip
    got = ember.tensor(edges).to_dtype(ember.bfloat16).to_dtype(ember.float32).numpy()
    np.testing.assert_array_equal(got, round_bf16(edges))
    assert got[0] == 1.0 and got[1] == np.float32(1.015625)  # ties to even both ways
    assert np.isinf(got[5])  # rounds up past the largest bfloat16
    assert np.signbit(got[-1])
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(got, torch.tensor(edges).bfloat16().float().numpy())


def test_float32_to_bfloat16_every_class_bit_for_bit(device):
    """float32 -> bfloat16 over every top half (all exponents and signs, so subnormals,
    infinities and NaN payloads) with the low halves that decide the rounding (0, ties,
    just below and above, the largest): rounded to nearest even, subnormals kept (not
    flushed to zero), a NaN stays NaN. On the CPU a NaN keeps its payload's top bits,
    made quiet; dense and strided, so the vectorised runs and their tails all run."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    lo = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234], np.uint32)
    x = (hi[:, None] | lo[None, :]).ravel().view(np.float32)
    want = round_bf16(x)
    nan = np.isnan(want)
    t = ember.tensor(x, device=device)
    for view, w, isnan in ((t, want, nan), (t[3::5], want[3::5], nan[3::5])):
        got = view.to_dtype(ember.bfloat16).to_dtype(ember.float32).numpy()
        np.testing.assert_array_equal(got[~isnan].view(np.uint32), w[~isnan].view(np.uint32))
        assert np.isnan(got[isnan]).all()
        if device.kind == "cpu":
            np.testing.assert_array_equal(got[isnan].view(np.uint32), w[isnan].view(np.uint32))


def test_float16_rounding_edges():
    # ties to even, the largest half and past it, subnormals and their ties, underflow to
    # zero, signed zero, NaN and infinities; more than eight values, so that the vectorised
    # conversions and their scalar tail both run
    edges = np.array([1.00048828125, 1.00146484375, 65504.0, 65519.0, 65520.0, 1e5,
                      5.960464477539063e-08, 2.9802322387695312e-08, 8.940696716308594e-08,
                      1e-8, -0.0, np.nan, np.inf, -np.inf, 6.103515625e-05, -3.0517578125e-05,
                      0.1, 3.14159], np.float32)  # fmt: skip
    got = ember.tensor(edges).to_dtype(ember.float16).to_dtype(ember.float32).numpy()
    with np.errstate(over="ignore"):
        want = edges.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    half = ember.tensor(want.astype(np.float16))
    np.testing.assert_array_equal(half.to_dtype(ember.float32).numpy(), want)


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_gelu_of_half_types_is_float_gelu_rounded_once(device, name):
    """A 16-bit gelu equals the float32 gelu of the same values rounded once to the
    dtype: dense, strided, odd lengths, and inf, -inf, NaN, +-0."""
    dt = getattr(ember, name)
    x = np.random.default_rng(5).standard_normal(10_007).astype(np.float32) * 4
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3e4]
    t = ember.tensor(x, device=device).to_dtype(dt)
    for view in (t, t[1::3]):
        got = ember.gelu(view).to_dtype(ember.float32).numpy()
        want = ember.gelu(view.to_dtype(ember.float32)).to_dtype(dt).to_dtype(ember.float32).numpy()
        np.testing.assert_array_equal(got, want)
        assert list(np.signbit(got[:5])) == list(np.signbit(want[:5]))


@pytest.mark.parametrize("op", ["exp", "tanh", "erf", "log", "gelu", "sigmoid"])
@pytest.mark.parametrize("name", ["bfloat16", "float16"])
def test_half_float_math_is_the_float32_function_rounded_once(device, op, name):
    """exp, tanh, erf, log, gelu and sigmoid of a 16-bit float equal the float32 function
    of the same values rounded once to the dtype, bit for bit: dense runs (the CPU's
    bfloat16 runs convert in registers), strided views, odd lengths and tails, specials."""
    dt = getattr(ember, name)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(10_007) * 4).astype(np.float32)
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 88.0]
    # results that are float32 subnormals (exp and gelu far left), whose rounding a
    # flush-to-zero conversion would lose
    x[8:40] = np.linspace(-103.0, -87.0, 32, dtype=np.float32) if op == "exp" else x[8:40]
    x[40:72] = np.linspace(-13.6, -12.9, 32, dtype=np.float32) if op == "gelu" else x[40:72]
    if op == "log":
        x = np.abs(x)
    t = ember.tensor(x, device=device).to_dtype(dt)
    for view in (t, t[1::3], t[5:5 + 13]):
        got = getattr(view, op)().to_dtype(ember.float32).numpy()
        wide = getattr(view.to_dtype(ember.float32), op)().numpy()
        with np.errstate(over="ignore"):
            want = round_bf16(wide) if name == "bfloat16" else wide.astype(np.float16).astype(np.float32)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_float_math_at_each_cpu_level(capability):
    """The AVX2 kernels (gelu's) and the loops built per level give the values the math
    tests check, ulps and specials included (a CPU setting, not per device)."""
    pytest_at_cpu_level(capability, ["test_half_kernels.py", "test_numeric_edges.py"],
                        "cpu and not at_each_cpu_level")
