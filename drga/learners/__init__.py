"""Learners: how each phase of Algorithm 1 learns. The network alone by eq. 12, REINFORCE, or stable-baselines3's PPO or A2C.

Every phase has a learner (:class:`~drga.learners.context.Learner`; :func:`make_learner` picks it): the
network-only phases the network's (``drga/learners/network.py``), the agent phase the one
``agent.algorithm`` names (:func:`make_agent_learner`: REINFORCE's :class:`AgentPhaseLearner`,
``drga/learners/reinforce.py``, or stable-baselines3's, ``drga/learners/sb3.py``), co-training
REINFORCE's :class:`CoTrainingLearner`. A learner gets a :class:`~drga.learners.context.LearnerContext`,
not the runner; a batch-by-batch learner's ``training_step(batch)`` returns ``({Part: loss}, statistics)``
and the loop alone steps the losses. The runner never imports stable-baselines3 itself.
"""

from __future__ import annotations

from drga.learners.context import Learner
from drga.learners.network import NetworkLearner
from drga.learners.reinforce import AgentPhaseLearner, CoTrainingLearner
from drga.names import Part

__all__ = ["SB3_ALGORITHM_NAMES", "AgentPhaseLearner", "CoTrainingLearner", "Learner", "NetworkLearner",
           "make_agent_learner", "make_learner"]

#: ``agent.algorithm`` values learned by stable-baselines3 (``drga/learners/sb3.py``).
SB3_ALGORITHM_NAMES = ("sb3-ppo", "sb3-a2c")


def make_agent_learner(algorithm: str) -> Learner:
    """The learner of the agent phase that ``agent.algorithm`` names: REINFORCE for "reinforce", else SB3's."""
    if algorithm == "reinforce":
        return AgentPhaseLearner()
    if algorithm in SB3_ALGORITHM_NAMES:
        from drga.learners.sb3 import SB3Learner  # stable-baselines3 is imported only when asked for

        return SB3Learner(algorithm)
    raise ValueError(f"unknown agent.algorithm {algorithm!r}; one of reinforce, {', '.join(SB3_ALGORITHM_NAMES)}")


def make_learner(trains: tuple[Part, ...], algorithm: str) -> Learner:
    """The learner of a phase that trains ``trains`` (``drga/runner/phases.py``): the network alone without the
    agent; the agent on the frozen network by ``agent.algorithm``'s learner; co-training by REINFORCE
    (:class:`CoTrainingLearner`)."""
    if Part.AGENT not in trains:
        return NetworkLearner()
    if Part.NETWORK in trains:
        return CoTrainingLearner()
    return make_agent_learner(algorithm)
