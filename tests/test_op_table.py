"""The op table (csrc/core/ops.def) drives this test: every (op, dtype) that a row
promises runs on every device, through both the dense and the strided kernels, and
gives the result dtype of its class; a dtype outside an op's class raises
UnsupportedDTypeError naming the op. A backend missing a kernel the table promises
fails here (on Metal: "cannot build kernel"), not at a user's first call."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import DTYPES, FLOAT_DTYPES, edtype, require_dtype

ROWS = ember._core._op_table()
FAMILIES = {"unary", "binary", "cmp", "reduce"}


def takes(cls: str, dtype: str) -> bool:
    if cls == "float":
        return dtype in FLOAT_DTYPES
    if cls == "integer":
        return dtype not in FLOAT_DTYPES
    return True


def expected_dtype(family: str, name: str, cls: str, dtype: str) -> str:
    if cls == "predicate":
        return "uint8"
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
    if dtype not in FLOAT_DTYPES:
        x = np.round(x * 4)
    dense = ember.tensor(x, dtype=edtype(dtype), device=device)
    strided = ember.tensor(x.transpose(2, 1, 0).copy(), dtype=edtype(dtype), device=device)
    return dense, strided.permute(2, 1, 0)


def run(family: str, name: str, has_params: bool, t):
    fn = getattr(ember, name)
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
        assert callable(getattr(ember, name)) and name in ember.__all__
        assert callable(getattr(ember.Tensor, name))


@pytest.mark.parametrize("row", ROWS, ids=[row[1] for row in ROWS])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_op_and_dtype_the_table_promises(device, row, dtype):
    family, name, cls, has_params = row
    if not require_dtype(device, dtype):
        return
    for t in inputs(dtype, device):
        if not takes(cls, dtype):
            with pytest.raises(ember.UnsupportedDTypeError) as info:
                run(family, name, has_params, t)
            assert info.value.op == name and info.value.dtype == edtype(dtype)
            continue
        got = run(family, name, has_params, t)
        assert got.dtype == edtype(expected_dtype(family, name, cls, dtype))
        assert got.device.same_device(device)
        if device.kind != "cpu":  # the same values as the CPU backend
            want = run(family, name, has_params, t.to_device(ember.device("cpu")))
            np.testing.assert_allclose(
                got.numpy().astype(np.float64), want.numpy().astype(np.float64), rtol=1e-2
            )
