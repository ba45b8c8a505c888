"""Tensors to and from files, with the safetensors package's names.

``save_file`` / ``load_file`` / ``safe_open`` read and write the safetensors format in
ember's C++ core (csrc/core/safetensors.cpp): the header is checked field by field before
any tensor is made, the data is memory-mapped, and a CPU tensor shares the mapping (its
pages are private: writing a tensor never writes the file). Other devices get one upload
per tensor from the mapping.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, Literal, Union

from . import _core
from .errors import InvalidArgumentError, InvalidTypeError

Tensor = _core.Tensor
if TYPE_CHECKING:
    import numpy as np

    from ._core import Device, _DeviceLike

_PathLike = Union[str, "os.PathLike[str]"]


def _path(filename: object, op: str) -> str:
    try:
        path: str | bytes = os.fspath(filename)  # type: ignore[call-overload]  # (checked here)
    except TypeError:
        raise InvalidTypeError(
            f"{op}: the file name must be a str or os.PathLike, got {type(filename).__name__}",
            op=op,
        ) from None
    return os.fsdecode(path)  # a bytes path as os.fsdecode reads it


def save_file(
    tensors: Mapping[str, Tensor], filename: _PathLike, metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``tensors`` (a dict of str to Tensor) and ``metadata`` (a dict of str to str)
    to ``filename`` in the safetensors format. Views, broadcasts and GPU tensors are saved
    as their values; the file is written under a temporary name and renamed into place,
    so a failed save leaves any previous file intact."""
    _core._save_safetensors(tensors, metadata, _path(filename, "save_file"))


class safe_open:
    """A safetensors file opened for reading, as the safetensors package's ``safe_open``:
    ``keys()``, ``metadata()`` and ``get_tensor(name)``, which reads that tensor alone.
    Tensors go to ``device`` (None: the CPU). Also a context manager."""

    def __init__(
        self, filename: _PathLike, device: _DeviceLike | None = None, *, framework: str | None = None
    ) -> None:
        if framework not in (None, "ember"):
            raise InvalidArgumentError(
                f"safe_open: ember.safe_open gives ember tensors; framework={framework!r} is "
                f"not taken (leave it out, or pass 'ember')",
                op="safe_open",
            )
        self._device = _core.device(device) if device is not None else _core.device("cpu")
        self._file = _core._open_safetensors(_path(filename, "safe_open"))

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
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


def load_file(filename: _PathLike, device: _DeviceLike | None = None) -> dict[str, Tensor]:
    """Every tensor of a safetensors file, by name, on ``device`` (None: the CPU)."""
    f = safe_open(filename, device)
    return {name: f.get_tensor(name) for name in f.keys()}


# ---- save / load by extension: .safetensors, .npy (one tensor), .npz (a dict)

_EXTENSIONS = (".safetensors", ".npy", ".npz")


def _extension(path: str, op: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in _EXTENSIONS:
        raise InvalidArgumentError(
            f"{op}: cannot tell the format of '{path}' from its extension; ember reads and "
            f"writes .safetensors (a dict of tensors), .npy (one tensor) and .npz (a dict)",
            op=op,
        )
    return ext


def _atomic_write(path: str, write: Callable[[IO[bytes]], Any]) -> None:
    """write(file) into a temporary file beside `path`, then renamed over it."""
    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.tmp-{os.getpid()}-{id(write)}")
    try:
        with open(tmp, "xb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _to_array(t: object, name: str, op: str) -> np.ndarray[Any, Any]:
    import numpy as np

    if not isinstance(t, Tensor):
        raise InvalidTypeError(
            f"{op}: {name} must be an ember Tensor, got {type(t).__name__}", op=op
        )
    if str(t.dtype) == "bfloat16":
        from .errors import UnsupportedDTypeError

        raise UnsupportedDTypeError(
            f"{op}: {name} is bfloat16, which numpy's .npy and .npz cannot hold; save it as "
            f".safetensors (or convert it: t.to_dtype(ember.float32))",
            dtype=t.dtype,
            device=t.device,
            op=op,
        )
    return np.ascontiguousarray(t.detach().numpy())


def _from_array(arr: np.ndarray[Any, Any], path: str, name: str, device: Device) -> Tensor:
    import numpy as np

    from ._tensor import tensor
    from .errors import FileFormatError, UnsupportedDTypeError

    if arr.dtype.hasobject:
        raise FileFormatError(
            f"'{path}': {name} holds Python objects (a pickle), which ember never executes "
            f"from a data file",
            path=path,
            name=name,
        )
    native = arr.dtype.newbyteorder("=")
    if native not in _NUMPY_TO_EMBER:
        raise UnsupportedDTypeError(
            f"load: {name} of '{path}' has numpy dtype {arr.dtype}, which ember has no dtype "
            f"for (ember holds bool, uint8, uint32, int32, int64, float16, float32, float64)",
            op="load",
        )
    # any order (C or Fortran) and byte order: one contiguous native copy
    data = np.ascontiguousarray(arr, dtype=native)
    return tensor(data, dtype=_NUMPY_TO_EMBER[native], device=device)


def _numpy_dtypes() -> dict[Any, str]:
    import numpy as np

    return {np.dtype(n): n for n in
            ("bool", "uint8", "uint32", "int32", "int64", "float16", "float32", "float64")}  # fmt: skip


_NUMPY_TO_EMBER = _numpy_dtypes()


def _numpy_read(path: str, read: Callable[[], Any]) -> Any:
    """read() of a numpy file, without pickles; numpy's errors about the file become
    FileFormatError naming it."""
    import zipfile

    from .errors import FileFormatError

    try:
        return read()
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise FileFormatError(
                f"'{path}' holds Python objects (a pickle), which ember never executes from "
                f"a data file",
                path=path,
            ) from None
        raise FileFormatError(f"'{path}' is not a valid numpy file: {e}", path=path) from None
    except (OSError, EOFError, KeyError, zipfile.BadZipFile) as e:
        raise FileFormatError(f"'{path}' is not a valid numpy file: {e}", path=path) from None


def save(filename: _PathLike, obj: Tensor | Mapping[str, Tensor]) -> None:
    """Saves ``obj`` by the extension of ``filename``: ``.safetensors`` (a dict of str to
    Tensor), ``.npy`` (one Tensor) or ``.npz`` (a dict). Written under a temporary name and
    renamed into place. The path comes first, as numpy's ``np.save`` and MLX's."""
    if isinstance(filename, (Tensor, dict)) and isinstance(obj, (str, os.PathLike)):
        raise InvalidTypeError(
            "save: ember.save(path, obj) takes the path first (numpy's and MLX's order), "
            "not torch.save's (obj, path)",
            op="save",
        )
    path = _path(filename, "save")
    ext = _extension(path, "save")
    if ext == ".safetensors":
        if not isinstance(obj, dict):
            raise InvalidTypeError(
                f"save: a .safetensors file holds a dict of tensors, got "
                f"{type(obj).__name__}; pass {{'name': t}}",
                op="save",
            )
        return save_file(obj, path)
    import numpy as np

    if ext == ".npy":
        arr = _to_array(obj, "the object", "save")
        return _atomic_write(path, lambda f: np.save(f, arr, allow_pickle=False))
    if not isinstance(obj, dict):
        raise InvalidTypeError(
            f"save: a .npz file holds a dict of tensors, got {type(obj).__name__}", op="save"
        )
    arrays: dict[str, Any] = {}
    for name, t in obj.items():
        if not isinstance(name, str):
            raise InvalidTypeError(
                f"save: tensor names must be str, got {type(name).__name__}", op="save"
            )
        arrays[name] = _to_array(t, f"'{name}'", "save")
    _atomic_write(path, lambda f: np.savez(f, **arrays))


def load(filename: _PathLike, device: _DeviceLike | None = None) -> Tensor | dict[str, Tensor]:
    """Loads a file by its extension onto ``device`` (None: the CPU): ``.safetensors`` and
    ``.npz`` give a dict of tensors, ``.npy`` one tensor. numpy's files load in any order
    (C or Fortran) and byte order; arrays of Python objects are refused (no pickle is
    executed from a data file)."""
    path = _path(filename, "load")
    ext = _extension(path, "load")
    if ext == ".safetensors":
        return load_file(path, device)
    import numpy as np

    dev = _core.device(device) if device is not None else _core.device("cpu")
    loaded = _numpy_read(path, lambda: np.load(path, allow_pickle=False))
    if ext == ".npy":
        if not hasattr(loaded, "dtype"):
            from .errors import FileFormatError

            raise FileFormatError(f"'{path}' is not a .npy file (a .npz archive?)", path=path)
        return _from_array(loaded, path, "the array", dev)
    if hasattr(loaded, "dtype"):
        from .errors import FileFormatError

        raise FileFormatError(f"'{path}' is a .npy array, not a .npz archive", path=path)
    with loaded:
        return {
            name: _from_array(_numpy_read(path, lambda: loaded[name]), path, f"'{name}'", dev)
            for name in loaded.files
        }
