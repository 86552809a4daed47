"""Greedy and beam-search decoding, with the network alone or with the agent.

Both modes of every DRGA result exist here too:

- ``net-only``: the network's own cross-attention at every step;
- ``with-agent``: at every step the agent sees the step's cross-attention site (the same
  observation as in training, eq. 1), its deterministic action squash(μ(s)) adjusts the
  attention (eqs. 3–4) and the network continues from the revised attention. The source side
  of eq. 1's state goes through the policy's first layer once per sentence, when decoding
  starts (:class:`AgentAdjuster`, ``drga.core.source_state``; the same translations as building
  the whole state at every step, tested).

The networks implement the step interface of :class:`baselines.nmt_common.TranslationNetwork`
so that one step of decoding computes exactly what teacher-forced ``predict`` computes for that
position (tested), in both modes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from tqdm.auto import tqdm

from drga.baselines.nmt_common import BOS_ID, EOS_ID, PAD_ID, Adjuster, TranslationNetwork
from drga.baselines.protocol import AttentionSite, Batch
from drga.core.policy import AgentPolicy
from drga.core.rollout import mean_action_attention
from drga.core.source_state import SourceProjection, project_source, source_state
from drga.runtime.eval_mode import eval_mode


class AgentAdjuster:
    """The with-agent mode's adjustment of a decoder step's site, as in teacher-forced evaluation:
    α′ from the mean action, eqs. 1–4 (:func:`~drga.core.rollout.mean_action_attention`).

    Called with a site, it builds eq. 1's states from the site (the plain path). A decoder that
    calls :meth:`prepare` once per sentence and :meth:`revise` at each step gets the same α′ with
    the source side of the policy's first layer computed once (:mod:`drga.core.source_state`);
    ``source_projection=False`` (or a policy without a first hidden layer) keeps the plain path.
    """

    def __init__(self, policy: AgentPolicy, beta: Tensor | float, source_projection: bool = True):
        self.policy, self.beta, self.source_projection = policy, beta, source_projection

    def __call__(self, site: AttentionSite) -> Tensor:
        return mean_action_attention(site, self.policy, self.beta).revised

    def prepare(self, words: Tensor, states: Tensor, mask: Tensor) -> SourceProjection | None:
        """The source's projection through the policy's first layer, or None for the plain path."""
        first_layer = getattr(self.policy, "first_layer", None)
        layer = first_layer() if self.source_projection and first_layer is not None else None
        return None if layer is None else project_source(words, states, mask, *layer)

    def revise(self, site: AttentionSite, source: SourceProjection) -> Tensor:
        return mean_action_attention(site, self.policy, self.beta, source_state(site, source)).revised


def agent_adjuster(policy: AgentPolicy, beta: Tensor | float, source_projection: bool = True) -> AgentAdjuster:
    """The with-agent mode's adjustment of a decoder step's site (see :class:`AgentAdjuster`)."""
    return AgentAdjuster(policy, beta, source_projection)


def length_limits(mask: Tensor, ratio: float, cap: int) -> Tensor:
    """Most tokens (``</s>`` included) each row may produce: ratio · source length + 10, at most ``cap``."""
    lengths = mask.sum(dim=1).to(torch.float32)
    return torch.clamp((lengths * ratio).long() + 10, min=1, max=cap)


def _blocked(log_probs: Tensor) -> Tensor:
    """Padding and ``<s>`` are never produced."""
    log_probs = log_probs.clone()
    log_probs[:, PAD_ID] = float("-inf")
    log_probs[:, BOS_ID] = float("-inf")
    return log_probs


def _strip(ids: Sequence[int]) -> list[int]:
    out = []
    for i in ids:
        if i in (EOS_ID, PAD_ID):
            break
        out.append(int(i))
    return out


@torch.no_grad()
def greedy_decode(
    network: TranslationNetwork, tokens: Tensor, mask: Tensor, limits: Tensor, adjust: Adjuster | None = None
) -> list[list[int]]:
    """The most likely token at every step until ``</s>`` or the row's limit; ids without ``</s>``."""
    n = tokens.shape[0]
    state = network.start(tokens, mask)
    state = network.with_adjuster(state, adjust) if adjust is not None else state
    previous = torch.full((n,), BOS_ID, dtype=torch.long, device=tokens.device)
    finished = torch.zeros(n, dtype=torch.bool, device=tokens.device)
    produced: list[Tensor] = []
    for t in range(int(limits.max())):
        log_probs, state = network.step(state, previous, adjust)
        chosen = _blocked(log_probs).argmax(dim=-1)
        chosen = chosen.masked_fill(finished, PAD_ID)
        produced.append(chosen)
        finished = finished | (chosen == EOS_ID) | (t + 1 >= limits)
        previous = chosen.masked_fill(chosen == PAD_ID, EOS_ID)
        if bool(finished.all()):
            break
    rows = torch.stack(produced, dim=1).tolist()
    return [_strip(row) for row in rows]


def length_normalizer(lengths: Tensor, alpha: float) -> Tensor:
    """GNMT's length penalty lp(|y|) = ((5 + |y|) / 6)^α (Wu et al. 2016, eq. 14); 1 for α = 0."""
    return ((5.0 + lengths.to(torch.float32)) / 6.0) ** alpha


@torch.no_grad()
def beam_search(
    network: TranslationNetwork,
    tokens: Tensor,
    mask: Tensor,
    limits: Tensor,
    beam_size: int,
    length_penalty: float = 0.6,
    adjust: Adjuster | None = None,
) -> list[list[int]]:
    """Beam search; hypotheses ranked by log P(y|X) / lp(|y|) once finished.

    A hypothesis that produced ``</s>`` (or reached its row's limit) stays in the beam with its
    score frozen; the search ends when every beam of every row is finished. With
    ``beam_size = 1`` this is exactly greedy decoding.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    n, k, device = tokens.shape[0], beam_size, tokens.device
    rows = torch.arange(n, device=device)
    state = network.start(tokens, mask)
    state = network.with_adjuster(state, adjust) if adjust is not None else state  # once per sentence, before the beams
    state = network.reorder(state, rows.repeat_interleave(k))
    limit = limits.repeat_interleave(k)
    scores = torch.full((n, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # one live hypothesis at first, so the k beams do not start as copies
    history = torch.zeros(n * k, 0, dtype=torch.long, device=device)
    lengths = torch.zeros(n * k, dtype=torch.long, device=device)
    finished = torch.zeros(n * k, dtype=torch.bool, device=device)
    previous = torch.full((n * k,), BOS_ID, dtype=torch.long, device=device)
    for _ in range(int(limits.max())):
        log_probs, state = network.step(state, previous, adjust)
        log_probs = _blocked(log_probs)
        # A finished hypothesis has one continuation, padding, at no cost.
        log_probs[finished] = float("-inf")
        log_probs[finished, PAD_ID] = 0.0
        vocab = log_probs.shape[-1]
        candidates = (scores.view(-1, 1) + log_probs).view(n, k * vocab)
        scores, flat = candidates.topk(k, dim=1)
        origin = (rows.unsqueeze(1) * k + torch.div(flat, vocab, rounding_mode="floor")).view(-1)
        chosen = (flat % vocab).view(-1)
        state = network.reorder(state, origin)
        history = torch.cat([history.index_select(0, origin), chosen.unsqueeze(1)], dim=1)
        was_finished = finished.index_select(0, origin)
        lengths = lengths.index_select(0, origin) + (~was_finished).long()
        finished = was_finished | (chosen == EOS_ID) | (lengths >= limit)
        previous = chosen.masked_fill(chosen == PAD_ID, EOS_ID)
        if bool(finished.all()):
            break
    normalized = scores / length_normalizer(lengths.view(n, k), length_penalty)
    best = normalized.argmax(dim=1)
    picked = history.view(n, k, -1)[rows, best].tolist()
    return [_strip(row) for row in picked]


@dataclass
class DecodeSettings:
    """How to decode: ``beam_size`` 1 is greedy; limits from the source length (see :func:`length_limits`)."""

    beam_size: int = 1
    length_penalty: float = 0.6
    length_ratio: float = 2.0
    max_length: int = 101


def decode_batches(
    network: TranslationNetwork,
    batches: Iterable[Batch],
    settings: DecodeSettings,
    adjust: Adjuster | None = None,
    device: torch.device | str = "cpu",
    progress: bool = False,
    description: str = "decode",
    total: int | None = None,
) -> dict[int, list[int]]:
    """Target ids per ``extras['index']`` for every batch (so callers restore corpus order)."""
    results: dict[int, list[int]] = {}
    with eval_mode(network):
        for batch in tqdm(batches, desc=description, leave=False, disable=not progress, total=total):
            batch = batch.to(device)
            limits = length_limits(batch.mask, settings.length_ratio, settings.max_length)
            if settings.beam_size == 1:
                ids = greedy_decode(network, batch.tokens, batch.mask, limits, adjust)
            else:
                ids = beam_search(network, batch.tokens, batch.mask, limits, settings.beam_size, settings.length_penalty, adjust)
            for index, row in zip(batch.extras["index"].tolist(), ids):
                results[int(index)] = row
    return results
