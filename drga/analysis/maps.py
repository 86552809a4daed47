"""Attention maps (the paper's Table VI): original vs revised attention of chosen sentences.

Two renderings of the same numbers: a self-contained HTML page of coloured tokens (no
scripts, no external files: it opens offline) and a PNG of per-sentence heatmaps.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from drga.analysis.attention import SQUASH_RULE, AnalysisError, AttentionRecord
from drga.analysis.plots import new_figure, save_png


@dataclass
class MapItem:
    """One sentence to draw: its tokens, the original and (optionally) the revised weights."""

    title: str
    tokens: list[str]
    original: np.ndarray
    revised: np.ndarray | None = None


def choose_examples(
    records: Sequence[AttentionRecord], count: int, seed: int, max_length: int = 30, chosen: Sequence[int] | None = None
) -> list[AttentionRecord]:
    """The records to draw: ``chosen`` split positions in that order, else ``count`` random short ones.

    Random picks are drawn with their own ``random.Random(seed)`` among sentences of 4 to
    ``max_length`` tokens (readable maps), then shown in split order.
    """
    by_index = {r.index: r for r in records}
    if chosen:
        missing = [i for i in chosen if i not in by_index]
        if missing:
            raise AnalysisError(f"examples {missing} are not in the analysed split (positions 0..{len(records) - 1})")
        return [by_index[i] for i in chosen]
    eligible = [r for r in records if 4 <= r.length <= max_length] or list(records)
    picked = random.Random(seed).sample(eligible, min(count, len(eligible)))
    return sorted(picked, key=lambda r: r.index)


def record_title(record: AttentionRecord, label_names: Sequence[str]) -> str:
    """'#12 gold: subjective | net-only: subjective 0.93 | with-agent: ...' for a record."""
    parts = [f"#{record.index}  gold: {label_names[record.label]}"]
    for name, probs in (("net-only", record.probs_original), ("with-agent", record.probs_revised)):
        if probs is not None:
            guess = int(np.argmax(probs))
            parts.append(f"{name}: {label_names[guess]} ({probs[guess]:.2f})")
    return "  |  ".join(parts)


def map_items(records: Sequence[AttentionRecord], label_names: Sequence[str]) -> list[MapItem]:
    return [MapItem(record_title(r, label_names), r.tokens, r.original, r.revised) for r in records]


# ----------------------------------------------------------------------------- PNG


def heatmap_figure(items: Sequence[MapItem], max_tokens: int = 40):
    """One two-row heatmap per sentence (original over revised), one shared scale per sentence.

    Sentences longer than ``max_tokens`` are cut for the picture (the title says so); the HTML
    page always shows every token.
    """
    if not items:
        raise AnalysisError("no sentences to draw")
    widest = min(max(len(item.tokens) for item in items), max_tokens)
    width, block = max(6.0, 0.42 * widest + 1.6), 1.55  # inches: a sentence's heatmap, labels and title
    height = block * len(items) + 0.3
    figure = new_figure(width=width, height=height)
    # Fixed margins instead of tight_layout: laying out rotated tick labels twice was most of the cost
    # of a TensorBoard image at every evaluation.
    figure.subplots_adjust(left=0.9 / width, right=1 - 0.1 / width, top=1 - 0.25 / height, bottom=0.75 / height, hspace=1.1)
    axes = figure.subplots(len(items), 1, squeeze=False)[:, 0]
    for axis, item in zip(axes, items):
        length = min(len(item.tokens), max_tokens)
        rows = [item.original[:length]] + ([item.revised[:length]] if item.revised is not None else [])
        grid = np.full((len(rows), widest), np.nan)
        for r, row in enumerate(rows):
            grid[r, :length] = row
        top = max(float(np.nanmax(grid)), 1e-12)
        axis.imshow(grid, cmap="Reds", vmin=0.0, vmax=top, aspect="auto", interpolation="nearest")
        for r, row in enumerate(rows):
            for t, value in enumerate(row):
                if value >= 0.5 * top:  # label only the strongest cells: numbers everywhere are noise
                    axis.text(t, r, f"{value:.2f}", ha="center", va="center", fontsize=6, color="white")
        axis.set_yticks(range(len(rows)), ["original α", "revised α′"][: len(rows)], fontsize=7)
        axis.set_xticks(range(length), item.tokens[:length], rotation=60, ha="right", fontsize=7)
        axis.set_xlim(-0.5, widest - 0.5)
        cut = f"  (first {max_tokens} of {len(item.tokens)} tokens)" if len(item.tokens) > max_tokens else ""
        axis.set_title(item.title + cut, fontsize=8, loc="left")
        axis.tick_params(length=0)
    return figure


# ----------------------------------------------------------------------------- HTML

_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 70em; color: #222; }
.ex { margin: 1.2em 0; padding: 0.6em 0.8em; border: 1px solid #ddd; border-radius: 6px; }
.meta { font-size: 0.85em; color: #555; margin-bottom: 0.4em; }
.row { line-height: 2.1em; }
.lab { display: inline-block; width: 6.5em; font-size: 0.8em; color: #777; }
.tok { padding: 0.15em 0.2em; margin: 0 0.05em; border-radius: 3px; }
.rule { font-size: 0.85em; color: #555; }
"""


def _cell(token: str, weight: float, alpha: float, rgb: tuple[int, int, int], tip: str) -> str:
    color = f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{alpha:.3f})"
    return f'<span class="tok" style="background:{color}" title="{html.escape(tip)}">{html.escape(token)}</span>'


def html_page(items: Sequence[MapItem], heading: str, notes: Sequence[str] = ()) -> str:
    """A standalone page: per sentence, rows 'original', 'revised' and 'change' of coloured tokens.

    Red intensity is the weight divided by the largest weight of that sentence (both rows on
    one scale); in the change row red is raised by the agent, blue lowered. Hovering a token
    shows the exact numbers.
    """
    blocks = []
    for item in items:
        rows = [("original α", item.original)] + ([("revised α′", item.revised)] if item.revised is not None else [])
        top = max(max(float(np.max(w)) for _, w in rows), 1e-12)
        lines = []
        for name, weights in rows:
            cells = [_cell(tok, w, w / top, (220, 40, 40), f"{name}: {w:.4f}") for tok, w in zip(item.tokens, weights)]
            lines.append(f'<div class="row"><span class="lab">{name}</span>{" ".join(cells)}</div>')
        if item.revised is not None:
            change = item.revised - item.original
            scale = max(float(np.max(np.abs(change))), 1e-12)
            cells = [
                _cell(tok, d, abs(d) / scale, (220, 40, 40) if d > 0 else (40, 90, 220), f"α′ − α: {d:+.4f}")
                for tok, d in zip(item.tokens, change)
            ]
            lines.append(f'<div class="row"><span class="lab">change</span>{" ".join(cells)}</div>')
        blocks.append(f'<div class="ex"><div class="meta">{html.escape(item.title)}</div>{"".join(lines)}</div>')
    note_html = "".join(f'<p class="rule">{html.escape(n)}</p>' for n in notes)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(heading)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(heading)}</h1>{note_html}{''.join(blocks)}</body></html>\n"
    )


def write_maps(
    records: Sequence[AttentionRecord], label_names: Sequence[str], out: Path, heading: str, max_png_examples: int = 6
) -> dict[str, str]:
    """attention_maps.html (every chosen sentence) and attention_maps.png (the first few)."""
    items = map_items(records, label_names)
    notes = [
        "Original α: the retrofitted network's own attention (net-only mode). Revised α′: after the agent's "
        "deterministic actions, eqs. 2-4 (with-agent mode). Red intensity: weight / largest weight of the sentence. "
        "Change row: red = raised by the agent, blue = lowered. Hover a token for the numbers.",
        "Squash rule: " + SQUASH_RULE,
    ]
    out.mkdir(parents=True, exist_ok=True)
    page = out / "attention_maps.html"
    page.write_text(html_page(items, heading, notes), encoding="utf-8")
    png = save_png(heatmap_figure(items[:max_png_examples]), out / "attention_maps.png")
    return {"html": str(page), "png": str(png)}
