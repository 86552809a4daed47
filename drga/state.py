"""The agent's state for every token (eq. 1 of the paper)."""

from __future__ import annotations

import torch
from torch import Tensor

from baselines.protocol import AttentionSite


def agent_state_size(word_dim: int, hidden_dim: int, query_dim: int) -> int:
    """Size of s_t: w_t, h_t, α_t·h_t, h^s, mean(h), max(h), u."""
    return word_dim + 5 * hidden_dim + query_dim


def build_agent_state(site: AttentionSite) -> Tensor:
    # eq. 1: s_t = [w_t; h_t; α_t·h_t; h^s = Σ_t α_t h_t; all h; u], one row per token.
    """States [B, K, T, S] for every token of every array at an attention site.

    "All h" (the paper's concatenation of every element representation) has no fixed size;
    it is summarised here by the mean and the max of h over the real tokens, so that one agent
    with one input size works for every sequence length.

    For multi-dimensional attention (α of shape [B, K, T, H] with H = Dh) the product α_t·h_t
    is taken per dimension.
    """
    w, h, u, mask, alpha = site.word_vectors, site.hidden_states, site.query, site.mask, site.attention
    if site.multi_dimensional:
        if alpha.shape[-1] != h.shape[-1]:
            raise ValueError(
                f"site '{site.name}': multi-dimensional attention has {alpha.shape[-1]} dimensions "
                f"but the hidden states have {h.shape[-1]}; they must match for α_t·h_t"
            )
        weighted = alpha * h
    else:
        weighted = alpha.unsqueeze(-1) * h
    real = mask.unsqueeze(-1).to(h.dtype)
    context = (weighted * real).sum(dim=2, keepdim=True)  # h^s
    count = real.sum(dim=2, keepdim=True).clamp_min(1.0)
    mean_h = (h * real).sum(dim=2, keepdim=True) / count
    max_h = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=2, keepdim=True)
    max_h = torch.where(torch.isfinite(max_h), max_h, torch.zeros_like(max_h))  # all-padding array
    t = h.shape[2]
    per_sequence = torch.cat([context, mean_h, max_h, u.unsqueeze(2)], dim=-1).expand(-1, -1, t, -1)
    return torch.cat([w, h, weighted, per_sequence], dim=-1)
