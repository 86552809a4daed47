"""Eqs. 6–7: REINFORCE with the mean of K samples as baseline, or a baseline given by the caller (the agent's
loss; ``drga/learners/reinforce.py`` applies it)."""

from __future__ import annotations

from torch import Tensor


def reinforce_loss(log_prob: Tensor, reward: Tensor, normalize_advantage: bool = True, baseline: Tensor | None = None) -> Tensor:
    # eqs. 6–7: ∇J = E[(R − b) ∇ Σ_t log π(a_t|s_t)], with b the mean reward of the K samples.
    """The loss whose gradient is the REINFORCE estimate.

    ``log_prob`` and ``reward`` are [B, K]: K action samples per sequence, the log-probability
    summed over the sequence's actions. The advantage is detached; with ``normalize_advantage``
    it is divided by its batch standard deviation, which keeps the step size independent of the
    reward's scale. ``baseline`` ([B, 1] or [B, K]) replaces the K samples' mean, e.g. the
    reward of the policy's mean action (self-critical REINFORCE, beyond the paper).
    """
    if log_prob.shape != reward.shape or log_prob.dim() != 2:
        raise ValueError(f"log_prob and reward must both be [B, K], got {tuple(log_prob.shape)} and {tuple(reward.shape)}")
    baseline = reward.mean(dim=1, keepdim=True) if baseline is None else baseline
    advantage = (reward - baseline).detach()
    if normalize_advantage and advantage.numel() > 1:
        advantage = advantage / (advantage.std() + 1e-8)
    return -(advantage * log_prob).mean()
