"""The benchmark command runs end to end on tiny sizes and writes what it promises.

It never asserts speed: only that the run completes, the ember results agree with
numpy, and the table, JSON and plot (or the note saying why not) are written.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

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
