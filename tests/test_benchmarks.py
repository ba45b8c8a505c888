"""The benchmark command runs end to end on tiny sizes and writes what it promises.

It never asserts speed: only that the run completes, the ember results agree with
numpy, and the table, JSON and plot (or the note saying why not) are written.
"""

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

from benchmarks.timing import EventTimer, Impl, cycling_recorder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    cmd = [
        sys.executable,
        "-m",
        "benchmarks",
        "--quick",
        "--sizes",
        "64",
        "--ops",
        "add,sum,matmul",
        "--no-torch",
        "--budget",
        "0.05",
        "--out",
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    return proc, out


def test_exits_zero(run):
    proc, _ = run
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_table_printed_and_written(run):
    proc, out = run
    assert "ember µs" in proc.stdout and "vs numpy" in proc.stdout
    assert "> 1.0 means ember is faster" in proc.stdout
    table = (out / "results.txt").read_text(encoding="utf-8")
    for case in ("add", "add out=", "sum", "matmul"):
        assert any(line.startswith(case + " ") for line in table.splitlines()), case


def test_json_has_cases_and_machine(run):
    _, out = run
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {"created", "settings", "convention", "machine", "cases"} <= set(data)
    machine = data["machine"]
    for key in ("cpu", "memory_bytes", "os", "python", "numpy", "ember", "environment"):
        assert key in machine, key
    cpu_cases = [c for c in data["cases"] if c["device"] == "cpu"]
    assert {c["case"] for c in cpu_cases} == {"add", "add out=", "sum", "matmul"}
    for case in data["cases"]:
        assert case["check"]["ember"]["ok"], case
        assert case["results"]["ember"]["median_us"] > 0
        assert case["results"]["ember"]["samples"] >= 1
        assert "torch" not in case["results"]
    for case in cpu_cases:
        assert case["ratio"]["numpy"] > 0
        assert case["results"]["numpy"]["throughput"] > 0


def test_plot_or_note(run):
    proc, out = run
    if HAS_MATPLOTLIB:
        png = (out / "throughput.png").read_bytes()
        assert png.startswith(b"\x89PNG")
    else:
        assert "plot skipped: matplotlib is not installed" in proc.stdout
        assert not (out / "throughput.png").exists()


def test_bad_op_is_a_usage_error():
    cmd = [sys.executable, "-m", "benchmarks", "--ops", "nope"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown ops" in proc.stderr


# --- device timing with events, tested on the CPU with an ember-like stub --------------


class StubEvent:
    """ember.Event on the CPU: a host timestamp taken when recorded."""

    def __init__(self, device):
        self.device, self.t = device, time.perf_counter()
        self.waited = False

    def synchronize(self):
        self.waited = True

    def query(self):
        return True

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3  # milliseconds, as ember and torch give them


class StubDevice:
    """The part of a GPU ember.Device the benchmarks use, with host-timestamp events."""

    kind = "cuda"

    def __init__(self):
        self.events = []
        self.syncs = 0

    def record_event(self):
        ev = StubEvent(self)
        self.events.append(ev)
        return ev

    def synchronize(self):
        self.syncs += 1


def test_event_timer_brackets_the_inner_loop():
    dev = StubDevice()
    impl = Impl("ember", "sleep(0.002)", {"sleep": time.sleep}, dev.synchronize)
    impl.timer = EventTimer(dev.record_event)
    assert impl.timer_kind == "events"
    seconds = impl.timed(3)
    assert 0.006 <= seconds < 1.0
    assert len(dev.events) == 2  # one before the loop, one after it
    start, end = dev.events
    assert end.waited and not start.waited
    assert seconds == pytest.approx(start.elapsed_time(end) * 1e-3)
    assert dev.syncs == 0  # the end event's wait replaces the device-wide sync
    assert len(impl.timer.walls) == 1 and impl.timer.walls[0] >= seconds
    impl.timed(1)
    assert len(dev.events) == 4


def test_cycling_recorder_reuses_two_events():
    made = []

    class TorchLikeEvent:  # torch.cuda.Event(enable_timing=True): record() re-records
        def __init__(self):
            made.append(self)
            self.t = None

        def record(self):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return (end.t - self.t) * 1e3

    timer = EventTimer(cycling_recorder(TorchLikeEvent))
    for _ in range(3):
        begin = timer.start()
        time.sleep(0.001)
        assert timer.stop(begin) >= 0.001
    assert len(made) == 2


def test_precision_mode_is_set_around_each_run_and_restored():
    state = {"mode": "highest"}
    seen = []

    @contextlib.contextmanager
    def mode():
        before = state["mode"]
        state["mode"] = "high"
        try:
            yield
        finally:
            state["mode"] = before

    impl = Impl("ember", "look()", {"look": lambda: seen.append(state["mode"]) or 1}, mode=mode)
    assert impl.run_once() == 1
    impl.timed(2)
    assert seen == ["high"] * 3 and state["mode"] == "highest"
