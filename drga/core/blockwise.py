"""The blockwise speed-ups behind eq. 1's states: the policy's first layer (LayerNorm, then Linear) applied to the
blocks of s_t (``drga/core/state.py`` · ``AgentState``) without building the S-wide states, and the helpers that the
decoder's source-side projection shares (``drga/core/source_state.py``).

The plain form is ``linear(norm(state.dense()))``; :func:`project_state` computes the same values and gradients
(``tests/unit/test_factored_compute.py`` holds them equal for every family's sites, and ``tests/unit/test_source_state.py``
the decoder's). Nothing here is an equation of the paper: each function is a faster way to the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class StateBlocks(Protocol):
    """Eq. 1's states in blocks, as ``drga.core.state.AgentState`` holds them (its fields' shapes are documented there)."""

    words: Tensor
    hidden: Tensor
    attention: Tensor
    sequence: Tensor
    rows: Tensor | None

    @property
    def multi_dimensional(self) -> bool: ...

    @property
    def size(self) -> int: ...


def project_state(state: StateBlocks, linear: nn.Linear, norm: nn.LayerNorm | None = None) -> Tensor:
    """``linear(norm(state.dense()))`` computed block by block, [B, K, T, out] (or [N, out]).

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
    weight, bias = fold_layer_norm(linear, norm)
    dw, dh = state.words.shape[-1], state.hidden.shape[-1]
    if weight.shape[1] != state.size:
        raise ValueError(f"the layer reads {weight.shape[1]} features but the state has {state.size}")
    w_words, w_hidden, w_weighted, w_sequence = weight.split([dw, dh, dh, state.size - dw - 2 * dh], dim=1)
    b, k, t = state.attention.shape[:3]
    rows = state.rows if state.rows is not None else torch.arange(b * k * t, device=state.attention.device)
    if norm is not None:
        mean, scale = _moments(state, rows, norm.eps)
    else:
        mean, scale = None, torch.ones(rows.shape[0], dtype=weight.dtype, device=weight.device)
    bags = WeightedRowSums()
    bags.add(*project_block(state.words, w_words, rows, k, t), scale)
    _add_hidden_blocks(state, bags, w_hidden, w_weighted, rows, scale)
    bags.add((state.sequence @ w_sequence.t()).flatten(0, 1), rows // t, scale)
    if mean is not None:  # the LayerNorm's −μ (W diag γ) 1
        bags.add(-weight.sum(dim=1, keepdim=True).t(), torch.zeros_like(rows), mean * scale)
    bags.add(bias.unsqueeze(0), torch.zeros_like(rows), torch.ones_like(scale))
    out = bags.total(weight.dtype)
    return out if state.rows is not None else out.view(b, k, t, -1)

def _add_hidden_blocks(
    state: StateBlocks, bags: WeightedRowSums, w_hidden: Tensor, w_weighted: Tensor, rows: Tensor, scale: Tensor
) -> None:
    """W_h h_t and the block α_t·h_t, for the selected ``rows``, into ``bags``."""
    k, t = state.attention.shape[1:3]
    alpha = state.attention.flatten(0, 2)[rows]
    if state.multi_dimensional:  # α_t ⊙ h_t has no shared factor
        bags.add(*project_block(state.hidden, w_hidden, rows, k, t), scale)
        hidden = state.hidden.flatten(0, 2)[group_rows(rows, k, t, state.hidden.shape[1])]
        bags.add((alpha * hidden) @ w_weighted.t(), torch.arange(rows.shape[0], device=rows.device), scale)
    else:  # W_h h_t and W_a h_t in one product, as rows 2i and 2i + 1 of one table; α_t·(W_a h_t)
        table, index = project_block(state.hidden, torch.cat([w_hidden, w_weighted]), rows, k, t)
        bags.add(table.reshape(-1, w_hidden.shape[0]), 2 * index, scale)
        bags.add_next_rows(alpha * scale)  # the same table's odd rows: W_a h_t, times α_t

def _moments(state: StateBlocks, rows: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """Mean and 1/sqrt(variance + eps) of the selected s_t over their S features, [N] each."""
    b, k, t = state.attention.shape[:3]
    size, dh = state.size, state.hidden.shape[-1]

    def at(x: Tensor) -> Tensor:  # a per-token statistic [B, G, T] at the rows
        return x.flatten()[group_rows(rows, k, t, x.shape[1])]

    hidden_mean, hidden_m2 = (at(m) for m in mean_m2(state.hidden))
    words_mean, words_m2 = (at(m) for m in mean_m2(state.words))
    blocks: list[tuple[int, Tensor, Tensor]] = [(state.words.shape[-1], words_mean, words_m2), (dh, hidden_mean, hidden_m2)]
    alpha = state.attention.flatten(0, 2)[rows]
    if state.multi_dimensional:
        hidden = state.hidden.flatten(0, 2)[group_rows(rows, k, t, state.hidden.shape[1])]
        blocks.append((dh, *mean_m2(alpha * hidden)))
    else:  # α_t·h_t: mean α_t·mean(h_t), centred sum of squares α_t²·M2(h_t)
        blocks.append((dh, alpha * hidden_mean, alpha.square() * hidden_m2))
    sequence_mean, sequence_m2 = (m.flatten()[rows // t] for m in mean_m2(state.sequence))
    blocks.append((state.sequence.shape[-1], sequence_mean, sequence_m2))
    mean, m2 = pooled_moments(blocks)
    return mean, torch.rsqrt(m2 / size + eps)


def fold_layer_norm(linear: nn.Linear, norm: nn.LayerNorm | None) -> tuple[Tensor, Tensor]:
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


def project_block(x: Tensor, w: Tensor, rows: Tensor, k: int, t: int) -> tuple[Tensor, Tensor]:
    """x Wᵀ for a per-token block x [B, G, T, D] as (table, row of each selected token): the
    rows the selected tokens read picked first when most of x's rows are not read (padding)."""
    read = group_rows(rows, k, t, x.shape[1])
    if x.shape[1] == k:  # one row per selected token, no repeats
        needed, index = read, torch.arange(rows.shape[0], device=rows.device)
    else:
        needed, index = torch.unique(read, return_inverse=True)
    if needed.numel() < 0.75 * x.shape[0] * x.shape[1] * t:
        return x.flatten(0, 2)[needed] @ w.t(), index
    return (x @ w.t()).flatten(0, 2), read


class WeightedRowSums:
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


def group_rows(rows: Tensor, k: int, t: int, groups: int) -> Tensor:
    """Rows (b, group of k, t) of a [B, G, T] block for flat indices ``rows`` into [B, K, T]."""
    if groups == k:
        return rows
    array = rows // t % k
    return (rows // (k * t) * groups + array // (k // groups)) * t + rows % t


def per_array(x: Tensor, k: int) -> Tensor:
    """A [B, G, ...] block as [B, K, ...], each group repeated for its K / G arrays (a view when G = 1)."""
    if x.shape[1] == k:
        return x
    if x.shape[1] == 1:
        return x.expand(x.shape[0], k, *x.shape[2:])
    return x.repeat_interleave(k // x.shape[1], dim=1)


def tensor_sum(terms: Iterable[Tensor]) -> Tensor:
    """The built-in ``sum`` of tensors (0 + the first + ...: the same values), typed as the tensor it is."""
    total = sum(terms)
    if not isinstance(total, Tensor):
        raise ValueError("no tensors to sum")
    return total


def pooled_moments(blocks: Iterable[tuple[int, Tensor, Tensor]]) -> tuple[Tensor, Tensor]:
    """Mean and centred sum of squares of a concatenation, from its blocks' (size, mean, centred sum of
    squares) (Chan et al.'s pairwise formula)."""
    blocks = list(blocks)
    mean = tensor_sum(n * m for n, m, _ in blocks) / sum(n for n, _, _ in blocks)
    return mean, tensor_sum(m2 + n * (m - mean).square() for n, m, m2 in blocks)


def mean_m2(x: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and centred sum of squares over the last axis."""
    mean = x.mean(dim=-1, keepdim=True)
    return mean.squeeze(-1), (x - mean).square().sum(dim=-1)
