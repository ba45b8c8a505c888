"""The named pairs some ops return, as torch.return_types: tuples that also have
``.values`` and ``.indices``."""

from __future__ import annotations

from typing import NamedTuple

from ._core import Tensor

__all__ = ["max", "min", "sort", "topk"]


class sort(NamedTuple):
    """sort(): the sorted values and where each came from."""

    values: Tensor
    indices: Tensor


class topk(NamedTuple):
    """topk(): the k largest (or smallest) values and their indices."""

    values: Tensor
    indices: Tensor


class max(NamedTuple):
    """max(dim): the maximum along the dim and its first index."""

    values: Tensor
    indices: Tensor


class min(NamedTuple):
    """min(dim): the minimum along the dim and its first index."""

    values: Tensor
    indices: Tensor
