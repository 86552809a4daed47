"""Token ↔ id mapping built from the training split."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence

PAD, UNK = "<pad>", "<unk>"


def vocabulary_fingerprint(tokens: Sequence[str]) -> str:
    """A short hash of a vocabulary's tokens in id order: two vocabularies give the same value only
    when every id means the same token (what an embedding trained on one needs of the other)."""
    return hashlib.sha256("\n".join(tokens).encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


class Vocabulary:
    """``<pad>`` is id 0 and ``<unk>`` id 1; other tokens follow by descending frequency."""

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
