"""Behaviour the rest of the suite did not pin: argmax/argmin ties across the parallel
chunks, negative index_select ids, softmax of empty tensors, gelu/silu at infinity, the
memory figures, randn_like, and repr's dtype and device."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_ties_across_chunks_pick_the_first(device, op):
    n = 1_000_000
    assert getattr(ember.zeros(n, device=device), op)().item() == 0
    rows = ember.ones(3, 2**16 + 5, device=device)
    np.testing.assert_array_equal(getattr(rows, op)(dim=1).numpy(), [0, 0, 0])
    # a tied extreme that spans chunk boundaries, starting past the first chunk
    x = np.zeros(n, np.float32)
    x[300_001:700_000] = 5.0 if op == "argmax" else -5.0
    got = getattr(ember.tensor(x, device=device), op)().item()
    assert got == getattr(np, op)(x) == 300_001


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_ties_along_a_long_dim_match_numpy(device, op, rng):
    x = rng.integers(0, 3, size=(4, 70_000)).astype(np.float32)
    got = getattr(ember.tensor(x, device=device), op)(dim=1).numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(x, axis=1))


def test_index_select_negative_ids_raise(device):
    t = ember.arange(6, device=device).reshape(2, 3)
    for ids in ([-1], [0, -3]):
        with pytest.raises(ember.IndexOutOfRangeError) as info:
            t.index_select(1, ember.tensor(ids, device=device))
        assert info.value.op == "index_select"


@pytest.mark.parametrize("shape, dim", [((0,), 0), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_empty_tensors_is_empty(device, shape, dim, op):
    out = getattr(ember.zeros(*shape, device=device), op)(dim)
    assert out.shape == shape and out.dtype == ember.float32 and out.numpy().size == 0


@pytest.mark.parametrize("op", ["gelu", "silu"])
def test_gelu_silu_at_large_magnitudes(device, op):
    x = [math.inf, 1e30, -1e4, -100.0, -math.inf]
    values = getattr(ember, op)(ember.tensor(x, device=device)).tolist()
    assert values[0] == math.inf and values[1] > 1e29
    assert abs(values[2]) < 1e-30 and abs(values[3]) < 1e-30
    assert values[4] == 0.0 and math.copysign(1.0, values[4]) == -1.0  # -0, as PyTorch


def test_memory_stats_count_known_allocations(device):
    before = device.memory_stats()
    assert set(before) >= {"bytes_in_use", "peak_bytes_in_use", "bytes_cached"}
    x = ember.zeros(1 << 20, device=device)  # 4 MiB
    during = device.memory_stats()
    assert during["bytes_in_use"] - before["bytes_in_use"] >= 4 << 20
    assert during["peak_bytes_in_use"] >= during["bytes_in_use"]
    del x
    after = device.memory_stats()
    assert after["bytes_in_use"] <= during["bytes_in_use"] - (4 << 20)


def test_randn_like_statistics_and_seeding(device):
    base = ember.zeros(200, 500, device=device)
    device.manual_seed(7)
    a = ember.randn_like(base)
    device.manual_seed(7)
    b = ember.randn_like(base)
    c = ember.randn_like(base)
    assert a.shape == base.shape and a.dtype == base.dtype and a.device.same_device(device)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(b.numpy(), c.numpy())
    v = a.numpy().astype(np.float64)
    assert abs(v.mean()) < 0.01 and abs(v.std() - 1) < 0.01
    assert abs(np.mean(v > 0.5) - 0.3085) < 0.006  # P(Z > 0.5) = 0.3085, 4 sigma here
    assert ember.randn_like(base, dtype="float16").dtype == ember.float16


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8"])
def test_repr_names_dtype_and_device(device, dtype):
    text = repr(ember.zeros(2, dtype=dtype, device=device))
    assert text.endswith(f"dtype={dtype}, device={device.kind}:{device.ordinal})")
