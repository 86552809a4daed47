"""DRGA: retrofitting attention networks with a deep-RL attention-adjusting agent.

The method's equations, one implementation each:

- :func:`drga.state.build_agent_state` (eq. 1)
- :func:`agents.gaussian_policy.squash` (eq. 2's squashing)
- :func:`drga.adjust.adjust_attention` (eqs. 3–4)
- :func:`drga.beta.beta_schedule` and :class:`drga.beta.AdjustmentStrength` (β of eq. 3)
- :func:`drga.reward.drga_reward` (eq. 5)
- :func:`agents.reinforce.reinforce_loss` (eqs. 6–7)
"""

from drga.adjust import adjust_attention
from drga.beta import AdjustmentStrength, beta_schedule
from drga.reward import RewardTerms, count_highlighted, drga_reward, saliency_penalty
from drga.state import agent_state_size, build_agent_state

__version__ = "0.1.0"

#: The Gymnasium id of the attention-retrofit environment, registered by ``import drga`` with a
#: string entry point (gymnasium imports ``envs`` only when the environment is made).
ENV_ID = "drga/AttentionRetrofit-v0"


def _register_environment() -> None:
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="envs.attention_retrofit:AttentionRetrofitEnv")


_register_environment()

__all__ = [
    "adjust_attention", "AdjustmentStrength", "beta_schedule", "RewardTerms", "count_highlighted",
    "drga_reward", "saliency_penalty", "agent_state_size", "build_agent_state", "ENV_ID",
]
