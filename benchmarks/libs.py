"""The libraries compared, each bound to one device.

A Lib knows how to place a numpy array on its device, read a result back, wait for
queued work, which functions the timed statements call (`add`, `exp`, `softmax`), how
its device is timed (events on CUDA, else the host clock) and how it sets the float32
matmul precision.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from .timing import EventTimer, cycling_recorder


@contextlib.contextmanager
def setting(set_value, before, value):
    """`value` set while inside, `before` restored on the way out."""
    set_value(value)
    try:
        yield
    finally:
        set_value(before)


# Device kinds whose samples are timed by events on the device's stream; elsewhere the
# host clock around the loop, which waits for the device at its end (Metal's events are
# host timestamps after a queue wait, the same measurement).
EVENT_KINDS = ("cuda",)


class Lib:
    name = ""
    sync = None  # waits for the device's queued work; None where calls are synchronous

    def __init__(self, device: str, ns: dict):
        self.device = device  # label shared by every library on this device: "cpu", "cuda:0"
        self.ns = ns  # names the statements use; `dev` and `host` are the device objects

    def put(self, x: np.ndarray, dtype: str | None = None) -> Any:
        """x on the device; with `dtype` ("bfloat16"), converted to it there."""
        raise NotImplementedError

    def put_host(self, x: np.ndarray) -> Any:
        raise NotImplementedError

    def get(self, value: Any) -> np.ndarray:
        raise NotImplementedError

    def copy_stmt(self) -> str:
        return "a.clone()"

    def move_stmt(self, dst: str) -> str:
        raise NotImplementedError

    def move(
        self, to_device: bool, x: np.ndarray, pinned: bool = False
    ) -> tuple[str, dict, str | None]:
        """(statement, its inputs, the name holding the result or None) of a move of x;
        `pinned`: from or into page-locked host memory (CUDA)."""
        if to_device:
            return self.move_stmt("dev"), {"a": self.put_host(x)}, None
        return self.move_stmt("host"), {"a": self.put(x)}, None

    def timer(self) -> EventTimer | None:
        """A new timer for one Impl: None for the host clock."""
        return None

    def precision(self, mode: str) -> contextlib.AbstractContextManager:
        """Float32 matmul precision `mode` ("highest", "high") while inside, then restored."""
        return contextlib.nullcontext()

    def tracking(self) -> contextlib.AbstractContextManager:
        """ember's tensor provenance on while inside (other libraries have none)."""
        return contextlib.nullcontext()


class EmberLib(Lib):
    name = "ember"

    def __init__(self, ember: Any, dev: Any, label: str):
        ns = {"add": ember.add, "mul": ember.mul, "exp": ember.exp, "softmax": ember.softmax}
        super().__init__(label, dict(ns, dev=dev, host=ember.device("cpu")))
        self.ember, self.dev = ember, dev
        if dev.kind != "cpu":
            self.sync = dev.synchronize

    def put(self, x, dtype=None):
        t = self.ember.tensor(x, device=self.dev)
        return t if dtype is None else t.to_dtype(getattr(self.ember, dtype))

    def put_host(self, x):
        return self.ember.tensor(x)

    def get(self, value):
        if value.dtype == self.ember.bfloat16:  # numpy has no bfloat16
            value = value.to_dtype(self.ember.float32)
        return np.asarray(value.numpy())

    def has_events(self) -> bool:
        return self.dev.kind in EVENT_KINDS and hasattr(self.dev, "record_event")

    def timer(self):
        # dev.record_event(): an ember.Event after all work queued on the device's stream
        return EventTimer(self.dev.record_event) if self.has_events() else None

    def precision(self, mode):
        ember = self.ember
        get = getattr(ember, "get_float32_matmul_precision", None)
        before = get() if get is not None else "highest"  # ember's default, as torch's
        return setting(ember.set_float32_matmul_precision, before, mode)

    def tracking(self):
        return setting(self.ember.set_tracking, self.ember.is_tracking(), True)

    def move_stmt(self, dst):
        return f"a.to_device({dst})"

    def move(self, to_device, x, pinned=False):
        if not pinned or self.dev.kind != "cuda":  # pinned memory is CUDA's
            return super().move(to_device, x)
        if to_device:
            return "a.to_device(dev)", {"a": self.put_host(x).pin_memory()}, None
        pinned_host = self.ember.empty(*x.shape).pin_memory()
        return "c.copy_(a)", {"a": self.put(x), "c": pinned_host}, "c"


def _np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    # numpy has no softmax; this is the usual numerically stable form.
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


class NumpyLib(Lib):
    name = "numpy"

    def __init__(self):
        ns = {"add": np.add, "mul": np.multiply, "exp": np.exp, "softmax": _np_softmax}
        super().__init__("cpu", ns)

    def put(self, x, dtype=None):
        if dtype is not None:
            raise TypeError(f"numpy has no {dtype}")
        return x.copy()  # its own buffer, so no library finds another's data in cache

    def put_host(self, x):
        return x.copy()

    def get(self, value):
        return np.asarray(value)

    def copy_stmt(self):
        return "a.copy()"


class TorchLib(Lib):
    name = "torch"

    def __init__(self, torch: Any, kind: str, label: str):
        dev, host = torch.device(kind), torch.device("cpu")
        ns = {"add": torch.add, "mul": torch.mul, "exp": torch.exp, "softmax": torch.softmax}
        super().__init__(label, dict(ns, dev=dev, host=host))
        self.torch, self.dev, self.kind = torch, dev, kind
        if kind == "cuda":
            self.sync = torch.cuda.synchronize
        elif kind == "mps":
            self.sync = torch.mps.synchronize

    def put(self, x, dtype=None):
        t = self.put_host(x).to(self.dev)
        return t if dtype is None else t.to(getattr(self.torch, dtype))

    def put_host(self, x):
        return self.torch.from_numpy(np.array(x, copy=True))

    def get(self, value):
        value = value.detach()
        if value.dtype == self.torch.bfloat16:  # numpy has no bfloat16
            value = value.float()
        return value.cpu().numpy()

    def move_stmt(self, dst):
        return f"a.to({dst})"

    def move(self, to_device, x, pinned=False):
        if not pinned:
            return super().move(to_device, x)
        # CUDA: the fast path every torch user takes, from and into pinned host memory,
        # queued on the current stream (the events around the loop wait for it)
        if to_device:
            return "a.to(dev, non_blocking=True)", {"a": self.put_host(x).pin_memory()}, None
        pinned = self.torch.empty(x.shape, dtype=self.torch.float32, pin_memory=True)
        return "c.copy_(a, non_blocking=True)", {"a": self.put(x), "c": pinned}, "c"

    def timer(self):
        if self.kind not in EVENT_KINDS:
            return None
        cuda = self.torch.cuda
        return EventTimer(cycling_recorder(lambda: cuda.Event(enable_timing=True)))

    def precision(self, mode):
        torch = self.torch
        before = torch.get_float32_matmul_precision()
        return setting(torch.set_float32_matmul_precision, before, mode)


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
        mine = EmberLib(ember, dev, label)
        if kind in EVENT_KINDS and not mine.has_events():
            notes.append(f"ember's {label} has no record_event(): ember timed by the host clock")
        libs: list[Lib] = [mine]
        if kind == "cpu":
            libs.append(NumpyLib())
        tkind = _torch_kind(torch, kind) if torch is not None else ""
        if tkind:
            libs.append(TorchLib(torch, tkind, label))
        elif torch is not None:
            notes.append(f"torch {torch.__version__} cannot use {kind}: no torch peer there")
        devices[label] = libs
    return devices, notes
