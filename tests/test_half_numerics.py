"""Half-precision numerics: means accumulate in float32 (a half sum overflows long before
the mean does), and doubles become halves with one correct rounding, not two."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from helpers import round_bf16


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_mean_does_not_overflow(device, dtype):
    t = ember.full((12,), 5460.0, dtype=dtype, device=device)
    assert t.mean().item() == t[0].item()  # 5460 (5472 in bfloat16)
    big = ember.full((4, 30), 60000.0 if dtype == "float16" else 1e37, dtype=dtype, device=device)
    np.testing.assert_array_equal(big.mean(dim=1).numpy(), big[:, 0].numpy())
    kept = big.mean(dim=0, keepdim=True)
    assert kept.shape == (1, 30) and kept.dtype == getattr(ember, dtype)


def test_half_mean_matches_float32_mean_rounded(device, rng):
    x = rng.uniform(0, 60000, size=(7, 300)).astype(np.float16)
    t = ember.tensor(x, device=device)
    expected = x.astype(np.float32).mean(axis=1).astype(np.float16)
    np.testing.assert_allclose(t.mean(dim=1).numpy(), expected, rtol=1e-3)


def tricky_doubles(rng, n=20000):
    """Doubles just beside the rounding boundaries of half formats, plus random ones."""
    halves = rng.integers(0, 0x7BFF, size=n).astype(np.uint16).view(np.float16).astype(np.float64)
    ulp = np.abs(np.spacing(halves.astype(np.float16)).astype(np.float64))
    mid = halves + ulp / 2  # an exact tie in half
    nudge = np.abs(mid) * 2.0**-40
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    values = np.concatenate([mid - nudge, mid + nudge, mid, rng.standard_normal(n) * 1000])
    return values * np.concatenate([sign] * 4)


def test_float64_to_float16_rounds_once(rng):
    x = np.concatenate([[-159.68749985127943], tricky_doubles(rng)])
    expected = x.astype(np.float16)  # numpy converts double -> half directly
    t = ember.tensor(x)  # float64
    np.testing.assert_array_equal(t.to_dtype("float16").numpy(), expected)
    np.testing.assert_array_equal(ember.tensor(x, dtype="float16").numpy(), expected)
    assert ember.full(1, -159.68749985127943, dtype="float16").item() == -159.625


def bf16_nearest(x: np.ndarray) -> np.ndarray:
    """The bfloat16 nearest each double (ties to even), found among the neighbours of a
    float32 rounding, compared in float64."""
    base = round_bf16(x.astype(np.float32)).view(np.uint32).astype(np.int64)
    cands = np.stack([base - 0x10000, base, base + 0x10000]).astype(np.uint32)
    vals = cands.view(np.float32).astype(np.float64)
    dist = np.abs(vals - x)
    best = dist.min(axis=0)
    even = (cands >> 16) % 2 == 0
    pick = np.where((dist == best) & (even | (np.sum(dist == best, axis=0) == 1)), 1, 0)
    return vals[pick.argmax(axis=0), np.arange(x.size)].astype(np.float32)


def test_float64_to_bfloat16_rounds_once(rng):
    bf = rng.integers(0x0080, 0x7F00, size=5000).astype(np.uint32) << 16
    base = bf.view(np.float32).astype(np.float64)
    mid = base + np.spacing(base.astype(np.float32)).astype(np.float64) * 2**15
    x = np.concatenate([mid - mid * 2.0**-40, mid + mid * 2.0**-40, rng.standard_normal(5000)])
    expected = bf16_nearest(x)
    np.testing.assert_array_equal(ember.tensor(x).to_dtype("bfloat16").numpy(), expected)
    np.testing.assert_array_equal(ember.tensor(x, dtype="bfloat16").numpy(), expected)


def test_float64_fill_into_halves_rounds_once(device):
    v = -159.68749985127943
    assert ember.full(2, v, dtype="float16", device=device).tolist() == [-159.625] * 2
    assert ember.tensor(np.array([v]), dtype="float16", device=device).item() == -159.625
