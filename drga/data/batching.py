"""Turning tokenized examples into padded :class:`~baselines.protocol.Batch` es.

Three kinds of example share one code path:

- flat text: ``tokens`` → ``Batch.tokens`` [B, T];
- text with family-specific id sequences in ``extras`` (an aspect term): each becomes
  ``Batch.extras[name]`` [B, T_name] with a bool ``Batch.extras[name + "_mask"]``; integer
  spans (``extras[name]`` a pair) become ``Batch.extras[name]`` [B, 2];
- documents (``extras["sentences"]``, a list of token lists): ``Batch.tokens`` [B, S, T].
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import Tensor

from drga.baselines.protocol import Batch
from drga.data.text import TextExample

#: ``TextExample.extras`` keys that hold token lists to encode with the vocabulary.
TOKEN_EXTRAS = ("aspect",)
#: ``TextExample.extras`` keys that hold integer pairs passed through as they are.
SPAN_EXTRAS = ("aspect_span",)


class TokenIds(Protocol):
    """What encoding needs of a vocabulary (``drga.data.vocab.Vocabulary``): the ids of a sequence of tokens."""

    def encode(self, tokens: Sequence[str]) -> list[int]: ...


@dataclass
class EncodedExample:
    """Token ids (all sentences concatenated for a document), label and encoded extras."""

    ids: list[int]
    label: int
    #: Id lists (aspect tokens) or integer pairs (aspect span) by name.
    extras: dict[str, list[int]] = field(default_factory=dict)
    #: Documents only: the ids of each sentence.
    sentences: list[list[int]] | None = None


@dataclass
class EncodingReport:
    examples: int
    truncated: int
    unknown_tokens: int
    tokens: int
    #: Documents: documents that lost sentences beyond ``max_sentences``, and sentences cut to
    #: ``max_sentence_length``.
    documents_truncated: int = 0
    sentences_truncated: int = 0

    def describe(self, split: str) -> str:
        unk = 100.0 * self.unknown_tokens / max(self.tokens, 1)
        if self.documents_truncated or self.sentences_truncated:
            return (
                f"{split}: {self.examples} documents, {self.documents_truncated} cut to the max sentences, "
                f"{self.sentences_truncated} sentences cut to the max sentence length, {unk:.1f}% unknown tokens"
            )
        return f"{split}: {self.examples} examples, {self.truncated} truncated to the max length, {unk:.1f}% unknown tokens"


def encode_examples(
    examples: Sequence[TextExample],
    vocab: TokenIds,
    max_length: int,
    max_sentences: int | None = None,
    max_sentence_length: int | None = None,
) -> tuple[list[EncodedExample], EncodingReport]:
    """Ids truncated to ``max_length``; an example with no token is an error (loaders drop them).

    Documents are cut to ``max_sentences`` sentences of at most ``max_sentence_length`` tokens
    (no limit when None); ``max_length`` does not apply to them.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1, got {max_length}")
    for name, value in (("max_sentences", max_sentences), ("max_sentence_length", max_sentence_length)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    encoded, truncated, unknown, total = [], 0, 0, 0
    docs_cut, sentences_cut = 0, 0
    for position, example in enumerate(examples):
        if not example.tokens:
            raise ValueError(f"example {position} has no tokens; empty texts cannot be classified")
        extras: dict[str, list[int]] = {}
        for name in TOKEN_EXTRAS:
            if name in example.extras:
                tokens = list(example.extras[name])
                if not tokens:
                    raise ValueError(f"example {position} has an empty '{name}'")
                extras[name] = vocab.encode(tokens)
        for name in SPAN_EXTRAS:
            if name in example.extras:
                extras[name] = [int(v) for v in example.extras[name]]
        sentences = None
        if "sentences" in example.extras:
            raw = [list(s) for s in example.extras["sentences"] if s]
            if not raw:
                raise ValueError(f"document {position} has no non-empty sentence")
            if max_sentences is not None and len(raw) > max_sentences:
                docs_cut += 1
                raw = raw[:max_sentences]
            sentences = []
            for sentence in raw:
                ids = vocab.encode(sentence)
                if max_sentence_length is not None and len(ids) > max_sentence_length:
                    sentences_cut += 1
                    ids = ids[:max_sentence_length]
                sentences.append(ids)
            ids = [i for s in sentences for i in s]
        else:
            ids = vocab.encode(example.tokens)
            if len(ids) > max_length:
                truncated += 1
                ids = ids[:max_length]
        unknown += sum(1 for i in ids if i == 1)
        total += len(ids)
        encoded.append(EncodedExample(ids, example.label, extras, sentences))
    report = EncodingReport(len(encoded), truncated, unknown, total, docs_cut, sentences_cut)
    return encoded, report


def _pad(rows: Sequence[Sequence[int]]) -> Tensor:
    length = max(max((len(r) for r in rows), default=1), 1)
    out = torch.zeros(len(rows), length, dtype=torch.long)
    for row, values in enumerate(rows):
        if values:
            out[row, : len(values)] = torch.tensor(values, dtype=torch.long)
    return out


def collate(examples: Sequence[EncodedExample]) -> Batch:
    """One padded batch; every example must be of the same kind (text, aspect, document)."""
    if not examples:
        raise ValueError("cannot collate an empty list of examples")
    documents = [ex.sentences is not None for ex in examples]
    if any(documents) and not all(documents):
        raise ValueError("a batch mixes documents and flat texts")
    labels = torch.tensor([ex.label for ex in examples], dtype=torch.long)
    if all(documents):
        sentences = max(len(ex.sentences) for ex in examples)  # type: ignore[arg-type]
        length = max(len(s) for ex in examples for s in ex.sentences)  # type: ignore[union-attr]
        tokens = torch.zeros(len(examples), sentences, length, dtype=torch.long)
        for row, example in enumerate(examples):
            for index, sentence in enumerate(example.sentences):  # type: ignore[arg-type]
                tokens[row, index, : len(sentence)] = torch.tensor(sentence, dtype=torch.long)
    else:
        tokens = _pad([ex.ids for ex in examples])
    extras: dict[str, Tensor] = {}
    names = set(examples[0].extras)
    if any(set(ex.extras) != names for ex in examples):
        raise ValueError("examples in a batch carry different extras")
    for name in sorted(names):
        if name in SPAN_EXTRAS:
            extras[name] = torch.tensor([ex.extras[name] for ex in examples], dtype=torch.long)
        else:
            padded = _pad([ex.extras[name] for ex in examples])
            extras[name] = padded
            extras[name + "_mask"] = padded != 0
    return Batch(tokens=tokens, mask=tokens != 0, labels=labels, extras=extras)


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
        for indices in self.index_batches():
            yield self.collate([self.examples[i] for i in indices])

    @staticmethod
    def collate(examples: list[EncodedExample]) -> Batch:
        """One batch of the given examples (what :class:`drga.runtime.distributed.ShardedBatches` calls on a shard)."""
        return collate(examples)

    def batch_at(self, step: int) -> Batch:
        """The ``step``-th batch of an endless sequence of epochs (epoch step // len, then its batch
        step % len): a pure function of the step, so a resumed run draws the same batches."""
        epoch, index = divmod(step, len(self))
        return collate([self.examples[i] for i in self.index_batches(epoch=1_000_000 + epoch)[index]])

    def index_batches(self, epoch: int | None = None) -> list[list[int]]:
        """The batches of this epoch (or of ``epoch``, leaving the iterator's own as it is) as lists
        of example indices, in order."""
        epoch = self.epoch if epoch is None else epoch
        n = len(self.examples)
        if not self.shuffle:
            order = sorted(range(n), key=lambda i: len(self.examples[i].ids))
            batches = [order[i : i + self.batch_size] for i in range(0, n, self.batch_size)]
        else:
            generator = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            permutation = torch.randperm(n, generator=generator).tolist()
            pool = self.batch_size * 50
            batches = []
            for start in range(0, n, pool):
                chunk = sorted(permutation[start : start + pool], key=lambda i: len(self.examples[i].ids))
                batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
            batches = [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]
        return batches
