"""Data-parallel training past one process: ember computes, torch.distributed all-reduces.

Each process trains the example MLP (04_train_mlp.py) on its shard of the batch. After
backward(), each gradient is handed to torch.distributed through DLPack, which shares the
memory (no copy), and all-reduced in place. Then every process takes the same SGD step.
ember writes no collectives of its own: this is its path past one machine, through an
existing engine (gloo on CPUs, NCCL on GPUs).

    python examples/05_data_parallel.py            # 2 processes, gloo, on the CPU
    python examples/05_data_parallel.py --nccl     # one process per GPU, NCCL, on CUDA

Both processes end with the same weights, equal to one process trained on the whole batch.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _example():
    spec = importlib.util.spec_from_file_location("train_mlp", os.path.join(HERE, "04_train_mlp.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def train(rank: int, world: int, steps: int, allreduce=None, device: str = "cpu"):
    """The MLP's weights after `steps` SGD steps on shard `rank` of `world` (all of the
    batch when world is 1) on `device`, with each gradient averaged by `allreduce` (in
    place)."""
    import ember

    ex = _example()
    x_np, y_np = ex.data()
    shard = slice(rank * len(x_np) // world, (rank + 1) * len(x_np) // world)
    dev = ember.device(device)
    x, y = ember.tensor(x_np[shard], device=dev), ember.tensor(y_np[shard], device=dev)
    params = {k: ember.tensor(v, device=dev, requires_grad=True) for k, v in ex.mlp_weights().items()}
    opt = ember.optim.SGD(list(params.values()), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((ex.mlp(ember, params, x) - y) ** 2).mean()
        loss.backward()
        if allreduce is not None:
            for p in params.values():
                allreduce(p.grad)  # the gradient's own memory, summed across processes
                p.grad = p.grad / world
        opt.step()
    return {k: v.detach().numpy() for k, v in params.items()}


def _worker(rank: int, world: int, port: int, steps: int, out: str, backend: str) -> None:
    import torch
    import torch.distributed as dist

    device = "cpu"
    if backend == "nccl":
        device = f"cuda:{rank}"  # one GPU per process
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)  # fmt: skip

    def allreduce(g):
        # from_dlpack orders torch's stream after ember's queued writes of g (DLPack's
        # stream protocol); NCCL's sum is queued on torch's streams, so ember, on its
        # own stream, reads g only after torch's stream has finished it
        dist.all_reduce(torch.from_dlpack(g))
        if backend == "nccl":
            torch.cuda.current_stream().synchronize()

    try:
        weights = train(rank, world, steps, allreduce, device)
        np.savez(os.path.join(out, f"rank{rank}.npz"), **weights)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(world: int, steps: int, out: str, backend: str = "gloo") -> list[dict]:
    """Trains in `world` processes (this file, run with --rank) that all-reduce through
    `backend` (gloo on the CPU, nccl with one GPU each); returns each one's final weights."""
    import subprocess

    port = free_port()
    procs = [
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank", str(r), str(world),
                          str(port), str(steps), out, backend])  # fmt: skip
        for r in range(world)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    if any(codes):
        raise RuntimeError(f"a training process failed: exit codes {codes}")
    return [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(world)]


def main() -> None:
    import tempfile

    backend, device, world = "gloo", "cpu", 2
    if "--nccl" in sys.argv:
        import ember

        backend, device, world = "nccl", "cuda:0", ember.cuda_device_count()
        if world < 2:
            sys.exit(f"--nccl needs two GPUs or more; this machine has {world}")
    with tempfile.TemporaryDirectory() as out:
        ranks = run(world, 20, out, backend)
    alone = train(0, 1, 20, device=device)
    for name in alone:
        same = np.array_equal(ranks[0][name], ranks[1][name])
        diff = np.abs(ranks[0][name] - alone[name]).max()
        print(f"{name}: ranks equal {same}, max difference to one process {diff:.2e}")


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "--rank":
        _worker(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
                sys.argv[7])  # fmt: skip
    else:
        main()
