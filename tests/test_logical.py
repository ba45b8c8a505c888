"""Bitwise ops (bitwise_and/or/xor/not, & | ^ ~ and their in-place forms) on integers and
bool, the logical ops (logical_and/or/xor/not) on every dtype, and the any / all
reductions: values and result dtypes against numpy, on every device, with broadcasting,
strided views, zero-size tensors and negative dims."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    check_exact,
    edtype,
    make_view,
    rand_array,
    require_dtype,
    to_ember,
)

BITWISE = {
    "bitwise_and": (np.bitwise_and, "__and__"),
    "bitwise_or": (np.bitwise_or, "__or__"),
    "bitwise_xor": (np.bitwise_xor, "__xor__"),
}
BITWISE_TYPES = INT_DTYPES + ["bool"]


def ints(rng, shape, name):
    """Values over the whole range of the dtype, so that every bit takes part."""
    if name == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    info = np.iinfo(name)
    return rng.integers(info.min, info.max, size=shape, dtype=name, endpoint=True)


@pytest.mark.parametrize("op", sorted(BITWISE))
@pytest.mark.parametrize("name", BITWISE_TYPES)
def test_bitwise_binary(device, op, name, rng):
    ref, dunder = BITWISE[op]
    for la, lb in [
        ("contiguous", "contiguous"),
        ("transposed", "stepped"),
        ("reversed", "narrowed"),
    ]:
        x, y = ints(rng, (3, 4), name), ints(rng, (3, 4), name)
        a = to_ember(x, name, device)
        b = to_ember(y, name, device)
        if la != "contiguous":  # the same values through strided views
            a = to_ember(x.T.copy(), name, device).t() if la == "transposed" else a
            b = to_ember(np.repeat(y, 2, axis=1), name, device)[:, ::2] if lb == "stepped" else b
        want = ref(x, y)
        check_exact(getattr(ember, op)(a, b), want, name, device)
        check_exact(getattr(a, op)(b), want, name)
        check_exact(getattr(a, dunder)(b), want, name)
    # broadcasting, and a zero-size operand
    x, y = ints(rng, (2, 1, 3), name), ints(rng, (4, 1), name)
    check_exact(getattr(ember, op)(to_ember(x, name, device), to_ember(y, name, device)),
                ref(x, y), name)  # fmt: skip
    z = ember.zeros(0, 3, dtype=edtype(name), device=device)
    check_exact(getattr(ember, op)(z, to_ember(x[0], name, device)), np.zeros((0, 3)), name)


@pytest.mark.parametrize("name", BITWISE_TYPES)
def test_bitwise_not(device, name, rng):
    x = ints(rng, (5, 6), name)
    for t in (to_ember(x, name, device), to_ember(x.T.copy(), name, device).t()):
        want = np.invert(x)  # logical not for bool (never the byte ~1)
        check_exact(~t, want, name, device)
        check_exact(ember.bitwise_not(t), want, name)
        check_exact(t.bitwise_not(), want, name)
    check_exact(~ember.zeros(0, dtype=edtype(name), device=device), np.zeros(0), name)


@pytest.mark.parametrize("name", BITWISE_TYPES)
def test_bitwise_with_python_scalars_and_in_place(device, name, rng):
    x = ints(rng, (6,), name)
    t = to_ember(x, name, device)
    s = True if name == "bool" else 5  # a Python bool keeps bool; an int keeps integers
    ns = np.array(s, dtype=x.dtype)
    check_exact(t & s, x & ns, name)
    check_exact(s | t, ns | x, name)
    check_exact(t ^ s, x ^ ns, name)
    u = t.clone()
    u &= s
    u |= to_ember(x, name, device)
    u ^= s
    check_exact(u, ((x & ns) | x) ^ ns, name)


def test_bitwise_promotes_and_keeps_int32(device):
    a = ember.tensor(np.array([0b1100, -1], dtype=np.int32), device=device)
    m = ember.tensor([True, False], device=device)
    check_exact(a & m, np.array([0, 0]), "int32")  # bool with int32 is int32
    check_exact(a | ember.tensor(np.array([1, 2], dtype=np.uint8), device=device),
                np.array([0b1101, -1]), "int32")  # fmt: skip
    check_exact(a ^ ember.tensor([1, 1], device=device), np.array([0b1101, -2]), "int64")


@pytest.mark.parametrize("name", FLOAT_DTYPES)
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"])
def test_bitwise_refuses_floats_naming_the_op(device, name, op):
    if not require_dtype(device, name):
        return
    t = ember.ones(3, dtype=edtype(name), device=device)
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        getattr(ember, op)(t) if op == "bitwise_not" else getattr(ember, op)(t, t)
    assert info.value.op == op and info.value.dtype == edtype(name)
    assert op in str(info.value) and "integer or bool" in str(info.value)
    with pytest.raises(ember.UnsupportedDTypeError):
        ~t if op == "bitwise_not" else t & t


LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


@pytest.mark.parametrize("op", sorted(LOGICAL))
def test_logical_binary_every_dtype(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ("contiguous", "transposed", "expanded"):
        a, x = make_view(rng, (3, 4), dtype, device, layout, "small")
        b, y = make_view(rng, (4,), dtype, device, "reversed", "small")
        want = LOGICAL[op](x, y)
        check_exact(getattr(ember, op)(a, b), want, "bool", device)
        check_exact(getattr(a, op)(b), want, "bool")
    # NaN is true, as bool(nan); a Python number on either side
    if edtype(dtype).is_float:
        t = ember.tensor([np.nan, 0.0, -0.0, 2.0], dtype=edtype(dtype), device=device)
        n = np.array([np.nan, 0.0, -0.0, 2.0])
        check_exact(getattr(ember, op)(t, 1), LOGICAL[op](n, 1), "bool")
        check_exact(getattr(ember, op)(0, t), LOGICAL[op](0, n), "bool")


def test_logical_ops_mix_dtypes_and_refuse_other_devices(device):
    a = ember.tensor([0.0, 0.5, 2.0, 0.0], device=device)
    b = ember.tensor(np.array([3, 0, 1, 0], dtype=np.int32), device=device)
    check_exact(ember.logical_and(a, b), np.array([False, False, True, False]), "bool")
    check_exact(ember.logical_or(a, b), np.array([True, True, True, False]), "bool")
    check_exact(ember.logical_xor(a, b), np.array([True, True, False, False]), "bool")
    with pytest.raises(ember.ShapeMismatchError):
        ember.logical_and(a, ember.ones(3, device=device))
    if device.kind != "cpu":
        with pytest.raises(ember.DeviceMismatchError) as info:
            ember.logical_or(a, ember.ones(4))
        assert info.value.op == "logical_or"


def test_logical_not_every_dtype(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    for layout in LAYOUTS:
        t, x = make_view(rng, (2, 3), dtype, device, layout, "small")
        check_exact(ember.logical_not(t), np.logical_not(x), "bool", device)
        check_exact(t.logical_not(), np.logical_not(x), "bool")
    check_exact(ember.logical_not(ember.zeros(0, dtype=edtype(dtype), device=device)),
                np.zeros(0, dtype=bool), "bool")  # fmt: skip


# dims of a 3-D tensor: None (all), ints (negative too), tuples
DIMS = [None, 0, 1, -1, -3, (0, 2), (2, -3), (0, 1, 2)]


@pytest.mark.parametrize("op", ["any", "all"])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_any_all_against_numpy(device, dtype, op, dim, keepdim, rng):
    if not require_dtype(device, dtype):
        return
    for layout in ("contiguous", "transposed", "stepped", "expanded"):
        t, x = make_view(rng, (3, 4, 2), dtype, device, layout, "small")
        want = getattr(np, op)(x, axis=dim, keepdims=keepdim)
        check_exact(getattr(t, op)(dim=dim, keepdim=keepdim), want, "bool", device)
        check_exact(getattr(ember, op)(t, dim, keepdim=keepdim), want, "bool")


@pytest.mark.parametrize("op", ["any", "all"])
def test_any_all_of_empty_and_special_values(device, op):
    empty = ember.zeros(0, 3, device=device)
    check_exact(getattr(empty, op)(), np.array(op == "all"), "bool")
    check_exact(getattr(empty, op)(dim=0), np.full(3, op == "all"), "bool")
    check_exact(getattr(empty, op)(dim=1), np.zeros(0, dtype=bool), "bool")
    x = np.array([[np.nan, 0.0], [-0.0, 0.0]], dtype=np.float32)
    t = ember.tensor(x, device=device)
    check_exact(getattr(t, op)(dim=1), getattr(np, op)(x, axis=1), "bool")
    assert getattr(ember.tensor(3, device=device), op)().item() is True
    assert bool(getattr(ember.tensor([0, 2], device=device), op)()) is (op == "any")
    with pytest.raises(ember.IndexOutOfRangeError):
        getattr(t, op)(dim=2)
    with pytest.raises(ember.InvalidArgumentError, match="appears twice"):
        getattr(t, op)(dim=(0, -2))


def test_masks_compose(device, rng):
    """Comparisons give bool masks that the bitwise and logical ops combine."""
    x = rand_array(rng, (50,), "float32")
    t = ember.tensor(x, device=device)
    m = (t > 0) & ~(t > 1) | (t < -2)
    want = (x > 0) & ~(x > 1) | (x < -2)
    check_exact(m, want, "bool", device)
    check_exact(ember.where(m, t, 0.0), np.where(want, x, 0), "float32")
    assert m.sum().item() == int(want.sum()) and m.any().item() == bool(want.any())
    assert (t.isnan() | t.isinf()).any().item() is False


@pytest.mark.parametrize("name", [d for d in DTYPES if d != "bool"])
def test_where_takes_bool_and_int32_conditions(device, name, rng):
    if not require_dtype(device, name):
        return
    x = rand_array(rng, (4, 5), name)
    t = to_ember(x, name, device)
    c = rng.integers(-2, 3, size=(5,)).astype(np.int32)
    for cond in (ember.tensor(c != 0, device=device), ember.tensor(c, device=device)):
        check_exact(ember.where(cond, t, t[::-1]), np.where(c != 0, x, x[::-1]), name)
