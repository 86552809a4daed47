"""Learners: how each phase of Algorithm 1 learns. The network alone by eq. 12, REINFORCE, or stable-baselines3's PPO or A2C.

Every phase has a learner (:class:`~drga.learners.context.Learner`; :func:`make_learner` picks it): the
network-only phases the network's (``drga/learners/network.py``), the agent phase the one
``agent.algorithm`` names (:func:`make_agent_learner`, from :func:`drga.registry.register_learner`'s registry: REINFORCE's
:class:`AgentPhaseLearner`, ``drga/learners/reinforce.py``, stable-baselines3's, ``drga/learners/sb3.py``, or yours), co-training
REINFORCE's :class:`CoTrainingLearner`. A learner gets a :class:`~drga.learners.context.LearnerContext`,
not the runner; a batch-by-batch learner's ``training_step(batch)`` returns ``({Part: loss}, statistics)``
and the loop alone steps the losses. The runner never imports stable-baselines3 itself.
"""

from __future__ import annotations

from collections.abc import Callable

from drga.learners.context import Learner
from drga.learners.network import NetworkLearner
from drga.learners.reinforce import AgentPhaseLearner, CoTrainingLearner
from drga.names import Part
from drga.registry import learner_spec, register_learner

__all__ = ["SB3_ALGORITHM_NAMES", "AgentPhaseLearner", "CoTrainingLearner", "Learner", "NetworkLearner",
           "make_agent_learner", "make_learner"]

#: ``agent.algorithm`` values learned by stable-baselines3 (``drga/learners/sb3.py``).
SB3_ALGORITHM_NAMES = ("sb3-ppo", "sb3-a2c")

register_learner("reinforce")(AgentPhaseLearner)


def _sb3_learner(algorithm: str) -> Callable[[], Learner]:
    def build() -> Learner:
        from drga.learners.sb3 import SB3Learner  # stable-baselines3 is imported only when asked for

        return SB3Learner(algorithm)

    build.__doc__ = f"stable-baselines3's {algorithm.removeprefix('sb3-').upper()} on the Gymnasium env (docs/sb3.md)."
    return build


for _algorithm in SB3_ALGORITHM_NAMES:
    register_learner(_algorithm)(_sb3_learner(_algorithm))


def make_agent_learner(algorithm: str) -> Learner:
    """A fresh learner of the agent phase that ``agent.algorithm`` names (:func:`drga.registry.register_learner`)."""
    learner: Learner = learner_spec(algorithm).build()
    return learner


def make_learner(trains: tuple[Part, ...], algorithm: str) -> Learner:
    """The learner of a phase that trains ``trains`` (``drga/runner/phases.py``): the network alone without the
    agent; the agent on the frozen network by ``agent.algorithm``'s learner; co-training by REINFORCE
    (:class:`CoTrainingLearner`)."""
    if Part.AGENT not in trains:
        return NetworkLearner()
    if Part.NETWORK in trains:
        return CoTrainingLearner()
    return make_agent_learner(algorithm)
