"""DRGA: retrofitting attention networks with a deep-RL attention-adjusting agent.

The method's equations, one implementation each:

- :func:`drga.core.state.build_agent_state` (eq. 1)
- :func:`drga.core.policy.squash` and :class:`drga.core.policy.GaussianPolicy` (eq. 2)
- :func:`drga.core.adjust.adjust_attention` (eqs. 3–4)
- :func:`drga.core.beta.beta_schedule` and :class:`drga.core.beta.AdjustmentStrength` (β of eq. 3)
- :func:`drga.core.reward.drga_reward` (eq. 5)
- :func:`drga.core.reinforce.reinforce_loss` (eqs. 6–7)

:func:`drga.load_config` and :func:`drga.train` (a run's configuration, for the task that trains its network, and
its training: what ``drga train`` does), and :func:`drga.load`: a trained checkpoint of any task, ready for inference
(a classifier's: ``drga.load(path).predict(texts)``).

The plug points (docs/extending.md): :func:`drga.registry.register_network` (an attention network),
:func:`drga.registry.register_reward` (a :class:`drga.core.reward.Reward`, chosen by ``reward.name``),
:func:`drga.registry.register_learner` (the agent phase's learner, chosen by ``agent.algorithm``) and
:func:`drga.registry.register_task` (a task: its configuration, trainer, checkpoints and commands).
"""

import importlib
from typing import Any

#: Exported names → their modules, imported when first used (PEP 562), so that ``import drga``
#: and ``drga --help`` do not load torch.
_EXPORTS = {
    "adjust_attention": "drga.core.adjust", "AdjustmentStrength": "drga.core.beta", "beta_schedule": "drga.core.beta",
    "RewardTerms": "drga.core.reward", "count_highlighted": "drga.core.reward", "drga_reward": "drga.core.reward",
    "saliency_penalty": "drga.core.reward", "agent_state_size": "drga.core.state", "build_agent_state": "drga.core.state",
    # drga.load(checkpoint).predict(texts); config = drga.load_config(path, overrides); drga.train(config)
    "load": "drga.api", "load_config": "drga.api", "train": "drga.api",
    "register_network": "drga.registry", "register_reward": "drga.registry", "register_task": "drga.registry",
    "register_learner": "drga.registry",
    "Reward": "drga.core.reward",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'drga' has no attribute {name!r}")

__version__ = "0.1.0"

#: The Gymnasium id of the attention-retrofit environment: ``import drga.envs`` registers it (``drga.envs.register``),
#: or ``gymnasium.make("drga.envs:drga/AttentionRetrofit-v0", ...)`` imports that module first.
ENV_ID = "drga/AttentionRetrofit-v0"

__all__ = [
    "adjust_attention", "AdjustmentStrength", "beta_schedule", "RewardTerms", "count_highlighted",
    "drga_reward", "saliency_penalty", "agent_state_size", "build_agent_state", "ENV_ID", "load", "load_config", "train",
    "register_learner", "register_network", "register_reward", "register_task", "Reward",
]
