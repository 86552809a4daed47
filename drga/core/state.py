"""The agent's state s_t for every token (eq. 1).

Eq. 1 is defined once, by :func:`agent_state`: the blocks of s_t for every token of a site.
:meth:`AgentState.dense` concatenates them into the [B, K, T, S] tensor (what
:func:`build_agent_state` returns, and what the Gymnasium environment and the SB3 policy see);
:meth:`AgentState.project` applies the policy's first layer (LayerNorm, then Linear) to the
same blocks without building that tensor: a speed-up, in :mod:`drga.core.blockwise`. Most blocks are the same for every token of an array
(h^s, mean h, max h, u) or for a group of arrays (w_t and h_t of an expanded view, or of a
site whose arrays share their hidden states, as the heads of one Transformer layer do), and
α_t·h_t projects as α_t·(W h_t), so the first layer costs a few additions per output instead
of an S-wide matrix product; ``tests/unit/test_factored_compute.py`` checks that both give the same result.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from drga.baselines.protocol import AttentionSite
from drga.core.blockwise import per_array as _per_array
from drga.core.blockwise import project_state


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
        """``linear(norm(self.dense()))``, [B, K, T, out] (or [N, out]), computed block by block without building
        the dense states (:func:`drga.core.blockwise.project_state`; ``tests/unit/test_factored_compute.py`` holds the two
        equal, values and gradients)."""
        return project_state(self, linear, norm)


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
