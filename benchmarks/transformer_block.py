"""python -m benchmarks.transformer_block: a transformer block's forward pass, beside PyTorch.

A GPT-2 style pre-norm block written with each library's ops, no fused kernels: layer
norm composed from mean and var, one matmul for queries, keys and values, the heads
split by reshape and permute, causal attention with masked_fill and softmax, the heads
merged back, a gelu MLP and two residual adds. Most of its ops are not matmuls: the
broadcasts, permuted copies, masked fills and row reductions between them are what this
measures, beside matmuls that run on the same BLAS (CPU) or cuBLAS (CUDA) in both.

Both libraries start from the same weights and input; the first outputs are compared.
Forward passes of ember and torch alternate; each sample times `--steps` passes
(synchronised on GPUs); the report gives the median per pass over `--repeats` samples
and torch's time over ember's.

    python -m benchmarks.transformer_block [--device cpu|cuda|metal] [--dtype float32]
        [--batch 4] [--seq 256] [--width 768] [--heads 12]
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy as np

from .timing import alternate_ms


def weights(width: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = {
        "ln1_w": (width,), "ln1_b": (width,), "w_qkv": (width, 3 * width), "b_qkv": (3 * width,),
        "w_o": (width, width), "b_o": (width,), "ln2_w": (width,), "ln2_b": (width,),
        "w_fc": (width, 4 * width), "b_fc": (4 * width,), "w_proj": (4 * width, width),
        "b_proj": (width,),
    }  # fmt: skip
    out = {}
    for name, shape in shapes.items():
        if name.startswith("ln") and name.endswith("_w"):
            out[name] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        elif len(shape) == 1:
            out[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    return out


def layer_norm(m, x, w, b, eps: float = 1e-5):
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, correction=0)
    return (x - mu) / (var + eps).sqrt() * w + b


def block(m, x, p, mask, heads: int):
    """One pre-norm block: x + attention(ln1(x)), then + mlp(ln2(.))."""
    batch, seq, width = x.shape
    d = width // heads
    h = layer_norm(m, x, p["ln1_w"], p["ln1_b"])
    q, k, v = (h @ p["w_qkv"] + p["b_qkv"]).split(width, -1)
    q, k, v = (t.reshape(batch, seq, heads, d).permute(0, 2, 1, 3) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
    att = m.softmax(att.masked_fill(mask, float("-inf")), -1)
    y = (att @ v).permute(0, 2, 1, 3).reshape(batch, seq, width)
    x = x + (y @ p["w_o"] + p["b_o"])
    h = layer_norm(m, x, p["ln2_w"], p["ln2_b"])
    h = m.nn.functional.gelu(h @ p["w_fc"] + p["b_fc"]) if m.__name__ == "torch" else m.gelu(
        h @ p["w_fc"] + p["b_fc"]
    )
    return x + (h @ p["w_proj"] + p["b_proj"])


def setup(m, device, dtype: str, batch: int, seq: int, width: int, heads: int):
    """The forward pass as a closure over this library's weights, input and mask."""
    dt = getattr(m, dtype)
    rng = np.random.default_rng(1)
    x = m.tensor(rng.standard_normal((batch, seq, width)).astype(np.float32), device=device).to(dt)
    p = {k: m.tensor(v, device=device).to(dt) for k, v in weights(width).items()}
    # True above the diagonal: the positions a query may not attend to
    mask = m.tensor(np.triu(np.ones((seq, seq), dtype=bool), 1), device=device)
    return lambda: block(m, x, p, mask, heads)


def to_numpy(m, t) -> np.ndarray:
    if m.__name__ == "torch":
        return t.float().cpu().numpy()
    return t.to_dtype(m.float32).numpy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a transformer block's forward pass beside PyTorch")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--width", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args(argv)
    if args.width % args.heads:
        parser.error("--width must be a multiple of --heads")
    import ember

    dev = ember.device(args.device)
    libs = {"ember": (ember, dev, dev.synchronize)}
    torch_threads = None
    try:
        import torch

        tdev = {"cpu": "cpu", "cuda": "cuda", "metal": "mps"}[dev.kind]
        sync = {"cuda": torch.cuda.synchronize, "mps": getattr(torch, "mps", None) and torch.mps.synchronize}.get(tdev)
        libs["torch"] = (torch, tdev, sync or (lambda: None))
        torch_threads = torch.get_num_threads()
    except (ImportError, RuntimeError, AttributeError, KeyError):
        pass
    shape = (args.batch, args.seq, args.width, args.heads)
    passes = {}
    for name, (m, d, _) in list(libs.items()):
        try:
            passes[name] = setup(m, d, args.dtype, *shape)
        except RuntimeError:  # a torch without this device (mps on Linux)
            if name == "ember":
                raise
            del libs[name]
    first = {name: to_numpy(libs[name][0], f()) for name, f in passes.items()}
    mismatch = ""
    if "torch" in first:
        err = float(np.max(np.abs(first["ember"] - first["torch"])))
        scale = float(np.max(np.abs(first["torch"])))
        tol = 1e-3 if args.dtype == "float32" else 5e-2
        mismatch = f"max |ember - torch| {err:.2e} of {scale:.2f}" + ("  MISMATCH" if err > tol * scale else "")
    runs = {name: (passes[name], libs[name][2]) for name in passes}
    times = alternate_ms(runs, args.steps, args.repeats)  # interleaved
    print(f"transformer block forward, batch {args.batch}, seq {args.seq}, width {args.width}, "
          f"{args.heads} heads, {args.dtype}, device {args.device}; torch threads {torch_threads}; "
          f"median of {args.repeats} samples of {args.steps} passes")  # fmt: skip
    med = {name: statistics.median(t) for name, t in times.items()}
    for name in libs:
        ratio = f"{med['torch'] / med[name]:.2f}x" if "torch" in med and name == "ember" else ""
        print(f"{name:6s} {med[name]:8.3f} ms per pass  {ratio}")
    if mismatch:
        print(mismatch)
    return 1 if mismatch.endswith("MISMATCH") else 0


if __name__ == "__main__":
    raise SystemExit(main())
