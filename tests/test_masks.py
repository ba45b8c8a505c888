"""Masks on every device: nonzero / argwhere / count_nonzero / masked_select against
numpy, and t[mask] on both sides of = (the count read once, the rest on the device)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
    LAYOUTS,
    check_exact,
    make_view,
    raises_op,
    require_dtype,
    rand_array,
    to_ember,
)

# up to 8 dims the backends write coordinates; past that core unravels flat positions
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 0, 4), (2, 3, 4), (1, 1, 1, 5), (2, 1, 2, 1, 2, 1, 2, 3, 2)]


def _mask(rng, shape, density):
    return rng.random(shape) < density


def _positions(mask: np.ndarray) -> np.ndarray:
    """torch.nonzero's result: (count, ndim) int64."""
    return np.argwhere(mask).astype(np.int64).reshape(-1, mask.ndim)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", DTYPES)
def test_nonzero_every_dtype(device, shape, name):
    if not require_dtype(device, name):
        return
    rng = np.random.default_rng(0)
    x = rand_array(rng, shape, name, "small")  # about a quarter zeros
    t = to_ember(x, name, device)
    check_exact(ember.nonzero(t), _positions(x != 0), "int64", device)
    check_exact(t.nonzero(), _positions(x != 0), "int64", device)
    check_exact(ember.argwhere(t), _positions(x != 0), "int64", device)
    cols = ember.nonzero(t, as_tuple=True)
    assert isinstance(cols, tuple) and len(cols) == len(shape)
    for col, want in zip(cols, np.nonzero(x)):
        check_exact(col, want.astype(np.int64), "int64", device)
    count = ember.count_nonzero(t)
    check_exact(count, np.array(np.count_nonzero(x), dtype=np.int64), "int64", device)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nonzero_of_views(device, layout):
    rng = np.random.default_rng(1)
    t, x = make_view(rng, (6, 5, 4), "float32", device, layout, kind="small")
    check_exact(t.nonzero(), _positions(x != 0), "int64", device)
    m = t > 1
    check_exact(t[m], x[x > 1], "float32", device)
    check_exact(ember.masked_select(t, m), x[x > 1], "float32", device)


@pytest.mark.parametrize("density", [0.0, 0.001, 0.3, 0.5, 0.97, 1.0])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 4095, 4096, 4097, 100_003, 1_000_000])
def test_nonzero_long_masks(device, n, density):
    """Every chunk boundary of the kernels: a group's run, a thread's chunk, a block."""
    rng = np.random.default_rng(n)
    m = _mask(rng, (n,), density)
    got = ember.tensor(m, device=device).nonzero()
    check_exact(got, _positions(m), "int64", device)


@pytest.mark.parametrize("density", [0.001, 0.5, 0.999])
@pytest.mark.parametrize("shape", [(1000, 1001), (3, 70_001), (70_001, 3), (64, 65, 66)], ids=str)
def test_nonzero_coordinates_of_long_masks(device, shape, density):
    """Coordinates across chunk and row boundaries, as (count, ndim) and as columns."""
    rng = np.random.default_rng(len(shape))
    m = _mask(rng, shape, density)
    t = ember.tensor(m, device=device)
    check_exact(t.nonzero(), _positions(m), "int64", device)
    for col, want in zip(t.nonzero(as_tuple=True), np.nonzero(m)):
        check_exact(col, want.astype(np.int64), "int64", device)


def test_nonzero_clustered(device):
    """True bytes packed in runs and gaps longer than any chunk, at a mask's ends."""
    m = np.zeros(300_000, dtype=bool)
    m[:5000] = True
    m[150_000:150_100] = True
    m[-7:] = True
    check_exact(ember.tensor(m, device=device).nonzero(), _positions(m), "int64", device)


def test_nonzero_0d(device):
    for v, count in [(3.0, 1), (0.0, 0)]:
        t = ember.tensor(v, device=device)
        check_exact(t.nonzero(), np.zeros((count, 0), np.int64), "int64", device)
        (col,) = t.nonzero(as_tuple=True)  # PyTorch: a 0-d tensor counts as 1-d here
        check_exact(col, np.zeros(count, np.int64), "int64", device)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 2), None])
def test_count_nonzero_dims(device, dim):
    rng = np.random.default_rng(2)
    x = rand_array(rng, (3, 4, 5), "int32", "small")
    t = to_ember(x, "int32", device)
    want = np.count_nonzero(x, axis=dim).astype(np.int64)
    check_exact(ember.count_nonzero(t, dim=dim), want, "int64", device)
    check_exact(t.count_nonzero(dim), want, "int64", device)


@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((), (5,))], ids=str
)
def test_masked_select_broadcasts(device, shapes):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shapes[0]).astype(np.float32)
    m = _mask(rng, shapes[1], 0.5)
    got = ember.masked_select(ember.tensor(x, device=device), ember.tensor(m, device=device))
    b = np.broadcast_shapes(x.shape, m.shape)
    check_exact(got, np.broadcast_to(x, b)[np.broadcast_to(m, b)], "float32", device)


def test_masked_select_needs_a_bool_mask(device):
    t = ember.ones(3, device=device)
    with raises_op(ember.DTypeMismatchError, "masked_select", "must be bool", "uint8"):
        ember.masked_select(t, ember.ones(3, dtype=ember.uint8, device=device))


@pytest.mark.parametrize("name", ["float32", "int64", "bfloat16", "bool"])
def test_mask_read_leading_dims(device, name):
    if not require_dtype(device, name):
        return
    rng = np.random.default_rng(4)
    x = rand_array(rng, (5, 6, 3), name)
    t = to_ember(x, name, device)
    for k in (1, 2, 3):
        m = _mask(rng, x.shape[:k], 0.4)
        check_exact(t[ember.tensor(m, device=device)], x[m], name, device)
    check_exact(t[True], x[True], name, device)  # a 0-d mask adds a dim of 1
    check_exact(t[False], x[False], name, device)


def test_mask_write_number_row_and_rows(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    m = _mask(rng, (6,), 0.5)
    m[0] = True
    k = int(m.sum())
    cases = [
        2.5,  # a number
        np.arange(4, dtype=np.float32),  # one row for every true position
        np.arange(4, dtype=np.float32).reshape(1, 4),
        np.arange(k * 4, dtype=np.float32).reshape(k, 4),  # a row each
        np.arange(k, dtype=np.float32).reshape(k, 1),  # a row each, broadcast along
    ]
    for v in cases:
        want = x.copy()
        want[m] = v
        t = ember.tensor(x, device=device)
        t[ember.tensor(m, device=device)] = v if isinstance(v, float) else ember.tensor(v, device=device)
        check_exact(t, want, "float32", device)


def test_mask_write_full_mask_and_dtype_cast(device):
    rng = np.random.default_rng(6)
    x = rng.integers(-5, 5, (4, 5, 3)).astype(np.int64)
    m = x[..., 0] > 0
    want = x.copy()
    want[m] = np.arange(int(m.sum()) * 3).reshape(-1, 3) * 2
    t = ember.tensor(x, device=device)
    # float values into an int64 tensor take its dtype, as in PyTorch
    t[ember.tensor(m, device=device)] = ember.tensor(want[m].astype(np.float32), device=device)
    check_exact(t, want, "int64", device)
    xm = x > 0
    want = np.where(xm, -1, x)
    t = ember.tensor(x, device=device)
    t[t > 0] = -1
    check_exact(t, want, "int64", device)


def test_mask_write_into_views(device):
    """Written through views: a transposed one, whose masked dims do not merge, too."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((4, 6, 3)).astype(np.float32)
    t = ember.tensor(base, device=device)
    v = t.permute(1, 0, 2)  # (6, 4, 3), dims 0 and 1 do not merge
    m = _mask(rng, (6, 4), 0.5)
    k = int(m.sum())
    rows = np.arange(k * 3, dtype=np.float32).reshape(k, 3)
    want = base.transpose(1, 0, 2).copy()
    want[m] = rows
    v[ember.tensor(m, device=device)] = ember.tensor(rows, device=device)
    check_exact(t, want.transpose(1, 0, 2), "float32", device)
    s = t[:, ::2]  # stepped: the number form
    want = t.numpy()
    want[:, ::2][s.numpy() > 0] = 0.0
    s[s > 0] = 0.0
    check_exact(t, want, "float32", device)


def test_mask_write_value_from_the_same_tensor(device):
    x = np.arange(10, dtype=np.float32)
    t = ember.tensor(x, device=device)
    m = ember.tensor(x % 3 == 0, device=device)
    want = x.copy()
    want[x % 3 == 0] = x[::-1][: int((x % 3 == 0).sum())]
    t[m] = t.flip(0)[: int(m.sum().item())]
    check_exact(t, want, "float32", device)


def test_mask_write_bad_shapes(device):
    t = ember.zeros(5, 3, device=device)
    m = ember.tensor([True, False, True, False, False], device=device)
    with pytest.raises(ember.ShapeMismatchError) as info:
        t[m] = ember.ones(3, 3, device=device)  # two true positions, three rows
    assert "(2, 3)" in str(info.value)
    with pytest.raises(ember.ShapeMismatchError):
        t[m] = ember.ones(4, device=device)
    check_exact(t, np.zeros((5, 3), np.float32), "float32", device)  # nothing written
    with raises_op(ember.InvalidIndexError, "index", "must match the leading dims"):
        t[ember.tensor([True, False], device=device)]
    with raises_op(ember.InvalidIndexError, "index", "must match the leading dims"):
        t[ember.tensor([True, False], device=device)] = 1.0


def test_mask_write_into_broadcast_view_refused(device):
    t = ember.zeros(3, device=device).broadcast_to((4, 3))
    with raises_op(ember.InvalidArgumentError, "setitem", "share one memory location"):
        t[ember.ones(4, 3, dtype=ember.bool, device=device)] = 1.0


def test_mask_read_transfers_only_the_count():
    """A mask read on a GPU reads one int64 to the host, the count; nothing else crosses."""
    gpus = [ember.device(k) for k in ("metal", "cuda") if getattr(ember, f"{k}_is_available")()]
    if not gpus:
        pytest.skip("no GPU device on this machine (the CPU's memory is the host's)")
    for d in gpus:
        x = ember.randn(300, 70, device=d)
        m = x > 0.5
        d.synchronize()
        before = d.queue_stats()
        r = x[m]
        r2 = ember.masked_select(x, m)
        r3 = ember.nonzero(m)
        after = d.queue_stats()
        assert after["reads_to_host"] - before["reads_to_host"] == 3, (before, after)
        assert after["bytes_to_host"] - before["bytes_to_host"] == 3 * 8
        # the results stay on the device and agree with numpy
        xn, mn = x.numpy(), m.numpy()
        check_exact(r, xn[mn], "float32", d)
        check_exact(r2, xn[mn], "float32", d)
        check_exact(r3, _positions(mn), "int64", d)
        before = d.queue_stats()
        x[m] = 0.0  # a number needs no count at all
        assert d.queue_stats()["reads_to_host"] == before["reads_to_host"]
        # integer ids: their min and max come back in one read (two int64 values)
        ids = ember.tensor([3, 0, 69], device=d)
        before = d.queue_stats()
        x.index_select(1, ids)
        x[:, ids]
        after = d.queue_stats()
        assert after["reads_to_host"] - before["reads_to_host"] == 2, (before, after)
        assert after["bytes_to_host"] - before["bytes_to_host"] == 2 * 16


def test_cpu_reports_no_transfers():
    assert ember.device("cpu").queue_stats() == {}


def test_dtype_of_mask_keys(device):
    t = ember.arange(4, device=device)
    # a uint8 tensor is no mask (PyTorch deprecated it): index_select says how
    with pytest.raises(ember.InvalidArgumentError, match="must be bool"):
        t[ember.tensor([1, 0, 1, 0], dtype=ember.uint8, device=device)]
