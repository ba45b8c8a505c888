"""numpy operands (DESIGN.md, Python semantics): `t + ndarray`, `ndarray + t`,
`t == ndarray` and numpy's ufuncs on tensors (`np.add(t, 1)`) give ember Tensors. The
ndarray is read as a CPU tensor, as ember.tensor(ndarray) reads it, and promotes with
ember's rules; with a GPU tensor that is a DeviceMismatchError naming the op and both
devices, never a copy. numpy scalars and 0-d arrays are numbers, as Python scalars."""

from __future__ import annotations

import operator

import ember
import numpy as np
import pytest
from helpers import check_close, check_exact, require_dtype, rounded

# (python operator, numpy's reference, ember op name in errors)
BINARY = {
    "add": (operator.add, np.add),
    "sub": (operator.sub, np.subtract),
    "mul": (operator.mul, np.multiply),
    "div": (operator.truediv, np.true_divide),
    "floor_divide": (operator.floordiv, np.floor_divide),
    "remainder": (operator.mod, np.remainder),
    "pow": (operator.pow, np.power),
    "maximum": (np.maximum, np.maximum),
    "minimum": (np.minimum, np.minimum),
}
CMP = {
    "eq": (operator.eq, np.equal),
    "ne": (operator.ne, np.not_equal),
    "lt": (operator.lt, np.less),
    "le": (operator.le, np.less_equal),
    "gt": (operator.gt, np.greater),
    "ge": (operator.ge, np.greater_equal),
}


def on_host(device) -> bool:
    return device.kind == "cpu"


def operands(rng, device, tdtype="float32", adtype=np.float32):
    """A (3, 4) tensor on `device` and a (4,) ndarray (broadcast), positive values."""
    x = rng.uniform(0.5, 4.0, (3, 4)).astype(np.float32)
    x = rounded(np.round(x) if tdtype in ("int64", "uint8", "uint32") else x, tdtype)
    a = rng.uniform(0.5, 4.0, 4).astype(adtype) if adtype is not bool else rng.random(4) > 0.5
    if np.dtype(adtype).kind in "iu":
        a = np.round(rng.uniform(1, 4, 4)).astype(adtype)
    return ember.tensor(x, dtype=tdtype, device=device), x, a


def check_mismatch(info, device, op, gpu_left):
    """The error ember gives for CPU and GPU tensors mixed, with both devices named."""
    e = info.value
    assert e.op == op
    gpu, cpu = (e.lhs, e.rhs) if gpu_left else (e.rhs, e.lhs)
    assert gpu.same_device(device) and cpu.kind == "cpu"
    msg = str(e)
    assert f"device mismatch in {op}" in msg
    assert "cpu:0" in msg and f"{device.kind}:0" in msg


def run(device, fn, op, tensor_left):
    """fn()'s result on the CPU; on a GPU asserts the DeviceMismatchError, gives None."""
    if on_host(device):
        return fn()
    with pytest.raises(ember.DeviceMismatchError) as info:
        fn()
    check_mismatch(info, device, op, gpu_left=tensor_left)
    return None


@pytest.mark.parametrize("tensor_left", [True, False], ids=["t_op_array", "array_op_t"])
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_operators_take_ndarrays(device, rng, name, tensor_left):
    pyop, ref = BINARY[name]
    t, x, a = operands(rng, device)
    lhs, rhs = (t, a) if tensor_left else (a, t)
    r = run(device, lambda: pyop(lhs, rhs), name, tensor_left)
    if r is not None:
        want = ref(x, a) if tensor_left else ref(a, x)
        check_close(r, want, "float32", rtol=1e-6, device=device)


@pytest.mark.parametrize("tensor_left", [True, False], ids=["t_op_array", "array_op_t"])
@pytest.mark.parametrize("name", list(CMP))
def test_comparisons_take_ndarrays(device, rng, name, tensor_left):
    pyop, ref = CMP[name]
    t, x, _ = operands(rng, device)
    a = x[1].copy()  # equal to row 1: every comparison has both outcomes
    a[0] += 1
    lhs, rhs = (t, a) if tensor_left else (a, t)
    r = run(device, lambda: pyop(lhs, rhs), name, tensor_left)
    if r is not None:
        assert isinstance(r, ember.Tensor)
        want = ref(x, a) if tensor_left else ref(a, x)
        assert r.shape == want.shape
        np.testing.assert_array_equal(r.numpy().astype(bool), want)


def test_the_methods_and_functions_take_ndarrays(device, rng):
    t, x, a = operands(rng, device)
    calls = {
        "add": lambda: t.add(a),
        "mul": lambda: ember.mul(a, t),
        "maximum": lambda: ember.maximum(t, a),
        "lt": lambda: ember.lt(a, t),
    }
    for name, call in calls.items():
        r = run(device, call, name, tensor_left=name in ("add", "maximum"))
        if r is not None:
            assert isinstance(r, ember.Tensor) and r.shape == (3, 4)


def test_where_takes_ndarrays(device, rng):
    t, x, a = operands(rng, device)
    cond = t > 2
    for args, want in (((t, a), np.where(x > 2, x, a)), ((a, t), np.where(x > 2, a, x))):
        if on_host(device):
            check_exact(ember.where(cond, *args), want, "float32", device)
            continue
        with pytest.raises(ember.DeviceMismatchError) as info:
            ember.where(cond, *args)
        e = info.value
        assert e.op == "where"
        assert {e.lhs.kind, e.rhs.kind} == {"cpu", device.kind}


# (tensor dtype, ndarray dtype, result dtype): ember's promotion between two tensors
PROMOTION = [
    ("int64", np.float32, "float32"),
    ("uint8", np.int64, "int64"),
    ("uint8", np.uint32, "uint32"),
    ("float16", np.float32, "float32"),
    ("float32", np.float64, "float64"),
    ("int64", bool, "int64"),  # a bool array is a bool tensor: the integer wins
    ("uint8", bool, "uint8"),
    ("float32", np.int32, "float32"),
    ("uint8", np.int32, "int32"),  # an int32 array stays int32
    ("uint32", np.int32, "int64"),
]


@pytest.mark.parametrize("tensor_left", [True, False], ids=["t_op_array", "array_op_t"])
@pytest.mark.parametrize("tdtype,adtype,want", PROMOTION, ids=[f"{p[0]}-{p[2]}" for p in PROMOTION])
def test_ndarrays_promote_as_tensors(device, rng, tdtype, adtype, want, tensor_left):
    t, x, a = operands(rng, device, tdtype, adtype)
    r = run(device, lambda: t * a if tensor_left else a * t, "mul", tensor_left)
    if r is not None:
        assert r.dtype == want
        check_exact(r, x.astype(np.float64) * a.astype(np.float64), want)


def test_inplace_operators_write_ndarrays_into_the_tensor(device, rng):
    t, x, a = operands(rng, device)
    before = t
    if on_host(device):
        t += a
        t *= a
        assert t is before
        check_close(t, (x + a) * a, "float32", rtol=1e-6)
        return
    with pytest.raises(ember.DeviceMismatchError) as info:
        t += a
    check_mismatch(info, device, "add", gpu_left=True)
    np.testing.assert_array_equal(t.numpy(), x)  # nothing was written


def test_inplace_keeps_the_tensors_dtype(device):
    t = ember.zeros(3, dtype=ember.int64)
    t += np.array([1, 2, 3], dtype=np.int32)  # int32 -> int64 fits
    check_exact(t, [1, 2, 3], "int64")
    with pytest.raises(ember.DTypeMismatchError):
        t += np.ones(3, np.float32)  # a float cannot be written into an int64 tensor
    check_exact(t, [1, 2, 3], "int64")


@pytest.mark.parametrize(
    "ufunc,call",
    [
        (np.add, lambda t: np.add(t, 1)),
        (np.subtract, lambda t: np.subtract(10, t)),
        (np.multiply, lambda t: np.multiply(t, np.float32(2.0))),
        (np.true_divide, lambda t: np.divide(t, 2)),
        (np.floor_divide, lambda t: np.floor_divide(t, 2)),
        (np.remainder, lambda t: np.mod(t, 3)),
        (np.power, lambda t: np.power(t, 2)),
        (np.maximum, lambda t: np.maximum(t, 2)),
        (np.minimum, lambda t: np.minimum(2, t)),
        (np.negative, np.negative),
        (np.absolute, np.abs),
        (np.exp, np.exp),
        (np.log, np.log),
        (np.sqrt, np.sqrt),
        (np.sin, np.sin),
        (np.cos, np.cos),
        (np.tanh, np.tanh),
        (np.square, np.square),
        (np.floor, np.floor),
        (np.trunc, np.trunc),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_ufuncs_run_the_ember_op_on_the_tensors_device(device, rng, ufunc, call):
    x = rng.uniform(0.5, 4.0, (3, 4)).astype(np.float32)
    r = call(ember.tensor(x, device=device))
    assert isinstance(r, ember.Tensor)
    assert r.device.same_device(device)  # numbers go with the tensor: no host copy
    check_close(r, call(x), "float32", rtol=2e-6)


def test_ufunc_comparisons_and_out(device, rng):
    x = rng.uniform(0.5, 4.0, 5).astype(np.float32)
    t = ember.tensor(x, device=device)
    r = np.greater(t, 2)
    assert isinstance(r, ember.Tensor)
    np.testing.assert_array_equal(r.numpy().astype(bool), x > 2)
    out = ember.zeros(5, device=device)
    assert np.add(t, 1, out=out) is out
    assert np.exp(t, out=out) is out
    check_close(out, np.exp(x), "float32")


@pytest.mark.parametrize(
    "scalar", [np.float32(2.5), np.float64(2.5), np.float16(2.5), np.array(2.5)], ids=repr
)
def test_numpy_float_scalars_are_python_floats(device, scalar):
    # as 2.5: an int64 tensor becomes float32, a float32 tensor stays float32
    i = ember.tensor([1, 2, 3], device=device)
    f = ember.tensor([1.0, 2.0, 3.0], device=device)
    for r in (i + scalar, scalar + i):
        check_exact(r, [3.5, 4.5, 5.5], "float32", device)
    for r in (f * scalar, scalar * f, np.multiply(scalar, f)):
        check_exact(r, [2.5, 5.0, 7.5], "float32", device)
    check_exact(f < scalar, [1, 1, 0], "bool", device)  # comparisons give bool


@pytest.mark.parametrize(
    "scalar", [np.int64(3), np.int32(3), np.uint8(3), np.array(3), np.bool_(True)], ids=repr
)
def test_numpy_int_scalars_are_python_ints(device, scalar):
    t = ember.tensor([1, 2, 3], dtype=ember.uint8, device=device)
    v = int(scalar)
    for r in (t + scalar, scalar + t, np.add(t, scalar)):
        check_exact(r, [1 + v, 2 + v, 3 + v], "uint8", device)  # the tensor's dtype stays
    t += scalar
    check_exact(t, [1 + v, 2 + v, 3 + v], "uint8", device)
    if require_dtype(device, "float64"):
        d = ember.tensor([1.0], dtype=ember.float64, device=device)
        check_exact(d * scalar, [float(v)], "float64", device)


def test_a_float_numpy_scalar_into_an_int_tensor_is_refused(device):
    t = ember.zeros(3, dtype=ember.int64, device=device)
    for scalar in (np.float32(0.5), np.array(0.5)):
        with pytest.raises(ember.DTypeMismatchError):
            t += scalar


def test_ufuncs_without_an_ember_op_are_numpys_type_error(device):
    t = ember.ones(3, device=device)
    for call in (
        lambda: np.logaddexp(t, t),  # no ember op
        lambda: np.add.reduce(t),  # a ufunc method
        lambda: np.add(t, 1, dtype=np.float64),  # numpy-only keyword
        lambda: np.add(np.ones(3), np.ones(3), out=(t,)),  # only out= is a tensor
    ):
        with pytest.raises(TypeError):
            call()


def test_ndarray_inplace_with_a_tensor_does_not_write_numpy_memory(device):
    a = np.zeros(3, np.float32)
    with pytest.raises(TypeError):
        a += ember.ones(3, device=device)
    np.testing.assert_array_equal(a, 0)


def test_bad_ndarrays_name_the_problem():
    t = ember.ones(2)
    with pytest.raises(ember.InvalidArgumentError, match="complex"):
        t + np.ones(2, np.complex64)
    with pytest.raises(ember.ShapeMismatchError):
        t + np.ones(3, np.float32)


def test_the_array_protocol_still_exports_cpu_tensors(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    t = ember.tensor(x)
    for got in (np.asarray(t), np.array(t), t.__array__()):
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, x)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_with_an_ndarray_either_side(device, dtype):
    if not require_dtype(device, dtype):
        return
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4)).astype(dtype)
    b = rng.standard_normal((4, 2)).astype(dtype)
    t, u = ember.tensor(a, device=device), ember.tensor(b, device=device)
    forms = [lambda: t @ b, lambda: a @ u, lambda: np.matmul(t, b), lambda: np.matmul(a, u)]
    for form in forms:
        if not on_host(device):
            with pytest.raises(ember.DeviceMismatchError, match="matmul"):
                form()
            continue
        got = form()
        assert isinstance(got, ember.Tensor) and got.dtype == getattr(ember, dtype)
        check_close(got, a @ b, dtype)
    with pytest.raises(TypeError):
        3 @ t


def test_bitwise_and_logical_ufuncs_with_an_ndarray_on_the_left():
    m = np.array([True, False, True, False])
    n = ember.tensor([True, True, False, False])
    for ufunc in (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.logical_and,
                  np.logical_or, np.logical_xor):  # fmt: skip
        got = ufunc(m, n)
        assert isinstance(got, ember.Tensor) and got.dtype == ember.bool
        np.testing.assert_array_equal(got.numpy(), ufunc(m, n.numpy()))
    i = np.array([6, 3, -1], dtype=np.int64)
    j = ember.tensor([3, 5, 7])
    np.testing.assert_array_equal((i & j).numpy(), i & j.numpy())
    np.testing.assert_array_equal((i ^ j).numpy(), i ^ j.numpy())
    np.testing.assert_array_equal(np.invert(j).numpy(), np.invert(j.numpy()))
    np.testing.assert_array_equal(np.logical_not(n).numpy(), [False, False, True, True])
