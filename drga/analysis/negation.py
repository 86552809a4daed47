"""Negation and intensification: where the attention goes when a negator or an intensifier comes
just before a sentiment word (after the n-gram view of what RNN hidden states encode).

A *modified sentiment word* is a sentiment word (``lexicon.sentiment_lexicon``, not itself a cue)
with a cue among the ``WINDOW`` tokens before it; cues are negators (``lexicon.is_negator``: "not",
"never", "n't", ...) or intensifiers (``lexicon.is_intensifier``: "very", "really", ...). On the
sentences holding at least one, per attention: the mass on those cues, the mass on the words they
modify, and whether the prediction is right there (against the other sentences).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from drga.analysis.lexicon import WINDOW, is_intensifier, is_negator, sentiment_lexicon

#: The two views: name → the test a cue passes.
CUES: dict[str, Callable[[str], bool]] = {"negation": is_negator, "intensification": is_intensifier}


def modifier_pairs(
    tokens: Sequence[str], is_cue: Callable[[str], bool], lexicon: Collection[str], window: int = WINDOW
) -> list[tuple[int, int]]:
    """(cue position, sentiment-word position) of every cue at most ``window`` tokens before a sentiment word."""
    pairs = []
    for j, token in enumerate(tokens):
        if token not in lexicon or is_cue(token):
            continue
        pairs += [(i, j) for i in range(max(0, j - window), j) if is_cue(tokens[i])]
    return pairs


def modifier_view(
    sentences: Sequence[tuple[Sequence[str], Sequence[float], bool]],
    is_cue: Callable[[str], bool],
    lexicon: Collection[str] | None = None,
    window: int = WINDOW,
) -> dict[str, float | int]:
    """Over (tokens, attention weights, prediction right) triples: on the sentences with a modified
    sentiment word, the mean mass on the cues and on the words they modify, and the accuracy there
    and on the other sentences (NaN where there are none)."""
    lexicon = sentiment_lexicon() if lexicon is None else lexicon
    cue_mass, word_mass, right, right_elsewhere = [], [], [], []
    for tokens, weights, correct in sentences:
        pairs = modifier_pairs(tokens, is_cue, lexicon, window)
        if not pairs:
            right_elsewhere.append(correct)
            continue
        mass = np.asarray(weights, dtype=np.float64)
        cue_mass.append(float(mass[sorted({i for i, _ in pairs})].sum()))
        word_mass.append(float(mass[sorted({j for _, j in pairs})].sum()))
        right.append(correct)
    mean = lambda values: float(np.mean(values)) if values else float("nan")
    return {
        "sentences": len(right),
        "cue_mass": mean(cue_mass),
        "modified_word_mass": mean(word_mass),
        "accuracy": mean(right),
        "accuracy_elsewhere": mean(right_elsewhere),
    }
