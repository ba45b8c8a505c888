"""The libraries compared, each bound to one device.

A Lib knows how to place a numpy array on its device, read a result back, wait for
queued work, and which functions the timed statements call (`add`, `exp`, `softmax`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Lib:
    name = ""
    sync = None  # waits for the device's queued work; None where calls are synchronous

    def __init__(self, device: str, ns: dict):
        self.device = device  # label shared by every library on this device: "cpu", "cuda:0"
        self.ns = ns  # names the statements use; `dev` and `host` are the device objects

    def put(self, x: np.ndarray) -> Any:
        raise NotImplementedError

    def put_host(self, x: np.ndarray) -> Any:
        raise NotImplementedError

    def get(self, value: Any) -> np.ndarray:
        raise NotImplementedError

    def copy_stmt(self) -> str:
        return "a.clone()"

    def move_stmt(self, dst: str) -> str:
        raise NotImplementedError


class EmberLib(Lib):
    name = "ember"

    def __init__(self, ember: Any, dev: Any, label: str):
        ns = {"add": ember.add, "exp": ember.exp, "softmax": ember.softmax}
        super().__init__(label, dict(ns, dev=dev, host=ember.device("cpu")))
        self.ember, self.dev = ember, dev
        if dev.kind != "cpu":
            self.sync = dev.synchronize

    def put(self, x):
        return self.ember.tensor(x, device=self.dev)

    def put_host(self, x):
        return self.ember.tensor(x)

    def get(self, value):
        return np.asarray(value.numpy())

    def move_stmt(self, dst):
        return f"a.to_device({dst})"


def _np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # numpy has no softmax; this is the usual numerically stable form.
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


class NumpyLib(Lib):
    name = "numpy"

    def __init__(self):
        super().__init__("cpu", {"add": np.add, "exp": np.exp, "softmax": _np_softmax})

    def put(self, x):
        return x.copy()  # its own buffer, so no library finds another's data in cache

    put_host = put

    def get(self, value):
        return np.asarray(value)

    def copy_stmt(self):
        return "a.copy()"


class TorchLib(Lib):
    name = "torch"

    def __init__(self, torch: Any, kind: str, label: str):
        dev, host = torch.device(kind), torch.device("cpu")
        ns = {"add": torch.add, "exp": torch.exp, "softmax": torch.softmax}
        super().__init__(label, dict(ns, dev=dev, host=host))
        self.torch, self.dev = torch, dev
        if kind == "cuda":
            self.sync = torch.cuda.synchronize
        elif kind == "mps":
            self.sync = torch.mps.synchronize

    def put(self, x):
        return self.put_host(x).to(self.dev)

    def put_host(self, x):
        return self.torch.from_numpy(np.array(x, copy=True))

    def get(self, value):
        return value.detach().cpu().numpy()

    def move_stmt(self, dst):
        return f"a.to({dst})"


def import_torch() -> tuple[Any, str]:
    """(torch or None, why not)."""
    try:
        import torch
    except Exception as exc:  # a broken install can raise more than ImportError
        return None, f"torch not importable ({type(exc).__name__}: {exc})"
    return torch, ""


def _torch_kind(torch: Any, kind: str) -> str:
    """torch's name for the same hardware, or "" when this torch cannot use it."""
    if kind == "cpu":
        return "cpu"
    if kind == "cuda" and torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if kind == "metal" and mps is not None and mps.is_available():
        return "mps"
    return ""


def available_kinds(ember: Any) -> list[str]:
    kinds = ["cpu"]
    if ember.metal_is_available():
        kinds.append("metal")
    if ember.cuda_is_available():
        kinds.append("cuda")
    return kinds


def discover(ember: Any, kinds: list[str], torch: Any) -> tuple[dict[str, list[Lib]], list[str]]:
    """Libraries per device label, in the order they take turns, plus notes on peers."""
    devices, notes = {}, []
    for kind in kinds:
        dev = ember.device("cpu" if kind == "cpu" else f"{kind}:0")
        label = "cpu" if kind == "cpu" else f"{kind}:0"
        libs: list[Lib] = [EmberLib(ember, dev, label)]
        if kind == "cpu":
            libs.append(NumpyLib())
        tkind = _torch_kind(torch, kind) if torch is not None else ""
        if tkind:
            libs.append(TorchLib(torch, tkind, label))
        elif torch is not None:
            notes.append(f"torch {torch.__version__} cannot use {kind}: no torch peer there")
        devices[label] = libs
    return devices, notes
