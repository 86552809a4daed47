"""DRGA's co-training update on one screen (Algorithm 1, phase 3), to read top to bottom.

The run computes the same update faster (:func:`drga.core.rollout.rollout` and
:class:`drga.learners.reinforce.CoTrainingLearner`): eq. 1's first layer blockwise, every attention site,
multi-dimensional attention, opt-in speed-ups. This file has one scalar attention site, the dense state, and the
paper's reward, and it calls the same one implementation of each equation. tests/unit/test_reference_update.py
holds its losses and gradients equal to the run's on the same batch and seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.adjust import adjust_attention
from drga.core.policy import GaussianPolicy, gaussian_log_prob, squash
from drga.core.reinforce import reinforce_loss
from drga.core.reward import drga_reward
from drga.core.state import agent_state


@dataclass
class UpdateLosses:
    agent: Tensor  #: REINFORCE's loss (eqs. 6–7)
    network: Tensor  #: the task loss on the revised attention (eq. 12)
    reward: Tensor  #: R per (sequence, sample), [B, K] (eq. 5)


def co_training_update(
    network: AttentionNetwork, policy: GaussianPolicy, batch: Batch, beta: Tensor, *, samples: int = 5,
    gamma: float = 0.2, sqrt_l0: float = 0.2, delta: float = 0.85, normalize_advantage: bool = True,
    optimizers: tuple[torch.optim.Optimizer, ...] = (),
) -> UpdateLosses:
    """One update of network, agent and β on ``batch`` with K = ``samples`` action samples per sentence; the
    ``optimizers`` (the network's with β's factor, the agent's) take their step when given."""
    k = samples
    encoding = network.encode(batch)                               # the encoder runs once: the K samples reuse it
    (site,) = encoding.sites                                       # α [B, 1, T], True on real tokens in mask
    alpha, mask = site.attention, site.mask
    real = mask.flatten().nonzero().squeeze(1)                     # the agent acts on the N real tokens only
    states = agent_state(site).dense().detach().flatten(0, 2)[real]  # eq. 1: s_t = [w_t; h_t; α_t h_t; h^s; h̄; ĥ; u], [N, S]
    pi = policy.distribution(states)                               # eq. 2: π(·|s_t) = N(μ(s_t), σ(s_t)), [N, 1]

    # eq. 2: x ~ π, K times (drawn over every position, padding included, as the run draws them: the same seed, the same x)
    noise = pi.mean.new_empty(k, mask.numel(), 1).normal_()[:, real]
    x = (pi.mean + pi.stddev * noise).detach()                     # [K, N, 1]
    a = squash(x)                                                  # a_t = 2·sigmoid(x_t) − 1 ∈ (−1, 1)
    log_pi = gaussian_log_prob(pi, x)                              # log π(x_t | s_t), [K, N]

    # eqs. 3–4: α*_t = α_t + β·a_t, non-positive ones set to 0, renormalised; per (sentence, sample), [B·K, 1, T]
    action = a.new_zeros(k, mask.numel()).index_copy_(1, real, a.squeeze(-1))
    action = action.view(k, *mask.shape).transpose(0, 1)           # [B, K, 1, T], 0 on padding
    revised = adjust_attention(alpha.unsqueeze(1), action, beta, mask.unsqueeze(1)).flatten(0, 1)

    output = network.predict(encoding.repeat_interleave(k), [revised])  # the network predicts from α′
    labels = batch.labels.repeat_interleave(k, dim=0)
    log_likelihood = network.log_likelihood(output, labels)        # log P(y | X, α′), [B·K]

    with torch.no_grad():                                          # eq. 5: R = log P(y|X) − γ·(N/L + L0·L/N)
        masks = mask.repeat_interleave(k, dim=0)
        reward = drga_reward(log_likelihood, [revised], [masks], gamma, sqrt_l0, delta).reward.view(-1, k)

    # eqs. 6–7: ∇J = E[(R − mean_K R) ∇ Σ_t log π(a_t|s_t)], the sum over each sentence's tokens
    sentence = real // (mask.numel() // batch.size)
    log_prob = log_pi.new_zeros(k, batch.size).index_add_(1, sentence, log_pi).t()  # [B, K]
    agent_loss = reinforce_loss(log_prob, reward, normalize_advantage)

    network_loss = -log_likelihood.mean()                          # eq. 12 on α′, over the B·K rows; trains β's factor too

    if optimizers:                                                 # one backward pass for both: their parameters do not overlap
        for optimizer in optimizers:
            optimizer.zero_grad()
        (agent_loss + network_loss).backward()
        for optimizer in optimizers:
            optimizer.step()
    return UpdateLosses(agent_loss, network_loss, reward)
