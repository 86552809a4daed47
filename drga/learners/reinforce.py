"""REINFORCE's two learners, each one DRGA training step per batch, read top to bottom: the agent phase
(:class:`AgentPhaseLearner`: the agent alone, the network frozen) and co-training (:class:`CoTrainingLearner`:
agent, network and β together).

Encode the batch once; the K action samples of each sequence reuse that encoding (eq. 1's states,
eq. 2's actions, eqs. 3–4's revised attention, the prediction and eq. 5's reward:
:func:`drga.core.rollout.rollout`). REINFORCE (eqs. 6–7) with the mean of the K rewards as baseline
trains the agent; in co-training, eq. 12 on the revised attention trains the network and β's
learned factor in the same backward pass. A step returns its losses keyed by part; the loop steps them.

Beyond the paper, each off by default: ``data.agent_holdout`` (the agent learns on sentences
the network is not trained on), ``agent.reward_baseline = "self-critical"`` (the baseline is the
reward of the mean action) and ``train.original_attention_loss`` (the network also trained on its
own attention). The agent learns from the chosen reward's objective (``terms.objective``: eq. 5, less
``reward.closeness`` × TV(α, α′) when that is set; ``drga/core/reward.py``), as the SB3 learners do;
the reward is the run's (``context.reward``, built once).
"""

from __future__ import annotations

from typing import Any, TypedDict

import torch
from torch import Tensor

from drga.baselines.protocol import Batch, NetworkEncoding
from drga.core.reinforce import reinforce_loss
from drga.core.rollout import Rollout, rollout
from drga.learners.context import LearnerContext, TrainingStep
from drga.learners.updates import UpdateLearner
from drga.names import Part


class AgentPhaseLearner(UpdateLearner):
    """The agent phase of ``agent.algorithm = "reinforce"``: REINFORCE (eqs. 6–7) on the frozen network."""

    steps: tuple[Part, ...] = (Part.AGENT,)

    def training_step(self, context: LearnerContext, batch: Batch) -> TrainingStep:
        config, network, policy = context.config, context.network, context.policy
        beta = context.strength()
        with torch.no_grad():  # the encoder runs once, frozen: the K samples share its output
            encoding = network.encode(batch)
        r = rollout(network, policy, batch, beta.detach(), reward=context.reward, samples=config.agent.samples, encoding=encoding,
                    task_samples=config.train.task_loss_samples, **authors_options(context))  # eqs. 1–5
        agent_loss, agent_reward, baseline = agent_objective(context, r, r, batch, encoding, beta.detach())  # eqs. 6–7
        with torch.no_grad():
            task_loss = context.task.revised_loss(r, batch)  # reported only: the network is frozen
        return {Part.AGENT: agent_loss}, update_statistics(context, r, agent_reward, baseline, task_loss, agent_loss, beta)


class CoTrainingLearner(UpdateLearner):
    """Co-training: REINFORCE (eqs. 6–7) trains the agent, and eq. 12 on the revised attention the network and β's
    learned factor, in one backward pass."""

    steps: tuple[Part, ...] = (Part.NETWORK, Part.AGENT)

    def training_step(self, context: LearnerContext, batch: Batch) -> TrainingStep:
        config, network, policy = context.config, context.network, context.policy
        k, beta = config.agent.samples, context.strength()
        encoding = network.encode(batch)  # once, with its gradient: the K samples share its output
        r = rollout(network, policy, batch, beta, reward=context.reward, samples=k, encoding=encoding,
                    task_samples=config.train.task_loss_samples, **authors_options(context))  # eqs. 1–5
        acting, acting_batch, acting_encoding = r, batch, encoding  # the rollout the agent learns from
        if context.agent_batches is not None:  # beyond the paper: sentences the network never fit
            acting_batch = context.agent_batches.batch_at(context.global_step).to(batch.tokens.device)
            with torch.no_grad():
                acting_encoding = network.encode(acting_batch)
            acting = rollout(network, policy, acting_batch, beta.detach(), reward=context.reward, samples=k, encoding=acting_encoding,
                             **authors_options(context))
        agent_loss, agent_reward, baseline = agent_objective(context, r, acting, acting_batch, acting_encoding, beta)  # eqs. 6–7
        task_loss = context.task.revised_loss(r, batch)                                # eq. 12, on α′
        loss = task_loss
        if config.train.original_attention_loss > 0:  # beyond the paper: the network's own attention too
            loss = loss + config.train.original_attention_loss * context.task.loss(network, batch)
        statistics = update_statistics(context, acting, agent_reward, baseline, task_loss, agent_loss, beta)
        return {Part.NETWORK: loss, Part.AGENT: agent_loss}, statistics


class AuthorsOptions(TypedDict):
    flipped_sampling: float
    raised_penalty: float


def authors_options(context: LearnerContext) -> AuthorsOptions:
    """The authors' code's sampling rule and raised-token cost (``agent.flipped_sampling``, ``agent.raised_penalty``; 0: off)."""
    return {"flipped_sampling": context.config.agent.flipped_sampling, "raised_penalty": context.config.agent.raised_penalty}


def agent_objective(
    context: LearnerContext, r: Rollout, acting: Rollout, batch: Batch, encoding: NetworkEncoding, beta: Tensor,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """REINFORCE's loss on the rollout ``acting`` (eqs. 6–7: the chosen reward's objective against the baseline, less
    the entropy bonus of ``r``, the batch's own rollout), the reward it learns from and the baseline (None: the mean of K)."""
    config, k = context.config, context.config.agent.samples
    agent_reward = acting.terms.objective  # the chosen reward's (drga/core/reward.py: eq. 5, less reward.closeness × TV(α, α′))
    baseline = self_critical_baseline(context, batch, encoding, beta) if config.agent.reward_baseline == "self-critical" else None
    agent_loss = reinforce_loss(acting.log_prob.view(-1, k), agent_reward.view(-1, k), config.agent.normalize_advantage, baseline)
    return agent_loss - config.agent.entropy_coef * r.entropy, agent_reward, baseline


def self_critical_baseline(context: LearnerContext, batch: Any, encoding: Any, beta: Tensor) -> Tensor:
    """Beyond the paper: the reward of the agent's mean action, [B, 1], as REINFORCE's baseline."""
    with torch.no_grad():
        greedy = rollout(context.network, context.policy, batch, beta.detach(), reward=context.reward, deterministic=True,
                         encoding=encoding, raised_penalty=context.config.agent.raised_penalty)
    return greedy.terms.objective.view(-1, 1)


def update_statistics(
    context: LearnerContext, acting: Rollout, agent_reward: Tensor, baseline: Tensor | None, task_loss: Tensor,
    agent_loss: Tensor, beta: Tensor,
) -> dict[str, Tensor]:
    """What a step logs: the losses, eq. 5's terms, β, and the agent's own signals (``drga/runner/tensorboard.py``);
    the loop adds each part's gradient norm (``grad_norm_agent``, ``grad_norm_network``).

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
