"""Tensor.size() as PyTorch has it: a method giving the shape as a ``Size`` (a tuple), or
with ``dim`` the length of one dim (negative dims count from the end). ``shape`` stays a
plain tuple; ``numel()`` is the count, as in PyTorch."""

from __future__ import annotations

import math
import operator
from typing import SupportsIndex

from . import _core
from .errors import IndexOutOfRangeError, InvalidTypeError


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints, as torch.Size."""

    __slots__ = ()

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"


def size(self: _core.Tensor, dim: SupportsIndex | None = None) -> Size | int:
    """The shape as a Size; with `dim`, the length of that dim."""
    shape = self.shape
    if dim is None:
        return Size(shape)
    if isinstance(dim, bool):
        raise InvalidTypeError("size: dim must be an int, got bool", op="size")
    try:
        d = operator.index(dim)
    except TypeError:
        raise InvalidTypeError(
            f"size: dim must be an int, got {type(dim).__name__}", op="size"
        ) from None
    n = len(shape)
    if not -n <= d < n:
        raise IndexOutOfRangeError(
            f"size: dim {d} is out of range for a tensor of {n} dims (expected {-n} to {n - 1})"
            if n
            else f"size: a 0-d tensor has no dim {d}",
            op="size",
        )
    return shape[d]


setattr(_core.Tensor, "size", size)
