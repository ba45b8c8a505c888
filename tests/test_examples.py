"""The examples of candle's three failures run and print ember's errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ember
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

pytestmark = pytest.mark.skipif(
    "metal" not in ember.compiled_backends(), reason="Metal backend not built"
)


def run_example(name: str) -> str:
    env = dict(os.environ)
    env.pop("EMBER_METAL_EMULATOR", None)  # the examples switch the emulator on themselves
    r = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_cpu_and_metal_tensor():
    out = run_example("01_cpu_and_metal_tensor.py")
    assert "--- the mistake: DeviceMismatchError" in out
    assert "in load_weights)" in out and "cpu:0 (Device id=0" in out
    assert "to_device" in out
    assert "fixed: [6.0, 6.0, 6.0, 6.0]" in out


def test_two_metal_instances():
    out = run_example("02_two_metal_instances.py")
    assert "--- mixing two instances: DeviceMismatchError" in out
    assert "in load_model)" in out and "in make_batch)" in out
    assert "two Device instances of the same GPU" in out
    assert "--- moving between instances: MoveNotImplementedError" in out
    assert 'to_device(ember.device("cpu"))' in out
    assert "via cpu: [1.0, 2.0, 3.0]" in out
    assert "shared device: [1.0, 2.0, 3.0]" in out


def test_gpu_that_is_not_there():
    out = run_example("03_gpu_that_is_not_there.py")
    assert "metal_is_available(): True" in out
    assert "metal_device_count(): 1" in out
    assert "--- Device.metal(1): DeviceNotFoundError" in out
    assert "no metal device with ordinal 1: this machine has 1 metal device" in out
    assert "--- Device.metal(-1): DeviceNotFoundError" in out
    assert "using Device(metal:0" in out


def test_the_readme_example_reaches_its_device_mismatch():
    """The README's first example runs as written on a build without CUDA (Metal on its
    emulator) and ends in the error it shows."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    env = dict(os.environ, EMBER_METAL_EMULATOR="1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0
    want = "cuda:0" if ember.cuda_is_available() else "metal:0"
    assert f"DeviceMismatchError: device mismatch in add: lhs is on {want}" in r.stderr, r.stderr
    assert "rhs is on cpu:0" in r.stderr
    assert "[[0.5 0.5]" in r.stdout
