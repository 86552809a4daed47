"""Planted cues: a semi-synthetic task whose right attention is known by construction (a positive control, docs/controls.md).

Every sentence of a real data set gets a new label, drawn at random, and one cue word of that label inserted at a random
position; the sentence's own words, whose original label is discarded, are the distractor. The label is then carried by
one token of each sentence: attention that finds it can classify, attention that misses it cannot. The planting depends
on ``plant_seed`` alone (not the run's seed), so every seed of a study trains on the same data.

``planted-subj`` and ``planted-mr`` are SUBJ and MR planted this way (``--dataset planted-subj``).
"""

from __future__ import annotations

import random
from dataclasses import replace

from drga.data.text import DatasetSplits, TextExample, load_mr, load_subj

__all__ = ["CUE_WORDS", "plant_cues", "load_planted_subj", "load_planted_mr"]

#: The cue words of each planted label: words with GloVe vectors that neither SUBJ nor MR uses more than a few times.
CUE_WORDS: dict[str, tuple[str, ...]] = {
    "cue-a": ("azure", "crimson", "amber"),
    "cue-b": ("granite", "basalt", "marble"),
}
#: The planting's default seed.
PLANT_SEED = 20221


def plant_cues(splits: DatasetSplits, cue_words: dict[str, tuple[str, ...]] | None = None, plant_seed: int = PLANT_SEED) -> DatasetSplits:
    """``splits`` with each example relabelled at random and one cue word of its new label inserted at a random position
    (0 to its length: any place, either end included)."""
    cues = cue_words or CUE_WORDS
    if len(cues) < 2 or any(not words for words in cues.values()):
        raise ValueError("planted cues need at least two labels, each with at least one cue word")
    rng = random.Random(plant_seed)
    labels = list(cues)

    def planted(example: TextExample) -> TextExample:
        label = rng.randrange(len(labels))
        word = rng.choice(cues[labels[label]])
        position = rng.randint(0, len(example.tokens))
        tokens = [*example.tokens[:position], word, *example.tokens[position:]]
        return replace(example, tokens=tokens, label=label)

    words = "; ".join(f"{label}: {', '.join(cues[label])}" for label in labels)
    note = (f"{splits.name} planted (seed {plant_seed}): labels drawn at random, one cue word of the label inserted at a random "
            f"position of each sentence ({words}); the sentences' own labels discarded")
    return DatasetSplits(
        f"planted-{splits.name}", [planted(e) for e in splits.train], [planted(e) for e in splits.dev], [planted(e) for e in splits.test],
        labels, [*splits.notes, note], splits.provides, splits.tokenizer,
    )


def load_planted_subj(**options: object) -> DatasetSplits:
    """SUBJ's sentences with planted cues, 2 classes: the label is one inserted cue word (drga/data/planted.py)."""
    return plant_cues(load_subj(**options))  # type: ignore[arg-type]


def load_planted_mr(**options: object) -> DatasetSplits:
    """MR's sentences with planted cues, 2 classes: the label is one inserted cue word (drga/data/planted.py)."""
    return plant_cues(load_mr(**options))  # type: ignore[arg-type]
