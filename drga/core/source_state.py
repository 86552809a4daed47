"""Eq. 1's states at a decoder's cross-attention site, their source side projected once per sentence.

The fast path of :meth:`drga.core.state.AgentState.project` for decoding (held equal to it by
``tests/unit/test_source_state.py``). At every decoding step the agent observes s_t = [w_t; h_t; α_t·h_t;
h^s; mean h; max h; u] for every source token t of every array (every layer and head of the
Transformer) of every hypothesis, and only the policy's first layer reads s_t. With the layer's
weight split like s_t (the LayerNorm's γ folded in, as :meth:`~drga.core.state.AgentState.project`
does):

    W s_t = W_w w_t + W_h h_t + α_t (W_a h_t) + Σ_τ α_τ (W_c h_τ) + W_m mean h + W_x max h + W_u u

so everything but α and u is computed once per sentence when decoding starts
(:func:`project_source`, a :class:`SourceProjection` that a decoder keeps in its state and reorders
with its beams like its other batch-first tensors), and a step costs a few additions per
(array, token) plus W_u u per array (:class:`SourceState`). The LayerNorm's mean and variance of
each s_t are pooled from the blocks' moments, the source's computed once per sentence too.

Valid for a site whose arrays all read their sentence's whole source (a decoding step's: every
array real, its mask the source mask): mean h and max h are the sentence's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from drga.baselines.protocol import AttentionSite
from drga.core.blockwise import WeightedRowSums, fold_layer_norm, mean_m2, pooled_moments
from drga.core.state import _summaries


@dataclass
class SourceProjection:
    """The first layer's terms of eq. 1 that depend on the source only, per sentence (batch-first).

    ==============  ================  ===============================================================
    field           shape             holds
    ==============  ================  ===============================================================
    tokens          [B, T, 2, out]    W_w w_t + W_h h_t, and W_a h_t (so W_a (α_t h_t) = α_t W_a h_t)
    context         [B, T, out]       W_c h_t (so W_c h^s = Σ_t α_t W_c h_t)
    summary         [B, out]          W_m mean h + W_x max h
    hidden          [B, T, Dh]        h_t, for h^s's moments
    moments         [B, T, 4]         mean and centred sum of squares of w_t, then of h_t
    summary_moments [B, 4]            those of mean h, then of max h
    ==============  ================  ===============================================================

    ``layer`` is the linear layer it was computed for.
    """

    tokens: Tensor
    context: Tensor
    summary: Tensor
    hidden: Tensor
    moments: Tensor
    summary_moments: Tensor
    layer: nn.Linear
    word_dim: int


def project_source(words: Tensor, hidden: Tensor, mask: Tensor, linear: nn.Linear, norm: nn.LayerNorm | None) -> SourceProjection:
    # eq. 1: the source's blocks of s_t (w_t, h_t, α_t·h_t's h_t, h^s's h, mean h, max h) through the first layer, once per sentence
    """The source side of ``linear(norm(s_t))`` for source embeddings ``words`` [B, T, Dw], encoder
    states ``hidden`` [B, T, Dh] and the source ``mask`` [B, T]."""
    weight, _ = fold_layer_norm(linear, norm)
    dw, dh = words.shape[-1], hidden.shape[-1]
    w_words, w_hidden, w_weighted, w_context, w_mean, w_max, _ = weight.split(
        [dw, dh, dh, dh, dh, dh, weight.shape[1] - dw - 5 * dh], dim=1)
    per_token = hidden @ torch.cat([w_hidden, w_weighted, w_context]).t()  # [B, T, 3·out]
    h_part, weighted, context = per_token.chunk(3, dim=-1)
    tokens = torch.stack([words @ w_words.t() + h_part, weighted], dim=2)
    mean_h, max_h = (x.squeeze(1) for x in _summaries(hidden.unsqueeze(1), mask.unsqueeze(1)))
    return SourceProjection(
        tokens=tokens,
        context=context.contiguous(),
        summary=mean_h @ w_mean.t() + max_h @ w_max.t(),
        hidden=hidden,
        moments=torch.stack([*mean_m2(words), *mean_m2(hidden)], dim=-1),
        summary_moments=torch.stack([*mean_m2(mean_h), *mean_m2(max_h)], dim=-1),
        layer=linear,
        word_dim=dw,
    )


@dataclass
class SourceState:
    """The states of a decoding step's site as a :class:`~drga.core.policy.BlockwiseState`
    whose :meth:`project` reads a :class:`SourceProjection`: ``attention`` [B, K, T] (0 on padding),
    ``query`` [B, K, Du], ``rows`` the selected tokens (flat indices into B·K·T) or None."""

    source: SourceProjection
    attention: Tensor
    query: Tensor
    rows: Tensor | None = None

    def select(self, rows: Tensor) -> SourceState:
        if self.rows is not None:
            raise ValueError("rows are already selected")
        return replace(self, rows=rows)

    def dense(self) -> Tensor:
        raise TypeError("a SourceState keeps the source's projection, not s_t: a policy without hidden layers reads AgentState")

    def project(self, linear: nn.Linear, norm: nn.LayerNorm | None = None) -> Tensor:
        """``linear(norm(s_t))`` for the selected tokens, [N, out] (or [B, K, T, out]), as
        :meth:`drga.core.state.AgentState.project` gives it."""
        source = self.source
        if linear is not source.layer:
            raise ValueError("the source was projected for another layer")
        weight, bias = fold_layer_norm(linear, norm)
        b, k, t = self.attention.shape
        du, dh = self.query.shape[-1], source.hidden.shape[-1]
        if weight.shape[1] != source.word_dim + 5 * dh + du:
            raise ValueError(f"the layer reads {weight.shape[1]} features but the state has {source.word_dim + 5 * dh + du}")
        rows = self.rows if self.rows is not None else torch.arange(b * k * t, device=self.attention.device)
        token = rows // (k * t) * t + rows % t  # the row's (sentence, source token), into B·T
        array = rows // t  # its (sentence, array), into B·K
        alpha = self.attention.flatten()[rows]
        # per array: Σ_t α_t W_c h_t + W_m mean h + W_x max h + W_u u
        per_array = torch.baddbmm(source.summary.unsqueeze(1), self.attention, source.context)
        per_array = per_array + self.query @ weight[:, weight.shape[1] - du :].t()
        if norm is not None:
            mean, scale = self._moments(rows, token, array, alpha, norm.eps)
        else:
            mean, scale = None, torch.ones(rows.shape[0], dtype=weight.dtype, device=weight.device)
        bags = WeightedRowSums()
        bags.add(source.tokens.flatten(0, 2), 2 * token, scale)
        bags.add_next_rows(alpha * scale)
        bags.add(per_array.flatten(0, 1), array, scale)
        if mean is not None:  # the LayerNorm's −μ (W diag γ) 1
            bags.add(-weight.sum(dim=1, keepdim=True).t(), torch.zeros_like(rows), mean * scale)
        bags.add(bias.unsqueeze(0), torch.zeros_like(rows), torch.ones_like(scale))
        out = bags.total(weight.dtype)
        return out if self.rows is not None else out.view(b, k, t, -1)

    def _moments(self, rows: Tensor, token: Tensor, array: Tensor, alpha: Tensor, eps: float) -> tuple[Tensor, Tensor]:
        """Mean and 1/sqrt(variance + eps) of the selected s_t over their features, [N] each."""
        source = self.source
        dw, dh, du = source.word_dim, source.hidden.shape[-1], self.query.shape[-1]
        context_mean, context_m2 = mean_m2(torch.bmm(self.attention, source.hidden))  # h^s = Σ_t α_t h_t, [B, K]
        query_mean, query_m2 = mean_m2(self.query)
        summary = source.summary_moments.unsqueeze(1)  # [B, 1, 4]
        sequence_mean, sequence_m2 = pooled_moments([
            (dh, context_mean, context_m2), (dh, summary[..., 0], summary[..., 1]), (dh, summary[..., 2], summary[..., 3]),
            (du, query_mean, query_m2),
        ])
        words_mean, words_m2, hidden_mean, hidden_m2 = source.moments.flatten(0, 1)[token].unbind(-1)
        mean, m2 = pooled_moments([
            (dw, words_mean, words_m2), (dh, hidden_mean, hidden_m2), (dh, alpha * hidden_mean, alpha.square() * hidden_m2),
            (3 * dh + du, sequence_mean.flatten()[array], sequence_m2.flatten()[array]),
        ])
        return mean, torch.rsqrt(m2 / (dw + 5 * dh + du) + eps)


def source_state(site: AttentionSite, source: SourceProjection) -> SourceState:
    """Eq. 1's states of a decoding step's ``site`` (scalar attention, every array reading its
    sentence's source) from the source's projection."""
    if site.multi_dimensional:
        raise ValueError("the source's projection holds for scalar attention only")
    return SourceState(source, site.attention * site.mask.to(site.attention.dtype), site.query)
