"""Type promotion between two tensors (design §4, PyTorch's rules): the higher category
(integers < floats), then the wider type; float16 with bfloat16 gives float32. Binary ops,
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
}


def promoted(a: str, b: str) -> str:
    if a == b:
        return a
    if frozenset({a, b}) in PROMOTED:
        return PROMOTED[frozenset({a, b})]
    order = ["uint8", "uint32", "int64", "float16", "bfloat16", "float32", "float64"]
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
    np.testing.assert_array_equal((tx < ty).numpy(), (x < y).astype(np.uint8))
    np.testing.assert_array_equal((tx == ty).numpy(), (x == y).astype(np.uint8))
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
