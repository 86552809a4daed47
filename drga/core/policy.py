"""Eq. 2: the agent's action a_t = squash(x_t), x_t ~ π(·|s_t) = N(μ(s_t), σ(s_t)), the Gaussian policy of the
attention-adjusting agent (:class:`GaussianPolicy`, an MLP from eq. 1's state to μ and log σ) and the squash; and the
authors' code's policy in its place (:class:`BinaryPolicy`: lower or raise each token's weight, :class:`TwoWayChoice`).

:func:`gaussian_log_prob` is log π(x) summed over the action's entries, computed with the per-token terms once
(tests/unit/test_equations.py holds it equal to ``Normal.log_prob(x).sum(-1)``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import torch
import torch.nn.functional as F
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
    """What the rollout needs of a policy: π(·|s) as a Normal over pre-squash actions (eq. 2), or the authors' code's
    :class:`TwoWayChoice` per token."""

    def distribution(self, state: Tensor | BlockwiseState) -> Normal | TwoWayChoice: ...


class StatePolicy(nn.Module):
    """The MLP body of a policy over eq. 1's states: an optional LayerNorm, then tanh hidden layers, computed on the
    dense state or, for a :class:`BlockwiseState`, its first layer block by block (the same values). A subclass adds its
    heads on :attr:`width` features, and ``distribution``.

    ``multiplicative``: the policy's actions revise the attention as α·(1 + β·a) (the authors' code,
    ``adjust.multiplicative``), not as eq. 3's α + β·a (:func:`drga.core.adjust.adjust_attention_multiplicatively`).
    """

    def __init__(self, state_size: int, action_size: int, hidden_sizes: Sequence[int], normalize_state: bool, multiplicative: bool):
        super().__init__()
        if state_size <= 0 or action_size <= 0:
            raise ValueError(f"state_size and action_size must be positive, got {state_size}, {action_size}")
        layers: list[nn.Module] = [nn.LayerNorm(state_size)] if normalize_state else []
        width = state_size
        for hidden in hidden_sizes:
            layers += [nn.Linear(width, hidden), nn.Tanh()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.width = width
        self.state_size = state_size
        self.action_size = action_size
        self.multiplicative = multiplicative

    def distribution(self, state: Tensor | BlockwiseState) -> Normal | TwoWayChoice:
        """π(·|s) for states [..., S] or a :class:`BlockwiseState`."""
        raise NotImplementedError

    def features(self, state: Tensor | BlockwiseState) -> Tensor:
        """The body's output for states [..., S], or for a :class:`BlockwiseState` (blocks of eq. 1), whose first
        layer is computed blockwise (``state.project``), with the same result as on its dense form."""
        return self.body(state) if isinstance(state, Tensor) else self._blockwise_features(state)

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


class GaussianPolicy(StatePolicy):
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
        multiplicative: bool = False,
    ):
        super().__init__(state_size, action_size, hidden_sizes, normalize_state, multiplicative)
        self.mean_head = nn.Linear(self.width, action_size)
        self.log_std_head = nn.Linear(self.width, action_size)
        # Start close to "change nothing, explore a little": μ ≈ 0, σ ≈ exp(init_log_std).
        for head, bias in ((self.mean_head, 0.0), (self.log_std_head, init_log_std)):
            nn.init.uniform_(head.weight, -1e-3, 1e-3)
            nn.init.constant_(head.bias, bias)
        self.log_std_bounds = log_std_bounds

    def distribution(self, state: Tensor | BlockwiseState) -> Normal:
        """π(·|s) for states [..., S]; or for a :class:`BlockwiseState` (blocks of eq. 1)."""
        features = self.features(state)
        log_std = self.log_std_head(features).clamp(*self.log_std_bounds)
        # eq. 2: x_t ~ N(μ(s_t), σ(s_t)); the action is squash(x_t)
        return Normal(self.mean_head(features), log_std.exp())

    def forward(self, state: Tensor) -> Tensor:
        """The deterministic action squash(μ(s)), as used in ``with-agent`` evaluation."""
        return squash(self.distribution(state).mean)


class TwoWayChoice:
    """The authors' code's policy at each token (scofield7419/DRGA, not the paper's eq. 2): lower its weight (a = −1)
    or raise it (a = +1), raised with probability p = sigmoid(logit). (Their softmax over two logits is the sigmoid of
    the logits' difference.) Shapes are the logit's, [N, A]; a sample has k in front."""

    def __init__(self, logit: Tensor):
        self.logit = logit

    @property
    def raise_probability(self) -> Tensor:
        return torch.sigmoid(self.logit)

    @property
    def mean(self) -> Tensor:
        """E[a] = 2p − 1."""
        return 2.0 * self.raise_probability - 1.0

    @property
    def stddev(self) -> Tensor:
        """The spread of a ∈ {−1, +1}: 2·√(p(1 − p))."""
        p = self.raise_probability
        return 2.0 * (p * (1.0 - p)).sqrt()

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logit, self.raise_probability, reduction="none")

    def mode(self) -> Tensor:
        """The likelier choice, +1 where p ≥ ½ (the authors' evaluation: the argmax)."""
        return torch.where(self.logit >= 0, 1.0, -1.0).to(self.logit.dtype)

    def log_prob(self, action: Tensor) -> Tensor:
        """log π(a) per entry for actions a ∈ {−1, +1} of shape [..., N, A]."""
        return -F.binary_cross_entropy_with_logits(self.logit.expand_as(action), (action > 0).to(self.logit.dtype), reduction="none")

    def sample(self, k: int, flipped: float = 0.0) -> Tensor:
        """k draws of a, [k, N, A]. ``flipped``: the share of draws taken from the flipped probabilities (raised with
        probability 1 − p), each entry flipped or not at random: the authors' code trains with 0.8 (its ε = 0.2 is the
        share drawn as printed) and learns from log π(a) under the unflipped policy, as :meth:`log_prob` gives it."""
        p = self.raise_probability.detach().expand(k, *self.logit.shape)
        if flipped > 0:
            p = torch.where(torch.rand_like(p) < flipped, 1.0 - p, p)
        return torch.where(torch.rand_like(p) < p, 1.0, -1.0).to(self.logit.dtype)


class BinaryPolicy(StatePolicy):
    """The authors' code's policy (``agent.policy = "binary"``): an MLP from a state to one logit per action entry, a
    :class:`TwoWayChoice` between lowering and raising the token's weight. Their policy is linear
    (``agent.hidden_sizes = []``); its choices are applied multiplicatively there (``adjust.multiplicative``)."""

    def __init__(
        self, state_size: int, action_size: int = 1, hidden_sizes: Sequence[int] = (300, 300), normalize_state: bool = True,
        multiplicative: bool = True,
    ):
        super().__init__(state_size, action_size, hidden_sizes, normalize_state, multiplicative)
        self.logit_head = nn.Linear(self.width, action_size)
        # Start undecided: p ≈ ½ for every token.
        nn.init.uniform_(self.logit_head.weight, -1e-3, 1e-3)
        nn.init.zeros_(self.logit_head.bias)

    def distribution(self, state: Tensor | BlockwiseState) -> TwoWayChoice:
        return TwoWayChoice(self.logit_head(self.features(state)))

    def forward(self, state: Tensor) -> Tensor:
        """The deterministic action, the likelier choice."""
        return self.distribution(state).mode()


def deterministic_action(distribution: Normal | TwoWayChoice) -> tuple[Tensor, Tensor]:
    """The with-agent mode's action and the value log π is read at: squash(μ) and μ (eq. 2 without noise), or the
    likelier of a :class:`TwoWayChoice`'s two choices, twice."""
    if isinstance(distribution, TwoWayChoice):
        choice = distribution.mode()
        return choice, choice
    return squash(distribution.mean), distribution.mean


def action_log_prob(distribution: Normal | TwoWayChoice, x: Tensor) -> Tensor:
    """log π(x) summed over the action axis, [..., N], for either kind of policy."""
    if isinstance(distribution, TwoWayChoice):
        return distribution.log_prob(x).sum(dim=-1)
    return gaussian_log_prob(distribution, x)
