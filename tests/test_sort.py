"""sort, argsort and topk against numpy's stable sort: every dtype, dim and memory
layout, both directions, ties (a stable sort keeps their order, PyTorch's results with
stable=True), NaN above every number, -0.0 tied with 0.0, long rows, zero-size and 0-d
tensors, the named pairs, and errors (k out of range names topk)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    FLOAT_DTYPES,
    LAYOUTS,
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
DIMS = [-1, 0, 1, -2]


def ref_argsort(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """numpy's stable argsort along axis (NaN last); descending keeps ties in their order
    and puts NaN first, as PyTorch's stable sort does."""
    xm = np.moveaxis(x, axis, -1)
    rows = xm.reshape(-1, xm.shape[-1])
    out = np.empty(rows.shape, dtype=np.int64)
    for r, row in enumerate(rows):
        if descending:  # ranks tie -0.0 with 0.0 and all NaNs (the largest rank)
            _, rank = np.unique(row, return_inverse=True)
            out[r] = np.argsort(-rank.reshape(-1), kind="stable")
        else:
            out[r] = np.argsort(row, kind="stable")
    return np.moveaxis(out.reshape(xm.shape), -1, axis)


def with_specials(x: np.ndarray, name: str, rng, kind: str) -> np.ndarray:
    """x with NaN, +-inf, -0.0 and 0.0 in random places; integers drawn from their whole
    range (kind "normal") with their type's extremes, 0 and 1 (the CPU gives integer
    values back from their sort keys). Integers of kind "small" stay a narrow range."""
    if not is_float(name):
        if x.dtype == np.bool_ or kind != "normal":
            return x
        y = x.copy()
        info = np.iinfo(y.dtype)
        flat = y.reshape(-1)
        picks = rng.choice(flat.size, size=min(flat.size, 6), replace=False)
        for p, v in zip(picks, [info.min, info.max, 0, 1, info.max, info.min]):
            flat[p] = v
        return y
    y = x.astype(np.float64).copy()
    flat = y.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 8), replace=False)
    for p, v in zip(picks, [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan, -0.0, 1.0]):
        flat[p] = v
    return rounded(y, name)


def check_sorted(result, x, axis, descending, name, device):
    idx = ref_argsort(x, axis, descending)
    values, indices = result
    check_exact(indices, idx, "int64", device)
    check_exact(values, np.take_along_axis(x, idx, axis), name, device)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("kind", ["normal", "small"])
def test_sort_every_dim_and_layout(device, dtype, dim, descending, kind, rng):
    """kind "small" draws from 4 values: many ties, whose order the stable sort keeps."""
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, SHAPE, dtype, device, layout, kind)
        if layout == "contiguous":
            x = with_specials(x, dtype, rng, kind)
            t = to_ember(x, dtype, device)
        r = t.sort(dim, descending=descending)
        check_sorted(r, x, dim, descending, dtype, device)
        check_exact(t.argsort(dim, descending), ref_argsort(x, dim, descending), "int64", device)
        check_exact(ember.argsort(t, dim=dim, descending=descending), r.indices.numpy(), "int64")


@pytest.mark.parametrize("n", [2, 33, 64, 65, 200, 1000, 5000, 20_000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_long_rows(device, dtype, n, descending, rng):
    """Rows of every length class (sorts change algorithm with length: the CPU sorts rows
    of up to 255 with x86-simd-sort's AVX-512 quicksort where it can, else ranks rows of
    up to 64 by counting and sorts up to 255 by comparisons, and longer ones by radix
    passes, int64 and float64 too, as (key, position) pairs; Metal sorts few rows of 2^14 or more by radix passes over the whole GPU, CUDA
    few rows of 2^12 a row or more, here 20_000, by a device-wide radix sort each)."""
    if not require_dtype(device, dtype):
        return
    for kind in ("normal", "small"):
        x = with_specials(rand_array(rng, (3, n), dtype, kind), dtype, rng, kind)
        r = to_ember(x, dtype, device).sort(descending=descending)
        check_sorted(r, x, -1, descending, dtype, device)


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_nan_sorts_as_the_largest(device, name):
    if not require_dtype(device, name):
        return
    x = rounded(np.array([np.nan, 1.0, -np.inf, np.nan, -0.0, np.inf, 0.0, -2.0]), name)
    t = to_ember(x, name, device)
    asc = t.sort()
    check_exact(asc.values, np.sort(x, kind="stable"), name, device)
    check_exact(asc.indices, [2, 7, 4, 6, 1, 5, 0, 3], "int64", device)
    desc = t.sort(descending=True)
    check_exact(desc.indices, [0, 3, 5, 1, 4, 6, 7, 2], "int64", device)
    assert np.signbit(asc.values.numpy()[2]) and not np.signbit(asc.values.numpy()[3])


def test_named_pairs(device):
    t = ember.tensor([[3.0, 1.0, 2.0]], device=device)
    r = t.sort()
    assert isinstance(r, tuple) and type(r).__name__ == "sort"
    values, indices = r
    assert values is r.values and indices is r.indices
    np.testing.assert_array_equal(r.values.numpy(), [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 2, 0]])
    assert r.indices.dtype == ember.int64
    k = t.topk(2)
    assert isinstance(k, tuple) and type(k).__name__ == "topk"
    np.testing.assert_array_equal(k.values.numpy(), [[3.0, 2.0]])
    # the classes of ember.return_types, as torch.return_types
    assert type(r) is ember.return_types.sort and type(k) is ember.return_types.topk
    assert type(t.max(dim=1)) is ember.return_types.max
    assert type(ember.min(t, 1)) is ember.return_types.min
    assert repr(r).startswith("sort(values=tensor(")
    np.testing.assert_array_equal(k.indices.numpy(), [[0, 2]])
    f = ember.sort(t, -1, True, stable=True)
    np.testing.assert_array_equal(f.values.numpy(), [[3.0, 2.0, 1.0]])


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_topk(device, dtype, largest, dim, rng):
    if not require_dtype(device, dtype):
        return
    for kind in ("normal", "small"):
        for layout in ("contiguous", "transposed", "stepped"):
            t, x = make_view(rng, SHAPE, dtype, device, layout, kind)
            if layout == "contiguous":
                x = with_specials(x, dtype, rng, kind)
                t = to_ember(x, dtype, device)
            size = x.shape[dim]
            idx = ref_argsort(x, dim, descending=largest)
            for k in sorted({0, 1, 2, size}):
                r = t.topk(k, dim, largest=largest)
                want = np.take(idx, np.arange(k), axis=dim)
                check_exact(r.indices, want, "int64", device)
                check_exact(r.values, np.take_along_axis(x, want, dim), dtype, device)
            f = ember.topk(t, 2, dim=dim, largest=largest, sorted=True)
            np.testing.assert_array_equal(f.indices.numpy(), np.take(idx, [0, 1], axis=dim))


@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_long_rows(device, dtype, largest, rng):
    """Rows long enough for a selection instead of a sort (the CPU keeps a heap of k when
    k is small next to the row, else nth_element, or a radix sort of the row past an
    eighth of it; one long row splits over threads): many ties and, in floats, NaN, -0.0
    and 0.0, in both directions; k from 1 to the whole row."""
    if not require_dtype(device, dtype):
        return
    cases = [((3, 5000), -1, (1, 10, 77, 200, 1000, 5000)), ((5000, 3), 0, (10,)),
             ((1, 1 << 17), -1, (1, 10))]
    for shape, dim, ks in cases:
        x = rand_array(rng, shape, dtype, kind="small")  # values 0..3: ties everywhere
        if is_float(dtype):
            y = x.astype(np.float64)
            flat = y.reshape(-1)
            picks = rng.choice(flat.size, size=40, replace=False)
            flat[picks[:15]] = np.nan
            flat[picks[15:30]] = -0.0
            flat[picks[30:]] = np.inf if largest else -np.inf
            x = rounded(y, dtype)
        t = to_ember(x, dtype, device)
        idx = ref_argsort(x, dim, descending=largest)
        for k in ks:
            r = t.topk(k, dim, largest=largest)
            want = np.take(idx, np.arange(k), axis=dim)
            check_exact(r.indices, want, "int64", device)
            check_exact(r.values, np.take_along_axis(x, want, dim), dtype, device)


@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16", "uint8"])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_of_many_spread_rows(device, name, largest, rng):
    """Many rows of spread values (a selection by radix digits narrows to few keys after
    its first digit), dense and transposed, k small and large, against the stable sort."""
    if not require_dtype(device, name):
        return
    x = rand_array(rng, (200, 1500), name)
    t = to_ember(x, name, device)
    for view, xv, dim in ((t, x, 1), (t.T, x.T, 0)):
        idx = ref_argsort(xv, dim, descending=largest)
        for k in (1, 10, 500):
            r = view.topk(k, dim, largest=largest)
            want = np.take(idx, np.arange(k), axis=dim)
            check_exact(r.indices, want, "int64", device)
            check_exact(r.values, np.take_along_axis(xv, want, dim), name, device)


@pytest.mark.parametrize("k", [-1, 6, 100])
def test_topk_k_out_of_range(device, k):
    t = ember.ones(3, 5, device=device)
    with pytest.raises(ember.InvalidArgumentError, match="topk") as info:
        t.topk(k)
    assert info.value.op == "topk"
    assert f"k={k}" in str(info.value) and "size 5" in str(info.value)
    with pytest.raises(ember.InvalidArgumentError, match="topk"):
        ember.tensor(2.0, device=device).topk(2)


@pytest.mark.parametrize("shape, dim", [((3, 0), -1), ((3, 0), 0), ((0,), 0), ((2, 0, 4), 2)])
def test_zero_size(device, shape, dim):
    for name in ("float32", "uint8"):
        t = ember.zeros(*shape, dtype=edtype(name), device=device)
        r = t.sort(dim)
        assert r.values.shape == shape and r.indices.shape == shape
        assert r.values.dtype == edtype(name) and r.indices.dtype == ember.int64
        assert t.argsort(dim).shape == shape
        k = t.topk(0, dim)
        want = list(shape)
        want[dim] = 0
        assert k.values.shape == tuple(want) and k.indices.dtype == ember.int64


def test_zero_dim_tensor(device):
    t = ember.tensor(4.0, device=device)
    for dim in (0, -1):
        r = t.sort(dim)
        assert r.values.shape == () and r.values.item() == 4.0 and r.indices.item() == 0
        assert t.argsort(dim).item() == 0
    k = t.topk(1)
    assert k.values.item() == 4.0 and k.indices.item() == 0


@pytest.mark.parametrize("op", ["sort", "argsort"])
def test_dim_out_of_range(device, op):
    t = ember.ones(2, 3, device=device)
    for dim in (2, -3):
        with pytest.raises(ember.IndexOutOfRangeError, match=op) as info:
            getattr(t, op)(dim)
        assert info.value.op == op
    with pytest.raises(ember.IndexOutOfRangeError, match="topk"):
        t.topk(1, dim=2)


def test_results_are_new_tensors(device):
    """Sorting never writes its input, and values are copies, not views of it."""
    x = np.array([[5.0, 1.0, 3.0], [2.0, 2.0, 0.0]], dtype=np.float32)
    t = ember.tensor(x, device=device)
    r = t.sort(0, descending=True)
    r.values[0, 0] = 99.0
    np.testing.assert_array_equal(t.numpy(), x)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_sorts_a_long_row_on_many_threadgroups():
    """One row of 2^24 sorts by radix passes whose counts and moves run on many
    threadgroups (a threadgroup's lanes each take one run of the row), not on one lane."""
    d = ember.device("metal")
    x = (np.arange(1 << 24, dtype=np.int64) * 7919 % 251).astype(np.uint8)
    t = ember.tensor(x, device=d)
    before = d.queue_stats()
    r = t.sort(descending=True)
    after = d.queue_stats()
    assert after["threadgroups"] - before["threadgroups"] > 2 * (after["dispatches"] - before["dispatches"])
    want = np.argsort(-x.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(r.indices.numpy(), want)
    np.testing.assert_array_equal(r.values.numpy(), x[want])


def test_named_pairs_pickle():
    import pickle

    t = ember.tensor([[3.0, 1.0, 2.0]])
    r = pickle.loads(pickle.dumps(t.sort()))
    assert type(r) is ember.return_types.sort
    np.testing.assert_array_equal(r.values.numpy(), [[1.0, 2.0, 3.0]])
    m = pickle.loads(pickle.dumps(t.max(dim=1)))
    assert type(m) is ember.return_types.max and m.indices.tolist() == [0]


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("largest", [True, False])
def test_metal_topk_selects_without_sorting_rows(largest):
    """topk of many rows runs a threadgroup per row that selects the k (radix selection,
    then a sort of the k alone), not a sort of every row: the dispatches' threadgroups
    are about the rows, not the elements. Ties keep their order, NaN is the largest."""
    d = ember.device("metal")
    rng = np.random.default_rng(5)
    x = np.round(rng.standard_normal((64, 5000)) * 3).astype(np.float32)  # many ties
    x[3, 17] = np.nan
    x[4, :] = -np.inf
    t = ember.tensor(x, device=d)
    before = d.queue_stats()
    r = t.topk(10, largest=largest)
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 3  # select, values, indices
    assert after["threadgroups"] - before["threadgroups"] < 64 + 64  # a sort: 5000 per row
    keys = np.where(np.isnan(x), np.inf, x)  # NaN past every number (x has no +inf)
    order = np.argsort(-keys if largest else keys, axis=1, kind="stable")
    np.testing.assert_array_equal(r.indices.numpy(), order[:, :10])
    np.testing.assert_array_equal(r.values.numpy(), np.take_along_axis(x, order[:, :10], 1))


@pytest.mark.parametrize("name", ["float32", "int32", "int64", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_one_long_row_is_stable(device, name, descending, rng):
    """One row long enough that the CPU cuts its radix passes into parts moved by several
    threads (past 2^16), with many ties and the special values: the stable order, as
    numpy's stable argsort gives it, in both directions."""
    if not require_dtype(device, name):
        return
    for kind in ("normal", "small"):
        x = with_specials(rand_array(rng, (140_000,), name, kind), name, rng, kind)
        r = to_ember(x, name, device).sort(descending=descending)
        check_sorted(r, x, -1, descending, name, device)
