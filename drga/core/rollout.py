"""One DRGA pass over a batch (eqs. 1–5): encode once, act K times, adjust, predict, reward.

The state (eq. 1, :mod:`drga.core.state`), the policy's actions (eq. 2, :mod:`drga.core.policy`), the
adjusted attention (eqs. 3–4, :mod:`drga.core.adjust`) and the reward (eq. 5, :mod:`drga.core.scoring`),
with the log-probabilities REINFORCE needs (eqs. 6–7, :mod:`drga.core.reinforce`). This is the whole
algorithm on tensors; the trainer only adds optimisers and bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import torch
from torch import Tensor
from torch.distributions import Normal

from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding
from drga.core.adjust import adjust_attention, adjust_attention_multiplicatively
from drga.core.policy import AgentPolicy, BlockwiseState, TwoWayChoice, action_log_prob, deterministic_action, squash
from drga.core.reward import Reward, RewardTerms, attention_shift
from drga.core.scoring import RewardSettings, score
from drga.core.state import agent_state


@dataclass
class Rollout:
    """Results for B·K (sequence, sample) pairs, ordered [seq0 × K, seq1 × K, ...]."""

    log_prob: Tensor  #: Σ_t log π(a_t|s_t) over every adjusted token, [B·K]
    terms: RewardTerms  #: the reward and its parts (detached), [B·K]; ``terms.objective`` is what the agent maximises
    output: Tensor  #: network output under the revised attention
    original: list[Tensor]  #: α per site, [B, K_site, T(, H)]
    revised: list[Tensor]  #: α′ per site, [B·K, K_site, T(, H)]
    policy_std: Tensor  #: mean σ over real tokens (for logging)
    entropy: Tensor  #: mean policy entropy per token
    shift: Tensor  #: TV(α, α′) per (sequence, sample), averaged over the arrays (detached), [B·K]
    zeroed_fraction: Tensor  #: share of the real tokens' weights that eqs. 3–4 set to 0 (detached)
    network: AttentionNetwork = field(repr=False)
    labels: Tensor = field(repr=False)  #: the labels repeated K times, [B·K, ...]

    @cached_property
    def log_likelihood(self) -> Tensor:
        """log P(y|X) under the revised attention, with gradient, [B·K] (computed when first
        asked for: the reward's copy is computed without gradient, and a trainer whose task
        loss reads ``output`` directly never builds this one)."""
        return self.network.log_likelihood(self.output, self.labels)


# Over ~60 lines on purpose: the whole DRGA pass, eqs. 1–5 in the paper's order, reads on one screen.
def rollout(
    network: AttentionNetwork,
    policy: AgentPolicy,
    batch: Batch,
    beta: Tensor,
    *,
    reward: Reward | RewardSettings,
    samples: int = 1,
    deterministic: bool = False,
    encoding: NetworkEncoding | None = None,
    task_samples: int = 0,
    flipped_sampling: float = 0.0,
    raised_penalty: float = 0.0,
) -> Rollout:
    """One DRGA pass over ``batch`` with ``samples`` = K action samples per sequence (one when
    ``deterministic``: the mean action), rewarded by ``reward`` (:func:`drga.core.scoring.score`: the
    reward a ``[reward]`` section chooses, or eq. 5 with given γ, √L0 and δ).

    ``task_samples`` (``train.task_loss_samples``; 0 = all K, the default) is an opt-in speed-up
    that changes eq. 12's estimate: when 0 < n < K, only the first n samples of each sequence
    carry the network's gradient (their ``output`` and ``log_likelihood`` rows back-propagate
    with a factor K/n, so that a mean over all B·K rows has the gradient of the mean over the
    B·n), and the other K − n predictions run without gradient, only for their rewards. Every
    value (outputs, rewards, log-probabilities) is unchanged; see :func:`predict_fewer_gradients`.

    The authors' code's procedure, for a :class:`~drga.core.policy.BinaryPolicy`: ``flipped_sampling`` is the share of
    the sampled choices drawn from the flipped probabilities (:meth:`~drga.core.policy.TwoWayChoice.sample`), and
    ``raised_penalty`` × (raised tokens / real tokens)² is taken off each sample's objective (``agent.raised_penalty``;
    any policy's positive actions count as raised), not off its reported reward.
    """
    encoding = encoding if encoding is not None else network.encode(batch)  # the encoder runs once per batch
    k = 1 if deterministic else samples
    multiplicative = getattr(policy, "multiplicative", False)
    log_prob = torch.zeros(batch.size, k, device=batch.tokens.device)
    raised = torch.zeros(batch.size, k, device=batch.tokens.device)  # raised real tokens, and the real tokens, per (sequence, sample)
    acted = torch.zeros(batch.size, 1, device=batch.tokens.device)
    revised: list[Tensor] = []
    # Python floats until the first site's tensors are added (a float start keeps the sites' dtype under autocast)
    std_sum: Tensor | float = 0.0
    entropy_sum: Tensor | float = 0.0
    positions = 0.0
    # the masks of each site for the B·k (sequence, sample) rows (the reward's N and L); α itself is
    # not repeated: eqs. 3–4 broadcast it over the samples, and the whole encoding is repeated only
    # where ``predict`` needs it
    masks = [site.mask.repeat_interleave(k, dim=0) for site in encoding.sites]
    for site in encoding.sites:
        # The agent acts on the real tokens only (padding keeps α = 0 whatever its action, eq. 4):
        # the N = |mask| rows of the states [B, K_site, T, S] of eq. 1, built blockwise (drga/core/state.py).
        if deterministic:
            adjusted = mean_action_attention(site, policy, beta)
            rows, dist, site_revised = adjusted.rows, adjusted.distribution, adjusted.revised
            x = deterministic_action(dist)[1].unsqueeze(0)
            site_log_prob = sequence_log_prob(dist, x, rows, site.mask)
        else:
            rows = site.mask.flatten().nonzero().squeeze(1)
            dist = policy.distribution(agent_state(site).detach().select(rows))  # eq. 2, over [N, A]
            x = draw_actions(dist, rows, site.mask, k, flipped_sampling)
            site_log_prob, site_revised = adjust_drawn(site, rows, dist, x, beta, multiplicative)
        if raised_penalty > 0:
            sequence = rows // (site.mask.numel() // batch.size)
            raised = raised.index_add_(0, sequence, (x > 0).to(raised.dtype).mean(dim=-1).t())
            acted = acted.index_add_(0, sequence, torch.ones_like(sequence, dtype=acted.dtype).unsqueeze(1))
        log_prob = log_prob + site_log_prob
        revised.append(site_revised)
        std_sum = std_sum + dist.stddev.sum()
        entropy_sum = entropy_sum + dist.entropy().sum()
        positions = positions + dist.mean.numel()
    labels = batch.labels.repeat_interleave(k, dim=0)
    output = predict_samples(network, encoding, revised, k, task_samples)
    scored = score(network, encoding, revised, labels, masks, reward, output)
    if raised_penalty > 0:  # the authors' code: the share of raised tokens, squared, is a cost of the sample
        scored.terms.objective = scored.terms.objective - raised_penalty * (raised / acted.clamp_min(1)).flatten().square()
    positions = max(float(positions), 1.0)
    with torch.no_grad():
        shift = attention_shift(encoding.attention, revised, masks)
        zeroed, real = revised[0].new_zeros(()), revised[0].new_zeros(())
        for alpha, mask in zip(revised, masks):
            # eqs. 3–4 keep padding at exactly 0, so the zeroed real weights are the real ones less the
            # non-zero ones: one pass over the sample-sized α′ (count_nonzero: a bool sum() first copies to int64)
            on_real = mask.count_nonzero() * (alpha.shape[-1] if alpha.dim() > mask.dim() else 1)
            zeroed, real = zeroed + (on_real - alpha.count_nonzero()), real + on_real
    return Rollout(
        shift=shift,
        zeroed_fraction=zeroed / real.clamp_min(1),
        log_prob=log_prob.flatten(),
        terms=scored.terms,
        output=scored.output,
        original=encoding.attention,
        revised=revised,
        policy_std=_site_tensor(std_sum / positions).detach(),
        entropy=_site_tensor(entropy_sum / positions),
        network=network,
        labels=labels,
    )


class SelectableState(Protocol):
    """Eq. 1's states of every token of a site, read at the selected ones (:class:`drga.core.state.AgentState`,
    :class:`drga.core.source_state.SourceState`)."""

    def select(self, rows: Tensor) -> BlockwiseState: ...


@dataclass
class MeanActionAttention:
    """One site adjusted by the agent's mean action: what the with-agent mode computes."""

    revised: Tensor  #: α′, [B, K_site, T(, H)]
    action: Tensor  #: a = squash(μ(s_t)) in the attention's layout, 0 on padding, [B, K_site, T(, H)]
    distribution: Normal | TwoWayChoice  #: π(·|s_t) over the site's real tokens, [N, A]
    rows: Tensor  #: the real tokens' positions in the flattened mask, [N]


def mean_action_attention(
    site: AttentionSite, policy: AgentPolicy, beta: Tensor | float, state: SelectableState | None = None
) -> MeanActionAttention:
    # eqs. 1–4 without noise: s_t (eq. 1), a_t = squash(μ(s_t)) (eq. 2), α′ = adjust(α, β·a) (eqs. 3–4)
    """The with-agent mode's revised attention of one site, the one deterministic path: the rollout
    (``deterministic=True``), translation decoding, the experiments and, through
    :func:`site_adjusted_attention`, the Gymnasium environment use it.

    ``state``: the site's eq. 1 states when the caller holds them in a faster form than
    :func:`~drga.core.state.agent_state` builds (decoding: :mod:`drga.core.source_state`)."""
    rows = site.mask.flatten().nonzero().squeeze(1)
    state = agent_state(site).detach() if state is None else state
    dist = policy.distribution(state.select(rows))  # over the N real tokens, [N, A]
    action = on_site(site, rows, deterministic_action(dist)[0])
    multiplicative = getattr(policy, "multiplicative", False)
    return MeanActionAttention(site_adjusted_attention(site, action, beta, multiplicative), action, dist, rows)


def on_site(site: AttentionSite, rows: Tensor, action: Tensor) -> Tensor:
    """Actions of the real tokens, [N, A], in the attention's layout [B, K_site, T(, H)], 0 on padding."""
    laid_out = action.new_zeros(site.mask.numel(), action.shape[-1]).index_copy_(0, rows, action).view(*site.mask.shape, -1)
    return laid_out if site.multi_dimensional else laid_out.squeeze(-1)


def site_adjusted_attention(site: AttentionSite, action: Tensor, beta: Tensor | float, multiplicative: bool = False) -> Tensor:
    """Eqs. 3–4 on one site: α′ from squashed actions [B, K_site, T, A] (A = 1 for scalar attention, squeezed or not);
    ``multiplicative``: the authors' code's α·(1 + β·a) instead."""
    action = action if site.multi_dimensional or action.dim() == site.mask.dim() else action.squeeze(-1)
    adjust = adjust_attention_multiplicatively if multiplicative else adjust_attention
    return adjust(site.attention, action, beta, site.mask)


def sequence_log_prob(dist: Normal | TwoWayChoice, x: Tensor, rows: Tensor, mask: Tensor) -> Tensor:
    """log π(x) of pre-squash actions x [k, N, A] at the real tokens ``rows``, summed per (sequence, sample): [B, k]."""
    batch_size, k = mask.shape[0], x.shape[0]
    sequence = rows // (mask.numel() // batch_size)
    token_log_prob = action_log_prob(dist, x)  # [k, N]
    return token_log_prob.new_zeros(k, batch_size).index_add_(1, sequence, token_log_prob).t()


def sample_and_adjust(
    site: AttentionSite, rows: Tensor, dist: Normal | TwoWayChoice, beta: Tensor, k: int, multiplicative: bool = False,
) -> tuple[Tensor, Tensor]:
    """Eqs. 2–4 on one site: k pre-squash draws x from π = ``dist`` over the site's real tokens
    (``rows`` of its flattened mask), log π(x) summed per (sequence, sample), [B, k], and the k
    revised attentions, [B·k, K_site, T(, H)] with the rows ordered [seq0 × k, seq1 × k, ...].
    This is the work that grows with the action's width: for a multi-dimensional site every term
    is [k, tokens, H]. (The mean action instead: :func:`mean_action_attention`.)"""
    return adjust_drawn(site, rows, dist, draw_actions(dist, rows, site.mask, k), beta, multiplicative)


def draw_actions(dist: Normal | TwoWayChoice, rows: Tensor, mask: Tensor, k: int, flipped: float = 0.0) -> Tensor:
    """k draws x of π = ``dist`` at the real tokens ``rows`` of ``mask``, [k, N, A], detached: eq. 2's pre-squash
    Gaussian draws, or a :class:`~drga.core.policy.TwoWayChoice`'s choices (``flipped``: :meth:`~drga.core.policy.TwoWayChoice.sample`)."""
    if isinstance(dist, TwoWayChoice):
        return dist.sample(k, flipped).detach()
    # the draws of dist.sample((k,)) over every token, [k, B·K_site·T, A], at the real ones
    noise = dist.mean.new_empty(k, mask.numel(), dist.mean.shape[-1]).normal_()
    return (noise[:, rows] * dist.stddev + dist.mean).detach()  # [k, N, A]


def adjust_drawn(
    site: AttentionSite, rows: Tensor, dist: Normal | TwoWayChoice, x: Tensor, beta: Tensor, multiplicative: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`sample_and_adjust` for given draws x [k, N, A]: their log π per (sequence, sample), [B, k], and the k
    revised attentions (eqs. 3–4, or α·(1 + β·a) where ``multiplicative``)."""
    batch_size, k = site.mask.shape[0], x.shape[0]
    per_sequence = site.mask.numel() // batch_size  # K_site·T
    sequence = rows // per_sequence
    log_prob = sequence_log_prob(dist, x, rows, site.mask)
    # the actions in the layout [B, k, K_site·T, A] (0 on padding) without a transposed copy:
    # row r of sample j goes to (b·k + j)·K_site·T + r mod K_site·T
    target = (sequence * k * per_sequence + rows % per_sequence) + torch.arange(k, device=rows.device).unsqueeze(1) * per_sequence
    squashed = x if isinstance(dist, TwoWayChoice) else squash(x)  # a choice is its action already
    action = x.new_zeros(batch_size * k * per_sequence, x.shape[-1]).index_copy_(0, target.flatten(), squashed.flatten(0, 1))
    action = action.view(batch_size, k, *site.mask.shape[1:], -1)
    action = action if site.multi_dimensional else action.squeeze(-1)  # [B, k, K_site, T(, A)]
    # eqs. 3–4, α [B, 1, K_site, T(, H)] broadcast over the k samples
    adjust = adjust_attention_multiplicatively if multiplicative else adjust_attention
    return log_prob, adjust(site.attention.unsqueeze(1), action, beta, site.mask.unsqueeze(1)).flatten(0, 1)


def predict_samples(network: AttentionNetwork, encoding: NetworkEncoding, revised: list[Tensor], k: int, task_samples: int) -> Tensor:
    """The network's predictions from the B·k revised attentions (rows [seq0 × k, seq1 × k, ...]):
    with the gradient through the first ``task_samples`` of each sequence's k when 0 < task_samples < k
    and gradients are on (:func:`predict_fewer_gradients`), through all of them otherwise."""
    if 0 < task_samples < k and torch.is_grad_enabled():
        return predict_fewer_gradients(network, encoding, revised, k, task_samples)
    return network.predict(encoding.repeat_interleave(k), list(revised))


def predict_fewer_gradients(network: AttentionNetwork, encoding: NetworkEncoding, revised: list[Tensor], k: int, n: int) -> Tensor:
    """``network.predict`` for B·k copies ordered [seq0 × k, seq1 × k, ...] where only the first
    ``n`` copies of each sequence carry gradient, scaled by k/n.

    The value is exactly that of the n + (k − n) predictions; the gradient of any mean over the
    B·k rows (the task loss) equals the gradient of the same mean over the B·n rows that carry it:
    an unbiased estimate of eq. 12's gradient from n instead of k samples, with one backward pass
    through ``predict`` per kept copy instead of k. A network whose ``predict`` draws dropout
    masks draws them once per call; the Transformer's applies the masks ``encode`` drew, so all
    k copies share them, in either group.
    """

    def rows(x: Tensor, first: bool) -> Tensor:
        per_sequence = x.unflatten(0, (-1, k))
        return (per_sequence[:, :n] if first else per_sequence[:, n:]).flatten(0, 1)

    kept = network.predict(encoding.repeat_interleave(n), [rows(r, True) for r in revised])
    with torch.no_grad():
        rest = network.predict(encoding.repeat_interleave(k - n), [rows(r, False) for r in revised])
    kept = kept.detach() + (kept - kept.detach()) * (k / n)
    return torch.cat([kept.unflatten(0, (-1, n)), rest.unflatten(0, (-1, k - n))], dim=1).flatten(0, 1)


def _site_tensor(value: Tensor | float) -> Tensor:
    """A sum over the attention sites, a tensor since every network has at least one site. Not ``torch.as_tensor``:
    under another default device (a CUDA run's, or tests/integration/test_device.py's meta) that would copy it there."""
    if not isinstance(value, Tensor):
        raise ValueError("the rollout saw no attention site")
    return value
