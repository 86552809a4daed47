"""The agent's state s_t for every token (eq. 1).

Eq. 1 is defined once, by :func:`agent_state`: the blocks of s_t for every token of a site.
:meth:`AgentState.dense` concatenates them into the [B, K, T, S] tensor (what
:func:`build_agent_state` returns, and what the Gymnasium environment and the SB3 policy see);
:meth:`AgentState.project` applies the policy's first layer (LayerNorm, then Linear) to the
same blocks without building that tensor. Most blocks are the same for every token of an array
(h^s, mean h, max h, u) or for a group of arrays (w_t and h_t of an expanded view, or of a
site whose arrays share their hidden states, as the heads of one Transformer layer do), and
α_t·h_t projects as α_t·(W h_t), so the first layer costs a few additions per output instead
of an S-wide matrix product; ``tests/test_equations.py`` checks that both give the same result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from drga.baselines.protocol import AttentionSite


def agent_state_size(word_dim: int, hidden_dim: int, query_dim: int) -> int:
    """Size of s_t: w_t, h_t, α_t·h_t, h^s, mean(h), max(h), u."""
    return word_dim + 5 * hidden_dim + query_dim


@dataclass
class AgentState:
    """s_t = [w_t; h_t; α_t·h_t; h^s; mean h; max h; u] for every token of a site, in blocks.

    =========  ======================  =====================================================
    field      shape                   holds
    =========  ======================  =====================================================
    words      [B, G, T, Dw]           w_t for G groups of arrays, G dividing K: array k
                                       reads group k // (K / G) (G = 1: the same for every
                                       array; G = K: one per array)
    hidden     [B, G, T, Dh]           h_t (likewise, with its own G)
    attention  [B, K, T] or            α_t; the block α_t·h_t is attention · hidden
               [B, K, T, H]            (per dimension for multi-dimensional attention)
    sequence   [B, K, 3·Dh + Du]       [h^s; mean h; max h; u], the same for every token
    rows       [N] or None             only these tokens (flat indices into B·K·T, see
                                       :meth:`select`); None: all of them
    =========  ======================  =====================================================
    """

    words: Tensor
    hidden: Tensor
    attention: Tensor
    sequence: Tensor
    rows: Tensor | None = None

    @property
    def multi_dimensional(self) -> bool:
        return self.attention.dim() == 4

    @property
    def size(self) -> int:
        """S, the length of s_t."""
        return self.words.shape[-1] + 2 * self.hidden.shape[-1] + self.sequence.shape[-1]

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of :meth:`dense`: [B, K, T, S], or [N, S] for selected rows."""
        if self.rows is not None:
            return (self.rows.shape[0], self.size)
        b, k, t = self.attention.shape[:3]
        return (b, k, t, self.size)

    def select(self, rows: Tensor) -> AgentState:
        """The states of the tokens ``rows`` only (flat indices into B·K·T, as ``mask.flatten()
        .nonzero()`` gives): :meth:`dense` and :meth:`project` return [N, ...] rows."""
        if self.rows is not None:
            raise ValueError("rows are already selected")
        return replace(self, rows=rows)

    def weighted(self) -> Tensor:
        """The block α_t·h_t, [B, K, T, Dh]."""
        alpha = self.attention if self.multi_dimensional else self.attention.unsqueeze(-1)
        return alpha * _per_array(self.hidden, self.attention.shape[1])

    def detach(self) -> AgentState:
        blocks = ("words", "hidden", "attention", "sequence")
        return replace(self, **{name: getattr(self, name).detach() for name in blocks})

    def dense(self) -> Tensor:
        """The states as one tensor [B, K, T, S] (or [N, S]), the blocks in the order of eq. 1."""
        b, k, t = self.attention.shape[:3]
        states = torch.cat(
            [
                _per_array(self.words, k),
                _per_array(self.hidden, k),
                self.weighted(),
                self.sequence.unsqueeze(2).expand(-1, -1, t, -1),
            ],
            dim=-1,
        )
        return states if self.rows is None else states.flatten(0, 2)[self.rows]

    def project(self, linear: nn.Linear, norm: nn.LayerNorm | None = None) -> Tensor:
        """``linear(norm(self.dense()))`` computed block by block, [B, K, T, out] (or [N, out]).

        With W = [W_w, W_h, W_a, W_σ] split like s_t, W s_t = W_w w_t + W_h h_t + α_t·(W_a h_t)
        + W_σ σ (for scalar α; multi-dimensional α projects α_t ⊙ h_t). The LayerNorm
        γ ⊙ (s − μ)/σ + β folds into the layer: W LN(s) + b = ((W diag γ) s − μ (W diag γ) 1)/σ
        + W β + b, with μ and σ² of each s_t combined from the blocks' means and centred sums
        of squares (Chan et al.'s pairwise formula), so nothing S-wide per token is built.

        Each output row is then a weighted sum of a few rows of small tables (a block shared by
        the arrays projected once per token, W_σ σ once per array, W 1, the bias), which one
        ``embedding_bag`` computes in a single pass, forward and backward. Gradients reach W,
        b, γ and β (and the blocks, if they require it) as through the dense form.
        """
        weight, bias = _fold_layer_norm(linear, norm)
        dw, dh = self.words.shape[-1], self.hidden.shape[-1]
        if weight.shape[1] != self.size:
            raise ValueError(f"the layer reads {weight.shape[1]} features but the state has {self.size}")
        w_words, w_hidden, w_weighted, w_sequence = weight.split([dw, dh, dh, self.size - dw - 2 * dh], dim=1)
        b, k, t = self.attention.shape[:3]
        rows = self.rows if self.rows is not None else torch.arange(b * k * t, device=self.attention.device)
        if norm is not None:
            mean, scale = self._moments(rows, norm.eps)
        else:
            mean, scale = None, torch.ones(rows.shape[0], dtype=weight.dtype, device=weight.device)
        bags = _WeightedRowSums()
        bags.add(*_project_block(self.words, w_words, rows, k, t), scale)
        self._add_hidden_blocks(bags, w_hidden, w_weighted, rows, scale)
        bags.add((self.sequence @ w_sequence.t()).flatten(0, 1), rows // t, scale)
        if mean is not None:  # the LayerNorm's −μ (W diag γ) 1
            bags.add(-weight.sum(dim=1, keepdim=True).t(), torch.zeros_like(rows), mean * scale)
        bags.add(bias.unsqueeze(0), torch.zeros_like(rows), torch.ones_like(scale))
        out = bags.total(weight.dtype)
        return out if self.rows is not None else out.view(b, k, t, -1)

    def _add_hidden_blocks(self, bags: _WeightedRowSums, w_hidden: Tensor, w_weighted: Tensor, rows: Tensor, scale: Tensor) -> None:
        """W_h h_t and the block α_t·h_t, for the selected ``rows``, into ``bags``."""
        k, t = self.attention.shape[1:3]
        alpha = self.attention.flatten(0, 2)[rows]
        if self.multi_dimensional:  # α_t ⊙ h_t has no shared factor
            bags.add(*_project_block(self.hidden, w_hidden, rows, k, t), scale)
            hidden = self.hidden.flatten(0, 2)[_group_rows(rows, k, t, self.hidden.shape[1])]
            bags.add((alpha * hidden) @ w_weighted.t(), torch.arange(rows.shape[0], device=rows.device), scale)
        else:  # W_h h_t and W_a h_t in one product, as rows 2i and 2i + 1 of one table; α_t·(W_a h_t)
            table, index = _project_block(self.hidden, torch.cat([w_hidden, w_weighted]), rows, k, t)
            bags.add(table.reshape(-1, w_hidden.shape[0]), 2 * index, scale)
            bags.add_next_rows(alpha * scale)  # the same table's odd rows: W_a h_t, times α_t

    def _moments(self, rows: Tensor, eps: float) -> tuple[Tensor, Tensor]:
        """Mean and 1/sqrt(variance + eps) of the selected s_t over their S features, [N] each."""
        b, k, t = self.attention.shape[:3]
        size, dh = self.size, self.hidden.shape[-1]

        def at(x: Tensor) -> Tensor:  # a per-token statistic [B, G, T] at the rows
            return x.flatten()[_group_rows(rows, k, t, x.shape[1])]

        hidden_mean, hidden_m2 = (at(m) for m in _mean_m2(self.hidden))
        words_mean, words_m2 = (at(m) for m in _mean_m2(self.words))
        blocks: list[tuple[int, Tensor, Tensor]] = [(self.words.shape[-1], words_mean, words_m2), (dh, hidden_mean, hidden_m2)]
        alpha = self.attention.flatten(0, 2)[rows]
        if self.multi_dimensional:
            hidden = self.hidden.flatten(0, 2)[_group_rows(rows, k, t, self.hidden.shape[1])]
            blocks.append((dh, *_mean_m2(alpha * hidden)))
        else:  # α_t·h_t: mean α_t·mean(h_t), centred sum of squares α_t²·M2(h_t)
            blocks.append((dh, alpha * hidden_mean, alpha.square() * hidden_m2))
        sequence_mean, sequence_m2 = (m.flatten()[rows // t] for m in _mean_m2(self.sequence))
        blocks.append((self.sequence.shape[-1], sequence_mean, sequence_m2))
        mean, m2 = _pooled_moments(blocks)
        return mean, torch.rsqrt(m2 / size + eps)


def _fold_layer_norm(linear: nn.Linear, norm: nn.LayerNorm | None) -> tuple[Tensor, Tensor]:
    """W diag γ and W β + b: the weight and bias of ``linear`` with the LayerNorm's affine part folded in
    (its normalisation, by μ and σ of each s_t, is left to the caller)."""
    weight: Tensor = linear.weight
    bias: Tensor = linear.bias if linear.bias is not None else weight.new_zeros(weight.shape[0])
    if norm is not None:
        if norm.bias is not None:
            bias = bias + weight @ norm.bias
        if norm.weight is not None:
            weight = weight * norm.weight
    return weight, bias


def _project_block(x: Tensor, w: Tensor, rows: Tensor, k: int, t: int) -> tuple[Tensor, Tensor]:
    """x Wᵀ for a per-token block x [B, G, T, D] as (table, row of each selected token): the
    rows the selected tokens read picked first when most of x's rows are not read (padding)."""
    read = _group_rows(rows, k, t, x.shape[1])
    if x.shape[1] == k:  # one row per selected token, no repeats
        needed, index = read, torch.arange(rows.shape[0], device=rows.device)
    else:
        needed, index = torch.unique(read, return_inverse=True)
    if needed.numel() < 0.75 * x.shape[0] * x.shape[1] * t:
        return x.flatten(0, 2)[needed] @ w.t(), index
    return (x @ w.t()).flatten(0, 2), read


class _WeightedRowSums:
    """Each token's output as a weighted sum of one row of each of a few small tables, summed by one
    ``embedding_bag`` (a single pass, forward and backward) rather than by a sum of gathered copies."""

    def __init__(self) -> None:
        self.tables: list[Tensor] = []  # [R, out] each
        self.indices: list[Tensor] = []  # the row each token reads, [N], offset into the concatenated tables
        self.factors: list[Tensor] = []  # its factor, [N]

    def add(self, table: Tensor, index: Tensor, factor: Tensor) -> None:
        """Every token reads row ``index`` of ``table``, times ``factor``."""
        self.indices.append(index + sum(x.shape[0] for x in self.tables))
        self.tables.append(table)
        self.factors.append(factor)

    def add_next_rows(self, factor: Tensor) -> None:
        """Every token also reads the row after the one it read last, times ``factor`` (a table of interleaved blocks)."""
        self.indices.append(self.indices[-1] + 1)
        self.factors.append(factor)

    def total(self, dtype: torch.dtype) -> Tensor:
        """The weighted sums, [N, out]."""
        return F.embedding_bag(
            torch.stack(self.indices, dim=1),
            torch.cat(self.tables),
            per_sample_weights=torch.stack(self.factors, dim=1).to(dtype),
            mode="sum",
        )


def _group_rows(rows: Tensor, k: int, t: int, groups: int) -> Tensor:
    """Rows (b, group of k, t) of a [B, G, T] block for flat indices ``rows`` into [B, K, T]."""
    if groups == k:
        return rows
    array = rows // t % k
    return (rows // (k * t) * groups + array // (k // groups)) * t + rows % t


def _per_array(x: Tensor, k: int) -> Tensor:
    """A [B, G, ...] block as [B, K, ...], each group repeated for its K / G arrays (a view when G = 1)."""
    if x.shape[1] == k:
        return x
    if x.shape[1] == 1:
        return x.expand(x.shape[0], k, *x.shape[2:])
    return x.repeat_interleave(k // x.shape[1], dim=1)


def _tensor_sum(terms: Iterable[Tensor]) -> Tensor:
    """The built-in ``sum`` of tensors (0 + the first + ...: the same values), typed as the tensor it is."""
    total = sum(terms)
    if not isinstance(total, Tensor):
        raise ValueError("no tensors to sum")
    return total


def _pooled_moments(blocks: Iterable[tuple[int, Tensor, Tensor]]) -> tuple[Tensor, Tensor]:
    """Mean and centred sum of squares of a concatenation, from its blocks' (size, mean, centred sum of
    squares) (Chan et al.'s pairwise formula)."""
    blocks = list(blocks)
    mean = _tensor_sum(n * m for n, m, _ in blocks) / sum(n for n, _, _ in blocks)
    return mean, _tensor_sum(m2 + n * (m - mean).square() for n, m, m2 in blocks)


def _mean_m2(x: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and centred sum of squares over the last axis."""
    mean = x.mean(dim=-1, keepdim=True)
    return mean.squeeze(-1), (x - mean).square().sum(dim=-1)


def _shared(x: Tensor) -> Tensor:
    """[B, 1, ...] when ``x`` [B, K, ...] is one tensor expanded over the K arrays (stride 0), else ``x``
    (a site may also hand over [B, G, ...] directly, G dividing K)."""
    return x[:, :1] if x.shape[1] > 1 and x.stride(1) == 0 else x


def agent_state(site: AttentionSite) -> AgentState:
    # eq. 1: s_t = [w_t; h_t; α_t·h_t; h^s = Σ_t α_t h_t; all h; u], one row per token.
    """The blocks of the states of every token of every array at an attention site.

    "All h" (the paper's concatenation of every element representation) has no fixed size;
    it is summarised here by the mean and the max of h over the real tokens, so that one agent
    with one input size works for every sequence length.

    For multi-dimensional attention (α of shape [B, K, T, H] with H = Dh) the product α_t·h_t
    is taken per dimension.
    """
    h, u, mask, alpha = _shared(site.hidden_states), site.query, site.mask, site.attention
    if site.multi_dimensional and alpha.shape[-1] != h.shape[-1]:
        raise ValueError(
            f"site '{site.name}': multi-dimensional attention has {alpha.shape[-1]} dimensions "
            f"but the hidden states have {h.shape[-1]}; they must match for α_t·h_t"
        )
    real = mask.to(h.dtype)
    if site.multi_dimensional:
        context = (alpha * _per_array(h, mask.shape[1]) * real.unsqueeze(-1)).sum(dim=2)  # h^s
    else:
        context = _token_sum(alpha * real, h)  # h^s
    mean_h, max_h = _summaries(h, mask)
    sequence = torch.cat([context, mean_h, max_h, u], dim=-1)
    return AgentState(words=_shared(site.word_vectors), hidden=h, attention=alpha, sequence=sequence)


def build_agent_state(site: AttentionSite) -> Tensor:
    """States [B, K, T, S] for every token of every array at an attention site (eq. 1; see
    :func:`agent_state`)."""
    return agent_state(site).dense()


def _token_sum(weights: Tensor, h: Tensor) -> Tensor:
    """Σ_t weights[b, k, t] · h[b, group of k, t] for weights [B, K, T] and h [B, G, T, D]: [B, K, D]."""
    b, k, t = weights.shape
    groups = h.shape[1]
    if groups == 1:
        return torch.bmm(weights, h[:, 0])
    # the arrays of a group as the rows of one product with the group's h
    return (weights.view(b, groups, k // groups, t) @ h).view(b, k, -1)


def _summaries(h: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and max of h over each array's real tokens, [B, K, D] each; 0 for an array without any."""
    b, k, t = mask.shape
    groups = h.shape[1]
    if groups < k:
        # h shared by the arrays of a group: when every array of a group sees either the same
        # tokens or none (as the arrays of padded target steps see none), the summaries are
        # computed once per group.
        grouped = mask.view(b, groups, k // groups, t)
        union = grouped.any(dim=2)
        nonempty = mask.any(dim=-1, keepdim=True)
        if bool(((grouped == union.unsqueeze(2)) | ~nonempty.view(b, groups, -1, 1)).all()):
            mean_h, max_h = (_per_array(x, k) for x in _summaries(h, union))
            return mean_h * nonempty, max_h * nonempty
        h = _per_array(h, k)
    real = mask.unsqueeze(-1).to(h.dtype)
    count = real.sum(dim=2).clamp_min(1.0)
    mean_h = _token_sum(mask.to(h.dtype), h) / count
    max_h = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=2)
    max_h = torch.where(torch.isfinite(max_h), max_h, torch.zeros_like(max_h))  # all-padding array
    return mean_h, max_h
