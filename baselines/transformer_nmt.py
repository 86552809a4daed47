"""Transformer encoder-decoder (Vaswani et al. 2017) for translation, every cross-attention head adjustable.

Architecture: pre-LN layers (LayerNorm before each sub-layer, a final LayerNorm on each stack;
it trains stably without a long warm-up), ``layers`` encoder and ``layers`` decoder layers of
``heads`` heads, model size ``hidden_size`` (``embedding_dim`` is not used: embeddings have the
model size), feed-forward size ``feedforward_size``, sinusoidal positions, embeddings scaled by
√d. The target embedding is tied to the output projection; with ``share_embeddings`` (one
vocabulary for both languages) the source embedding is the same table too. Label smoothing is
part of the training loss (``nmt.label_smoothing``), not of the network.

DRGA site (``baselines/nmt_common.py``): the decoder's cross-attention over the source. At
target step t, layer l, head h the weights A^{l,h}[t, :] are one distribution over the source,
one array, so K = T_y · layers · heads arrays, array k = (t · layers + l) · heads + h. w = source
embedding, h = the encoder output (the memory every cross-attention reads), u = the decoder
state that queries it (the input of layer l's cross-attention sub-layer at step t) plus a fixed
random code per (layer, head) — without it the heads of a layer would give the shared agent
identical observations.

``predict`` re-runs the decoder with the revised rows in place of each layer's cross-attention
weights: a revision in layer 1 changes what every later layer (and later steps, through
self-attention, which is recomputed) sees. ``encode`` draws every dropout mask of the decoder's
teacher-forced pass once per example and ``predict`` applies those same masks to each of the K
revised copies (common random numbers, as ``baselines/transformer.py``): the samples' rewards
then differ only by their actions, and what is the same in every copy is computed once — the
target embedding and layer 1's self-attention sub-layer (its input does not depend on the
cross-attention) and each layer's projected source values. Simplification, as in ``baselines/transformer.py``:
all arrays are revised at once from the original pass, so the cross-attention weights of layer
2 are not recomputed from the changed queries. Decoding with the agent does the same per step
(an original pass to get the step's arrays, the agent's revision, a pass with the revised rows),
so training and decoding agree exactly.

Decoding is incremental (``kv_cache``, default on): each decoder layer keeps the self-attention
keys and values of the positions decoded so far — one cache for the original pass and, with the
agent, one for the revised pass — and the cross-attention keys and values of the source are
projected once per sentence, so a step runs one position through the stack instead of the
whole prefix. ``kv_cache = False`` re-runs the prefix every step (same outputs, tested).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import apply_keep_mask, check_tokens, dropout_keep_mask, module_list
from drga.baselines.nmt_common import (
    Adjuster,
    CrossAttentionEncoding,
    DecoderState,
    TranslationNetwork,
    adjusted_attention,
    adjuster_source,
    cross_attention_site,
    decoder_input,
)
from drga.baselines.protocol import Batch, NetworkEncoding, masked_softmax, per_example
from drga.baselines.transformer import sinusoidal_positions
from drga.registry import register_network

#: A decoder layer's dropout keep-masks (:meth:`DecoderLayer.dropout_masks`), None where not training.
DecoderLayerMasks = tuple[Tensor | None, Tensor | None, Tensor | None, Tensor | None]


class MultiHeadAttention(nn.Module):
    """Scaled dot-product attention (Vaswani et al. eq. 1) split into weights and mixing."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        if dim % heads:
            raise ValueError(f"hidden_size ({dim}) must be divisible by heads ({heads})")
        self.heads, self.head_dim = heads, dim // heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.output = nn.Linear(dim, dim)

    def _split(self, x: Tensor) -> Tensor:
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def weights(self, queries: Tensor, keys: Tensor, mask: Tensor) -> Tensor:
        """A [N, H, T_q, T_k] = softmax(QKᵀ/√d_k); ``mask`` broadcasts to [N, 1, T_q, T_k]."""
        return self.head_weights(self.split_queries(queries), self.split_keys(keys), mask)

    def mix(self, weights: Tensor, values: Tensor) -> Tensor:
        """The heads' weighted values, concatenated and projected: [N, T_q, D]."""
        return self.head_mix(weights, self.split_values(values))

    # Projected, head-split queries, keys and values [N, H, T, d_k]: incremental decoding keeps
    # the keys and values of earlier positions (and of the source) instead of recomputing them.

    def split_queries(self, x: Tensor) -> Tensor:
        return self._split(self.query(x))

    def split_keys(self, x: Tensor) -> Tensor:
        return self._split(self.key(x))

    def split_values(self, x: Tensor) -> Tensor:
        return self._split(self.value(x))

    def head_weights(self, queries: Tensor, keys: Tensor, mask: Tensor) -> Tensor:
        """:meth:`weights` from head-split queries [N, H, T_q, d_k] and keys [N, H, T_k, d_k]."""
        return masked_softmax(queries @ keys.transpose(-1, -2) / math.sqrt(self.head_dim), mask)

    def head_mix(self, weights: Tensor, values: Tensor) -> Tensor:
        """:meth:`mix` from head-split values [N, H, T_k, d_k]."""
        mixed = weights @ values
        return self.output(mixed.transpose(1, 2).reshape(mixed.shape[0], mixed.shape[2], -1))


def feedforward(dim: int, hidden: int, dropout: float) -> nn.Sequential:
    """The position-wise feed-forward block (Vaswani et al. eq. 2)."""
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, dim))


class EncoderLayer(nn.Module):
    """Pre-LN encoder layer: self-attention, then feed-forward, each with a residual."""

    def __init__(self, dim: int, heads: int, feedforward_size: int, dropout: float):
        super().__init__()
        self.attention = MultiHeadAttention(dim, heads)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.feedforward = feedforward(dim, feedforward_size, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        a = self.norm1(x)
        x = x + self.dropout(self.attention.mix(self.attention.weights(a, a, mask[:, None, None, :]), a))
        return x + self.dropout(self.feedforward(self.norm2(x)))


class DecoderLayer(nn.Module):
    """Pre-LN decoder layer with the cross-attention weights computable apart or given from outside."""

    def __init__(self, dim: int, heads: int, feedforward_size: int, dropout: float):
        super().__init__()
        self.self_attention = MultiHeadAttention(dim, heads)
        self.cross_attention = MultiHeadAttention(dim, heads)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.feedforward = feedforward(dim, feedforward_size, dropout)
        self.dropout = nn.Dropout(dropout)

    def dropout_masks(self, x: Tensor) -> DecoderLayerMasks:
        """Keep-masks of the layer's four dropouts for x [N, T, D] (after self-attention, after
        cross-attention, inside and after the feed-forward block); Nones when not training."""
        p, inner = self.dropout.p, (*x.shape[:-1], self.feedforward[0].out_features)
        return (dropout_keep_mask(x, p, self.training), dropout_keep_mask(x, p, self.training),
                dropout_keep_mask(x, p, self.training, inner), dropout_keep_mask(x, p, self.training))

    def self_block(self, x: Tensor, causal: Tensor, keep: DecoderLayerMasks, copies: int = 1) -> tuple[Tensor, Tensor]:
        """Self-attention sub-layer with ``keep``'s masks (x holds each example ``copies`` times in a
        row, ``keep`` one mask per example); returns the new x and the cross-attention's query input."""
        a = self.norm1(x)
        x = x + apply_keep_mask(self.self_attention.mix(self.self_attention.weights(a, a, causal), a), keep[0], copies)
        return x, self.norm2(x)

    def rest(self, x: Tensor, cross_weights: Tensor, memory_values: Tensor, keep: DecoderLayerMasks, copies: int = 1) -> Tensor:
        """Cross-attention with the given weights [N·copies, H, T_y, T_x] over the memory's head-split
        values [N, H, T_x, d_k] (read by every copy of an example, not copied), then the feed-forward
        sub-layer, with ``keep``'s masks."""
        attention = self.cross_attention
        if copies == 1:
            mixed = cross_weights @ memory_values
        else:
            mixed = (cross_weights.unflatten(0, (-1, copies)) @ memory_values.unsqueeze(1)).flatten(0, 1)
        attended = attention.output(mixed.transpose(1, 2).reshape(mixed.shape[0], mixed.shape[2], -1))
        x = x + apply_keep_mask(attended, keep[1], copies)
        first, _, _, second = self.feedforward
        inner = apply_keep_mask(torch.relu(first(self.norm3(x))), keep[2], copies)
        return x + apply_keep_mask(second(inner), keep[3], copies)

    # ------------------------------------------------------------------ one new position (decoding)

    def self_block_step(self, x: Tensor, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """:meth:`self_block` for one new position x [N, 1, D] given the earlier positions' keys and
        values [N, H, t, d_k]; returns x, the cross-attention's query input, and the keys and values
        extended by the new position (every earlier position is visible: the causal mask's last row)."""
        a = self.norm1(x)
        attention = self.self_attention
        keys = torch.cat([keys, attention.split_keys(a)], dim=2)
        values = torch.cat([values, attention.split_values(a)], dim=2)
        visible = torch.ones(1, 1, 1, keys.shape[2], dtype=torch.bool, device=x.device)
        x = x + self.dropout(attention.head_mix(attention.head_weights(attention.split_queries(a), keys, visible), values))
        return x, self.norm2(x), keys, values

    def rest_step(self, x: Tensor, cross_weights: Tensor, memory_values: Tensor) -> Tensor:
        """:meth:`rest` with the memory's head-split values [N, H, T_x, d_k] computed once per sentence."""
        x = x + self.dropout(self.cross_attention.head_mix(cross_weights, memory_values))
        return x + self.dropout(self.feedforward(self.norm3(x)))


def causal_mask(target_mask: Tensor) -> Tensor:
    """[N, 1, T, T]: position i sees the real positions j ≤ i."""
    t = target_mask.shape[1]
    lower = torch.ones(t, t, dtype=torch.bool, device=target_mask.device).tril()
    return lower[None, None] & target_mask[:, None, None, :]


@register_network(
    "transformer-nmt", input="parallel", runtime=("share_embeddings", "kv_cache"),
    defaults={
        "network.hidden_size": 256, "network.dropout": 0.1, "network.layers": 3, "network.heads": 4, "network.feedforward_size": 1024,
        "agent.hidden_sizes": [128, 128], "train.lr": 5e-4, "train.pretrain_epochs": 10, "train.agent_epochs": 2,
        "train.cotrain_epochs": 5, "nmt.label_smoothing": 0.1, "nmt.warmup_steps": 1000,
    },
)
class TransformerNMT(TranslationNetwork):
    """Transformer encoder-decoder (pre-LN, multi-head, multi-layer, tied output embedding)."""

    array_codes: Tensor  #: a buffer: one random code per (layer, head) array, [L, H, D]

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        hidden_size: int = 256,
        dropout: float = 0.1,
        layers: int = 3,
        heads: int = 4,
        feedforward_size: int = 1024,
        share_embeddings: bool = False,
        kv_cache: bool = True,
    ):
        """``vocab_size`` is the source vocabulary, ``num_classes`` the target vocabulary.

        ``kv_cache``: decoding (``start``/``step``) keeps the decoder self-attention's keys and
        values of earlier positions and the source's cross-attention keys and values instead of
        re-running the whole prefix every step (same outputs, tested; the attribute can be
        changed between decodings).
        """
        super().__init__()
        if layers < 1 or heads < 1:
            raise ValueError(f"layers and heads must be at least 1, got layers={layers}, heads={heads}")
        if share_embeddings and vocab_size != num_classes:
            raise ValueError(f"share_embeddings needs one vocabulary, got {vocab_size} source and {num_classes} target ids")
        self.dim, self.layers_count, self.heads = hidden_size, layers, heads
        self.kv_cache = kv_cache
        self.target_embedding = nn.Embedding(num_classes, hidden_size, padding_idx=0)
        nn.init.normal_(self.target_embedding.weight, 0.0, hidden_size**-0.5)
        self.source_embedding = self.target_embedding if share_embeddings else nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        if not share_embeddings:
            nn.init.normal_(self.source_embedding.weight, 0.0, hidden_size**-0.5)
        with torch.no_grad():
            self.target_embedding.weight[0].zero_()
            self.source_embedding.weight[0].zero_()
        self.encoder_layers = module_list(EncoderLayer(hidden_size, heads, feedforward_size, dropout) for _ in range(layers))
        self.decoder_layers = module_list(DecoderLayer(hidden_size, heads, feedforward_size, dropout) for _ in range(layers))
        self.encoder_norm, self.decoder_norm = nn.LayerNorm(hidden_size), nn.LayerNorm(hidden_size)
        self.output_bias = nn.Parameter(torch.zeros(num_classes))
        self.dropout = nn.Dropout(dropout)
        # A fixed code per (layer, head) added to the query u, so one agent can tell the arrays apart.
        self.register_buffer("array_codes", torch.randn(layers, heads, hidden_size))

    @property
    def arrays_per_step(self) -> int:
        """Cross-attention arrays of one decoder step: layers × heads."""
        return self.layers_count * self.heads

    # ------------------------------------------------------------------ pieces

    def _embed(self, embedding: nn.Embedding, tokens: Tensor, offset: int = 0) -> Tensor:
        x = embedding(tokens) * math.sqrt(self.dim)
        positions = sinusoidal_positions(offset + tokens.shape[1], self.dim, x.device, x.dtype)[offset:]
        return self.dropout(x + positions)

    def _encode_source(self, tokens: Tensor, mask: Tensor) -> dict[str, Tensor]:
        check_tokens(tokens, 2, self.net_name, "source text")
        words = self.source_embedding(tokens)
        x = self._embed(self.source_embedding, tokens)
        for layer in self.encoder_layers:
            x = layer(x, mask)
        memory = self.encoder_norm(x) * mask.unsqueeze(-1).to(x.dtype)
        return {"words": words, "memory": memory, "mask": mask}

    def _original_pass(self, target_in: Tensor, target_mask: Tensor, memory: Tensor, source_mask: Tensor):
        """The decoder with its own attention and freshly drawn dropout masks: cross weights
        [N, L, H, T_y, T_x], queries [N, T_y, L, D], output, and what :meth:`_revised_pass` reuses
        (:meth:`_teacher_forced_start`'s layer-1 input, each layer's masks and source values)."""
        causal = causal_mask(target_mask)
        cross_mask = source_mask[:, None, None, :]
        x, first_query, reuse = self._teacher_forced_start(target_in, causal, memory)
        weights, queries = [], []
        for index, layer in enumerate(self.decoder_layers):
            keep = reuse["masks"][index]
            if index == 0:
                query = first_query
            else:
                x, query = layer.self_block(x, causal, keep)
            w = layer.cross_attention.weights(query, memory, cross_mask)
            x = layer.rest(x, w, reuse["values"][index], keep)
            weights.append(w)
            queries.append(query)
        return torch.stack(weights, dim=1), torch.stack(queries, dim=2), self.decoder_norm(x), reuse

    def _teacher_forced_start(self, target_in: Tensor, causal: Tensor, memory: Tensor) -> tuple[Tensor, Tensor, dict]:
        """What every teacher-forced pass over ``target_in`` shares, given the masks: layer 1's
        state after its self-attention sub-layer and its cross-attention query, the dropout masks
        of every layer (drawn here, once per example) and each layer's head-split source values."""
        embedded = self.target_embedding(target_in) * math.sqrt(self.dim)
        embedded = embedded + sinusoidal_positions(target_in.shape[1], self.dim, embedded.device, embedded.dtype)
        embedding_keep = dropout_keep_mask(embedded, self.dropout.p, self.training)
        masks = [layer.dropout_masks(embedded) for layer in self.decoder_layers]
        x, query = self.decoder_layers[0].self_block(apply_keep_mask(embedded, embedding_keep), causal, masks[0])
        values = [layer.cross_attention.split_values(memory) for layer in self.decoder_layers]
        return x, query, {"layer1_state": x, "masks": masks, "values": values}

    def _revised_pass(self, reuse: dict, causal: Tensor, cross: Tensor, copies: int = 1) -> Tensor:
        """The decoder with every layer's cross-attention weights given, [N·R, L, H, T_y, T_x], for R =
        ``copies`` of each example in a row: each copy with its example's dropout masks, layer 1's
        shared start and the source values of ``reuse`` (:meth:`_teacher_forced_start`), read once
        per example; ``causal`` is the examples' mask [N, 1, T_y, T_y]."""
        x = reuse["layer1_state"]
        if copies > 1:
            x, causal = x.repeat_interleave(copies, dim=0), causal.repeat_interleave(copies, dim=0)
        for index, layer in enumerate(self.decoder_layers):
            keep = reuse["masks"][index]
            if index > 0:
                x, _ = layer.self_block(x, causal, keep, copies)
            x = layer.rest(x, cross[:, index], reuse["values"][index], keep, copies)
        return self.decoder_norm(x)

    def _logits(self, x: Tensor) -> Tensor:
        return x @ self.target_embedding.weight.t() + self.output_bias

    def _array_queries(self, queries: Tensor) -> Tensor:
        """u per array from the decoder states [N, T, L, D]: [N, T·L·H, D], with the (layer, head) code."""
        n, t = queries.shape[:2]
        u = queries.unsqueeze(3) + self.array_codes  # [N, T, L, H, D]
        return u.reshape(n, t * self.arrays_per_step, self.dim)

    # ------------------------------------------------------------------ protocol

    def encode(self, batch: Batch) -> CrossAttentionEncoding:
        source = self._encode_source(batch.tokens, batch.mask)
        target_in = decoder_input(batch.labels)
        target_mask = batch.labels != self.pad_id
        weights, queries, output, reuse = self._original_pass(target_in, target_mask, source["memory"], source["mask"])
        n, t_y, t_x = batch.size, batch.labels.shape[1], batch.tokens.shape[1]
        arrays = weights.permute(0, 3, 1, 2, 4).reshape(n, t_y * self.arrays_per_step, t_x)  # k = (t·L + l)·H + h
        cache = {
            "site": {
                "source_words": source["words"], "source_states": source["memory"], "queries": self._array_queries(queries),
                "source_mask": source["mask"], "array_real": target_mask.repeat_interleave(self.arrays_per_step, dim=1),
                "attention": arrays,
            },
            "target_in": target_in,
            "target_mask": target_mask,
            "output": output,
            "reuse": reuse,
        }
        return CrossAttentionEncoding.from_cache(cache)

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        if len(attention) != 1:
            raise ValueError(f"{self.net_name}: expected 1 attention site (cross-attention), got {len(attention)}")
        arrays = attention[0]
        if encoding.base is None and arrays is encoding.sites[0].attention:
            return self._logits(encoding.cache["output"])  # the network's own attention: the encode pass's output
        reuse, copies = per_example(encoding, "reuse")
        target_mask, _ = per_example(encoding, "target_mask")
        n, t_y = arrays.shape[0], target_mask.shape[1]
        cross = arrays.view(n, t_y, self.layers_count, self.heads, -1).permute(0, 2, 3, 1, 4)  # [N, L, H, T_y, T_x]
        return self._logits(self._revised_pass(reuse, causal_mask(target_mask), cross, copies))

    # ------------------------------------------------------------------ decoding

    def start(self, tokens: Tensor, mask: Tensor) -> DecoderState:
        """The encoded source; with ``kv_cache``, also each decoder layer's cross-attention keys and
        values of the source and empty self-attention caches (``original``: the pass with the
        network's own attention; ``revised``: the with-agent mode's pass with the revised rows)."""
        source = self._encode_source(tokens, mask)
        n, t_x = tokens.shape
        if not self.kv_cache:
            return {
                **source,
                "prefix": tokens.new_zeros(n, 0),
                "revised": source["memory"].new_zeros(n, self.layers_count, self.heads, 0, t_x),
            }
        memory, layers = source["memory"], self.decoder_layers
        empty = memory.new_zeros(n, self.heads, 0, self.dim // self.heads)
        return {
            **source,
            "length": 0,  # target positions decoded so far (the same in every row; reorder leaves it as is)
            "cross_keys": [layer.cross_attention.split_keys(memory) for layer in layers],
            "cross_values": [layer.cross_attention.split_values(memory) for layer in layers],
            "original_keys": [empty] * len(layers), "original_values": [empty] * len(layers),
            "revised_keys": [empty] * len(layers), "revised_values": [empty] * len(layers),
        }

    def with_adjuster(self, state: DecoderState, adjust: Adjuster) -> DecoderState:
        return {**state, **adjuster_source(adjust, state["words"], state["memory"], state["mask"])}

    def step(self, state: DecoderState, tokens: Tensor, adjust: Adjuster | None = None) -> tuple[Tensor, DecoderState]:
        if "length" in state:
            return self._cached_step(state, tokens, adjust)
        return self._full_step(state, tokens, adjust)

    def _cached_step(self, state: DecoderState, tokens: Tensor, adjust: Adjuster | None) -> tuple[Tensor, DecoderState]:
        """One position through the decoder, reading and extending the key/value caches.

        Exactly what :meth:`_full_step` computes: the original pass (the network's own attention at
        every earlier position, as ``encode`` sees a teacher-forced prefix) gives this step's
        cross-attention arrays; with ``adjust``, the revised pass (every earlier position with its
        revised rows, as ``predict``) continues from the revised row. Causal self-attention makes
        the earlier positions' keys and values independent of later ones, so they are kept.
        """
        x0 = self._embed(self.target_embedding, tokens.unsqueeze(1), state["length"])
        cross_mask = state["mask"][:, None, None, :]
        x, weights, queries = x0, [], []
        original_keys, original_values = [], []
        for index, layer in enumerate(self.decoder_layers):
            x, query, keys, values = layer.self_block_step(x, state["original_keys"][index], state["original_values"][index])
            w = layer.cross_attention.head_weights(layer.cross_attention.split_queries(query), state["cross_keys"][index], cross_mask)
            x = layer.rest_step(x, w, state["cross_values"][index])
            weights.append(w)
            queries.append(query)
            original_keys.append(keys)
            original_values.append(values)
        new_state = {**state, "length": state["length"] + 1, "original_keys": original_keys, "original_values": original_values}
        if adjust is not None:
            n = tokens.shape[0]
            real = torch.ones(n, self.arrays_per_step, dtype=torch.bool, device=tokens.device)
            arrays = torch.stack(weights, dim=1).reshape(n, self.arrays_per_step, -1)  # this step's arrays, k = l·H + h
            site = cross_attention_site(state["words"], state["memory"], self._array_queries(torch.stack(queries, dim=2)),
                                        state["mask"], real, arrays)
            row = adjusted_attention(adjust, site, state).view(n, self.layers_count, self.heads, 1, -1)
            x, revised_keys, revised_values = x0, [], []
            for index, layer in enumerate(self.decoder_layers):
                x, _, keys, values = layer.self_block_step(x, state["revised_keys"][index], state["revised_values"][index])
                x = layer.rest_step(x, row[:, index], state["cross_values"][index])
                revised_keys.append(keys)
                revised_values.append(values)
            new_state.update(revised_keys=revised_keys, revised_values=revised_values)
        log_probs = torch.log_softmax(self._logits(self.decoder_norm(x)[:, -1]).float(), dim=-1)
        return log_probs, new_state

    def _full_step(self, state: DecoderState, tokens: Tensor, adjust: Adjuster | None) -> tuple[Tensor, DecoderState]:
        """One step without caches: the decoder re-reads the whole prefix (``kv_cache = False``)."""
        prefix = torch.cat([state["prefix"], tokens.unsqueeze(1)], dim=1)
        prefix_mask = torch.ones_like(prefix, dtype=torch.bool)
        memory, mask = state["memory"], state["mask"]
        weights, queries, output, reuse = self._original_pass(prefix, prefix_mask, memory, mask)
        revised = state["revised"]
        if adjust is not None:
            n = prefix.shape[0]
            real = torch.ones(n, self.arrays_per_step, dtype=torch.bool, device=prefix.device)
            last = weights[:, :, :, -1].reshape(n, self.arrays_per_step, -1)  # this step's arrays, k = l·H + h
            site = cross_attention_site(state["words"], memory, self._array_queries(queries[:, -1:]), mask, real, last)
            row = adjusted_attention(adjust, site, state).view(n, self.layers_count, self.heads, 1, -1)
            revised = torch.cat([revised, row], dim=3)
            output = self._revised_pass(reuse, causal_mask(prefix_mask), revised)
        log_probs = torch.log_softmax(self._logits(output[:, -1]).float(), dim=-1)
        return log_probs, {**state, "prefix": prefix, "revised": revised}
