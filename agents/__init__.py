"""Policies and learners for the attention-adjusting agent. Depends on torch only."""

from agents.gaussian_policy import GaussianPolicy, PolicyOutput, squash
from agents.reinforce import reinforce_loss

__all__ = ["GaussianPolicy", "PolicyOutput", "squash", "reinforce_loss"]
