"""What a network, a reward or a task of your own imports: one module (docs/extending.md).

- a network: :class:`AttentionNetwork` and what its ``encode`` returns (:class:`NetworkEncoding`, one
  :class:`AttentionSite` per attention), :class:`Batch`, :func:`masked_softmax`, and :func:`register_network`;
  the built-in :class:`LSTMSelfAttention` to build on;
- a reward: :class:`RewardTerms`, :func:`count_highlighted` (eq. 5's N), :func:`drga_reward` (eq. 5 itself), the
  :class:`Reward` protocol, and :func:`register_reward`;
- an agent-phase learner: :func:`register_learner` on a class or function giving a :class:`Learner` (``agent.algorithm``);
- a task: one :class:`Task` subclass of nine hooks decorated with :func:`register_task` (its report: :class:`TaskReport`),
  which may add a capability by inheriting its class (:class:`EpochHooks`, :class:`RunChecks`, :class:`Tunable`,
  :class:`ShardedEvaluation`, :class:`Episodes`);
  classification's (:class:`ClassificationTask`) to build on, the runner (:class:`PhaseRunner`), with its configuration
  (:class:`ExperimentConfig`, :func:`load_config`, :func:`config_to_toml`, :data:`CLASSIFICATION_FLAGS`) and its
  ``drga evaluate`` (:func:`evaluate_classification_checkpoint`).

Any task's checkpoint is read by :func:`drga.load`.

Each name is the toolkit's own, imported from where it lives when first used (PEP 562), so that a plug-in
importing a reward's names does not load the runner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from drga.baselines.lstm_sa import LSTMSelfAttention
    from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
    from drga.config import CLASSIFICATION_FLAGS, ExperimentConfig, config_to_toml, load_config
    from drga.core.reward import Reward, RewardTerms, count_highlighted, drga_reward
    from drga.learners.context import Learner
    from drga.registry import TaskReport, register_learner, register_network, register_reward, register_task
    from drga.runner.loop import PhaseRunner
    from drga.runner.task import Task
    from drga.runner.task_options import Episodes, EpochHooks, RunChecks, ShardedEvaluation, Tunable
    from drga.tasks.classification.commands import evaluate_classification_checkpoint
    from drga.tasks.classification.task import ClassificationTask

#: Each exported name → (its module, its name there).
_EXPORTS: dict[str, tuple[str, str]] = {
    **{name: ("drga.baselines.protocol", name) for name in ("AttentionNetwork", "AttentionSite", "Batch", "NetworkEncoding",
                                                            "masked_softmax")},
    "LSTMSelfAttention": ("drga.baselines.lstm_sa", "LSTMSelfAttention"),
    **{name: ("drga.core.reward", name) for name in ("Reward", "RewardTerms", "count_highlighted", "drga_reward")},
    **{name: ("drga.registry", name) for name in ("register_learner", "register_network", "register_reward",
                                                  "register_task", "TaskReport")},
    "Learner": ("drga.learners.context", "Learner"),
    **{name: ("drga.config", name) for name in ("CLASSIFICATION_FLAGS", "ExperimentConfig", "config_to_toml", "load_config")},
    "PhaseRunner": ("drga.runner.loop", "PhaseRunner"),
    "Task": ("drga.runner.task", "Task"),
    **{name: ("drga.runner.task_options", name) for name in ("EpochHooks", "Episodes", "RunChecks", "Tunable")},
    "ShardedEvaluation": ("drga.runner.sharding", "ShardedEvaluation"),
    "ClassificationTask": ("drga.tasks.classification.task", "ClassificationTask"),
    "evaluate_classification_checkpoint": ("drga.tasks.classification.commands", "evaluate_classification_checkpoint"),
}

__all__ = [
    "AttentionNetwork",
    "AttentionSite",
    "Batch",
    "CLASSIFICATION_FLAGS",
    "ClassificationTask",
    "EpochHooks",
    "Episodes",
    "ExperimentConfig",
    "LSTMSelfAttention",
    "Learner",
    "NetworkEncoding",
    "PhaseRunner",
    "Reward",
    "RewardTerms",
    "RunChecks",
    "ShardedEvaluation",
    "Task",
    "TaskReport",
    "Tunable",
    "config_to_toml",
    "count_highlighted",
    "drga_reward",
    "evaluate_classification_checkpoint",
    "load_config",
    "masked_softmax",
    "register_learner",
    "register_network",
    "register_reward",
    "register_task",
]



def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module, attribute = _EXPORTS[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'drga.extend' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
