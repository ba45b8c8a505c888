"""python -m benchmarks.metal_memory: host memory over a long asynchronous loop on Metal.

`c = a + 1` on `--numel` float32 elements, `--ops` times, with no synchronize(): the
queue bound and the pool cap must keep the process's resident memory flat (before they
existed it grew by about 1.8 GiB per 1000 ops of 1e6 elements). Prints RSS every
`--every` ops; exit status 1 when it grew by more than `--bound` MiB after the warm-up.
On Linux it runs on the emulator (EMBER_METAL_EMULATOR=1 is set here).
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def rss_mib() -> float:
    pages = int(open("/proc/self/statm").read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", type=int, default=5000)
    p.add_argument("--numel", type=int, default=1_000_000)
    p.add_argument("--every", type=int, default=500)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--bound", type=float, default=64.0, help="MiB of growth allowed")
    args = p.parse_args(argv)
    if sys.platform != "darwin":
        os.environ.setdefault("EMBER_METAL_EMULATOR", "1")
    import ember
    import numpy as np

    d = ember.device("metal")
    a = ember.tensor(np.zeros(args.numel, dtype=np.float32), device=d)
    print(f"{args.ops} ops of c = a + 1 on {args.numel} float32 elements, no synchronize()")
    print(f"{'ops':>6} {'RSS MiB':>8} {'pool cached MiB':>16} {'s':>7}")
    start, warm, most = time.perf_counter(), None, 0.0
    for i in range(1, args.ops + 1):
        c = a + 1
        if i == args.warmup:
            warm = rss_mib()
        if i % args.every == 0:
            rss = rss_mib()
            if warm is not None:
                most = max(most, rss - warm)
            cached = d.memory_stats()["bytes_cached"] / 2**20
            print(f"{i:6d} {rss:8.1f} {cached:16.1f} {time.perf_counter() - start:7.1f}")
    ok = c[-1].item() == 1.0 and most <= args.bound
    print(
        f"growth after op {args.warmup}: at most {most:.1f} MiB (bound {args.bound:g}): "
        f"{'flat' if ok else 'NOT FLAT'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
