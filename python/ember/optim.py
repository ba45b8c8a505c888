"""Optimisers with PyTorch's names, defaults and update rules: ``SGD`` (momentum,
dampening, Nesterov, weight decay) and ``AdamW`` (decoupled weight decay, AMSGrad).

Each ``step()`` applies the formulas of PyTorch's single-tensor implementations
(``torch.optim.sgd._single_tensor_sgd``, ``torch.optim.adamw`` through
``_single_tensor_adam``), in the same order of operations, in place on each parameter's
own device, under ``ember.no_grad()``. Parameters whose ``.grad`` is None are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from . import _core
from .autograd import no_grad
from .errors import InvalidArgumentError, InvalidTypeError

Tensor = _core.Tensor
# a parameter group: "params" (a list of tensors) and the optimiser's settings
_Group = dict[str, Any]

__all__ = ["Optimizer", "SGD", "AdamW"]


class Optimizer:
    """The parameter groups, per-parameter state, ``zero_grad`` and ``step``'s frame."""

    def __init__(
        self, params: Iterable[Tensor] | Iterable[dict[str, Any]], defaults: dict[str, Any]
    ) -> None:
        if isinstance(params, _core.Tensor):
            raise InvalidTypeError(
                f"{type(self).__name__}: params must be an iterable of tensors (or of dicts "
                "of groups), not one tensor: pass [t]",
                op=type(self).__name__,
            )
        groups: list[Any] = list(params)
        if not groups:
            raise InvalidArgumentError(f"{type(self).__name__}: got an empty parameter list",
                                       op=type(self).__name__)
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.defaults = dict(defaults)
        self.param_groups: list[_Group] = []
        for g in groups:
            group = dict(self.defaults)
            group.update(g)
            group["params"] = list(g["params"])
            for p in group["params"]:
                if not isinstance(p, _core.Tensor):
                    raise InvalidTypeError(f"{type(self).__name__}: parameters must be ember "
                                           f"tensors, got {type(p).__name__}", op=type(self).__name__)
                if not p.is_leaf:
                    raise InvalidArgumentError(f"{type(self).__name__}: can't optimize a "
                                               "non-leaf tensor", op=type(self).__name__)
            self.param_groups.append(group)
        self.state: dict[int, dict[str, Any]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears each parameter's .grad: to None (the default, as PyTorch's) or zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.grad = None if set_to_none else _core.zeros_like(p.grad)

    def _state(self, p: Tensor) -> dict[str, Any]:
        return self.state.setdefault(id(p), {})

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter with a gradient; returns closure()'s loss if given."""
        loss = None
        if closure is not None:
            from .autograd import enable_grad

            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._update(group)
        return loss

    def _update(self, group: _Group) -> None:  # pragma: no cover - every optimiser has its own
        raise NotImplementedError


def _with_grads(group: _Group) -> Iterator[tuple[Tensor, Tensor]]:
    """(parameter, gradient) for each parameter of the group that has one; the gradient
    negated when the group maximizes."""
    for p in group["params"]:
        grad = p.grad
        if grad is not None:
            yield p, (-grad if group["maximize"] else grad)


def _check(name: str, value: object, ok: bool, what: str) -> None:
    if not ok:
        raise InvalidArgumentError(f"Invalid {what}: {value}", op=name)


class SGD(Optimizer):
    """Stochastic gradient descent, as torch.optim.SGD."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        _check("SGD", lr, lr >= 0.0, "learning rate")
        _check("SGD", momentum, momentum >= 0.0, "momentum value")
        _check("SGD", weight_decay, weight_decay >= 0.0, "weight_decay value")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise InvalidArgumentError("Nesterov momentum requires a momentum and zero dampening",
                                       op="SGD")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, group: _Group) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov = group["weight_decay"], group["nesterov"]
        for p, grad in _with_grads(group):
            if weight_decay != 0:
                grad = grad + p * weight_decay
            if momentum != 0:
                state = self._state(p)
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = grad.clone()
                    state["momentum_buffer"] = buf
                else:
                    buf *= momentum
                    buf += grad * (1 - dampening)
                grad = grad + buf * momentum if nesterov else buf
            p -= grad * lr


class AdamW(Optimizer):
    """Adam with decoupled weight decay, as torch.optim.AdamW."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False) -> None:
        _check("AdamW", lr, lr >= 0.0, "learning rate")
        _check("AdamW", eps, eps >= 0.0, "epsilon value")
        _check("AdamW", betas[0], 0.0 <= betas[0] < 1.0, "beta parameter at index 0")
        _check("AdamW", betas[1], 0.0 <= betas[1] < 1.0, "beta parameter at index 1")
        _check("AdamW", weight_decay, weight_decay >= 0.0, "weight_decay value")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, group: _Group) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
        for p, grad in _with_grads(group):
            state = self._state(p)
            if not state:
                state["step"] = 0
                state["exp_avg"] = _core.zeros_like(p)
                state["exp_avg_sq"] = _core.zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = _core.zeros_like(p)
            state["step"] += 1
            step = state["step"]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            p *= 1 - lr * weight_decay  # decoupled: the weights decay, not the gradient
            exp_avg += (grad - exp_avg) * (1 - beta1)  # lerp(grad, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += grad * (1 - beta2) * grad
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = math.sqrt(bias_correction2)
            if amsgrad:
                state["max_exp_avg_sq"] = _core.maximum(state["max_exp_avg_sq"], exp_avg_sq)
                denom = state["max_exp_avg_sq"].sqrt() / bias_correction2_sqrt + eps
            else:
                denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
            p += exp_avg * -step_size / denom
