"""Policies and learners for the attention-adjusting agent. Depends on torch only."""

from drga.agents.gaussian_policy import GaussianPolicy, PolicyOutput, squash
from drga.agents.reinforce import reinforce_loss

__all__ = ["GaussianPolicy", "PolicyOutput", "squash", "reinforce_loss"]
