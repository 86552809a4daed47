"""Policies and learners for the attention-adjusting agent. Depends on torch only."""

from drga.agents.gaussian_policy import AgentPolicy, BlockwiseState, GaussianPolicy, squash
from drga.agents.reinforce import reinforce_loss

__all__ = ["AgentPolicy", "BlockwiseState", "GaussianPolicy", "squash", "reinforce_loss"]
