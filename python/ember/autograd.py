"""Gradients, with PyTorch's spelling: ``ember.no_grad()``, ``ember.enable_grad()``,
``ember.set_grad_enabled(mode)`` (each a context manager, the first two also decorators;
grad mode is per thread) and ``ember.autograd.grad``. The engine is ember's C++ core:
each op records its backward there, so every device differentiates the same way."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from . import _core
from ._core import Tensor, is_grad_enabled

__all__ = ["enable_grad", "grad", "is_grad_enabled", "no_grad", "set_grad_enabled"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _Mode:
    """Sets grad mode on entry and puts the previous mode back on exit."""

    _on: bool

    def __enter__(self) -> None:
        self._prev = _core.is_grad_enabled()
        _core._set_grad_enabled(self._on)
        return None

    def __exit__(self, *exc: object) -> Literal[False]:
        _core._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn: _F) -> _F:
        """As a decorator: each call of fn runs in this mode."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]  # (same signature, by functools.wraps)


class no_grad(_Mode):
    """Ops inside record nothing for backward (this thread only), as torch.no_grad."""

    _on = False


class enable_grad(_Mode):
    """Ops inside record for backward again (e.g. inside no_grad), as torch.enable_grad."""

    _on = True


class set_grad_enabled:
    """Sets grad mode now (this thread); as a context manager, restores it on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise _invalid_type("set_grad_enabled", "mode must be True or False", mode)
        self._prev = _core.is_grad_enabled()
        _core._set_grad_enabled(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> Literal[False]:
        _core._set_grad_enabled(self._prev)
        return False


def _invalid_type(op: str, what: str, value: object) -> Exception:
    from .errors import InvalidTypeError

    return InvalidTypeError(f"{op}: {what}, got {type(value).__name__}", op=op)


def _tensors(value: object, op: str, what: str) -> list[Tensor]:
    raw: Any = [value] if isinstance(value, Tensor) else value
    try:
        items: list[Any] = list(raw)
    except TypeError:
        raise _invalid_type(op, f"{what} must be a Tensor or a sequence of Tensors", value) from None
    for t in items:
        if not isinstance(t, Tensor):
            raise _invalid_type(op, f"{what} must hold ember Tensors", t)
    return items


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input),
    as torch.autograd.grad; no tensor's ``.grad`` changes. ``grad_outputs``: one
    gradient per output (None for a scalar output's 1). ``allow_unused``: None for an
    input the outputs do not depend on, instead of an error."""
    if create_graph:
        from .errors import AutogradError

        raise AutogradError("grad: create_graph=True (gradients of gradients) is not "
                            "supported yet", op="grad")
    outs = _tensors(outputs, "grad", "outputs")
    ins = _tensors(inputs, "grad", "inputs")
    gouts: list[Tensor | None]
    if grad_outputs is None:
        gouts = [None] * len(outs)
    else:
        gouts = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        if len(gouts) != len(outs):
            from .errors import InvalidArgumentError

            raise InvalidArgumentError(f"grad: {len(gouts)} grad_outputs for {len(outs)} "
                                       "outputs", op="grad")
    retain = bool(create_graph) if retain_graph is None else bool(retain_graph)
    return tuple(_core._autograd_grad(outs, ins, gouts, retain, bool(allow_unused)))
