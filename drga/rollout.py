"""One DRGA pass over a batch: encode once, act K times, adjust, predict, reward.

This is the whole algorithm on tensors; the trainer only adds optimisers and bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from agents.gaussian_policy import GaussianPolicy, squash
from baselines.protocol import AttentionNetwork, Batch, NetworkEncoding
from drga.adjust import adjust_attention
from drga.reward import RewardTerms, drga_reward
from drga.state import build_agent_state


@dataclass
class Rollout:
    """Results for B·K (sequence, sample) pairs, ordered [seq0 × K, seq1 × K, ...]."""

    log_prob: Tensor  #: Σ_t log π(a_t|s_t) over every adjusted token, [B·K]
    log_likelihood: Tensor  #: log P(y|X) under the revised attention, with gradient, [B·K]
    terms: RewardTerms  #: eq. 5 and its parts (detached), [B·K]
    output: Tensor  #: network output under the revised attention
    original: list[Tensor]  #: α per site, [B, K_site, T(, H)]
    revised: list[Tensor]  #: α′ per site, [B·K, K_site, T(, H)]
    policy_std: Tensor  #: mean σ over real tokens (for logging)
    entropy: Tensor  #: mean policy entropy per token


def rollout(
    network: AttentionNetwork,
    policy: GaussianPolicy,
    batch: Batch,
    beta: Tensor,
    samples: int,
    gamma: float,
    sqrt_l0: float,
    delta: float,
    deterministic: bool = False,
    encoding: NetworkEncoding | None = None,
) -> Rollout:
    encoding = encoding if encoding is not None else network.encode(batch)  # the encoder runs once per batch
    k = 1 if deterministic else samples
    log_prob = torch.zeros(batch.size, k, device=batch.tokens.device)
    revised, std_sum, entropy_sum, positions = [], 0.0, 0.0, 0.0
    repeated = encoding.repeat_interleave(k)
    for site, site_repeated in zip(encoding.sites, repeated.sites):
        state = build_agent_state(site).detach()  # eq. 1, [B, K_site, T, S]
        dist = policy.distribution(state)
        x = dist.mean.unsqueeze(0) if deterministic else dist.sample((k,))  # eq. 2, [k, B, K_site, T, A]
        real = site.mask.unsqueeze(0).unsqueeze(-1).to(x.dtype)
        log_prob = log_prob + (dist.log_prob(x) * real).sum(dim=(2, 3, 4)).transpose(0, 1)
        action = policy_action(x, site.multi_dimensional).transpose(0, 1).flatten(0, 1)  # [B·k, K_site, T(, A)]
        revised.append(adjust_attention(site_repeated.attention, action, beta, site_repeated.mask))  # eqs. 3–4
        std_sum = std_sum + (dist.stddev * real[0]).sum()
        entropy_sum = entropy_sum + (dist.entropy() * real[0]).sum()
        positions = positions + real[0].sum() * x.shape[-1]
    output = network.predict(repeated, revised)
    log_likelihood = network.log_likelihood(output, batch.labels.repeat_interleave(k, dim=0))
    terms = drga_reward(  # eq. 5
        log_likelihood.detach(), [r.detach() for r in revised], [s.mask for s in repeated.sites], gamma, sqrt_l0, delta
    )
    positions = max(float(positions), 1.0)
    return Rollout(
        log_prob=log_prob.flatten(),
        log_likelihood=log_likelihood,
        terms=terms,
        output=output,
        original=encoding.attention,
        revised=revised,
        policy_std=(std_sum / positions).detach(),
        entropy=entropy_sum / positions,
    )


def policy_action(pre_squash: Tensor, multi_dimensional: bool) -> Tensor:
    """Squashed action in the attention's layout: [..., T] for scalar attention, [..., T, H] otherwise."""
    action = squash(pre_squash)
    return action if multi_dimensional else action.squeeze(-1)
