"""numpy's spellings on ember ops (DESIGN §4): axis= as an alias of dim=, and the
reductions taking the keywords numpy's functions pass, so np.sum(t, axis=1),
np.mean(t), np.argmax(t) call ember's op and give an ember Tensor on t's device."""

from __future__ import annotations

import ember
import numpy as np
import pytest

DIM_REDUCTIONS = ["sum", "mean", "amax", "amin"]


@pytest.fixture
def pair(device, rng):
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    return a, ember.tensor(a, device=device)


@pytest.mark.parametrize("name", DIM_REDUCTIONS)
@pytest.mark.parametrize("axis", [0, -1, (0, 2)])
def test_axis_is_dim_for_the_reductions(pair, name, axis):
    a, t = pair
    expected = getattr(np, name)(a, axis=axis)
    for r in (getattr(t, name)(axis=axis), getattr(ember, name)(t, axis=axis)):
        assert r.dtype == ember.float32 and r.shape == expected.shape
        np.testing.assert_allclose(r.numpy(), expected, rtol=1e-5, atol=1e-5)
    for kept in (getattr(t, name)(axis=axis, keepdim=True), getattr(t, name)(axis, keepdims=True)):
        assert kept.shape == getattr(np, name)(a, axis=axis, keepdims=True).shape
    assert getattr(t, name)(axis, keepdims=False).shape == expected.shape


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_axis_is_dim_for_argmax_argmin(pair, name):
    a, t = pair
    for axis in (0, 1, -1):
        r = getattr(t, name)(axis=axis)
        assert r.dtype == ember.int64
        np.testing.assert_array_equal(r.numpy(), getattr(np, name)(a, axis=axis))


@pytest.mark.parametrize("name", ["max", "min"])
def test_axis_is_dim_for_max_min(pair, name):
    a, t = pair
    values, indices = getattr(t, name)(axis=1)
    np.testing.assert_array_equal(values.numpy(), getattr(np, f"a{name}")(a, axis=1))
    np.testing.assert_array_equal(indices.numpy(), getattr(np, f"arg{name}")(a, axis=1))
    assert getattr(t, name)(axis=1).values.shape == (3, 5)


def test_axis_is_dim_for_softmax_cat_stack_squeeze(device, pair):
    a, t = pair
    e = np.exp(a - a.max(axis=0, keepdims=True))
    np.testing.assert_allclose(t.softmax(axis=0).numpy(), e / e.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(
        ember.log_softmax(t, axis=1).numpy(), ember.log_softmax(t, dim=1).numpy()
    )
    np.testing.assert_array_equal(ember.cat([t, t], axis=2).numpy(), np.concatenate([a, a], 2))
    np.testing.assert_array_equal(ember.stack([t, t], axis=1).numpy(), np.stack([a, a], 1))
    one = ember.ones((3, 1, 2), device=device)
    assert one.squeeze(axis=1).shape == (3, 2)
    # the defaults are unchanged: the last dim for softmax, 0 for cat and stack
    np.testing.assert_array_equal(t.softmax().numpy(), t.softmax(dim=-1).numpy())
    assert ember.cat([t, t]).shape == (6, 4, 5) and ember.stack([t, t]).shape == (2, 3, 4, 5)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: t.sum(dim=0, axis=1),
        lambda t: ember.mean(t, dim=0, axis=1),
        lambda t: t.amax(0, axis=0),
        lambda t: t.argmax(dim=0, axis=1),
        lambda t: t.max(dim=0, axis=1),
        lambda t: t.softmax(dim=0, axis=0),
        lambda t: ember.cat([t, t], dim=0, axis=1),
        lambda t: t.squeeze(dim=0, axis=0),
        lambda t: t.sum(0, True, keepdims=True),
        lambda t: t.max(0, keepdim=True, keepdims=False),
    ],
)
def test_dim_and_axis_together_is_an_error_naming_the_op(pair, call):
    _, t = pair
    with pytest.raises(ember.InvalidArgumentError, match="got both") as info:
        call(t)
    assert str(info.value).split(":")[0] in {
        "sum",
        "mean",
        "max",
        "argmax",
        "softmax",
        "cat",
        "squeeze",
    }


def test_numpy_functions_call_the_ember_reduction(device, pair):
    a, t = pair
    cases = [
        (np.sum, {"axis": 1}),
        (np.sum, {}),
        (np.mean, {"axis": (0, 2)}),
        (np.amax, {}),
        (np.argmax, {"axis": 2}),
        (np.argmin, {}),
        (np.sum, {"axis": 0, "keepdims": True}),
    ]
    for fn, kw in cases:
        r, expected = fn(t, **kw), fn(a, **kw)
        assert r.shape == expected.shape, fn.__name__
        assert isinstance(r, ember.Tensor), fn.__name__
        assert r.device.same_device(device)  # computed where t lives, never on the host
        np.testing.assert_allclose(r.numpy(), expected, rtol=1e-5, atol=1e-5)
    values, indices = np.max(t, axis=0)  # as for torch tensors: Tensor.max's named pair
    np.testing.assert_array_equal(values.numpy(), a.max(axis=0))
    np.testing.assert_array_equal(indices.numpy(), a.argmax(axis=0))


def test_sum_and_mean_take_dtype(device):
    a = np.array([[1, 2, 3], [4, 5, 250]], dtype=np.uint8)
    t = ember.tensor(a, device=device)
    r = t.sum(dim=1, dtype=ember.float32)  # cast first: no uint8 wrap-around
    assert r.dtype == ember.float32
    np.testing.assert_array_equal(r.numpy(), a.sum(axis=1, dtype=np.float32))
    assert t.sum(dtype="int64").dtype == ember.int64
    m = ember.mean(t, axis=0, dtype=ember.float32)
    assert m.dtype == ember.float32
    np.testing.assert_allclose(m.numpy(), a.mean(axis=0, dtype=np.float32))
    np.testing.assert_allclose(np.mean(t, dtype=np.float32).item(), a.mean(dtype=np.float32))


def test_reductions_write_into_out(device, pair):
    a, t = pair
    out = ember.empty((3, 5), device=device)
    assert t.sum(1, out=out) is out
    np.testing.assert_allclose(out.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert np.sum(t, axis=1, out=out) is out
    ints = ember.tensor(np.arange(15).reshape(3, 5), device=device)
    into_float = ember.empty(3, device=device)
    ember.amax(ints, dim=1, out=into_float)  # an int64 result fits into float32
    np.testing.assert_array_equal(into_float.numpy(), np.array([4, 9, 14], np.float32))
    idx = ember.empty((3, 5), dtype=ember.int64, device=device)
    assert t.argmin(1, out=idx) is idx
    np.testing.assert_array_equal(idx.numpy(), a.argmin(axis=1))
    values, indices = ember.empty((3, 5), device=device), ember.empty_like(idx)
    r = t.max(dim=1, out=(values, indices))
    assert r.values is values and r.indices is indices
    np.testing.assert_array_equal(values.numpy(), a.max(axis=1))
    np.testing.assert_array_equal(indices.numpy(), a.argmax(axis=1))


def test_reduction_out_of_the_wrong_shape_or_dtype_is_refused(device, pair):
    _, t = pair
    with pytest.raises(ember.ShapeMismatchError, match="sum") as info:
        t.sum(1, out=ember.empty((3, 4), device=device))
    assert "(3, 5)" in str(info.value) and "(3, 4)" in str(info.value)
    with pytest.raises(ember.DTypeMismatchError, match="mean") as info:
        t.mean(1, out=ember.empty((3, 5), dtype=ember.int64, device=device))
    assert "float32" in str(info.value) and "int64" in str(info.value)
    with pytest.raises(ember.InvalidTypeError, match="out= must be a Tensor"):
        t.sum(out=np.zeros(()))
    with pytest.raises(ember.InvalidTypeError, match="pair"):
        t.max(dim=1, out=ember.empty((3, 5), device=device))


@pytest.mark.parametrize("name", ["var", "std", "prod", "logsumexp", "norm"])
def test_axis_and_keepdims_on_the_composed_reductions(pair, name):
    a, t = pair
    r = getattr(t, name)(axis=(0, 2), keepdims=True)
    same = getattr(t, name)(dim=(0, 2), keepdim=True)
    assert r.shape == (1, 4, 1)
    np.testing.assert_array_equal(r.numpy(), same.numpy())
    if name in ("var", "std", "prod"):  # numpy's own (ddof=1: PyTorch's default correction)
        ref = getattr(np, name)(a, axis=1, **({"ddof": 1} if name != "prod" else {}))
        np.testing.assert_allclose(getattr(ember, name)(t, axis=1).numpy(), ref, rtol=1e-4)
    with pytest.raises(ember.InvalidArgumentError, match="got both"):
        getattr(t, name)(dim=0, axis=0)


def test_axis_is_dim_for_the_scans_and_sorts(pair):
    a, t = pair
    np.testing.assert_allclose(t.cumsum(axis=1).numpy(), np.cumsum(a, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ember.cumprod(t, axis=-1).numpy(), np.cumprod(a, axis=-1), rtol=1e-5)
    np.testing.assert_array_equal(t.sort(axis=0).values.numpy(), np.sort(a, axis=0))
    np.testing.assert_array_equal(ember.sort(t, axis=1).indices.numpy(), np.argsort(a, 1, "stable"))
    np.testing.assert_array_equal(t.argsort(axis=0).numpy(), np.argsort(a, axis=0, kind="stable"))
    np.testing.assert_array_equal(ember.argsort(t).numpy(), np.argsort(a, kind="stable"))
    top = t.topk(2, axis=1)
    np.testing.assert_array_equal(top.values.numpy(), -np.sort(-a, axis=1)[:, :2])
    assert ember.topk(t, 3).values.shape == (3, 4, 3)  # the default is still the last dim


def test_axis_is_dim_for_flip_roll_chunk_split(pair):
    a, t = pair
    np.testing.assert_array_equal(t.flip(axis=(0, 2)).numpy(), np.flip(a, axis=(0, 2)))
    np.testing.assert_array_equal(ember.flip(t, axis=1).numpy(), np.flip(a, axis=1))
    np.testing.assert_array_equal(t.flip(0).numpy(), np.flip(a, 0))
    np.testing.assert_array_equal(t.roll(2, axis=1).numpy(), np.roll(a, 2, axis=1))
    np.testing.assert_array_equal(
        ember.roll(t, (1, -1), axis=(0, 2)).numpy(), np.roll(a, (1, -1), (0, 2))
    )
    parts = t.chunk(2, axis=-1)
    assert [p.shape for p in parts] == [(3, 4, 3), (3, 4, 2)]
    np.testing.assert_array_equal(parts[1].numpy(), a[..., 3:])
    assert [p.shape for p in ember.chunk(t, 3)] == [(1, 4, 5)] * 3  # dim 0 by default
    sizes = [p.shape for p in t.split(3, axis=1)]
    assert sizes == [(3, 3, 5), (3, 1, 5)]
    listed = ember.split(t, [1, 4], axis=2)
    np.testing.assert_array_equal(listed[1].numpy(), a[:, :, 1:])


@pytest.mark.parametrize(
    "op, call",
    [
        ("cumsum", lambda t: t.cumsum(0, axis=1)),
        ("cumprod", lambda t: ember.cumprod(t, dim=0, axis=0)),
        ("sort", lambda t: t.sort(dim=0, axis=1)),
        ("argsort", lambda t: ember.argsort(t, -1, axis=-1)),
        ("topk", lambda t: t.topk(2, dim=0, axis=1)),
        ("flip", lambda t: t.flip(0, axis=1)),
        ("flip", lambda t: ember.flip(t, (0,), axis=1)),
        ("roll", lambda t: t.roll(1, dims=0, axis=0)),
        ("chunk", lambda t: t.chunk(2, dim=1, axis=1)),
        ("split", lambda t: ember.split(t, 2, dim=0, axis=1)),
    ],
)
def test_dim_and_axis_together_on_dim_ops_is_an_error_naming_the_op(pair, op, call):
    _, t = pair
    with pytest.raises(ember.InvalidArgumentError, match="got both") as info:
        call(t)
    assert str(info.value).startswith(op), str(info.value)
    assert "axis" in str(info.value)


def test_scans_need_a_dim(pair):
    _, t = pair
    for op in ("cumsum", "cumprod"):
        with pytest.raises(ember.InvalidTypeError, match=f"{op}.*needs the dim"):
            getattr(t, op)()
