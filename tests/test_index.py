"""__getitem__ (ints, slices with steps, None, Ellipsis), views sharing storage, and
index_select / gather, against numpy."""

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
    make_view,
    rand_array,
    require_dtype,
    to_ember,
)
from hypothesis import given, settings
from hypothesis import strategies as st


def arange_pair(shape, device, name="int64"):
    x = np.arange(int(np.prod(shape))).reshape(shape).astype(NP_DTYPE[name])
    return ember.tensor(x, dtype=edtype(name), device=device), x


INDEXES = [
    1,
    -1,
    -4,
    (0, 1),
    (-1, -2, -3),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(None, None, -2),
    slice(3, 0, -1),
    slice(-2, None),
    slice(10, 20),
    slice(-100, 100),
    slice(2, 2),
    (slice(None), 1),
    (Ellipsis, 1),
    (Ellipsis, slice(None, None, -3)),
    (1, Ellipsis, 2),
    None,
    (None, 1),
    (slice(None), None, slice(1, None, 2)),
    (None, Ellipsis, None),
    (0, None, slice(None, None, -1), None),
    Ellipsis,
    (),
    (slice(None, None, 3), slice(None, None, -2), slice(None, None, 4)),
]


@pytest.mark.parametrize("index", INDEXES, ids=repr)
def test_getitem(device, index):
    t, x = arange_pair((4, 3, 5), device)
    got = t[index]
    ref = x[index]
    check_exact(got, np.asarray(ref), "int64", device)


def test_getitem_all_dtypes(device, dtype):
    if not require_dtype(device, dtype):
        return
    t, x = arange_pair((4, 6), device, dtype)
    check_exact(t[1], x[1], dtype)
    check_exact(t[::-1, 1::2], x[::-1, 1::2], dtype)
    check_exact(t[-1, -1], np.asarray(x[-1, -1]), dtype)


def test_getitem_of_views(device, rng):
    for layout in LAYOUTS:
        t, x = make_view(rng, (4, 5), "float32", device, layout)
        check_exact(t[1:, ::-2], x[1:, ::-2], "float32")
        check_exact(t[..., 2], x[..., 2], "float32")


def test_getitem_numpy_integer_index(device):
    t, x = arange_pair((4, 3), device)
    check_exact(t[np.int64(2)], x[2], "int64")
    check_exact(t[np.int64(-1), np.int32(1)], np.asarray(x[-1, 1]), "int64")


def test_int_index_gives_0d(device):
    t, x = arange_pair((3,), device)
    assert t[1].shape == ()
    assert t[1].item() == 1


def test_iteration_and_len(device):
    t, x = arange_pair((3, 2), device)
    rows = list(t)
    assert len(rows) == len(t) == 3
    for r, xr in zip(rows, x):
        check_exact(r, xr, "int64")


@st.composite
def index_tuples(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=1, max_size=4)))
    parts = []
    used_ellipsis = False
    dims_left = len(shape)
    d = 0
    while d < len(shape):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "stop"]))
        if kind == "stop":
            break
        if kind == "none":
            parts.append(None)
            continue
        if kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            parts.append(Ellipsis)
            skip = draw(st.integers(0, dims_left))
            d += skip
            dims_left -= skip
            continue
        size = shape[d]
        if kind == "int" and size > 0:
            parts.append(draw(st.integers(-size, size - 1)))
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 2, size + 2)))
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2, -3])))
            parts.append(slice(start, stop, step))
        d += 1
        dims_left -= 1
    return shape, tuple(parts)


@settings(max_examples=80)
@given(case=index_tuples(), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**32 - 1))
def test_getitem_random(device, case, layout, seed):
    shape, index = case
    rng = np.random.default_rng(seed)
    t, x = make_view(rng, shape, "int64", device, layout)
    check_exact(t[index], np.asarray(x[index]), "int64")
    # and the result is a view: writing through it changes the base the same way
    base_t, base_x = t.contiguous(), x.copy()
    v = base_t[index]
    v += 7
    vx = base_x[index]
    if isinstance(vx, np.ndarray):
        vx += 7
    else:
        base_x[index] += 7
    check_exact(base_t, base_x, "int64")


# ---- views share storage


def test_slice_view_writes_through(device, dtype):
    if not require_dtype(device, dtype):
        return
    t, x = arange_pair((4, 3), device, dtype)
    if dtype == "bool":  # the bool forms: | & ^ write through views the same way
        t[1:] |= True
        x[1:] |= True
        t[:, ::2] &= False
        x[:, ::2] &= False
        r = t[::-1]
        r ^= True
        x[::-1] ^= True
        check_exact(t, x, dtype)
        return
    v = t[1:]
    v += 1
    x[1:] += 1
    check_exact(t, x, dtype)
    w = t[:, ::2]
    w *= 2
    x[:, ::2] *= 2
    check_exact(t, x, dtype)
    r = t[::-1]
    r -= 1
    x[::-1] -= 1
    check_exact(t, x, dtype)


def test_views_of_views_write_through(device):
    t, x = arange_pair((4, 6), device, "float32")
    v = t.t()[1:5:2].narrow(1, 1, 2)
    v += 100
    x.T[1:5:2][:, 1:3] += 100
    check_exact(t, x, "float32")
    u = t.reshape(2, 12)[1, ::3]
    u /= 2
    x.reshape(2, 12)[1, ::3] /= 2
    check_exact(t, x, "float32")
    e = t[0].unsqueeze(0)[None]
    e -= 5
    x[0] -= 5
    check_exact(t, x, "float32")


def test_write_through_int_index(device):
    t, x = arange_pair((3, 4), device)
    row = t[1]
    row += 10
    x[1] += 10
    check_exact(t, x, "int64")
    cell = t[2, -1]
    cell *= 3
    x[2, -1] *= 3
    check_exact(t, x, "int64")


def test_base_writes_visible_in_views(device):
    t, x = arange_pair((3, 4), device)
    v = t[:, 1:3]
    t += 1
    check_exact(v, (x + 1)[:, 1:3], "int64")


def test_numpy_result_is_a_copy(device):
    t, x = arange_pair((3,), device)
    arr = t.numpy()
    arr[0] = 99
    check_exact(t, x, "int64")


# ---- index_select


@pytest.mark.parametrize("id_dtype", INT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_index_select(device, dtype, dim, id_dtype, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ("contiguous", "transposed", "stepped", "reversed"):
        t, x = make_view(rng, (4, 5, 3), dtype, device, layout)
        size = x.shape[dim]
        ids = rng.integers(0, size, size=7).astype(NP_DTYPE[id_dtype])
        ids[0] = size - 1  # the last row is reachable
        got = t.index_select(dim, ember.tensor(ids, device=device))
        check_exact(got, np.take(x, ids.astype(np.int64), axis=dim), dtype, device)
        got = ember.index_select(t, dim, ember.tensor(ids, device=device))
        check_exact(got, np.take(x, ids.astype(np.int64), axis=dim), dtype)


def test_index_select_embedding_lookup(device):
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    t = ember.tensor(table, device=device)
    ids = [3, 3, 0, 9]
    check_exact(t.index_select(0, ember.tensor(ids, device=device)), table[ids], "float32")
    check_exact(t.index_select(0, ids), table[ids], "float32")  # a list works too
    empty = t.index_select(0, ember.tensor(np.zeros(0, np.int64), device=device))
    check_exact(empty, np.zeros((0, 4)), "float32")


def test_index_select_with_id_views(device):
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    t = ember.tensor(table, device=device)
    ids = ember.tensor([[0, 1], [2, 3], [4, 5]], device=device)
    check_exact(t.index_select(0, ids[:, 1]), table[[1, 3, 5]], "float32")
    check_exact(t.index_select(0, ids.flatten()[::-1]), table[[5, 4, 3, 2, 1, 0]], "float32")


def test_index_select_negative_ids_wrap_or_raise(device):
    # numpy's take wraps -1 to the last row; refusing negative ids is also safe
    t = ember.tensor(np.arange(6).reshape(3, 2), device=device)
    try:
        got = t.index_select(0, ember.tensor([-1, 0], device=device))
    except ember.IndexOutOfRangeError:
        return
    check_exact(got, np.arange(6).reshape(3, 2)[[-1, 0]], "int64")


def test_index_select_out_of_range(device):
    t = ember.zeros(3, 4, device=device)
    for bad in ([3], [0, 4, 1], [2**40]):
        with pytest.raises(ember.IndexOutOfRangeError) as info:
            t.index_select(0, ember.tensor(bad, device=device))
        assert info.value.op == "index_select"
    with pytest.raises(ember.IndexOutOfRangeError):
        t.index_select(1, ember.tensor(np.array([4], dtype=np.uint8), device=device))


# ---- gather


@pytest.mark.parametrize("id_dtype", INT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather(device, dtype, dim, id_dtype, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ("contiguous", "transposed", "stepped"):
        t, x = make_view(rng, (4, 5, 3), dtype, device, layout)
        shape = list(x.shape)
        size = shape[dim]
        shape[dim] = 6
        ids = rng.integers(0, size, size=shape).astype(NP_DTYPE[id_dtype])
        got = t.gather(dim, ember.tensor(ids, device=device))
        ref = np.take_along_axis(x, ids.astype(np.int64), axis=dim)
        check_exact(got, ref, dtype, device)
        check_exact(ember.gather(t, dim, ember.tensor(ids, device=device)), ref, dtype)


@pytest.mark.parametrize("id_dtype", INT_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_gather_along_long_rows_of_ids(device, dim, id_dtype, rng):
    """ids whose last dim is long and contiguous (a GPU gathers them by rows): every layout
    of the input, ids a view of rows of a larger array, a 1-D gather, 8-byte data."""
    for layout in ("contiguous", "transposed", "stepped"):
        t, x = make_view(rng, (3, 4, 700), "float32", device, layout)
        shape = [2, 3, 650]
        shape[dim] = 5
        big = rng.integers(0, x.shape[dim], size=shape[:2] + [900]).astype(NP_DTYPE[id_dtype])
        ids = ember.tensor(big, device=device)[..., 100:750]  # rows of 650, a stride of 900
        part = x[tuple(slice(None) if i == dim else slice(0, n) for i, n in enumerate(shape))]
        ref = np.take_along_axis(part, big[..., 100:750].astype(np.int64), axis=dim)
        check_exact(t.gather(dim, ids), ref, "float32", device)
    one = rng.integers(0, 700, size=3000).astype(NP_DTYPE[id_dtype])
    y = rng.integers(-(2**40), 2**40, size=700)
    check_exact(ember.tensor(y, device=device).gather(0, ember.tensor(one, device=device)),
                y[one.astype(np.int64)], "int64", device)
    # rows of every width along the last dim: within a GPU's shared memory and past it,
    # with as many ids as positions and with far fewer
    for name, width, count in (("float16", 3000, 2000), ("uint8", 5000, 700),
                               ("float32", 20000, 3000), ("float64", 4000, 300)):
        if not require_dtype(device, name):
            continue
        x = rand_array(rng, (5, width), name)
        ids = rng.integers(0, width, size=(5, count)).astype(NP_DTYPE[id_dtype])
        check_exact(to_ember(x, name, device).gather(1, ember.tensor(ids, device=device)),
                    np.take_along_axis(x, ids.astype(np.int64), axis=1), name, device)


@pytest.mark.parametrize("id_dtype", INT_DTYPES)
def test_gather_short_rows_of_ids_along_the_last_dim(device, id_dtype, rng):
    """A gather along the last dim with short rows of ids (a top-k's positions), more rows
    than one thread takes: from a permuted source, through ids whose outer dims step or
    repeat, each row reading its own row of the source."""
    x = rng.standard_normal((9, 40, 300)).astype(np.float32)
    t = ember.tensor(x, device=device)
    src, ref_src = t.permute(1, 0, 2), x.transpose(1, 0, 2)  # (40, 9, 300)
    for width in (1, 3, 8):
        ids = rng.integers(0, 250 if id_dtype == "uint8" else 300, (80, 9, width))
        e = ember.tensor(ids.astype(NP_DTYPE[id_dtype]), device=device)
        for view, idv in ((e[::2], ids[::2]), (e[:40], ids[:40]),
                          (e[:1].expand(40, 9, width), np.broadcast_to(ids[:1], (40, 9, width)))):
            got = src.gather(2, view)
            check_exact(got, np.take_along_axis(ref_src, idv, axis=2), "float32", device)


def test_gather_picks_per_row(device):
    x = np.array([[10, 11, 12], [20, 21, 22]])
    t = ember.tensor(x, device=device)
    ids = np.array([[2, 0], [1, 1]])
    check_exact(
        t.gather(1, ember.tensor(ids, device=device)), np.array([[12, 10], [21, 21]]), "int64"
    )
    check_exact(
        t.gather(0, ember.tensor([[1, 0, 1]], device=device)), np.array([[20, 11, 22]]), "int64"
    )


def test_gather_out_of_range(device):
    t = ember.zeros(2, 3, device=device)
    with pytest.raises(ember.IndexOutOfRangeError) as info:
        t.gather(1, ember.tensor([[0, 3], [1, 1]], device=device))
    assert info.value.op == "gather"


@pytest.mark.parametrize("id_dtype", INT_DTYPES)
def test_gather_names_the_bad_id_wherever_it_is(device, id_dtype, rng):
    """The CPU checks a gather's ids in the same pass that reads them (the read of a bad id
    stays in bounds): the error still names the bad id, whether it sits in a dense run, a
    strided view of the ids, a broadcast or a tail, for every id dtype; good ids after a
    failed call gather as before."""
    size = 200 if id_dtype == "uint8" else 300  # uint8 ids reach 255 at most
    x = rng.standard_normal((40, size)).astype(np.float32)
    t = ember.tensor(x, device=device)
    good = rng.integers(0, size, size=(40, 600))
    big = 255 if id_dtype == "uint8" else 1000
    bads = [(5, 17, size if id_dtype != "uint8" else 255), (39, 599, big)]
    if id_dtype in ("int64", "int32"):
        bads.append((20, 3, -2))
    for r, c, v in bads:
        ids = good.copy()
        ids[r, c] = v
        e = ember.tensor(ids.astype(NP_DTYPE[id_dtype]), device=device)
        for view in (e, e[:, c % 2 :: 2], e[r : r + 1].expand(3, 600)):
            with pytest.raises(ember.IndexOutOfRangeError) as info:
                t.gather(1, view)
            assert info.value.op == "gather"
            assert f"index {v} is out of range for a dim of size {size}" in str(info.value)
    ok = rng.integers(0, size, size=(40, 601)).astype(NP_DTYPE[id_dtype])
    got = t.gather(1, ember.tensor(ok, device=device)[:, 1:])
    check_exact(got, np.take_along_axis(x, ok[:, 1:].astype(np.int64), axis=1), "float32", device)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
@pytest.mark.parametrize("id_dtype", INT_DTYPES)
def test_metal_checks_ids_in_one_pass(id_dtype, rng):
    """On Metal an index op's range check is one dispatch over its ids (each threadgroup's
    bounds, merged on the host), not a min, a max and their stack: index_select is that
    pass and its read (int32 ids one more: their cast to uint32). Ids past one wave of
    threadgroups, and a strided view of them, still find a bad id anywhere."""
    d = ember.device("metal")
    size = 200 if id_dtype == "uint8" else 300
    x = rng.standard_normal((size, 3)).astype(np.float32)
    t = ember.tensor(x, device=d)
    ids = rng.integers(0, size, 1024 * 256 + 5).astype(NP_DTYPE[id_dtype])
    e = ember.tensor(ids, device=d)
    before = d.queue_stats()
    got = t.index_select(0, e)
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == (3 if id_dtype == "int32" else 2)
    np.testing.assert_array_equal(got.numpy(), x[ids.astype(np.int64)])
    big = 255 if id_dtype == "uint8" else 1000
    for at, v in [(len(ids) - 1, big), (len(ids) // 3, big)] + (
            [(7, -1)] if id_dtype in ("int64", "int32") else []):
        bad = ids.copy()
        bad[at] = v
        for view in (ember.tensor(bad, device=d), ember.tensor(bad, device=d)[at % 2::2]):
            with pytest.raises(ember.IndexOutOfRangeError,
                               match=f"index {v} is out of range for a dim of size {size}"):
                t.index_select(0, view)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_selects_rows_in_row_shaped_dispatches(rng):
    """On Metal, index_select of whole rows (an embedding's lookup, a middle dim of a
    contiguous tensor) puts lanes along each row and rows down the grid, at most 65535
    groups down per dispatch: 70000 rows of 256 take two dispatches after the ids' check,
    and every element lands where numpy puts it; short rows and a batch dim too."""
    d = ember.device("metal")
    table = rng.standard_normal((1000, 256)).astype(np.float32)
    ids = rng.integers(0, 1000, 70_000)
    t, e = ember.tensor(table, device=d), ember.tensor(ids, device=d)
    before = d.queue_stats()
    got = t.index_select(0, e)
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 3  # the check, then two halves
    np.testing.assert_array_equal(got.numpy(), table[ids])
    x = rng.standard_normal((3, 50, 5)).astype(np.float32)
    j = rng.integers(0, 50, 70)
    np.testing.assert_array_equal(
        ember.tensor(x, device=d).index_select(1, ember.tensor(j, device=d)).numpy(), x[:, j])
    np.testing.assert_array_equal(
        ember.embedding(ember.tensor(j, device=d), ember.tensor(x[0], device=d)).numpy(), x[0][j])


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_index_ops_reject_float_ids(device, name):
    t = ember.zeros(3, 3, device=device)
    if not require_dtype(device, name):
        return
    ids = ember.zeros(2, dtype=edtype(name), device=device)
    with pytest.raises(ember.UnsupportedDTypeError):
        t.index_select(0, ids)
    with pytest.raises(ember.UnsupportedDTypeError):
        t.gather(0, ids.reshape(2, 1))
