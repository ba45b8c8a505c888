"""numpy ufuncs on ember tensors (``np.add(t, 1)``, ``ndarray + t``, ``np.exp(t)``):
``Tensor.__array_ufunc__`` runs the ember op of the ufunc, so the result is an ember
Tensor. An ndarray operand is read as a CPU tensor (as ``ember.tensor`` reads it); with
a GPU tensor that raises DeviceMismatchError, never a silent copy to the host. Ufuncs
without an ember op, ufunc methods (``reduce``, ``at``, ...), numpy-only keywords
(``dtype=``, ``where=``) and ``out=`` that is not one ember Tensor give NotImplemented,
so numpy raises its TypeError."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core

Tensor = _core.Tensor

# numpy ufunc -> ember op name; np.divide is np.true_divide, np.mod is np.remainder.
_UFUNC_OPS = {
    np.add: "add",
    np.subtract: "sub",
    np.multiply: "mul",
    np.true_divide: "true_divide",
    np.floor_divide: "floor_divide",
    np.remainder: "remainder",
    np.power: "pow",
    np.maximum: "maximum",
    np.minimum: "minimum",
    np.arctan2: "atan2",
    np.equal: "eq",
    np.not_equal: "ne",
    np.less: "lt",
    np.less_equal: "le",
    np.greater: "gt",
    np.greater_equal: "ge",
    np.negative: "neg",
    np.absolute: "abs",
    np.square: "sqr",
    np.sign: "sign",
    np.floor: "floor",
    np.ceil: "ceil",
    np.rint: "round",  # both round half to even
    np.trunc: "trunc",
    np.exp: "exp",
    np.expm1: "expm1",
    np.log: "log",
    np.log1p: "log1p",
    np.sqrt: "sqrt",
    np.reciprocal: "recip",
    np.sin: "sin",
    np.cos: "cos",
    np.tan: "tan",
    np.tanh: "tanh",
    np.isnan: "isnan",
    np.isinf: "isinf",
    np.isfinite: "isfinite",
    np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor",
    np.invert: "bitwise_not",
    np.logical_and: "logical_and",
    np.logical_or: "logical_or",
    np.logical_xor: "logical_xor",
    np.logical_not: "logical_not",
    np.matmul: "matmul",
}

# ember ops that take no out=
_NO_OUT = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
           "logical_not", "matmul"}  # fmt: skip


def _out_tensor(kwargs: dict[str, Any]) -> Any:
    """The one Tensor that out= names; None without out=; NotImplemented otherwise."""
    out = kwargs.pop("out", None)
    if out is None:
        return None
    if len(out) == 1 and isinstance(out[0], Tensor):
        return out[0]
    return NotImplemented  # e.g. ndarray += t: ember does not write into numpy memory


def _array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    name = _UFUNC_OPS.get(ufunc)
    if name is None or method != "__call__":
        return NotImplemented
    out = _out_tensor(kwargs)
    if out is NotImplemented or kwargs:
        return NotImplemented
    if not any(isinstance(x, Tensor) for x in inputs):
        return NotImplemented  # only out= is a Tensor: numpy's own inputs, numpy's job
    op = getattr(_core, name)
    if name == "matmul":  # takes tensors only: an ndarray is read as a CPU tensor
        from ._tensor import tensor

        inputs = tuple(x if isinstance(x, Tensor) else tensor(x) for x in inputs)
    if out is None:
        return op(*inputs)
    if name in _NO_OUT:
        return NotImplemented
    return op(*inputs, out=out)


setattr(Tensor, "__array_ufunc__", _array_ufunc)
