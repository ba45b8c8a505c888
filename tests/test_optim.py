"""ember.optim: SGD and AdamW against PyTorch's update rules, written out in numpy (so
that they are checked without PyTorch too), and the example's training against PyTorch's
step by step where PyTorch is installed."""

from __future__ import annotations

import importlib.util
import math
import os

import ember
import numpy as np
import pytest

try:
    import torch
except ImportError:  # the comparisons with torch run where it is installed
    torch = None

_spec = importlib.util.spec_from_file_location(
    "train_example", os.path.join(os.path.dirname(__file__), "..", "examples", "04_train_mlp.py")
)
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)


def _grads(rng, shape, steps):
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(steps)]


def sgd_reference(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                  maximize=False):
    """torch.optim.sgd._single_tensor_sgd, in float32 numpy."""
    p = p.copy()
    buf = None
    f = np.float32
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + p * f(weight_decay)
        if momentum:
            if buf is None:
                buf = g.copy()
            else:
                buf = buf * f(momentum) + g * f(1 - dampening)
            g = g + buf * f(momentum) if nesterov else buf
        p = p - g * f(lr)
    return p


def adamw_reference(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                    amsgrad=False):
    """torch.optim.adamw (through _single_tensor_adam), in float32 numpy."""
    f = np.float32
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for step, g in enumerate(grads, 1):
        p = p * f(1 - lr * weight_decay)
        m = m + (g - m) * f(1 - betas[0])
        v = v * f(betas[1]) + g * f(1 - betas[1]) * g
        step_size = lr / (1 - betas[0] ** step)
        c2 = math.sqrt(1 - betas[1] ** step)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / f(c2) + f(eps)
        else:
            denom = np.sqrt(v) / f(c2) + f(eps)
        p = p + m * f(-step_size) / denom
    return p


def _run(opt_cls, device, p0, grads, **kw):
    p = ember.tensor(p0, device=device, requires_grad=True)
    opt = opt_cls([p], **kw)
    for g in grads:
        p.grad = ember.tensor(g, device=device)
        opt.step()
    return p.detach().numpy()


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, maximize=True, weight_decay=0.1),
]
ADAMW_CONFIGS = [
    dict(),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
    dict(lr=0.01, amsgrad=True),
]


CONFIGS = [("SGD", k) for k in SGD_CONFIGS] + [("AdamW", k) for k in ADAMW_CONFIGS]
REFERENCES = {"SGD": (sgd_reference, 1e-6), "AdamW": (adamw_reference, 1e-5)}


@pytest.mark.parametrize("name, kw", CONFIGS, ids=str)
def test_optimisers_follow_pytorchs_rules(device, name, kw, rng):
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = _grads(rng, (3, 4), 5)
    got = _run(getattr(ember.optim, name), device, p0, grads, **kw)
    reference, rtol = REFERENCES[name]
    np.testing.assert_allclose(got, reference(p0, grads, **kw), rtol=rtol, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name, kw", CONFIGS, ids=str)
def test_optimisers_match_torch(name, kw, rng):
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = _grads(rng, (3, 4), 5)
    got = _run(getattr(ember.optim, name), "cpu", p0, grads, **kw)
    t = torch.tensor(p0, requires_grad=True)
    opt = getattr(torch.optim, name)([t], foreach=False, **kw)
    for g in grads:
        t.grad = torch.tensor(g)
        opt.step()
    np.testing.assert_allclose(got, t.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_step_skips_parameters_without_gradients_and_zero_grad_clears():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([a, b], lr=0.5)
    (a * 3).sum().backward()
    opt.step()
    np.testing.assert_array_equal(a.detach().numpy(), [-0.5, -0.5])
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 1.0])
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0])
    assert b.grad is None
    opt.zero_grad()
    assert a.grad is None


def test_parameter_groups_and_errors():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad = ember.ones(2)
    b.grad = ember.ones(2)
    opt.step()
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9], rtol=1e-6)
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0], atol=1e-7)
    with pytest.raises(ember.InvalidTypeError):
        ember.optim.SGD(a)
    with pytest.raises(ember.InvalidArgumentError, match="learning rate"):
        ember.optim.AdamW([a], lr=-1.0)
    with pytest.raises(ember.InvalidArgumentError, match="non-leaf"):
        ember.optim.SGD([a * 2])
    with pytest.raises(ember.InvalidArgumentError, match="Nesterov"):
        ember.optim.SGD([a], nesterov=True)


@pytest.mark.parametrize("model", ["mlp", "attention"])
@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_the_example_trains_on_every_device(device, model, optimizer):
    losses = example.train(ember, device, model, steps=20, optimizer=optimizer)
    assert losses[-1] < 0.8 * losses[0]
    cpu = example.train(ember, ember.device("cpu"), model, steps=20, optimizer=optimizer)
    np.testing.assert_allclose(losses, cpu, rtol=1e-4)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("model", ["mlp", "attention"])
@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_the_example_matches_pytorch_step_by_step(device, model, optimizer):
    losses = example.train(ember, device, model, steps=30, optimizer=optimizer)
    want = example.train(torch, "cpu", model, steps=30, optimizer=optimizer)
    np.testing.assert_allclose(losses, want, rtol=1e-4)
