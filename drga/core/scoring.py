"""Scoring an attention (eq. 5 and eq. 12's task loss): predict from it, log P(y|X), and the chosen reward.

:func:`score` is the one place where a (possibly revised) attention becomes a prediction and a
reward: the batched rollout (``drga/core/rollout.py``: REINFORCE's agent phase and co-training), the
Gymnasium environment (``envs/attention_retrofit.py``: stable-baselines3's PPO and A2C) and the
evaluation (``drga/tasks/evaluation.py``) all call it, with the :class:`~drga.core.reward.Reward` the
configuration chose (``reward.name``, :func:`drga.core.reward.make_reward`; eq. 5 by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, NetworkEncoding
from drga.core.reward import Reward, RewardTerms, make_reward


class RewardSettings(Protocol):
    """Eq. 5's constants: the penalty weight γ, the target √L0 and the highlighted mass δ
    (``drga.config.RewardConfig`` is one). Read-only: a frozen :class:`RewardConstants` is one too."""

    @property
    def gamma(self) -> float: ...

    @property
    def sqrt_l0(self) -> float: ...

    @property
    def delta(self) -> float: ...


@dataclass(frozen=True)
class RewardConstants:
    """Eq. 5's constants as a value, for callers without a ``RewardConfig`` (the paper's reward, :class:`drga.core.reward.DRGAReward`)."""

    gamma: float
    sqrt_l0: float
    delta: float


@dataclass
class Score:
    """The prediction from one attention and its reward terms."""

    output: Tensor  #: the network's output (with gradient when the caller's attention has one)
    terms: RewardTerms  #: eq. 5 and its parts, without gradient


def score(
    network: AttentionNetwork,
    encoding: NetworkEncoding,
    attention: Sequence[Tensor],
    labels: Tensor,
    masks: Sequence[Tensor],
    reward: Reward | RewardSettings,
    output: Tensor | None = None,
) -> Score:
    """Predict from ``attention`` (one array per site), then log P(y|X), then the reward.

    ``reward``: a :class:`~drga.core.reward.Reward`, a ``[reward]`` section (the reward it chooses) or eq. 5's
    constants (:func:`drga.core.reward.make_reward`); it sees the encoding's own attention as the original.
    ``output``: a prediction the caller already made from this attention (the rollout's, which
    may carry the gradient of fewer samples); otherwise ``network.predict(encoding, attention)``.
    """
    if output is None:
        output = network.predict(encoding, list(attention))
    with torch.no_grad():  # the reward is a number for REINFORCE: no gradient flows through it
        log_likelihood = network.log_likelihood(output, labels)
        original = [a.detach() for a in encoding.attention]
        terms = make_reward(reward)(log_likelihood, original, [a.detach() for a in attention], list(masks))
    return Score(output, terms)


def cross_entropy_loss(network: AttentionNetwork, output: Tensor, labels: Tensor) -> Tensor:
    # eq. 12: the task loss −log P(y|X), averaged over the batch
    return -network.log_likelihood(output, labels).mean()
