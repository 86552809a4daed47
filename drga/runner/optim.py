"""Adam, gradient clipping, and the network's parameter groups with their base learning rates (``drga/runner/lr_schedule.py``
schedules them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch import Tensor, nn


def clip_gradients(params: Iterable[nn.Parameter], grad_clip: float) -> Tensor:
    """Clip the gradient norm of the parameters that have a gradient (``grad_clip`` 0: no clipping);
    the norm before clipping (0 when none has a gradient)."""
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return torch.zeros(())
    return nn.utils.clip_grad_norm_(with_grad, grad_clip if grad_clip > 0 else float("inf"))


def adam(params: list[Any], lr: float, fused: bool, log: Callable[[str], None] | None = None, **options: Any) -> torch.optim.Adam:
    """Adam over ``params`` (parameters or parameter groups); with ``fused`` its fused kernel where this
    torch has one for their device, else the for-each Adam, saying why through ``log``."""
    if fused:
        try:
            return torch.optim.Adam(params, lr=lr, fused=True, **options)
        except (RuntimeError, TypeError) as error:  # a torch without the fused kernel for this device
            if log is not None:
                log(f"train.fused_adam: {error}; using the for-each Adam")
    return torch.optim.Adam(params, lr=lr, **options)


def network_parameter_groups(network: nn.Module, params: Sequence[nn.Parameter], pretrained_lr: float | None) -> list[Any]:
    """The network optimiser's parameters: ``params`` as they are (one group at the optimiser's lr), or with
    ``pretrained_lr`` set two groups, the network's pretrained body (``pretrained_parameters()``) at that rate
    and the rest at the optimiser's lr. A network without a pretrained body gets one group."""
    body_of = getattr(network, "pretrained_parameters", None)
    if pretrained_lr is None or body_of is None:
        return list(params)
    body = {id(p) for p in body_of()}
    pretrained = [p for p in params if id(p) in body]
    new = [p for p in params if id(p) not in body]
    return [group for group in ({"params": pretrained, "lr": pretrained_lr}, {"params": new}) if group["params"]]

