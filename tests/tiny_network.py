"""A network the toolkit does not ship, written against the protocol alone, for tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from drga.baselines.protocol import AttentionNetwork, AttentionSite, Batch, NetworkEncoding, masked_softmax
from drga.data import EncodedExample

KEYWORDS = {"bad": 0, "good": 1}


class TinyAttentionNet(AttentionNetwork):
    """Bag of words with one attention pooling; ``spread_attention`` pins α to uniform."""

    net_name = "tiny"

    def __init__(self, vocab_size: int, num_classes: int, embedding_dim: int = 16, spread_attention: bool = False, **_):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.transform = nn.Linear(embedding_dim, embedding_dim)
        self.query = nn.Parameter(torch.randn(embedding_dim) * 0.1)
        self.classifier = nn.Linear(embedding_dim, num_classes)
        self.spread_attention = spread_attention

    def encode(self, batch: Batch) -> NetworkEncoding:
        words = self.embedding(batch.tokens)
        hidden = torch.tanh(self.transform(words))
        scores = hidden @ self.query
        if self.spread_attention:
            scores = torch.zeros_like(scores)
        alpha = masked_softmax(scores, batch.mask)
        query = self.query.expand(batch.size, -1)
        site = AttentionSite.single(words, hidden, query, batch.mask, alpha)
        return NetworkEncoding(sites=(site,), cache={"hidden": hidden})

    def predict(self, encoding: NetworkEncoding, attention: Sequence[Tensor]) -> Tensor:
        context = torch.einsum("bt,btd->bd", attention[0][:, 0], encoding.cache["hidden"])
        return self.classifier(context)


def keyword_examples(count: int, seed: int, distractors: int = 40) -> tuple[list[EncodedExample], int]:
    """Sequences of 6–12 random distractors with one keyword; the keyword decides the label.

    Ids: 0 pad, 1 unk, 2..distractors+1 distractors, then "bad", "good". Returns (examples, vocab size).
    """
    rng = random.Random(seed)
    bad, good = distractors + 2, distractors + 3
    examples = []
    for _ in range(count):
        ids = [rng.randint(2, distractors + 1) for _ in range(rng.randint(6, 12))]
        label = rng.randint(0, 1)
        ids[rng.randrange(len(ids))] = good if label else bad
        examples.append(EncodedExample(ids, label))
    return examples, distractors + 4


def keyword_positions(batch: Batch) -> Tensor:
    """Bool [B, T]: where the keyword is (the two highest ids)."""
    top = batch.tokens.max()
    return (batch.tokens >= top - 1) & batch.mask & (batch.tokens >= 2)
