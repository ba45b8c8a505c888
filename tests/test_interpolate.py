"""interpolate against a numpy transcription of PyTorch's upsample kernels (nearest's
floor(dst * in / out) rule, linear's half-pixel or corner-aligned source index), for
(N, C, W) and (N, C, H, W) inputs, sizes and scale factors, views and bad arguments."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
from helpers import check_close, check_exact, make_view, raises_op, rand_array, require_dtype


def nearest_index(in_size, out_size, scale=None):
    """PyTorch's nearest_idx: the ratio and the product in float32."""
    if out_size == in_size:
        return np.arange(out_size)
    if out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    ratio = np.float32(1.0 / scale) if scale else np.float32(in_size) / np.float32(out_size)
    src = np.floor(np.arange(out_size, dtype=np.float32) * ratio).astype(np.int64)
    return np.minimum(src, in_size - 1)


def linear_taps(in_size, out_size, align_corners, scale=None):
    """PyTorch's area_pixel_compute_source_index and its two neighbours and weights."""
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = ratio * np.arange(out_size)
    else:
        ratio = 1.0 / scale if scale else in_size / out_size
        src = np.maximum(ratio * (np.arange(out_size) + 0.5) - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = np.where(i0 < in_size - 1, i0 + 1, i0)
    w1 = src - i0
    return i0, i1, 1.0 - w1, w1


def reference(x, out_sizes, mode, align_corners=False, scales=None):
    """PyTorch's result, one spatial dim at a time (bilinear is separable), in float64."""
    r = x.astype(np.float64)
    for i, out in enumerate(out_sizes):
        dim = 2 + i
        scale = scales[i] if scales else None
        if mode == "nearest":
            r = np.take(r, nearest_index(x.shape[dim], out, scale), axis=dim)
            continue
        i0, i1, w0, w1 = linear_taps(x.shape[dim], out, align_corners, scale)
        shape = [1] * r.ndim
        shape[dim] = out
        r = np.take(r, i0, axis=dim) * w0.reshape(shape) + np.take(r, i1, axis=dim) * w1.reshape(
            shape
        )
    return r


def test_nearest_uses_pytorchs_floor_rule(device):
    """W 3 -> 5: PyTorch picks sources [0, 0, 1, 1, 2] (floor(j * 3/5)); numpy-style
    rounding of (j + 0.5) * 3/5 - 0.5 would give [0, 0, 1, 2, 2]."""
    t = ember.tensor([[[10.0, 20.0, 30.0]]], device=device)
    got = ember.interpolate(t, size=5)
    check_exact(got, np.array([[[10, 10, 20, 20, 30]]], np.float32), "float32", device)
    down = ember.interpolate(ember.arange(8.0, device=device).reshape(1, 1, 8), size=3)
    check_exact(down, np.array([[[0, 2, 5]]], np.float32), "float32")  # floor(j * 8/3)


@pytest.mark.parametrize(
    "in_hw, out_hw",
    [((3, 4), (5, 7)), ((6, 5), (3, 2)), ((4, 4), (8, 8)), ((2, 3), (2, 3)), ((5, 3), (1, 1))],
)
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_4d_sizes(device, rng, in_hw, out_hw, mode):
    x = rand_array(rng, (2, 3, *in_hw), "float32")
    t = ember.tensor(x, device=device)
    got = ember.interpolate(t, size=out_hw, mode=mode)
    check_close(got, reference(x, out_hw, mode), "float32", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("in_w, out_w", [(4, 9), (7, 3), (1, 4), (5, 1)])
def test_3d_linear(device, rng, align_corners, in_w, out_w):
    x = rand_array(rng, (2, 2, in_w), "float32")
    got = ember.interpolate(
        ember.tensor(x, device=device), size=out_w, mode="linear", align_corners=align_corners
    )
    check_close(got, reference(x, (out_w,), "linear", align_corners), "float32", atol=1e-6)


def test_bilinear_align_corners_keeps_the_corners(device, rng):
    x = rand_array(rng, (1, 2, 3, 4), "float32")
    got = ember.interpolate(
        ember.tensor(x, device=device), size=(5, 6), mode="bilinear", align_corners=True
    )
    check_close(got, reference(x, (5, 6), "bilinear", True), "float32", atol=1e-6)
    g = got.numpy()
    np.testing.assert_allclose(g[..., [0, -1], :][..., [0, -1]], x[..., [0, -1], :][..., [0, -1]])


def test_known_values_from_pytorch(device):
    """torch.nn.functional.interpolate(torch.tensor([[[1., 2., 3., 4.]]]), size=6,
    mode='linear') gives [1.0000, 1.5000, 2.1667, 2.8333, 3.5000, 4.0000]: the source
    (j + 0.5) * 4/6 - 0.5, clamped at 0; align_corners=True gives linspace's values."""
    t = ember.tensor([[[1.0, 2.0, 3.0, 4.0]]], device=device)
    got = ember.interpolate(t, size=6, mode="linear").numpy()[0, 0]
    want = [1.0, 1.5, 13 / 6, 17 / 6, 3.5, 4.0]
    np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6)
    corners = ember.interpolate(t, size=7, mode="linear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(corners, np.linspace(1, 4, 7, dtype=np.float32), rtol=1e-6)


@pytest.mark.parametrize("scale", [2, 1.5, (0.5, 3.0), 0.7])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_scale_factor_uses_its_inverse_as_the_ratio(device, rng, scale, mode):
    """With scale_factor PyTorch maps positions by 1 / scale_factor, not in / out."""
    x = rand_array(rng, (1, 2, 5, 6), "float32")
    scales = tuple(scale) if isinstance(scale, tuple) else (scale, scale)
    out = tuple(math.floor(n * s) for n, s in zip(x.shape[2:], scales))
    got = ember.interpolate(ember.tensor(x, device=device), scale_factor=scale, mode=mode)
    check_close(got, reference(x, out, mode, scales=scales), "float32", atol=1e-6)


@pytest.mark.parametrize("layout", ["transposed", "stepped", "expanded"])
def test_views(device, rng, layout):
    t, x = make_view(rng, (2, 3, 4, 5), "float32", device, layout)
    for mode in ("nearest", "bilinear"):
        got = ember.interpolate(t, size=(7, 3), mode=mode)
        check_close(got, reference(x, (7, 3), mode), "float32", atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_float_dtypes_keep_their_dtype(device, rng, dtype):
    if not require_dtype(device, dtype):
        return
    x = rand_array(rng, (1, 2, 3, 4), dtype)
    t = ember.tensor(x, dtype=getattr(ember, dtype), device=device)
    got = ember.interpolate(t, size=(6, 5), mode="bilinear")
    check_close(got, reference(x, (6, 5), "bilinear"), dtype)
    check_exact(ember.interpolate(t, size=(6, 5)), reference(x, (6, 5), "nearest"), dtype)


def test_nearest_takes_integers_and_zero_batches(device, rng):
    x = rand_array(rng, (2, 1, 3, 3), "int64")
    got = ember.interpolate(ember.tensor(x, device=device), scale_factor=2)
    check_exact(got, x.repeat(2, axis=2).repeat(2, axis=3), "int64")
    empty = ember.interpolate(ember.zeros(0, 3, 4, 4, device=device), size=(2, 2), mode="bilinear")
    assert empty.shape == (0, 3, 2, 2) and empty.dtype == ember.float32


@pytest.mark.parametrize(
    "kwargs, cls, facts",
    [
        ({}, ember.InvalidArgumentError, ["size= or scale_factor="]),
        ({"size": 4, "scale_factor": 2}, ember.InvalidArgumentError, ["not both"]),
        ({"size": 4, "mode": "bicubic"}, ember.InvalidArgumentError, ["'bicubic'", "nearest"]),
        ({"size": 4, "mode": "linear"}, ember.InvalidArgumentError, ["3-D", "'bilinear'"]),
        ({"size": 4, "align_corners": True}, ember.InvalidArgumentError, ["align_corners"]),
        ({"size": (4, 4, 4)}, ember.InvalidArgumentError, ["3 entries", "2 spatial"]),
        ({"size": (0, 4)}, ember.InvalidArgumentError, ["positive"]),
        ({"scale_factor": -1.0}, ember.InvalidArgumentError, ["positive"]),
        ({"scale_factor": 0.1}, ember.InvalidArgumentError, ["output size 0"]),
        ({"scale_factor": "x"}, ember.InvalidTypeError, ["scale_factor"]),
    ],
)
def test_bad_arguments(device, kwargs, cls, facts):
    t = ember.ones(1, 1, 3, 3, device=device)
    with raises_op(cls, "interpolate", *facts):
        ember.interpolate(t, **kwargs)


def test_bad_inputs(device):
    with raises_op(ember.InvalidArgumentError, "interpolate", "3-D", "4-D", "2-D"):
        ember.interpolate(ember.ones(3, 3, device=device), size=4)
    with raises_op(ember.InvalidArgumentError, "interpolate", "4-D", "'linear'"):
        ember.interpolate(ember.ones(1, 1, 3, device=device), size=4, mode="bilinear")
    ints = ember.ones(1, 1, 3, 3, dtype=ember.int32, device=device)
    with raises_op(ember.UnsupportedDTypeError, "interpolate", "float"):
        ember.interpolate(ints, size=4, mode="bilinear")
    with raises_op(ember.InvalidArgumentError, "interpolate", "nonzero"):
        ember.interpolate(ember.ones(1, 1, 0, 3, device=device), size=4)
