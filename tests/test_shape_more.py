"""flip, roll, repeat, tile, chunk, split and pad against numpy (np.flip, np.roll,
np.tile, np.pad) and PyTorch's rules: values, dtypes, views, zero-size and bad input."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import LAYOUTS, check_exact, make_view, raises_op, require_dtype, to_ember


def arange_pair(shape, device, name="int64"):
    x = np.arange(int(np.prod(shape))).reshape(shape)
    return to_ember(x, name, device), x


# ---- flip


@pytest.mark.parametrize("dims", [(0,), (1,), (-1,), (0, 2), (2, 0, 1), (-3, -2)], ids=str)
def test_flip(device, dtype, dims, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 4), dtype, device, layout)
        ref = np.flip(x, axis=dims)
        check_exact(t.flip(*dims), ref, dtype, device)
        check_exact(t.flip(dims), ref, dtype)
        check_exact(ember.flip(t, dims), ref, dtype)


def test_flip_copies(device):
    t, x = arange_pair((3, 4), device)
    f = t.flip(0)
    assert f.is_contiguous()
    f += 100
    check_exact(t, x, "int64")  # PyTorch's flip copies (numpy's is a view)
    check_exact(f, np.flip(x, 0) + 100, "int64")


def test_flip_zero_size_and_scalar(device):
    t = ember.zeros(0, 3, device=device)
    assert t.flip(0, 1).shape == (0, 3)
    s = ember.tensor(2.5, device=device)
    check_exact(s.flip(()), np.float32(2.5), "float32")


def test_flip_bad_dims(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "flip", "appears twice"):
        t.flip(0, -2)
    with raises_op(ember.IndexOutOfRangeError, "flip"):
        t.flip(2)


# ---- roll


@pytest.mark.parametrize(
    "shifts,dims",
    [(1, 0), (-1, 1), (5, -1), (-7, 2), (0, 0), ((1, 2), (0, 1)), ((2, -3), (-1, 0)), (3, None)],
    ids=str,
)
def test_roll(device, dtype, shifts, dims, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 4), dtype, device, layout)
        ref = np.roll(x, shifts, axis=dims)
        check_exact(t.roll(shifts, dims), ref, dtype, device)
        check_exact(ember.roll(t, shifts=shifts, dims=dims), ref, dtype)


def test_roll_is_a_new_tensor(device):
    t, x = arange_pair((4,), device)
    r = t.roll(0)
    r += 1
    check_exact(t, x, "int64")


def test_roll_zero_size(device):
    t = ember.zeros(0, 3, device=device)
    assert t.roll(2, 0).shape == (0, 3)
    assert t.roll(1).shape == (0, 3)


def test_roll_bad_input(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "roll", "same length"):
        t.roll((1, 2), 0)
    with raises_op(ember.InvalidArgumentError, "roll", "one int"):
        t.roll((1, 2))
    with raises_op(ember.IndexOutOfRangeError, "roll"):
        t.roll(1, 5)


# ---- repeat / tile (torch.repeat is np.tile with a count for every dim)


@pytest.mark.parametrize(
    "sizes", [(1, 1, 1), (2, 1, 3), (1, 2, 1, 2), (3, 1, 1, 1, 1), (2, 0, 1)], ids=str
)
def test_repeat(device, dtype, sizes, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 2), dtype, device, layout)
        ref = np.tile(x, sizes)
        check_exact(t.repeat(*sizes), ref, dtype, device)
        check_exact(t.repeat(sizes), ref, dtype)


def test_repeat_copies_and_scalars(device):
    t, x = arange_pair((2,), device)
    r = t.repeat(3)
    r += 10
    check_exact(t, x, "int64")
    check_exact(ember.tensor(7, device=device).repeat(2, 2), np.full((2, 2), 7), "int64")
    assert ember.zeros(0, 2, device=device).repeat(3, 2).shape == (0, 4)


def test_repeat_bad_input(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "repeat", "at least one count per dim"):
        t.repeat(2)
    with raises_op(ember.InvalidArgumentError, "repeat", ">= 0"):
        t.repeat(2, -1)


# ---- repeat_interleave (np.repeat: each element in turn)


@pytest.mark.parametrize("repeats, dim", [(2, None), (3, 0), (2, -1), (0, 1), (1, 2)], ids=str)
def test_repeat_interleave(device, rng, repeats, dim):
    for dtype, layout in (("float32", "transposed"), ("int32", "stepped"), ("bool", "reversed")):
        t, x = make_view(rng, (2, 3, 2), dtype, device, layout)
        ref = np.repeat(x, repeats, axis=dim)
        check_exact(ember.repeat_interleave(t, repeats, dim), ref, dtype, device)
        check_exact(t.repeat_interleave(repeats, dim=dim), ref, dtype)


def test_repeat_interleave_zero_size_and_scalars(device):
    assert ember.repeat_interleave(ember.zeros(0, 3, device=device), 2, 1).shape == (0, 6)
    assert ember.repeat_interleave(ember.zeros(2, 0, device=device), 2).shape == (0,)
    check_exact(ember.tensor(7, device=device).repeat_interleave(3), np.full(3, 7), "int64")


def test_repeat_interleave_bad_input(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "repeat_interleave", ">= 0", "-1"):
        t.repeat_interleave(-1)
    with pytest.raises(ember.IndexOutOfRangeError, match="repeat_interleave"):
        t.repeat_interleave(2, dim=2)
    with raises_op(ember.InvalidTypeError, "repeat_interleave", "integer"):
        ember.repeat_interleave(t, 1.5)


@pytest.mark.parametrize("reps", [(2,), (1, 3), (2, 1, 2), (0,), (2, 2, 2, 2)], ids=str)
def test_tile(device, reps, rng):
    for layout in LAYOUTS:
        t, x = make_view(rng, (3, 2), "float32", device, layout)
        ref = np.tile(x, reps)
        check_exact(t.tile(*reps), ref, "float32", device)
        check_exact(ember.tile(t, reps), ref, "float32")


def test_tile_bad_input(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "tile", ">= 0"):
        t.tile(-1)


# ---- chunk / split: views, PyTorch's part sizes


@pytest.mark.parametrize(
    "n,chunks,sizes",
    # PyTorch: parts of ceil(n / chunks), the last shorter; so fewer parts than asked
    # when ceil rounds up enough (6 into 4 -> three parts of 2)
    [(10, 3, [4, 4, 2]), (5, 3, [2, 2, 1]), (6, 4, [2, 2, 2]), (3, 5, [1, 1, 1]), (4, 1, [4])],
    ids=str,
)
def test_chunk(device, n, chunks, sizes):
    t, x = arange_pair((2, n), device)
    parts = t.chunk(chunks, 1)
    assert isinstance(parts, tuple)
    assert [p.shape[1] for p in parts] == sizes
    refs = np.split(x, np.cumsum(sizes)[:-1], axis=1)
    for p, r in zip(parts, refs):
        check_exact(p, r, "int64", device)
    assert [p.shape for p in ember.chunk(t, chunks, dim=-1)] == [p.shape for p in parts]


def test_chunk_zero_size_gives_chunks_parts(device):
    parts = ember.zeros(0, 2, device=device).chunk(3)
    assert [p.shape for p in parts] == [(0, 2)] * 3


def test_chunk_parts_are_views(device):
    t, x = arange_pair((6, 2), device)
    a, b = t.chunk(2)
    b += 100
    x[3:] += 100
    check_exact(t, x, "int64")
    assert a.is_contiguous()


def test_chunk_bad_input(device):
    t, _ = arange_pair((4,), device)
    with raises_op(ember.InvalidArgumentError, "chunk", "> 0"):
        t.chunk(0)
    with raises_op(ember.InvalidArgumentError, "chunk", "at least 1 dim"):
        ember.tensor(1.0, device=device).chunk(1)
    with raises_op(ember.IndexOutOfRangeError, "chunk"):
        t.chunk(2, 1)


@pytest.mark.parametrize(
    "arg,sizes",
    [
        (4, [4, 4, 2]),
        (5, [5, 5]),
        (20, [10]),
        ([3, 7], [3, 7]),
        ([0, 10], [0, 10]),
        ((2, 8), [2, 8]),
    ],
    ids=str,
)
def test_split(device, arg, sizes, rng):
    for layout in LAYOUTS:
        t, x = make_view(rng, (10, 3), "float32", device, layout)
        parts = t.split(arg)
        assert isinstance(parts, tuple)
        assert [p.shape[0] for p in parts] == sizes
        for p, r in zip(parts, np.split(x, np.cumsum(sizes)[:-1], axis=0)):
            check_exact(p, r, "float32", device)
    t, x = make_view(rng, (3, 10), "float32", device, "transposed")
    for p, r in zip(ember.split(t, arg, dim=-1), np.split(x, np.cumsum(sizes)[:-1], axis=1)):
        check_exact(p, r, "float32")


def test_split_views_and_zero_size(device):
    t, x = arange_pair((5,), device)
    a, b = t.split([2, 3])
    a *= 0
    x[:2] = 0
    check_exact(t, x, "int64")
    assert [p.shape for p in ember.zeros(0, device=device).split(3)] == [(0,)]
    assert [p.shape for p in ember.zeros(0, device=device).split(0)] == [(0,)]


def test_split_bad_input(device):
    t, _ = arange_pair((5,), device)
    with raises_op(ember.InvalidArgumentError, "split", "sum to 4", "size 5"):
        t.split([1, 3])
    with raises_op(ember.InvalidArgumentError, "split", ">= 0"):
        t.split([6, -1])
    with raises_op(ember.InvalidArgumentError, "split", "split_size must be positive"):
        t.split(0)
    with raises_op(ember.InvalidArgumentError, "split", "split_size must be positive"):
        t.split(-2)
    with raises_op(ember.InvalidTypeError, "split"):
        t.split(1.5)


# ---- pad (torch.nn.functional.pad): pairs from the last dim backwards


def pad_width(ndim, pad):
    width = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        width[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return width


def np_constant_pad(x, pad, value):
    """np.pad with negative widths cropping, as PyTorch's constant pad does."""
    width = pad_width(x.ndim, pad)
    idx = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(width))
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in width]
    return np.pad(x[idx], pos, mode="constant", constant_values=value)


@pytest.mark.parametrize(
    "pad", [(1, 2), (0, 0), (2, 0, 0, 3), (1, 1, 1, 1, 1, 1), (-1, 2), (1, -2, -1, 1)], ids=str
)
def test_pad_constant(device, dtype, pad, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 4), dtype, device, layout)
        check_exact(ember.pad(t, pad), np_constant_pad(x, pad, 0), dtype, device)
        check_exact(ember.pad(t, pad, value=7), np_constant_pad(x, pad, 7), dtype)


NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(1, 2), (0, 3), (2, 1, 1, 0), (1, 1, 2, 2, 1, 0)], ids=str)
def test_pad_modes(device, dtype, mode, pad, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 4), dtype, device, layout)
        ref = np.pad(x, pad_width(3, pad), mode=NP_MODE[mode])
        check_exact(ember.pad(t, pad, mode=mode), ref, dtype, device)


def test_pad_zero_size_and_copies(device):
    t = ember.zeros(0, 3, device=device)
    check_exact(ember.pad(t, (1, 1), value=2.0), np.zeros((0, 5)), "float32")
    check_exact(ember.pad(t, (0, 0, 1, 0), value=2.0), np.full((1, 3), 2.0), "float32")
    s, x = arange_pair((3,), device)
    p = ember.pad(s, (0, 0), mode="reflect")
    p += 1
    check_exact(s, x, "int64")


def test_pad_bad_input(device):
    t, _ = arange_pair((2, 3), device)
    with raises_op(ember.InvalidArgumentError, "pad", "even length"):
        ember.pad(t, (1,))
    with raises_op(ember.InvalidArgumentError, "pad", "more than two per dim"):
        ember.pad(t, (1, 1, 1, 1, 1, 1))
    with raises_op(ember.InvalidArgumentError, "pad", "less than the size 3"):
        ember.pad(t, (3, 0), mode="reflect")
    with raises_op(ember.InvalidArgumentError, "pad", "negative size"):
        ember.pad(t, (-2, -2))
    with raises_op(ember.InvalidArgumentError, "pad", "no negative padding"):
        ember.pad(t, (-1, 1), mode="replicate")
    with raises_op(ember.InvalidArgumentError, "pad", "takes no value"):
        ember.pad(t, (1, 1), mode="reflect", value=1.0)
    with raises_op(ember.InvalidArgumentError, "pad", "'constant', 'reflect'"):
        ember.pad(t, (1, 1), mode="mirror")
    with raises_op(ember.InvalidArgumentError, "pad", "needs at least one element"):
        ember.pad(ember.zeros(2, 0, device=device), (1, 1), mode="replicate")
    with raises_op(ember.InvalidArgumentError, "pad", "without overflow", "uint8"):
        ember.pad(ember.zeros(2, dtype=ember.uint8, device=device), (1, 1), value=300)
    with raises_op(ember.InvalidTypeError, "pad"):
        ember.pad(t, (1, 1), value="x")
