"""Most-modified words (the paper's Fig. 4): the vocabulary items whose attention the agent
raised or lowered most, by the mean change α′_t − α_t over their occurrences in a data set."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from drga.analysis.attention import AttentionRecord
from drga.analysis.plots import DOC_WIDTH, new_figure, save_png, styled
from drga.analysis.stats import Values
from drga.files import open_atomic


@dataclass
class WordChange:
    """A vocabulary item's attention change, averaged over its occurrences."""

    token: str
    count: int  #: occurrences in the analysed sentences
    mean_change: float  #: mean of α′_t − α_t
    mean_original: float  #: mean α_t
    mean_revised: float  #: mean α′_t


def word_changes(records: Sequence[AttentionRecord], min_count: int = 1) -> list[WordChange]:
    """Every token seen ≥ ``min_count`` times, sorted by mean change (most raised first).

    Records need a revised attention. Ties keep the more frequent token first, then the
    alphabetical one, so the order is fully determined.
    """
    sentences = []
    for record in records:
        if record.revised is None:
            raise ValueError("most-modified words need the revised attention (a checkpoint with an agent)")
        sentences.append((record.tokens, record.original, record.revised))
    return changes_between(sentences, min_count)


def changes_between(
    sentences: Sequence[tuple[Sequence[str], Values, Values]], min_count: int = 1
) -> list[WordChange]:
    """:func:`word_changes` of any two attentions over the same tokens: (tokens, before, after) per sentence.

    E.g. the equal-budget baseline's α as *before* and DRGA's α′ as *after*, sentence by sentence.
    """
    sums: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(3))
    counts: dict[str, int] = defaultdict(int)
    for tokens, original, revised in sentences:
        if not len(tokens) == len(original) == len(revised):
            raise ValueError(f"{len(tokens)} tokens, {len(original)} and {len(revised)} weights")
        for token, before, after in zip(tokens, original, revised):
            sums[token] += (after - before, before, after)
            counts[token] += 1
    changes = [
        WordChange(token, counts[token], *(float(v) for v in sums[token] / counts[token]))
        for token in sums
        if counts[token] >= min_count
    ]
    return sorted(changes, key=lambda c: (-c.mean_change, -c.count, c.token))


def most_modified(changes: Sequence[WordChange], k: int) -> tuple[list[WordChange], list[WordChange]]:
    """(raised, lowered): the ``k`` largest positive and the ``k`` most negative mean changes."""
    raised = [c for c in changes if c.mean_change > 0][:k]
    lowered = sorted((c for c in changes if c.mean_change < 0), key=lambda c: (c.mean_change, -c.count, c.token))[:k]
    return raised, lowered


def write_modified_words(records: Sequence[AttentionRecord], out: Path, k: int = 15, min_count: int = 5) -> dict[str, Any]:
    """modified_words.csv (every word with ≥ min_count occurrences) and modified_words.png (top k each way)."""
    changes = word_changes(records, min_count)
    raised, lowered = most_modified(changes, k)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "modified_words.csv"
    with open_atomic(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(asdict(changes[0])) if changes else ["token"])
        writer.writeheader()
        writer.writerows(asdict(c) for c in changes)
    png = save_png(bar_figure(raised, lowered, changes, min_count), out / "modified_words.png")
    row = lambda c: {"token": c.token, "count": c.count, "mean_change": c.mean_change, "mean_original": c.mean_original}
    return {
        "csv": str(path),
        "png": str(png),
        "words": len(changes),
        "raised": [row(c) for c in raised],
        "lowered": [row(c) for c in lowered],
    }


@styled
def bar_figure(raised: Sequence[WordChange], lowered: Sequence[WordChange], changes: Sequence[WordChange], min_count: int):
    """Raised (left) and lowered (right) words as bars of mean α′ − α on one shared x scale.

    The panels share the x axis, so a bar's length means the same change in both.
    """
    figure = new_figure(DOC_WIDTH, max(3.0, 0.3 * max(len(raised), len(lowered), 1) + 1.6), layout="constrained")
    axes = figure.subplots(1, 2, sharex=True)
    for axis, items, color, title in (
        (axes[0], raised, "#c44e52", "raised by the agent"),
        (axes[1], lowered, "#4c72b0", "lowered by the agent"),
    ):
        y = np.arange(len(items))[::-1]
        axis.barh(y, [c.mean_change for c in items], color=color)
        axis.set_yticks(y, [f"{c.token} ({c.count})" for c in items])
        axis.set_title(title)
        axis.set_xlabel("mean α′ − α (occurrences)")
        axis.axvline(0, color="#666", lw=0.8)
        axis.tick_params(axis="y", length=0)
        axis.grid(axis="x", color="#ddd", lw=0.6)
        axis.set_axisbelow(True)
    figure.suptitle(f"Most-modified words: {sum(c.count for c in changes)} occurrences of {len(changes)} words seen ≥ {min_count} times")
    return figure
