"""ember's exceptions.

Every failure in ember's C++ core arrives as one of these classes. Each derives from
:class:`EmberError` and from the built-in exception a Python user would catch, and
carries the facts as attributes (``e.op``, ``e.lhs``, ``e.rhs``, ...). Attributes a
class documents but that were not given are ``None``.
"""

from __future__ import annotations

import pickle
from typing import Any

__all__ = [
    "EmberError",
    "DeviceMismatchError",
    "MoveNotImplementedError",
    "DeviceNotFoundError",
    "BackendUnavailableError",
    "ShapeMismatchError",
    "DTypeMismatchError",
    "UnsupportedDTypeError",
    "OutOfMemoryError",
    "DeviceError",
    "InvalidArgumentError",
    "IndexOutOfRangeError",
    "InvalidTypeError",
    "InvalidIndexError",
    "DLPackError",
    "DivisionByZeroError",
    "FileFormatError",
]


def _picklable(value: object) -> object:
    """The value itself if it pickles, else its repr (a Device cannot cross processes)."""
    try:
        pickle.dumps(value)
    except Exception:
        return repr(value)
    return value


def _rebuild(cls: type[EmberError], message: str, attrs: dict[str, Any]) -> EmberError:
    return cls(message, **attrs)


class EmberError(Exception):
    """Base class of every ember error."""

    #: The attributes this class documents; each defaults to None.
    attributes: tuple[str, ...] = ()

    def __init__(self, message: str = "", **attrs: Any) -> None:
        super().__init__(message)
        self.message = message
        for name in self.attributes:
            setattr(self, name, None)
        for name, value in attrs.items():
            setattr(self, name, value)
        self._attrs = dict(attrs)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        attrs = {k: _picklable(v) for k, v in self._attrs.items()}
        return (_rebuild, (type(self), self.message, attrs))


class DeviceMismatchError(EmberError, ValueError):
    """An op got tensors on different Devices (``op``, ``lhs``, ``rhs``: Devices).

    With tracking on (``ember.set_tracking(True)``), ``lhs_site`` and ``rhs_site`` say where
    each tensor was created, as ``"file.py:12 in function"``; otherwise they are None.
    """

    attributes = ("op", "lhs", "rhs", "lhs_site", "rhs_site")


class MoveNotImplementedError(EmberError, NotImplementedError):
    """``to_device`` between two devices that have no copy path (``src``, ``dst``)."""

    attributes = ("src", "dst")


class DeviceNotFoundError(EmberError, IndexError):
    """The ordinal is out of range, negative, or there is no such GPU."""

    attributes = ("kind", "ordinal", "count")


class BackendUnavailableError(EmberError, RuntimeError):
    """The backend is not compiled in, or the machine has none (``kind``, ``reason``)."""

    attributes = ("kind", "reason")


class ShapeMismatchError(EmberError, ValueError):
    """Shapes cannot broadcast, or matmul dims differ (``op``, ``lhs``, ``rhs``: tuples)."""

    attributes = ("op", "lhs", "rhs")


class DTypeMismatchError(EmberError, TypeError):
    """dtypes differ where they must agree (``op``, ``lhs``, ``rhs``: DTypes)."""

    attributes = ("op", "lhs", "rhs")


class UnsupportedDTypeError(EmberError, TypeError):
    """An op or backend does not support the dtype (``dtype``, ``device``, ``op``)."""

    attributes = ("dtype", "device", "op")


class OutOfMemoryError(EmberError, MemoryError):
    """An allocation failed (``device``, ``bytes``)."""

    attributes = ("device", "bytes")


class DeviceError(EmberError, RuntimeError):
    """The device reported a failure (``device``)."""

    attributes = ("device",)


class InvalidArgumentError(EmberError, ValueError):
    """A bad value: a ragged list, a negative size, a bad device spec (``op``)."""

    attributes = ("op",)


class IndexOutOfRangeError(EmberError, IndexError):
    """A dim or an index outside its range (``op``)."""

    attributes = ("op",)


class InvalidTypeError(EmberError, TypeError):
    """An argument of the wrong type: a string or float where an int or shape goes (``op``)."""

    attributes = ("op",)


class InvalidIndexError(EmberError, IndexError):
    """A key that cannot index a tensor: a string, a float, two ellipses (``op``)."""

    attributes = ("op",)


class DLPackError(EmberError, BufferError):
    """A tensor DLPack cannot carry: GPU memory, a dtype it lacks, a bad capsule (``op``)."""

    attributes = ("op",)


class DivisionByZeroError(EmberError, ZeroDivisionError):
    """Integer ``//``, ``%`` or ``div(..., rounding_mode=...)`` by zero on the CPU (``op``,
    ``dtype``). GPUs cannot raise without waiting for the result: there x // 0 and x % 0
    give 0 (numpy's value)."""

    attributes = ("op", "dtype")


class FileFormatError(EmberError, ValueError):
    """A damaged or hostile file: a truncated or malformed header, offsets out of range or
    overlapping, an unknown dtype (``path``; ``offset``, the byte where the problem is;
    ``name``, the tensor's, where there is one)."""

    attributes = ("path", "offset", "name")


class AutogradError(EmberError, RuntimeError):
    """A gradient rule refused (PyTorch raises RuntimeError for each): ``backward()``
    through a graph already freed, a tensor a backward needs changed in place, an
    in-place op on a leaf that requires grad, ``backward()`` of a non-scalar without
    ``gradient=``, an op with no derivative given a tensor that requires grad (``op``
    names it)."""

    attributes = ("op",)
