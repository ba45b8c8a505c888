"""python -m benchmarks.launch_cost: where the time of a one-element op goes.

Per-call host time (µs, median of 5 runs of 10 000 queued calls, then one wait) of a
one-element add, fresh and out=, and of empty(1), on the CPU device and, where a GPU and
torch are present, on CUDA beside torch's. The CPU rows are ember's own cost (the Python
call and the dispatch); the CUDA rows add the kernel launch. The "bare launch" rows are
the floor under both: one Python call that launches one kernel of a single thread and
nothing else (ember's test hook _queue_busy with 0 s, torch.cuda._sleep(0)). The
"tracked" rows are the fresh add with ember.set_tracking(True), each result recording
where it was made; the untracked rows beside them are the cost of tracking when off.
"""

from __future__ import annotations

import statistics
import time


def per_call_us(fn, sync=None, calls: int = 10_000, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        fn()
        if sync:
            sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def rows_of(lib: str, device: str, ones, empty, add, sync, tracking=None) -> dict[str, float]:
    a, b, c = ones(), ones(), empty()
    rows = {
        f"{lib} {device} a + b": per_call_us(lambda: a + b, sync),
        f"{lib} {device} add(out=)": per_call_us(lambda: add(a, b, out=c), sync),
        f"{lib} {device} empty(1)": per_call_us(empty, sync),
    }
    if tracking is not None:
        tracking(True)
        try:
            rows[f"{lib} {device} a + b tracked"] = per_call_us(lambda: a + b, sync)
        finally:
            tracking(False)
    return rows


def main() -> int:
    import ember

    cpu = ember.device("cpu")
    rows = rows_of(
        "ember",
        "cpu",
        lambda: ember.ones(1, device=cpu),
        lambda: ember.empty(1, device=cpu),
        ember.add,
        None,
        ember.set_tracking,
    )
    if ember.cuda_is_available():
        d = ember.device("cuda")
        rows |= rows_of(
            "ember",
            "cuda",
            lambda: ember.ones(1, device=d),
            lambda: ember.empty(1, device=d),
            ember.add,
            d.synchronize,
            ember.set_tracking,
        )
        rows["ember cuda bare launch"] = per_call_us(
            lambda: ember._core._queue_busy(d, 0.0), d.synchronize
        )
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None and torch.cuda.is_available():
            rows |= rows_of(
                "torch",
                "cuda",
                lambda: torch.ones(1, device="cuda"),
                lambda: torch.empty(1, device="cuda"),
                torch.add,
                torch.cuda.synchronize,
            )
            rows["torch cuda bare launch"] = per_call_us(
                lambda: torch.cuda._sleep(0), torch.cuda.synchronize
            )
    else:
        print("no usable CUDA GPU here: the CPU rows only")
    for name, us in rows.items():
        print(f"{name:28s} {us:7.2f} µs per call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
