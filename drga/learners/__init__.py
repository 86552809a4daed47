"""Learners of the agent phase (phase 2 of Algorithm 1): REINFORCE, or stable-baselines3's PPO or A2C.

The runner asks :func:`make_agent_learner` for the learner ``agent.algorithm`` names and calls its
``train_epoch`` for every epoch of the agent phase; it never imports stable-baselines3 itself.
Co-training is always REINFORCE (:func:`drga.learners.reinforce.drga_update`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from drga.runner.loop import PhaseRunner
    from drga.runner.phases import Phase


class AgentLearner(Protocol):
    """What the runner needs of a learner of the agent phase."""

    #: Whether it can run as torchrun's data-parallel processes.
    supports_ddp: bool

    def train_epoch(self, runner: PhaseRunner, phase: Phase, epoch: int, epochs: int) -> dict[str, float]:
        """Learn one epoch's worth on the frozen network; the epoch's mean statistics."""
        ...


class ReinforceLearner:
    """The paper's learner: the runner's batched steps, each a :func:`~drga.learners.reinforce.drga_update`."""

    supports_ddp = True

    def train_epoch(self, runner: PhaseRunner, phase: Phase, epoch: int, epochs: int) -> dict[str, float]:
        return runner.train_epoch_by_steps(phase, epoch, epochs)


#: ``agent.algorithm`` values learned by stable-baselines3 (``drga/learners/sb3.py``).
SB3_ALGORITHM_NAMES = ("sb3-ppo", "sb3-a2c")


def make_agent_learner(algorithm: str) -> AgentLearner:
    """The learner ``agent.algorithm`` names: "reinforce", "sb3-ppo" or "sb3-a2c"."""
    if algorithm == "reinforce":
        return ReinforceLearner()
    if algorithm in SB3_ALGORITHM_NAMES:
        from drga.learners.sb3 import SB3Learner  # stable-baselines3 is imported only when asked for

        return SB3Learner(algorithm)
    raise ValueError(f"unknown agent.algorithm {algorithm!r}; one of reinforce, {', '.join(SB3_ALGORITHM_NAMES)}")
