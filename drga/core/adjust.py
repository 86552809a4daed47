"""The adjusting module (eqs. 3–4): the agent's actions applied to the attention, α* = α + β·a, renormalised; and the
authors' code's α* = α·(1 + β·a) (:func:`adjust_attention_multiplicatively`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def adjust_attention(attention: Tensor, action: Tensor, beta: Tensor | float, mask: Tensor) -> Tensor:
    # eqs. 3–4: α*_t = α_t + β·a_t; non-positive α*_t set to 0; renormalized over real tokens.
    """Revised attention α′ with the shape of ``attention``.

    ``attention`` and ``action`` are [B, K, T] (or [B, K, T, H] for multi-dimensional attention,
    adjusted per dimension); ``mask`` is [B, K, T] and True on real tokens. Padding stays exactly
    0. A sequence (or dimension) whose entries would all be non-positive keeps its original α,
    so the result never holds NaN. Gradients flow into ``attention`` and ``beta``.

    ``attention`` and ``mask`` may have size 1 where ``action`` has more, on axes before the token
    axis: several action samples of one α ([B, 1, K, T] against [B, S, K, T]) adjust it without
    copying it once per sample. The result has ``action``'s shape.
    """
    token_axis = mask.dim() - 1
    try:
        shape = torch.broadcast_shapes(attention.shape, action.shape, mask.shape + attention.shape[mask.dim():])
    except RuntimeError:
        shape = None
    if shape != action.shape or attention.shape[token_axis:] != action.shape[token_axis:]:
        raise ValueError(f"action shape {tuple(action.shape)} does not match attention shape {tuple(attention.shape)}")
    real = mask
    while real.dim() < attention.dim():
        real = real.unsqueeze(-1)
    # relu, a multiplication by the reciprocal and the fallback only where needed: each full-size
    # operation of this function is repeated for every action sample, forward and backward, and
    # this form has half as many as where/divide/where (the same values and gradients; the check
    # for a fallback is one host sync on a GPU).
    kept = F.relu(attention + beta * action) * real
    total = kept.sum(dim=token_axis, keepdim=True)
    degenerate = total <= 0
    revised = kept * torch.where(degenerate, torch.ones_like(total), total).reciprocal()
    if bool(degenerate.any()):
        revised = torch.where(degenerate, attention * real, revised)
    return revised


def adjust_attention_multiplicatively(attention: Tensor, action: Tensor, beta: Tensor | float, mask: Tensor) -> Tensor:
    # the authors' code, not eqs. 3–4: α*_t = α_t·(1 + β·a_t), renormalised over real tokens (eq. 3 with β·α_t·a_t)
    """:func:`adjust_attention`'s result for the action α·a: with a = ±1 and β < 1 a token's weight is lowered to
    α(1 − β) or raised to α(1 + β) before the renormalisation, and never zeroed (``adjust.multiplicative``)."""
    return adjust_attention(attention, attention * action, beta, mask)
