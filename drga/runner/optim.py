"""One optimiser step with gradient clipping, and the plateau learning-rate cut."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn


def clip_gradients(params: Iterable[nn.Parameter], grad_clip: float) -> Tensor:
    """Clip the gradient norm of the parameters that have a gradient (``grad_clip`` 0: no clipping);
    the norm before clipping (0 when none has a gradient)."""
    with_grad = [p for p in params if p.grad is not None]
    if not with_grad:
        return torch.zeros(())
    return nn.utils.clip_grad_norm_(with_grad, grad_clip if grad_clip > 0 else float("inf"))


def optimizer_step(optimizer: torch.optim.Optimizer, loss: Tensor, params: Iterable[nn.Parameter], grad_clip: float) -> Tensor:
    """Zero the gradients, back-propagate ``loss``, clip ``params`` to ``grad_clip``, step; the norm before clipping."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = clip_gradients(params, grad_clip)
    optimizer.step()
    return norm


def reduce_learning_rate(optimizer: torch.optim.Optimizer | None, factor: float) -> None:
    """The learning rate times ``factor`` after an epoch without a better dev score (a plateau)."""
    if optimizer is None or factor >= 1.0:
        return
    for group in optimizer.param_groups:
        group["lr"] *= factor
