"""ember's types: the stubs are what tools/stubgen.py makes from the built module, mypy's
stubtest finds them consistent with the runtime, and the typed sample
(examples/06_typed_usage.py) passes mypy --strict and pyright --strict with every value
typed as ember's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "06_typed_usage.py"

# reveal_type lines of the sample, in order: (mypy's spelling, pyright's)
REVEALED = [
    ("ember._core.Tensor", "Tensor"),
    ("ember._core.Device", "Device"),
    ("ember._core.DType", "DType"),
    ("ember._size.Size", "Size"),
    ("int", "int"),
    ("tuple[ember._core.Tensor, ember._core.Tensor, fallback=ember.return_types.max]", "max"),
    ("ember._core.Tensor", "Tensor"),
    ("tuple[ember._core.Tensor, ember._core.Tensor, fallback=ember.return_types.topk]", "topk"),
    ("tuple[ember._core.Tensor, ember._core.Tensor, fallback=ember.return_types.sort]", "sort"),
    ("ember._core.Tensor", "Tensor"),
    ("tuple[ember._core.Tensor, ember._core.Tensor, fallback=ember.return_types.max]", "max"),
    ("tuple[int, ...]", "tuple[int, ...]"),
    ("int | float", "bool | int | float"),
    ("tuple[ember._core.Tensor, ...]", "tuple[Tensor, ...]"),
    ("ember._core.Tensor", "Tensor"),
    ("ember._core.Tensor", "Tensor"),
    ("ember._core.Tensor", "Tensor"),
    ("ember._core.Tensor", "Tensor"),
    ("tuple[ember._core.Tensor | None, ...]", "tuple[Tensor | None, ...]"),
    (
        "def (filename: str | os.PathLike[str], device: ember._core.Device | str | None =)"
        " -> dict[str, ember._core.Tensor]",
        "(filename: str | PathLike[str], device: Device | str | None = None) -> dict[str, Tensor]",
    ),
]


def checker_env() -> dict[str, str]:
    """The environment for a checker that does not import ember: without a sanitizer's
    preload (the CI's sanitized run sets one for the module under test)."""
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env.pop(key, None)
    return env


def run(args: list[str], env: dict[str, str] | None = None, timeout: int = 600):
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_stubs_are_generated_from_the_module():
    r = run([sys.executable, str(ROOT / "tools" / "stubgen.py"), "--check"])
    assert r.returncode == 0, r.stdout + r.stderr


def test_stubtest_finds_the_stubs_consistent_with_the_runtime(tmp_path):
    pytest.importorskip("mypy")
    r = run(
        [sys.executable, "-m", "mypy.stubtest", "ember", "--mypy-config-file", os.devnull,
         "--allowlist", str(ROOT / "tools" / "stubtest-allowlist.txt")],
        env={**os.environ, "MYPY_CACHE_DIR": str(tmp_path)},
    )
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_sample_passes_mypy_strict_with_embers_types(tmp_path):
    pytest.importorskip("mypy")
    r = run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path),
         "--config-file", os.devnull, str(SAMPLE)],
        env=checker_env(),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found in 1 source file" in r.stdout
    revealed = re.findall(r'note: Revealed type is "(.*)"', r.stdout)
    assert revealed == [m for m, _ in REVEALED]


def test_sample_passes_pyright_strict_with_embers_types():
    pytest.importorskip("pyright")
    r = run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, str(SAMPLE)],
        env={**checker_env(), "PYRIGHT_PYTHON_IGNORE_WARNINGS": "1"},
    )
    assert "0 errors, 0 warnings" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    revealed = re.findall(r'information: Type of ".*" is "(.*)"', r.stdout)
    assert revealed == [p for _, p in REVEALED]
    # strict mode is on (the sample's comment): pyright reports no unknowns there
    assert "# pyright: strict" in SAMPLE.read_text()


def test_the_sample_runs():
    env = dict(os.environ)
    r = run([sys.executable, str(SAMPLE)], env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "['t'] {'kind': 'example'} True" in r.stdout
