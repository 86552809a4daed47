"""What every encoder-decoder (translation) network shares: the cross-attention site, the
sequence likelihood, and the step-by-step decoding interface.

How decoder cross-attention maps onto the protocol
---------------------------------------------------
With teacher forcing, the decoder attends over the T_x source tokens once per target step (and,
in a Transformer, once per layer and head). Every such distribution is one *array* of a single
site named ``"cross-attention"``:

============== =============================== ==============================================
field          shape                           holds
============== =============================== ==============================================
attention      [B, K, T_x]                     α over the source at each (step[, layer, head])
mask           [B, K, T_x]                     the source mask on real target steps; all False
                                               on padded target steps (eq. 5 skips them)
word_vectors   [B, K, T_x, Dw]                 source embeddings w_src (one view, no copies)
hidden_states  [B, K, T_x, Dh]                 encoder states h_src (one view, no copies)
query          [B, K, Du]                      the decoder state at that step (the query u)
============== =============================== ==============================================

so eq. 1 gives, per (decoder step, source token): w_src, h_src, α·h_src, the current context
Σ α h_src, the whole-source summary (mean and max of h_src) and the decoder state u.

``log_likelihood(output, labels)`` is log P(y|X) = Σ_t log p(y_t | y_<t, X) over the real
target tokens (``</s>`` included, padding excluded): the first term of the reward (eq. 5).

``rollout`` repeats an encoding K times (one per action sample). Repeating the expanded
[B, K, T_x, D] views would copy them K times; :class:`CrossAttentionEncoding` repeats the
compact [B, T_x, D] tensors instead and expands again.

Decoding
--------
Greedy and beam search (``drga.tasks.translation.decoding``) drive a network one target token at a time
through :meth:`TranslationNetwork.start`, :meth:`~TranslationNetwork.step` and
:meth:`~TranslationNetwork.reorder`. ``step`` takes an optional ``adjust`` function: given the
site of the current step (the same observation layout as in training) it returns the revised
attention, which is how the agent acts during decoding (the ``with-agent`` mode). An adjuster
with a per-sentence part (the agent's: its policy's first layer applied to the source side of
eq. 1's state, ``drga.core.source_state``) gets it computed once, by
:meth:`~TranslationNetwork.with_adjuster` when decoding starts; the decoder keeps it in its state
(``"adjuster"``), reorders it with its beams, and hands it back with each step's site
(:func:`adjusted_attention`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, AttentionSite, NetworkEncoding

#: Special ids shared by every translation vocabulary (see drga.data.subword).
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3

#: The function the agent is applied through during decoding: site of one step → revised α.
Adjuster = Callable[[AttentionSite], Tensor]
#: A decoder's running state: batch-first tensors (or dicts of them), reordered by ``reorder``.
DecoderState = dict


def map_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    """Apply ``fn`` to every tensor in nested dicts / lists / tuples / dataclass instances."""
    if isinstance(value, Tensor):
        return fn(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: map_tensors(getattr(value, f.name), fn) for f in dataclasses.fields(value) if f.init})
    if isinstance(value, Mapping):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    return value


def cross_attention_site(
    source_words: Tensor,
    source_states: Tensor,
    queries: Tensor,
    source_mask: Tensor,
    array_real: Tensor,
    attention: Tensor,
) -> AttentionSite:
    """The cross-attention site from compact tensors.

    ``source_words`` [B, T_x, Dw] and ``source_states`` [B, T_x, Dh] are shared by the K arrays
    (expanded, not copied); ``queries`` [B, K, Du]; ``source_mask`` [B, T_x]; ``array_real``
    [B, K] is False for arrays of padded target steps; ``attention`` [B, K, T_x]. The attention
    of a padded step is zeroed so that every array is zero wherever its mask is False.
    """
    b, k, t = attention.shape
    mask = source_mask.unsqueeze(1) & array_real.unsqueeze(-1)
    return AttentionSite(
        word_vectors=source_words.unsqueeze(1).expand(b, k, t, source_words.shape[-1]),
        hidden_states=source_states.unsqueeze(1).expand(b, k, t, source_states.shape[-1]),
        query=queries,
        mask=mask,
        attention=attention * mask.to(attention.dtype),
        name="cross-attention",
    )


def adjuster_source(adjust: Adjuster | None, words: Tensor, states: Tensor, mask: Tensor) -> DecoderState:
    """Decoder-state entries holding the per-sentence part of ``adjust`` (an adjuster with a
    ``prepare(words, states, mask)`` method: the agent's) for source embeddings ``words``
    [N, T_x, Dw], encoder states ``states`` [N, T_x, Dh] and ``mask``; none for another adjuster."""
    prepare = getattr(adjust, "prepare", None)
    prepared = prepare(words, states, mask) if prepare is not None else None
    return {} if prepared is None else {"adjuster": prepared}


def adjusted_attention(adjust: Adjuster, site: AttentionSite, state: DecoderState) -> Tensor:
    """The revised attention of a decoding step's ``site``: ``adjust.revise(site, part)`` with the
    per-sentence part the state keeps (:func:`adjuster_source`), else ``adjust(site)``."""
    if "adjuster" in state:
        return adjust.revise(site, state["adjuster"])  # type: ignore[attr-defined]
    return adjust(site)


def site_from_cache(cache: dict[str, Any]) -> tuple[AttentionSite, ...]:
    """Rebuild the site from the compact tensors a translation network keeps in ``cache['site']``."""
    s = cache["site"]
    return (cross_attention_site(s["source_words"], s["source_states"], s["queries"], s["source_mask"], s["array_real"], s["attention"]),)


@dataclass
class CrossAttentionEncoding(NetworkEncoding):
    """A :class:`NetworkEncoding` whose site is rebuilt from compact batch-first tensors.

    Repeating it for K action samples (the base class's lazy :class:`RepeatedEncoding`) copies an
    entry when ``predict`` first reads it, and keeps the site's [B, K_site, T_x, D] views of the
    compact [B, T_x, D] tensors broadcast; the Transformer reads its entries once per example.
    """

    @classmethod
    def from_cache(cls, cache: dict[str, Any]) -> CrossAttentionEncoding:
        return cls(sites=site_from_cache(cache), cache=cache)


def decoder_input(labels: Tensor) -> Tensor:
    """Teacher forcing's decoder input: ``<s>`` then the target shifted right by one, [B, T_y].

    ``labels`` is the target followed by ``</s>``, padded with 0; the input at a padded step is
    padding too (its output is never scored).
    """
    shifted = torch.full_like(labels, BOS_ID)
    shifted[:, 1:] = labels[:, :-1]
    return shifted.masked_fill(labels == PAD_ID, PAD_ID)


class TranslationNetwork(AttentionNetwork):
    """Base class of the encoder-decoder networks: sequence likelihood and the decoding interface.

    ``Batch.tokens`` / ``mask`` hold the source, ``Batch.labels`` [B, T_y] the target ids
    followed by ``</s>`` (0 = padding). The output of ``predict`` is logits [B, T_y, V].
    """

    pad_id, bos_id, eos_id = PAD_ID, BOS_ID, EOS_ID

    def token_log_probs(self, output: Tensor, labels: Tensor) -> Tensor:
        """log p(y_t | y_<t, X) per target position, [B, T_y], 0 on padding."""
        log_probs = torch.log_softmax(output.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        return log_probs * (labels != PAD_ID).to(log_probs.dtype)

    def log_likelihood(self, output: Tensor, labels: Tensor) -> Tensor:
        # eq. 5's first term for a sentence pair: log P(y|X) = Σ_t log p(y_t | y_<t, X), teacher forced.
        """log P(y|X) per sentence pair, [B]: the sum over real target tokens (``</s>`` included)."""
        return self.token_log_probs(output, labels).sum(dim=-1)

    def predictions(self, output: Tensor) -> Tensor:
        """The most likely token at every target position, [B, T_y] (teacher forced)."""
        return output.argmax(dim=-1)

    # ------------------------------------------------------------------ decoding interface

    def start(self, tokens: Tensor, mask: Tensor) -> DecoderState:  # pragma: no cover - abstract
        """Encode the source ([N, T_x] ids and mask) and return the decoder's initial state."""
        raise NotImplementedError

    def step(self, state: DecoderState, tokens: Tensor, adjust: Adjuster | None = None) -> tuple[Tensor, DecoderState]:  # pragma: no cover
        """Feed the previous tokens [N] (``<s>`` first); return log-probabilities [N, V] and the new state.

        With ``adjust``, the step's cross-attention site is handed to it and the revised
        attention it returns is used, exactly as ``predict`` uses revised attention in training.
        """
        raise NotImplementedError

    def with_adjuster(self, state: DecoderState, adjust: Adjuster) -> DecoderState:
        """The initial state with the per-sentence part of ``adjust``, if it has one (see
        :func:`adjuster_source`); a network that does not keep one returns ``state``."""
        return state

    def reorder(self, state: DecoderState, index: Tensor) -> DecoderState:
        """The state of rows ``index`` (beam search: expand to beams, follow back-pointers)."""
        return map_tensors(state, lambda x: x.index_select(0, index))
