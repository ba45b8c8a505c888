"""Every Metal kernel family against the CPU backend, on the same inputs.

The rest of the suite compares each device with numpy; this file compares Metal with
ember's own CPU backend directly (exactly, where both compute exactly), over
contiguous, strided, broadcast and offset views. CI also runs it against a module built
with AddressSanitizer, so a kernel that reads or writes out of bounds fails here.
"""

from __future__ import annotations

import ember
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")

METAL_DTYPES = ["float32", "float16", "bfloat16", "int64", "int32", "uint32", "uint8"]
FLOATS = ["float32", "float16", "bfloat16"]
INTS = ["int64", "int32", "uint32", "uint8"]
TOL = {"float32": (2e-6, 1e-6), "float16": (2e-3, 1e-3), "bfloat16": (1e-2, 1e-2)}
SUM_TOL = {"float32": 1e-7, "float16": 1e-3, "bfloat16": 1e-2}


def metal():
    return ember.device("metal")


def pair(data, dtype):
    """The same values as a CPU tensor and a Metal tensor."""
    c = ember.tensor(data).to_dtype(getattr(ember, dtype))
    return c, c.to_device(metal())


def values(rng, shape, dtype, lo=-4.0, hi=4.0):
    if dtype in INTS:
        top = {"int64": 1000, "int32": 1000, "uint32": 1000, "uint8": 255}[dtype]
        low = -1000 if dtype in ("int64", "int32") else 0
        return rng.integers(low, top, size=shape)
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def same(c, m, dtype, exact=True):
    assert m.device.same_device(metal())
    assert c.shape == m.shape and c.dtype == m.dtype
    a, b = c.numpy(), m.numpy()
    if exact or dtype in INTS:
        np.testing.assert_array_equal(b, a)
    else:
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


def views(t):
    """A contiguous tensor, a transposed view, a stepped slice with an offset."""
    return [t, t.t(), t[1:, ::2]]


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]
DIVISIONS = ["floor_divide", "remainder", "trunc_divide"]
BINARY += DIVISIONS
UNARY_FLOAT = ["exp", "log", "sqrt", "recip", "sin", "cos", "tanh", "gelu", "silu", "sigmoid"]
UNARY_FLOAT += ["expm1", "log1p", "rsqrt", "tan", "erf"]
UNARY_ANY = ["neg", "abs", "sqr", "relu", "sign", "floor", "ceil", "round", "trunc"]
PREDICATES = ["isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("dtype", METAL_DTYPES)
def test_unary(dtype, rng):
    data = values(rng, (6, 8), dtype)
    if dtype in FLOATS:
        data = np.abs(data) + 0.1  # in the domain of log and sqrt
    c, m = pair(data, dtype)
    ops = UNARY_ANY + PREDICATES + (UNARY_FLOAT if dtype in FLOATS else [])
    for op in ops:
        for cv, mv in zip(views(c), views(m)):
            same(getattr(cv, op)(), getattr(mv, op)(), dtype, exact=op not in UNARY_FLOAT)
    if dtype in FLOATS:  # the edges: NaN, infinities, zeros of both signs, halves
        edges = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 0.5, -1.5, 2.5, -1.0, 1e-4])
        ce, me = pair(edges.astype(np.float32), dtype)
        for op in ops:
            got, want = getattr(me, op)().numpy(), getattr(ce, op)().numpy()
            rtol, atol = (0, 0) if op not in UNARY_FLOAT else TOL[dtype]
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    # both bounds, one open side, and bounds beyond the dtype's range (saturated)
    bounds = [(1, 5), (None, 2), (2, None), (-1e30, 1e30), (-0.5, None)]
    for cv, mv in zip(views(c), views(m)):
        for lo, hi in bounds:
            same(cv.clamp(lo, hi), mv.clamp(lo, hi), dtype)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary_broadcast_and_views(dtype, op, rng):
    a = values(rng, (6, 8), dtype, 0.5, 3.0)
    b = values(rng, (8,), dtype, 0.5, 3.0)
    if op == "pow" and dtype in INTS:
        b = rng.integers(0, 4, size=(8,))
    if op in DIVISIONS and dtype in INTS:  # the CPU raises on a zero divisor
        b[b == 0] = 1
    ca, ma = pair(a, dtype)
    cb, mb = pair(b, dtype)
    exact = op != "pow"
    same(getattr(ember, op)(ca, cb), getattr(ember, op)(ma, mb), dtype, exact)
    same(getattr(ember, op)(ca.t(), cb[:6]), getattr(ember, op)(ma.t(), mb[:6]), dtype, exact)
    same(getattr(ember, op)(ca[1:, ::2], 2), getattr(ember, op)(ma[1:, ::2], 2), dtype, exact)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
def test_integer_division_by_zero_and_affine(dtype, rng):
    a = values(rng, (5, 7), dtype)
    ca, ma = pair(a, dtype)
    z = np.zeros((5, 7))
    cz, mz = pair(z, dtype)
    same(ca / cz, ma / mz, dtype)
    same(ca * 3 + 1, ma * 3 + 1, dtype)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare_and_where(dtype, op, rng):
    a = values(rng, (4, 6), dtype)
    b = a.copy()
    b[::2] = values(rng, (2, 6), dtype)
    ca, ma = pair(a, dtype)
    cb, mb = pair(b, dtype)
    cc, mc = getattr(ember, op)(ca, cb), getattr(ember, op)(ma, mb)
    same(cc, mc, "uint8")
    same(ember.where(cc, ca, cb.t().t()), ember.where(mc, ma, mb.t().t()), dtype)
    same(ember.where(cc[:, :1], ca, 7), ember.where(mc[:, :1], ma, 7), dtype)


@pytest.mark.parametrize("src", METAL_DTYPES)
@pytest.mark.parametrize("dst", METAL_DTYPES)
def test_cast_every_pair(src, dst, rng):
    data = np.array([-300.5, -1.5, -0.0, 0.25, 1.5, 2.5, 255.0, 256.0, 70000.0, 3e9])
    if src in INTS:
        data = {
            "int64": [-300, -1, 0, 1, 255, 256, 70000, 2**40],
            "int32": [-300, -1, 0, 1, 255, 256, 70000, 2**31 - 1, -(2**31)],
            "uint32": [0, 1, 255, 256, 70000, 2**31, 2**32 - 1],
            "uint8": [0, 1, 127, 128, 255],
        }[src]
    c, m = pair(np.array(data), src)
    same(c.to_dtype(getattr(ember, dst)), m.to_dtype(getattr(ember, dst)), dst)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cast_nan_and_inf_to_integers(dtype):
    c, m = pair(np.array([np.nan, np.inf, -np.inf, 1e30], np.float32), dtype)
    for dst in INTS:
        same(c.to_dtype(getattr(ember, dst)), m.to_dtype(getattr(ember, dst)), dst)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
def test_copies_of_views_and_fills(dtype, rng):
    c, m = pair(values(rng, (3, 4, 5), dtype), dtype)
    same(c.permute(2, 0, 1).contiguous(), m.permute(2, 0, 1).contiguous(), dtype)
    same(c[:, ::2, 1:].contiguous(), m[:, ::2, 1:].contiguous(), dtype)
    same(ember.cat([c, c[:, :1]], 1), ember.cat([m, m[:, :1]], 1), dtype)
    cf = ember.full((4, 3), 7, dtype=getattr(ember, dtype))
    mf = ember.full((4, 3), 7, dtype=getattr(ember, dtype), device=metal())
    cf[1:3, ::2] = 2
    mf[1:3, ::2] = 2
    same(cf, mf, dtype)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("op", ["sum", "amax", "amin", "argmax", "argmin"])
def test_reductions(dtype, op, rng):
    c, m = pair(values(rng, (5, 37, 9), dtype), dtype)
    exact = op != "sum" or dtype in INTS
    for dim in (None, 0, 1, 2, (0, 2)):
        if dim == (0, 2) and op.startswith("arg"):
            continue
        for cv, mv in ((c, m), (c.transpose(0, 2), m.transpose(0, 2))):
            if exact:
                same(getattr(cv, op)(dim), getattr(mv, op)(dim), dtype)
                continue
            # Float sums: each backend's error is a few roundings of the terms' magnitude
            # (the CPU adds up to 32 terms in float before its double total, Metal keeps
            # compensated pairs), not of a result that cancelled.
            scale = cv.to_dtype(ember.float32).abs().sum(dim).numpy() * SUM_TOL[dtype]
            got, want = mv.sum(dim), cv.sum(dim)
            assert got.device.same_device(metal()) and got.dtype == want.dtype
            g, w = got.to_dtype(ember.float32).numpy(), want.to_dtype(ember.float32).numpy()
            err = np.abs(g - w) - TOL[dtype][0] * np.abs(w) - scale
            assert np.all(err <= 0), (dtype, dim, float(err.max()))


@pytest.mark.parametrize("dtype", FLOATS)
def test_long_rows_and_mean(dtype, rng):
    data = values(rng, (3, 5000), dtype)
    c, m = pair(data, dtype)
    # Both backends sum more accurately than float; they differ by float rounding of the
    # terms' magnitude, not of the (cancelled) result.
    scale = np.abs(data).sum(axis=1) * {"float32": 1e-7, "float16": 1e-3, "bfloat16": 1e-2}[dtype]
    np.testing.assert_allclose(m.sum(1).numpy(), c.sum(1).numpy(), rtol=0, atol=scale.max())
    np.testing.assert_allclose(
        m.mean(1).numpy(), c.mean(1).numpy(), rtol=0, atol=scale.max() / 5000
    )
    same(c.max(), m.max(), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax(dtype, log, rng):
    c, m = pair(values(rng, (7, 300), dtype, -20, 20), dtype)
    fn = "log_softmax" if log else "softmax"
    for dim in (1, 0):
        same(getattr(c, fn)(dim), getattr(m, fn)(dim), dtype, exact=False)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
def test_matmul_shapes_and_transposes(dtype, rng):
    lo, hi = (0, 4) if dtype in INTS else (-1, 1)

    def operand(shape):
        if dtype in FLOATS:
            return values(rng, shape, dtype, lo, hi)
        return rng.integers(lo, hi, size=shape)

    for mm, k, n in [(1, 1, 1), (17, 33, 9), (64, 64, 64), (5, 0, 3)]:
        ca, ma = pair(operand((mm, k)), dtype)
        cb, mb = pair(operand((n, k)), dtype)
        same(ca @ cb.t(), ma @ mb.t(), dtype, exact=dtype in INTS)
    ca, ma = pair(rng.integers(0, 3, size=(2, 1, 6, 5)), dtype)
    cb, mb = pair(rng.integers(0, 3, size=(3, 5, 4)), dtype)
    same(ca @ cb, ma @ mb, dtype, exact=dtype != "float16" and dtype != "bfloat16")


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("ids_dtype", INTS)
def test_index_select_and_gather(dtype, ids_dtype, rng):
    c, m = pair(values(rng, (6, 5), dtype), dtype)
    ci, mi = pair(np.array([5, 0, 2, 2, 1]), ids_dtype)
    same(c.index_select(0, ci), m.index_select(0, mi), dtype)
    same(c.t().index_select(1, ci), m.t().index_select(1, mi), dtype)
    cg, mg = pair(rng.integers(0, 5, size=(6, 3)), ids_dtype)
    same(c.gather(1, cg), m.gather(1, mg), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_random_streams_match_the_cpu(dtype):
    cpu, gpu = ember.Device.cpu(), ember.Device.metal(0)
    for fn in (ember.rand, ember.randn):
        cpu.manual_seed(1234)
        gpu.manual_seed(1234)
        c = fn(1000, dtype=getattr(ember, dtype), device=cpu)
        m = fn(1000, dtype=getattr(ember, dtype), device=gpu)
        # the kernel computes in float where the CPU uses double: equal to a few ulps
        rtol, atol = max(TOL[dtype], (1e-4, 1e-5))
        np.testing.assert_allclose(m.numpy(), c.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans(dtype, op, rng):
    """Runs of lanes in one group, rows of one lane, strided rows: as the CPU (exact
    for integers; floats add in another order)."""
    lo, hi = (0, 3) if op == "cumprod" else (-4, 4)
    data = rng.integers(lo, hi, size=(6, 700)) if dtype in INTS else values(rng, (6, 700), dtype)
    if op == "cumprod" and dtype in FLOATS:
        data = 1 + data / 256
    c, m = pair(data, dtype)
    for t_c, t_m in zip(views(c), views(m)):
        for dim in (1, 0):
            a, b = getattr(t_c, op)(dim), getattr(t_m, op)(dim)
            assert a.dtype == b.dtype
            if dtype in INTS:
                np.testing.assert_array_equal(b.numpy(), a.numpy())
            else:
                scale = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
                np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=scale, atol=scale)


@pytest.mark.parametrize("dtype", METAL_DTYPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, descending, rng):
    """The merge sort matches the CPU's stable sort exactly, ties and views included."""
    c, m = pair(rng.integers(0, 5, size=(9, 257)), dtype)
    for t_c, t_m in zip(views(c), views(m)):
        for dim in (1, 0):
            a, b = t_c.sort(dim, descending), t_m.sort(dim, descending)
            same(a.values, b.values, dtype)
            same(a.indices, b.indices, "int64")
            same(t_c.topk(3, dim).indices, t_m.topk(3, dim).indices, "int64")
