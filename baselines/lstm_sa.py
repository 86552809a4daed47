"""LSTM+SA: a BiLSTM with additive self-attention pooling (the paper's Table II baseline)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.common import attention_pool, even_hidden, head_dropout_masks, make_embedding, run_head, run_rnn
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax, per_example
from drga.registry import register_network


class AdditiveSelfAttention(nn.Module):
    # eqs. 8–9: v_t = vᵀ tanh(W h_t + U u + b), α = softmax(v) over real tokens.
    def __init__(self, hidden_size: int, query_size: int, attention_size: int):
        super().__init__()
        self.hidden_proj = nn.Linear(hidden_size, attention_size)
        self.query_proj = nn.Linear(query_size, attention_size, bias=False)
        self.score = nn.Linear(attention_size, 1, bias=False)

    def forward(self, hidden: Tensor, query: Tensor, mask: Tensor) -> Tensor:
        energy = torch.tanh(self.hidden_proj(hidden) + self.query_proj(query).unsqueeze(-2))
        return masked_softmax(self.score(energy).squeeze(-1), mask)


@register_network("lstm-sa")
class LSTMSelfAttention(AttentionNetwork):
    """Embedding → BiLSTM → self-attention with a learned query u → MLP classifier."""


    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        attention_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.5,
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        half = even_hidden(hidden_size, "two LSTM directions")
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embedding_dim, half, batch_first=True, bidirectional=True)
        self.query = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.attention = AdditiveSelfAttention(hidden_size, hidden_size, attention_size)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def encode(self, batch: Batch) -> NetworkEncoding:
        words = self.embedding(batch.tokens)
        hidden = run_rnn(self.lstm, self.dropout(words), batch.mask)
        query = self.query.expand(batch.size, -1)
        alpha = self.attention(hidden, query, batch.mask)
        site = AttentionSite.single(words, hidden, query, batch.mask, alpha, name="self-attention")
        head = head_dropout_masks(self.classifier, hidden, training=self.training, input_dropout=self.dropout.p)
        return NetworkEncoding(sites=(site,), cache={"hidden": hidden, "head": head})

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        # eq. 10: c′ = Σ_t α′_t h_t; eq. 11: P(y|X) = softmax(MLP(c′)).
        hidden, copies = per_example(encoding, "hidden")
        head, _ = per_example(encoding, "head")
        context = attention_pool(attention[0][:, 0], hidden, copies)
        return run_head(self.classifier, context, head, copies)  # the masks encode drew
