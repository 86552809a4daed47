"""The network alone (pretraining and the equal-budget baseline): eq. 12 on its own attention, one update per batch."""

from __future__ import annotations

from drga.baselines.protocol import Batch
from drga.learners.context import LearnerContext, TrainingStep
from drga.learners.updates import UpdateLearner
from drga.names import Part


class NetworkLearner(UpdateLearner):
    """The phases that train the network without the agent: cross-entropy on the network's own attention (eq. 12)."""

    steps: tuple[Part, ...] = (Part.NETWORK,)

    def training_step(self, context: LearnerContext, batch: Batch) -> TrainingStep:
        loss = context.task.loss(context.network, batch)  # eq. 12
        return {Part.NETWORK: loss}, {"task_loss": loss.detach()}
