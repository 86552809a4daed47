"""What a learner is handed by the loop that runs it: :class:`LearnerContext`, a narrow view of the run.

A learner reads the run's modules, settings and batches through it and asks it for two things: an
optimiser step of its losses (``context.optimiser.step``: backward, accumulation, clipping, the
learning-rate schedule, the Adam steps) and a report of training statistics. It writes nothing of the
run's: what a learner that trains outside the optimiser step changes (SB3's converted agent, the
steps it took) goes back to the loop in :class:`LearnedEpoch`, and the loop applies it. The
protocols live here, below the runner, so that no learner imports the runner
(``drga/runner/context.py`` · ``RunContext`` is what the loop hands over).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from drga.agents.gaussian_policy import GaussianPolicy
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.beta import AdjustmentStrength
from drga.config import ExperimentConfig
from drga.rollout import Rollout


class TaskLosses(Protocol):
    """What a learner asks of the task: eq. 12 on the network's own and on the revised attention, and the episodes."""

    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor: ...

    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor: ...

    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]: ...


class StepsLosses(Protocol):
    """The optimiser step a learner hands its losses to (``drga/runner/optim.py`` · ``OptimiserStep``)."""

    @property
    def network_optimizer(self) -> torch.optim.Optimizer | None: ...

    @property
    def agent_optimizer(self) -> torch.optim.Optimizer | None: ...

    def step(self, loss: Tensor, groups: Sequence[tuple[torch.optim.Optimizer, Iterable[nn.Parameter]]]) -> list[Tensor]:
        """Back-propagate ``loss`` and step each (optimiser, parameters) group; each group's gradient norm."""
        ...


class LearnerContext(Protocol):
    """What a learner may read of a run and ask of it."""

    @property
    def config(self) -> ExperimentConfig: ...

    @property
    def task(self) -> TaskLosses: ...

    @property
    def network(self) -> AttentionNetwork: ...

    @property
    def policy(self) -> GaussianPolicy: ...

    @property
    def strength(self) -> AdjustmentStrength: ...

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
        """Updates since the current phase began: the step axis every arm shares (``drga/monitor.py``)."""
        ...

    @property
    def optimiser(self) -> StepsLosses: ...

    def report_scalars(self, phase: str, values: Mapping[str, float], step: int) -> None:
        """Training statistics of ``phase`` at ``step`` (updates since it began), for the run's callbacks."""
        ...


@dataclass
class LearnedEpoch:
    """What an epoch of a learner that trains on its own (SB3) changed, for the loop to apply."""

    stats: dict[str, float]  #: the epoch's mean statistics
    policy_state: dict[str, Tensor] | None = None  #: the agent's new weights (None: the optimiser step changed them in place)
    steps: int = 0  #: updates the epoch counts as, added to the run's global step


class AgentLearner(Protocol):
    """A learner of the agent phase other than REINFORCE's batch-by-batch :func:`~drga.learners.reinforce.drga_update`."""

    #: Whether it can run as torchrun's data-parallel processes.
    supports_ddp: bool

    def train_epoch(self, context: LearnerContext, epoch: int, epochs: int) -> LearnedEpoch:
        """Learn epoch ``epoch`` of ``epochs``' worth on the frozen network."""
        ...
