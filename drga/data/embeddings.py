"""Pretrained word vectors in the GloVe text format: ``word v1 v2 ... vD`` per line."""

from __future__ import annotations

from pathlib import Path

import torch

from drga.data.vocab import Vocabulary


def load_glove(path: str | Path, vocab: Vocabulary, dim: int, seed: int = 0) -> tuple[torch.Tensor, int]:
    """An embedding matrix [len(vocab), dim] and the number of vocabulary words found in the file.

    Words missing from the file keep a small random vector (seeded); ``<pad>`` is all zeros.
    Lines of the wrong width raise an error naming the file and line.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"embedding file {path} does not exist")
    generator = torch.Generator().manual_seed(seed)
    matrix = torch.empty(len(vocab), dim).uniform_(-0.25, 0.25, generator=generator)
    matrix[0] = 0.0
    found = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line_number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if len(parts) == 2 and line_number == 1:
                continue  # word2vec-style header "count dim"
            if len(parts) != dim + 1:
                raise ValueError(f"{path}:{line_number}: expected a word and {dim} numbers, got {len(parts) - 1} numbers")
            index = vocab.stoi.get(parts[0])
            if index is None or index == 0:
                continue
            try:
                matrix[index] = torch.tensor([float(x) for x in parts[1:]])
            except ValueError as error:
                raise ValueError(f"{path}:{line_number}: not a number in the vector of {parts[0]!r}") from error
            found += 1
    return matrix, found
