"""Shape ops against numpy: reshape, view, transpose, permute, t, narrow, squeeze,
unsqueeze, flatten, broadcast_to, expand, contiguous, cat, stack — values, strides,
and which of them are views."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    LAYOUTS,
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
    x = np.arange(int(np.prod(shape))).reshape(shape)
    return to_ember(x, name, device), x


def elem_strides(arr):
    return tuple(s // arr.itemsize for s in arr.strides)


# ---- reshape / view


@pytest.mark.parametrize(
    "new",
    [(6, 4), (24,), (-1,), (2, -1), (-1, 3, 2), (4, 3, 2), (1, 24, 1), (2, 3, 4)],
    ids=str,
)
def test_reshape(device, dtype, new, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3, 4), dtype, device, layout)
        check_exact(t.reshape(*new), x.reshape(new), dtype, device)
        check_exact(t.reshape(new), x.reshape(new), dtype)


def test_reshape_zero_size_and_scalars(device):
    t = ember.zeros(0, 4, device=device)
    assert t.reshape(4, 0).shape == (4, 0)
    assert t.reshape(-1).shape == (0,)
    s = ember.tensor(3.0, device=device)
    assert s.reshape(1, 1).shape == (1, 1)
    assert s.reshape(-1).shape == (1,)
    assert ember.ones(1, 1, device=device).reshape(()).shape == ()


def test_reshape_of_contiguous_is_a_view(device):
    t, x = arange_pair((2, 6), device)
    r = t.reshape(3, 4)
    r += 100
    check_exact(t, x + 100, "int64")


def test_reshape_of_non_contiguous_copies_values(device):
    t, x = arange_pair((3, 4), device)
    r = t.t().reshape(12)
    check_exact(r, x.T.reshape(12), "int64")
    assert r.is_contiguous()


def test_view(device):
    t, x = arange_pair((4, 6), device)
    v = t.view(2, 12)
    check_exact(v, x.reshape(2, 12), "int64")
    check_exact(t.view(-1), x.reshape(-1), "int64")
    v += 1
    check_exact(t, x + 1, "int64")  # shares storage
    # a narrowed view whose rows stay dense can still be viewed
    n = t.narrow(0, 1, 2)
    check_exact(n.view(12), (x + 1)[1:3].reshape(12), "int64")
    # splitting a dim of a transposed tensor needs no copy either
    check_exact(t.t().view(3, 2, 4), (x + 1).T.reshape(3, 2, 4), "int64")


def test_view_raises_when_a_copy_is_needed(device):
    t = ember.zeros(4, 6, device=device)
    with pytest.raises(ember.InvalidArgumentError) as info:
        t.t().view(24)
    assert "reshape" in str(info.value) or "contiguous" in str(info.value)
    with pytest.raises(ember.InvalidArgumentError):
        t[:, 1:4].view(12)
    assert t.t().contiguous().view(24).shape == (24,)


# ---- transpose / permute / t / T


@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (0, 2), (-1, 0), (-1, -2), (1, 1)], ids=str)
def test_transpose(device, dtype, dims, rng):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (2, 3, 4), dtype)
    t = to_ember(x, dtype, device)
    got = t.transpose(*dims)
    ref = np.swapaxes(x, *dims)
    check_exact(got, ref, dtype, device)
    assert got.strides == elem_strides(ref)
    check_exact(ember.transpose(t, *dims), ref, dtype)


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (-1, 0, 1), (2, 1, 0)], ids=str)
def test_permute(device, order):
    t, x = arange_pair((2, 3, 4), device)
    got = t.permute(*order)
    ref = np.transpose(x, order)
    check_exact(got, ref, "int64")
    assert got.strides == elem_strides(ref)
    check_exact(t.permute(order), ref, "int64")


def test_t_and_T(device):
    t, x = arange_pair((3, 5), device)
    check_exact(t.t(), x.T, "int64")
    check_exact(t.T, x.T, "int64")
    assert not t.t().is_contiguous()
    assert t.t().t().is_contiguous()


# ---- narrow


@pytest.mark.parametrize(
    "args", [(0, 0, 2), (0, 1, 3), (1, 2, 0), (1, 0, 5), (-1, 1, 2), (0, -2, 2), (1, 5, 0)], ids=str
)
def test_narrow(device, args):
    t, x = arange_pair((4, 5), device)
    dim, start, length = args
    size = x.shape[dim]
    s = start + size if start < 0 else start
    idx = [slice(None)] * 2
    idx[dim] = slice(s, s + length)
    check_exact(t.narrow(dim, start, length), x[tuple(idx)], "int64")


def test_narrow_is_a_view(device):
    t, x = arange_pair((4, 5), device)
    n = t.narrow(1, 1, 3)
    n *= 0
    x[:, 1:4] = 0
    check_exact(t, x, "int64")


# ---- squeeze / unsqueeze / flatten


def test_squeeze(device):
    t, x = arange_pair((1, 3, 1, 2, 1), device)
    check_exact(t.squeeze(), x.squeeze(), "int64")
    check_exact(t.squeeze(0), x.squeeze(0), "int64")
    check_exact(t.squeeze(2), x.squeeze(2), "int64")
    check_exact(t.squeeze(-1), x.squeeze(-1), "int64")
    check_exact(ember.squeeze(t), x.squeeze(), "int64")
    s = ember.ones(1, 1, device=device)
    assert s.squeeze().shape == ()


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_unsqueeze(device, dim):
    t, x = arange_pair((3, 2), device)
    check_exact(t.unsqueeze(dim), np.expand_dims(x, dim), "int64")


@pytest.mark.parametrize("se", [(0, -1), (1, 2), (0, 1), (-2, -1), (2, 2), (1, -1)], ids=str)
def test_flatten(device, se):
    t, x = arange_pair((2, 3, 4), device)
    s, e = se
    s_, e_ = s % 3, e % 3
    new = x.shape[:s_] + (int(np.prod(x.shape[s_ : e_ + 1])),) + x.shape[e_ + 1 :]
    check_exact(t.flatten(s, e), x.reshape(new), "int64")
    # of a non-contiguous view
    y = x.transpose(2, 1, 0)
    new = y.shape[:s_] + (int(np.prod(y.shape[s_ : e_ + 1])),) + y.shape[e_ + 1 :]
    check_exact(t.transpose(0, 2).flatten(s, e), y.reshape(new), "int64")


def test_flatten_defaults(device):
    t, x = arange_pair((2, 3, 4), device)
    check_exact(t.flatten(), x.reshape(-1), "int64")
    check_exact(ember.flatten(t, 1), x.reshape(2, 12), "int64")
    assert ember.tensor(5, device=device).flatten().shape == (1,)


# ---- broadcast_to / expand


@pytest.mark.parametrize(
    "case",
    [((3, 1), (3, 4)), ((1,), (2, 3)), ((), (2, 2)), ((2, 1, 3), (4, 2, 5, 3)), ((3,), (0, 3))],
    ids=str,
)
def test_broadcast_to(device, dtype, case, rng):
    if not require_dtype(device, dtype):
        return
    src, dst = case
    x = rand_array(rng, src, dtype)
    t = to_ember(x, dtype, device)
    got = t.broadcast_to(dst)
    ref = np.broadcast_to(x, dst)
    check_exact(got, ref, dtype, device)
    assert got.strides == elem_strides(ref)
    check_exact(ember.broadcast_to(t, dst), ref, dtype)


def test_expand(device):
    t, x = arange_pair((3, 1), device)
    check_exact(t.expand(3, 4), np.broadcast_to(x, (3, 4)), "int64")
    check_exact(t.expand(2, 3, 4), np.broadcast_to(x, (2, 3, 4)), "int64")
    check_exact(t.expand(-1, 5), np.broadcast_to(x, (3, 5)), "int64")
    check_exact(t.expand((2, -1, 4)), np.broadcast_to(x, (2, 3, 4)), "int64")


def test_broadcast_view_reads_shared_values(device):
    t, x = arange_pair((1, 3), device)
    b = t.expand(4, 3)
    t += 10
    check_exact(b, np.broadcast_to(x + 10, (4, 3)), "int64")


# ---- contiguous / clone


def test_contiguous(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (3, 4), dtype, device, layout)
        c = t.contiguous()
        assert c.is_contiguous()
        check_exact(c, x, dtype, device)
        assert c.strides == (4, 1)


def test_contiguous_of_view_is_a_copy(device):
    t, x = arange_pair((3, 4), device)
    c = t.t().contiguous()
    c += 1
    check_exact(t, x, "int64")


def test_clone_is_a_copy(device):
    t, x = arange_pair((3, 4), device)
    c = t.clone()
    c += 1
    check_exact(t, x, "int64")
    check_exact(c, x + 1, "int64")


def test_strides_and_contiguity(device):
    t, x = arange_pair((2, 3, 4), device)
    assert t.strides == (12, 4, 1)
    assert t.is_contiguous()
    assert t.ndim == 3 and t.size() == (2, 3, 4) and t.numel() == 24 and len(t) == 2
    s = t[:, ::2, 1:]
    assert s.strides == elem_strides(x[:, ::2, 1:])
    assert not s.is_contiguous()
    r = t[::-1]
    assert r.strides == elem_strides(x[::-1])
    assert t.transpose(0, 1).strides == (4, 12, 1)


# ---- cat / stack


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_cat(device, dtype, dim, rng):
    if not require_dtype(device, dtype):
        return
    parts, arrays = [], []
    for i, layout in enumerate(["contiguous", "transposed", "stepped", "expanded"]):
        shape = [2, 3, 4]
        shape[dim] = i  # includes a zero-size part
        t, x = make_view(rng, shape, dtype, device, layout)
        parts.append(t)
        arrays.append(x)
    check_exact(ember.cat(parts, dim=dim), np.concatenate(arrays, axis=dim), dtype, device)
    check_exact(ember.cat(tuple(parts), dim), np.concatenate(arrays, axis=dim), dtype)


def test_cat_single_and_default_dim(device):
    t, x = arange_pair((2, 3), device)
    check_exact(ember.cat([t]), x, "int64")
    check_exact(ember.cat([t, t]), np.concatenate([x, x]), "int64")
    c = ember.cat([t])
    c += 1
    check_exact(t, x, "int64")  # cat copies


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(device, dtype, dim, rng):
    if not require_dtype(device, dtype):
        return
    parts, arrays = [], []
    for layout in ["contiguous", "transposed", "reversed"]:
        t, x = make_view(rng, (3, 4), dtype, device, layout)
        parts.append(t)
        arrays.append(x)
    check_exact(ember.stack(parts, dim=dim), np.stack(arrays, axis=dim), dtype, device)


def test_stack_default_dim(device):
    a, x = arange_pair((2,), device)
    check_exact(ember.stack([a, a + 1]), np.stack([x, x + 1]), "int64")


# ---- random chains of shape ops, checked against numpy at every step


@st.composite
def shape_chains(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    steps = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=6))
    return shape, steps


def apply_step(t, x, code):
    """One shape op chosen by `code`, applied to both; returns the new pair."""
    nd = x.ndim
    which = code % 9
    a = code // 9
    if which == 0:  # reshape with -1
        if nd == 0 or x.size == 0:
            return t.reshape(-1), x.reshape(-1)
        n = x.size
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = divisors[a % len(divisors)]
        return t.reshape(d, -1), x.reshape(d, -1)
    if which == 1 and nd >= 2:  # transpose
        i, j = a % nd, (a // nd) % nd
        return t.transpose(i, j), np.swapaxes(x, i, j)
    if which == 2 and nd >= 1:  # stepped / reversed slice
        d = a % nd
        step = [1, 2, 3, -1, -2][(a // nd) % 5]
        start = (a // 7) % (x.shape[d] + 1)
        idx = [slice(None)] * nd
        idx[d] = slice(start, None, step) if step > 0 else slice(None, None, step)
        return t[tuple(idx)], x[tuple(idx)]
    if which == 3 and nd >= 1:  # narrow
        d = a % nd
        size = x.shape[d]
        start = (a // 5) % (size + 1)
        length = (a // 11) % (size - start + 1)
        idx = [slice(None)] * nd
        idx[d] = slice(start, start + length)
        return t.narrow(d, start, length), x[tuple(idx)]
    if which == 4 and nd < 5:  # unsqueeze
        d = a % (nd + 1)
        return t.unsqueeze(d), np.expand_dims(x, d)
    if which == 5:  # squeeze everything
        return t.squeeze(), x.squeeze()
    if which == 6 and nd >= 1:  # permute
        order = list(np.random.default_rng(a).permutation(nd))
        return t.permute(*order), np.transpose(x, order)
    if which == 7 and nd >= 1:  # flatten
        return t.flatten(), x.reshape(-1)
    if which == 8:  # view when numpy can view too
        if x.size > 0 and t.is_contiguous():
            return t.view(-1), x.reshape(-1)
        return t.contiguous(), np.array(x, order="C")
    return t, x


@settings(max_examples=60)
@given(chain=shape_chains())
def test_shape_op_chains(device, chain):
    shape, steps = chain
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = ember.tensor(x, device=device)
    for code in steps:
        t, x = apply_step(t, x, code)
        assert t.shape == x.shape
        np.testing.assert_array_equal(t.numpy(), x)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "uint8"])
def test_shape_ops_small_dtypes(device, name):
    if not require_dtype(device, name):
        return
    x = np.arange(24).reshape(2, 3, 4) % 50
    t = ember.tensor(x, dtype=edtype(name), device=device)
    check_exact(t.permute(2, 0, 1).reshape(4, 6), x.transpose(2, 0, 1).reshape(4, 6), name)
    check_exact(t[:, ::-1, 1::2].contiguous(), x[:, ::-1, 1::2], name)


def test_size_is_pytorchs_method(device):
    t = ember.zeros(2, 3, 4, device=device)
    s = t.size()
    assert isinstance(s, ember.Size) and isinstance(s, tuple) and s == t.shape == (2, 3, 4)
    assert repr(s) == "ember.Size([2, 3, 4])" and s.numel() == 24 == t.numel()
    assert [t.size(d) for d in (0, 1, 2, -1, -3)] == [2, 3, 4, 4, 2]
    assert t.size(np.int64(1)) == 3 and t.size(dim=2) == 4
    for bad in (3, -4):
        with pytest.raises(ember.IndexOutOfRangeError) as info:
            t.size(bad)
        assert info.value.op == "size" and "-3 to 2" in str(info.value)
    for bad in (1.0, "a", True):
        with pytest.raises(ember.InvalidTypeError):
            t.size(bad)
    z = ember.tensor(5.0, device=device)
    assert z.size() == () and z.size().numel() == 1
    with pytest.raises(ember.IndexOutOfRangeError):
        z.size(0)
