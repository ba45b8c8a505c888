"""Values a dtype cannot hold are refused, never wrapped or saturated silently, and
index arithmetic does not overflow (PyTorch's and numpy's behaviour)."""

from __future__ import annotations

import ember
import numpy as np
import pytest

OUT_OF_RANGE_FILLS = [
    (300, "uint8"),
    (-1, "uint8"),
    (-1, "uint32"),
    (2**32, "uint32"),
    (2**63, "int64"),
    (2**70, "int64"),
    (-(2**63) - 1, "int64"),
    (256.0, "uint8"),
    (-1.5, "uint32"),
    (1e19, "int64"),
    (float("nan"), "int64"),
    (float("inf"), "uint8"),
    (1e5, "float16"),
    (1e39, "float32"),
    (1e39, "bfloat16"),
]


@pytest.mark.parametrize("value, dtype", OUT_OF_RANGE_FILLS, ids=str)
def test_full_refuses_values_the_dtype_cannot_hold(device, value, dtype):
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.full(3, value, dtype=dtype, device=device)
    assert info.value.op == "full" and dtype in str(info.value)
    like = ember.zeros(2, dtype=dtype, device=device)
    with pytest.raises(ember.InvalidArgumentError):
        ember.full_like(like, value)


IN_RANGE_FILLS = [
    (255, "uint8", 255),
    (0, "uint8", 0),
    (2**32 - 1, "uint32", 2**32 - 1),
    (2**63 - 1, "int64", 2**63 - 1),
    (-(2**63), "int64", -(2**63)),
    (255.9, "uint8", 255),  # a float truncates, as numpy and PyTorch do
    (-0.5, "uint32", 0),
    (65504.0, "float16", 65504.0),
    (float("inf"), "float16", float("inf")),
    (float("-inf"), "float32", float("-inf")),
    (2**70, "float32", float(np.float32(2**70))),
]


@pytest.mark.parametrize("value, dtype, expected", IN_RANGE_FILLS, ids=str)
def test_full_keeps_values_the_dtype_holds(device, value, dtype, expected):
    t = ember.full(3, value, dtype=dtype, device=device)
    assert t.tolist() == [expected] * 3


@pytest.mark.parametrize(
    "data, dtype",
    [
        ([300], "uint8"),
        ([-1], "uint32"),
        ([2**40], "uint32"),
        ([1e30], "int64"),
        ([float("nan")], "uint8"),
        (np.array([70000]), "uint8"),
    ],
    ids=str,
)
def test_tensor_refuses_values_the_dtype_cannot_hold(data, dtype):
    with pytest.raises(ember.InvalidArgumentError) as info:
        ember.tensor(data, dtype=dtype)
    assert info.value.op == "tensor" and dtype in str(info.value)


def test_tensor_keeps_in_range_integers():
    assert ember.tensor([0, 255], dtype="uint8").tolist() == [0, 255]
    assert ember.tensor(np.array([1.9, -0.9]), dtype="int64").tolist() == [1, 0]


@pytest.mark.parametrize("step", [2**63 - 1, 2**62, 3, 10**30])
def test_huge_slice_steps_give_numpys_shape(device, step):
    x = ember.ones(2, 3, device=device)
    ref = np.ones((2, 3), np.float32)
    assert x[::step].shape == ref[::step].shape
    assert x[::-step].shape == ref[::-step].shape
    assert x[:, 1::step].shape == ref[:, 1::step].shape


def test_writes_through_a_huge_step_slice_land(device):
    x = ember.zeros(2, 3, device=device)
    x[:: 2**63 - 1] = 1.0
    x[:, :: -(2**63 - 1)] += 2.0
    ref = np.zeros((2, 3), np.float32)
    ref[:: 2**63 - 1] = 1.0
    ref[:, :: -(2**63 - 1)] += 2.0
    np.testing.assert_array_equal(x.numpy(), ref)


def test_squeeze_refuses_a_repeated_dim(device):
    x = ember.zeros(1, 2, 1, device=device)
    for dims in [(0, 0), (0, -3), (2, -1)]:
        with pytest.raises(ember.InvalidArgumentError) as info:
            x.squeeze(dims)
        assert "twice" in str(info.value) and info.value.op == "squeeze"
    assert x.squeeze((0, 2)).shape == (2,)
    assert x.squeeze((2, 0, 1)).shape == (2,)
