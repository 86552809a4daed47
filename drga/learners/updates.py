"""A learner that learns batch by batch (:class:`UpdateLearner`): one training step per batch, the loop's pass over the epoch.

The network alone (``drga/learners/network.py``) and REINFORCE's two learners (``drga/learners/reinforce.py``) are
such learners; stable-baselines3's learns an epoch on its own (``drga/learners/sb3.py``). A training step computes
its losses, keyed by the phase part each trains, and returns them with its statistics; the loop alone steps them
(``drga/runner/optim.py`` · ``OptimiserStep``, which alone knows each part's optimiser and parameters). The
statistics are 0-dim tensors, which the loop reads only when it logs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from drga.baselines.protocol import Batch
from drga.learners.context import LearnedEpoch, LearnerContext, TrainingStep
from drga.names import Part


class UpdateLearner(ABC):
    """A :class:`~drga.learners.context.Learner` whose epoch is one :meth:`training_step` per batch (``context.train_by_updates``)."""

    supports_ddp = True
    steps: tuple[Part, ...] = ()

    def train_epoch(self, context: LearnerContext, epoch: int, epochs: int) -> LearnedEpoch:
        return LearnedEpoch(context.train_by_updates(lambda batch: self.training_step(context, batch), epoch, epochs))

    @abstractmethod
    def training_step(self, context: LearnerContext, batch: Batch) -> TrainingStep:
        """One step on ``batch`` (already on the run's device): its losses, keyed by the parts of :attr:`steps`, for
        the loop to step, and its statistics."""
