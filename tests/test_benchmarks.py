"""The benchmark command runs end to end on tiny sizes and writes what it promises.

It never asserts speed: only that the run completes, the ember results agree with
numpy, and the table, JSON and plot (or the note saying why not) are written.
"""

import contextlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from types import SimpleNamespace

import ember
import numpy as np
import pytest

from benchmarks import cases, libs, machine, report
from benchmarks.cases import bf16_round, size_label
from benchmarks.libs import EmberLib
from benchmarks.runner import run_case
from benchmarks.timing import EventTimer, Impl, Settings, cycling_recorder

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


def test_cuda_without_a_gpu_is_a_device_error(tmp_path):
    if ember.cuda_is_available():
        pytest.skip("this machine has a CUDA device")
    cmd = [sys.executable, "-m", "benchmarks", "--device", "cuda", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "no usable cuda device" in proc.stderr


# --- the plan: which cases run where (no device needed) ---------------------------------

CUDA_CASES = [  # (case, size label, dtype, float32 matmul precision, unit)
    ("add", "2^28", "float32", "", "GB/s"),
    ("add out=", "2^28", "float32", "", "GB/s"),
    ("mul", "2^28", "float32", "", "GB/s"),
    ("mul out=", "2^28", "float32", "", "GB/s"),
    ("exp", "2^28", "float32", "", "GB/s"),
    ("exp out=", "2^28", "float32", "", "GB/s"),
    ("sum", "2^28", "float32", "", "GB/s"),
    ("sum dim=-1", "8192x8192", "float32", "", "GB/s"),
    ("softmax", "8192x8192", "float32", "", "GB/s"),
    ("matmul bf16", "4096", "bfloat16", "", "TFLOP/s"),
    ("matmul bf16", "8192", "bfloat16", "", "TFLOP/s"),
    ("matmul f16", "4096", "float16", "", "TFLOP/s"),
    ("matmul f16", "8192", "float16", "", "TFLOP/s"),
    ("matmul f32", "4096", "float32", "highest", "TFLOP/s"),
    ("matmul tf32", "4096", "float32", "high", "TFLOP/s"),
    ("scalar_add", "1", "float32", "", ""),
    ("scalar_add out=", "1", "float32", "", ""),
    ("scalar_add tracked", "1", "float32", "", ""),
    ("to_device h2d", "2^26", "float32", "", "GB/s"),
    ("to_device d2h", "2^26", "float32", "", "GB/s"),
    ("to_device h2d pageable", "2^26", "float32", "", "GB/s"),
    ("to_device d2h pageable", "2^26", "float32", "", "GB/s"),
]


def _rows(specs):
    return [(s.name, s.label, s.dtype, s.precision, s.unit or _unit(s)) for s in specs]


def _unit(spec):  # as cases.build gives it
    if spec.op == "to_device":
        return "GB/s"
    return cases.RECIPES["matmul" if spec.op == "matmul" else spec.name].unit


def test_cuda_plan_is_the_targets():
    specs = cases.plan("cuda", cases.OPS)
    assert _rows(specs) == CUDA_CASES
    assert cases.plan("cuda", cases.OPS, quick=True) == specs  # quick: same cases
    by_name = {(s.name, s.size): s for s in specs}
    assert by_name[("add", 2**28)].shape == (2**28,)
    assert by_name[("softmax", 8192 * 8192)].shape == (8192, 8192)
    assert by_name[("sum dim=-1", 8192 * 8192)].shape == (8192, 8192)
    assert by_name[("matmul bf16", 8192)].shape == (8192, 8192)
    assert by_name[("to_device h2d", 2**26)].size * 4 == 256 * 2**20  # 256 MiB of float32
    assert {s.inner for s in specs if s.op == "scalar_add"} == {10_000}
    assert {s.inner for s in specs if s.op != "scalar_add"} == {0}


def test_cuda_plan_takes_ops_and_sizes():
    specs = cases.plan("cuda", ["to_device", "sum", "matmul"], [16384], [64])
    assert [(s.name, s.label) for s in specs] == [
        ("sum", "16384"),
        ("sum dim=-1", "2x8192"),
        ("matmul bf16", "64"),
        ("matmul f16", "64"),
        ("matmul f32", "64"),
        ("matmul tf32", "64"),
        ("to_device h2d", "16384"),
        ("to_device d2h", "16384"),
        ("to_device h2d pageable", "16384"),
        ("to_device d2h pageable", "16384"),
    ]
    # --sizes with every matmul size too large: no matmul, other cases as asked
    assert [s.name for s in cases.plan("cuda", ["matmul", "exp"], [10**6], [])] == [
        "exp",
        "exp out=",
    ]


def test_cpu_and_metal_plans_unchanged():
    quick = cases.plan("cpu", cases.OPS, quick=True)
    sizes = ["1e3", "1e5", "1e6", "1e7"]
    expected = [
        (name, label) for name in ("add", "add out=", "mul", "exp", "sum") for label in sizes
    ]
    expected += [("softmax", f"{rows}x1000") for rows in (1, 100, 1000, 10000)]
    expected += [("matmul", n) for n in ("64", "256", "512", "1024")]
    expected += [("scalar_add", "1"), ("scalar_add tracked", "1")]
    expected += [("copy cpu->cpu", label) for label in sizes]
    assert [(s.name, s.label) for s in quick] == expected
    assert {s.dtype for s in quick} == {"float32"}
    assert {(s.precision, s.inner, s.unit) for s in quick} == {("", 0, "")}
    assert [s.name for s in quick if s.tracking] == ["scalar_add tracked"]
    full = cases.plan("cpu", cases.OPS)
    assert [s.size for s in full if s.name == "add"] == list(cases.SIZES)
    assert [s.size for s in full if s.name == "matmul"] == list(cases.MATMUL_SIZES)
    # the same call main() made before, with explicit lists
    assert cases.plan("cpu", ["add"], [64], [64]) == [
        cases.Spec("add", "add", 64),
        cases.Spec("add", "add out=", 64),
    ]
    metal = [s.name for s in cases.plan("metal", ["matmul", "to_device"], [1000], [64])]
    assert metal == ["matmul", "matmul f16", "to_device h2d", "to_device d2h"]


def test_size_labels():
    assert [size_label(n) for n in (1, 64, 1000, 4096, 10**7, 2**20, 2**28, 3 * 2**20)] == [
        "1",
        "64",
        "1e3",
        "4096",
        "1e7",
        "2^20",
        "2^28",
        str(3 * 2**20),
    ]


def test_bf16_round_matches_round_to_nearest_even():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-7, -2.5, 1 + 2**-8 + 2**-20], np.float32)
    got = bf16_round(x)
    np.testing.assert_array_equal(got, [1.0, 1.0, 1 + 2**-6, 1 + 2**-7, -2.5, 1 + 2**-7])
    assert got.dtype == np.float32


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


def test_tracked_case_tracks_only_ember_and_only_inside_its_runs():
    spec = next(s for s in cases.plan("cpu", ["scalar_add"]) if s.tracking)
    case = cases.build(
        spec, [EmberLib(ember, ember.device("cpu"), "cpu")], np.random.default_rng(0)
    )
    (impl,) = case.impls
    assert not ember.is_tracking()
    with impl.mode():
        assert ember.is_tracking()
        assert eval(impl.stmt, impl.env).creation_site is not None
    assert not ember.is_tracking()
    plain = next(s for s in cases.plan("cpu", ["scalar_add"]) if not s.tracking)
    (impl,) = cases.build(
        plain, [EmberLib(ember, ember.device("cpu"), "cpu")], np.random.default_rng(0)
    ).impls
    assert impl.mode is None


class StubEventEmber(EmberLib):
    """ember on the CPU dressed as ember on CUDA: stub events, the label cuda:0."""

    def __init__(self):
        super().__init__(ember, ember.device("cpu"), "cuda:0")

    def timer(self):
        return EventTimer(StubDevice().record_event)


def test_cuda_cases_run_end_to_end_on_the_cpu(monkeypatch):
    """Every CUDA case, tiny, through build, check, calibration and sampling with stub
    events: ember (the CPU backend) must agree with numpy on each."""
    state = {"mode": "highest"}
    calls = []

    def set_precision(mode):
        calls.append(mode)
        state["mode"] = mode

    monkeypatch.setattr(ember, "set_float32_matmul_precision", set_precision, raising=False)
    monkeypatch.setattr(ember, "get_float32_matmul_precision", lambda: state["mode"], raising=False)
    peers = [StubEventEmber(), libs.NumpyLib()]
    rng = np.random.default_rng(0)
    settings = Settings(budget=0.0, min_rounds=1, min_sample=1e-4)
    records = []
    for spec in cases.plan("cuda", cases.OPS, [2 * 8192], [64]):
        calls.clear()
        case = cases.build(spec, peers, rng)
        assert case.inner == spec.inner
        record = run_case(case, {lib.name: lib.get for lib in peers}, settings)
        records.append(record)
        where = f"{spec.name} {spec.label}"
        assert (record["unit"] or "") == (spec.unit or _unit(spec)), where
        assert "ember" not in record["errors"], (where, record["errors"])
        assert record["check"]["ember"]["ok"], (where, record["check"])
        res = record["results"]["ember"]
        assert res["timer"] == "events" and res["wall_median_us"] > 0, where
        if spec.inner:
            assert res["inner_iterations"] == spec.inner
        if spec.precision:  # set for every run, restored after each
            assert calls and set(calls) == {spec.precision, "highest"}, (where, calls)
            assert state["mode"] == "highest"
        if spec.dtype == "bfloat16" or spec.op == "to_device":
            assert "numpy" in record["errors"], where  # numpy has neither
        else:
            assert record["check"]["numpy"]["ok"], (where, record["check"])
            assert record["results"]["numpy"]["timer"] == "host"
        if record["unit"] == "TFLOP/s":
            expected = 2 * 64**3 / (res["median_us"] * 1e-6) / 1e12
            assert res["throughput"] == pytest.approx(expected)
            assert "flops" in record["work"]
    assert [(r["case"], r["label"]) for r in records][:2] == [
        ("add", "16384"),
        ("add out=", "16384"),
    ]
    text = report.table(records, ["heading"])
    assert "device cuda:0: times from events: ember; host: numpy" in text
    assert "TFLOP/s" in text


def test_gpu_facts_in_machine_description():
    info = {
        "gpu": "NVIDIA H200",
        "compute_capability": "9.0",
        "driver": "13.0",
        "runtime": "13.0",
        "cublas": "13.1.0",
    }
    ember_info = {"devices": {"cpu": {"info": {"threads": "2"}}, "cuda:0": {"info": info}}}
    cuda = SimpleNamespace(
        is_available=lambda: True,
        get_device_name=lambda i: "NVIDIA H200",
        get_device_capability=lambda i: (9, 0),
    )
    torch = SimpleNamespace(__version__="2.11.0", version=SimpleNamespace(cuda="13.0"), cuda=cuda)
    gpus = machine._gpus(ember_info, torch)
    assert list(gpus) == ["cuda:0"]
    assert {k: gpus["cuda:0"][k] for k in machine.GPU_KEYS} == info
    assert gpus["cuda:0"]["torch"] == {
        "version": "2.11.0",
        "cuda": "13.0",
        "gpu": "NVIDIA H200",
        "capability": "9.0",
    }
    (line,) = machine.gpu_lines({"gpus": gpus})
    for word in ("cuda:0", "NVIDIA H200", "9.0", "driver 13.0", "runtime 13.0", "cuBLAS 13.1.0"):
        assert word in line, word
    assert "torch 2.11.0 (CUDA 13.0) on NVIDIA H200" in line
    assert machine.gpu_lines({"gpus": {}}) == []
    failed = machine._gpus({"devices": {"cuda:0": {"info": "RuntimeError: no"}}}, None)
    assert "info() failed" in machine.gpu_lines({"gpus": failed})[0]


def test_the_metal_memory_loop_reports_rss_and_says_flat():
    # A short run of benchmarks.metal_memory (its default: 5000 ops of 1e6 elements)
    cmd = [sys.executable, "-m", "benchmarks.metal_memory", "--ops", "300", "--numel", "4096"]
    cmd += ["--every", "100", "--warmup", "100"]
    env = {**os.environ, "EMBER_METAL_EMULATOR": "1"}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "300 ops of c = a + 1 on 4096 float32 elements, no synchronize()"
    assert [line.split()[0] for line in lines[2:5]] == ["100", "200", "300"]
    assert lines[-1].startswith("growth after op 100: at most ") and lines[-1].endswith(": flat")


def test_launch_cost_reports_the_cpu_rows(capsys, monkeypatch):
    from benchmarks import launch_cost

    monkeypatch.setattr(ember, "cuda_is_available", lambda: False)
    calls = []
    real = launch_cost.per_call_us
    monkeypatch.setattr(
        launch_cost, "per_call_us", lambda fn, sync=None: calls.append(fn) or real(fn, sync, 10, 1)
    )
    assert launch_cost.main() == 0
    out = capsys.readouterr().out
    assert "no usable CUDA GPU" in out
    for row in ("ember cpu a + b", "ember cpu add(out=)", "ember cpu empty(1)"):
        assert row in out
    assert "ember cpu a + b tracked" in out
    assert len(calls) == 4
    assert not ember.is_tracking()  # restored after the tracked row


def test_median_interval_is_the_binomial_order_statistics():
    from math import comb

    from benchmarks.tracking_cost import median_interval

    def below(n, j):  # P(Binomial(n, 1/2) <= j)
        return sum(comb(n, i) for i in range(j + 1)) / 2**n

    for n in range(6, 41):
        lo, hi = median_interval([float(i) for i in range(n)])
        j = int(lo)
        assert hi == n - 1 - j
        assert 1 - 2 * below(n, j) >= 0.95  # the interval covers the median at 95%
        assert 1 - 2 * below(n, j + 1) < 0.95  # and is the narrowest such
    assert median_interval([float(i) for i in range(20)]) == (5.0, 14.0)  # a table value


def test_tracking_cost_refuses_a_baseline_with_tracking_compiled_in():
    # The installed ember is no baseline: the A/B must say so, not compare a build to itself.
    site_dir = os.path.dirname(os.path.dirname(ember.__file__))
    cmd = [sys.executable, "-m", "benchmarks.tracking_cost", "--baseline", site_dir]
    cmd += ["--rounds", "6", "--calls", "10", "--samples", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "the baseline" in proc.stderr and "has tracking compiled in" in proc.stderr
    assert "-DEMBER_TRACKING=OFF" in proc.stderr


def test_tracking_cost_rounds_balance_the_order_and_compare_each_pair(monkeypatch, capsys):
    # Fake children: the baseline is 10% faster, the control as fast as this ember, and a
    # side's time grows with its position in the round (drift), which balancing cancels.
    import benchmarks.tracking_cost as tc

    speed = {"this": 1.0, "baseline": 0.9, "control": 1.0}
    firsts, position = [], {"n": 0}

    def fake_child(side, calls, samples):
        if position["n"] % 3 == 0:
            firsts.append(side[0])
        drift = 1 + 0.1 * (position["n"] % 3)  # a fixed order would skew each ratio by 10%
        position["n"] += 1
        return {"rows": {"ember cpu a + b": speed[side[0]] * drift, "numpy a + b": drift}}

    monkeypatch.setattr(tc, "_run_child", fake_child)
    tc.time_rounds(tc._sides("/base", "/ctrl"), rounds=12, calls=1, samples=1)
    assert sorted(firsts) == sorted(["this", "baseline", "control"] * 4)
    row = next(
        line for line in capsys.readouterr().out.splitlines() if line.startswith("ember cpu")
    )
    ratios = [float(r) for r in re.findall(r"(\d+\.\d+) \[", row)]
    assert len(ratios) == 3
    assert ratios[0] == pytest.approx(1 / 0.9, rel=0.02)  # this/baseline
    assert ratios[1] == pytest.approx(1 / 0.9, rel=0.02)  # control/baseline
    assert ratios[2] == pytest.approx(1.0, abs=0.02)  # this/control


def test_tracking_cost_child_times_the_one_element_add():
    from benchmarks.tracking_cost import child

    got = child(calls=10, samples=1)
    assert got["tracking_compiled"] is True and got["tracking_on"] is False
    for row in ("numpy a + b", "ember cpu a + b", "numpy add(out=)", "ember cpu add(out=)"):
        assert got["rows"][row] > 0


def test_load_file_benchmark_prints_both_cases(capsys):
    from benchmarks import load_file

    assert load_file.main(["--gib", "0.001", "--tensors", "4", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "device cpu" in out
    for case in ("load ", "load + read"):
        assert any(line.startswith(case) and " ember " in line for line in out.splitlines()), out


def test_matrix_prints_every_row_with_its_ratio(capsys):
    from benchmarks.__main__ import main
    from benchmarks.matrix import rows

    status = main(["--matrix", "--device", "cpu", "--quick", "--sizes", "64", "--budget", "0"])
    out = capsys.readouterr().out
    assert status == 0, out  # no ember result differs from PyTorch's or numpy's
    assert "copy bandwidth" in out and "threads: ember" in out
    names = [r.name for r in rows(64)]
    lines = [line for line in out.splitlines() if line.split("  ")[0] in names]
    assert len(lines) == len(names) and all(line.startswith(n) for line, n in zip(lines, names))
    assert not any("missing" in line for line in lines)  # every row has an ember form
    assert "ember missing: none" in out


def test_transformer_block_matches_torch_and_reports(capsys, device):
    # a small block on every device: ember's output against torch's (where torch runs
    # there), one line per library, torch's time over ember's on ember's line
    torch = pytest.importorskip("torch")
    from benchmarks import transformer_block

    args = ["--device", device.kind, "--batch", "2", "--seq", "16", "--width", "32",
            "--heads", "4", "--steps", "1", "--repeats", "1"]  # fmt: skip
    assert transformer_block.main(args) == 0
    out = capsys.readouterr().out
    assert "transformer block forward" in out and "MISMATCH" not in out
    ember_line = next(line for line in out.splitlines() if line.startswith("ember"))
    has_torch = device.kind == "cpu" or (device.kind == "cuda" and torch.cuda.is_available())
    assert ember_line.rstrip().endswith("x") == has_torch


def test_transformer_block_layer_norm_is_pytorchs(rng):
    torch = pytest.importorskip("torch")
    from benchmarks import transformer_block

    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    w, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    got = transformer_block.layer_norm(ember, ember.tensor(x), ember.tensor(w), ember.tensor(b))
    want = torch.nn.functional.layer_norm(torch.tensor(x), (8,), torch.tensor(w), torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
