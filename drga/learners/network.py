"""The network alone (pretraining and the equal-budget baseline): eq. 12 on its own attention, one update per batch."""

from __future__ import annotations

from torch import Tensor

from drga.baselines.protocol import Batch
from drga.learners.context import LearnerContext
from drga.learners.updates import UpdateLearner
from drga.names import Part


class NetworkLearner(UpdateLearner):
    """The phases that train the network without the agent: cross-entropy on the network's own attention (eq. 12)."""

    def update(self, context: LearnerContext, batch: Batch) -> dict[str, Tensor]:
        loss = context.task.loss(context.network, batch)  # eq. 12
        norm = context.optimiser.step({Part.NETWORK: loss})[Part.NETWORK]
        return {"task_loss": loss.detach(), "grad_norm_network": norm}
