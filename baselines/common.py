"""Pieces several attention networks share: embeddings, packed RNNs, attention scorers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar, cast

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from drga.baselines.protocol import masked_softmax

M = TypeVar("M", bound=nn.Module)


def module_list(modules: Iterable[M]) -> Sequence[M]:
    """``nn.ModuleList(modules)`` (its modules registered as submodules where it is assigned), typed as the sequence
    of ``M`` it is: ``nn.ModuleList`` is not generic, so its items would type as any module."""
    return cast("Sequence[M]", nn.ModuleList(modules))

__all__ = [
    "make_embedding", "even_hidden", "run_rnn", "masked_mean", "check_tokens", "require_extras", "BilinearAttention",
    "ContextVectorAttention", "attention_pool", "dropout_keep_mask", "apply_keep_mask", "head_dropout_masks", "run_head",
]


def make_embedding(
    vocab_size: int, dim: int, embeddings: Tensor | None, freeze: bool, unknown_index: int | None = 1
) -> nn.Embedding:
    """An embedding table with ``<pad>`` = 0, optionally initialised from pretrained vectors.

    The ``<unk>`` row (``unknown_index``, the toolkit vocabulary's id 1) starts at zero: with a
    vocabulary of every training word no training token maps to it, so a random start would
    stay a fixed random vector that every unknown dev or test word reads. Setting it to zero
    after training moved MR test accuracy by +1.2 to +2.4 points on average over seeds, and one
    run by +4.8 (docs/results/unk-effect.md).
    """
    embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
    if embeddings is not None:
        if tuple(embeddings.shape) != (vocab_size, dim):
            raise ValueError(f"pretrained embeddings have shape {tuple(embeddings.shape)}, expected ({vocab_size}, {dim})")
        embedding.weight.data.copy_(embeddings)
        embedding.weight.data[0] = 0.0  # <pad>, as nn.Embedding's padding_idx keeps it
    if unknown_index is not None and 0 < unknown_index < vocab_size:
        embedding.weight.data[unknown_index] = 0.0
    embedding.weight.requires_grad_(not freeze)
    return embedding


def even_hidden(hidden_size: int, what: str = "two RNN directions") -> int:
    if hidden_size % 2:
        raise ValueError(f"hidden_size must be even ({what}), got {hidden_size}")
    return hidden_size // 2


def run_rnn(rnn: nn.RNNBase, inputs: Tensor, mask: Tensor) -> Tensor:
    """Outputs [N, T, D] of a batch-first RNN over the real tokens only; zero on padding.

    A row without any real token is read as one token long (its output is masked by callers).
    """
    lengths = mask.sum(dim=1).clamp_min(1).cpu()
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    outputs, _ = rnn(packed)
    outputs, _ = pad_packed_sequence(outputs, batch_first=True, total_length=inputs.shape[1])
    return outputs * mask.unsqueeze(-1).to(outputs.dtype)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``values`` [..., T, D] over the real positions of ``mask`` [..., T]; 0 for none."""
    real = mask.unsqueeze(-1).to(values.dtype)
    return (values * real).sum(dim=-2) / real.sum(dim=-2).clamp_min(1.0)


def check_tokens(tokens: Tensor, dims: int, net: str, kind: str) -> None:
    if tokens.dim() != dims:
        shape = "[batch, tokens]" if dims == 2 else "[batch, sentences, tokens]"
        raise ValueError(
            f"network '{net}' reads {kind} ({shape} tokens) but got a batch of shape {tuple(tokens.shape)}; "
            "use a data set of the matching kind (see `drga datasets`)"
        )


def require_extras(extras: dict[str, Tensor], names: tuple[str, ...], net: str) -> None:
    missing = [n for n in names if n not in extras]
    if missing:
        raise ValueError(
            f"network '{net}' needs the batch extras {', '.join(missing)} (an aspect term per example); "
            "use an aspect data set such as semeval14-laptop"
        )


class BilinearAttention(nn.Module):
    # IAN (Ma et al. 2017), eqs. 5–6: γ_i = tanh(h_i W q + b), α = softmax(γ) over real tokens.
    """Scores every hidden state against one query vector with a bilinear form."""

    def __init__(self, hidden_size: int, query_size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden_size, query_size))
        nn.init.xavier_uniform_(self.weight)
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, hidden: Tensor, query: Tensor, mask: Tensor) -> Tensor:
        scores = torch.tanh(torch.einsum("...td,de,...e->...t", hidden, self.weight, query) + self.bias)
        return masked_softmax(scores, mask)


class ContextVectorAttention(nn.Module):
    # HAN (Yang et al. 2016), eqs. 5–7: u_t = tanh(W h_t + b), α_t ∝ exp(u_tᵀ u_w) over real tokens.
    """Attention of hidden states against a context vector u given by the caller."""

    def __init__(self, hidden_size: int, attention_size: int):
        super().__init__()
        self.proj = nn.Linear(hidden_size, attention_size)
        self.context = nn.Linear(hidden_size, attention_size, bias=False)

    def forward(self, hidden: Tensor, query: Tensor, mask: Tensor) -> Tensor:
        keys = torch.tanh(self.proj(hidden))
        scores = (keys * self.context(query).unsqueeze(-2)).sum(dim=-1)
        return masked_softmax(scores, mask)


def attention_pool(alpha: Tensor, values: Tensor, copies: int = 1) -> Tensor:
    # eq. 10: c′ = Σ_t α′_t h_t
    """α′ [E·copies, T] (or [E·copies, T, D] for multi-dimensional attention) over ``values``
    [E, T, D] → [E·copies, D]: each example's ``copies`` revisions (in a row, as
    :meth:`NetworkEncoding.repeat_interleave` orders them) read its values, never a copy of them."""
    if alpha.dim() == 2:
        return torch.bmm(alpha.reshape(values.shape[0], copies, -1), values).flatten(0, 1)
    return (alpha.reshape(values.shape[0], copies, *alpha.shape[1:]) * values.unsqueeze(1)).sum(dim=2).flatten(0, 1)


def dropout_keep_mask(like: Tensor, p: float, training: bool, shape: Sequence[int] | None = None) -> Tensor | None:
    """Dropout's scaled keep-mask: 0 with probability ``p``, else 1/(1 − p), of ``shape`` (default:
    ``like``'s) on ``like``'s device and dtype; None when not ``training`` or ``p`` = 0. Drawn
    apart from its use so that one mask can serve several passes (:func:`apply_keep_mask`)."""
    if not training or p == 0.0:
        return None
    return like.new_empty(like.shape if shape is None else tuple(shape)).bernoulli_(1.0 - p).div_(1.0 - p)


def apply_keep_mask(x: Tensor, keep: Tensor | None, copies: int = 1) -> Tensor:
    """Dropout with a drawn mask: ``x`` [E·copies, ...] times ``keep`` [E, ...] (None: ``x``).

    ``x`` holds each example ``copies`` times in a row (the K action samples of a repeated
    encoding); every copy gets its example's mask, so the samples differ only by their actions
    (common random numbers: the REINFORCE baseline, the samples' mean reward, then cancels the
    dropout noise).
    """
    if keep is None:
        return x
    if copies == 1:
        return x * keep
    return (x.view(-1, copies, *x.shape[1:]) * keep.unsqueeze(1)).view_as(x)


def head_dropout_masks(head: nn.Module, like: Tensor, *, training: bool, input_dropout: float = 0.0) -> tuple[Tensor | None, ...]:
    """Keep-masks for a classifier head: one on its input (rate ``input_dropout``; 0: none), then one per
    ``nn.Dropout`` inside it (a ``Linear`` or a ``Sequential`` of layers), for ``like.shape[0]``
    examples (on its device, in its dtype); Nones when not ``training``.

    A network draws them in ``encode`` and keeps them in its encoding's cache, so that ``predict``
    applies the same masks to every revised copy of an example (:func:`run_head`): the K action
    samples of one sequence then differ by their actions alone, and the REINFORCE baseline (the
    samples' mean reward) cancels the dropout noise instead of rewarding the agent for it.
    """
    layers = list(head) if isinstance(head, nn.Sequential) else [head]
    linears = [layer for layer in layers if isinstance(layer, nn.Linear)]
    if not linears:
        raise ValueError("a classifier head needs at least one nn.Linear")
    batch, width = like.shape[0], linears[0].in_features
    masks = [dropout_keep_mask(like, input_dropout, training, (batch, width))]
    for layer in layers:
        if isinstance(layer, nn.Linear):
            width = layer.out_features
        elif isinstance(layer, nn.Dropout):
            masks.append(dropout_keep_mask(like, layer.p, training, (batch, width)))
    return tuple(masks)


def run_head(head: nn.Module, x: Tensor, keep: Sequence[Tensor | None], copies: int = 1) -> Tensor:
    """The classifier head on ``x`` [E·copies, D] with the masks of :func:`head_dropout_masks`
    ([E, ...] each) in place of its dropouts; see :func:`apply_keep_mask` for ``copies``."""
    layers = list(head) if isinstance(head, nn.Sequential) else [head]
    masks = iter(keep)
    x = apply_keep_mask(x, next(masks), copies)
    for layer in layers:
        x = apply_keep_mask(x, next(masks), copies) if isinstance(layer, nn.Dropout) else layer(x)
    return x
