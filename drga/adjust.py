"""The adjusting module: the agent's actions applied to the attention (eqs. 3–4)."""

from __future__ import annotations

import torch
from torch import Tensor


def adjust_attention(attention: Tensor, action: Tensor, beta: Tensor | float, mask: Tensor) -> Tensor:
    # eqs. 3–4: α*_t = α_t + β·a_t; non-positive α*_t set to 0; renormalized over real tokens.
    """Revised attention α′ with the shape of ``attention``.

    ``attention`` and ``action`` are [B, K, T] (or [B, K, T, H] for multi-dimensional attention,
    adjusted per dimension); ``mask`` is [B, K, T] and True on real tokens. Padding stays exactly
    0. A sequence (or dimension) whose entries would all be non-positive keeps its original α,
    so the result never holds NaN. Gradients flow into ``attention`` and ``beta``.
    """
    if action.shape != attention.shape:
        raise ValueError(f"action shape {tuple(action.shape)} does not match attention shape {tuple(attention.shape)}")
    real = mask
    while real.dim() < attention.dim():
        real = real.unsqueeze(-1)
    raw = attention + beta * action
    kept = torch.where(real & (raw > 0), raw, torch.zeros_like(raw))
    token_axis = mask.dim() - 1
    total = kept.sum(dim=token_axis, keepdim=True)
    degenerate = total <= 0
    revised = kept / torch.where(degenerate, torch.ones_like(total), total)
    return torch.where(degenerate, attention * real, revised)
