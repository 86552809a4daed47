"""The delayed reward (eq. 5): likelihood of the label minus a saliency penalty; and the ``Reward`` plug point.

A :class:`Reward` turns log P(y|X) and the attention before and after the agent into
:class:`RewardTerms`; ``reward.name`` chooses a registered one (``drga/registry.py``,
``register_reward``) and :func:`make_reward` builds it from ``[reward]``. :func:`drga.core.scoring.score`
calls it, and through it the rollout (REINFORCE's agent phase and co-training), the Gymnasium
environment (stable-baselines3's PPO and A2C) and the evaluation: every learner learns from the
reward the configuration chose. The paper's is :class:`DRGAReward` (eq. 5, :func:`drga_reward`);
``reward.closeness`` > 0 adds :class:`Closeness`'s term to whichever is chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch
from torch import Tensor

from drga.registry import register_reward, reward_spec


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
    total: Tensor | None = None
    arrays: Tensor | None = None
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
    if total is None or arrays is None:
        raise ValueError("attention_shift needs at least one attention site")
    return total / arrays.clamp_min(1.0)


@dataclass
class RewardTerms:
    """The reward and its parts, per example ([B]).

    ``reward`` is what a run reports as the reward (``dev_*_reward``, ``agent/reward``); ``objective``
    is what the agent maximises: the reward itself, unless the :class:`Reward` adds a term that is
    reported on its own (:class:`Closeness`: −closeness × TV(α, α′), reported as ``attention_shift``).
    ``penalty`` is the reward's penalty as the evaluation reports it (``dev_*_penalty``), and
    ``penalty_weight`` what the reward multiplies it by before subtracting it: the training statistic
    ``reward_penalty`` is ``penalty_weight × penalty`` (eq. 5's γ·f(N/L) for :class:`DRGAReward`; a reward
    that leaves it at 1 is reported with its own penalty, unscaled).
    """

    reward: Tensor
    log_likelihood: Tensor
    penalty: Tensor
    highlighted_fraction: Tensor
    objective: Tensor = None  # type: ignore[assignment]  # None: the reward
    penalty_weight: float = 1.0  #: the penalty's weight in the reward (eq. 5's γ); ``reward_penalty`` = penalty_weight × penalty

    def __post_init__(self) -> None:
        if self.objective is None:
            self.objective = self.reward


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
        penalty_weight=gamma,
    )


@runtime_checkable
class Reward(Protocol):
    """What the agent is rewarded by, per example: called with log P(y|X) [B·S] under the revised
    attention, the network's own attention ``original`` (one [B, K, T(, H)] array per site), the revised
    attention ``revised`` ([B·S, K, T(, H)] per site: S samples of each example in a row) and the
    masks of the revised rows ([B·S, K, T] per site); returns :class:`RewardTerms` (no gradient is needed).

    Register one with ``@register_reward(name)`` (``drga/registry.py``) and choose it with ``reward.name``.
    """

    def __call__(
        self, log_likelihood: Tensor, original: Sequence[Tensor], revised: Sequence[Tensor], masks: Sequence[Tensor]
    ) -> RewardTerms: ...


#: The paper's δ: the highlighted tokens are those holding this share of the attention mass (eq. 5's N), also where a
#: reward of one's own has no delta of its own (the environment's and the analysis's count of highlighted tokens).
PAPER_DELTA = 0.85


@register_reward("drga")
class DRGAReward:
    """The paper's reward, eq. 5: R = log P(y|X) − γ·(N/L + L0·L/N) (:func:`drga_reward`)."""

    def __init__(self, gamma: float = 0.2, sqrt_l0: float = 0.2, delta: float = PAPER_DELTA):
        self.gamma, self.sqrt_l0, self.delta = gamma, sqrt_l0, delta

    def __call__(
        self, log_likelihood: Tensor, original: Sequence[Tensor], revised: Sequence[Tensor], masks: Sequence[Tensor]
    ) -> RewardTerms:
        return drga_reward(log_likelihood, revised, masks, self.gamma, self.sqrt_l0, self.delta)


class Closeness:
    """Beyond the paper (``reward.closeness``): another reward's objective less ``weight`` × TV(α, α′), the
    total-variation distance between the network's attention and the revised one (:func:`attention_shift`).
    The reported reward stays the other's; the distance is reported as ``attention_shift``."""

    def __init__(self, reward: Reward, weight: float):
        self.reward, self.weight = reward, weight

    def __call__(
        self, log_likelihood: Tensor, original: Sequence[Tensor], revised: Sequence[Tensor], masks: Sequence[Tensor]
    ) -> RewardTerms:
        terms = self.reward(log_likelihood, original, revised, masks)
        terms.objective = terms.objective - self.weight * attention_shift(original, revised, masks)
        return terms


def make_reward(settings: Any) -> Reward:
    """The reward a configuration chooses: ``settings`` is a :class:`Reward` already (returned as it is), a
    ``[reward]`` section (:class:`drga.config.RewardConfig`: ``name`` picks the registered reward, its
    settings come from the section, ``closeness`` > 0 adds :class:`Closeness`), or any object with eq. 5's
    ``gamma``, ``sqrt_l0`` and ``delta`` (:class:`drga.core.scoring.RewardConstants`: the paper's reward)."""
    if isinstance(settings, Reward):
        return settings
    reward = reward_spec(getattr(settings, "name", "drga")).build(settings)
    closeness = getattr(settings, "closeness", 0.0)
    return Closeness(reward, closeness) if closeness > 0 else reward
