"""Reductions (sum mean max min argmax argmin) and softmax/log_softmax against numpy."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    NP_DTYPE,
    check_close,
    check_exact,
    edtype,
    make_view,
    pytest_at_cpu_level,
    rand_array,
    require_dtype,
    rounded,
    run_python,
    to_ember,
)
from hypothesis import given, settings
from hypothesis import strategies as st

SHAPE = (3, 4, 5)
# dim arguments for a 3-D tensor, and the numpy axis they mean
DIMS = [None, 0, 1, 2, -1, -3, (0, 2), (2, 0), (-1, 1), (0, 1, 2), (1,)]


def np_axis(dim):
    return dim


def sum_tolerance(name, x, axis):
    """Reductions add many rounding errors: bound them by the sum of magnitudes."""
    mag = np.sum(np.abs(x.astype(np.float64)), axis=axis)
    rel = {"float32": 1e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1e-2}[name]
    return rel * mag


def check_sum_like(got, ref, name, x, axis, keepdim):
    mag = sum_tolerance(name, x, axis)
    if keepdim and axis is not None:
        mag = np.expand_dims(mag, axis)
    elif keepdim:
        mag = np.reshape(mag, (1,) * x.ndim)
    assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
    assert got.dtype == edtype(name)
    g = got.numpy().astype(np.float64)
    # plus the final rounding to the dtype
    slack = (
        np.abs(ref) * {"float32": 1e-7, "float64": 1e-15, "float16": 1e-3, "bfloat16": 8e-3}[name]
    )
    assert np.all(np.abs(g - ref) <= mag + slack + 1e-30), (g, ref)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_sum(device, dtype, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, SHAPE, dtype, device, layout)
        got = t.sum(dim=dim, keepdim=keepdim)
        axis = np_axis(dim)
        if edtype(dtype).is_float:
            ref = np.sum(x.astype(np.float64), axis=axis, keepdims=keepdim)
            check_sum_like(got, ref, dtype, x, axis, keepdim)
        else:
            # integer sums are int64, computed exactly
            ref = np.sum(x.astype(np.int64), axis=axis, keepdims=keepdim)
            check_exact(got, ref, "int64", device)
        fn = ember.sum(t, dim, keepdim=keepdim)
        np.testing.assert_array_equal(fn.numpy(), got.numpy())


@pytest.mark.parametrize("name", INT_DTYPES)
def test_integer_sum_is_int64_without_overflow(device, name):
    top = np.iinfo(NP_DTYPE[name]).max if name != "int64" else 2**40
    x = np.full((1000,), top, dtype=NP_DTYPE[name])
    t = ember.tensor(x, device=device)
    got = t.sum()
    assert got.dtype == ember.int64
    assert got.item() == 1000 * int(top)
    check_exact(t.reshape(10, 100).sum(dim=1), np.full(10, 100 * int(top)), "int64")


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_mean(device, dim, keepdim, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in ("contiguous", "transposed", "stepped"):
            t, x = make_view(rng, SHAPE, name, device, layout, "uniform")
            axis = np_axis(dim)
            ref = np.mean(x.astype(np.float64), axis=axis, keepdims=keepdim)
            got = t.mean(dim=dim, keepdim=keepdim)
            check_close(got, ref, name, rtol={"float32": 1e-5}.get(name))
            np.testing.assert_array_equal(ember.mean(t, dim, keepdim=keepdim).numpy(), got.numpy())


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_amax_amin(device, dtype, op, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, SHAPE, dtype, device, layout)
        ref = getattr(np, op)(x, axis=np_axis(dim), keepdims=keepdim)
        check_exact(getattr(t, op)(dim=dim, keepdim=keepdim), ref, dtype, device)
        check_exact(getattr(ember, op)(t, dim, keepdim=keepdim), ref, dtype)


@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_max_min_with_a_dim_give_values_and_indices(device, dtype, op, dim, keepdim, rng):
    # PyTorch's named pair: `v, i = t.max(dim=1)` unpacks values and indices, not rows
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        for kind in ("normal", "small"):  # "small" makes ties: the first index wins
            t, x = make_view(rng, SHAPE, dtype, device, layout, kind)
            method, function = getattr(t, op)(dim=dim, keepdim=keepdim), getattr(ember, op)
            for r in (method, function(t, dim, keepdim)):
                values, indices = r
                assert type(r).__name__ == op and r.values is values and r.indices is indices
                check_exact(values, getattr(np, op)(x, axis=dim, keepdims=keepdim), dtype, device)
                arg = getattr(np, "arg" + op)(x, axis=dim, keepdims=keepdim)
                check_exact(indices, np.asarray(arg), "int64", device)


def test_max_min_without_a_dim_give_the_value_and_refuse_several_dims(device):
    t = ember.tensor([[1.0, 5.0], [3.0, -2.0]], device=device)
    assert t.max().item() == 5.0 and ember.min(t).item() == -2.0
    assert t.max(np.int64(1)).values.tolist() == [5.0, 3.0]  # numpy ints are ints
    for bad in ((0, 1), 1.0, "a", True):
        with pytest.raises(ember.InvalidTypeError) as info:
            t.max(dim=bad)
        assert "amax(dim=(...))" in str(info.value) and info.value.op == "max"
    assert t.amax(dim=(0, 1)).item() == 5.0


def test_max_min_with_nan(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
        t = ember.tensor(x, dtype=edtype(name), device=device)
        check_exact(t.max(dim=1).values, np.array([np.nan, 6.0]), name)
        check_exact(t.min(dim=1).values, np.array([np.nan, 4.0]), name)
        assert t.max(dim=1).indices.tolist() == [1, 2]  # the NaN's index, as numpy's argmax
        assert np.isnan(t.max().item())


@pytest.mark.parametrize("n", [63, 64, 65, 79, 100, 128, 200, 2048])
def test_amax_amin_of_dense_rows_find_nan_anywhere(device, n, rng):
    """Dense float32 rows past one vector block: a NaN at the start, in the middle, in the
    16-wide steps after the 64-wide blocks and in the last partial 16 wins; rows without
    one give numpy's max and min, infinities included."""
    rows = []
    for at in sorted({0, n // 2, min((n // 64) * 64, n - 1), n - 1, max(n - 17, 0)}):
        r = rng.standard_normal(n).astype(np.float32)
        r[at] = np.nan
        rows.append(r)
    clean = rng.standard_normal((3, n)).astype(np.float32)
    clean[1, n // 3] = np.inf
    clean[2, n - 1] = -np.inf
    clean[2, 0] = 1e30
    x = np.concatenate([np.stack(rows), clean])
    t = ember.tensor(x, device=device)
    check_exact(t.amax(1), x.max(axis=1), "float32", device)
    check_exact(t.amin(1), x.min(axis=1), "float32", device)


def test_max_min_of_infinities(device):
    x = np.array([-np.inf, -np.inf, np.inf], dtype=np.float32)
    t = ember.tensor(x, device=device)
    assert t.max().item() == np.inf
    assert t.min().item() == -np.inf
    assert ember.tensor([-np.inf, -np.inf], device=device).max().item() == -np.inf


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, -2])
def test_argmax_argmin(device, dtype, op, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        # "small" values make ties: numpy returns the first index
        for kind in ("normal", "small"):
            t, x = make_view(rng, SHAPE, dtype, device, layout, kind)
            ref = getattr(np, op)(x, axis=dim, keepdims=keepdim)
            got = getattr(t, op)(dim=dim, keepdim=keepdim)
            check_exact(got, np.asarray(ref), "int64", device)
            check_exact(getattr(ember, op)(t, dim, keepdim=keepdim), np.asarray(ref), "int64")


def test_argmax_ties_give_first_index(device):
    for name in ("float32", "int64", "uint8"):
        t = ember.tensor(np.array([[1, 3, 3], [2, 2, 2]], dtype=NP_DTYPE[name]), device=device)
        check_exact(t.argmax(dim=1), np.array([1, 0]), "int64")
        check_exact(t.argmin(dim=1), np.array([0, 0]), "int64")
        check_exact(t.argmax(), np.array(1), "int64")
        check_exact(t.argmin(), np.array(0), "int64")


def test_argmax_with_nan_follows_numpy(device):
    x = np.array([1.0, np.nan, 5.0, np.nan], dtype=np.float32)
    t = ember.tensor(x, device=device)
    assert t.argmax().item() == np.argmax(x) == 1
    assert t.argmin().item() == np.argmin(x) == 1


def test_reductions_return_scalars(device):
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    for r, value in [(t.sum(), 10.0), (t.mean(), 2.5), (t.max(), 4.0), (t.min(), 1.0)]:
        assert r.shape == ()
        assert r.item() == value
        assert isinstance(r.item(), float)
    assert t.argmax().shape == () and t.argmax().item() == 3
    assert isinstance(t.argmax().item(), int)


def test_reduce_zero_size(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.zeros(0, 3, dtype=edtype(dtype), device=device)
    out = "int64" if not edtype(dtype).is_float else dtype
    check_exact(t.sum(dim=0), np.zeros(3), out)
    check_exact(t.sum(), np.array(0), out)
    check_exact(t.sum(dim=1), np.zeros(0), out)
    check_exact(t.amax(dim=1), np.zeros(0), dtype)
    check_exact(t.max(dim=1).indices, np.zeros(0), "int64")
    check_exact(t.argmax(dim=1), np.zeros(0), "int64")
    check_exact(t.sum(dim=1, keepdim=True), np.zeros((0, 1)), out)


@pytest.mark.parametrize("name", ["bool", "int32", "int64", "uint8"])
def test_mean_of_bool_and_integers_raises_naming_the_fix(device, name):
    t = ember.ones(3, dtype=edtype(name), device=device)
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        t.mean()
    assert info.value.op == "mean" and "t.to_dtype(ember.float32).mean()" in str(info.value)


def test_bool_sum_counts_and_max_is_any(device):
    x = np.array([[True, False, True], [False, False, False]])
    t = ember.tensor(x, device=device)
    check_exact(t.sum(), np.array(2), "int64")
    check_exact(t.sum(dim=1), np.array([2, 0]), "int64")
    check_exact(t.amax(dim=1), np.array([True, False]), "bool")
    check_exact(t.amin(dim=0), np.array([False, False, False]), "bool")
    check_exact(t.argmax(dim=1), np.array([0, 0]), "int64")
    check_exact(t.max(dim=0).values, x.max(axis=0), "bool")


def test_reduce_0d(device):
    t = ember.tensor(5.0, device=device)
    assert t.sum().item() == 5.0
    assert t.max().item() == 5.0
    assert t.argmax().item() == 0


def test_sum_large(device, rng):
    # many elements: the parallel / blocked path, and float32 accuracy over 1e6 adds
    x = rng.uniform(0, 1, size=(1000, 1000)).astype(np.float32)
    t = ember.tensor(x, device=device)
    ref = x.astype(np.float64)
    np.testing.assert_allclose(t.sum().item(), ref.sum(), rtol=1e-5)
    np.testing.assert_allclose(t.sum(dim=0).numpy(), ref.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(t.sum(dim=1).numpy(), ref.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(t.t().sum(dim=1).numpy(), ref.sum(axis=0), rtol=1e-5)
    assert t.max().item() == x.max() and t.argmin().item() == x.argmin()


@pytest.mark.parametrize("n", [65535, 65536, 65537, 4 * 1024 * 40 + 1023, 1_000_003])
def test_float32_sum_of_long_runs_every_element_counted(device, n):
    # Long dense runs are read in several streams with a tail: every element counts once.
    rng = np.random.default_rng(n)
    x = rng.uniform(-1, 1, size=n).astype(np.float32)
    x[-1] = 1e4  # a lost or doubled tail element would show
    x[0] = -2e4  # as would the head
    ref = x.astype(np.float64)
    bound = 3e-6 * np.abs(ref).sum()  # a 37-term float sum per block of 1024, in double after
    assert abs(ember.tensor(x, device=device).sum().item() - ref.sum()) <= bound
    y = x.reshape(1, n)  # and as one row of a matrix, reduced along it
    assert abs(ember.tensor(y, device=device).sum(dim=1).numpy()[0] - ref.sum()) <= bound


def test_half_sum_accumulates_in_higher_precision(device):
    # 4096 ones: a float16 running sum would stop at 2048
    for name in ("float16", "bfloat16"):
        t = ember.ones(4096, dtype=edtype(name), device=device)
        assert t.sum().item() == 4096.0
        assert t.mean().item() == 1.0


@settings(max_examples=40)
@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=4),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
)
def test_sum_max_random_shapes(device, shape, data, seed):
    nd = len(shape)
    dims = data.draw(st.lists(st.integers(-nd, nd - 1), unique_by=lambda d: d % nd, max_size=nd))
    keepdim = data.draw(st.booleans())
    layout = data.draw(st.sampled_from(LAYOUTS))
    rng = np.random.default_rng(seed)
    t, x = make_view(rng, shape, "int64", device, layout)
    dim = tuple(dims) if dims else None
    check_exact(t.sum(dim=dim, keepdim=keepdim), np.sum(x, axis=dim, keepdims=keepdim), "int64")
    reduced = [shape[d] for d in (dims or range(nd))]
    kept = [s for i, s in enumerate(shape) if i not in [d % nd for d in (dims or range(nd))]]
    if 0 in reduced and 0 not in kept:
        return  # no identity for max
    if 0 not in reduced:
        check_exact(
            t.amax(dim=dim, keepdim=keepdim), np.max(x, axis=dim, keepdims=keepdim), "int64"
        )


# ---- softmax


def np_softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_softmax_log_softmax(device, dim, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        for layout in LAYOUTS:
            t, x = make_view(rng, SHAPE, name, device, layout)
            check_close(t.softmax(dim), np_softmax(x, dim), name)
            check_close(ember.softmax(t, dim), np_softmax(x, dim), name)
            atol = 2e-2 if name in ("float16", "bfloat16") else None
            check_close(t.log_softmax(dim), np_log_softmax(x, dim), name, atol=atol)
            check_close(ember.log_softmax(t, dim=dim), np_log_softmax(x, dim), name, atol=atol)


def test_softmax_is_stable_for_large_values(device):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1000.0, -1000.0]], dtype=np.float32)
    t = ember.tensor(x, device=device)
    check_close(t.softmax(-1), np_softmax(x, -1), "float32")
    check_close(t.log_softmax(-1), np_log_softmax(x, -1), "float32")
    assert np.isfinite(t.log_softmax(1).numpy()).all()


def test_softmax_rows_sum_to_one(device, rng):
    x = rounded(rng.standard_normal((64, 1000)) * 5, "float32")
    s = ember.tensor(x, device=device).softmax(1).numpy().astype(np.float64)
    np.testing.assert_allclose(s.sum(axis=1), np.ones(64), rtol=1e-5)
    assert (s >= 0).all()


@pytest.mark.parametrize("n", [4, 8, 16, 64, 128, 136, 256, 512, 1024, 1032])
@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_softmax_of_many_short_rows(device, n, name, rng):
    """Rows of the lengths a GPU gives a warp each (whole vectors, up to 1024 values) and
    just past them, with a NaN row, a row of -inf and one -inf value."""
    if not require_dtype(device, name):
        return
    x = rounded(rng.standard_normal((300, n)) * 4, name)
    x[5, 1] = np.nan
    x[6, :] = -np.inf
    x[7, 0] = -np.inf
    t = to_ember(x, name, device)
    with np.errstate(invalid="ignore"):  # the row of -inf: NaN, as PyTorch's
        want = np_softmax(x.astype(np.float64), -1)
        want_log = np_log_softmax(x.astype(np.float64), -1)
    tol = 1e-5 if name == "float32" else 1e-2
    for got, ref in ((t.softmax(-1), want), (t.log_softmax(1), want_log)):
        g = got.to_dtype(ember.float32).numpy().astype(np.float64)
        assert got.dtype == t.dtype
        np.testing.assert_array_equal(np.isnan(g), np.isnan(ref))
        ok = ~np.isnan(ref)
        np.testing.assert_allclose(g[ok], ref[ok], rtol=tol, atol=tol)


def test_softmax_zero_size_and_0d(device):
    assert ember.zeros(0, 4, device=device).softmax(1).shape == (0, 4)
    assert ember.zeros(3, 0, device=device).softmax(1).shape == (3, 0)
    assert ember.tensor(2.0, device=device).softmax(0).item() == 1.0


def test_softmax_keeps_dtype(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        t = to_ember(rand_array(np.random.default_rng(0), (2, 3), name), name, device)
        assert t.softmax(1).dtype == edtype(name)
        assert t.log_softmax(0).dtype == edtype(name)


@pytest.mark.parametrize("n", [15, 16, 17, 64, 1665, 100_000])
def test_integer_sums_count_every_element(device, n):
    # g++ 12 -O3 once vectorised the uint8 sum loop so that it summed a quarter of it.
    for name in ("uint8", "uint32", "int32", "int64"):
        a = np.full(n, 200, dtype=name)
        got = ember.tensor(a, device=device).sum()
        assert got.dtype == ember.int64
        assert got.item() == 200 * n
        col = ember.tensor(a.reshape(n, 1)[::-1], device=device).sum(0)
        assert col.item() == 200 * n


# Reductions whose kept dims end in a dense run of outputs (a first or middle dim, or
# several reduced dims before a kept last one): the reduced elements are walked in memory
# order, blocks of outputs advancing together (and on the CPU the reduced steps split in
# parts when the blocks are few). Shapes past one block (2048 outputs), with several outer
# positions, a permuted input, ties and NaN for the arg-reductions.
COLUMN_CASES = [((700, 600), 0), ((3, 700, 5), 1), ((4, 6, 600), (0, 1)), ((2, 3, 4, 5), (1, 2)),
                ((40, 36000), 0), ((5, 300, 7), (0, 2))]


def tied_array(rng, shape, name: str) -> np.ndarray:
    """Random values of `name` with many ties (floats in quarters) for max/min and arg."""
    x = rand_array(rng, shape, name)
    return x if name == "int64" else rounded(np.round(x * 4) / 4, name)


def check_sum_of_quarters(t, x, dim, name):
    """t.sum(dim) against numpy: exact in float32 for quarters, then rounded once."""
    got = t.sum(dim).to_dtype(ember.float32).numpy()
    want = x.astype(np.float64).sum(axis=dim)
    if name == "bfloat16":
        want = rounded(want.astype(np.float32), name)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-3)


@pytest.mark.parametrize("shape,dim", COLUMN_CASES)
@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16"])
def test_reductions_over_outer_dims(device, shape, dim, name, rng):
    if not require_dtype(device, name):
        return
    x = tied_array(rng, shape, name)
    t = to_ember(x, name, device)
    axis = dim
    check_sum_of_quarters(t, x, dim, name)
    check_exact(t.amax(dim), x.max(axis=axis), name, device)
    if isinstance(dim, int):
        np.testing.assert_array_equal(t.argmax(dim).numpy(), x.argmax(axis=dim))
        np.testing.assert_array_equal(t.argmin(dim).numpy(), x.argmin(axis=dim))
        # a permuted view: the kept run is not where the memory is dense
        p = to_ember(np.ascontiguousarray(np.swapaxes(x, 0, -1)), name, device).transpose(0, -1)
        np.testing.assert_array_equal(p.argmax(dim).numpy(), x.argmax(axis=dim))
    if name == "float32":  # the moments merge across the parts of the reduced steps
        np.testing.assert_allclose(t.mean(dim).numpy(), x.astype(np.float64).mean(axis=axis),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(t.var(dim).numpy(), x.astype(np.float64).var(axis=axis, ddof=1),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,dim", [((1000, 300), 0), ((7, 333, 64), 1), ((90, 5, 2100), (0, 1)),
                                       ((3, 41, 4, 70), (1, 3))])  # fmt: skip
def test_float32_column_sums_and_norms_are_accurate(device, shape, dim, rng):
    """Sums, means and 2-norms down columns (a first, a middle and several dims) of values
    of mixed sign and size: within a few float32 ulps of the float64 result, scaled by
    the sum of magnitudes (no cancellation is hidden), past one block of rows and of
    columns and with partial ones."""
    x = (rng.standard_normal(shape) * np.exp(rng.uniform(-4, 4, shape))).astype(np.float32)
    t = ember.tensor(x, device=device)
    x64 = x.astype(np.float64)
    scale = np.abs(x64).sum(axis=dim)
    assert np.all(np.abs(t.sum(dim).numpy() - x64.sum(axis=dim)) <= 4e-7 * scale + 1e-30)
    count = x.size // scale.size
    assert np.all(np.abs(t.mean(dim).numpy() - x64.mean(axis=dim)) <= 4e-7 * scale / count + 1e-30)
    want = np.sqrt((x64 * x64).sum(axis=dim))
    np.testing.assert_allclose(t.norm(dim=dim).numpy(), want, rtol=4e-7)


@pytest.mark.parametrize("shape,dim", [((70, 130), 0), ((3, 45, 200), 1), ((40, 3, 64), (0, 1))])
def test_amax_amin_down_columns_with_nan_and_infinities(device, shape, dim, rng):
    """amax/amin over a first, a middle and several dims (columns: whole 64-output chunks
    and a remainder, row blocks and a partial one): a NaN anywhere down a column (its
    first, a middle or its last row) makes it NaN, infinities win, as numpy."""
    x = rng.standard_normal(shape).astype(np.float32)
    flat = np.moveaxis(x, dim if isinstance(dim, int) else dim[0], 0)
    flat[0, ..., 1] = np.nan
    flat[-1, ..., 2] = np.nan
    flat[flat.shape[0] // 2, ..., 3] = np.nan
    flat[5, ..., 4] = np.inf
    flat[7, ..., 5] = -np.inf
    flat[..., 6] = -np.inf
    t = ember.tensor(x, device=device)
    for op in ("amax", "amin"):
        np.testing.assert_array_equal(getattr(t, op)(dim).numpy(), getattr(np, op)(x, axis=dim))


def test_cpu_column_sums_do_not_depend_on_the_thread_count():
    """The same bits from one thread and from two: column sums split over the reduced dim
    into parts fixed by the shape, summed in blocks fixed by the shape."""
    code = """
        import ember, numpy as np, hashlib
        x = np.random.default_rng(3).standard_normal((3000, 5, 40)).astype(np.float32)
        t = ember.tensor(x)
        outs = [t.sum(0), t.sum((0, 1)), t.norm(dim=0), t.sum(1), t[:, :2].sum(0)]
        print(hashlib.sha256(b"".join(o.numpy().tobytes() for o in outs)).hexdigest())
    """
    runs = [run_python(code, env={"EMBER_NUM_THREADS": n}) for n in ("1", "2")]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert runs[0].stdout == runs[1].stdout


# Few outputs of many elements each (one long row, a few long rows or columns): a GPU
# splits each output's elements over several threadgroups or blocks, then merges their
# partials. Ties everywhere; a NaN in one output's last chunk for the float max/min.
SPLIT_CASES = [((1 << 21,), 0), ((3, 300_001), 1), ((40_000, 5), 0), ((7, 30_000, 3), 1)]


@pytest.mark.parametrize("shape,dim", SPLIT_CASES)
@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16"])
def test_reductions_of_few_long_outputs(device, shape, dim, name, rng):
    if not require_dtype(device, name):
        return
    x = tied_array(rng, shape, name)
    t = to_ember(x, name, device)
    check_sum_of_quarters(t, x, dim, name)
    check_exact(t.amax(dim), x.max(axis=dim), name, device)
    check_exact(t.amin(dim), x.min(axis=dim), name, device)
    np.testing.assert_array_equal(t.argmax(dim).numpy(), x.argmax(axis=dim))
    np.testing.assert_array_equal(t.argmin(dim).numpy(), x.argmin(axis=dim))
    if name == "float32":
        y = x.copy()
        at = [0] * y.ndim
        at[dim] = shape[dim] - 3
        y[tuple(at)] = np.nan
        u = to_ember(y, name, device)
        check_exact(u.amax(dim), y.max(axis=dim), name, device)
        np.testing.assert_array_equal(u.argmin(dim).numpy(), y.argmin(axis=dim))


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("op", ["sum", "amax", "argmin"])
def test_metal_splits_a_long_reduction_over_threadgroups(op):
    """One output of 2^22 elements (and 5 columns of 40000) reduce on many threadgroups,
    not on one: the dispatches' threadgroups, as the device's queue_stats counts them."""
    d = ember.device("metal")
    for shape, dim in (((1 << 22,), 0), ((40_000, 5), 0)):
        t = ember.ones(shape, device=d)
        before = d.queue_stats()
        getattr(t, op)(dim)
        after = d.queue_stats()
        assert after["dispatches"] - before["dispatches"] == 2  # the partials, then their merge
        assert after["threadgroups"] - before["threadgroups"] > 8


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("op", ["var", "std"])
def test_metal_var_and_std_take_one_pass(op, rng):
    """var and std read their input once (one dispatch; a long row's split two: the
    partials, then their merge), rows, columns and a long row, float32 and half types."""
    d = ember.device("metal")
    for shape, dim, dispatches in (((64, 300), 1, 1), ((300, 64), 0, 1), ((1 << 20,), 0, 2)):
        x = (100 + rng.standard_normal(shape)).astype(np.float32)
        for name in ("float32", "float16", "bfloat16"):
            t = ember.tensor(x, device=d).to_dtype(getattr(ember, name))
            exact = t.to_dtype(ember.float32).numpy().astype(np.float64)
            before = d.queue_stats()
            got = getattr(t, op)(dim)
            after = d.queue_stats()
            assert after["dispatches"] - before["dispatches"] == dispatches, (shape, name)
            assert got.dtype == t.dtype
            want = getattr(np, op)(exact, axis=dim, ddof=1)
            rtol = {"float32": 2e-6, "float16": 1e-3, "bfloat16": 8e-3}[name]
            np.testing.assert_allclose(got.to_dtype(ember.float32).numpy(), want, rtol=rtol)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_prod_takes_one_pass(rng):
    """prod of float32 and int64 (wrapping) is one pass (a long row's split two), not
    log2(n) passes of pairwise products."""
    d = ember.device("metal")
    for shape, dim, passes in (((64, 300), 1, 1), ((300, 64), 0, 1), ((1 << 18,), 0, 2)):
        x = (1 + 0.001 * rng.standard_normal(shape)).astype(np.float32)
        i = rng.integers(-3, 4, shape)
        for a in (x, i):
            t = ember.tensor(a, device=d)
            before = d.queue_stats()
            got = t.prod(dim)
            after = d.queue_stats()
            assert after["dispatches"] - before["dispatches"] == passes, (shape, a.dtype)
            with np.errstate(over="ignore"):
                want = np.prod(a.astype(np.float64) if a is x else a, axis=dim)
            if a is x:
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-4)  # float32 products
            else:
                np.testing.assert_array_equal(got.numpy(), want)  # int64, wrapping


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_logsumexp_takes_one_pass(rng):
    """logsumexp of float32 is one pass (a running max and a rescaled sum; a long row's
    split two), not max, subtract, exp, sum and log; NaN, inf and -inf rows as PyTorch's."""
    d = ember.device("metal")
    for shape, dim, passes in (((64, 300), 1, 1), ((300, 64), 0, 1), ((1 << 18,), 0, 2)):
        x = (rng.standard_normal(shape) * 10).astype(np.float32)
        t = ember.tensor(x, device=d)
        before = d.queue_stats()
        got = t.logsumexp(dim)
        after = d.queue_stats()
        assert after["dispatches"] - before["dispatches"] == passes, shape
        x64 = x.astype(np.float64)
        m = x64.max(axis=dim, keepdims=True)
        want = (m + np.log(np.exp(x64 - m).sum(axis=dim, keepdims=True))).squeeze(dim)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    rows = np.array([[1, np.nan, 2], [-np.inf] * 3, [1, np.inf, 2], [-np.inf, 0, -np.inf]], np.float32)
    got = ember.tensor(rows, device=d).logsumexp(1).numpy()
    np.testing.assert_array_equal(got, np.array([np.nan, -np.inf, np.inf, 0.0], np.float32))


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_norm_squares_and_sums_in_one_pass(rng):
    """norm(p=2) of float32 is one pass of squares summed (a long row's split: the
    partials and their merge), then the root: no squared copy of the input. (Half types
    are widened first and rounded after the root, once.)"""
    d = ember.device("metal")
    for shape, dim, passes in (((64, 300), 1, 1), ((300, 64), 0, 1), ((1 << 20,), 0, 2)):
        x = rng.standard_normal(shape).astype(np.float32)
        for name in ("float32", "float16", "bfloat16"):
            t = ember.tensor(x, device=d).to_dtype(getattr(ember, name))
            exact = t.to_dtype(ember.float32).numpy().astype(np.float64)
            before = d.queue_stats()
            got = t.norm(dim=dim)
            after = d.queue_stats()
            if name == "float32":
                assert after["dispatches"] - before["dispatches"] == passes + 1, shape
            assert got.dtype == t.dtype
            rtol = {"float32": 1e-6, "float16": 1e-3, "bfloat16": 8e-3}[name]
            want = np.linalg.norm(exact, axis=dim)
            np.testing.assert_allclose(got.to_dtype(ember.float32).numpy(), want, rtol=rtol)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("log", [False, True])
def test_metal_softmax_over_an_outer_dim_takes_one_dispatch(log, rng):
    """softmax over a dim that is not the last of a contiguous tensor (dim 0 of a
    matrix, a middle dim, few or many columns) is one kernel, with NaN and -inf columns."""
    d = ember.device("metal")
    fn = ember.log_softmax if log else ember.softmax
    for shape, dim in (((300, 64), 0), ((5000, 3), 0), ((3, 1000, 40), 1), ((2, 3, 4, 5), 2)):
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
        flat = np.moveaxis(x, dim, -1).reshape(-1, shape[dim])  # a view: the columns
        flat[0, 1] = np.nan
        flat[1, :] = -np.inf
        flat[2, 0] = -np.inf
        for name in ("float32", "bfloat16"):
            t = to_ember(x, name, d)
            before = d.queue_stats()
            got = fn(t, dim)
            after = d.queue_stats()
            assert after["dispatches"] - before["dispatches"] == 1, (shape, name)
            assert got.dtype == t.dtype
            exact = t.to_dtype(ember.float32).numpy().astype(np.float64)
            with np.errstate(invalid="ignore"):
                want = (np_log_softmax if log else np_softmax)(exact, dim)
            g = got.to_dtype(ember.float32).numpy().astype(np.float64)
            np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
            ok = ~np.isnan(want)
            tol = 1e-5 if name == "float32" else 1e-2
            np.testing.assert_allclose(g[ok], want[ok], rtol=tol, atol=tol)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33, 100, 255, 256, 257, 512,
                               513])
def test_reductions_of_many_short_rows(device, n, rng):
    """Rows of every short length (a GPU gives each a group of lanes, not a block; the CPU
    reduces rows of up to 256 inline, masked loads for the last part), a row per output
    of many, ties, NaN, -inf, sums of squares (norm) and the int64 sums."""
    x = np.round(rng.standard_normal((301, n)) * 2).astype(np.float32)  # ties
    x[7, n // 2] = np.nan
    x[11, :] = -np.inf
    x[13, -1] = np.nan
    t = ember.tensor(x, device=device)
    sums = t.sum(1).numpy()
    np.testing.assert_allclose(sums, x.astype(np.float64).sum(axis=1), rtol=1e-6, atol=1e-6)
    for op in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(t, op)(1).numpy(), getattr(x, op)(axis=1), op)
    np.testing.assert_array_equal(t.amax(1).numpy(), x.max(axis=1))
    values, indices = t.min(-1)
    np.testing.assert_array_equal(values.numpy(), x.min(axis=1))
    np.testing.assert_array_equal(indices.numpy(), x.argmin(axis=1))
    i = rng.integers(-(2**40), 2**40, size=(301, n))
    np.testing.assert_array_equal(ember.tensor(i, device=device).sum(1).numpy(), i.sum(axis=1))
    m = t.mean(1).numpy()
    np.testing.assert_allclose(m[~np.isnan(m)], x.mean(axis=1)[~np.isnan(m)], rtol=1e-6, atol=1e-6)
    y = rng.standard_normal((301, n)).astype(np.float32)
    want = np.sqrt((y.astype(np.float64) ** 2).sum(axis=1))
    np.testing.assert_allclose(ember.tensor(y, device=device).norm(dim=1).numpy(), want, rtol=2e-6)


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_reductions_at_each_cpu_level(capability):
    """The AVX2 and baseline paths of the row sums and max/min (short rows in registers,
    NaN anywhere) give the values the tests above check (a CPU setting, not per device)."""
    pytest_at_cpu_level(capability, ["test_reduce.py"],
                        "(many_short_rows or dense_rows_find_nan or amax_amin or test_sum or norm) and cpu")


def test_arg_reductions_over_the_first_dim_with_nan(device):
    x = np.zeros((9, 600), np.float32)
    x[3, 10] = np.nan
    x[5, 10] = np.nan
    x[7, 11] = 2.0
    x[2, 11] = 2.0
    x[4, 599] = -1.0
    t = ember.tensor(x, device=device)
    np.testing.assert_array_equal(t.argmax(0).numpy(), x.argmax(axis=0))
    np.testing.assert_array_equal(t.argmin(0).numpy(), x.argmin(axis=0))
    got = t.amax(0).numpy()
    assert np.isnan(got[10]) and got[11] == 2.0
    np.testing.assert_array_equal(np.isnan(t.sum(0).numpy()), np.isnan(x.sum(axis=0)))


def test_arg_reductions_of_long_rows_find_the_first_extreme(device):
    # rows past the vectorised scan's blocks of 64: ties far apart, NaN, signed zeros
    x = np.zeros((5, 200), np.float32)
    x[0, [70, 130]] = 3.0
    x[1, [150, 190]] = np.nan
    x[1, 5] = 9.0
    x[2, :] = -0.0
    x[2, 199] = 0.0
    x[3, 64] = -2.0
    x[3, 63] = -2.0
    x[4] = np.arange(200, dtype=np.float32)[::-1]
    t = ember.tensor(x, device=device)
    np.testing.assert_array_equal(t.argmax(1).numpy(), x.argmax(axis=1))
    np.testing.assert_array_equal(t.argmin(1).numpy(), x.argmin(axis=1))
    values, indices = t.max(1)
    np.testing.assert_array_equal(indices.numpy(), x.argmax(axis=1))
    np.testing.assert_array_equal(values.numpy(), x.max(axis=1))


@pytest.mark.parametrize("name", ["bfloat16", "float16"])
@pytest.mark.parametrize("log", [False, True])
def test_half_softmax_and_sum_of_long_rows(device, name, log, rng):
    # rows longer than one conversion chunk (512), dense and strided: computed in float32
    # from the half values, rounded once
    x = rounded(rng.standard_normal((3, 1300)).astype(np.float32) * 4, name)
    t = to_ember(x, name, device)
    for view, xv in ((t, x), (t.T.contiguous().T, x)):
        got = (view.log_softmax(-1) if log else view.softmax(-1)).to_dtype(ember.float32).numpy()
        shifted = xv.astype(np.float64) - xv.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        want = shifted - lse if log else np.exp(shifted - lse)
        tol = 1e-2 if name == "bfloat16" else 2e-3
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (np.abs(want).max() if log else 1e-3))
    s = t.sum(1).to_dtype(ember.float32).numpy()
    want = rounded(x.astype(np.float64).sum(axis=1).astype(np.float32), name)
    np.testing.assert_allclose(s, want, rtol=2.0 ** (-7 if name == "bfloat16" else -10))  # one unit


@pytest.mark.parametrize("log", [False, True])
def test_softmax_over_an_outer_dim(device, log, rng):
    # composed in memory order (column max, exp, column sum): values as the row kernels
    # give them, the result laid out like the input (contiguous here, as PyTorch's),
    # a column of -inf and one with NaN giving NaN, an inf giving NaN where inf - inf is
    x = rng.standard_normal((5, 40, 7)).astype(np.float32) * 3
    x[:, 3, 2] = -np.inf
    x[1, 4, 1] = np.nan
    t = ember.tensor(x, device=device)
    for dim in (0, 1):
        got = (t.log_softmax(dim) if log else t.softmax(dim))
        assert got.is_contiguous()
        with np.errstate(invalid="ignore"):
            shifted = x.astype(np.float64) - x.max(axis=dim, keepdims=True)
            lse = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
            want = shifted - lse if log else np.exp(shifted - lse)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    # past one block of rows (1024) and of columns (64), a part-block of each, -inf columns
    y = rng.standard_normal((2, 1100, 150)).astype(np.float32) * 3
    y[1, :, 70] = -np.inf
    y[0, 5, 149] = np.inf
    u = ember.tensor(y, device=device)
    for dim in (0, 1):
        got = (u.log_softmax(dim) if log else u.softmax(dim)).numpy()
        with np.errstate(invalid="ignore"):
            shifted = y.astype(np.float64) - y.max(axis=dim, keepdims=True)
            lse = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
            want = shifted - lse if log else np.exp(shifted - lse)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=1e-5, atol=1e-6)
    torch = pytest.importorskip("torch")
    ref = torch.tensor(x).log_softmax(0) if log else torch.tensor(x).softmax(0)
    np.testing.assert_allclose((t.log_softmax(0) if log else t.softmax(0)).numpy(), ref.numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
