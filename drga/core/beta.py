"""β, the strength of the adjustment (eq. 3): a learned factor times a decaying schedule, at most 1."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def beta_schedule(step: int, beta0: float, half_life_steps: float) -> float:
    # eq. 3's β decays over training: β0 · 2^(−step / half-life); no decay for half-life ≤ 0.
    """The scheduled factor of β at a global co-training step."""
    if half_life_steps <= 0:
        return beta0
    return beta0 * math.pow(0.5, step / half_life_steps)


class AdjustmentStrength(nn.Module):
    """β = β̃ · β_schedule(step), with β̃ = exp(ρ) learned by the task loss (eq. 12), capped so that β ≤ 1.

    β̃ starts at 1, so at step 0 the adjustment strength is β0 (the paper's default 0.4); the
    task loss may raise it up to 1/β0 or lower it towards 0. ρ is a log-factor, so Adam moves β̃
    by about ``lr`` (relative) per step whatever the gradient's scale: about 5% over 100 steps at
    Adam 5e-4 when the task loss keeps asking for the same direction. (An earlier
    parametrisation, exp(−softplus(ρ)) from ρ = −6, moved β̃ by under 0.001 over a whole study.)
    The current step lives in a buffer so that a checkpoint restores the schedule too.
    """

    step: Tensor  #: the global co-training step, a long buffer

    def __init__(self, beta0: float = 0.4, half_life_steps: float = 0.0, trainable: bool = True):
        super().__init__()
        if not 0.0 < beta0 <= 1.0:
            raise ValueError(f"beta0 must be in (0, 1], got {beta0}")
        self.beta0 = beta0
        self.half_life_steps = half_life_steps
        self.log_factor = nn.Parameter(torch.tensor(0.0), requires_grad=trainable)
        self.register_buffer("step", torch.tensor(0, dtype=torch.long))

    @property
    def learned_factor(self) -> Tensor:
        return torch.exp(self.log_factor.clamp(max=-math.log(self.beta0)))

    def forward(self) -> Tensor:
        return self.learned_factor * beta_schedule(int(self.step), self.beta0, self.half_life_steps)

    def advance(self, steps: int = 1) -> None:
        self.step += steps
