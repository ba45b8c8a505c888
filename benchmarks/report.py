"""Output: the aligned text table, the JSON file and the throughput plot."""

from __future__ import annotations

import json
import os

from .runner import unsupported

LIB_ORDER = ("ember", "numpy", "torch")
COLORS = {"ember": "tab:red", "numpy": "tab:blue", "torch": "tab:green"}
CONVENTION = "vs X = X's median time / ember's: > 1.0 means ember is faster"


def fmt(value: float | None) -> str:
    """About three significant figures, no exponent for the usual range."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def libs_in(records: list[dict]) -> list[str]:
    seen = {lib for r in records for lib in list(r["results"]) + list(r["errors"])}
    return [lib for lib in LIB_ORDER if lib in seen]


def _cells(record: dict, lib: str) -> list[str]:
    res = record["results"].get(lib)
    if res is None:
        error = record["errors"].get(lib)
        return ["-" if error is None else "n/a" if unsupported(error) else "error", "", ""]
    return [fmt(res["median_us"]), f"{res['iqr_pct']:.0f}%", fmt(res["throughput"])]


def _check_cell(record: dict) -> str:
    """ "ok", or who disagreed with numpy / failed; ember's problems in capitals."""
    words = [
        f"{lib} MISMATCH" if lib == "ember" else f"{lib} differs"
        for lib, c in record["check"].items()
        if not c["ok"]
    ]
    for lib, error in record["errors"].items():
        if not unsupported(error):
            words.append(f"{lib} ERROR" if lib == "ember" else f"{lib} failed")
    return ", ".join(words) or "ok"


def device_rows(records: list[dict]) -> list[list[str]]:
    libs = libs_in(records)
    peers = [lib for lib in libs if lib != "ember"]
    head = ["case", "size", "unit"]
    for lib in libs:
        head += [f"{lib} µs", "iqr", "rate"]
    head += [f"vs {p}" for p in peers] + ["check"]
    rows = [head]
    for r in records:
        row = [r["case"], r["label"], r["unit"] or "-"]
        for lib in libs:
            row += _cells(r, lib)
        row += [fmt(r["ratio"].get(p)) for p in peers] + [_check_cell(r)]
        rows.append(row)
    return rows


def align(rows: list[list[str]]) -> str:
    """Left-align the first three columns (text), right-align the figures."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def table(records: list[dict], heading: list[str]) -> str:
    parts = list(heading)
    parts.append("times: median µs per call; iqr: interquartile range / median; rate: GB/s")
    parts.append("  (bytes read + written; host<->device moves count bytes moved) or GFLOP/s")
    parts.append(f"  (2*n^3); {CONVENTION}")
    if any(r["unit"] == "TFLOP/s" for r in records):
        parts.append("  CUDA matmul rates are TFLOP/s (2*n^3 / 1e12)")
    for device in dict.fromkeys(r["device"] for r in records):
        mine = [r for r in records if r["device"] == device]
        parts += ["", f"device {device}{_timers(mine)}", align(device_rows(mine))]
    notes = sorted({f"{r['case']}: {r['note']}" for r in records if r["note"]})
    notes += [
        f"{r['device']} {r['case']} {r['label']}: {lib}: {err}"
        for r in records
        for lib, err in r["errors"].items()
    ]
    notes += [
        f"{r['device']} {r['case']} {r['label']}: {lib} differs from numpy: {c['detail']}"
        for r in records
        for lib, c in r["check"].items()
        if not c["ok"]
    ]
    parts += [""] + [f"note: {n}" for n in notes] if notes else []
    return "\n".join(parts)


def _timers(records: list[dict]) -> str:
    """How the device's samples were timed, when not (only) by the host clock."""
    kinds = {}
    for r in records:
        for lib, res in r["results"].items():
            kinds.setdefault(res.get("timer", "host"), set()).add(lib)
    if set(kinds) <= {"host"}:
        return ""
    if len(kinds) == 1:
        return ": times from device events around each sample's loop"
    by = "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(kinds.items()))
    return f": times from {by}"


def write_json(path: str, payload: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=1, default=str)  # default: odd values from info()
        f.write("\n")


def plot(records: list[dict], path: str, title: str) -> str | None:
    """Throughput against size, a subplot per case; returns a note when it cannot."""
    try:
        import matplotlib
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install matplotlib)"
    matplotlib.use("Agg")  # files only; no display needed
    import matplotlib.pyplot as plt

    # a subplot per case and unit (CUDA matmul is in TFLOP/s, the others' in GFLOP/s)
    cases = list(dict.fromkeys((r["case"], r["unit"]) for r in records if r["unit"]))
    if not cases:
        return "plot skipped: no case has a throughput"
    cols = min(3, len(cases))
    rows = -(-len(cases) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, (case, unit) in zip(axes.flat, cases):
        _subplot(ax, [r for r in records if r["case"] == case and r["unit"] == unit], case)
    for ax in list(axes.flat)[len(cases) :]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def _subplot(ax, records: list[dict], case: str) -> None:
    # colour says the library, line style the device, the same in every subplot
    devices = list(dict.fromkeys(r["device"] for r in records))
    for device in devices:
        style = ("-", "--", ":", "-.")[devices.index(device) % 4]
        for lib in LIB_ORDER:
            pts = [
                (r["size"], r["results"][lib]["throughput"])
                for r in records
                if r["device"] == device and lib in r["results"]
            ]
            if pts:
                xs, ys = zip(*sorted(pts))
                ax.plot(xs, ys, style, marker="o", color=COLORS[lib], label=f"{lib} {device}")
    unit = records[0]["unit"]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(case)
    ax.set_xlabel("n (n x n matrices)" if records[0]["op"] == "matmul" else "elements")
    ax.set_ylabel(unit)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def out_paths(out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    names = {"table": "results.txt", "json": "results.json", "plot": "throughput.png"}
    return {k: os.path.join(out_dir, v) for k, v in names.items()}
