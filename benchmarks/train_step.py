"""python -m benchmarks.train_step: one training step of an MLP, beside PyTorch.

A step is the forward pass (three linear layers with relu, log_softmax and the mean
negative log-likelihood of the labels, read with gather), backward() and an AdamW step,
from the same weights and batch in both libraries. Steps of ember and torch alternate;
each sample times `--steps` steps (synchronised on GPUs) and the report gives the
median per step over `--repeats` samples and torch's time over ember's.

    python -m benchmarks.train_step [--device cpu|cuda|metal] [--batch 256] [--width 512]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from .timing import alternate_ms


def weights(d_in: int, width: int, classes: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    dims = [(d_in, width), (width, width), (width, classes)]
    out = {}
    for i, (a, b) in enumerate(dims):
        out[f"w{i}"] = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
        out[f"b{i}"] = np.zeros(b, np.float32)
    return out


def make_step(m, device, params, x, y):
    """One closure: forward, backward, optimiser step; returns the loss tensor."""
    opt = m.optim.AdamW(list(params.values()), lr=1e-3, **({"foreach": False} if m.__name__ == "torch" else {}))

    def step():
        opt.zero_grad()
        h = m.relu(x @ params["w0"] + params["b0"])
        h = m.relu(h @ params["w1"] + params["b1"])
        logp = m.log_softmax(h @ params["w2"] + params["b2"], -1)
        loss = -m.gather(logp, 1, y).mean()
        loss.backward()
        opt.step()
        return loss

    return step


def setup(m, device, batch: int, width: int, d_in: int = 256, classes: int = 10):
    rng = np.random.default_rng(1)
    x = m.tensor(rng.standard_normal((batch, d_in)).astype(np.float32), device=device)
    y = m.tensor(rng.integers(0, classes, (batch, 1)), device=device)
    params = {k: m.tensor(v, device=device, requires_grad=True)
              for k, v in weights(d_in, width, classes).items()}  # fmt: skip
    return make_step(m, device, params, x, y)


def main() -> int:
    parser = argparse.ArgumentParser(description="one MLP training step beside PyTorch")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    import ember

    dev = ember.device(args.device)
    libs = {"ember": (ember, dev, dev.synchronize)}
    try:
        import torch

        tdev = {"cpu": "cpu", "cuda": "cuda", "metal": "mps"}[args.device]
        sync = {"cuda": torch.cuda.synchronize, "mps": getattr(torch, "mps", None) and torch.mps.synchronize}.get(tdev)
        libs["torch"] = (torch, tdev, sync or (lambda: None))
        torch_threads = torch.get_num_threads()
    except (ImportError, RuntimeError, AttributeError):
        torch_threads = None
    steps = {name: setup(m, d, args.batch, args.width) for name, (m, d, _) in libs.items()}
    losses = {name: float(step().item()) for name, step in steps.items()}
    runs = {name: (steps[name], libs[name][2]) for name in steps}
    times = alternate_ms(runs, args.steps, args.repeats)  # interleaved
    print(f"MLP 256-{args.width}-{args.width}-10, batch {args.batch}, AdamW, device {args.device}; "
          f"torch threads {torch_threads}; median of {args.repeats} samples of {args.steps} steps")
    med = {name: statistics.median(t) for name, t in times.items()}
    for name in libs:
        ratio = f"{med['torch'] / med[name]:.2f}x" if "torch" in med and name == "ember" else ""
        print(f"{name:6s} {med[name]:8.3f} ms per step  first loss {losses[name]:.5f}  {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
