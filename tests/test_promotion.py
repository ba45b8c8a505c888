"""Type promotion between two tensors (design §4, PyTorch's rules): the higher category
(bool < integers < floats), then the wider type; float16 with bfloat16 gives float32,
uint32 with int32 int64. Binary ops,
comparisons and where promote on every backend; out= and in-place ops take a result they
can hold (never a float into an integer tensor). Python scalars keep their own rule (they
only lift the category), tested in test_elementwise."""

from __future__ import annotations

import itertools

import ember
import numpy as np
import pytest
from conftest import DEVICE_SPECS
from helpers import DTYPES, NP_DTYPE, edtype, rand_array, require_dtype, rounded

# torch.promote_types for ember's dtypes, written out (cross-checked against torch below)
PROMOTED = {
    frozenset({"float16", "bfloat16"}): "float32",
    frozenset({"uint8", "uint32"}): "uint32",
    frozenset({"uint32", "int32"}): "int64",
}


def promoted(a: str, b: str) -> str:
    if a == b:
        return a
    if frozenset({a, b}) in PROMOTED:
        return PROMOTED[frozenset({a, b})]
    order = [
        "bool",
        "uint8",
        "uint32",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    ]
    return max(a, b, key=order.index)


PAIRS = [(a, b) for a, b in itertools.product(DTYPES, DTYPES) if a != b]


def test_the_table_is_pytorchs():
    torch = pytest.importorskip("torch")
    for a, b in PAIRS:
        try:
            want = torch.promote_types(getattr(torch, a), getattr(torch, b))
        except (AttributeError, RuntimeError):  # an old torch without uint32 promotion
            continue
        assert str(want) == f"torch.{promoted(a, b)}", (a, b)


def all_supported(device, *names) -> bool:
    """False (after asserting the refusal) where the device lacks one: Metal's float64."""
    return all([require_dtype(device, n) for n in names])


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_ops_promote_two_tensors(device, a, b, rng):
    r = promoted(a, b)
    if not all_supported(device, a, b, r):
        return
    x = rand_array(rng, (3, 4), a, "positive")
    y = rand_array(rng, (4,), b, "positive")  # broadcast too
    tx = ember.tensor(x, dtype=edtype(a), device=device)
    ty = ember.tensor(y, dtype=edtype(b), device=device)
    # the reference: both operands in the result dtype first, as PyTorch computes
    xr, yr = rounded(x, r), rounded(y, r)
    for op, ref in [("add", np.add), ("mul", np.multiply), ("maximum", np.maximum)]:
        got = getattr(ember, op)(tx, ty)
        assert got.dtype == edtype(r) and got.device.same_device(device), (op, got.dtype)
        np.testing.assert_array_equal(got.numpy(), rounded(ref(xr, yr), r), err_msg=op)
    got = ty + tx  # the operator, reflected order
    assert got.dtype == edtype(r)
    np.testing.assert_array_equal(got.numpy(), rounded(yr + xr, r))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_comparisons_and_where_promote(device, a, b, rng):
    r = promoted(a, b)
    if not all_supported(device, a, b, r):
        return
    x = rand_array(rng, (5,), a, "small")
    y = rand_array(rng, (5,), b, "small")
    tx = ember.tensor(x, dtype=edtype(a), device=device)
    ty = ember.tensor(y, dtype=edtype(b), device=device)
    for got, want in [(tx < ty, x < y), (tx == ty, x == y), (ember.ge(ty, tx), y >= x)]:
        assert got.dtype == ember.bool and got.numpy().dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), want)
    w = ember.where(tx > ty, tx, ty)
    assert w.dtype == edtype(r)
    np.testing.assert_array_equal(w.numpy(), rounded(np.where(x > y, x, y), r))


def test_an_int_tensor_and_a_float_tensor_give_float32(device):
    i = ember.tensor([1, 2, 3], device=device)
    f = ember.tensor([0.5, 0.25, 2.0], device=device)
    s = i + f
    assert s.dtype == ember.float32 and s.tolist() == [1.5, 2.25, 5.0]
    q = i / f  # a float divisor: true division
    assert q.dtype == ember.float32 and q.tolist() == [2.0, 8.0, 1.5]


def test_in_place_and_out_take_a_result_they_can_hold(device):
    h = ember.ones(3, dtype=ember.float16, device=device)
    h += ember.tensor([0.5, 1.0, 2.0], device=device)  # float32 result, cast into float16
    assert h.dtype == ember.float16 and h.tolist() == [1.5, 2.0, 3.0]
    out = ember.zeros(3, dtype=ember.float32, device=device)
    ember.add(ember.arange(3, device=device), ember.arange(3, device=device), out=out)
    assert out.tolist() == [0.0, 2.0, 4.0]  # an int64 result written into float32
    n = ember.arange(3, device=device)
    with pytest.raises(ember.DTypeMismatchError) as info:
        n += ember.ones(3, device=device)
    assert info.value.op == "add" and "cannot be written into" in str(info.value)
    assert n.tolist() == [0, 1, 2]  # untouched
    with pytest.raises(ember.DTypeMismatchError):
        ember.mul(h, h, out=ember.zeros(3, dtype=ember.int64, device=device))


def test_promotion_never_hides_a_device_mismatch(device):
    gpus = [spec for spec in DEVICE_SPECS if spec != "cpu"]
    if device.kind == "cpu" and not gpus:
        pytest.skip("needs a second kind of device (a GPU or EMBER_METAL_EMULATOR=1)")
    other = ember.device("cpu") if device.kind != "cpu" else ember.device(gpus[0])
    with pytest.raises(ember.DeviceMismatchError) as info:
        ember.ones(2, device=device) + ember.ones(2, dtype=ember.int64, device=other)
    assert info.value.op == "add"


def test_numpy_dtype_of_results():
    # t.numpy() gives numpy's dtype of the promoted result
    got = ember.tensor([1], dtype="uint8") + ember.tensor([1], dtype="uint32")
    assert got.numpy().dtype == NP_DTYPE["uint32"]


@pytest.mark.parametrize(
    "a,b,want",
    [
        ("bool", "int32", "int32"),
        ("bool", "uint8", "uint8"),
        ("bool", "int64", "int64"),
        ("bool", "float16", "float16"),
        ("int32", "int64", "int64"),
        ("uint8", "int32", "int32"),
        ("uint32", "int32", "int64"),
        ("int32", "float32", "float32"),
        ("int32", "bfloat16", "bfloat16"),
    ],
)
def test_the_new_dtypes_promote_as_pytorch(device, a, b, want):
    x = np.array([0, 1, 1, 0, 1]) if "bool" in (a, b) else np.array([3, 0, 7, 2, 5])
    y = np.array([1, 1, 0, 0, 2]) if b != "bool" else np.array([1, 0, 1, 0, 1])
    tx = ember.tensor(x, dtype=edtype(a), device=device)
    ty = ember.tensor(y, dtype=edtype(b), device=device)
    xr, yr = rounded(x, a).astype(np.float64), rounded(y, b).astype(np.float64)
    for got in (tx + ty, ty + tx):
        assert got.dtype == edtype(want)
        np.testing.assert_array_equal(got.numpy().astype(np.float64), xr + yr)
    got = tx * ty
    assert got.dtype == edtype(want)
    np.testing.assert_array_equal(got.numpy().astype(np.float64), xr * yr)


@pytest.mark.parametrize(
    "dtype,scalar,want",
    [
        ("bool", True, "bool"),  # a Python bool keeps the tensor's dtype
        ("uint8", True, "uint8"),
        ("int32", False, "int32"),
        ("float16", True, "float16"),
        ("bool", 3, "int64"),  # a Python int lifts bool to int64
        ("int32", 3, "int32"),
        ("uint8", 3, "uint8"),
        ("bool", 2.5, "float32"),  # a Python float lifts bool / integers to float32
        ("int32", 2.5, "float32"),
        ("int64", 2.5, "float32"),
    ],
)
def test_python_scalars_lift_only_the_category(device, dtype, scalar, want):
    x = np.array([True, False, True]) if dtype == "bool" else np.array([1, 0, 4])
    t = ember.tensor(x, dtype=edtype(dtype), device=device)
    base = rounded(x, dtype).astype(np.float64)
    for got in (t + scalar, scalar + t):
        assert got.dtype == edtype(want), (got.dtype, want)
        want_values = np.logical_or(base, scalar) if want == "bool" else base + float(scalar)
        np.testing.assert_array_equal(got.numpy().astype(np.float64), want_values)
    assert (t * scalar).dtype == edtype(want)
    assert (t == scalar).dtype == ember.bool


def test_results_that_do_not_fit_are_refused(device):
    m = ember.tensor([True, False], device=device)
    with pytest.raises(ember.DTypeMismatchError) as info:
        m += 1  # an int64 result never goes into a bool tensor
    assert info.value.op == "add" and "bool" in str(info.value)
    i = ember.tensor(np.array([1, 2], dtype=np.int32), device=device)
    with pytest.raises(ember.DTypeMismatchError):
        i += 1.5
    with pytest.raises(ember.DTypeMismatchError):
        ember.add(i, i, out=ember.zeros(2, dtype=ember.bool, device=device))
    assert m.tolist() == [True, False] and i.tolist() == [1, 2]
    m |= ember.tensor([False, True], device=device)  # bool into bool is fine
    i += m  # and bool into int32
    assert m.tolist() == [True, True] and i.tolist() == [2, 3]
    out = ember.zeros(2, dtype=ember.float32, device=device)
    ember.add(m, m, out=out)  # a bool result into float32: 1.0 for True
    assert out.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "dtypes,want",
    [
        (("int32", "float32"), "float32"),
        (("bool", "int64"), "int64"),
        (("uint8", "int32", "bool"), "int32"),
        (("float16", "bfloat16"), "float32"),
        (("float32", "float32"), "float32"),
    ],
)
def test_cat_and_stack_promote_their_parts(device, dtypes, want):
    parts = [
        np.array([[1, 0, 3]]).astype(np.dtype(d) if d != "bfloat16" else np.float32) for d in dtypes
    ]
    ts = [ember.tensor(p, dtype=getattr(ember, d), device=device) for p, d in zip(parts, dtypes)]
    r = ember.cat(ts, dim=0)
    assert r.dtype == getattr(ember, want)
    np.testing.assert_array_equal(r.numpy(), np.concatenate(parts).astype(r.numpy().dtype))
    s = ember.stack(ts, dim=1)
    assert s.dtype == getattr(ember, want) and s.shape == (1, len(ts), 3)
