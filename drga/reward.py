"""The delayed reward (eq. 5): likelihood of the label minus a saliency penalty."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor


def count_highlighted(attention: Tensor, mask: Tensor, delta: float) -> Tensor:
    # N of eq. 5: tokens taken in descending attention until their cumulative mass reaches δ.
    """N per array, [B, K] (float), at least 1 on every array with a real token.

    Multi-dimensional attention ([B, K, T, H]) is first reduced to one weight per token by the
    mean over its H dimensions.
    """
    weights = attention.mean(dim=-1) if attention.dim() == mask.dim() + 1 else attention
    weights = weights * mask
    ordered = weights.sort(dim=-1, descending=True).values
    cumulative = ordered.cumsum(dim=-1)
    below = (cumulative < delta - 1e-6).sum(dim=-1).to(attention.dtype)
    length = mask.sum(dim=-1).to(attention.dtype)
    return torch.minimum(below + 1.0, length.clamp_min(1.0))


def saliency_penalty(highlighted: Tensor, length: Tensor, l0: float) -> Tensor:
    # eq. 5's f(N/L) = N/L + L0·L/N, smallest at N = √L0·L (the paper's print swaps the terms).
    """The penalty per array; ``highlighted`` and ``length`` broadcast together."""
    ratio = highlighted / length.clamp_min(1.0)
    return ratio + l0 / ratio


def attention_shift(original: Sequence[Tensor], revised: Sequence[Tensor], masks: Sequence[Tensor]) -> Tensor:
    # Beyond the paper: how far the agent moved attention, TV(α, α′) = ½ Σ_t |α′_t − α_t| per array.
    """Mean total-variation distance between each original and revised array, per example [B].

    ``original`` [B, K, T(, H)] may have size 1 (or B) where ``revised`` has B·S rows: the
    rows of ``revised`` are then S samples of each example in a row. Multi-dimensional arrays
    count each of their H dimensions as one distribution. Arrays without a real token are left out.
    """
    total, arrays = None, None
    for alpha, alpha_revised, mask in zip(original, revised, masks, strict=True):
        rows = alpha_revised.shape[0]
        # the S samples of an example against its α broadcast, not against S copies of it
        per_example = alpha_revised.reshape(alpha.shape[0], rows // alpha.shape[0], *alpha_revised.shape[1:])
        difference = (per_example - alpha.unsqueeze(1)).flatten(0, 1)
        distance = 0.5 * difference.abs_().sum(dim=mask.dim() - 1)  # [rows, K(, H)]
        distance = distance.mean(dim=-1) if alpha.dim() == mask.dim() + 1 else distance
        present = (mask.sum(dim=-1) > 0).to(distance.dtype)
        site_total, site_arrays = (distance * present).sum(dim=-1), present.sum(dim=-1)
        total = site_total if total is None else total + site_total
        arrays = site_arrays if arrays is None else arrays + site_arrays
    return total / arrays.clamp_min(1.0)


@dataclass
class RewardTerms:
    """The reward and its parts, per example ([B])."""

    reward: Tensor
    log_likelihood: Tensor
    penalty: Tensor
    highlighted_fraction: Tensor


def drga_reward(
    log_likelihood: Tensor,
    attention: Sequence[Tensor],
    masks: Sequence[Tensor],
    gamma: float,
    sqrt_l0: float,
    delta: float,
) -> RewardTerms:
    # eq. 5: R = log P(y|X) − γ·(N/L + L0·L/N), the penalty averaged over every attention array.
    """Reward for each example of a batch from its (revised) attention arrays.

    ``attention`` and ``masks`` hold one entry per attention site ([B, K, T] or [B, K, T, H]
    with [B, K, T] masks). Arrays with no real token (a missing sentence of a short document)
    are left out of the average.
    """
    l0 = sqrt_l0**2
    penalty_sum = torch.zeros_like(log_likelihood)
    fraction_sum = torch.zeros_like(log_likelihood)
    arrays = torch.zeros_like(log_likelihood)
    for alpha, mask in zip(attention, masks, strict=True):
        length = mask.sum(dim=-1).to(log_likelihood.dtype)
        present = (length > 0).to(log_likelihood.dtype)
        n = count_highlighted(alpha.to(log_likelihood.dtype), mask, delta)
        penalty_sum = penalty_sum + (saliency_penalty(n, length, l0) * present).sum(dim=-1)
        fraction_sum = fraction_sum + (n / length.clamp_min(1.0) * present).sum(dim=-1)
        arrays = arrays + present.sum(dim=-1)
    arrays = arrays.clamp_min(1.0)
    penalty = penalty_sum / arrays
    return RewardTerms(
        reward=log_likelihood - gamma * penalty,
        log_likelihood=log_likelihood,
        penalty=penalty,
        highlighted_fraction=fraction_sum / arrays,
    )
