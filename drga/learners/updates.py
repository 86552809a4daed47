"""A learner that learns batch by batch (:class:`UpdateLearner`): one update per batch, the loop's pass over the epoch.

The network alone (``drga/learners/network.py``) and REINFORCE (``drga/learners/reinforce.py``) are such learners;
stable-baselines3's learns an epoch on its own (``drga/learners/sb3.py``). An update computes its losses, keyed by
the phase part each trains, and hands them to ``context.optimiser.step``, which alone knows each part's optimiser
and parameters; its statistics are 0-dim tensors, which the loop reads only when it logs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from torch import Tensor

from drga.baselines.protocol import Batch
from drga.learners.context import LearnedEpoch, LearnerContext


class UpdateLearner(ABC):
    """A :class:`~drga.learners.context.Learner` whose epoch is one :meth:`update` per batch (``context.train_by_updates``)."""

    supports_ddp = True

    def train_epoch(self, context: LearnerContext, epoch: int, epochs: int) -> LearnedEpoch:
        return LearnedEpoch(context.train_by_updates(lambda batch: self.update(context, batch), epoch, epochs))

    @abstractmethod
    def update(self, context: LearnerContext, batch: Batch) -> dict[str, Tensor]:
        """One update on ``batch`` (already on the run's device): its losses to ``context.optimiser.step``; its statistics."""
