"""Turning tokenized examples into padded :class:`~baselines.protocol.Batch` es."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import torch

from baselines.protocol import Batch
from drga.data.text import TextExample
from drga.data.vocab import Vocabulary


@dataclass
class EncodedExample:
    ids: list[int]
    label: int


@dataclass
class EncodingReport:
    examples: int
    truncated: int
    unknown_tokens: int
    tokens: int

    def describe(self, split: str) -> str:
        unk = 100.0 * self.unknown_tokens / max(self.tokens, 1)
        return f"{split}: {self.examples} examples, {self.truncated} truncated to the max length, {unk:.1f}% unknown tokens"


def encode_examples(
    examples: Sequence[TextExample], vocab: Vocabulary, max_length: int
) -> tuple[list[EncodedExample], EncodingReport]:
    """Ids truncated to ``max_length``; an example with no token is an error (loaders drop them)."""
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    encoded, truncated, unknown, total = [], 0, 0, 0
    for position, example in enumerate(examples):
        if not example.tokens:
            raise ValueError(f"example {position} has no tokens; empty texts cannot be classified")
        ids = vocab.encode(example.tokens)
        if len(ids) > max_length:
            truncated += 1
            ids = ids[:max_length]
        unknown += sum(1 for i in ids if i == 1)
        total += len(ids)
        encoded.append(EncodedExample(ids, example.label))
    return encoded, EncodingReport(len(encoded), truncated, unknown, total)


def collate(examples: Sequence[EncodedExample]) -> Batch:
    length = max(len(ex.ids) for ex in examples)
    tokens = torch.zeros(len(examples), length, dtype=torch.long)
    for row, example in enumerate(examples):
        tokens[row, : len(example.ids)] = torch.tensor(example.ids, dtype=torch.long)
    return Batch(tokens=tokens, mask=tokens != 0, labels=torch.tensor([ex.label for ex in examples], dtype=torch.long))


class BatchIterator:
    """Batches of similar length (less padding), in an order fixed by (seed, epoch).

    With ``shuffle`` the examples are permuted, cut into pools of 50 batches, sorted by length
    inside each pool, batched, and the batches permuted. The order depends only on the seed and
    the epoch set with :meth:`set_epoch`, so a resumed run sees the same batches.
    """

    def __init__(self, examples: Sequence[EncodedExample], batch_size: int, shuffle: bool, seed: int = 0):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if not examples:
            raise ValueError("no examples to batch")
        self.examples = list(examples)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return (len(self.examples) + self.batch_size - 1) // self.batch_size

    def __iter__(self) -> Iterator[Batch]:
        n = len(self.examples)
        if not self.shuffle:
            order = sorted(range(n), key=lambda i: len(self.examples[i].ids))
            batches = [order[i : i + self.batch_size] for i in range(0, n, self.batch_size)]
        else:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
            permutation = torch.randperm(n, generator=generator).tolist()
            pool = self.batch_size * 50
            batches = []
            for start in range(0, n, pool):
                chunk = sorted(permutation[start : start + pool], key=lambda i: len(self.examples[i].ids))
                batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
        for indices in batches:
            yield collate([self.examples[i] for i in indices])
