"""What the figures were measured on: hardware, OS, library versions and their BLAS."""

from __future__ import annotations

import contextlib
import io
import os
import platform
import re
import subprocess
import sys
from typing import Any

import numpy as np

# Variables that change how fast the libraries run; recorded as found, never changed.
ENV_PREFIXES = ("OPENBLAS_", "OMP_", "MKL_", "GOTO", "VECLIB_", "BLIS_", "EMBER_", "KMP_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "PYTORCH_ENABLE_MPS_FALLBACK")


# what ember's CUDA Device.info() reports about the GPU and its software
GPU_KEYS = ("gpu", "compute_capability", "driver", "runtime", "cublas")


def describe(ember: Any, devices: dict, torch: Any) -> dict:
    ember_info = _ember(ember, devices)
    return {
        "cpu": _cpu(),
        "memory_bytes": _memory(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "environment": _env(),
        "numpy": _numpy(),
        "threadpools": _threadpools(),
        "torch": _torch(torch),
        "ember": ember_info,
        "gpus": _gpus(ember_info, torch),
    }


def _cpu() -> dict:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "model": _cpu_model(),
        "machine": platform.machine(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "physical_cores": _physical_cores(),
    }


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _sysctl(name: str) -> str:
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Hardware", "Processor", "cpu model"):
            return value.strip()
    if sys.platform == "darwin":
        return _sysctl("machdep.cpu.brand_string")
    return platform.processor()


def _physical_cores():
    pairs, phys = set(), "0"
    for line in _read("/proc/cpuinfo").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "physical id":
            phys = value.strip()
        elif key.strip() == "core id":
            pairs.add((phys, value.strip()))
    if pairs:
        return len(pairs)
    value = _sysctl("hw.physicalcpu") if sys.platform == "darwin" else ""
    return int(value) if value.isdigit() else None


def _memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        value = _sysctl("hw.memsize")
        return int(value) if value.isdigit() else None


def _env() -> dict:
    return {
        k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES) or k in ENV_NAMES
    }


def _numpy() -> dict:
    info: dict[str, Any] = {"version": np.__version__}
    try:
        config = np.show_config(mode="dicts")
        info["blas"] = config.get("Build Dependencies", {}).get("blas")
        info["simd"] = config.get("SIMD Extensions")
    except TypeError:  # numpy < 1.26 only prints its config
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            np.show_config()
        info["config"] = buf.getvalue()
    return info


def _threadpools():
    """Every BLAS / OpenMP pool loaded in this process (numpy's, torch's, ember's)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    keys = ("user_api", "internal_api", "prefix", "version", "num_threads", "architecture")
    return [
        {k: pool.get(k) for k in keys} | {"path": pool.get("filepath")}
        for pool in threadpool_info()
    ]


def _torch(torch: Any):
    if torch is None:
        return None
    info = {"version": torch.__version__, "threads": torch.get_num_threads()}
    # the build settings line is long; keep only which BLAS / LAPACK it names
    found = re.findall(r"\b(BLAS_INFO|LAPACK_INFO)=([^,\s]+)", torch.__config__.show())
    info.update({k.lower(): v for k, v in found})
    if torch.cuda.is_available():
        info["cuda"] = torch.version.cuda
        info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return info


def _ember(ember: Any, devices: dict) -> dict:
    info = {
        "version": getattr(ember, "__version__", None),
        "path": os.path.dirname(getattr(ember, "__file__", "") or ""),
        "backends": _call(ember, "compiled_backends"),
        "devices": {},
    }
    for label, libs in devices.items():
        dev = libs[0].dev
        info["devices"][label] = {
            "repr": repr(dev),
            "name": getattr(dev, "name", None),
            "location": getattr(dev, "location", None),
            "info": _call(dev, "info"),
        }
    return info


def _gpus(ember_info: dict, torch: Any) -> dict:
    """Per CUDA device: the GPU, driver, runtime and cuBLAS as ember reports them, and
    what torch says of the same GPU (its version, the CUDA it was built with)."""
    out = {}
    for label, dev in ember_info["devices"].items():
        if not label.startswith("cuda"):
            continue
        info = dev["info"]
        entry: dict[str, Any] = {k: info.get(k) for k in GPU_KEYS} if isinstance(info, dict) else {}
        if not isinstance(info, dict):
            entry["info"] = info  # why Device.info() gave nothing usable
        entry["torch"] = _torch_gpu(torch, int(label.partition(":")[2] or 0))
        out[label] = entry
    return out


def _torch_gpu(torch: Any, index: int):
    if torch is None:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        return {
            "version": torch.__version__,
            "cuda": torch.version.cuda,
            "gpu": torch.cuda.get_device_name(index),
            "capability": ".".join(map(str, torch.cuda.get_device_capability(index))),
        }
    except Exception as exc:  # the report must not fail on it
        return f"{type(exc).__name__}: {exc}"


def gpu_lines(machine: dict) -> list[str]:
    """A heading line per CUDA device: GPU, CUDA versions, and torch's view of it."""
    lines = []
    for label, g in (machine.get("gpus") or {}).items():
        if "info" in g:
            text = f"{label}: ember info() failed: {g['info']}"
        else:
            cc = (
                f" (compute capability {g['compute_capability']})"
                if g["compute_capability"]
                else ""
            )
            text = (
                f"{label}: {g['gpu'] or 'unknown GPU'}{cc}, driver {g['driver']}, "
                f"CUDA runtime {g['runtime']}, cuBLAS {g['cublas']}"
            )
        t = g.get("torch")
        if isinstance(t, dict):
            text += f"; torch {t['version']} (CUDA {t['cuda']}) on {t['gpu']}"
        elif t:
            text += f"; torch: {t}"
        lines.append(text)
    return lines


def _call(obj: Any, name: str):
    """obj.name() if it exists and works, else why not (the report must not fail on it)."""
    fn = getattr(obj, name, None)
    if fn is None:
        return None
    try:
        return fn()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def summary_line(machine: dict) -> str:
    """One line for the table's heading."""
    cpu = machine["cpu"]
    mem = machine["memory_bytes"]
    mem_txt = f", {mem / 2**30:.0f} GiB" if mem else ""
    return (
        f"{cpu['model'] or cpu['machine']} ({cpu['usable_cores'] or cpu['logical_cores']} cores"
        f"{mem_txt}), {platform.system()}, Python {machine['python']}, numpy "
        f"{machine['numpy']['version']}"
        + (f", torch {machine['torch']['version']}" if machine["torch"] else "")
    )


def busy_note() -> list[str]:
    """A warning when other work was already running: the figures will be noisy."""
    if not hasattr(os, "getloadavg"):
        return []
    load = os.getloadavg()[0]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if not cores or load < 0.5 * cores:
        return []
    return [f"machine busy at start (load average {load:.1f} on {cores} cores): noisy figures"]
