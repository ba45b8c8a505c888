"""ember under a type checker: this file passes ``mypy --strict`` and ``pyright --strict``
(tests/test_typing.py runs both), and every value below is typed as ember's own
(Tensor, Device, DType, Size, the named pairs of max/sort/topk), not Any.

    python examples/06_typed_usage.py
    mypy --strict examples/06_typed_usage.py
    pyright examples/06_typed_usage.py   # strict by the comment below

The ``reveal_type`` lines print the checker's view of each value and do not run.
"""

# pyright: strict
from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING

import ember
from ember import Device, DType, Size, Tensor


def layer_norm(x: Tensor, eps: float = 1e-5) -> Tensor:
    """Layer norm over the last dim, from ember's ops."""
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, correction=0)
    return (x - mean) / (var + eps).sqrt()


def train(device: Device, steps: int = 5) -> list[float]:
    """A few steps of a linear model's least squares, the loss after each."""
    ember.manual_seed(0)
    x = ember.randn(64, 8, device=device)
    target = x @ ember.ones(8, 1, device=device)
    w = ember.zeros(8, 1, device=device, requires_grad=True)
    opt = ember.optim.SGD([w], lr=0.1)
    losses: list[float] = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


def main() -> None:
    device: Device = ember.device("cpu")
    t = ember.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], device=device)
    dtype: DType = t.dtype
    size: Size = t.size()
    rows: int = t.size(0)

    best = t.max(dim=1)  # the named pair (values, indices)
    top = ember.topk(t, 2)
    ordered = t.sort(dim=-1, descending=True)
    total = t.sum()
    normed = layer_norm(t)
    parts = t.split(1, dim=0)
    mask = t > 1.0
    picked = ember.where(mask, t, 0.0)

    print(dtype, size, rows)
    print(best.values, best.indices)
    print(top.values, ordered.indices, total.item(), normed.shape, len(parts), picked)

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "weights.safetensors")
        ember.save_file({"t": t}, path, metadata={"kind": "example"})
        loaded: dict[str, Tensor] = ember.load_file(path)
        with ember.safe_open(path) as f:
            print(f.keys(), f.metadata(), ember.allclose(f.get_tensor("t"), loaded["t"]))

    print(train(device))
    with ember.no_grad():
        print(layer_norm(t * 2.0).requires_grad)

    if TYPE_CHECKING:
        reveal_type(t)
        reveal_type(device)
        reveal_type(dtype)
        reveal_type(t.size())
        reveal_type(t.size(0))
        reveal_type(best)
        reveal_type(best.values)
        reveal_type(top)
        reveal_type(ordered)
        reveal_type(t.max())
        reveal_type(ember.max(t, 0))
        reveal_type(t.shape)
        reveal_type(t.item())
        reveal_type(parts)
        reveal_type(mask)
        reveal_type(t + 1)
        reveal_type(1 + t)
        reveal_type(t[0, 1:])
        reveal_type(ember.autograd.grad(total, [t]))
        reveal_type(ember.load_file)


if __name__ == "__main__":
    main()
