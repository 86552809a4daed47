"""Learners of the agent phase (phase 2 of Algorithm 1): REINFORCE, or stable-baselines3's PPO or A2C.

REINFORCE (``agent.algorithm = "reinforce"``) is a step, :func:`drga.learners.reinforce.drga_update`,
that the loop runs batch by batch as it runs the other phases' steps; co-training is always that
step. A learner that trains an epoch on its own (:class:`~drga.learners.context.AgentLearner`) is
what :func:`make_agent_learner` returns for the other values; the runner never imports
stable-baselines3 itself. Every learner gets a :class:`~drga.learners.context.LearnerContext`, not
the runner.
"""

from __future__ import annotations

from drga.learners.context import AgentLearner

#: ``agent.algorithm`` values learned by stable-baselines3 (``drga/learners/sb3.py``).
SB3_ALGORITHM_NAMES = ("sb3-ppo", "sb3-a2c")


def make_agent_learner(algorithm: str) -> AgentLearner | None:
    """The learner ``agent.algorithm`` names: None for "reinforce" (the loop steps ``drga_update``), else SB3's."""
    if algorithm == "reinforce":
        return None
    if algorithm in SB3_ALGORITHM_NAMES:
        from drga.learners.sb3 import SB3Learner  # stable-baselines3 is imported only when asked for

        return SB3Learner(algorithm)
    raise ValueError(f"unknown agent.algorithm {algorithm!r}; one of reinforce, {', '.join(SB3_ALGORITHM_NAMES)}")
