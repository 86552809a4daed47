"""The network's learning rate: one formula for every parameter group, the only writer of their ``lr``.

At optimiser step ``s`` (1-based) of a network-training phase of ``S`` steps, each group of the network
optimiser trains at

    base × warm-up(s) × decay(s) × plateau_lr_factor ** (plateau cuts so far)

- base: the group's own rate, ``train.lr``, or ``train.pretrained_lr`` for the pretrained body's group
  (``drga/runner/optim.py`` · ``network_parameter_groups``);
- warm-up: translation's ``nmt.warmup_steps`` in a warming-up phase (pretraining): min(1, s / steps);
- warm-up and decay of ``train.lr_schedule = "warmup-linear"`` over the phase's S steps;
- plateau: one cut after every ``train.plateau_patience`` epochs without a better dev score.

So a plateau cut holds after any warm-up and the pretrained body keeps its smaller rate under both.
Every phase starts afresh (its optimiser is new), with no cut, or with ``train.continue_lr`` with the cuts
its starting network was selected at (every model checkpoint records them); ``last.pt`` keeps the cuts,
and the step is recounted from the epochs done, so a resumed run reaches the same rates. The agent's optimiser is not
scheduled: it keeps ``agent.lr``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from drga.config import TrainConfig


def warmup_linear_factor(step: int, total: int, warmup_fraction: float) -> float:
    """The learning-rate factor of optimiser step ``step`` (1-based) of ``total``: linear warm-up to 1 over the
    first ``warmup_fraction`` of the steps, then linear decay to 0 after the last. Step 1 gets 1/warmup, not
    0: every step moves the weights."""
    warmup = round(warmup_fraction * total)
    if step <= warmup:
        return step / warmup
    return max(0.0, (total - step + 1) / max(total - warmup, 1))


@dataclass
class LearningRateSchedule:
    """The learning rates of one network-training phase's optimiser."""

    optimizer: torch.optim.Optimizer
    shape: str  #: train.lr_schedule: "constant" or "warmup-linear"
    warmup_fraction: float
    warmup_steps: int  #: a fixed warm-up of this many optimiser steps (0: none)
    plateau_factor: float
    base_lrs: list[float] = field(default_factory=list)  #: each group's rate before any factor
    step: int = 0  #: optimiser steps of the phase taken
    total: int = 0  #: optimiser steps the phase will take; 0 outside an epoch (benchmarks): no warm-up or decay
    plateau_cuts: int = 0

    def __post_init__(self) -> None:
        if not self.base_lrs:
            self.base_lrs = [group["lr"] for group in self.optimizer.param_groups]

    @classmethod
    def for_phase(cls, optimizer: torch.optim.Optimizer, train: TrainConfig, warmup_steps: int = 0,
                  plateau_cuts: int = 0) -> LearningRateSchedule:
        """The schedule of a phase's new optimiser, whose groups hold their base rates; ``plateau_cuts``: the cuts it
        starts with (``train.continue_lr``: those its starting network was trained with)."""
        return cls(optimizer, train.lr_schedule, train.warmup_fraction, warmup_steps, train.plateau_lr_factor,
                   plateau_cuts=plateau_cuts)

    def factor(self) -> float:
        """What every group's base rate is multiplied by at the current step."""
        factor = self.plateau_factor ** self.plateau_cuts
        if self.total and self.step:
            if self.warmup_steps:
                factor *= min(1.0, self.step / self.warmup_steps)
            if self.shape == "warmup-linear":
                factor *= warmup_linear_factor(self.step, self.total, self.warmup_fraction)
        return factor

    def rates(self) -> list[float]:
        factor = self.factor()
        return [base * factor for base in self.base_lrs]

    def apply(self) -> None:
        for group, rate in zip(self.optimizer.param_groups, self.rates()):
            group["lr"] = rate

    def start_epoch(self, steps_done: int, total: int) -> None:
        """An epoch begins with ``steps_done`` of the phase's ``total`` optimiser steps taken."""
        self.step, self.total = steps_done, total

    def advance(self) -> None:
        """The rates of the coming optimiser step."""
        self.step += 1
        self.apply()

    def cut_on_plateau(self) -> None:
        """A plateau: every rate times ``plateau_factor`` from now on in this phase."""
        self.plateau_cuts += 1
        self.apply()

    def state_dict(self) -> dict[str, Any]:
        return {"plateau_cuts": self.plateau_cuts}

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        """What :meth:`state_dict` gave, after the optimiser's own state is restored. None: a ``last.pt`` from
        before the schedule was saved, whose plateau cuts are read off the restored rate (then the plateau
        was the only factor: the other schedules refused it)."""
        if state is not None:
            self.plateau_cuts = int(state["plateau_cuts"])
        elif self.plateau_factor < 1 and self.base_lrs[-1] > 0:
            ratio = self.optimizer.param_groups[-1]["lr"] / self.base_lrs[-1]
            self.plateau_cuts = max(0, round(math.log(ratio) / math.log(self.plateau_factor)))
        self.apply()
