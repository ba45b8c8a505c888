"""The Python side of ember.Tensor: ember.tensor() (through numpy) and the Tensor
methods that are easiest in Python (repr, iteration, the numpy and DLPack protocols).

dtypes on the way in, for ``ember.tensor(data)`` without ``dtype=``:

* numpy arrays and numpy scalars keep their dtype when ember has it (float64 stays
  float64); bool stays bool, int32 int32; int8/int16 widen to int64; uint16 widens to
  uint32; uint64 becomes int64 (values past the int64 range are rejected); longdouble
  narrows to float64.
* Python data (scalars, nested lists): floats become float32, ints int64, bools bool.
* Ragged lists, strings, objects and complex numbers raise InvalidArgumentError.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .errors import DLPackError, InvalidArgumentError, InvalidTypeError

Tensor = _core.Tensor
if TYPE_CHECKING:
    from ._core import Device, DType, _DeviceLike, _DTypeLike

_FLOAT_BY_SIZE = {2: "float16", 4: "float32", 8: "float64"}
_UINT_BY_SIZE = {1: "uint8", 2: "uint32", 4: "uint32"}


def _as_array(data: Any) -> np.ndarray[Any, Any]:
    try:
        arr = np.asarray(data)
    except (ValueError, TypeError, OverflowError) as e:
        raise InvalidArgumentError(
            "tensor: cannot build a tensor from this data (nested lists must be "
            f"rectangular and hold numbers only): {e}",
            op="tensor",
        ) from None
    return arr


def _natural_dtype(arr: np.ndarray[Any, Any], from_numpy: bool) -> str:
    """The ember dtype name for data numpy read as `arr` (see the module docstring)."""
    kind, size = arr.dtype.kind, arr.dtype.itemsize
    if kind == "b":
        return "bool"
    if kind == "f":
        if not from_numpy and size == 8:
            return "float32"  # Python floats: ember's default float dtype
        return _FLOAT_BY_SIZE.get(size, "float64")
    if kind == "i":
        return "int32" if from_numpy and size == 4 else "int64"
    if kind == "u":
        if size in _UINT_BY_SIZE:
            return _UINT_BY_SIZE[size]
        if arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise InvalidArgumentError(
                "tensor: uint64 values beyond the int64 range have no ember dtype", op="tensor"
            )
        return "int64"
    if kind == "O" and arr.size and all(isinstance(v, int) for v in arr.flat):
        big = max(arr.flat, key=abs)  # numpy falls back to objects for ints past 64 bits
        raise InvalidArgumentError(
            f"tensor: the integer {big} does not fit in int64 (the widest ember integer); "
            "pass dtype=ember.float64 to store it approximately",
            op="tensor",
        )
    what = {"c": "complex numbers", "U": "strings", "S": "bytes", "O": "Python objects"}
    raise InvalidArgumentError(
        f"tensor: {what.get(kind, f'numpy dtype {arr.dtype}')} cannot become a tensor; "
        "ember holds float32, float16, bfloat16, float64, int64, int32, uint32, uint8 and bool",
        op="tensor",
    )


def _check_fits(arr: np.ndarray[Any, Any], target: DType) -> None:
    """Refuses values an integer dtype cannot hold, which numpy would wrap (300 -> 44)."""
    if target.is_float or target == "bool" or arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    info = np.iinfo(str(target))
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise InvalidArgumentError(
                f"tensor: NaN and infinity have no {target} value", op="tensor"
            )
        lo, hi = np.trunc(arr.min()), np.trunc(arr.max())
    else:
        lo, hi = int(arr.min()), int(arr.max())
    if lo < info.min or hi > info.max:
        bad = lo if lo < info.min else hi
        raise InvalidArgumentError(
            f"tensor: the value {bad} is out of range for dtype {target} "
            f"({info.min} to {info.max})",
            op="tensor",
        )


def tensor(data: Any, dtype: _DTypeLike | None = None, device: _DeviceLike | None = None) -> Tensor:
    """A new tensor from nested lists, a Python scalar, a numpy array or a Tensor.

    `dtype` is a DType, numpy dtype or name; `device` a Device, a spec such as
    "metal:0", or None for the CPU. The data is always copied.
    """
    if isinstance(data, Tensor):
        out = data.detach().clone()  # a new leaf, as torch.tensor(t)
        if dtype is not None:
            out = out.to_dtype(dtype)
        return out if device is None else out.to_device(device)
    arr = _as_array(data)
    natural = _natural_dtype(arr, isinstance(data, (np.ndarray, np.generic)))
    target = _core._as_dtype(natural if dtype is None else dtype)
    if target == "bfloat16" and arr.dtype.kind == "f" and arr.dtype.itemsize == 8:
        # straight from float64 on the CPU: through float32 would round twice
        out = _core._from_numpy(np.ascontiguousarray(arr), None).to_dtype(target)
        return out if device is None else out.to_device(device)
    # numpy has no bfloat16: go through float32 and convert in ember.
    host = "float32" if target == "bfloat16" else str(target)
    _check_fits(arr, target)
    arr = np.asarray(arr, dtype=host, order="C")
    out = _core._from_numpy(arr, device)
    return out.to_dtype(target) if target == "bfloat16" else out


def from_dlpack(obj: Any, dtype: _DTypeLike | None = None, device: _DeviceLike | None = None) -> Tensor:
    """A tensor sharing a DLPack producer's CPU or CUDA memory: any object with
    ``__dlpack__``, or a raw capsule (read-only memory is copied). CUDA memory lands on
    ``device`` when it is a CUDA Device of that GPU, else on the GPU's shared Device; the
    producer is asked to order its work before that Device's stream. Other memory (Metal,
    ...) raises DLPackError."""
    target: Device | None = None
    if type(obj).__name__ == "PyCapsule":
        capsule = obj
    elif hasattr(obj, "__dlpack__"):
        where = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (1, 0)
        kind, ordinal = int(where[0]), int(where[1])
        kwargs: dict[str, Any] = {}
        if kind == 2:  # kDLCUDA: the producer's work must come before our stream's
            target = _cuda_target(ordinal, device)
            kwargs["stream"] = _core._stream_handle(target)
        elif kind not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise DLPackError(
                f"from_dlpack: the data is on DLPack device {(kind, ordinal)}; only CPU and "
                "CUDA memory can be imported: move it to the CPU on the producer's side",
                op="from_dlpack",
            )
        try:
            capsule = obj.__dlpack__(max_version=(1, 0), **kwargs)
        except TypeError:  # a producer from before DLPack 1.0
            capsule = obj.__dlpack__(**kwargs)
    else:
        raise InvalidTypeError(
            f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
            f"{type(obj).__name__}",
            op="from_dlpack",
        )
    out = _core._from_dlpack_capsule(capsule, target)
    if dtype is not None:
        out = out.to_dtype(dtype)
    return out if device is None else out.to_device(device)


def _cuda_target(ordinal: int, device: _DeviceLike | None) -> Device:
    """The ember Device that takes CUDA memory of GPU `ordinal`: `device` when it is a CUDA
    Device there, else the GPU's shared one (a move to `device` follows)."""
    if device is not None:
        d = _core.device(device)
        if d.kind == "cuda" and d.ordinal == ordinal:
            return d
    return _core.device(f"cuda:{ordinal}")


def _rebuild(array: Any, dtype: str, device: str) -> Tensor:  # pickles of earlier versions
    return tensor(array, dtype=dtype, device=device)


def _rebuild_bytes(data: bytes, dtype: str, shape: tuple[int, ...], device: str) -> Tensor:
    return _core._tensor_from_bytes(data, dtype, shape, device)


def _repr(self: Tensor) -> str:
    body = np.array2string(self.detach().numpy(), separator=", ", prefix="tensor(")
    device = self.device
    grad = ""  # PyTorch's suffix: how the tensor takes part in the graph
    if self.grad_fn is not None:
        grad = f", grad_fn=<{self.grad_fn.name()}>"
    elif self.requires_grad:
        grad = ", requires_grad=True"
    return f"tensor({body}, dtype={self.dtype}, device={device.kind}:{device.ordinal}{grad})"


def _iter(self: Tensor) -> Iterator[Tensor]:
    # Not a generator itself, so that iter() of a 0-d tensor fails at once, like numpy.
    if self.ndim == 0:
        raise InvalidTypeError("iteration over a 0-d tensor", op="iter")
    return (self[i] for i in range(self.shape[0]))


def _array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
    # numpy's protocol: copy=False asks for no copy, which ember cannot give.
    if copy is False:
        raise InvalidArgumentError(
            "__array__: ember tensors cannot be exported without a copy; use np.asarray(t)",
            op="__array__",
        )
    arr = self.numpy()
    return arr if dtype is None else arr.astype(dtype, copy=False)


def _reduce(self: Tensor) -> tuple[Any, ...]:
    device = self.device
    name = f"{device.kind}:{device.ordinal}"
    # A pickle names its device by kind and ordinal, which loads as the process-wide
    # ember.device(name). A tensor on an instance of its own (Device.metal(),
    # Device.cuda(new_stream=True)) would come back on another queue: refused, not moved.
    if device.kind != "cpu" and not device.same_device(_core.device(name)):
        raise InvalidArgumentError(
            f"pickle: this tensor lives on {device!r}, a Device instance of its own; a pickle "
            f"can only name the shared ember.device({name!r}), a different queue, so it would "
            f"load elsewhere. Move it first: t.to_device(ember.device({name!r})) or "
            f"t.to_device('cpu')",
            op="pickle",
        )
    # the raw bytes, C order: every dtype (bfloat16 included) comes back bit for bit
    return (_rebuild_bytes, (_core._tensor_bytes(self), str(self.dtype), tuple(self.shape), name))


def _format(self: Tensor, spec: str) -> str:
    if self.ndim == 0 and spec:
        return format(self.item(), spec)
    return format(repr(self), spec)


# (setattr: the bound class gains Python methods, which checkers see in _core.pyi)
for _name, _fn in (("__repr__", _repr), ("__str__", _repr), ("__iter__", _iter),
                   ("__array__", _array), ("__reduce__", _reduce), ("__format__", _format)):
    setattr(Tensor, _name, _fn)
del _name, _fn
