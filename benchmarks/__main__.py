"""python -m benchmarks: ember against numpy and PyTorch, on every device available.

Run from the repository root. Writes a table to stdout and, under --out (default
bench-results/), results.txt, results.json (summaries plus the machine description)
and throughput.png. Exit status: 0 when done, 1 when an ember result differed from
numpy or ember raised, 2 for a bad command line or device.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time

import numpy as np

from . import cases, libs, machine, report
from .progress import Progress
from .runner import failures, run_case
from .timing import Settings

DEVICES = ("cpu", "metal", "cuda", "all")


def parse_sizes(text: str) -> list[int]:
    """ "1e3,100000,64" -> [1000, 100000, 64]."""
    try:
        sizes = [int(float(s)) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma list of sizes: {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def parse_ops(text: str) -> list[str]:
    ops = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(ops) - set(cases.OPS))
    if unknown or not ops:
        raise argparse.ArgumentTypeError(
            f"unknown ops {unknown}; choose from {','.join(cases.OPS)}"
        )
    return ops


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time ember against numpy and PyTorch (interleaved, medians, spread).",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="fewer sizes, short budgets (<1 min on a CPU); CUDA: its same cases, short budgets",
    )
    p.add_argument("--device", choices=DEVICES, default="all", help="default: all available")
    p.add_argument(
        "--ops",
        type=parse_ops,
        default=list(cases.OPS),
        help=f"comma list from {','.join(cases.OPS)} (default: all)",
    )
    p.add_argument(
        "--sizes",
        type=parse_sizes,
        help="comma list, e.g. 1e3,1e6: elements for elementwise ops and n for matmul "
        "(CUDA: replaces 2^28, 8192x8192 rows, 256 MiB moves, and matmul 4096/8192)",
    )
    p.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    p.add_argument("--budget", type=float, help="seconds of sampling per case (1.5; quick 0.25)")
    p.add_argument("--repeat", type=int, help="turns per library at least (3; quick 2)")
    p.add_argument(
        "--pause",
        type=float,
        default=0.12,
        help="idle seconds before each library's turn on multi-threaded CPU cases, so the "
        "previous library's spinning worker threads go to sleep (default: %(default)s)",
    )
    p.add_argument("--out", default="bench-results", help="output folder (default: %(default)s)")
    p.add_argument(
        "--matrix",
        action="store_true",
        help="the benchmark matrix instead: op families x layout classes x dtypes, beside "
        "PyTorch (and numpy on the CPU); --sizes takes its n (n x n operands)",
    )
    p.add_argument(
        "--rows",
        type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
        help="with --matrix: only these op families, a comma list (e.g. mask,nonzero,index)",
    )
    args = p.parse_args(argv)
    if args.budget is not None and args.budget < 0:
        p.error("--budget must be >= 0")
    if args.pause < 0:
        p.error("--pause must be >= 0")
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


def settings_from(args: argparse.Namespace) -> Settings:
    budget = args.budget if args.budget is not None else (0.25 if args.quick else 1.5)
    repeat = args.repeat if args.repeat is not None else (2 if args.quick else 3)
    return Settings(budget=budget, min_rounds=repeat, pause=args.pause)


def sizes_from(args: argparse.Namespace) -> tuple[list[int] | None, list[int] | None]:
    """(elementwise sizes, matmul n) from --sizes, dropping matmul sizes too large to
    allocate; (None, None) without it: each device kind's defaults (cases.plan)."""
    if args.sizes:
        big = [n for n in args.sizes if n > cases.MATMUL_MAX_N]
        if big and "matmul" in args.ops:
            print(f"note: matmul skips n > {cases.MATMUL_MAX_N}: {big}", file=sys.stderr)
        return args.sizes, [n for n in args.sizes if n <= cases.MATMUL_MAX_N]
    return None, None


def device_kinds(ember, wanted: str) -> list[str]:
    """Device kinds to run on; empty when the one asked for is not usable here."""
    have = libs.available_kinds(ember)
    if wanted == "all":
        return have
    if wanted not in have:
        print(f"error: ember has no usable {wanted} device here (have: {have})", file=sys.stderr)
        return []
    return [wanted]


def run_all(plan, devices, settings, progress, records: list[dict]) -> None:
    """Appends a record per case, so an interrupted run still reports what it did."""
    rng = np.random.default_rng(0)
    for label, spec in plan:
        progress.start(f"{label} {spec.name} {spec.label}")
        t0 = time.perf_counter()
        lib_list = devices[label]
        case = cases.build(spec, lib_list, rng)
        getters = {lib.name: lib.get for lib in lib_list}
        record = run_case(case, getters, settings)
        record["wall_s"] = round(time.perf_counter() - t0, 2)  # setup, checks and timing
        for line in failures(record):
            progress.say(f"!!! {line}")
        records.append(record)
        progress.finish_one()
        del case  # inputs of the largest sizes are big; free them before the next case


def main(argv: list[str] | None = None) -> int:
    started = time.time()
    args = parse_args(argv)
    args.ops = [op for op in cases.OPS if op in args.ops]  # table order, not typing order
    try:
        import ember
    except ImportError as exc:
        print(
            f"error: cannot import ember ({exc}); install it first: pip install .", file=sys.stderr
        )
        return 2
    torch, why = (None, "torch left out (--no-torch)") if args.no_torch else libs.import_torch()
    kinds = device_kinds(ember, args.device)
    if not kinds:
        return 2
    devices, notes = libs.discover(ember, kinds, torch)
    notes += [why] if why else []
    notes += machine.busy_note()
    if args.matrix:
        from . import matrix

        desc = machine.describe(ember, devices, torch)
        return matrix.main(args, devices, notes, lambda label: machine.summary_line(desc))
    sizes, mm_sizes = sizes_from(args)
    plan = [
        (label, spec)
        for label, lib_list in devices.items()
        for spec in cases.plan(label.split(":")[0], args.ops, sizes, mm_sizes, args.quick)
    ]
    settings = settings_from(args)
    progress = Progress(len(plan))
    records: list[dict] = []
    try:
        run_all(plan, devices, settings, progress, records)
    except KeyboardInterrupt:
        notes.append(f"interrupted after {len(records)} of {len(plan)} cases")
    finally:
        progress.close()
    return finish(args, records, (ember, devices, torch), notes, settings, started)


def finish(args, records, libraries, notes, settings, started) -> int:
    """Write the table, JSON and plot; summarize ember's failures loudly."""
    ember, devices, torch = libraries
    desc = machine.describe(ember, devices, torch)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mode = "quick" if args.quick else "full"
    about = [machine.summary_line(desc), *machine.gpu_lines(desc)]
    heading = [f"ember benchmarks, {when}, {mode} run, {time.time() - started:.0f} s", *about]
    heading += [f"note: {n}" for n in notes]
    text = report.table(records, heading)
    paths = report.out_paths(args.out)
    plot_note = report.plot(records, paths["plot"], "\n".join(heading[: 1 + len(about)]))
    print(text)
    with open(paths["table"], "w", encoding="utf-8") as f:
        f.write(text + "\n")
    problems = [line for r in records for line in failures(r)]
    report.write_json(
        paths["json"],
        {
            "created": when,
            "command": ["python", "-m", "benchmarks", *sys.argv[1:]],
            "duration_s": round(time.time() - started, 1),
            "settings": {
                "quick": args.quick,
                "budget_s": settings.budget,
                "min_turns": settings.min_rounds,
                "min_sample_s": settings.min_sample,
                "pause_s": settings.pause,
                "turn_s": settings.turn,
            },
            "convention": report.CONVENTION,
            "notes": notes,
            "machine": desc,
            "ember_failures": problems,
            "cases": records,
            "plot": None if plot_note else paths["plot"],
        },
    )
    print(plot_note or f"plot: {paths['plot']}")
    print(f"table: {paths['table']}\njson: {paths['json']}")
    return _shout(problems)


def _shout(problems: list[str]) -> int:
    if not problems:
        return 0
    bar = "!" * 72
    print(
        "\n".join([bar, "EMBER FAILED CHECKS (results vs numpy, or errors):", *problems, bar]),
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
