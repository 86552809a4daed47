"""CNN+SA: Kim-style convolutional feature maps pooled by additive self-attention."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from drga.baselines.common import attention_pool, check_tokens, head_dropout_masks, make_embedding, run_head
from drga.baselines.lstm_sa import AdditiveSelfAttention
from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, per_example
from drga.registry import register_network


@register_network("cnn-sa")
class CNNSelfAttention(AttentionNetwork):
    """Embedding → parallel 1-D convolutions (Kim 2014) → self-attention pooling → MLP classifier.

    The kernel widths share ``hidden_size`` ReLU feature maps evenly, each padded so that
    every token keeps one feature vector; h_t is their concatenation. Kim's max-over-time pooling
    is replaced by additive self-attention with a learned query (eqs. 8–9), the one site DRGA
    adjusts (K = 1). Observation: w_t = word embedding, h_t = the feature maps at t, u = the query.
    """


    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embedding_dim: int = 300,
        hidden_size: int = 300,
        attention_size: int = 300,
        classifier_hidden: int = 300,
        dropout: float = 0.5,
        kernel_sizes: Sequence[int] = (3, 4, 5),
        embeddings: Tensor | None = None,
        freeze_embeddings: bool = False,
    ):
        super().__init__()
        kernel_sizes = list(kernel_sizes)
        if not kernel_sizes or any(k < 1 for k in kernel_sizes):
            raise ValueError(f"kernel_sizes must be a non-empty list of positive widths, got {kernel_sizes}")
        if hidden_size < len(kernel_sizes):
            raise ValueError(f"hidden_size ({hidden_size}) must be at least the number of kernel sizes ({len(kernel_sizes)})")
        # hidden_size feature maps in all, split as evenly as possible (the first widths take the rest).
        share, rest = divmod(hidden_size, len(kernel_sizes))
        filters = [share + (i < rest) for i in range(len(kernel_sizes))]
        self.kernel_sizes = kernel_sizes
        self.embedding = make_embedding(vocab_size, embedding_dim, embeddings, freeze_embeddings)
        self.dropout = nn.Dropout(dropout)
        self.convs = nn.ModuleList(nn.Conv1d(embedding_dim, f, k) for f, k in zip(filters, kernel_sizes))
        self.query = nn.Parameter(torch.randn(hidden_size) * 0.1)
        self.attention = AdditiveSelfAttention(hidden_size, hidden_size, attention_size)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, classifier_hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(classifier_hidden, num_classes)
        )

    def feature_maps(self, words: Tensor, mask: Tensor) -> Tensor:
        """[B, T, hidden] ReLU feature maps, zero on padding."""
        x = (self.dropout(words) * mask.unsqueeze(-1)).transpose(1, 2)
        # Pad (k-1)/2 left and k/2 right so every width yields exactly T positions.
        maps = [F.relu(conv(F.pad(x, ((k - 1) // 2, k // 2)))) for k, conv in zip(self.kernel_sizes, self.convs)]
        return torch.cat(maps, dim=1).transpose(1, 2) * mask.unsqueeze(-1)

    def encode(self, batch: Batch) -> NetworkEncoding:
        check_tokens(batch.tokens, 2, self.net_name, "flat text")
        words = self.embedding(batch.tokens)
        hidden = self.feature_maps(words, batch.mask)
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
