"""One DRGA update (eqs. 2–7 and 12) of the agent and co-training phases, top to bottom.

Encode the batch once; the K action samples of each sequence reuse that encoding (eq. 1's states,
eq. 2's actions, eqs. 3–4's revised attention, the prediction and eq. 5's reward:
:func:`drga.core.rollout.rollout`). REINFORCE (eqs. 6–7) with the mean of the K rewards as baseline
trains the agent; in co-training, eq. 12 on the revised attention trains the network and β's
learned factor in the same backward pass.

Beyond the paper, each off by default: ``data.agent_holdout`` (the agent learns on sentences
the network is not trained on), ``agent.reward_baseline = "self-critical"`` (the baseline is the
reward of the mean action) and ``train.original_attention_loss`` (the network also trained on its
own attention). The agent learns from the chosen reward's objective (``terms.objective``: eq. 5, less
``reward.closeness`` × TV(α, α′) when that is set; ``drga/core/reward.py``), as the SB3 learners do.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from drga.agents.reinforce import reinforce_loss
from drga.baselines.protocol import Batch
from drga.core.rollout import Rollout, rollout
from drga.learners.context import LearnerContext
from drga.learners.updates import UpdateLearner
from drga.names import Part


def drga_update(context: LearnerContext, cotrain: bool, batch: Any) -> dict[str, Tensor]:
    """One update of the agent (agent phase) or, with ``cotrain``, of agent, network and β (co-training); its statistics."""
    config, network, policy = context.config, context.network, context.policy
    k, reward = config.agent.samples, config.reward
    beta = context.strength()
    with torch.set_grad_enabled(cotrain):  # the encoder runs once: the K samples share its output
        encoding = network.encode(batch)
    step_beta = beta if cotrain else beta.detach()
    r = rollout(network, policy, batch, step_beta, reward=reward, samples=k, encoding=encoding,
                task_samples=config.train.task_loss_samples)                       # eqs. 1–5
    acting, acting_batch, acting_encoding = r, batch, encoding  # the rollout the agent learns from
    if cotrain and context.agent_batches is not None:  # beyond the paper: sentences the network never fit
        acting_batch = context.agent_batches.batch_at(context.global_step).to(batch.tokens.device)
        with torch.no_grad():
            acting_encoding = network.encode(acting_batch)
        acting = rollout(network, policy, acting_batch, beta.detach(), reward=reward, samples=k, encoding=acting_encoding)
    agent_reward = acting.terms.objective  # the chosen reward's (drga/core/reward.py: eq. 5, less reward.closeness × TV(α, α′))
    baseline = self_critical_baseline(context, acting_batch, acting_encoding, step_beta) \
        if config.agent.reward_baseline == "self-critical" else None
    agent_loss = reinforce_loss(acting.log_prob.view(-1, k), agent_reward.view(-1, k), config.agent.normalize_advantage, baseline)
    agent_loss = agent_loss - config.agent.entropy_coef * r.entropy                  # eqs. 6–7
    if cotrain:
        task_loss = context.task.revised_loss(r, batch)                                # eq. 12, on α′
        loss = task_loss
        if config.train.original_attention_loss > 0:  # beyond the paper: the network's own attention too
            loss = loss + config.train.original_attention_loss * context.task.loss(network, batch)
        # one backward; each part clipped on its own, then stepped; β's schedule advances (drga/runner/optim.py)
        norms = context.optimiser.step({Part.NETWORK: loss, Part.AGENT: agent_loss})
        network_norm, agent_norm = norms[Part.NETWORK], norms[Part.AGENT]
    else:
        with torch.no_grad():
            task_loss = context.task.revised_loss(r, batch)  # reported only: the network is frozen
        network_norm = None
        agent_norm = context.optimiser.step({Part.AGENT: agent_loss})[Part.AGENT]
    return update_statistics(context, acting, agent_reward, baseline, task_loss, agent_loss, beta, agent_norm, network_norm)


class ReinforceLearner(UpdateLearner):
    """REINFORCE (eqs. 6–7), one :func:`drga_update` per batch: the agent phase's learner for ``agent.algorithm =
    "reinforce"`` (the network frozen), and co-training's always (``cotrain``: the network and β learn too)."""

    def __init__(self, cotrain: bool = False):
        self.cotrain = cotrain

    def update(self, context: LearnerContext, batch: Batch) -> dict[str, Tensor]:
        return drga_update(context, self.cotrain, batch)


def self_critical_baseline(context: LearnerContext, batch: Any, encoding: Any, beta: Tensor) -> Tensor:
    """Beyond the paper: the reward of the agent's mean action, [B, 1], as REINFORCE's baseline."""
    with torch.no_grad():
        greedy = rollout(context.network, context.policy, batch, beta.detach(), reward=context.config.reward, deterministic=True,
                         encoding=encoding)
    return greedy.terms.objective.view(-1, 1)


def update_statistics(
    context: LearnerContext, acting: Rollout, agent_reward: Tensor, baseline: Tensor | None, task_loss: Tensor,
    agent_loss: Tensor, beta: Tensor, agent_norm: Tensor | None, network_norm: Tensor | None,
) -> dict[str, Tensor]:
    """What an update logs: the losses, eq. 5's terms, β, and the agent's own signals (``drga/runner/tensorboard.py``).

    0-dim tensors on the run's device, not Python numbers: reading a number waits for the device,
    so the loop reads them only when it logs (``PhaseRunner.train_by_updates``).
    """
    k, terms = context.config.agent.samples, acting.terms
    rewards = agent_reward.view(-1, k)
    advantage = rewards - (rewards.mean(dim=1, keepdim=True) if baseline is None else baseline)
    signals = {
        "policy_entropy": acting.entropy.detach(),
        "zeroed_fraction": acting.zeroed_fraction,
        "advantage_std": advantage.std() if advantage.numel() > 1 else advantage.new_zeros(()),
        "grad_norm_agent": agent_norm if agent_norm is not None else rewards.new_full((), float("nan")),
        **({"grad_norm_network": network_norm} if network_norm is not None else {}),
    }
    return {
        **signals,
        "task_loss": task_loss.detach(),
        "agent_loss": agent_loss.detach(),
        "reward": terms.reward.mean(),
        "reward_log_likelihood": terms.log_likelihood.mean(),
        "reward_penalty": (terms.penalty_weight * terms.penalty).mean(),  # the reward's own weighted penalty
        "highlighted_fraction": terms.highlighted_fraction.mean(),
        "beta": beta.detach(),
        "policy_sigma": acting.policy_std,
        "attention_shift": acting.shift.mean(),
    }
