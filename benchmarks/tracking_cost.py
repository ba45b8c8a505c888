"""python -m benchmarks.tracking_cost: what tensor provenance costs while it is off.

The one-element add of the benchmark (`a + b`, fresh result; `add(a, b, out=c)`) timed in
this ember and in a baseline build of the same source with provenance compiled out
(`-DEMBER_TRACKING=OFF`), each in its own interpreter. Every round runs each side once, in
an order that walks through all permutations, so drift and load fall on all sides alike:

    pip install --target /tmp/ember-base --no-deps -C cmake.define.EMBER_TRACKING=OFF .
    python -m benchmarks.tracking_cost --baseline /tmp/ember-base --rounds 24

Each row gives the median over rounds of this/baseline and a 95% interval for that
median (distribution-free, from the order statistics of the round ratios). numpy's own
one-element add is timed in the same processes: no build can change it, so its interval
shows how far apart two runs of identical code land on this machine.

Two builds also differ in code layout, which alone moves a sub-microsecond call by a few
percent on some CPUs. `--control DIR` adds a third side, tracking compiled in like this
ember but laid out differently:

    pip install --target /tmp/ember-ctrl --no-deps \
        -C cmake.define.CMAKE_CXX_FLAGS=-falign-functions=64 .

this/control is then what a rebuild alone changes; a cost of tracking would show as
this/baseline and control/baseline both away from 1 on the same side, beyond this/control.

`--instructions` counts instead of timing: each side runs N CPU adds under valgrind's
callgrind and N = 0, and the difference over N is the instructions per add, which does
not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import itertools
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


def _env(site: str | None) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("EMBER_TRACK_TENSORS", None)
    if site:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [site, env.get("PYTHONPATH")]))
    return env


# A side of the A/B: its name, the site dir it imports ember from (None: this ember), and
# whether that build must have provenance compiled in.
Side = tuple[str, "str | None", bool]


def _sides(baseline: str, control: str | None) -> list[Side]:
    sides = [("this", None, True), ("baseline", baseline, False)]
    return sides + ([("control", control, True)] if control else [])


def _run_child(side: Side, calls: int, samples: int) -> dict:
    name, site, compiled = side
    cmd = [sys.executable, "-m", "benchmarks.tracking_cost", "--child"]
    cmd += ["--calls", str(calls), "--samples", str(samples)]
    out = subprocess.run(cmd, env=_env(site), capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"child failed ({name}):\n{out.stderr}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["tracking_compiled"] != compiled or result["tracking_on"]:
        raise SystemExit(
            f"the {name} ember ({result['file']}) has tracking compiled "
            f"{'in' if result['tracking_compiled'] else 'out'} and "
            f"{'on' if result['tracking_on'] else 'off'}: the baseline must be built with "
            "-DEMBER_TRACKING=OFF, this ember and the control without it, all with tracking off"
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


def _ratio_cell(pairs: list[tuple[float, float]]) -> str:
    ratios = [a / b for a, b in pairs]
    lo, hi = median_interval(ratios)
    return f"{statistics.median(ratios):.4f} [{lo:.4f}, {hi:.4f}]"


def time_rounds(sides: list[Side], rounds: int, calls: int, samples: int) -> int:
    # Each round runs every side once; the order walks through every permutation, so each
    # side comes first, middle and last equally often and drift falls on all alike.
    orders = list(itertools.permutations(sides))
    times: dict[str, dict[str, list[float]]] = {}  # row: side: µs per round
    for i in range(rounds):
        got = {
            side[0]: _run_child(side, calls, samples)["rows"] for side in orders[i % len(orders)]
        }
        for name, rows in got.items():
            for row, us in rows.items():
                times.setdefault(row, {}).setdefault(name, []).append(us)
        cells = (
            f"{row} " + "/".join(f"{got[s[0]][row]:.2f}" for s in sides)
            for row in got["this"]
            if row.startswith("ember")
        )
        print(f"round {i + 1}/{rounds}: " + ", ".join(cells), flush=True)
    names = [s[0] for s in sides]
    comparisons = [("this", "baseline")]
    if "control" in names:  # the control differs from this ember in code layout only
        comparisons += [("control", "baseline"), ("this", "control")]
    print(f"\n{rounds} interleaved rounds, {calls} calls x {samples} samples per row and process")
    print(f"{'row':22s}" + "".join(f"{n + ' µs':>12s}" for n in names), end="")
    width = {(a, b): max(24, len(a) + len(b) + 1) for a, b in comparisons}
    print("".join(f"  {a + '/' + b:{width[a, b]}s}" for a, b in comparisons).rstrip())
    for row, by_side in times.items():
        line = f"{row:22s}" + "".join(f"{statistics.median(by_side[n]):12.3f}" for n in names)
        for a, b in comparisons:
            line += f"  {_ratio_cell(list(zip(by_side[a], by_side[b]))):{width[a, b]}s}"
        print(line.rstrip())
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


def count_instructions(sides: list[Side], calls: int) -> int:
    if not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    per_add = {}
    for side in sides:
        name, site, _ = side
        _run_child(side, 10, 1)  # checks which build each side imports
        zero, many = _instructions(site, 0), _instructions(site, calls)
        per_add[name] = (many - zero) / calls
        print(
            f"{name:10s} {zero:>14,d} instructions at 0 adds, {many:>14,d} at {calls}: "
            f"{per_add[name]:.1f} per CPU a + b",
            flush=True,
        )
    diff = per_add["this"] - per_add["baseline"]
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
    p.add_argument(
        "--control",
        help="site dir of an ember with tracking compiled in and a different code layout "
        "(e.g. built with -DCMAKE_CXX_FLAGS=-falign-functions=64): this/control is then "
        "the noise of a rebuild alone",
    )
    p.add_argument("--rounds", type=int, default=24, help="rounds of one process per side")
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
    if args.control and not os.path.isdir(os.path.join(args.control, "ember")):
        p.error("--control DIR must hold an ember package built with tracking compiled in")
    sides = _sides(args.baseline, args.control)
    if args.instructions:
        return count_instructions(sides, args.calls)
    if args.rounds < 6:
        p.error("--rounds must be at least 6 for a 95% interval of the median")
    return time_rounds(sides, args.rounds, args.calls, args.samples)


if __name__ == "__main__":
    raise SystemExit(main())
