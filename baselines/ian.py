"""IAN (Ma et al. 2017): interactive attention between a context and its aspect term.

    h^c = LSTM_c(context),  h^a = LSTM_a(aspect)
    c_avg = mean_i h^c_i,   t_avg = mean_j h^a_j
    α_i ∝ exp tanh(h^c_i W_a t_avg + b_a)      (the context attends with the pooled aspect)
    β_j ∝ exp tanh(h^a_j W_b c_avg + b_b)      (the aspect attends with the pooled context)
    c_r = Σ_i α_i h^c_i,  t_r = Σ_j β_j h^a_j,  P(y|X) = softmax(MLP([c_r; t_r]))

Two sites with different lengths, each with its own mask and query: "context" (T = sentence
length, u = t_avg) and "aspect" (T = aspect length, u = c_avg). Both share Dw = embedding_dim
and Dh = Du = hidden_size, so one agent adjusts both. Observation: w = word embedding,
h = that side's LSTM state, u = the other side's pooled state.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import (
    BilinearAttention,
    attention_pool,
    check_tokens,
    head_dropout_masks,
    make_embedding,
    masked_mean,
    require_extras,
    run_head,
    run_rnn,
)
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, per_example
from drga.registry import register_network


@register_network("ian", input="aspect")
class IAN(AttentionNetwork):
    """IAN: context and aspect LSTMs attending to each other's pooled states (two sites)."""


    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.5,
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.context_lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.aspect_lstm = nn.LSTM(embedding_dim, hidden_size, batch_first=True)
        self.context_attention = BilinearAttention(hidden_size, hidden_size)
        self.aspect_attention = BilinearAttention(hidden_size, hidden_size)
        self.classifier = nn.Sequential(
            nn.Linear(2 * hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 2, self.net_name, "sentences with an aspect term")
        require_extras(batch.extras, ("aspect", "aspect_mask"), self.net_name)
        aspect_tokens, aspect_mask = batch.extras["aspect"], batch.extras["aspect_mask"]
        words = self.embedding(batch.tokens)
        aspect_words = self.embedding(aspect_tokens)
        context_hidden = run_rnn(self.context_lstm, self.dropout(words), batch.mask)
        aspect_hidden = run_rnn(self.aspect_lstm, self.dropout(aspect_words), aspect_mask)
        context_pool = masked_mean(context_hidden, batch.mask)  # c_avg
        aspect_pool = masked_mean(aspect_hidden, aspect_mask)  # t_avg
        alpha = self.context_attention(context_hidden, aspect_pool, batch.mask)
        beta = self.aspect_attention(aspect_hidden, context_pool, aspect_mask)
        sites = (
            AttentionSite.single(words, context_hidden, aspect_pool, batch.mask, alpha, name="context"),
            AttentionSite.single(aspect_words, aspect_hidden, context_pool, aspect_mask, beta, name="aspect"),
        )
        return NetworkEncoding(
            sites=sites,
            cache={
                "context": context_hidden,
                "aspect": aspect_hidden,
                "head": head_dropout_masks(self.classifier, context_hidden, training=self.training, input_dropout=self.dropout.p),
            },
        )

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        if len(attention) != 2:
            raise ValueError(f"ian: expected 2 attention arrays (context, aspect), got {len(attention)}")
        # eq. 10 at each site: c_r = Σ α′_i h^c_i, t_r = Σ β′_j h^a_j.
        (context_hidden, copies), (aspect_hidden, _) = per_example(encoding, "context"), per_example(encoding, "aspect")
        context = attention_pool(attention[0][:, 0], context_hidden, copies)
        aspect = attention_pool(attention[1][:, 0], aspect_hidden, copies)
        head, _ = per_example(encoding, "head")  # the masks encode drew
        return run_head(self.classifier, torch.cat([context, aspect], dim=-1), head, copies)
