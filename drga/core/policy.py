"""Eq. 2: the agent's action a_t = squash(x_t), x_t ~ π(·|s_t) = N(μ(s_t), σ(s_t)), the Gaussian policy of the
attention-adjusting agent (:class:`GaussianPolicy`, an MLP from eq. 1's state to μ and log σ) and the squash.

:func:`gaussian_log_prob` is log π(x) summed over the action's entries, computed with the per-token terms once
(tests/unit/test_equations.py holds it equal to ``Normal.log_prob(x).sum(-1)``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import torch
from torch import Tensor, nn
from torch.distributions import Normal


def squash(x: Tensor) -> Tensor:
    # eq. 2's squashing into (−1, 1): 2·sigmoid(x) − 1 (the paper prints sigmoid(x) − 1, which
    # lies in (−1, 0) and could only ever lower a weight).
    return 2.0 * torch.sigmoid(x) - 1.0


def gaussian_log_prob(dist: Normal, x: Tensor) -> Tensor:
    """log N(x; μ, σ) summed over the last (action) axis: ``dist.log_prob(x).sum(-1)``, for x of
    shape [..., N, A] with any number of samples in front of ``dist``'s [N, A].

    Computed as −½‖(x − μ)/σ‖² − Σ log σ − A·log √(2π) with the per-token terms once rather than
    once per sample: the sample-sized operations are the ones that count for wide actions (a
    multi-dimensional attention's action is a vector as long as the hidden state).
    """
    inverse_std = dist.stddev.reciprocal()
    per_token = dist.stddev.log().sum(dim=-1) + dist.mean.shape[-1] * 0.5 * math.log(2 * math.pi)
    z = (x - dist.mean) * inverse_std
    return -0.5 * (z * z).sum(dim=-1) - per_token  # z * z: square()'s backward is a pow, a pass more


class BlockwiseState(Protocol):
    """Eq. 1's states kept as blocks (``drga.core.state.AgentState`` is one): a policy may compute its
    first layer block by block (``project``) instead of on the concatenated rows (``dense``)."""

    def dense(self) -> Tensor: ...

    def project(self, linear: nn.Linear, norm: nn.LayerNorm | None) -> Tensor: ...


class AgentPolicy(Protocol):
    """What the rollout needs of a policy: π(·|s) as a Normal over pre-squash actions (eq. 2)."""

    def distribution(self, state: Tensor | BlockwiseState) -> Normal: ...


class GaussianPolicy(nn.Module):
    """An MLP mapping a state to the mean and (clamped) log-std of a Gaussian over actions.

    The REINFORCE gradient needs only log N(x; μ, σ) of the pre-squash sample x: the squash is a
    fixed bijection, so its Jacobian does not depend on the policy's parameters.
    """

    def __init__(
        self,
        state_size: int,
        action_size: int = 1,
        hidden_sizes: Sequence[int] = (300, 300),
        init_log_std: float = -3.0,
        log_std_bounds: tuple[float, float] = (-5.0, 1.0),
        normalize_state: bool = True,
    ):
        super().__init__()
        if state_size <= 0 or action_size <= 0:
            raise ValueError(f"state_size and action_size must be positive, got {state_size}, {action_size}")
        layers: list[nn.Module] = [nn.LayerNorm(state_size)] if normalize_state else []
        width = state_size
        for hidden in hidden_sizes:
            layers += [nn.Linear(width, hidden), nn.Tanh()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.mean_head = nn.Linear(width, action_size)
        self.log_std_head = nn.Linear(width, action_size)
        # Start close to "change nothing, explore a little": μ ≈ 0, σ ≈ exp(init_log_std).
        for head, bias in ((self.mean_head, 0.0), (self.log_std_head, init_log_std)):
            nn.init.uniform_(head.weight, -1e-3, 1e-3)
            nn.init.constant_(head.bias, bias)
        self.state_size = state_size
        self.action_size = action_size
        self.log_std_bounds = log_std_bounds

    def distribution(self, state: Tensor | BlockwiseState) -> Normal:
        """π(·|s) for states [..., S]; or for a :class:`BlockwiseState` (blocks of eq. 1), whose
        first layer is computed blockwise (``state.project``), with the same result as on its
        dense form."""
        features = self.body(state) if isinstance(state, Tensor) else self._blockwise_features(state)
        log_std = self.log_std_head(features).clamp(*self.log_std_bounds)
        # eq. 2: x_t ~ N(μ(s_t), σ(s_t)); the action is squash(x_t)
        return Normal(self.mean_head(features), log_std.exp())

    def first_layer(self) -> tuple[nn.Linear, nn.LayerNorm | None] | None:
        """The first hidden layer and the LayerNorm before it (None if the state is not normalised),
        what a :class:`BlockwiseState` projects; None for a policy without hidden layers."""
        layers = list(self.body)
        norm = layers[0] if layers and isinstance(layers[0], nn.LayerNorm) else None
        linear = layers[1 if norm is not None else 0] if len(layers) > (norm is not None) else None
        if linear is None:
            return None
        if not isinstance(linear, nn.Linear):  # never: __init__ builds [LayerNorm,] (Linear, Tanh)*
            raise TypeError(f"the policy's first hidden layer is a {type(linear).__name__}, not a linear layer")
        return linear, norm

    def _blockwise_features(self, state: BlockwiseState) -> Tensor:
        first = self.first_layer()
        if first is None:  # no hidden layer: the heads read the (normalised) state itself
            return self.body(state.dense())
        linear, norm = first
        features = state.project(linear, norm)
        for layer in list(self.body)[2 if norm is not None else 1 :]:
            features = layer(features)
        return features

    def forward(self, state: Tensor) -> Tensor:
        """The deterministic action squash(μ(s)), as used in ``with-agent`` evaluation."""
        return squash(self.distribution(state).mean)
