"""The op table (csrc/core/ops.def) drives this test: every (op, dtype) that a row
promises runs on every device, through both the dense and the strided kernels, and
gives the result dtype of its class; a dtype outside an op's class raises
UnsupportedDTypeError naming the op. A backend missing a kernel the table promises
fails here (on Metal: "cannot build kernel"), not at a user's first call.

bool follows PyTorch op by op: the ops PyTorch refuses for bool raise
UnsupportedDTypeError naming the op (BOOL_REFUSED), + is logical or, sqr (PyTorch's
square, pow(t, 2)) gives int64."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import DTYPES, FLOAT_DTYPES, edtype, require_dtype

ROWS = ember._core._op_table()
FAMILIES = {"unary", "binary", "cmp", "reduce"}


# The rows PyTorch refuses for bool tensors ("... not implemented for 'Bool'").
BOOL_REFUSED = {
    "neg", "abs", "relu", "floor", "ceil", "round", "trunc", "clamp",
    "sub", "floor_divide", "remainder", "trunc_divide", "pow",
}  # fmt: skip


def takes(cls: str, dtype: str, name: str = "") -> bool:
    if dtype == "bool" and name in BOOL_REFUSED:
        return False
    if cls == "float":
        return dtype in FLOAT_DTYPES
    if cls == "integer":
        return dtype not in FLOAT_DTYPES
    return True


def expected_dtype(family: str, name: str, cls: str, dtype: str) -> str:
    if cls == "predicate":
        return "bool"
    if dtype == "bool" and name == "sqr":
        return "int64"
    if cls == "to_float" and dtype not in FLOAT_DTYPES:  # true division of integers
        return "float32"
    if family == "reduce" and name in ("argmax", "argmin"):
        return "int64"
    if family == "reduce" and name == "sum" and dtype not in FLOAT_DTYPES:
        return "int64"
    return dtype


def inputs(dtype: str, device):
    """A dense (2, 3, 4) tensor and a transposed view of one: both kernels of each op.
    Values in (0, 2], inside every op's domain (log, sqrt, pow)."""
    x = (np.arange(1, 25, dtype=np.float64).reshape(2, 3, 4) % 7 + 1) / 4
    if dtype == "bool":
        x = np.arange(24).reshape(2, 3, 4) % 3 == 0
    elif dtype not in FLOAT_DTYPES:
        x = np.round(x * 4)
    dense = ember.tensor(x, dtype=edtype(dtype), device=device)
    strided = ember.tensor(x.transpose(2, 1, 0).copy(), dtype=edtype(dtype), device=device)
    return dense, strided.permute(2, 1, 0)


# Rows that are a form of another binding rather than a name of their own.
FORMS = {"gelu_tanh": lambda t: ember.gelu(t, approximate="tanh")}


def run(family: str, name: str, has_params: bool, t):
    fn = FORMS.get(name) or getattr(ember, name)
    if family == "unary":
        return fn(t, 0.5, 1.5) if has_params else fn(t)
    if family in ("binary", "cmp"):
        return fn(t, t)
    if name in ("max", "min"):  # the table's max/min are the value reductions amax/amin
        fn = getattr(ember, "a" + name)
    return fn(t, dim=-1)


def test_every_family_is_in_the_table():
    assert {row[0] for row in ROWS} == FAMILIES
    assert {row[2] for row in ROWS} <= {"all", "float", "integer", "predicate", "to_float"}
    names = [row[1] for row in ROWS]
    assert len(names) == len(set(names))
    for _, name, _, _ in ROWS:
        if name in FORMS:
            assert not hasattr(ember, name)
            continue
        assert callable(getattr(ember, name)) and name in ember.__all__
        assert callable(getattr(ember.Tensor, name))


@pytest.mark.parametrize("row", ROWS, ids=[row[1] for row in ROWS])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_and_dtype_the_table_promises(device, row, dtype):
    family, name, cls, has_params = row
    if not require_dtype(device, dtype):
        return
    for t in inputs(dtype, device):
        if not takes(cls, dtype, name):
            with pytest.raises(ember.UnsupportedDTypeError) as info:
                run(family, name, has_params, t)
            assert info.value.op == {"gelu_tanh": "gelu"}.get(name, name) and info.value.dtype == edtype(dtype)
            continue
        got = run(family, name, has_params, t)
        assert got.dtype == edtype(expected_dtype(family, name, cls, dtype))
        assert got.device.same_device(device)
        if device.kind != "cpu":  # the same values as the CPU backend
            want = run(family, name, has_params, t.to_device(ember.device("cpu")))
            np.testing.assert_allclose(
                got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=1e-2
            )


def test_bool_rows_compute_on_the_bytes_as_pytorch(device):
    """bool's arithmetic: + is or, * is and, maximum/minimum are or/and, bitwise ops
    stay 0/1 and ~ is not (never the byte ~1 = 254); values against numpy's bool ops."""
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    ta, tb = ember.tensor(a, device=device), ember.tensor(b, device=device)
    cases = {
        "add": a | b, "mul": a & b, "maximum": a | b, "minimum": a & b,
        "bitwise_and": a & b, "bitwise_or": a | b, "bitwise_xor": a ^ b,
    }  # fmt: skip
    for name, want in cases.items():
        got = getattr(ember, name)(ta, tb)
        assert got.dtype == ember.bool, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
    for got in (ta + tb, ta * tb, ta & tb, ta | tb, ta ^ tb, ~ta):
        assert got.dtype == ember.bool and got.numpy().dtype == np.bool_
    np.testing.assert_array_equal((~ta).numpy(), ~a)
    np.testing.assert_array_equal(ember.bitwise_not(ta).numpy(), ~a)
    np.testing.assert_array_equal(ember.sign(ta).numpy(), a)
    np.testing.assert_array_equal(ember.sqr(ta).numpy(), a.astype(np.int64))
    div = ta / ember.tensor([True, True, True, True], device=device)
    assert div.dtype == ember.float32
    np.testing.assert_array_equal(div.numpy(), a.astype(np.float32))


@pytest.mark.parametrize(
    "expr, op, fix",
    [
        ("-a", "neg", "logical_not or ~"),
        ("a - a", "sub", "logical_xor or ^"),
        ("a - True", "sub", "logical_xor or ^"),
        ("a.abs()", "abs", "t.to(ember.int64).abs()"),
        ("a // a", "floor_divide", ".to(ember.int64)"),
        ("a % a", "remainder", ".to(ember.int64)"),
        ("a ** a", "pow", ".to(ember.int64)"),
        ("a.clamp(0, 1)", "clamp", "t.to(ember.int64).clamp()"),
        ("a @ a", "matmul", ".to(ember.int64)"),
        ("a.exp()", "exp", "ember.float32"),
        ("a.mean()", "mean", "ember.float32"),
    ],
)
def test_bool_refusals_name_the_op_and_the_fix(device, expr, op, fix):
    a = ember.tensor([True, False], device=device)
    with pytest.raises(ember.UnsupportedDTypeError) as info:
        eval(expr, {"a": a, "ember": ember})
    assert info.value.op == op and info.value.dtype == ember.bool
    assert op in str(info.value) and fix in str(info.value)
