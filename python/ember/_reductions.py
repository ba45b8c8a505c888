"""max/min as PyTorch has them: without ``dim`` the value; with one ``dim`` a named pair
``(values, indices)``. ``amax``/``amin`` are the value reductions (a dim or a tuple of
dims), the op table's ``max``/``min`` kernels."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any
from . import _core
from .return_types import max as max_result
from .return_types import min as min_result
from .errors import InvalidArgumentError, InvalidTypeError

Tensor = _core.Tensor

amax = _core.max
amin = _core.min


def _one_dim(name: str, dim: object) -> int:
    if isinstance(dim, bool):
        dim = None  # caught below: a bool is not a dim
    else:
        try:
            return operator.index(dim)  # type: ignore[arg-type]  # (TypeError caught)
        except TypeError:
            pass
    raise InvalidTypeError(
        f"{name}: dim must be one int, got {type(dim).__name__}; for the values over several "
        f"dims use a{name}(dim=(...))",
        op=name,
    )


def _extreme(
    name: str, values: Callable[..., Any], indices: Callable[..., Any], result: Callable[..., Any]
) -> Callable[..., Any]:
    # axis=, keepdims= and out= as the other reductions take them (np.max(t, axis=1) passes both);
    # with a dim, out= is the pair (values, indices), as PyTorch's.
    def reduce(
        input: Any,
        dim: Any = None,
        keepdim: bool = False,
        *,
        axis: Any = None,
        keepdims: bool | None = None,
        out: Any = None,
    ) -> Any:
        if keepdims is not None:
            if keepdim:
                raise InvalidArgumentError(
                    f"{name}: got both keepdim= and keepdims= (numpy's name for keepdim); pass one",
                    op=name,
                )
            keepdim = bool(keepdims)
        if axis is not None:
            if dim is not None:
                raise InvalidArgumentError(
                    f"{name}: got both dim= and axis= (axis is numpy's name for dim); pass one",
                    op=name,
                )
            dim = axis
        if dim is None:
            return values(input, None, keepdim, out=out)
        d = _one_dim(name, dim)
        if out is None:
            if isinstance(input, _core.Tensor) and input.ndim > 0:
                # One pass: the indices, then the value at each (a read per output). The
                # gradient goes to the index returned, ties or not, as PyTorch's.
                at = indices(input, d, True)
                vals = _core.gather(input, d, at)
                return result(vals if keepdim else vals.squeeze(d), at if keepdim else at.squeeze(d))
            return result(values(input, d, keepdim), indices(input, d, keepdim))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise InvalidTypeError(
                f"{name}: with a dim, out= must be a pair (values, indices) of tensors, "
                f"got {type(out).__name__}",
                op=name,
            )
        # both checked before either is written
        return result(*_core._extreme_out(name == "max", input, d, keepdim, out[0], out[1]))

    reduce.__name__ = name
    reduce.__doc__ = (
        f"The {name}imum of all elements; with `dim`, the named pair (values, indices) of "
        f"the {name}imum along it (the first index among ties; NaN wins, as in PyTorch)."
    )
    return reduce


max = _extreme("max", _core.max, _core.argmax, max_result)
min = _extreme("min", _core.min, _core.argmin, min_result)

# the bound methods become amax/amin, before max/min take their names
setattr(Tensor, "amax", vars(Tensor)["max"])
setattr(Tensor, "amin", vars(Tensor)["min"])
setattr(Tensor, "max", max)
setattr(Tensor, "min", min)
