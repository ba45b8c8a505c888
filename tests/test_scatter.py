"""scatter / scatter_add (and their in-place forms), index_add, slice_scatter and
embedding, against numpy and PyTorch's documented results."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from conftest import DEVICE_SPECS
from helpers import (
    NP_DTYPE,
    check_exact,
    check_meta,
    is_float,
    make_view,
    raises_op,
    rand_array,
    require_dtype,
    rounded,
    to_ember,
)


def scatter_ref(x, dim, ids, src, name, add):
    """numpy's result, element by element in row-major order of the index: for each
    position of the other dims its ids go in order, as every backend promises."""
    out = x.copy() if name == "bool" or is_float(name) else x.astype(np.int64)
    for pos in np.ndindex(*ids.shape):
        at = list(pos)
        at[dim] = int(ids[pos])
        at = tuple(at)
        v = src[pos]
        if not add:
            out[at] = v
        elif name == "bool":
            out[at] = out[at] or v
        elif is_float(name):
            out[at] = rounded(np.float64(out[at]) + np.float64(v), name)  # one rounding per add
        else:
            out[at] = out[at] + int(v)  # int64; the final cast wraps as each add does
    return rounded(out, name) if name == "bool" or is_float(name) else out.astype(NP_DTYPE[name])


def ids_view(ids, device, transposed):
    """The ids as an ember tensor, contiguous or a transposed (non-contiguous) view."""
    if not transposed:
        return ember.tensor(ids, device=device)
    return ember.tensor(np.ascontiguousarray(ids.transpose(1, 0, 2)), device=device).permute(
        1, 0, 2
    )


# ---- scatter and scatter_add, every dtype


@pytest.mark.parametrize("add", [False, True], ids=["scatter", "scatter_add"])
@pytest.mark.parametrize("dim", [0, -1])
def test_scatter_values(device, dtype, dim, add, rng, deterministic):
    if not require_dtype(device, dtype):
        return
    fn = ember.scatter_add if add else ember.scatter
    for layout, transposed in (("contiguous", False), ("transposed", True), ("stepped", False)):
        t, x = make_view(rng, (4, 5, 3), dtype, device, layout)
        shape = [3, 4, 3]
        shape[dim] = 6  # more ids than the dim's size: repeated ids
        ids = rng.integers(0, x.shape[dim], size=shape)
        src_t, src = make_view(rng, [s + 1 for s in shape], dtype, device, "reversed")
        got = fn(t, dim, ids_view(ids, device, transposed), src_t)
        check_exact(got, scatter_ref(x, dim, ids, src, dtype, add), dtype, device)
        np.testing.assert_array_equal(t.numpy(), x)  # the input is untouched


@pytest.mark.parametrize("add", [False, True], ids=["scatter", "scatter_add"])
@pytest.mark.parametrize("shape,dim", [((4, 5, 3), 0), ((4, 5, 3), 1), ((3, 1100), 0)])
def test_scatter_along_outer_dims_of_dense_operands(
    device, dtype, shape, dim, add, rng, deterministic
):
    # dense input, ids and src with a dim after `dim`: the writes sweep the inner positions
    # line by line (two runs of them for the widest), each position's ids still in order
    if not require_dtype(device, dtype):
        return
    fn = ember.scatter_add if add else ember.scatter
    t, x = make_view(rng, shape, dtype, device, "contiguous")
    ids_shape = list(shape)
    ids_shape[dim] = 2 * shape[dim]  # repeated ids: the last wins, or adds sum in order
    ids = rng.integers(0, shape[dim], size=ids_shape)
    src_t, src = make_view(rng, ids_shape, dtype, device, "contiguous")
    got = fn(t, dim, ember.tensor(ids, device=device), src_t)
    check_exact(got, scatter_ref(x, dim, ids, src, dtype, add), dtype, device)


def add_bound(x, dim, ids, src, name):
    """How far float adds of src into x through ids may land from the exact sum when they go
    in any order: a rounding per add of the largest partial sum a position can reach."""
    eps = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}
    mag = np.abs(x.astype(np.float64))
    count = np.zeros(x.shape)
    for pos in np.ndindex(*ids.shape):
        at = list(pos)
        at[dim] = int(ids[pos])
        mag[tuple(at)] += abs(float(src[pos]))
        count[tuple(at)] += 1
    return (count + 1) * eps[name] * mag


@pytest.mark.parametrize("dim", [0, -1])
def test_scatter_add_in_any_order(device, dtype, dim, rng):
    # the default: CUDA adds atomically (as PyTorch does), so float sums may round in any
    # order, within a rounding per add of the exact sum; integer sums are exact and wrap,
    # bool adds are a logical or; the CPU and Metal add in index order
    if not require_dtype(device, dtype):
        return
    assert not ember.are_deterministic_algorithms_enabled()
    for layout, transposed in (("contiguous", False), ("transposed", True), ("stepped", False)):
        t, x = make_view(rng, (4, 5, 3), dtype, device, layout)
        shape = [3, 4, 3]
        shape[dim] = 12  # each position takes several adds
        ids = rng.integers(0, x.shape[dim], size=shape)
        src_t, src = make_view(rng, [s + 1 for s in shape], dtype, device, "reversed")
        got = ember.scatter_add(t, dim, ids_view(ids, device, transposed), src_t)
        exact = scatter_ref(x, dim, ids, src, dtype, True)
        if not is_float(dtype):
            check_exact(got, exact, dtype, device)
            continue
        check_meta(got, exact.shape, dtype, device)
        err = np.abs(got.numpy().astype(np.float64) - exact.astype(np.float64))
        assert (err <= add_bound(x, dim % 3, ids, src, dtype)).all(), (layout, err.max())


def test_deterministic_scatter_add_repeats_bit_for_bit(device, rng, deterministic):
    # many float adds into few positions, where the order shows in the last bits: the
    # deterministic kernel gives the same bits every run, the CPU's (index order)
    ids = rng.integers(0, 3, size=(64, 4000))
    src = rng.standard_normal((64, 4000)).astype(np.float32)
    x = np.zeros((64, 3), np.float32)
    cpu = ember.scatter_add(ember.tensor(x), 1, ember.tensor(ids), ember.tensor(src)).numpy()
    for _ in range(3):
        got = ember.scatter_add(
            ember.tensor(x, device=device), 1, ember.tensor(ids, device=device),
            ember.tensor(src, device=device),
        )
        np.testing.assert_array_equal(got.numpy(), cpu)
    rows = np.ascontiguousarray(src.T)  # 4000 rows of 64, added into 3 rows
    want = ember.index_add(ember.zeros(3, 64), 0, ember.tensor(ids[0]), ember.tensor(rows))
    for _ in range(2):
        got = ember.index_add(
            ember.zeros(3, 64, device=device), 0, ember.tensor(ids[0], device=device),
            ember.tensor(rows, device=device),
        )
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_use_deterministic_algorithms_switch():
    assert ember.are_deterministic_algorithms_enabled() is False
    try:
        ember.use_deterministic_algorithms(True)
        assert ember.are_deterministic_algorithms_enabled() is True
        ember.use_deterministic_algorithms(False, warn_only=True)  # every op has one: no-op
        assert ember.are_deterministic_algorithms_enabled() is False
    finally:
        ember.use_deterministic_algorithms(False)
    for bad in (1, "yes", None):
        with pytest.raises(ember.InvalidTypeError, match="use_deterministic_algorithms"):
            ember.use_deterministic_algorithms(bad)
    with pytest.raises(ember.InvalidTypeError, match="must be bool"):
        ember.use_deterministic_algorithms(True, warn_only=0)
    assert ember.are_deterministic_algorithms_enabled() is False


@pytest.mark.parametrize("name", ["float32", "int64"])
def test_scatter_repeated_ids_into_a_wide_destination(device, name, rng):
    # few ids into a long dim: CUDA's last-writer table would dwarf the ids, so each row
    # walks its ids in order; the last repeated id still wins
    x = rand_array(rng, (2, 300000), name)
    ids = np.array([[5, 299999, 5], [7, 7, 0]])
    src = rand_array(rng, (2, 3), name)
    got = ember.scatter(to_ember(x, name, device), 1, ember.tensor(ids, device=device),
                        to_ember(src, name, device))
    check_exact(got, scatter_ref(x, 1, ids, src, name, False), name, device)


@pytest.mark.parametrize("add", [False, True], ids=["scatter_", "scatter_add_"])
def test_scatter_in_place(device, add, rng, deterministic):
    x = rand_array(rng, (3, 4), "float32")
    t = to_ember(x, "float32", device)
    ids = np.array([[2, 0, 1, 2], [2, 2, 0, 1]])
    src = rand_array(rng, (2, 4), "float32")
    method = t.scatter_add_ if add else t.scatter_
    assert method(0, ember.tensor(ids, device=device), to_ember(src, "float32", device)) is t
    check_exact(t, scatter_ref(x, 0, ids, src, "float32", add), "float32", device)


def test_scatter_in_place_into_view(device, rng):
    base = rand_array(rng, (4, 6), "int32")
    t = to_ember(base, "int32", device)
    view = t[:, ::2]  # non-contiguous: the writes land in the base tensor
    ids = np.array([[0, 2], [2, 1]])
    src = np.array([[7, 8], [9, 10]], dtype=np.int32)
    view.scatter_(1, ember.tensor(ids, device=device), to_ember(src, "int32", device))
    want = base.copy()
    want[:, ::2] = scatter_ref(base[:, ::2], 1, ids, src, "int32", False)
    check_exact(t, want, "int32", device)


def test_scatter_src_aliases_input(device):
    t = ember.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    ids = ember.tensor([[1, 0], [0, 1]], device=device)
    t.scatter_(1, ids, t)  # reads all of t before writing it
    check_exact(t, np.array([[2.0, 1.0], [3.0, 4.0]]), "float32", device)


def test_pytorch_documented_examples(device):
    src = ember.arange(1, 11, device=device).reshape(2, 5)
    zeros = ember.zeros(3, 5, dtype=ember.int64, device=device)
    got = zeros.scatter(0, ember.tensor([[0, 1, 2, 0]], device=device), src)
    check_exact(got, [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]], "int64")
    got = zeros.scatter(1, ember.tensor([[0, 1, 2], [0, 1, 4]], device=device), src)
    check_exact(got, [[1, 2, 3, 0, 0], [6, 7, 0, 0, 8], [0, 0, 0, 0, 0]], "int64")
    ones = ember.ones(2, 5, device=device)
    ids = ember.tensor([[0, 1, 2, 0, 0], [0, 1, 2, 2, 2]], device=device)
    got = ember.zeros(3, 5, device=device).scatter_add_(0, ids, ones)
    check_exact(got, [[2, 0, 0, 1, 1], [0, 2, 0, 0, 0], [0, 0, 2, 1, 1]], "float32")


def test_repeated_ids_last_write_wins_and_adds_in_order(device, deterministic):
    ids = ember.tensor([0, 0, 0, 1], device=device)
    src = ember.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    check_exact(ember.zeros(2, device=device).scatter(0, ids, src), [3.0, 4.0], "float32")
    # float16 rounds after each add: 2048 + 1 + 1 stays 2048 in index order
    half = ember.tensor([2048.0, 1.0, 1.0], dtype=ember.float16, device=device)
    got = ember.zeros(1, dtype=ember.float16, device=device).scatter_add(
        0, ember.tensor([0, 0, 0], device=device), half
    )
    check_exact(got, [2048.0], "float16")


def test_scatter_add_bool_is_logical_or(device):
    t = ember.tensor([False, True, False, False], device=device)
    src = ember.tensor([True, True, False, True, False], device=device)
    ids = ember.tensor([1, 2, 2, 2, 3], device=device)
    check_exact(t.scatter_add(0, ids, src), [False, True, True, False], "bool")


def test_integer_adds_wrap(device):
    t = ember.tensor([250, 0], dtype=ember.uint8, device=device)
    src = ember.tensor([3, 4, 5], dtype=ember.uint8, device=device)
    got = t.scatter_add(0, ember.tensor([0, 0, 1], device=device), src)
    check_exact(got, np.array([1, 5], dtype=np.uint8), "uint8")


@pytest.mark.parametrize("name,value", [("float32", 2.5), ("int64", -3), ("bool", True)])
def test_scatter_number(device, name, value):
    x = np.zeros((2, 3), dtype=NP_DTYPE[name])
    ids = np.array([[2], [0]])
    got = to_ember(x, name, device).scatter(1, ember.tensor(ids, device=device), value)
    want = x.copy()
    want[0, 2] = want[1, 0] = value
    check_exact(got, want, name, device)


def test_index_smaller_than_input_and_src(device, rng):
    x = rand_array(rng, (4, 5), "float32")
    src = rand_array(rng, (3, 6), "float32")
    ids = np.array([[3, 1], [0, 0]])  # (2, 2): only part of src and of input's dim 1
    got = ember.scatter(
        to_ember(x, "float32", device),
        0,
        ember.tensor(ids, dtype=ember.int32, device=device),
        to_ember(src, "float32", device),
    )
    check_exact(got, scatter_ref(x, 0, ids, src, "float32", False), "float32", device)


def test_scatter_zero_size(device):
    t = ember.ones(2, 3, device=device)
    empty_ids = ember.zeros(0, 3, dtype=ember.int64, device=device)
    got = t.scatter_add(0, empty_ids, ember.ones(0, 3, device=device))
    check_exact(got, np.ones((2, 3)), "float32", device)
    z = ember.zeros(0, 4, device=device)
    check_exact(
        z.scatter(1, ember.zeros(0, 2, dtype=ember.int64, device=device), 1.0),
        np.zeros((0, 4)),
        "float32",
    )


def test_scatter_empty_index_skips_shape_rules(device):
    # PyTorch's rule: an empty index writes nothing, whatever the shapes
    t = ember.ones(2, 3, device=device)
    ids = ember.zeros(0, dtype=ember.int64, device=device)
    check_exact(t.scatter(1, ids, ember.ones(5, device=device)), np.ones((2, 3)), "float32")
    with raises_op(ember.UnsupportedDTypeError, "scatter"):
        t.scatter(1, ember.zeros(0, device=device), ember.ones(5, device=device))


def test_scatter_zero_dim(device):
    t = ember.tensor(1.0, device=device)
    got = t.scatter(0, ember.tensor(0, device=device), ember.tensor(5.0, device=device))
    check_exact(got, np.array(5.0, dtype=np.float32), "float32", device)
    got = t.scatter_add(-1, ember.tensor(0, device=device), ember.tensor(5.0, device=device))
    check_exact(got, np.array(6.0, dtype=np.float32), "float32", device)


# ---- index_add


@pytest.mark.parametrize("name", ["float32", "bfloat16", "int32", "uint8", "bool", "float64"])
@pytest.mark.parametrize("dim", [0, -1])
def test_index_add(device, name, dim, rng, deterministic):
    if not require_dtype(device, name):
        return
    t, x = make_view(rng, (4, 5), name, device, "transposed")
    n = 7
    ids = rng.integers(0, x.shape[dim], size=n)
    shape = list(x.shape)
    shape[dim] = n
    source_t, source = make_view(rng, shape, name, device, "stepped")
    got = t.index_add(dim, ember.tensor(ids, device=device), source_t)
    line = [1, 1]
    line[dim] = n
    spread = np.broadcast_to(ids.reshape(line), shape)
    check_exact(got, scatter_ref(x, dim % 2, spread, source, name, True), name, device)
    if name in ("float32", "int32"):  # np.add.at adds in index order, in the dtype
        want = x.copy()
        np.add.at(want, (slice(None), ids) if dim % 2 else ids, source)
        check_exact(got, want, name)


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_index_add_in_place_along_every_dim(device, dim, layout, rng):
    """index_add_ along each dim of a 3-D tensor, in place through a contiguous or a
    transposed view: the slices lie side by side in memory or apart, and more of them than
    one block of positions. Repeated ids add up (integer values: exact in any order)."""
    x = rng.integers(-8, 8, (24, 40, 33)).astype(np.float32)
    t = ember.tensor(x, device=device)
    view, want = (t, x.copy()) if layout == "contiguous" else (t.permute(2, 1, 0),
                                                               x.copy().transpose(2, 1, 0))
    ids = rng.integers(0, want.shape[dim], 50)
    shape = list(want.shape)
    shape[dim] = 50
    src = rng.integers(-8, 8, shape).astype(np.float32)
    view.index_add_(dim, ember.tensor(ids, device=device), ember.tensor(src, device=device))
    np.add.at(want, (slice(None),) * dim + (ids,), src)
    np.testing.assert_array_equal(view.numpy(), want)


def test_index_add_alpha_and_documented_example(device):
    x = ember.ones(5, 3, device=device)
    t = ember.tensor([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]], device=device)
    ids = ember.tensor([0, 4, 2], device=device)
    assert x.index_add_(0, ids, t) is x
    want = [[2, 3, 4], [1, 1, 1], [8, 9, 10], [1, 1, 1], [5, 6, 7]]
    check_exact(x, want, "float32", device)
    check_exact(x.index_add(0, ids, t, alpha=-1), np.ones((5, 3)), "float32")
    ints = ember.zeros(3, dtype=ember.int64, device=device)
    got = ember.index_add(
        ints, 0, ember.tensor([2, 2], device=device), ember.tensor([1, 4], device=device), alpha=3
    )
    check_exact(got, [0, 0, 15], "int64", device)


def test_index_add_zero_size(device):
    t = ember.ones(2, 3, device=device)
    got = t.index_add(
        1, ember.zeros(0, dtype=ember.int64, device=device), ember.ones(2, 0, device=device)
    )
    check_exact(got, np.ones((2, 3)), "float32", device)


# ---- slice_scatter


SLICES = [
    (0, None, None, 1),
    (0, 1, 3, 1),
    (1, None, None, 2),
    (-1, -3, None, 1),
    (1, 1, 100, 2),
    (0, 3, 1, 1),
]


@pytest.mark.parametrize("dim,start,end,step", SLICES)
def test_slice_scatter(device, dim, start, end, step, rng):
    t, x = make_view(rng, (4, 5), "float32", device, "transposed")
    sl = [slice(None), slice(None)]
    sl[dim] = slice(start, end, step)
    part_shape = x[tuple(sl)].shape
    src_t, src = make_view(rng, part_shape, "float32", device, "reversed")
    got = ember.slice_scatter(t, src_t, dim=dim, start=start, end=end, step=step)
    want = x.copy()
    want[tuple(sl)] = src
    check_exact(got, want, "float32", device)
    np.testing.assert_array_equal(t.numpy(), x)


def test_slice_scatter_documented_example_and_cast(device):
    a = ember.zeros(8, 8, device=device)
    want = np.zeros((8, 8))
    want[6:] = 1
    check_exact(a.slice_scatter(ember.ones(2, 8, device=device), start=6), want, "float32")
    want = np.zeros((8, 8))
    want[:, 2:6:2] = 1
    got = a.slice_scatter(ember.ones(8, 2, device=device), dim=1, start=2, end=6, step=2)
    check_exact(got, want, "float32")
    # src of another dtype is cast, as PyTorch's copy_ into the slice does
    ints = ember.tensor([[3], [4]], device=device)
    got = ember.zeros(2, 2, device=device).slice_scatter(ints, dim=1, start=1)
    check_exact(got, [[0, 3], [0, 4]], "float32", device)


# ---- embedding


@pytest.mark.parametrize("name", ["float32", "float16", "int64", "bool"])
def test_embedding(device, name, rng):
    weight_t, weight = make_view(rng, (6, 4), name, device, "transposed")
    ids = rng.integers(0, 6, size=(2, 3))
    got = ember.embedding(ember.tensor(ids, device=device), weight_t)
    check_exact(got, weight[ids], name, device)
    ids32 = ember.tensor(ids.astype(np.int32), device=device)[:, ::2]  # non-contiguous
    check_exact(ember.embedding(ids32, weight_t), weight[ids[:, ::2]], name)


def test_embedding_zero_size_and_scalar(device):
    weight = ember.arange(6.0, device=device).reshape(3, 2)
    got = ember.embedding(ember.zeros(0, 5, dtype=ember.int64, device=device), weight)
    check_exact(got, np.zeros((0, 5, 2)), "float32", device)
    check_exact(ember.embedding(ember.tensor(2, device=device), weight), [4.0, 5.0], "float32")


# ---- bad input


def make(device):
    t = ember.zeros(3, 4, device=device)
    ids = ember.tensor([[0, 1], [2, 0]], device=device)
    src = ember.ones(2, 2, device=device)
    return t, ids, src


@pytest.mark.parametrize("op", ["scatter", "scatter_add"])
def test_scatter_shape_errors(device, op):
    t, ids, src = make(device)
    fn = getattr(ember, op)
    with raises_op(ember.ShapeMismatchError, op, "as many dims"):
        fn(t, 0, ember.tensor([0, 1], device=device), src)
    with raises_op(ember.ShapeMismatchError, op, "larger than src in dim 1"):
        fn(t, 0, ids, ember.ones(2, 1, device=device))
    with raises_op(ember.ShapeMismatchError, op, "larger than the input in dim 1"):
        fn(
            t,
            0,
            ember.zeros(1, 5, dtype=ember.int64, device=device),
            ember.ones(1, 5, device=device),
        )
    with raises_op(ember.IndexOutOfRangeError, op):
        fn(t, 2, ids, src)


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_", "scatter_add_"])
@pytest.mark.parametrize("bad", [3, -1])
def test_scatter_index_out_of_range(device, op, bad):
    t, _, src = make(device)
    ids = ember.tensor([[0, bad], [1, 2]], device=device)
    with raises_op(ember.IndexOutOfRangeError, op, f"index {bad}", "[0, 3)") as info:
        getattr(t, op)(0, ids, src)
    assert info.value.index == bad
    check_exact(t, np.zeros((3, 4)), "float32")  # nothing written


def test_scatter_dtype_errors(device):
    t, ids, src = make(device)
    with raises_op(ember.DTypeMismatchError, "scatter", "float32", "int64"):
        t.scatter(0, ids, ember.ones(2, 2, dtype=ember.int64, device=device))
    with raises_op(ember.DTypeMismatchError, "scatter_add", "float16"):
        t.scatter_add(0, ids, ember.ones(2, 2, dtype=ember.float16, device=device))
    with raises_op(ember.UnsupportedDTypeError, "scatter", "int64"):
        t.scatter(0, ember.zeros(2, 2, device=device), src)
    with raises_op(ember.UnsupportedDTypeError, "scatter_add", "mask"):
        t.scatter_add(0, ember.zeros(2, 2, dtype=ember.bool, device=device), src)
    # a float value into integers is truncated, as PyTorch's; one no integer holds is refused
    got = ember.zeros(2, dtype=ember.int64, device=device).scatter(
        0, ember.tensor([0], device=device), 1.5
    )
    assert got.dtype == ember.int64 and got.tolist() == [1, 0]
    with raises_op(ember.InvalidArgumentError, "scatter", "nan"):
        ember.zeros(2, dtype=ember.int64, device=device).scatter(
            0, ember.tensor([0], device=device), float("nan")
        )
    with raises_op(ember.InvalidTypeError, "scatter_add", "src must be a Tensor"):
        t.scatter_add(0, ids, 1.0)


def test_scatter_checks_shapes_then_devices_then_dtypes(device):
    t, ids, _ = make(device)
    bad_dtype_and_shape = ember.ones(2, 1, dtype=ember.int64, device=device)
    with raises_op(ember.ShapeMismatchError, "scatter"):
        t.scatter(0, ids, bad_dtype_and_shape)
    other = [s for s in ("cpu", "metal", "cuda") if s != device.kind and s in DEVICE_SPECS]
    if not other:
        pytest.skip("one device kind in this build: no device mismatch to make")
    far = ember.ones(2, 2, dtype=ember.int64, device=other[0])
    with raises_op(ember.DeviceMismatchError, "scatter"):
        t.scatter(0, ids, far)  # wrong device and dtype: the device is reported
    with raises_op(ember.DeviceMismatchError, "index_add"):
        t.index_add(0, ember.tensor([0, 1], device=other[0]), ember.ones(2, 4, device=device))
    with raises_op(ember.DeviceMismatchError, "embedding"):
        ember.embedding(ember.tensor([0], device=other[0]), t)
    with raises_op(ember.DeviceMismatchError, "slice_scatter"):
        t.slice_scatter(ember.ones(1, 4, device=other[0]), start=2)


def test_scatter_into_overlapping_view_refused(device):
    t = ember.zeros(1, 3, device=device).broadcast_to((2, 3))
    with raises_op(ember.InvalidArgumentError, "scatter_"):
        t.scatter_(0, ember.tensor([[0, 1, 0]], device=device), 1.0)


def test_index_add_errors(device):
    t = ember.zeros(3, 4, device=device)
    ids = ember.tensor([0, 2], device=device)
    with raises_op(ember.ShapeMismatchError, "index_add", "1-D"):
        t.index_add(0, ember.tensor([[0, 1]], device=device), ember.ones(2, 4, device=device))
    with raises_op(ember.ShapeMismatchError, "index_add", "source must have"):
        t.index_add(0, ids, ember.ones(2, 3, device=device))
    with raises_op(ember.DTypeMismatchError, "index_add_"):
        t.index_add_(0, ids, ember.ones(2, 4, dtype=ember.int64, device=device))
    with raises_op(ember.IndexOutOfRangeError, "index_add", "index 3", "[0, 3)"):
        t.index_add(0, ember.tensor([0, 3], device=device), ember.ones(2, 4, device=device))
    with raises_op(ember.IndexOutOfRangeError, "index_add", "index -1"):
        t.index_add(0, ember.tensor([-1, 0], device=device), ember.ones(2, 4, device=device))
    ints = ember.zeros(3, dtype=ember.int64, device=device)
    with raises_op(ember.InvalidArgumentError, "index_add", "float"):
        ints.index_add(
            0,
            ember.tensor([0], device=device),
            ember.ones(1, dtype=ember.int64, device=device),
            alpha=0.5,
        )


def test_slice_scatter_errors(device):
    t = ember.zeros(4, 4, device=device)
    with raises_op(ember.ShapeMismatchError, "slice_scatter", "shape of the slice"):
        t.slice_scatter(ember.ones(3, 4, device=device), start=2)
    with raises_op(ember.InvalidArgumentError, "slice_scatter", "step must be positive"):
        t.slice_scatter(ember.ones(4, 4, device=device), step=0)
    with raises_op(ember.IndexOutOfRangeError, "slice_scatter"):
        t.slice_scatter(ember.ones(4, 4, device=device), dim=2)


def test_embedding_errors(device):
    weight = ember.ones(3, 2, device=device)
    with raises_op(ember.ShapeMismatchError, "embedding", "2-D"):
        ember.embedding(ember.tensor([0], device=device), ember.ones(3, device=device))
    with raises_op(ember.IndexOutOfRangeError, "embedding", "index 3", "[0, 3)"):
        ember.embedding(ember.tensor([[0, 3]], device=device), weight)
    with raises_op(ember.IndexOutOfRangeError, "embedding", "index -2"):
        ember.embedding(ember.tensor([-2], device=device), weight)
    with raises_op(ember.UnsupportedDTypeError, "embedding", "int64"):
        ember.embedding(ember.zeros(2, device=device), weight)


@pytest.mark.parametrize("name", ["float32", "float16", "int64", "uint8"])
def test_scatter_along_long_rows(device, name, rng):
    """scatter and scatter_add along the last dim of rows with many ids (a GPU scatters a
    row in shared memory): rows within 48 KiB of shared memory, within a block's opt-in
    beyond it, and past that, ids as many as
    the positions and far fewer, repeated ids. The last repeated id wins; integer adds are
    exact, float adds within a rounding per add of the exact sum, in any order."""
    for rows, width, count in ((40, 3000, 3000), (8, 8192, 8192), (3, 20000, 6000), (6, 4000, 200)):
        x = rand_array(rng, (rows, width), name)
        ids = rng.integers(0, width, size=(rows, count))
        t = to_ember(x, name, device)
        s = to_ember(rand_array(rng, (rows, count + 1), name), name, device)[:, :count]  # a stride
        src = s.numpy()
        i = ember.tensor(ids, device=device)
        # set: each position keeps its last writer
        last = np.full((rows, width), -1)
        r = np.repeat(np.arange(rows), count)
        np.maximum.at(last, (r, ids.ravel()), np.tile(np.arange(count), rows))
        want = x.copy()
        hit = last >= 0
        want[hit] = src[np.nonzero(hit)[0], last[hit]]
        check_exact(t.scatter(1, i, s), want, name, device)
        # add
        got = t.scatter_add(1, i, s)
        exact = x.astype(np.float64 if is_float(name) else np.int64)
        np.add.at(exact, (r, ids.ravel()), src.ravel().astype(exact.dtype))
        if not is_float(name):
            check_exact(got, exact.astype(NP_DTYPE[name]), name, device)
            continue
        bound = add_bound(x, 1, ids, src, name)
        err = np.abs(got.numpy().astype(np.float64) - exact)
        assert (err <= bound).all(), (rows, width, count, err.max())
