"""Runs one case: sanity check, calibration, interleaved sampling, figures."""

from __future__ import annotations

import numpy as np

from .cases import Case
from .timing import Impl, Settings, calibrate, interleave, summarize

EMBER = "ember"


def check(impl: Impl, get, reference: np.ndarray, rtol: float) -> dict:
    """Compare one run's result with the float64 numpy reference, as np.allclose does."""
    got = get(impl.run_once())
    if got.shape != reference.shape:
        return {"ok": False, "detail": f"shape {got.shape}, numpy gives {reference.shape}"}
    scale = float(np.max(np.abs(reference))) if reference.size else 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - reference))) if got.size else 0.0
    # err <= atol already implies allclose; np.allclose itself takes ~0.6 s on 1e7 elements
    ok = err <= rtol * scale or bool(np.allclose(got, reference, rtol=rtol, atol=rtol * scale))
    rel = err / scale if scale > 0 else err
    detail = "" if ok else f"max |err| {err:.3g} = {rel:.3g} of max |ref| (allowed {rtol:g})"
    return {"ok": ok, "rel_err": rel, "detail": detail}


def run_case(case: Case, getters: dict, settings: Settings) -> dict:
    """Check every library once, then time those that ran, and return the record."""
    checks = {}
    ready = []
    for impl in case.impls:
        try:
            checks[impl.lib] = check(impl, getters[impl.lib], case.reference, case.rtol)
            ready.append(impl)
        except Exception as exc:
            case.errors[impl.lib] = f"{type(exc).__name__}: {exc}"
    inner = {}
    for impl in list(ready):
        try:
            inner[impl.lib] = calibrate(impl, settings.min_sample, case.inner)
        except Exception as exc:
            case.errors[impl.lib] = f"{type(exc).__name__}: {exc}"
            ready.remove(impl)
        if impl.timer is not None:
            impl.timer.walls.clear()  # from here on, one host time per sample
    pause = case.pause and settings.pause > 0
    samples = interleave(ready, inner, settings, pause) if ready else {}
    by_lib = {impl.lib: impl for impl in ready}
    results = {
        lib: _figures(summarize(s, inner[lib]), case, by_lib[lib]) for lib, s in samples.items()
    }
    return _record(case, checks, results)


SCALE = {"GB/s": 1e9, "GFLOP/s": 1e9, "TFLOP/s": 1e12}


def _figures(summary: dict, case: Case, impl: Impl | None = None) -> dict:
    """Adds throughput (bytes or flops per call over the median time) and the timer."""
    if case.work and summary["median_us"] > 0:
        scale = SCALE.get(case.unit, 1e9)
        summary["throughput"] = case.work / (summary["median_us"] * 1e-6) / scale
    else:
        summary["throughput"] = None
    summary["throughput_unit"] = case.unit or None
    if impl is not None:
        summary["timer"] = impl.timer_kind
        walls = impl.timer.walls if impl.timer is not None else []
        if walls:  # events: the host's view of the same samples, for comparison
            summary["wall_median_us"] = float(np.median(walls)) * 1e6 / summary["inner_iterations"]
    return summary


def ratios(results: dict) -> dict:
    """Peer median time over ember's: > 1.0 means ember is faster."""
    if EMBER not in results:
        return {}
    mine = results[EMBER]["median_us"]
    return {lib: r["median_us"] / mine for lib, r in results.items() if lib != EMBER and mine > 0}


def _record(case: Case, checks: dict, results: dict) -> dict:
    spec = case.spec
    work_key = "flops" if case.unit.endswith("FLOP/s") else "bytes"
    return {
        "op": spec.op,
        "case": spec.name,
        "device": case.device,
        "dtype": spec.dtype,
        "size": int(np.prod(case.shape)) if spec.op != "matmul" else spec.size,
        "label": spec.label,
        "shape": list(case.shape),
        "work": {work_key: case.work} if case.work else {},
        "unit": case.unit or None,
        "note": case.note,
        "check": checks,
        "errors": dict(case.errors),
        "results": results,
        "ratio": ratios(results),
    }


def unsupported(error: str) -> bool:
    """A dtype the device lacks (f16 somewhere) is a gap to show, not a failure."""
    return "UnsupportedDTypeError" in error


def failures(record: dict) -> list[str]:
    """ember's problems in this case, as lines for the loud end-of-run summary."""
    where = f"{record['device']} {record['case']} {record['label']}"
    out = []
    if EMBER in record["errors"] and not unsupported(record["errors"][EMBER]):
        out.append(f"{where}: ember error: {record['errors'][EMBER]}")
    chk = record["check"].get(EMBER)
    if chk and not chk["ok"]:
        out.append(f"{where}: ember result differs from numpy: {chk['detail']}")
    return out
