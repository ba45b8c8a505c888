"""Train a small MLP and a tiny causal attention block on synthetic data, on every
available device, and watch the loss fall.

    python examples/04_train_mlp.py            # ember only
    python examples/04_train_mlp.py --torch    # beside PyTorch, step by step, same start

The models are written once over the library module `m` (ember or torch: ember's API is
PyTorch's), so the same code runs in both; tests/test_optim.py checks that both loss
curves agree.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import use_emulator_off_mac  # noqa: E402

use_emulator_off_mac()

import numpy as np  # noqa: E402


def data(seed: int = 0, n: int = 64, d: int = 8):
    """Inputs and targets of a smooth function, as float32 numpy arrays."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = np.sin(x @ rng.standard_normal((d, 1))).astype(np.float32)
    return x, y


def mlp_weights(seed: int = 1, d: int = 8, hidden: int = 32):
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.standard_normal((d, hidden)) / np.sqrt(d)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }


def mlp(m, p, x):
    return m.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def attention_weights(seed: int = 2, d: int = 8):
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
            for k in ("wq", "wk", "wv", "wo")}  # fmt: skip


def attention(m, p, x):
    """One head of causal self-attention over a sequence x (T, d), with a residual."""
    q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
    scores = (q @ k.T) / float(np.sqrt(x.shape[1]))
    t = x.shape[0]
    future = m.triu(m.ones((t, t), device=x.device), 1) > 0
    weights = m.softmax(m.masked_fill(scores, future, float("-inf")), -1)
    return x + (weights @ v) @ p["wo"]


def train(m, device, model: str = "mlp", steps: int = 30, optimizer: str = "adamw"):
    """The loss at each step of training `model` with library `m` on `device`."""
    x_np, y_np = data()
    if model == "mlp":
        weights, forward, target = mlp_weights(), mlp, y_np
    else:
        weights, forward = attention_weights(), attention
        target = np.roll(x_np, 1, axis=0)  # predict the previous token's features
    x = m.tensor(x_np, device=device)
    y = m.tensor(target, device=device)
    params = {k: m.tensor(v, device=device, requires_grad=True) for k, v in weights.items()}
    if optimizer == "adamw":
        opt = m.optim.AdamW(list(params.values()), lr=1e-2)
    else:
        opt = m.optim.SGD(list(params.values()), lr=0.1, momentum=0.9, weight_decay=1e-4)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((forward(m, params, x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", action="store_true", help="train beside PyTorch on the CPU")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    import ember

    devices = ["cpu"]
    if ember.metal_is_available():
        devices.append("metal")
    if ember.cuda_is_available():
        devices.append("cuda")
    torch = None
    if args.torch:
        import torch
    for model in ("mlp", "attention"):
        for dev in devices:
            losses = train(ember, ember.device(dev), model, args.steps)
            print(f"{model} on {dev}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
            line = " ".join(f"{v:.4f}" for v in losses[:: max(1, args.steps // 10)])
            print(f"  ember: {line}")
            if torch is not None and dev == "cpu":
                ref = train(torch, "cpu", model, args.steps)
                print(f"  torch: {' '.join(f'{v:.4f}' for v in ref[:: max(1, args.steps // 10)])}")


if __name__ == "__main__":
    main()
