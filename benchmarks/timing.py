"""Measurement: adaptive inner iterations, interleaved samples, robust summaries."""

from __future__ import annotations

import gc
import math
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# Like timeit, the statement is compiled into the loop body, so no Python call wrapper
# is timed (that matters for per-call overhead cases such as a one-element add).
_LOOP = """
def _loop(_n, _clock=_clock, _sync=_sync):
    _t0 = _clock()
    for _ in range(_n):
        {stmt}
    {sync}
    return _clock() - _t0
"""

# On a GPU the time of the inner loop is the device's: an event is recorded on the
# device's stream before the loop and one after it, and the host waits for the second.
# Only the two records sit outside the loop body, so per-call cases time the same code.
_EVENT_LOOP = """
def _loop(_n, _start=_start, _stop=_stop):
    _e0 = _start()
    for _ in range(_n):
        {stmt}
    return _stop(_e0)
"""

MAX_INNER = 1_000_000
MAX_ROUNDS = 5_000
WARM_CALL_MAX_S = 0.05  # calls shorter than this get an untimed warm call per turn
SLOW_CASE_S = 30.0  # past this, a case stops after its current round


class EventTimer:
    """Device time between two events recorded around the inner loop (GPU devices).

    `record()` returns an event recorded on the device's stream after all work queued so
    far; an event has synchronize() and elapsed_time(later) in milliseconds, as
    torch.cuda.Event and ember.Event do. The host time from just before the first record
    to the end of the wait is kept as well (`walls`, seconds per sample): a device time
    far below it means work the events did not cover, or a launch-bound loop.
    """

    kind = "events"

    def __init__(self, record: Callable[[], Any]):
        self.record = record
        self.walls: list[float] = []
        self._wall0 = 0.0

    def start(self) -> Any:
        self._wall0 = time.perf_counter()
        return self.record()

    def stop(self, begin: Any) -> float:
        end = self.record()
        end.synchronize()
        self.walls.append(time.perf_counter() - self._wall0)
        return begin.elapsed_time(end) * 1e-3


def cycling_recorder(make_event: Callable[[], Any], count: int = 2) -> Callable[[], Any]:
    """record() over `count` events made once, in turn (torch: no allocation per sample).

    A start and its stop always get different events; torch re-records an event in place.
    """
    events = [make_event() for _ in range(count)]
    state = {"i": 0}

    def record():
        ev = events[state["i"]]
        state["i"] = (state["i"] + 1) % count
        ev.record()  # torch: on the current stream
        return ev

    return record


@dataclass
class Impl:
    """One library's way to run a case: a statement over the names in `env`."""

    lib: str
    stmt: str
    env: dict
    sync: Callable[[], Any] | None = None  # waits for queued device work (GPUs)
    result: str | None = None  # name holding the result (out= variants), else the value
    # None: the host clock around the loop, `sync` inside it (CPU, Metal); else an
    # EventTimer, whose events bracket the loop on the device's stream (CUDA)
    timer: EventTimer | None = None
    # a context manager factory entered around every run (check, calibration, sample),
    # e.g. the float32 matmul precision; it restores the previous setting on exit
    mode: Callable[[], AbstractContextManager] | None = None
    loop: Callable[[int], float] | None = field(default=None, repr=False)

    @property
    def timer_kind(self) -> str:
        return "host" if self.timer is None else self.timer.kind

    def run_once(self) -> Any:
        with self._mode():
            value = eval(self.stmt, self.env)
            if self.sync is not None:
                self.sync()
        return self.env[self.result] if self.result else value

    def timed(self, n: int) -> float:
        """Seconds for n back-to-back runs, device work included."""
        if self.loop is None:
            self.loop = _compile(self)
        with self._mode():  # outside the loop's own clock
            return self.loop(n)

    def _mode(self) -> AbstractContextManager:
        return nullcontext() if self.mode is None else self.mode()


def _compile(impl: Impl) -> Callable[[int], float]:
    if impl.timer is not None:
        env = dict(impl.env, _start=impl.timer.start, _stop=impl.timer.stop)
        src = _EVENT_LOOP.format(stmt=impl.stmt)
    else:
        env = dict(impl.env, _clock=time.perf_counter, _sync=impl.sync)
        src = _LOOP.format(stmt=impl.stmt, sync="_sync()" if impl.sync else "pass")
    exec(compile(src, f"<bench {impl.lib}: {impl.stmt}>", "exec"), env)
    return env["_loop"]


def calibrate(impl: Impl, min_sample: float, fixed: int = 0) -> int:
    """Inner iterations so that one sample lasts at least `min_sample` seconds.

    With `fixed`, the case prescribes the count (10 000 queued calls, then one wait):
    one untimed sample of that many warms up, and the count is kept.
    """
    if fixed:
        impl.timed(fixed)
        return fixed
    # The first call pays one-time costs (allocator growth, kernel compilation): untimed.
    first = impl.timed(1)
    if first >= 20 * min_sample:
        return 1
    n = 1
    while n < MAX_INNER:
        t = impl.timed(n)
        if t >= min_sample:
            break
        grow = 1.3 * min_sample / max(t, 1e-9)
        n = min(MAX_INNER, max(2 * n, math.ceil(n * min(grow, 100.0))))
    return n


@dataclass
class Settings:
    budget: float  # seconds of sampling per case, all libraries together
    min_rounds: int  # turns per library at least, even past the budget
    min_sample: float = 2e-3  # seconds one sample lasts at least
    pause: float = 0.12  # idle seconds before each turn of a case that wakes thread pools
    turn: float = 0.025  # seconds of samples per turn after a pause


def interleave(impls: list[Impl], inner: dict[str, int], settings: Settings, pause: bool) -> dict:
    """Round-robin turns (ember, numpy, torch, ember, ...) until the budget is spent.

    Interleaving spreads slow drifts (clock boost, thermal state, other load) evenly
    over the libraries instead of favouring whichever ran first. With `pause`, each
    turn starts after an idle pause, so the previous library's worker threads, which
    spin for up to ~0.1 s after a call (OpenBLAS, OpenMP), no longer compete for cores.
    """
    samples: dict[str, list[float]] = {i.lib: [] for i in impls}
    gc_was_on = gc.isenabled()
    gc.disable()  # a collection inside one library's sample would be charged to it
    try:
        start = time.perf_counter()
        for rnd in range(1, MAX_ROUNDS + 1):
            for impl in impls:
                _turn(impl, inner[impl.lib], samples[impl.lib], settings, pause)
            spent = time.perf_counter() - start
            # A pathologically slow library must not hold the whole run for minutes.
            if (rnd >= settings.min_rounds or spent >= SLOW_CASE_S) and spent >= settings.budget:
                break
    finally:
        if gc_was_on:
            gc.enable()
    return samples


def _turn(impl: Impl, n: int, out: list[float], settings: Settings, pause: bool) -> None:
    """One sample, or after a pause, samples for `settings.turn` seconds."""
    if not pause:
        out.append(impl.timed(n) / n)
        return
    time.sleep(settings.pause)
    # One untimed call wakes this library's own thread pool and brings its data back into
    # cache after the others' turns; only a long call (which hides both) goes without.
    if not out or out[-1] < WARM_CALL_MAX_S:
        impl.timed(1)
    end = time.perf_counter() + settings.turn
    while True:
        out.append(impl.timed(n) / n)
        if time.perf_counter() >= end:
            return


def summarize(samples: list[float], inner: int) -> dict:
    """Median and spread of per-call times, in microseconds."""
    us = np.asarray(samples) * 1e6
    p10, p25, med, p75, p90 = np.percentile(us, [10, 25, 50, 75, 90])
    return {
        "median_us": float(med),
        "p10_us": float(p10),
        "p25_us": float(p25),
        "p75_us": float(p75),
        "p90_us": float(p90),
        "min_us": float(us.min()),
        "mean_us": float(us.mean()),
        "iqr_pct": float(100.0 * (p75 - p25) / med) if med > 0 else 0.0,
        "samples": int(us.size),
        "inner_iterations": int(inner),
        "samples_us": [float(f"{x:.4g}") for x in us],
    }


def alternate_ms(runs: dict, steps: int, repeats: int) -> dict[str, list[float]]:
    """Milliseconds per call of each of `runs` (name -> (fn, sync)): `repeats` samples of
    `steps` calls each, the names taking turns, each sample synchronised at both ends."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (fn, sync) in runs.items():
            sync()
            start = time.perf_counter()
            for _ in range(steps):
                fn()
            sync()
            times[name].append((time.perf_counter() - start) / steps * 1e3)
    return times
