"""python -m benchmarks.tracking_cost: what tensor provenance costs while it is off.

The one-element add of the benchmark (`a + b`, fresh result; `add(a, b, out=c)`) timed in
this ember and in a baseline build of the same source with provenance compiled out
(`-DEMBER_TRACKING=OFF`), each in its own interpreter, in interleaved pairs whose order
alternates (AB, BA, ...), so drift and load fall on both sides alike:

    pip install --target /tmp/ember-base --no-deps -C cmake.define.EMBER_TRACKING=OFF .
    python -m benchmarks.tracking_cost --baseline /tmp/ember-base --pairs 20

Each row gives the median over pairs of this/baseline and a 95% interval for that
median (distribution-free, from the order statistics of the pair ratios). numpy's own
one-element add is timed in the same processes as a control: no build can change it, so
its interval shows how far apart two runs of identical code land on this machine.

`--instructions` counts instead of timing: each side runs N CPU adds under valgrind's
callgrind and N = 0, and the difference over N is the instructions per add, which does
not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

from benchmarks.timing import Impl

_STMTS = {"a + b": "a + b", "add(out=)": "add(a, b, out=c)"}


def _median_per_call_us(impl: Impl, calls: int, samples: int) -> float:
    impl.timed(calls // 10)  # warm: allocator caches, first launches
    return statistics.median(impl.timed(calls) / calls * 1e6 for _ in range(samples))


def child(calls: int, samples: int) -> dict:
    import ember
    import numpy as np

    rows: dict[str, list[float]] = {}
    devices = [("cpu", ember.device("cpu"))]
    if ember.cuda_is_available():
        devices.append(("cuda", ember.device("cuda")))
    ones = lambda: np.ones(1, np.float32)  # noqa: E731
    for _round in range(2):  # numpy and ember alternate inside the process too
        for name, stmt in _STMTS.items():
            env = {"a": ones(), "b": ones(), "c": np.empty(1, np.float32), "add": np.add}
            rows.setdefault(f"numpy {name}", []).append(
                _median_per_call_us(Impl("numpy", stmt, env), calls, samples)
            )
            for dev_name, d in devices:
                env = {"a": ember.ones(1, device=d), "b": ember.ones(1, device=d)}
                env |= {"c": ember.empty(1, device=d), "add": ember.add}
                sync = d.synchronize if dev_name != "cpu" else None
                rows.setdefault(f"ember {dev_name} {name}", []).append(
                    _median_per_call_us(Impl("ember", stmt, env, sync), calls, samples)
                )
    return {
        "tracking_compiled": bool(ember._core._tracking_compiled),
        "tracking_on": ember.is_tracking(),
        "file": ember.__file__,
        "rows": {k: statistics.median(v) for k, v in rows.items()},
    }


def count_child(calls: int) -> None:
    import ember

    cpu = ember.device("cpu")
    a, b = ember.ones(1, device=cpu), ember.ones(1, device=cpu)
    for _ in range(calls):
        a + b


def _env(baseline: str | None) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("EMBER_TRACK_TENSORS", None)
    if baseline:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [baseline, env.get("PYTHONPATH")]))
    return env


def _run_child(baseline: str | None, calls: int, samples: int) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.tracking_cost", "--child"]
    cmd += ["--calls", str(calls), "--samples", str(samples)]
    out = subprocess.run(cmd, env=_env(baseline), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(
            f"child failed ({'baseline' if baseline else 'this ember'}):\n{out.stderr}"
        )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["tracking_compiled"] != (baseline is None) or result["tracking_on"]:
        side = "the baseline" if baseline else "this ember"
        raise SystemExit(
            f"{side} ({result['file']}) has tracking compiled "
            f"{'in' if result['tracking_compiled'] else 'out'} and "
            f"{'on' if result['tracking_on'] else 'off'}: the baseline must be built with "
            "-DEMBER_TRACKING=OFF and this ember without it, with tracking off"
        )
    return result


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median: the order statistics j and n-1-j
    (from 0) for the largest j with P(Binomial(n, 1/2) <= j) <= (1 - level) / 2."""
    v, n = sorted(values), len(values)
    j, below = -1, 0.0
    while j + 1 < n // 2:
        below += math.comb(n, j + 1) / 2**n
        if below > (1 - level) / 2:
            break
        j += 1
    j = max(j, 0)  # too few pairs for the level: the whole range
    return v[j], v[n - 1 - j]


def time_pairs(baseline: str, pairs: int, calls: int, samples: int) -> int:
    times: dict[str, list[tuple[float, float]]] = {}  # row: (this, baseline) per pair
    for i in range(pairs):
        order = (None, baseline) if i % 2 == 0 else (baseline, None)
        got = {side: _run_child(side, calls, samples) for side in order}
        this, base = got[None]["rows"], got[baseline]["rows"]
        for row in this:
            times.setdefault(row, []).append((this[row], base[row]))
        print(
            f"pair {i + 1}/{pairs}: "
            + ", ".join(
                f"{row} {this[row]:.2f}/{base[row]:.2f}" for row in this if row.startswith("ember")
            ),
            flush=True,
        )
    print(f"\n{pairs} interleaved pairs, {calls} calls x {samples} samples per row and process")
    print(f"{'row':26s} {'this µs':>8s} {'base µs':>8s} {'this/base':>9s}  95% interval")
    for row, both in times.items():
        ratios = [t / b for t, b in both]
        lo, hi = median_interval(ratios)
        this_us = statistics.median(t for t, _ in both)
        base_us = statistics.median(b for _, b in both)
        print(
            f"{row:26s} {this_us:8.3f} {base_us:8.3f} {statistics.median(ratios):9.4f}"
            f"  [{lo:.4f}, {hi:.4f}]"
        )
    return 0


def _instructions(baseline: str | None, calls: int) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += ["-m", "benchmarks.tracking_cost", "--count-child", "--calls", str(calls)]
    # one thread each: idle pool threads spinning would add counts that vary run to run
    env = _env(baseline) | {k: "1" for k in ("EMBER_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", out.stderr)
    if out.returncode != 0 or not found:
        raise SystemExit(f"callgrind failed:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def count_instructions(baseline: str, calls: int) -> int:
    if not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    per_add = {}
    for side, name in ((None, "this ember"), (baseline, "baseline")):
        _run_child(side, 10, 1)  # checks which build each side imports
        zero, many = _instructions(side, 0), _instructions(side, calls)
        per_add[name] = (many - zero) / calls
        print(
            f"{name:10s} {zero:>14,d} instructions at 0 adds, {many:>14,d} at {calls}: "
            f"{per_add[name]:.1f} per CPU a + b",
            flush=True,
        )
    diff = per_add["this ember"] - per_add["baseline"]
    print(
        f"provenance compiled in, off: {diff:+.1f} instructions per add "
        f"({diff / per_add['baseline']:+.3%})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.tracking_cost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--baseline", help="site dir of an ember built with -DEMBER_TRACKING=OFF")
    p.add_argument("--pairs", type=int, default=20)
    p.add_argument("--calls", type=int, default=10_000, help="calls per timed sample")
    p.add_argument("--samples", type=int, default=15, help="samples per row and process")
    p.add_argument("--instructions", action="store_true", help="count with callgrind instead")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--count-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.calls, args.samples)))
        return 0
    if args.count_child:
        count_child(args.calls)
        return 0
    if not args.baseline or not os.path.isdir(os.path.join(args.baseline, "ember")):
        p.error("--baseline DIR must hold an ember package built with -DEMBER_TRACKING=OFF")
    if args.instructions:
        return count_instructions(args.baseline, args.calls)
    if args.pairs < 6:
        p.error("--pairs must be at least 6 for a 95% interval of the median")
    return time_pairs(args.baseline, args.pairs, args.calls, args.samples)


if __name__ == "__main__":
    raise SystemExit(main())
