"""Attention degradation, the handicap of a positive control: a network whose attention is made worse on purpose.

A control asks whether the agent can repair attention where attention is what limits the network. Two kinds mix the
network's own attention α with a fixed target that knows nothing of the sentence::

    α̃ = (1 − s)·α + s·target          s = the strength, 0 ≤ s ≤ 1

- ``uniform``: target_t = 1 / L over the L real tokens (at s = 1 the context is the mean of the hidden states);
- ``random``: target = softmax(3·z) with z_t a fixed pseudo-random number in [0, 1) of the position t and the
  length L alone, never of the words: a peaked attention on positions that carry nothing in particular.

Mixing leaves every token some weight, and a network whose hidden states single a token out (a convolution that
fires on one word) still finds it under any positive weight: on planted SUBJ, CNN+SA with ``random`` at s = 1
reached 1.000 dev accuracy in four epochs of pretraining. The third kind takes tokens away instead:

- ``masked``: α with the tokens whose z_t < s set to 0 and the rest renormalised, so that a share s of each
  sentence's positions, fixed by position and length, gets no weight at all; where that would leave none, the
  token of the largest z_t is kept. The network cannot read a masked token through attention, and the agent can
  give it weight again (eq. 3 adds β·a_t to α_t = 0).

Everything downstream reads α̃ in place of α: the network's own prediction (``net-only``), the agent's state (eq. 1),
the adjustment (eqs. 3–4) and the reward (eq. 5). Where the scorer is ``frozen``, α enters detached, so the
network's loss never trains it. Otherwise the scorer learns, within what the degradation leaves it: a share 1 − s
of the mass when mixed (at most (1 − s) + s·target_t on any token), the unmasked tokens when masked.

A network gets one through :meth:`AttentionDegradation.attach`: its ``encode`` returns the degraded sites from then
on (:class:`drga.baselines.protocol.AttentionNetwork`), in training, evaluation, the Gymnasium env and the analyses.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, AttentionSite, NetworkEncoding, masked_softmax

__all__ = ["AttentionDegradation", "DEGRADATIONS", "degraded_attention", "position_noise"]

#: The kinds of target attention (``control.attention``); ``learned`` is no degradation.
DEGRADATIONS = ("learned", "uniform", "random", "masked")

#: The peakedness of the ``random`` target: softmax(RANDOM_SHARPNESS · z), z uniform in [0, 1).
RANDOM_SHARPNESS = 3.0


def position_noise(length: Tensor, positions: int, seed: int) -> Tensor:
    """A fixed number in [0, 1) for each (sentence length, position), [..., positions]: the same on every machine
    and in every call, and unrelated to the words (an integer hash of the length, the position and the seed)."""
    position = torch.arange(positions, device=length.device, dtype=torch.int64)
    key = (length.to(torch.int64).unsqueeze(-1) * 1_000_003 + position * 7_919 + seed * 104_729) & 0x7FFFFFFF
    for _ in range(2):  # two rounds of a multiply-xorshift hash of 31-bit integers
        key = ((key ^ (key >> 15)) * 0x2C1B3C6D) & 0x7FFFFFFF
        key = ((key ^ (key >> 12)) * 0x297A2D39) & 0x7FFFFFFF
    key = key ^ (key >> 15)
    return key.to(torch.float64).div(2**31).to(torch.float32)


def degraded_attention(attention: Tensor, mask: Tensor, kind: str, strength: float, frozen: bool = False, seed: int = 0) -> Tensor:
    # α̃ = (1 − s)·α + s·target, zero on padding and summing to 1 over the real tokens (this module's docstring)
    """``attention`` [B, K, T] (or [B, K, T, H]) degraded towards ``kind``'s target at ``strength`` s; ``mask`` [B, K, T]."""
    if kind not in DEGRADATIONS:
        raise ValueError(f"unknown attention degradation '{kind}' (one of {', '.join(DEGRADATIONS)})")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"the degradation's strength must be between 0 and 1, got {strength}")
    own = attention.detach() if frozen else attention
    if kind == "learned":
        return own
    real = mask if attention.dim() == mask.dim() else mask.unsqueeze(-1)
    if kind == "masked":
        return _masked(own, mask, real, strength, seed)
    if kind == "uniform":
        target = real.to(attention.dtype)
        target = (target / target.sum(dim=mask.dim() - 1, keepdim=True).clamp(min=1)).expand_as(attention)
    else:
        noise = position_noise(mask.sum(dim=-1), mask.shape[-1], seed).to(attention.device, attention.dtype)
        target = masked_softmax(RANDOM_SHARPNESS * noise, mask)
        if attention.dim() > mask.dim():
            target = target.unsqueeze(-1).expand_as(attention)
    if strength == 1.0:
        return target * real  # no share of α: its gradient is none at all, frozen or not
    return ((1.0 - strength) * own + strength * target) * real


def _masked(attention: Tensor, mask: Tensor, real: Tensor, strength: float, seed: int) -> Tensor:
    """``masked``: α on the tokens whose position noise is at least s, renormalised (uniform over them where α
    gives them no mass); a sentence that would keep none keeps its token of the largest noise."""
    noise = position_noise(mask.sum(dim=-1), mask.shape[-1], seed).to(attention.device).masked_fill(~mask, -1.0)
    keep = (noise >= strength) & mask
    largest = torch.zeros_like(keep).scatter_(-1, noise.argmax(dim=-1, keepdim=True), True) & mask
    keep = torch.where(keep.any(dim=-1, keepdim=True), keep, largest)
    kept = keep if attention.dim() == mask.dim() else keep.unsqueeze(-1)
    kept = kept.to(attention.dtype)
    token_axis = mask.dim() - 1
    weights = attention * kept
    total = weights.sum(dim=token_axis, keepdim=True)
    even = kept / kept.sum(dim=token_axis, keepdim=True).clamp(min=1)
    return torch.where(total > 0, weights / total.clamp(min=torch.finfo(attention.dtype).tiny), even.expand_as(weights)) * real


@dataclass(frozen=True)
class AttentionDegradation:
    """The degradation a network's ``encode`` applies to every attention site (``[control]`` of a configuration)."""

    kind: Literal["learned", "uniform", "random", "masked"] = "learned"
    """learned (none), uniform, random or masked (this module's docstring)."""
    strength: float = 1.0
    """s: the target's share of the attention (uniform, random), or the share of positions masked (masked), 0 to 1."""
    frozen: bool = False
    """The network's loss does not train its attention scorer (α enters detached)."""
    seed: int = 0
    """Which fixed random target (``random`` only)."""

    def __post_init__(self) -> None:
        degraded_attention(torch.ones(1, 1, 1), torch.ones(1, 1, 1, dtype=torch.bool), self.kind, self.strength)  # its errors

    @property
    def active(self) -> bool:
        return self.kind != "learned" or self.frozen

    def __call__(self, encoding: NetworkEncoding, sites: Collection[str] | None = None) -> NetworkEncoding:
        """``encoding`` with the attention of its sites named in ``sites`` (None: all) degraded."""
        degraded = tuple(self._site(site) if sites is None or site.name in sites else site for site in encoding.sites)
        return replace(encoding, sites=degraded)

    def _site(self, site: AttentionSite) -> AttentionSite:
        return replace(site, attention=degraded_attention(site.attention, site.mask, self.kind, self.strength, self.frozen, self.seed))

    def attach(self, network: AttentionNetwork) -> AttentionNetwork:
        """``network`` with this degradation in its ``encode`` (none where it is inactive); returned for chaining."""
        network.attention_degradation = self if self.active else None
        return network

    def describe(self) -> str:
        if not self.active:
            return "learned attention"
        share = f"{self.kind} at strength {self.strength:g}" if self.kind != "learned" else "its own"
        return f"attention degraded: {share}{', scorer frozen' if self.frozen else ''}"
