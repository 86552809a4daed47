"""Transformer encoder (Vaswani et al. 2017) whose every head of every layer DRGA can adjust.

How a head's T×T attention becomes one array of the protocol
-------------------------------------------------------------
A head of layer l gives a matrix A[i, t] (query position i, key position t; each row a
distribution over the real keys). DRGA's agent acts once per token, so the array it sees for
head (l, h) is the attention each token *receives*, averaged over the real query positions:

    ᾱ_t = (1/L) Σ_i A[i, t]          (a distribution over the real tokens, zero on padding)

There are K = layers × heads such arrays at one site ("heads", array k = l·heads + h), each
adjusted and renormalised on its own by eqs. 3–4. The revised array ᾱ′ enters the attention
computation by shifting every query row by the change of its key's column mean, clipping at 0
and renormalising the rows that clipped:

    A′[i, t] = max(A[i, t] + ᾱ′_t − ᾱ_t, 0) · Σ_s A[i, s] / Σ_s max(A[i, s] + ᾱ′_s − ᾱ_s, 0)

Rows of A and both arrays sum to 1, so a row that needs no clipping keeps its mass and the
column mean of A′ is exactly ᾱ′; ᾱ′ = ᾱ reproduces A exactly, and no entry moves by more than
the largest change of the array (before a clipped row is renormalised). The revision is bounded
by the action: an earlier form rescaled each key column by ᾱ′_t/ᾱ_t, which made a small action
on a tiny column a huge ratio in every head of every layer.

Simplification (documented in docs/families.md): all revisions are applied at once to the
matrices of the *original* forward pass. ``predict`` re-runs every layer's value path (values,
output projection, residuals, feed-forward) on the revised weights, so a revision in layer 1
changes what layer 2 mixes, but layer 2's weights are not recomputed from the changed queries
and keys. With its own attention (plain training, ``net-only``) ``predict`` reuses the layer
outputs ``encode`` computed. ``encode`` draws every dropout mask of the pass (each layer's two
and the classifier's two) and ``predict`` applies those same masks to every revised copy: the K
action samples of an example differ only by their actions, ``predict`` with the network's own
attention is exactly the forward pass ``encode`` made, and co-training draws no more random
numbers than plain training.

Classification uses attention pooling over the last layer's outputs, a second site
("pooling", K = 1) with its own learned query, so the agent adjusts it too.

Observation layout (both sites share Dw = embedding_dim, Dh = Du = hidden_size):
heads site: w_t = token embedding, h_t = the input of layer l at t (the representation head
(l, h) attends over; handed over once per layer, G = layers, see the protocol), u = a learned
vector per (layer, head) that tells the shared agent which head it is adjusting; pooling site:
w_t = token embedding, h_t = last layer's output, u = the pooling query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import (
    apply_keep_mask,
    check_tokens,
    dropout_keep_mask,
    head_dropout_masks,
    make_embedding,
    module_list,
    run_head,
)
from drga.baselines.lstm_sa import AdditiveSelfAttention
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
from drga.registry import register_network


def sinusoidal_positions(length: int, dim: int, device: torch.device, dtype: torch.dtype) -> Tensor:
    """[T, dim] sinusoidal positional encoding (Vaswani et al. 2017, sec. 3.5)."""
    position = torch.arange(length, device=device, dtype=dtype).unsqueeze(1)
    rates = torch.exp(torch.arange(0, dim, 2, device=device, dtype=dtype) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim, device=device, dtype=dtype)
    table[:, 0::2] = torch.sin(position * rates)
    table[:, 1::2] = torch.cos(position * rates[: dim // 2])
    return table


def column_mean(matrices: Tensor, mask: Tensor) -> Tensor:
    """ᾱ [B, H, T]: the attention each key receives, averaged over the real query rows."""
    rows = mask[:, None, :, None].to(matrices.dtype)
    count = mask.sum(dim=1).clamp_min(1).to(matrices.dtype)[:, None, None]
    return (matrices * rows).sum(dim=2) / count


def revise_matrices(matrices: Tensor, original: Tensor, revised: Tensor) -> Tensor:
    # The head's revision: A′[i, t] = max(A[i, t] + ᾱ′_t − ᾱ_t, 0), each row rescaled to A's row mass.
    """A′ from A [B, H, T, T] and the head arrays ᾱ, ᾱ′ [B, H, T] (see the module docstring).

    The shift ᾱ′ − ᾱ is 0 on padding keys (both arrays are), so padding keeps weight 0. The
    rescaling factor Σ A / Σ A′ is exactly 1 where nothing moved; a row whose every entry would
    clip (impossible for distributions, kept for safety) keeps its original weights.
    """
    shifted = torch.relu(matrices + (revised - original).unsqueeze(2))
    mass, total = matrices.sum(dim=-1, keepdim=True), shifted.sum(dim=-1, keepdim=True)
    ok = total > 0
    return torch.where(ok, shifted * (mass / torch.where(ok, total, torch.ones_like(total))), matrices)


class EncoderLayer(nn.Module):
    """One post-LN Transformer layer split in two: the attention weights, and everything else."""

    def __init__(self, dim: int, heads: int, feedforward_size: int, dropout: float):
        super().__init__()
        if dim % heads:
            raise ValueError(f"hidden_size ({dim}) must be divisible by heads ({heads})")
        self.heads, self.head_dim = heads, dim // heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.output = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.feedforward = nn.Sequential(nn.Linear(dim, feedforward_size), nn.ReLU(), nn.Linear(feedforward_size, dim))
        self.dropout = nn.Dropout(dropout)

    def _split(self, x: Tensor) -> Tensor:
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def weights(self, x: Tensor, mask: Tensor) -> Tensor:
        """A [B, H, T, T] = softmax(QKᵀ/√d_k) over the real keys."""
        scores = self._split(self.query(x)) @ self._split(self.key(x)).transpose(-1, -2) / math.sqrt(self.head_dim)
        return masked_softmax(scores, mask[:, None, None, :])

    def dropout_masks(self, x: Tensor) -> tuple[Tensor | None, Tensor | None]:
        """Keep-masks of the layer's two dropouts (after the attention, after the feed-forward
        block) for its input x [B, T, D]; (None, None) when not training."""
        p = self.dropout.p
        return dropout_keep_mask(x, p, self.training), dropout_keep_mask(x, p, self.training)

    def values(self, x: Tensor) -> Tensor:
        """V [B, H, T, d_k], the values every head mixes."""
        return self._split(self.value(x))

    def mix(self, x: Tensor, weights: Tensor, mask: Tensor, keep: tuple, copies: int = 1, values: Tensor | None = None) -> Tensor:
        """The layer's output given its attention weights: A·V, output projection, residuals, FFN.

        ``keep``: :meth:`dropout_masks`, one per example; ``copies``: x holds each example that
        many times in a row, every copy with its example's masks. ``values``: :meth:`values` of
        x, when already computed.
        """
        values = self.values(x) if values is None else values
        mixed = (weights @ values).transpose(1, 2).reshape(x.shape)
        return self._rest(x, self.output(mixed), mask, keep, copies)

    def mix_repeated(
        self, x: Tensor, weights: Tensor, mask: Tensor, keep: tuple, repeats: int, values: Tensor | None = None
    ) -> Tensor:
        """:meth:`mix` to ``x.repeat_interleave(repeats, 0)`` with one weight matrix per copy.

        x [B, T, D], weights [B·R, H, T, T], mask [B·R, T]. The output projection is linear, so
        (concat_h A_h V_h) W_Oᵀ = Σ_h A_h (V_h W_O,hᵀ): the values and their projection are
        computed once per example and only the T×T mixing per copy (the same result up to
        rounding); everything after it runs per copy, with its example's dropout masks ``keep``.
        """
        b, t, d = x.shape
        heads = self.heads
        w_out = self.output.weight.view(d, heads, self.head_dim).permute(1, 2, 0)  # [H, d_k, D]
        values = self.values(x) if values is None else values
        projected = values @ w_out  # V_h W_O,hᵀ, [B, H, T, D]
        copies = weights.view(b, repeats, heads, t, t).transpose(1, 2).reshape(b, heads, repeats * t, t)
        out = (copies @ projected).sum(dim=1).view(b * repeats, t, d) + self.output.bias
        return self._rest(x.repeat_interleave(repeats, dim=0), out, mask, keep, repeats)

    def _rest(self, x: Tensor, attended: Tensor, mask: Tensor, keep: tuple, copies: int) -> Tensor:
        """Residuals, layer norms and the feed-forward block after the projected attention output."""
        after_attention, after_feedforward = keep
        x = self.norm1(x + apply_keep_mask(attended, after_attention, copies))
        x = self.norm2(x + apply_keep_mask(self.feedforward(x), after_feedforward, copies))
        return x * mask.unsqueeze(-1).to(x.dtype)


# The Transformer re-runs its layers for every action sample, which makes co-training at K = 5 with
# eq. 12 through every sample several plain epochs' cost; two samples and the gradient through one
# keep it within the throughput budget (the measured ratios and their command: docs/RESULTS.md,
# "Throughput").
@register_network("transformer", defaults={"agent.samples": 2, "train.task_loss_samples": 1})
class TransformerClassifier(AttentionNetwork):
    """Transformer encoder (multi-head, multi-layer, sinusoidal positions) with attention pooling."""

    #: A positive control degrades the pooling only: the heads site is a view of the attention matrices, which
    #: ``predict`` revises in proportion and never reads as given (drga/core/degradation.py).
    degradable_sites = ("pooling",)

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        attention_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.5,
        layers: int = 2,
        heads: int = 2,
        feedforward_size: int = 600,
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        if layers < 1 or heads < 1:
            raise ValueError(f"layers and heads must be at least 1, got layers={layers}, heads={heads}")
        self.layers_count, self.heads = layers, heads
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.input_proj = nn.Linear(embedding_dim, hidden_size) if embedding_dim != hidden_size else nn.Identity()
        self.dropout = nn.Dropout(dropout)
        self.layers = module_list(EncoderLayer(hidden_size, heads, feedforward_size, dropout) for _ in range(layers))
        # One learned vector per head: the u of its array, so one agent can tell the K arrays apart.
        self.head_queries = nn.Parameter(torch.randn(layers * heads, hidden_size) * 0.1)
        self.pool_query = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.pooling = AdditiveSelfAttention(hidden_size, hidden_size, attention_size)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    @property
    def arrays(self) -> int:
        """K of the heads site: layers × heads."""
        return self.layers_count * self.heads

    def _embed(self, batch: Batch) -> tuple[Tensor, Tensor]:
        """The word vectors and layer 1's input (projected, with positions, dropout, zero on padding)."""
        check_tokens(batch.tokens, 2, self.net_name, "flat text")
        words = self.embedding(batch.tokens)
        x = self.input_proj(words)
        x = x + sinusoidal_positions(x.shape[1], x.shape[2], x.device, x.dtype)
        return words, self.dropout(x) * batch.mask.unsqueeze(-1).to(x.dtype)

    def forward(self, batch: Batch) -> Tensor:
        """Plain training and ``net-only`` evaluation: the network with its own attention, without
        building the agent's sites (the same output as ``predict(encode(batch), own attention)``)."""
        if self.attention_degradation is not None:  # a positive control's degraded pooling: through encode, which applies it
            return super().forward(batch)
        _, x = self._embed(batch)
        for layer in self.layers:
            x = layer.mix(x, layer.weights(x, batch.mask), batch.mask, layer.dropout_masks(x))
        pooling = self.pooling(x, self.pool_query.expand(batch.size, -1), batch.mask)
        return self._classify(pooling, x, self._classifier_masks(x), copies=1)

    def encode(self, batch: Batch) -> NetworkEncoding:
        mask = batch.mask
        words, x = self._embed(batch)
        embedded = x
        inputs, matrices, layer_masks = [], [], []
        first_values = self.layers[0].values(x)  # also what every revised copy of layer 1 mixes
        for index, layer in enumerate(self.layers):
            weights = layer.weights(x, mask)
            inputs.append(x)
            matrices.append(weights)
            layer_masks.append(layer.dropout_masks(x))
            x = layer.mix(x, weights, mask, layer_masks[-1], values=first_values if index == 0 else None)
        matrices_t = torch.stack(matrices, dim=1)  # [B, L, H, T, T]
        b, t = mask.shape
        head_arrays = column_mean(matrices_t.flatten(1, 2), mask)  # [B, L·H, T]
        k = self.arrays
        heads_site = AttentionSite(
            word_vectors=words.unsqueeze(1),  # one group: the same words for every head
            hidden_states=torch.stack(inputs, dim=1),  # [B, L, T, D]: the heads of a layer share its input
            query=self.head_queries.unsqueeze(0).expand(b, -1, -1),
            mask=mask.unsqueeze(1).expand(b, k, t),
            attention=head_arrays,
            name="heads",
        )
        pool_query = self.pool_query.expand(b, -1)
        pooling = self.pooling(x, pool_query, mask)
        pooling_site = AttentionSite.single(words, x, pool_query, mask, pooling, name="pooling")
        # "output": the last layer's output under the network's own attention, which ``predict``
        # reuses instead of re-running the layers when the heads are not revised; "dropout": the
        # pass's dropout masks, which ``predict`` applies to every revised copy.
        dropout = {"layers": layer_masks, "classifier": self._classifier_masks(x)}
        cache = {"embedded": embedded, "first_values": first_values, "matrices": matrices_t, "mask": mask, "output": x,
                 "dropout": dropout}
        return NetworkEncoding(sites=(heads_site, pooling_site), cache=cache)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        if len(attention) != 2:
            raise ValueError(f"transformer: expected 2 attention arrays (heads, pooling), got {len(attention)}")
        heads, pooling = attention
        cache = encoding.cache
        mask, matrices = cache["mask"], cache["matrices"]
        base = encoding.base  # a repeated encoding: what is the same for every copy, once per example
        copies = encoding.repeats
        dropout = (base if base is not None else encoding).cache["dropout"]  # encode's masks, for every copy
        if heads is encoding.sites[0].attention:
            x = cache["output"]  # the network's own attention: encode already ran the layers on it
        else:
            original = encoding.sites[0].attention
            revised = revise_matrices(matrices.flatten(1, 2), original, heads).view_as(matrices)
            for index, (layer, keep) in enumerate(zip(self.layers, dropout["layers"])):
                if index == 0 and base is not None:  # layer 1's input is the same for every copy
                    x = layer.mix_repeated(base.cache["embedded"], revised[:, 0], mask, keep, copies, base.cache["first_values"])
                elif index == 0:
                    x = layer.mix(cache["embedded"], revised[:, 0], mask, keep, copies, cache["first_values"])
                else:
                    x = layer.mix(x, revised[:, index], mask, keep, copies)
        return self._classify(pooling[:, 0], x, dropout["classifier"], copies)

    def _classifier_masks(self, x: Tensor) -> tuple[Tensor | None, ...]:
        """Keep-masks of the classifier's dropouts (on the context, on its hidden layer)."""
        return head_dropout_masks(self.classifier, x, training=self.training, input_dropout=self.dropout.p)

    def _classify(self, pooling: Tensor, x: Tensor, keep: tuple, copies: int) -> Tensor:
        """Logits from the pooling weights [B, T] over the last layer's outputs x [B, T, D]."""
        context = torch.einsum("bt,btd->bd", pooling, x)  # eq. 10: c′ = Σ_t α′_t h_t
        return run_head(self.classifier, context, keep, copies)
