"""What a learner is handed by the loop that runs it: :class:`LearnerContext`, a narrow view of the run.

A learner reads the run's modules, settings, reward and batches through it and asks it for two things: an
epoch of batch-by-batch updates (``context.train_by_updates(training_step, ...)``: the loop's pass over the
epoch's batches, which hands each batch to the learner's ``training_step``, steps the losses it returns,
counts the steps and reports the statistics) and a report of training statistics. A learner never steps:
its ``training_step(batch)`` returns ``({Part: loss}, statistics)`` (:data:`TrainingStep`), and the loop
alone steps the losses through its one optimiser table (``drga/runner/optim.py`` · ``OptimiserStep``:
backward, accumulation, clipping, the learning-rate schedule, the Adam steps, β's schedule). It writes
nothing of the run's: what a learner that trains outside the optimiser step changes (SB3's converted
agent, the steps it took) goes back to the loop in :class:`LearnedEpoch`, and the loop applies it. The
protocols live here, below the runner, so that no learner imports the runner (``drga/runner/context.py``
· ``RunContext`` is what the loop hands over).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.config import ExperimentConfig
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.core.reward import Reward
from drga.core.rollout import Rollout
from drga.names import Part

#: What a learner's ``training_step(batch)`` returns: its losses keyed by the phase part each trains (the loop
#: steps them) and its statistics (0-dim tensors, read only when the loop logs).
TrainingStep = tuple[Mapping[Part, Tensor], Mapping[str, Tensor]]


class TaskLosses(Protocol):
    """What a learner asks of the task: eq. 12 on the network's own and on the revised attention (the stable-baselines3
    learners also ask for its episodes: ``drga/runner/task_options.py`` · ``Episodes``)."""

    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor: ...

    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor: ...


class LearnerContext(Protocol):
    """What a learner may read of a run and ask of it."""

    @property
    def config(self) -> ExperimentConfig: ...

    @property
    def task(self) -> TaskLosses: ...

    @property
    def network(self) -> AttentionNetwork: ...

    @property
    def policy(self) -> StatePolicy: ...

    @property
    def strength(self) -> AdjustmentStrength: ...

    @property
    def reward(self) -> Reward:
        """The reward the configuration chose (``reward.name``, ``reward.closeness``), built once per run."""
        ...

    @property
    def device(self) -> torch.device: ...

    @property
    def run_dir(self) -> Path: ...

    @property
    def log(self) -> Callable[[str], None]: ...

    @property
    def train_batches(self) -> Any:
        """This process's training batches (their number is a step's worth of the agent phase)."""
        ...

    @property
    def agent_batches(self) -> Any | None:
        """``data.agent_holdout`` (beyond the paper): the agent's own batches, else None."""
        ...

    @property
    def global_step(self) -> int: ...

    @property
    def phase_step(self) -> int:
        """Updates since the current phase began: the step axis every arm shares (``drga/runner/tensorboard.py``)."""
        ...

    def train_by_updates(self, training_step: Callable[[Batch], TrainingStep], epoch: int, epochs: int) -> dict[str, float]:
        """Epoch ``epoch`` of ``epochs`` batch by batch: each batch of the epoch (the agent's held-out ones in the
        agent phase where ``data.agent_holdout`` keeps some) moved to the device and handed to ``training_step``
        under ``run.precision``'s autocast, and the losses it returns stepped by the loop (each part's gradient
        norm before clipping joins the statistics as ``grad_norm_<part>``); the epoch's mean of each statistic
        (under torchrun: over the processes too). The loop counts the steps and reports the statistics."""
        ...

    def report_scalars(self, phase: str, values: Mapping[str, float], step: int) -> None:
        """Training statistics of ``phase`` at ``step`` (updates since it began), for the run's callbacks."""
        ...


@dataclass
class LearnedEpoch:
    """What an epoch of a learner changed beyond the optimiser step's updates, for the loop to apply."""

    stats: dict[str, float]  #: the epoch's mean statistics
    policy_state: dict[str, Tensor] | None = None  #: the agent's new weights (None: the optimiser step changed them in place)
    #: updates the epoch counts as, added to the run's global step (0 for ``context.train_by_updates``, which counts its own)
    steps: int = 0


class Learner(Protocol):
    """How a phase learns, an epoch at a time: the network alone (``drga/learners/network.py``), REINFORCE's agent
    phase or co-training (``drga/learners/reinforce.py``: two learners) or stable-baselines3 (``drga/learners/sb3.py``;
    the agent phase). :func:`drga.learners.make_learner` picks a phase's."""

    #: Whether it can run as torchrun's data-parallel processes.
    supports_ddp: bool
    #: The parts whose losses its ``training_step`` returns: the loop makes their optimisers, and none other's
    #: (SB3's learner: none, it steps its own).
    steps: tuple[Part, ...]

    def train_epoch(self, context: LearnerContext, epoch: int, epochs: int) -> LearnedEpoch:
        """Learn epoch ``epoch`` of ``epochs``."""
        ...

