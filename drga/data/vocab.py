"""Token ↔ id mapping built from the training split."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drga.data.batching import EncodedExample, EncodingReport
    from drga.data.text import TextExample

PAD, UNK = "<pad>", "<unk>"


def vocabulary_fingerprint(tokens: Sequence[str]) -> str:
    """A short hash of a vocabulary's tokens in id order: two vocabularies give the same value only
    when every id means the same token (what an embedding trained on one needs of the other)."""
    return hashlib.sha256("\n".join(tokens).encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


class Vocabulary:
    """``<pad>`` is id 0 and ``<unk>`` id 1; other tokens follow by descending frequency.

    What differs between it and a pretrained tokenizer's subwords (:class:`drga.data.pretrained_vocab.SubwordVocabulary`)
    is in its members: how examples are encoded, how it is described, which tokens a prediction shows, which tokens
    make a word."""

    #: The id a token outside the vocabulary gets (``<unk>``).
    unknown_id: int = 1

    def __init__(self, tokens: Sequence[str]):
        if list(tokens[:2]) != [PAD, UNK]:
            raise ValueError(f"a vocabulary must start with {PAD!r}, {UNK!r}")
        self.itos = list(tokens)
        self.stoi = {tok: i for i, tok in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("a vocabulary must not repeat a token")

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_freq: int = 1, max_size: int | None = None) -> Vocabulary:
        counts = Counter(tok for sentence in sentences for tok in sentence)
        kept = sorted((t for t, c in counts.items() if c >= min_freq and t not in (PAD, UNK)), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max(0, max_size - 2)]
        return cls([PAD, UNK, *kept])

    def __len__(self) -> int:
        return len(self.itos)

    @property
    def fingerprint(self) -> str:
        """:func:`vocabulary_fingerprint` of this vocabulary (checkpoints record it)."""
        return vocabulary_fingerprint(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi.get(tok, 1) for tok in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] for i in ids]

    def encode_examples(
        self, examples: Sequence[TextExample], max_length: int, max_sentences: int | None = None, max_sentence_length: int | None = None,
    ) -> tuple[list[EncodedExample], EncodingReport]:
        """Every example's ids, cut to ``max_length`` (a document: to ``max_sentences`` sentences of at most
        ``max_sentence_length`` tokens): :func:`drga.data.batching.encode_examples`."""
        from drga.data.batching import encode_examples  # torch: only when examples are encoded

        return encode_examples(examples, self, max_length, max_sentences, max_sentence_length)

    def describe(self, min_freq: int) -> str:
        """Its line in a run's data report."""
        return f"vocabulary: {len(self)} words (min frequency {min_freq})"

    def shown_tokens(self, words: Sequence[str], ids: Sequence[int], max_length: int) -> tuple[list[str], bool]:
        """The tokens a prediction shows of a text split into ``words`` and encoded as ``ids``, and whether the text was cut."""
        return list(words[: len(ids)]), len(words) > len(ids)

    def word_groups(self, tokens: Sequence[str]) -> list[list[int]] | None:
        """Which of ``tokens`` make up each word, where a word spans several (a subword vocabulary's); None: each token is one."""
        return None
