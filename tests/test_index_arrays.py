"""Index arrays on both sides of = (DESIGN §4 indexing): integer lists and tensors with
negative entries counting from the end, t[..., ids, ...] = value, against numpy."""

from __future__ import annotations

import ember
import numpy as np
import pytest

READ_KEYS = [
    [-1, 0],
    [2, -3, 2],
    (slice(None), [-1, 1]),
    (Ellipsis, [0, -2, 4]),
    (1, slice(None), [-1, 0]),  # int and array apart: numpy moves the array's dim first
    ([], slice(None)),
    ([0, 2], [1, -1]),  # two arrays: elementwise pairs
    ([[0, 1], [2, 0]],),  # a 2-D array: the result takes its shape
    (slice(None), [[0], [3]], [1, 2]),  # (2, 1) and (2,) broadcast to (2, 2), in place
    ([0, 1], slice(None), [2, 3]),  # arrays apart: the broadcast dims lead
    (Ellipsis, [[-1, 0, 2]], [[1], [0]]),  # negatives, broadcast to (2, 3) at the end
    (slice(None), [True, False, True, True]),  # a mask inside a tuple: its true positions
    (1, [[True, False] * 2 + [True]] * 4),  # a 2-D mask over dims 1 and 2
    ([True, False, True], slice(1, 3), [0, 4]),  # a mask and an array together
]


@pytest.fixture
def base(rng):
    return rng.standard_normal((3, 4, 5)).astype(np.float32)


def as_ids(k: list) -> np.ndarray:
    a = np.array(k)
    return a if a.dtype == np.bool_ else a.astype(np.int64)  # [] is int64, not float64


@pytest.mark.parametrize("key", READ_KEYS, ids=repr)
@pytest.mark.parametrize("as_tensor", [False, True])
def test_read_through_an_index_array(device, base, key, as_tensor):
    t = ember.tensor(base, device=device)
    if as_tensor:  # the same ids as an int64 tensor on t's device
        key = tuple(
            ember.tensor(as_ids(k), device=device) if isinstance(k, list) else k
            for k in (key if isinstance(key, tuple) else (key,))
        )
    np_key = (
        tuple(np.asarray(k.numpy()) if isinstance(k, ember.Tensor) else k for k in key)
        if isinstance(key, tuple)
        else key
    )
    r = t[key]
    expected = base[np_key]
    assert r.shape == expected.shape and r.dtype == ember.float32
    np.testing.assert_array_equal(r.numpy(), expected)


def test_uint32_ids_and_strided_sources(device, base):
    t = ember.tensor(base, device=device)
    ids = ember.tensor(np.array([4, 0], np.uint32), device=device)
    np.testing.assert_array_equal(t[:, ::2, ids].numpy(), base[:, ::2, [4, 0]])
    np.testing.assert_array_equal(t.transpose(0, 2)[[-1]].numpy(), base.transpose(2, 1, 0)[[-1]])


WRITE_CASES = [
    ([0, -1], 7.0),
    ([1, 1, 2], 3.0),  # repeated ids: the last write wins, one value here
    ((slice(None), [-1, 0]), "block"),
    ((Ellipsis, [4, 2, 0]), "row"),
    ((1, slice(None), [-1, 0]), "moved"),  # the value takes numpy's moved shape (2, 4)
    ((slice(None, None, 2), [3]), "block"),
    (([0, 2, 0], [1, -1, 1]), "block"),  # two arrays; the repeated pair's last value wins
    ((slice(None), [[0], [3]], [1, 2]), "block"),  # broadcast ids, in place
    (([0, 1], slice(None), [2, 3]), "moved"),  # arrays apart: the value's dims lead
    ((slice(None), [True, False, True, False]), "block"),  # a mask in a tuple
    (([[1, 2]],), "block"),  # a 2-D array
]


def value_for(kind, shape, rng):
    if not isinstance(kind, str):
        return kind, kind
    v = rng.standard_normal(shape if kind != "row" else shape[-1:]).astype(np.float32)
    return ember.tensor(v), v


@pytest.mark.parametrize("key,kind", WRITE_CASES, ids=repr)
def test_write_through_an_index_array(device, base, rng, key, kind):
    expected = base.copy()
    shape = expected[key].shape
    value, np_value = value_for(kind, shape, rng)
    if isinstance(value, ember.Tensor):
        value = value.to_device(device)
    t = ember.tensor(base, device=device)
    t[key] = value
    expected[key] = np_value
    np.testing.assert_array_equal(t.numpy(), expected)


def test_write_through_ids_in_a_view_writes_the_base(device):
    a = np.arange(24, dtype=np.int64).reshape(4, 6)
    t = ember.tensor(a, device=device)
    view = t[1:3]
    view[:, [-1, 0]] = 0
    a[1:3][:, [-1, 0]] = 0
    np.testing.assert_array_equal(t.numpy(), a)
    t[[0, 3]] = ember.tensor([[1], [2]], device=device)  # (2, 1) broadcasts over the row
    a[[0, 3]] = [[1], [2]]
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.dtype == ember.int64


def test_write_through_arrays_of_views_whose_dims_do_not_merge(device):
    """Two arrays over a transposed view (their dims cannot merge in place): the write goes
    through a copy and lands in the base; repeated pairs keep the last of their values."""
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = ember.tensor(a, device=device)
    v = t.permute(2, 1, 0)  # (5, 4, 3)
    rows, cols = [4, 0, 4, 2], [1, 3, 1, 0]
    vals = np.arange(12, dtype=np.float32).reshape(4, 3) * -1
    v[rows, cols] = ember.tensor(vals, device=device)
    want = a.transpose(2, 1, 0).copy()
    want[rows, cols] = vals
    np.testing.assert_array_equal(t.numpy(), want.transpose(2, 1, 0))
    w = t[:, :, 1]  # (3, 4) strided: one array, rows of distinct values, repeated ids
    w[[2, 0, 2]] = ember.tensor(np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 9, 9, 9]], np.float32),
                                device=device)
    want = want.transpose(2, 1, 0)
    want[:, :, 1][[2, 0, 2]] = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 9, 9, 9]]
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64])  # uint8 is no index here
def test_index_arrays_of_every_int_dtype_are_range_checked(device, dtype):
    """An id past the dim raises before anything is read or written, whatever its dtype."""
    t = ember.zeros(4, 5, device=device)
    ids = ember.tensor(np.array([1, 7], dtype), device=device)
    with pytest.raises(ember.IndexOutOfRangeError, match="index 7 is out of range for dim 1 of size 5"):
        t[:, ids]
    with pytest.raises(ember.IndexOutOfRangeError, match="index 7 is out of range for dim 0 of size 4"):
        t[ids] = 1.0
    with pytest.raises(ember.IndexOutOfRangeError, match="index 7 is out of range for dim 1"):
        t[[0, 1], ids]
    np.testing.assert_array_equal(t.numpy(), np.zeros((4, 5), np.float32))
    ok = ember.tensor(np.array([4, 0, 4], dtype), device=device)
    np.testing.assert_array_equal(ember.arange(20, device=device).reshape(4, 5)[:, ok].numpy(),
                                  np.arange(20).reshape(4, 5)[:, [4, 0, 4]])


def test_write_of_floats_into_an_int_tensor_truncates_as_a_plain_write(device):
    a = np.zeros((3, 2), np.int64)
    t = ember.tensor(a, device=device)
    t[[2, 0]] = 2.75
    t[1] = 2.75  # the same rule as a view write
    np.testing.assert_array_equal(t.numpy(), [[2, 2], [2, 2], [2, 2]])


def test_bad_index_arrays(device):
    t = ember.zeros((3, 4), device=device)
    with pytest.raises(ember.IndexOutOfRangeError, match="index -4 is out of range for dim 0"):
        t[[-4]]
    with pytest.raises(ember.IndexOutOfRangeError, match="index 4 is out of range for dim 1"):
        t[:, [0, 4]] = 1
    with pytest.raises(ember.InvalidIndexError, match="must hold integers"):
        t[[0.5]]
    with pytest.raises(ember.ShapeMismatchError, match="setitem") as info:
        t[:, [0, 1]] = ember.ones(3, device=device)
    assert "(3, 2)" in str(info.value)
    with pytest.raises(ember.InvalidIndexError, match=r"could not be broadcast.*\(2,\), \(3,\)"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(ember.InvalidIndexError, match="could not be broadcast"):
        t[[0, 1], [0, 1, 2]] = 1
    with pytest.raises(ember.IndexOutOfRangeError, match="index 3 is out of range for dim 0"):
        t[[0, 3], [0, 1]]
    other = ember.Device.cpu() if device.kind != "cpu" else None
    if other is not None:  # the value must live on t's device
        with pytest.raises(ember.DeviceMismatchError):
            t[[0]] = ember.ones(4, device=other)


MASK_SHAPES = [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), (3,)), ((3, 4, 5), (3, 4)), ((0, 2), (0,))]


@pytest.mark.parametrize("shape,mask_shape", MASK_SHAPES, ids=repr)
def test_read_through_a_boolean_mask(device, rng, shape, mask_shape):
    a = rng.standard_normal(shape).astype(np.float32)
    m = rng.random(mask_shape) > 0.5
    t = ember.tensor(a, device=device)
    mask = ember.tensor(m, device=device)
    assert mask.dtype == ember.bool
    r = t[mask]
    assert r.shape == a[m].shape and r.dtype == ember.float32
    np.testing.assert_array_equal(r.numpy(), a[m])
    np.testing.assert_array_equal(t[(mask,)].numpy(), a[m])


def test_mask_from_a_comparison_a_list_and_an_ndarray(device):
    a = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    t = ember.tensor(a, device=device)
    np.testing.assert_array_equal(t[t > 0].numpy(), a[a > 0])
    np.testing.assert_array_equal(t[[True, False, True]].numpy(), a[[True, False, True]])
    np.testing.assert_array_equal(t[np.array([False, True, False])].numpy(), a[[1]])
    np.testing.assert_array_equal(t.t()[t.t() < -2].numpy(), a.T[a.T < -2])  # a view


@pytest.mark.parametrize("shape,mask_shape", MASK_SHAPES, ids=repr)
@pytest.mark.parametrize("value", ["scalar", "rows", "broadcast"])
def test_write_through_a_boolean_mask(device, rng, shape, mask_shape, value):
    a = rng.standard_normal(shape).astype(np.float32)
    m = rng.random(mask_shape) > 0.5
    selected = a[m].shape
    if value == "scalar":
        v = np.float32(7.5)
    elif value == "rows":
        v = rng.standard_normal(selected).astype(np.float32)
    else:
        v = rng.standard_normal(selected[1:]).astype(np.float32)
    t = ember.tensor(a, device=device)
    t[ember.tensor(m, device=device)] = (
        float(v) if value == "scalar" else ember.tensor(v, device=device)
    )
    expected = a.copy()
    expected[m] = v
    np.testing.assert_array_equal(t.numpy(), expected)


def test_masked_write_in_a_view_and_into_ints(device):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = ember.tensor(a, device=device)
    col = t[:, 1]
    col[col > 4] = -1
    a[:, 1][a[:, 1] > 4] = -1
    np.testing.assert_array_equal(t.numpy(), a)
    t[t < 0] = 2.75  # truncated, as any write of a float into an int tensor
    a[a < 0] = 2
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.dtype == ember.int64


def test_bad_masks(device):
    t = ember.zeros((3, 4), device=device)
    with pytest.raises(ember.InvalidIndexError, match=r"mask's shape \(4,\)") as info:
        t[ember.ones(4, device=device) > 0]
    assert "(3, 4)" in str(info.value)
    with pytest.raises(ember.InvalidIndexError, match="must match"):
        t[ember.ones((3, 4, 1), device=device) > 0] = 1
    with pytest.raises(ember.InvalidIndexError, match=r"mask's shape \(3,\) must match the dims 1"):
        t[0, ember.ones(3, device=device) > 0]
    with pytest.raises(ember.InvalidArgumentError, match="must be bool"):
        t[ember.ones(3, dtype=ember.uint8, device=device)]
    mask = ember.tensor([True, False, True], device=device)
    with pytest.raises(ember.ShapeMismatchError, match="setitem") as info:
        t[mask] = ember.ones((3, 4), device=device)
    assert "(2, 4)" in str(info.value)
    if device.kind != "cpu":  # the mask lives on the tensor's device
        with pytest.raises(ember.DeviceMismatchError):
            t[ember.tensor([True, False, True])]


@pytest.mark.parametrize(
    "key",
    [True, False, (0, True), (True, 1), (Ellipsis, False), (slice(None), True, [0, 2]),
     (True, [1, 0]), (None, False, 1)],
)  # fmt: skip
def test_python_bools_are_zero_d_masks(device, key):
    # numpy's rule: True adds a dim of 1, False a dim of 0, as an advanced index.
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    t = ember.tensor(a, device=device)
    np.testing.assert_array_equal(t[key].numpy(), a[key])
    b, u = a.copy(), ember.tensor(a, device=device)
    b[key] = -1.0
    u[key] = -1.0
    np.testing.assert_array_equal(u.numpy(), b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_reads_through_far_out_ids_raise_and_the_device_goes_on(device, dtype, rng):
    """A GPU may queue a read before its ids' range check has come back (the kernel keeps
    every id in bounds meanwhile): ids far outside the dim, either side, raise the same
    typed error, nothing faults, and the next reads are right, negative ids counting from
    the end."""
    x = rng.standard_normal((64, 256)).astype(np.float32)
    t = ember.tensor(x, device=device)
    info = np.iinfo(dtype)
    for bad in ([0, int(info.max)], [int(info.min), 3] if info.min < 0 else [300, 1]):
        ids = ember.tensor(np.array(bad, dtype), device=device)
        far = next(v for v in bad if not -64 <= v < 64)
        with pytest.raises(ember.IndexOutOfRangeError, match=f"index {far} is out of range for dim 0"):
            t[ids]
        with pytest.raises(ember.IndexOutOfRangeError, match=f"index {far} is out of range for dim 1"):
            t[:, ids]
        with pytest.raises(ember.IndexOutOfRangeError, match="index_select: index"):
            t.index_select(0, ids)
        with pytest.raises(ember.IndexOutOfRangeError, match="embedding: index"):
            ember.embedding(ids, t)
        with pytest.raises(ember.IndexOutOfRangeError, match="gather: index"):
            t.gather(0, ids.reshape(2, 1).expand(2, 256))
    good = np.array([63, 0, 5, 63] if info.min == 0 else [-1, 0, 5, -64], dtype)
    ids = ember.tensor(good, device=device)
    np.testing.assert_array_equal(t[ids].numpy(), x[good.astype(np.int64)])
    np.testing.assert_array_equal(t[:, ids].numpy(), x[:, good.astype(np.int64)])
    np.testing.assert_array_equal(t[3, ids].numpy(), x[3, good.astype(np.int64)])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, "bfloat16"])
def test_reads_through_several_arrays_at_every_layout(device, rng, dtype):
    """t[i, j, ...] reads through two to five arrays (negatives counting from the end,
    broadcast together, the arrays side by side or apart, the source transposed or sliced),
    large enough to be split over threads, as numpy does."""
    x = rng.standard_normal((6, 40, 7, 9))
    x = (x > 0) if dtype == np.bool_ else (x * 100 if dtype == np.int64 else x).astype(
        np.float32 if dtype == "bfloat16" else dtype)
    t = ember.tensor(x, device=device)
    if dtype == "bfloat16":
        t = t.to_dtype(ember.bfloat16)
        x = t.to_dtype(ember.float32).numpy()

    def ids(size, shape):
        return rng.integers(-size, size, shape)

    i, j, k, m = ids(6, (300, 1)), ids(40, (300, 70)), ids(7, (70,)), ids(9, (300, 70))
    views = {"t": (t, x), "t.T": (t.permute(3, 2, 1, 0), x.transpose(3, 2, 1, 0)),
             "sliced": (t[:, ::3, 1:], x[:, ::3, 1:])}
    keys = {"t": [(i, j), (i, j, k), (i, j, k, m), (i, slice(None), k), (Ellipsis, j % 7, m),
                  (i, j, k, m)],
            "t.T": [(m, k, j), (slice(1, 5), k, j % 14)],
            "sliced": [(i, j % 14, k % 6), (i, slice(None), slice(None), m)]}
    for name, (u, v) in views.items():
        for key in keys[name]:
            got = u[tuple(ember.tensor(a, device=device) if isinstance(a, np.ndarray) else a
                          for a in key)]
            want = v[key]
            assert got.shape == want.shape, (name, key)
            np.testing.assert_array_equal(got.to_dtype(ember.float32).numpy() if dtype == "bfloat16"
                                          else got.numpy(), want)
    # five arrays: past what one pass takes, the same result
    y = rng.standard_normal((3, 4, 5, 6, 7)).astype(np.float32)
    five = [ids(s, (8, 9)) for s in y.shape]
    got = ember.tensor(y, device=device)[tuple(ember.tensor(a, device=device) for a in five)]
    np.testing.assert_array_equal(got.numpy(), y[tuple(five)])


def test_reads_through_several_arrays_name_the_bad_id_of_each(device, rng):
    """Every array of a read is checked, whichever holds the bad id and wherever it sits;
    nothing faults, and an empty read of a dim of 0 still checks its ids."""
    t = ember.tensor(rng.standard_normal((30, 50)).astype(np.float32), device=device)
    good_i, good_j = rng.integers(-30, 30, 5000), rng.integers(-50, 50, 5000)
    for bad, dim, size in [(2**63 - 1, 0, 30), (-31, 0, 30), (50, 1, 50), (-(2**63), 1, 50)]:
        i, j = good_i.copy(), good_j.copy()
        (i if dim == 0 else j)[3777] = bad
        with pytest.raises(ember.IndexOutOfRangeError,
                           match=f"index {bad} is out of range for dim {dim} of size {size}"):
            t[ember.tensor(i, device=device), ember.tensor(j, device=device)]
    np.testing.assert_array_equal(
        t[ember.tensor(good_i, device=device), ember.tensor(good_j, device=device)].numpy(),
        t.numpy()[good_i, good_j])
    e = ember.zeros(0, 4, device=device)
    with pytest.raises(ember.IndexOutOfRangeError, match="index 0 is out of range for dim 0 of size 0"):
        e[ember.tensor([0], device=device), ember.tensor([1], device=device)]
    assert e[ember.tensor(np.zeros(0, np.int64), device=device),
             ember.tensor(np.zeros(0, np.int64), device=device)].shape == (0,)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_writes_through_several_arrays(device, rng, dtype):
    """t[i, j] = v through two and three arrays: negatives count from the end, the arrays
    broadcast, repeated positions keep the last value, the destination may be a view;
    a bad id in any array raises before anything is written."""
    x = rng.standard_normal((30, 40, 5))
    x = (x > 0) if dtype == np.bool_ else (x * 100).astype(dtype)
    i, j = rng.integers(-30, 30, (200, 1)), rng.integers(-40, 40, (200, 60))
    k = rng.integers(-5, 5, (60,))
    for key, shape in (((i, j), (200, 60, 5)), ((i, j, k), (200, 60)),
                       ((i, slice(None), k), (200, 60, 40))):
        for value_shape in (shape, shape[-1:], ()):
            v = rng.standard_normal(value_shape)
            v = (v > 0) if dtype == np.bool_ else (v * 100).astype(dtype)
            t, want = ember.tensor(x, device=device), x.copy()
            # repeated positions: the last value wins, in numpy as in ember
            flat = np.broadcast_to(v, want[key].shape)
            want[key] = flat
            t[tuple(ember.tensor(a, device=device) if isinstance(a, np.ndarray) else a
                    for a in key)] = ember.tensor(v, device=device)
            np.testing.assert_array_equal(t.numpy(), want)
    # into a transposed view: the base changes where the view's positions lie
    t = ember.tensor(x, device=device)
    tv, want = t.permute(2, 1, 0), x.copy()
    want.transpose(2, 1, 0)[k[:, None] % 5, j[:60, :60] % 40] = x[0, 0, 0]
    tv[ember.tensor(k[:, None], device=device), ember.tensor(j[:60, :60], device=device)] = (
        ember.tensor(x[0, 0, 0], device=device))
    np.testing.assert_array_equal(t.numpy(), want)
    # a bad id anywhere: nothing written
    for bad_at, dim, size in ((0, 0, 30), (1, 1, 40)):
        arrays = [i.copy(), j.copy()]
        arrays[bad_at].flat[7] = -size - 1
        t = ember.tensor(x, device=device)
        with pytest.raises(ember.IndexOutOfRangeError,
                           match=f"index {-size - 1} is out of range for dim {dim} of size {size}"):
            t[tuple(ember.tensor(a, device=device) for a in arrays)] = ember.tensor(
                x[0, 0], device=device)
        np.testing.assert_array_equal(t.numpy(), x)


@pytest.mark.skipif(not ember.metal_is_available(), reason="no Metal device here")
def test_metal_reads_and_writes_through_several_arrays_in_one_pass(rng):
    """On Metal, t[i, j] is one dispatch (and t[i, j] = v two: the offsets, then the
    scatter) that finds every array's bounds in its threadgroups, instead of range-check
    passes and linear ids first: the dispatches as the device's queue_stats counts them.
    The result outgrows one wave of threadgroups, so lanes loop; a bad id among the last
    elements, or the middle ones, still raises."""
    d = ember.device("metal")
    x = rng.standard_normal((300, 200)).astype(np.float32)
    t = ember.tensor(x, device=d)
    n = 1024 * 256 * 2 + 77
    i, j = rng.integers(-300, 300, n), rng.integers(-200, 200, n)
    ti, tj = ember.tensor(i, device=d), ember.tensor(j, device=d)
    before = d.queue_stats()
    got = t[ti, tj]
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 1
    np.testing.assert_array_equal(got.numpy(), x[i, j])
    v = rng.standard_normal(n).astype(np.float32)
    before = d.queue_stats()
    t[ti, tj] = ember.tensor(v, device=d)
    after = d.queue_stats()
    assert after["dispatches"] - before["dispatches"] == 2
    x[i, j] = v
    np.testing.assert_array_equal(t.numpy(), x)
    for at, bad, dim, size in ((n - 1, 200, 1, 200), (n // 2, -301, 0, 300)):
        arrays = [i.copy(), j.copy()]
        arrays[dim][at] = bad
        with pytest.raises(ember.IndexOutOfRangeError,
                           match=f"index {bad} is out of range for dim {dim} of size {size}"):
            t[tuple(ember.tensor(a, device=d) for a in arrays)]
