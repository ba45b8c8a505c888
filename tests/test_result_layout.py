"""Elementwise results are laid out as PyTorch lays them out: contiguous when the inputs
are, else dense in the inputs' memory order (the first input that tells two dims apart
decides; broadcast dims tell nothing). So `a.T.exp()` is one dense pass, like PyTorch's.
Values are checked against numpy on every device, strides against PyTorch's, and the
tiled walks of transposed operands at sizes past one tile."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from helpers import require_dtype

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 3)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32)
R = rng.standard_normal(4).astype(np.float32)
P = rng.standard_normal((2, 3, 4)).astype(np.float32)
W = rng.standard_normal((5, 4)).astype(np.float32)
C = rng.standard_normal((4, 1)).astype(np.float32)


# name -> (build(library, put) -> result, numpy reference)
CASES = {
    "exp of a transpose": (lambda m, t: t(A).T.exp(), np.exp(A.T)),
    "transpose + contiguous": (lambda m, t: t(A).T + t(B), A.T + B),
    "contiguous + transpose": (lambda m, t: t(B) + t(A).T, B + A.T),
    "transpose + row": (lambda m, t: t(A).T + t(R), A.T + R),
    "row + transpose": (lambda m, t: t(R) + t(A).T, R + A.T),
    "transpose > 0": (lambda m, t: t(A).T > 0, A.T > 0),
    "where(transpose)": (lambda m, t: m.where(t(A).T > 0, t(A).T, t(B)), np.where(A.T > 0, A.T, B)),
    "where(contiguous cond)": (lambda m, t: m.where(t(B) > 0, t(A).T, t(B)), np.where(B > 0, A.T, B)),
    "permuted + 1": (lambda m, t: t(P).permute(2, 0, 1) + 1.0, P.transpose(2, 0, 1) + 1),
    "permuted clamp": (lambda m, t: t(P).permute(2, 0, 1).clamp(0.0, 1.0),
                       np.clip(P.transpose(2, 0, 1), 0, 1)),  # fmt: skip
    "negated permuted": (lambda m, t: -t(P).permute(2, 0, 1), -P.transpose(2, 0, 1)),
    "permuted * 2 + 1": (lambda m, t: t(P).permute(2, 0, 1) * 2.0 + 1.0, P.transpose(2, 0, 1) * 2 + 1),
    "sliced exp (not dense)": (lambda m, t: t(W)[:, ::2].exp(), np.exp(W[:, ::2])),
    "expanded column + 1": (lambda m, t: t(C).expand(4, 3) + 1.0, np.broadcast_to(C, (4, 3)) + 1),
    "transposed slice": (lambda m, t: t(W).T[:, 1:4].exp(), np.exp(W.T[:, 1:4])),
    "0-d + transpose": (lambda m, t: t(np.float32(2.0)) + t(A).T, 2 + A.T),
}


def _put_ember(device):
    return lambda x: ember.tensor(np.asarray(x), device=device)


@pytest.mark.parametrize("case", CASES)
def test_result_values_and_strides(device, case):
    build, want = CASES[case]
    got = build(ember, _put_ember(device))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    assert got.shape == want.shape
    # dense: the strides of a permutation of the shape, no gaps
    order = sorted(range(got.ndim), key=lambda d: got.strides[d])
    step = 1
    for d in order:
        if got.shape[d] != 1:
            assert got.strides[d] == step, (got.shape, got.strides)
        step *= got.shape[d]


@pytest.mark.parametrize("case", CASES)
def test_result_strides_match_pytorch(case):
    torch = pytest.importorskip("torch")
    build, _ = CASES[case]
    mine = build(ember, _put_ember("cpu"))
    theirs = build(torch, lambda x: torch.tensor(np.asarray(x)))
    assert mine.strides == theirs.stride()


def test_casts_keep_the_layout(device):
    a = ember.tensor(A, device=device).T
    for dt in (ember.bfloat16, ember.float16, ember.int64):
        h = a.to_dtype(dt)
        assert h.strides == (1, 3)
        np.testing.assert_array_equal(h.to_dtype(ember.float32).numpy(),
                                      ember.tensor(A.T.copy(), device=device).to_dtype(dt)
                                      .to_dtype(ember.float32).numpy())  # fmt: skip


# Shapes past one tile (16 runs of 128) with ragged edges, 2-D and batched, each dtype
# family: the tiled walk of a transposed operand against numpy.
@pytest.mark.parametrize("shape", [(300, 200), (3, 150, 141), (129, 17)])
@pytest.mark.parametrize("dt", ["float32", "int64", "bfloat16"])
def test_transposed_operands_walk_in_tiles(device, shape, dt):
    x = rng.standard_normal(shape).astype(np.float32) * 8
    y = rng.standard_normal(shape[:-2] + shape[-2:][::-1]).astype(np.float32) * 8
    if dt == "int64":
        x, y = np.round(x).astype(np.int64), np.round(y).astype(np.int64)
    edt = getattr(ember, dt)
    a = ember.tensor(x, device=device).to_dtype(edt)
    b = ember.tensor(y, device=device).to_dtype(edt)
    xr = a.to_dtype(ember.float32).numpy() if dt == "bfloat16" else x
    yr = b.to_dtype(ember.float32).numpy() if dt == "bfloat16" else y
    got = b + a.transpose(-1, -2)  # the contiguous operand leads: a contiguous result
    assert got.is_contiguous()
    want = yr + np.swapaxes(xr, -1, -2)
    if dt == "bfloat16":
        want = ember.tensor(want).to_dtype(ember.bfloat16).to_dtype(ember.float32).numpy()
        got = got.to_dtype(ember.float32)
    np.testing.assert_array_equal(got.numpy(), want)
    # a transposed copy into contiguous memory, and out= in contiguous memory
    np.testing.assert_array_equal(a.transpose(-1, -2).contiguous().numpy() if dt != "bfloat16"
                                  else a.transpose(-1, -2).contiguous().to_dtype(ember.float32).numpy(),
                                  np.swapaxes(xr, -1, -2))  # fmt: skip


# A Python number as an operand: t + s, t - s, s - t and t * s of a float tensor take one
# pass (no 0-d tensor for s), with the same values as the op on s made a 0-d tensor of
# t's dtype: signed zeros, infinities, NaN and subnormals included (a NaN's sign bit
# aside, which carries nothing).
SPECIALS = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-42, -3e38, 7.0], np.float32)
NUMBERS = [0.0, -0.0, 1.0, -1.0, 0.1, 2.5, 1e30, float("inf"), float("-inf"), float("nan"), 3, -7,
           2**60, True]  # fmt: skip


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_python_numbers_match_zero_d_tensors(device, dt):
    if not require_dtype(device, dt):
        return
    with np.errstate(over="ignore"):
        x = np.concatenate([SPECIALS, SPECIALS[::-1] * 3]).astype(dt).reshape(4, 5)
    t = ember.tensor(x, device=device).T  # a transposed view: the result keeps its layout
    for s in NUMBERS:
        zero_d = ember.tensor(np.asarray(s, dtype=dt), device=device)
        for got, want in ((t + s, t + zero_d), (s + t, zero_d + t), (t - s, t - zero_d),
                          (s - t, zero_d - t), (t * s, t * zero_d), (s * t, zero_d * t),
                          (ember.add(t, s), t + zero_d), (ember.sub(s, t), zero_d - t),
                          (t.mul(s), t * zero_d)):  # fmt: skip
            assert got.dtype == want.dtype and got.strides == want.strides
            g, w = got.numpy(), want.numpy()
            np.testing.assert_array_equal(g, w)
            real = ~np.isnan(w)  # a NaN's sign bit carries nothing
            np.testing.assert_array_equal(np.signbit(g)[real], np.signbit(w)[real])


def test_python_numbers_under_autograd_record_the_binary_op():
    w = ember.ones(3, requires_grad=True)
    y = w * 2.0 + 1.0
    assert y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
