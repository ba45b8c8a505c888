"""Tensors to and from files, with the safetensors package's names.

``save_file`` / ``load_file`` / ``safe_open`` read and write the safetensors format in
ember's C++ core (csrc/core/safetensors.cpp): the header is checked field by field before
any tensor is made, the data is memory-mapped, and a CPU tensor shares the mapping (its
pages are private: writing a tensor never writes the file). Other devices get one upload
per tensor from the mapping.
"""

from __future__ import annotations

import os

from . import _core
from .errors import InvalidArgumentError, InvalidTypeError

Tensor = _core.Tensor


def _path(filename, op: str) -> str:
    try:
        return os.fspath(filename)
    except TypeError:
        raise InvalidTypeError(
            f"{op}: the file name must be a str or os.PathLike, got {type(filename).__name__}",
            op=op,
        ) from None


def save_file(tensors, filename, metadata=None) -> None:
    """Writes ``tensors`` (a dict of str to Tensor) and ``metadata`` (a dict of str to str)
    to ``filename`` in the safetensors format. Views, broadcasts and GPU tensors are saved
    as their values; the file is written under a temporary name and renamed into place,
    so a failed save leaves any previous file intact."""
    _core._save_safetensors(tensors, metadata, _path(filename, "save_file"))


class safe_open:
    """A safetensors file opened for reading, as the safetensors package's ``safe_open``:
    ``keys()``, ``metadata()`` and ``get_tensor(name)``, which reads that tensor alone.
    Tensors go to ``device`` (None: the CPU). Also a context manager."""

    def __init__(self, filename, device=None, *, framework=None):
        if framework not in (None, "ember"):
            raise InvalidArgumentError(
                f"safe_open: ember.safe_open gives ember tensors; framework={framework!r} is "
                f"not taken (leave it out, or pass 'ember')",
                op="safe_open",
            )
        self._device = _core.device(device) if device is not None else _core.device("cpu")
        self._file = _core._open_safetensors(_path(filename, "safe_open"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self) -> list[str]:
        """The tensors' names, sorted."""
        return self._file.keys()

    def metadata(self) -> dict[str, str] | None:
        """The file's ``__metadata__``, or None when it has none."""
        return self._file.metadata()

    def get_tensor(self, name: str) -> Tensor:
        """The tensor ``name`` on this file's device."""
        return self._file.get_tensor(name, self._device)

    def __repr__(self) -> str:
        return f"safe_open({self._file.path!r}, device={self._device!r})"


def load_file(filename, device=None) -> dict[str, Tensor]:
    """Every tensor of a safetensors file, by name, on ``device`` (None: the CPU)."""
    f = safe_open(filename, device)
    return {name: f.get_tensor(name) for name in f.keys()}
