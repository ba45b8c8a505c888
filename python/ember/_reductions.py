"""max/min as PyTorch has them: without ``dim`` the value; with one ``dim`` a named pair
``(values, indices)``. ``amax``/``amin`` are the value reductions (a dim or a tuple of
dims), the op table's ``max``/``min`` kernels."""

from __future__ import annotations

import operator
from collections import namedtuple

from . import _core
from .errors import InvalidTypeError

Tensor = _core.Tensor

# torch.return_types.max / .min: a tuple that also has .values and .indices
max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])

amax = _core.max
amin = _core.min


def _one_dim(name: str, dim):
    if isinstance(dim, bool):
        dim = None  # caught below: a bool is not a dim
    else:
        try:
            return operator.index(dim)
        except TypeError:
            pass
    raise InvalidTypeError(
        f"{name}: dim must be one int, got {type(dim).__name__}; for the values over several "
        f"dims use a{name}(dim=(...))",
        op=name,
    )


def _extreme(name: str, values, indices, result):
    def reduce(input, dim=None, keepdim=False):
        if dim is None:
            return values(input, None, keepdim)
        d = _one_dim(name, dim)
        return result(values(input, d, keepdim), indices(input, d, keepdim))

    reduce.__name__ = name
    reduce.__doc__ = (
        f"The {name}imum of all elements; with `dim`, the named pair (values, indices) of "
        f"the {name}imum along it (the first index among ties; NaN wins, as in PyTorch)."
    )
    return reduce


max = _extreme("max", _core.max, _core.argmax, max_result)
min = _extreme("min", _core.min, _core.argmin, min_result)

Tensor.amax, Tensor.amin = Tensor.max, Tensor.min  # the bound methods, before they go
Tensor.max = max
Tensor.min = min
