"""python -m benchmarks.load_file: loading a safetensors file, ember beside PyTorch.

Writes a file of --gib GiB (a model's shape: --tensors float32 tensors of equal size;
the page cache is warm, as for a second load of the same weights) and times, median of
--repeats runs with the libraries interleaved:

- ``load``: ``ember.load_file(path, device)`` and ``safetensors.torch.load_file(path,
  device)`` until the tensors are on the device (GPUs: synchronised);
- ``load + read``: the same, then every tensor summed, so that a loader that maps the
  file lazily pays for its page faults too.

Usage: ``python -m benchmarks.load_file [--device cpu|cuda|metal] [--gib 1] [--repeats 5]``.
GB/s is file bytes per second; "vs torch" is torch's time over ember's (above 1: ember
is faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


def write_file(path: str, gib: float, tensors: int) -> int:
    import ember

    n = max(1, int(gib * 2**30) // 4 // tensors)
    ember.save_file({f"layer{i:03d}.weight": ember.full((n,), float(i)) for i in range(tensors)}, path)
    return os.path.getsize(path)


def ember_loader(device: str):
    import ember

    dev = ember.device(device)

    def load(path: str, read: bool) -> None:
        out = ember.load_file(path, device=dev)
        if read:
            for t in out.values():
                t.sum()
        dev.synchronize()

    return load


def torch_loader(device: str):
    try:
        import torch
        from safetensors.torch import load_file
    except ImportError:
        return None
    tdev = {"cpu": "cpu", "cuda": "cuda", "metal": "mps"}[device.split(":")[0]]
    if tdev == "cuda" and not torch.cuda.is_available():
        return None
    if tdev == "mps" and not torch.backends.mps.is_available():
        return None
    sync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)

    def load(path: str, read: bool) -> None:
        out = load_file(path, device=tdev)
        if read:
            for t in out.values():
                t.sum()
        sync()

    return load


def measure(loaders: dict, path: str, read: bool, repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in loaders}
    for name, load in loaders.items():  # one untimed run each
        load(path, read)
    for r in range(repeats):
        order = list(loaders.items())
        if r % 2:
            order.reverse()  # interleaved, each going first half the time
        for name, load in order:
            start = time.perf_counter()
            load(path, read)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load_file", description=__doc__)
    p.add_argument("--device", default="cpu")
    p.add_argument("--gib", type=float, default=1.0)
    p.add_argument("--tensors", type=int, default=64)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    loaders = {"ember": ember_loader(args.device)}
    theirs = torch_loader(args.device)
    if theirs:
        loaders["torch"] = theirs
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.safetensors")
        size = write_file(path, args.gib, args.tensors)
        print(f"{size / 2**30:.3f} GiB in {args.tensors} float32 tensors, device {args.device}, "
              f"median of {args.repeats}")  # fmt: skip
        print(f"{'case':<14}{'library':<8}{'ms':>10}{'GB/s':>9}{'vs torch':>10}")
        for read in (False, True):
            case = "load + read" if read else "load"
            medians = measure(loaders, path, read, args.repeats)
            for name, sec in medians.items():
                ratio = ""
                if "torch" in medians and name == "ember":
                    ratio = f"{medians['torch'] / sec:.2f}x"  # >1: ember is faster
                print(f"{case:<14}{name:<8}{sec * 1e3:>10.1f}{size / sec / 1e9:>9.2f}{ratio:>10}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
