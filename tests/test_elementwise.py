"""Elementwise ops against numpy: binary with broadcasting, scalars, out=, in-place;
comparisons; where; unary; clamp. Every dtype, every layout."""

from __future__ import annotations

import operator

import ember
import numpy as np
import pytest
from helpers import (
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LAYOUTS,
    NP_DTYPE,
    check_close,
    check_exact,
    compute_dtype,
    edtype,
    erf_ref,
    gelu_ref,
    is_float,
    make_view,
    pytest_at_cpu_level,
    rand_array,
    require_dtype,
    rounded,
    sigmoid_ref,
    to_ember,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

# ---- binary ops


def np_binary(op, a, b):
    """numpy's result of `op`, computed in the reference dtype of a/b."""
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":  # true division; integers in float32, as ember (PyTorch) computes
            return a / b if a.dtype.kind == "f" else a.astype(np.float32) / b.astype(np.float32)
        if op == "floor_divide":
            return np.floor_divide(a, b)
        if op == "remainder":
            return np.remainder(a, b)
        if op == "pow":
            return np.power(a, b)
        if op == "maximum":
            return np.maximum(a, b)
        if op == "minimum":
            return np.minimum(a, b)
    raise ValueError(op)


BINARY = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "maximum", "minimum"]
DIVISIONS = {"floor_divide", "remainder"}  # integer divisors must be nonzero on the CPU
# What PyTorch refuses for two bool tensors (the others: + or, * and, max or, min and).
BOOL_REFUSED = {"sub", "floor_divide", "remainder", "pow", "trunc_divide"}


def refuses_bool(op: str, name: str, call) -> bool:
    """For a bool op that PyTorch refuses: asserts UnsupportedDTypeError naming the op."""
    if name != "bool" or op not in BOOL_REFUSED:
        return False
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        call()
    assert info.value.op == op and info.value.dtype == ember.bool
    return True


def result_dtype(op: str, name: str) -> str:
    """ember's result dtype of `op` on two `name` tensors: true division gives float32."""
    return "float32" if op == "div" and not is_float(name) else name


def operands(max_dims: int, num: int = 2) -> dict:
    """Hypothesis strategies for `num` broadcastable operands (zero-size dims included),
    their layouts, and a seed for their values."""
    return dict(
        shapes=mutually_broadcastable_shapes(
            num_shapes=num, min_dims=0, max_dims=max_dims, min_side=0, max_side=4
        ),
        layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * num),
        seed=st.integers(0, 2**32 - 1),
    )


# ops numpy computes exactly (correctly rounded) for every dtype
EXACT_BINARY = {"add", "sub", "mul", "maximum", "minimum", "floor_divide", "remainder"}


def binary_inputs(rng, op, name, shape_a, shape_b, device, layout_a, layout_b):
    kind_a, kind_b = "normal", "normal"
    if op == "pow":
        kind_a, kind_b = ("positive", "unit") if edtype(name).is_float else ("small", "small")
    if op == "div" and edtype(name).is_float:
        kind_b = "positive"
    if op in DIVISIONS and not edtype(name).is_float:
        kind_b = "positive"
    a, na = make_view(rng, shape_a, name, device, layout_a, kind_a)
    b, nb = make_view(rng, shape_b, name, device, layout_b, kind_b)
    return a, na, b, nb


def check_binary_result(op, name, got, na, nb):
    ct = compute_dtype(name)
    ref = np_binary(op, na.astype(ct), nb.astype(ct))
    if op == "div" and not is_float(name):  # correctly rounded float32 division
        check_exact(got, ref, "float32")
    elif op in EXACT_BINARY or not edtype(name).is_float:
        check_exact(got, ref, name)
    elif op == "div":
        # a correctly rounded quotient; allow one rounding step of slack
        rtol = {"float32": 2.5e-7, "float64": 5e-16}.get(name)
        check_close(got, rounded(ref, name), name, rtol=rtol, atol=0)
    else:
        check_close(got, ref, name)


@pytest.mark.parametrize("op", BINARY)
@settings(max_examples=25)
@given(**operands(max_dims=4))
def test_binary_broadcasting(device, dtype, op, shapes, layouts, seed):
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    a, na, b, nb = binary_inputs(rng, op, dtype, sa, sb, device, *layouts)
    if refuses_bool(op, dtype, lambda: getattr(ember, op)(a, b)):
        return
    got = getattr(ember, op)(a, b)
    assert got.shape == shapes.result_shape
    assert got.device.same_device(device)
    check_binary_result(op, dtype, got, na, nb)


# op -> its operator's dunder; operator.__add__ etc. run it as `a + b` does (the slot)
OPERATORS = {
    "add": "__add__",
    "sub": "__sub__",
    "mul": "__mul__",
    "div": "__truediv__",
    "pow": "__pow__",
    "floor_divide": "__floordiv__",
    "remainder": "__mod__",
}


@pytest.mark.parametrize("op", BINARY)
def test_binary_method_function_operator_agree(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    a, na, b, nb = binary_inputs(rng, op, dtype, (3, 4), (4,), device, "contiguous", "stepped")
    if refuses_bool(op, dtype, lambda: getattr(a, op)(b)):
        return
    by_function = getattr(ember, op)(a, b)
    check_binary_result(op, dtype, by_function, na, nb)
    by_method = getattr(a, op)(b)
    check_exact(by_method, by_function.numpy(), result_dtype(op, dtype))
    if op in OPERATORS:  # `a + b` (the type's slot) and a.__add__(b) (the method)
        name = OPERATORS[op]
        check_exact(getattr(operator, name)(a, b), by_function.numpy(), result_dtype(op, dtype))
        check_exact(getattr(a, name)(b), by_function.numpy(), result_dtype(op, dtype))


@pytest.mark.parametrize("op", BINARY)
def test_binary_large_contiguous(device, dtype, op, rng):
    # Big enough for the parallel / vectorised paths.
    if not require_dtype(device, dtype):
        return
    a, na, b, nb = binary_inputs(
        rng, op, dtype, (300, 257), (300, 257), device, "contiguous", "contiguous"
    )
    if refuses_bool(op, dtype, lambda: getattr(ember, op)(a, b)):
        return
    check_binary_result(op, dtype, getattr(ember, op)(a, b), na, nb)
    # and with a broadcast row
    a, na, b, nb = binary_inputs(
        rng, op, dtype, (300, 257), (257,), device, "transposed", "contiguous"
    )
    check_binary_result(op, dtype, getattr(ember, op)(a, b), na, nb)


# ---- Python scalars on either side

SCALAR_OPS = [
    ("add", lambda t, s: t + s, lambda x, s: x + s),
    ("radd", lambda t, s: s + t, lambda x, s: s + x),
    ("sub", lambda t, s: t - s, lambda x, s: x - s),
    ("rsub", lambda t, s: s - t, lambda x, s: s - x),
    ("mul", lambda t, s: t * s, lambda x, s: x * s),
    ("rmul", lambda t, s: s * t, lambda x, s: s * x),
    ("maximum", lambda t, s: ember.maximum(t, s), np.maximum),
    ("minimum", lambda t, s: ember.minimum(s, t), lambda x, s: np.minimum(s, x)),
]


@pytest.mark.parametrize("op", SCALAR_OPS, ids=[o[0] for o in SCALAR_OPS])
def test_int_scalar_takes_tensor_dtype(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    _, fn, ref = op
    x = rand_array(rng, (4, 5), dtype)
    t = to_ember(x, dtype, device)
    got = fn(t, 3)
    if dtype == "bool":  # a Python int lifts bool to int64, as PyTorch
        dtype, x = "int64", x.astype(np.int64)
    ct = compute_dtype(dtype)
    with np.errstate(all="ignore"):
        expected = ref(x.astype(ct), np.array(3, dtype=ct))
    check_exact(got, expected, dtype, device)


def test_float_scalar_on_float_tensor(device, rng):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        x = rand_array(rng, (6,), name)
        t = to_ember(x, name, device)
        ct = compute_dtype(name)
        s = np.array(0.75, dtype=ct)
        check_exact(t + 0.75, x.astype(ct) + s, name)
        check_exact(0.75 - t, s - x.astype(ct), name)
        check_exact(t * 0.75, x.astype(ct) * s, name)
        check_close(t / 0.75, rounded(x.astype(ct) / s, name), name)
        check_close(0.75 / t, rounded(s / x.astype(ct), name), name)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_float_scalar_promotes_int_tensor_to_float32(device, name):
    t = ember.tensor(np.array([1, 2, 3], dtype=NP_DTYPE[name]), device=device)
    for got, expected in [
        (t * 1.5, [1.5, 3.0, 4.5]),
        (1.5 * t, [1.5, 3.0, 4.5]),
        (t + 0.5, [1.5, 2.5, 3.5]),
        (t / 2.0, [0.5, 1.0, 1.5]),
        (3.0 / t, [3.0, 1.5, 1.0]),
    ]:
        check_exact(got, np.array(expected), "float32", device)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_int_scalar_division(device, name):
    """`/` is true division (float32); `//` and `%` floor, keeping the tensor's dtype."""
    if name == "int64":
        t = ember.tensor([7, -7, 6, -1, 0], device=device)
        check_exact(t / 2, np.array([3.5, -3.5, 3, -0.5, 0]), "float32")
        check_exact(t // 2, np.array([3, -4, 3, -1, 0]), "int64")
        check_exact(t // -2, np.array([-4, 3, -3, 0, 0]), "int64")
        check_exact(t % -2, np.array([-1, -1, 0, -1, 0]), "int64")
        d = ember.tensor([2, -2, 3, 4], device=device)
        check_exact(7 // d, np.array([3, -4, 2, 1]), "int64")
        check_exact(7 % d, np.array([1, -1, 1, 3]), "int64")
        check_exact(1 / d, np.array([0.5, -0.5, 1 / 3, 0.25]), "float32")
    else:
        t = ember.tensor(np.array([7, 6, 1, 0], dtype=NP_DTYPE[name]), device=device)
        check_exact(t / 2, np.array([3.5, 3, 0.5, 0]), "float32")
        check_exact(t // 2, np.array([3, 3, 0, 0]), name)
        check_exact(t % 4, np.array([3, 2, 1, 0]), name)
        check_exact(t / 0, np.array([np.inf, np.inf, np.inf, np.nan]), "float32")


def test_numpy_scalars_work_as_operands(device):
    t = ember.tensor([1.0, 2.0], device=device)
    check_exact(t + np.float32(0.5), np.array([1.5, 2.5]), "float32")
    check_exact(t * np.int64(3), np.array([3.0, 6.0]), "float32")
    check_exact(t - np.float64(1.0), np.array([0.0, 1.0]), "float32")


def test_pow_with_scalars(device):
    t = ember.tensor([1.0, 2.0, 3.0], device=device)
    check_close(t**2, np.array([1.0, 4.0, 9.0]), "float32")
    check_close(t**0.5, np.sqrt([1.0, 2.0, 3.0]), "float32")
    check_close(2**t, np.array([2.0, 4.0, 8.0]), "float32")
    i = ember.tensor([0, 1, 2, 3], device=device)
    check_exact(i**2, np.array([0, 1, 4, 9]), "int64")
    check_exact(2**i, np.array([1, 2, 4, 8]), "int64")
    check_exact(ember.tensor([-3, -2], device=device) ** 3, np.array([-27, -8]), "int64")


# ---- division corner cases


def test_int_div_is_true_division(device):
    a = ember.tensor([7, -7, 7, -7, 5, 0, -1, 9], device=device)
    b = ember.tensor([2, 2, -2, -2, 0, 0, 3, -3], device=device)
    expected = np.array([3.5, -3.5, -3.5, 3.5, np.inf, np.nan, -1 / 3, -3], dtype=np.float32)
    check_exact(a / b, expected, "float32")
    check_exact(ember.div(a, b), expected, "float32")
    check_exact(ember.true_divide(a, b), expected, "float32")
    check_exact(a.div(b), expected, "float32")


@pytest.mark.parametrize("name", INT_DTYPES)
def test_int_true_division_by_zero_gives_inf_and_nan(device, name):
    a = ember.tensor(np.array([0, 1, 5, 100], dtype=NP_DTYPE[name]), device=device)
    z = ember.zeros(4, dtype=edtype(name), device=device)
    check_exact(a / z, np.array([np.nan, np.inf, np.inf, np.inf]), "float32")


def test_int64_min_floor_div_minus_one_does_not_trap(device):
    lo = np.iinfo(np.int64).min
    a = ember.tensor(np.array([lo, lo], dtype=np.int64), device=device)
    b = ember.tensor(np.array([-1, 1], dtype=np.int64), device=device)
    # numpy wraps lo // -1 to lo (the hardware would trap); lo % -1 is 0
    check_exact(a // b, np.array([lo, lo]), "int64")
    check_exact(a % b, np.array([0, 0]), "int64")
    check_exact(ember.div(a, b, rounding_mode="trunc"), np.array([lo, lo]), "int64")


def test_float_div_by_zero(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        a = ember.tensor([1.0, -1.0, 0.0], dtype=edtype(name), device=device)
        check_exact(
            a / ember.zeros(3, dtype=edtype(name), device=device),
            np.array([np.inf, -np.inf, np.nan]),
            name,
        )


def test_unsigned_wraparound(device):
    a = ember.tensor(np.array([250, 3, 0], dtype=np.uint8), device=device)
    b = ember.tensor(np.array([10, 5, 1], dtype=np.uint8), device=device)
    check_exact(a + b, np.array([4, 8, 1]), "uint8")
    check_exact(a - b, np.array([240, 254, 255]), "uint8")
    check_exact(a * b, np.array([196, 15, 0]), "uint8")
    c = ember.tensor(np.array([0], dtype=np.uint32), device=device)
    check_exact(
        c - ember.ones(1, dtype=ember.uint32, device=device), np.array([2**32 - 1]), "uint32"
    )


def test_maximum_minimum_propagate_nan(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        a = ember.tensor([np.nan, 1.0, 2.0], dtype=edtype(name), device=device)
        b = ember.tensor([0.0, np.nan, 3.0], dtype=edtype(name), device=device)
        check_exact(ember.maximum(a, b), np.array([np.nan, np.nan, 3.0]), name)
        check_exact(ember.minimum(a, b), np.array([np.nan, np.nan, 2.0]), name)


# ---- out= and in-place


@pytest.mark.parametrize("op", BINARY)
def test_out_argument(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    a, na, b, nb = binary_inputs(rng, op, dtype, (3, 4), (3, 1), device, "contiguous", "contiguous")
    out = ember.zeros(3, 4, dtype=edtype(result_dtype(op, dtype)), device=device)
    if refuses_bool(op, dtype, lambda: getattr(ember, op)(a, b, out=out)):
        return
    ret = getattr(ember, op)(a, b, out=out)
    check_binary_result(op, dtype, out, na, nb)
    np.testing.assert_array_equal(ret.numpy(), out.numpy())
    # out= may be a view: the result lands in the base
    base = ember.zeros(4, 3, dtype=edtype(result_dtype(op, dtype)), device=device)
    getattr(ember, op)(a, b, out=base.t())
    check_binary_result(op, dtype, base.t(), na, nb)


# Each in-place operator twice: through the type's slot (`t += o`) and as the method.
INPLACE_OPS = {"add": "__iadd__", "sub": "__isub__", "mul": "__imul__", "div": "__itruediv__"}
INPLACE_OPS.update(floor_divide="__ifloordiv__", remainder="__imod__")
INPLACE = [(name, getattr(operator, name), op) for op, name in INPLACE_OPS.items()] + [
    (f"{name}-method", lambda t, o, name=name: getattr(t, name)(o), op)
    for op, name in INPLACE_OPS.items()
]


@pytest.mark.parametrize("case", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_writes_into_left_tensor(device, dtype, case, rng):
    if not require_dtype(device, dtype):
        return
    _, fn, op = case
    a, na, b, nb = binary_inputs(rng, op, dtype, (3, 4), (4,), device, "contiguous", "stepped")
    if refuses_bool(op, dtype, lambda: fn(a, b)):
        check_exact(a, na, dtype)  # left as it was
        return
    if result_dtype(op, dtype) != dtype:  # a float quotient cannot go into an int tensor
        with pytest.raises(ember.DTypeMismatchError) as info:
            fn(a, b)
        assert info.value.op == op and "//" in str(info.value)
        check_exact(a, na, dtype)  # left as it was
        return
    alias = a
    assert fn(a, b) is alias
    check_binary_result(op, dtype, alias, na, nb)


def test_inplace_operators_rebind_to_same_object(device):
    t = ember.ones(2, 2, device=device)
    alias = t
    t += 1
    t *= 3
    t -= 1
    t /= 5
    assert t is alias
    np.testing.assert_array_equal(alias.numpy(), np.full((2, 2), 1.0))


class Reflecting:
    """A foreign operand that takes part in Python's operator protocol."""

    def __add__(self, other):
        return ("add", other)

    def __radd__(self, other):
        return ("radd", other)

    def __rsub__(self, other):
        return NotImplemented


class Seven(int):
    pass


def test_operators_follow_pythons_protocol_with_other_operands(device):
    t = ember.tensor([1, 2], device=device)
    r = Reflecting()
    side, other = t + r
    assert side == "radd" and other is t  # the tensor gave way to r
    assert (r + t)[0] == "add"
    with pytest.raises(TypeError, match="unsupported operand"):
        t - r  # both sides declined
    # a number on the left: int's slot declines, the tensor's reflected form answers
    check_exact(Seven(7) - t, np.array([6, 5]), "int64")
    check_exact(Seven(7) // t, np.array([7, 3]), "int64")
    check_exact(2.5 * t, np.array([2.5, 5.0]), "float32")
    u = t
    u += Seven(1)
    assert u is t
    check_exact(t, np.array([2, 3]), "int64")


def test_operator_errors_name_the_op_and_leave_the_target(device):
    a = ember.tensor([1, 2], device=device)
    with pytest.raises(ember.ShapeMismatchError) as info:
        a - ember.ones(3, device=device)
    assert info.value.op == "sub" and "(2,)" in str(info.value) and "(3,)" in str(info.value)
    with pytest.raises(ember.DTypeMismatchError) as info:
        a *= ember.tensor([0.5, 0.5], device=device)
    assert info.value.op == "mul" and "float32" in str(info.value) and "int64" in str(info.value)
    with pytest.raises(ember.ShapeMismatchError) as info:
        a += ember.ones(2, 2, dtype=ember.int64, device=device)  # would broadcast the target
    assert info.value.op == "add"
    check_exact(a, np.array([1, 2]), "int64")


def test_inplace_with_scalars(device, dtype):
    if not require_dtype(device, dtype):
        return
    t = ember.full((3,), 6, dtype=edtype(dtype), device=device)
    if dtype == "bool":  # a Python int gives int64, which a bool tensor cannot hold
        with pytest.raises(ember.DTypeMismatchError, match="only a bool result"):
            t += 2
        t |= False
        t &= True
        t ^= True
        check_exact(t, np.zeros(3, dtype=bool), dtype)
        return
    t += 2
    t -= 1
    t *= 2
    t //= 7
    check_exact(t, np.full(3, 2), dtype)


def test_inplace_overlapping_views(device):
    # numpy semantics: the right side is read as it was before the write
    x = np.arange(8, dtype=np.float32)
    t = ember.tensor(x, device=device)
    v = t[1:]
    v += t[:-1]
    x[1:] += x[:-1].copy()
    check_exact(t, x, "float32")
    y = np.arange(8, dtype=np.int64)
    u = ember.tensor(y, device=device)
    w = u[:-1]
    w += u[1:]
    y[:-1] += y[1:].copy()
    check_exact(u, y, "int64")


def test_inplace_with_self(device):
    t = ember.tensor([1.0, 2.0, 3.0], device=device)
    t += t
    np.testing.assert_array_equal(t.numpy(), [2.0, 4.0, 6.0])
    t *= t[::-1]
    np.testing.assert_array_equal(t.numpy(), [12.0, 16.0, 12.0])


def test_out_aliasing_an_input(device):
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    ember.add(a, a.t(), out=a)
    np.testing.assert_array_equal(a.numpy(), [[2.0, 5.0], [5.0, 8.0]])


# ---- comparisons

CMP = {
    "eq": (np.equal, "__eq__"),
    "ne": (np.not_equal, "__ne__"),
    "lt": (np.less, "__lt__"),
    "le": (np.less_equal, "__le__"),
    "gt": (np.greater, "__gt__"),
    "ge": (np.greater_equal, "__ge__"),
}


@pytest.mark.parametrize("op", sorted(CMP))
@settings(max_examples=15)
@given(**operands(max_dims=3))
def test_comparisons(device, dtype, op, shapes, layouts, seed):
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(seed)
    sa, sb = shapes.input_shapes
    # "small" values make ties common, which is where comparisons go wrong
    a, na = make_view(rng, sa, dtype, device, layouts[0], "small")
    b, nb = make_view(rng, sb, dtype, device, layouts[1], "small")
    fn, dunder = CMP[op]
    expected = fn(na, nb)
    check_exact(getattr(ember, op)(a, b), expected, "bool", device)
    check_exact(getattr(a, op)(b), expected, "bool")
    check_exact(getattr(a, dunder)(b), expected, "bool")


def test_comparisons_with_scalars(device, dtype):
    if not require_dtype(device, dtype):
        return
    x = np.array([0, 1, 2, 3], dtype=NP_DTYPE[dtype])
    t = to_ember(x, dtype, device)
    check_exact(t == 2, (x == 2), "bool")
    check_exact(t != 2, (x != 2), "bool")
    check_exact(t < 2, (x < 2), "bool")
    check_exact(t <= 2, (x <= 2), "bool")
    check_exact(t > 2, (x > 2), "bool")
    check_exact(t >= 2, (x >= 2), "bool")
    check_exact(2 < t, (x > 2), "bool")  # reflected
    check_exact(2 >= t, (x <= 2), "bool")
    check_exact(ember.eq(t, 1), (x == 1), "bool")


def test_comparisons_with_nan(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        a = ember.tensor([np.nan, 1.0, np.nan], dtype=edtype(name), device=device)
        b = ember.tensor([np.nan, np.nan, 1.0], dtype=edtype(name), device=device)
        check_exact(a == b, np.array([0, 0, 0]), "bool")
        check_exact(a != b, np.array([1, 1, 1]), "bool")
        check_exact(a < b, np.array([0, 0, 0]), "bool")
        check_exact(a >= b, np.array([0, 0, 0]), "bool")


# ---- where


@settings(max_examples=20)
@given(**operands(max_dims=3, num=3))
def test_where(device, dtype, shapes, layouts, seed):
    if not require_dtype(device, dtype):
        return
    layout = layouts[1]
    rng = np.random.default_rng(seed)
    sc, sa, sb = shapes.input_shapes
    cond = np.asarray(rng.random(sc)) > 0.5  # a bool mask (uint8 is taken too, below)
    a, na = make_view(rng, sa, dtype, device, layout)
    b, nb = make_view(rng, sb, dtype, device, "contiguous")
    got = ember.where(ember.tensor(cond, device=device), a, b)
    check_exact(got, np.where(cond != 0, na, nb), dtype, device)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16", "float16", "uint8", "bool"])
def test_where_over_long_dense_runs(device, dtype, rng):
    """where over dense operands long enough to be split over threads, each at its own
    offset into its storage (rows of larger tensors), for every element size."""
    if not require_dtype(device, dtype):
        return
    x, y = rand_array(rng, (3, 70_001), dtype), rand_array(rng, (3, 70_001), dtype)
    cond = rng.random((4, 70_001)) > 0.5
    a, b = to_ember(x, dtype, device), to_ember(y, dtype, device)
    got = ember.where(ember.tensor(cond, device=device)[2], a[1], b[2])
    check_exact(got, np.where(cond[2], x[1], y[2]), dtype, device)


@settings(max_examples=20)
@given(**operands(max_dims=3, num=3))
def test_where_condition_dtypes_and_layouts(device, dtype, shapes, layouts, seed):
    # here `dtype` is the condition's: any dtype, nonzero is true
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(seed)
    sc, sa, sb = shapes.input_shapes
    cond, nc = make_view(rng, sc, dtype, device, layouts[0], kind="small")
    a, na = make_view(rng, sa, "float32", device, layouts[1])
    b, nb = make_view(rng, sb, "float32", device, layouts[2])
    got = ember.where(cond, a, b)
    check_exact(got, np.where(nc != 0, na, nb), "float32", device)


def test_where_with_scalars_and_comparison(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (3, 5), dtype)
    t = to_ember(x, dtype, device)
    c = t > 1
    assert c.dtype == ember.bool
    want = "int64" if dtype == "bool" else dtype  # a Python int lifts bool to int64
    check_exact(ember.where(c, t, 0), np.where(x > 1, x, 0), want)
    check_exact(ember.where(c, 1, t), np.where(x > 1, 1, x), want)
    check_exact(ember.where(c, t, t), x, dtype)


def test_where_condition_values_other_than_one(device):
    cond = ember.tensor(np.array([0, 1, 2, 255], dtype=np.uint8), device=device)
    a = ember.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    check_exact(ember.where(cond, a, -a), np.array([-1.0, 2.0, 3.0, 4.0]), "float32")


# ---- unary

UNARY_FLOAT = {
    # name: (reference in float64, input kind)
    "exp": (np.exp, "normal"),
    "expm1": (np.expm1, "normal"),
    "log": (np.log, "positive"),
    "log1p": (np.log1p, "unit"),
    "sqrt": (np.sqrt, "positive"),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), "positive"),
    "recip": (lambda x: 1.0 / x, "positive"),
    "sin": (np.sin, "normal"),
    "cos": (np.cos, "normal"),
    "tan": (np.tan, "normal"),
    "tanh": (np.tanh, "normal"),
    "erf": (erf_ref, "normal"),
    "gelu": (gelu_ref, "normal"),
    "silu": (lambda x: x * sigmoid_ref(x), "normal"),
    "sigmoid": (sigmoid_ref, "normal"),
}
UNARY_ANY = {
    # name: exact numpy reference, valid for every dtype (unsigned wrap as numpy)
    "neg": np.negative,
    "abs": np.abs,
    "sqr": np.square,
    "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "sign": np.sign,
    # integers are integral already: rounding gives them back (numpy would make floats)
    "floor": lambda x: x if x.dtype.kind in "iu" else np.floor(x),
    "ceil": lambda x: x if x.dtype.kind in "iu" else np.ceil(x),
    "round": lambda x: x if x.dtype.kind in "iu" else np.rint(x),  # half to even
    "trunc": lambda x: x if x.dtype.kind in "iu" else np.trunc(x),
}
# predicates: bool results for every dtype
PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
UNARY_SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 4), (1, 0, 2)]


def unary_cases(rng, name, device, kind):
    for shape in UNARY_SHAPES:
        for layout in LAYOUTS:
            yield make_view(rng, shape, name, device, layout, kind)
    yield make_view(rng, (257, 131), name, device, "contiguous", kind)  # big: vectorised path


@pytest.mark.parametrize("op", sorted(UNARY_FLOAT))
def test_unary_float_ops(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    ref, kind = UNARY_FLOAT[op]
    if not edtype(dtype).is_float:
        t = ember.ones(3, dtype=edtype(dtype), device=device)
        with pytest.raises(ember.UnsupportedDTypeError) as info:
            getattr(t, op)()
        assert info.value.op == op and info.value.dtype == edtype(dtype)
        with pytest.raises(ember.UnsupportedDTypeError):
            getattr(ember, op)(t)
        return
    for t, x in unary_cases(rng, dtype, device, kind):
        with np.errstate(divide="ignore"):  # log1p(-1)
            expected = ref(x.astype(np.float64))
        check_close(getattr(t, op)(), expected, dtype)
        check_close(getattr(ember, op)(t), expected, dtype)


@pytest.mark.parametrize("op", sorted(UNARY_ANY))
def test_unary_exact_ops(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    ref = UNARY_ANY[op]
    if dtype == "bool":  # PyTorch's bool rules: sign is itself, sqr int64, the rest raise
        for t, x in unary_cases(rng, dtype, device, "normal"):
            if op == "sign":
                check_exact(t.sign(), x, "bool")
            elif op == "sqr":
                check_exact(ember.sqr(t), x.astype(np.int64), "int64")
            else:
                with pytest.raises(ember.UnsupportedDTypeError) as info:
                    getattr(t, op)()
                assert info.value.op == op and "bool" in str(info.value)
        return
    for t, x in unary_cases(rng, dtype, device, "normal"):
        ct = compute_dtype(dtype)
        with np.errstate(all="ignore"):
            expected = ref(x.astype(ct))
        check_exact(getattr(t, op)(), expected, dtype)
        check_exact(getattr(ember, op)(t), expected, dtype)


@pytest.mark.parametrize("op", sorted(PREDICATES))
def test_unary_predicates(device, dtype, op, rng):
    if not require_dtype(device, dtype):
        return
    for t, x in unary_cases(rng, dtype, device, "normal"):
        expected = PREDICATES[op](x)
        check_exact(getattr(t, op)(), expected, "bool")
        check_exact(getattr(ember, op)(t), expected, "bool")
    if edtype(dtype).is_float:
        x = np.array([np.nan, -np.inf, np.inf, -0.0, 1.0, -np.nan])
        t = ember.tensor(x, dtype=edtype(dtype), device=device)
        check_exact(getattr(t, op)(), PREDICATES[op](x), "bool")


def test_round_is_half_to_even(device):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1000.5, -0.0])
    for name in ("float32", "float16", "bfloat16"):
        t = ember.tensor(x, dtype=edtype(name), device=device)
        check_exact(t.round(), np.rint(rounded(x, name)), name)


def test_unary_operators(device, dtype, rng):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (4, 3), dtype)
    t = to_ember(x, dtype, device)
    ct = compute_dtype(dtype)
    if dtype == "bool":
        with pytest.raises(ember.UnsupportedDTypeError, match="logical_not or ~"):
            _ = -t
        with pytest.raises(ember.UnsupportedDTypeError, match="abs"):
            abs(t)
        check_exact(~t, ~x, "bool")
        return
    with np.errstate(all="ignore"):
        check_exact(-t, -x.astype(ct), dtype)
        check_exact(abs(t), np.abs(x.astype(ct)), dtype)


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_unary_special_values(device, name):
    if not require_dtype(device, name):
        return
    x = np.array([-100.0, -10.0, -0.0, 0.0, 10.0, 100.0, np.inf, -np.inf, np.nan])
    t = ember.tensor(x, dtype=edtype(name), device=device)
    with np.errstate(all="ignore"):
        refs = {
            "exp": np.exp(x),
            "log": np.log(x),
            "sqrt": np.sqrt(x),
            "recip": 1.0 / x,
            "tanh": np.tanh(x),
            "sigmoid": sigmoid_ref(x),
            "relu": np.maximum(x, 0),
            "abs": np.abs(x),
            "expm1": np.expm1(x),
            "log1p": np.log1p(x),
            "rsqrt": 1.0 / np.sqrt(x),
            "tan": np.tan(x),
            "erf": erf_ref(x),
            "sign": np.sign(x),
            "floor": np.floor(x),
            "ceil": np.ceil(x),
            "round": np.rint(x),
            "trunc": np.trunc(x),
        }
        finite = x[:6]
        # the limits at +-inf, as PyTorch: inf and -0
        refs["gelu"] = np.concatenate([gelu_ref(finite), [np.inf, -0.0, np.nan]])
        refs["silu"] = np.concatenate([finite * sigmoid_ref(finite), [np.inf, -0.0, np.nan]])
    for op, expected in refs.items():
        # overflow to inf and underflow to 0 happen in the dtype itself
        got = getattr(t, op)()
        atol = 1e-6 if op in ("gelu", "silu") else 1e-30
        check_close(got, rounded(expected, name), name, atol=atol)


@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (0.0, None), (None, 0.25), (1.0, 1.0)], ids=str)
def test_clamp(device, dtype, bounds, rng):
    if not require_dtype(device, dtype):
        return
    lo, hi = bounds
    if dtype == "bool":
        with pytest.raises(ember.UnsupportedDTypeError, match="clamp"):
            ember.ones(2, dtype=ember.bool, device=device).clamp(min=lo, max=hi)
        return
    if not edtype(dtype).is_float:
        lo = None if lo is None else int(lo * 8) + (10 if dtype != "int64" else 0)
        hi = None if hi is None else int(hi * 8) + (10 if dtype != "int64" else 0)
    for t, x in unary_cases(rng, dtype, device, "normal"):
        expected = np.clip(x.astype(compute_dtype(dtype)), lo, hi)
        check_exact(t.clamp(min=lo, max=hi), expected, dtype)
        check_exact(ember.clamp(t, min=lo, max=hi), expected, dtype)


def test_clamp_positional(device):
    t = ember.tensor([-2.0, 0.0, 2.0], device=device)
    check_exact(t.clamp(-1.0, 1.0), np.array([-1.0, 0.0, 1.0]), "float32")


@pytest.mark.parametrize("name", DTYPES)
def test_ops_keep_device_and_dtype(device, name):
    if not require_dtype(device, name):
        return
    t = ember.ones(2, 2, dtype=edtype(name), device=device)
    same = (t + t, t * t, ember.maximum(t, t), t.sign())
    if name != "bool":
        same += (t * 2, -t, t.relu(), t.clamp(min=0))
    for r in same:
        assert r.dtype == edtype(name)
        assert r.device.same_device(device)
    for r in (t == t, t < 1, t.isnan(), t.isfinite()):
        assert r.dtype == ember.bool
        assert r.device.same_device(device)


def test_clamp_keeps_nan(device):
    for name in FLOAT_DTYPES:
        if not require_dtype(device, name):
            continue
        t = ember.tensor([np.nan, -3.0, 3.0], dtype=edtype(name), device=device)
        check_exact(t.clamp(min=-1.0, max=1.0), np.array([np.nan, -1.0, 1.0]), name)
        check_exact(t.clamp(min=0.0), np.array([np.nan, 0.0, 3.0]), name)


def test_large_int_scalars_stay_exact(device):
    big = 2**53 + 1  # not a float64
    t = ember.zeros(2, dtype=ember.int64, device=device)
    check_exact(t + big, np.array([big, big]), "int64")
    check_exact(big - t, np.array([big, big]), "int64")
    check_exact(
        ember.full((2,), big, dtype=ember.int64, device=device), np.array([big, big]), "int64"
    )
    check_exact(ember.full_like(t, big), np.array([big, big]), "int64")
    check_exact(ember.where(t == 0, big, t), np.array([big, big]), "int64")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_large_views_through_every_op_family(device, layout, rng):
    # big enough for the multi-threaded and vectorised paths, in every layout
    shape = (96, 700)
    t, x = make_view(rng, shape, "float32", device, layout)
    u, y = make_view(rng, shape, "float32", device, "transposed")
    check_exact(t + u, x + y, "float32")
    check_exact(t * 3.0, x * np.float32(3.0), "float32")
    check_close(t.exp(), np.exp(x.astype(np.float64)), "float32")
    check_close(t.gelu(), gelu_ref(x), "float32")
    check_exact(t.relu(), np.maximum(x, 0), "float32")
    check_exact(t < u, (x < y), "bool")
    check_exact(ember.where(t > 0, t, u), np.where(x > 0, x, y), "float32")
    check_exact(t.to_dtype(ember.float16), x.astype(np.float16), "float16")
    check_exact(t.max(dim=0).values, x.max(axis=0), "float32")
    check_exact(t.argmin(dim=1), x.argmin(axis=1), "int64")
    np.testing.assert_allclose(
        t.sum(dim=0).numpy(), x.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-4
    )
    np.testing.assert_allclose(
        t.softmax(0).numpy(),
        np.exp(x - x.max(0)) / np.exp(x - x.max(0)).sum(0),
        rtol=1e-4,
        atol=1e-7,
    )
    i, xi = make_view(rng, shape, "int64", device, layout)
    check_exact(i // 7, np.floor_divide(xi, 7), "int64")
    check_exact(i % 7, np.remainder(xi, 7), "int64")
    check_exact(i.sum(dim=1), xi.sum(axis=1), "int64")


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_types_over_long_strided_and_broadcast_runs(device, name, rng):
    """The 16-bit floats convert whole runs: operands read with a stride over runs longer
    than one conversion chunk, a broadcast column, a result stored into a strided view,
    a where between them, and casts through strided views, each what float32 math rounded
    once to the dtype gives."""
    if not require_dtype(device, name):
        return
    x = rng.standard_normal((6, 3002)).astype(np.float32)
    h = ember.tensor(x, device=device).to_dtype(edtype(name))
    xr = h.to_dtype(ember.float32).numpy()

    def check(got, want):
        check_exact(got, rounded(want, name), name, device)

    check(h[:, ::2] + h[:, 1::2][:, :1501], xr[:, ::2] + xr[:, 1::2][:, :1501])
    check(h * h[:, :1], xr * xr[:, :1])
    check(h[:, ::3] * 3, xr[:, ::3] * np.float32(3))
    u = h.clone()
    u[:, ::2] = h[:, ::2] * h[:, 1::2][:, :1]
    want = xr.copy()
    want[:, ::2] = rounded(xr[:, ::2] * xr[:, 1::2][:, :1], name)
    check(u, want)
    check(ember.where(h > 0, h, h[:, ::-1]), np.where(xr > 0, xr, xr[:, ::-1]))
    f = ember.tensor(x, device=device)
    check(f[:, ::2].to_dtype(edtype(name)), x[:, ::2])
    np.testing.assert_array_equal(h[:, ::2].to_dtype(ember.float32).numpy(), xr[:, ::2])


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_types_arithmetic_at_every_run_length(device, name, rng):
    """+, -, *, / of 16-bit floats, both operands dense, one a single value (a Python
    number on either side, a broadcast column), at run lengths around every vector width:
    float32 math on the stored values rounded once to the dtype, overflow to inf,
    subnormal results, inf and NaN included."""
    if not require_dtype(device, name):
        return
    big = 6.0e4 if name == "float16" else 3.0e38
    for n in (1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100):
        x = rng.standard_normal((3, n)).astype(np.float32)
        y = rng.standard_normal((3, n)).astype(np.float32) + 0.25
        x[0, 0], x[1, n // 2], x[2, n - 1] = big, np.inf, np.nan
        x[1, 0] = 1e-4  # times 1e-3: a subnormal float16, a normal bfloat16
        h = ember.tensor(x, device=device).to_dtype(edtype(name))
        g = ember.tensor(y, device=device).to_dtype(edtype(name))
        xr = h.to_dtype(ember.float32).numpy()
        yr = g.to_dtype(ember.float32).numpy()

        def check(got, want):
            with np.errstate(all="ignore"):
                check_exact(got, rounded(want, name), name, device)

        with np.errstate(all="ignore"):
            check(h + g, xr + yr)
            check(h - g, xr - yr)
            check(h * g, xr * yr)
            check(h / g, xr / yr)
            check(h * 3.5, xr * np.float32(3.5))
            check(h * 1e-3, xr * rounded(np.float32(1e-3), name))
            check(2.5 - h, np.float32(2.5) - xr)
            check(1.0 / g, np.float32(1.0) / yr)
            check(h / g[:, :1], xr / yr[:, :1])
            check(g[:, :1] - h, yr[:, :1] - xr)


@pytest.mark.parametrize("capability", ["avx2", "default"])
def test_half_types_at_each_cpu_level(capability):
    """EMBER_CPU_CAPABILITY caps the level of the CPU kernels picked at run time, so the
    AVX2 and baseline paths of the 16-bit floats' arithmetic and conversions give the same
    values as the tests above on a CPU that has more (a CPU setting, so not per device)."""
    pytest_at_cpu_level(capability, ["test_elementwise.py"], "half_types and not at_each_cpu_level and cpu")


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "int64", "uint8"])
def test_binary_ops_with_an_operand_read_across_its_memory_order(device, name, rng):
    """One operand transposed against a dense one (a.T + b, b * a.T, a.T > b, a.T - a
    column), over shapes past the CPU's staged tiles (rows not a multiple of 16, rows
    wider than one tile) and a batch of transposed matrices: numpy's values."""
    if not require_dtype(device, name):
        return
    for shape in [(37, 2100), (18, 40), (3, 40, 50)]:
        if len(shape) == 3:  # a batch of transposes: the last two dims swapped
            base = rand_array(rng, (shape[0], shape[2], shape[1]), name)
            a, xa = to_ember(base, name, device).permute(0, 2, 1), base.transpose(0, 2, 1)
        else:
            a, xa = make_view(rng, shape, name, device, "transposed")
        b, xb = make_view(rng, shape, name, device, "contiguous")
        col, xc = make_view(rng, shape[:-1] + (1,), name, device, "contiguous")
        ref = xa.astype(np.float32) if name in ("float16", "bfloat16") else xa
        refb = xb.astype(np.float32) if name in ("float16", "bfloat16") else xb
        refc = xc.astype(np.float32) if name in ("float16", "bfloat16") else xc
        with np.errstate(over="ignore"):
            check_exact(a + b, rounded(ref + refb, name), name, device)
            check_exact(b * a, rounded(refb * ref, name), name, device)
            check_exact(a - col, rounded(ref - refc, name), name, device)
        np.testing.assert_array_equal((a > b).numpy(), ref > refb)
