"""Attention maps (the paper's Table VI): original vs revised attention of chosen sentences.

Two renderings of the same numbers: a self-contained HTML page of coloured tokens (no
scripts, no external files: it opens offline) and a PNG of per-sentence heatmaps.

Documents (HAN) are drawn sentence by sentence: each sentence's word array α_s (and α′_s)
beside its sentence weight γ_s (and γ′_s); the PNG is one grid per document (rows: sentences).
Aspect networks name the aspect term, and IAN's attention over it is shown as its own rows.
"""

from __future__ import annotations

import html
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.ticker import MaxNLocator

from drga.analysis.attention import DOCUMENT_RULE, SQUASH_RULE, AnalysisError, AttentionRecord
from drga.analysis.plots import ANNOTATION_SIZE, DOC_WIDTH, FONT_SIZE, cell_label, new_figure, save_png, styled
from drga.files import write_text_atomic
from drga.names import Mode


@dataclass
class MapItem:
    """One sentence (or document) to draw: its tokens, the original and (optionally) the revised weights.

    Documents add the sentences' spans in ``tokens`` and the sentence weights γ (γ′); aspect
    networks the aspect term and, for IAN, the attention over it.
    """

    title: str
    tokens: list[str]
    original: np.ndarray
    revised: np.ndarray | None = None
    sentences: list[tuple[int, int]] | None = None
    sentence_original: np.ndarray | None = None
    sentence_revised: np.ndarray | None = None
    aspect: list[str] | None = None
    aspect_original: np.ndarray | None = None
    aspect_revised: np.ndarray | None = None


def choose_examples(
    records: Sequence[AttentionRecord],
    count: int,
    seed: int,
    max_length: int = 30,
    chosen: Sequence[int] | None = None,
    max_sentences: int = 12,
) -> list[AttentionRecord]:
    """The records to draw: ``chosen`` split positions in that order, else ``count`` random short ones.

    Random picks are drawn with their own ``random.Random(seed)`` among sentences of 4 to
    ``max_length`` tokens (documents: of 2 to ``max_sentences`` sentences), readable maps, then
    shown in split order.
    """
    by_index = {r.index: r for r in records}
    if chosen:
        missing = [i for i in chosen if i not in by_index]
        if missing:
            raise AnalysisError(f"examples {missing} are not in the analysed split (positions 0..{len(records) - 1})")
        return [by_index[i] for i in chosen]
    readable = lambda r: (
        2 <= len(r.sentence_lengths) <= max_sentences if r.is_document else 4 <= r.length <= max_length
    )
    eligible = [r for r in records if readable(r)] or list(records)
    picked = random.Random(seed).sample(eligible, min(count, len(eligible)))
    return sorted(picked, key=lambda r: r.index)


def record_title(record: AttentionRecord, label_names: Sequence[str]) -> str:
    """'#12 gold: subjective | net-only: subjective 0.93 | with-agent: ...' for a record."""
    parts = [f"#{record.index}  gold: {label_names[record.label]}"]
    for name, probs in ((Mode.NET_ONLY, record.probs_original), (Mode.WITH_AGENT, record.probs_revised)):
        if probs is not None:
            guess = int(np.argmax(probs))
            parts.append(f"{name}: {label_names[guess]} ({probs[guess]:.2f})")
    return "  |  ".join(parts)


def map_items(records: Sequence[AttentionRecord], label_names: Sequence[str]) -> list[MapItem]:
    items = []
    for r in records:
        title = record_title(r, label_names)
        if r.aspect:
            title += f"  |  aspect: {' '.join(r.aspect)}"
        items.append(
            MapItem(
                title, r.tokens, r.original, r.revised,
                sentences=r.sentence_spans() if r.is_document else None,
                sentence_original=r.sentence_original, sentence_revised=r.sentence_revised,
                aspect=r.aspect, aspect_original=r.aspect_original, aspect_revised=r.aspect_revised,
            )
        )
    return items


# ----------------------------------------------------------------------------- PNG

#: Token labels longer than this are cut (with '…') in the pictures; the HTML page shows them whole.
LABEL_CHARS = 14


def short(token: str, limit: int = LABEL_CHARS) -> str:
    return token if len(token) <= limit else token[: limit - 1] + "…"


def _rotated_label_height(tokens: Sequence[str]) -> float:
    """Inches below a heatmap taken by its tick labels rotated 60° (FONT_SIZE points)."""
    longest = max((len(short(t)) for t in tokens), default=1)
    return 0.2 + 0.087 * longest * 0.87


def cell_widths(widest: int, fixed: float, largest: float = 0.45) -> float:
    """Width (inches) of a heatmap cell: as large as ``largest`` while the figure fits DOC_WIDTH."""
    return max(0.2, min(largest, (DOC_WIDTH - fixed) / max(widest, 1)))


def add_colorbar(figure, image, axis_box: tuple[float, float, float, float], label: str = "weight"):
    """A colour bar right of an axes placed at ``axis_box`` (figure fractions), titled ``label``."""
    x0, y0, w, h = axis_box
    width_in = figure.get_size_inches()[0]
    cax = figure.add_axes((x0 + w + 0.12 / width_in, y0, 0.14 / width_in, h))
    colorbar = figure.colorbar(image, cax=cax)
    colorbar.locator = MaxNLocator(3)
    colorbar.update_ticks()
    cax.set_title(label, loc="left", fontsize=FONT_SIZE, pad=4)
    return colorbar


@styled
def heatmap_figure(items: Sequence[MapItem], max_tokens: int = 30):
    """One two-row heatmap per sentence (original over revised) with its colour bar, one scale per sentence.

    Sentences longer than ``max_tokens`` are cut for the picture (the title says so); the HTML
    page always shows every token. The figure is at most DOC_WIDTH inches wide: cells narrow
    for long sentences, and the strongest cells carry their value ('.38' for 0.38).
    """
    if not items:
        raise AnalysisError("no sentences to draw")
    if items[0].sentences is not None:
        return document_figure(items, max_tokens=min(max_tokens, 20))
    widest = min(max(len(item.tokens) for item in items), max_tokens)
    left, right = 1.2, 0.75  # inches: row labels; colour bar, its ticks and title
    cell = cell_widths(widest, left + right)
    row_height, title_height, gap = 0.34, 0.42, 0.12
    blocks = []
    for item in items:
        row_count = 2 if item.revised is not None else 1
        below = _rotated_label_height(item.tokens[:max_tokens])
        blocks.append((row_count, below, title_height + row_count * row_height + below + gap))
    width = left + widest * cell + right
    height = sum(b[2] for b in blocks) + 0.1
    figure = new_figure(width, height)
    top_edge = height - 0.05
    for item, (rows_count, _below, block) in zip(items, blocks):
        length = min(len(item.tokens), max_tokens)
        rows = [item.original[:length]] + ([item.revised[:length]] if item.revised is not None else [])
        grid = np.full((len(rows), widest), np.nan)
        for r, row in enumerate(rows):
            grid[r, :length] = row
        box = (left / width, (top_edge - title_height - rows_count * row_height) / height,
               widest * cell / width, rows_count * row_height / height)
        axis = figure.add_axes(box)
        top_edge -= block
        top = max(float(np.nanmax(grid)), 1e-12)
        image = axis.imshow(grid, cmap="Reds", vmin=0.0, vmax=top, aspect="auto", interpolation="nearest")
        add_colorbar(figure, image, box)
        for r, row in enumerate(rows):
            for t, value in enumerate(row):
                if value >= 0.5 * top:  # label only the strongest cells: numbers everywhere are noise
                    axis.text(t, r, cell_label(value), ha="center", va="center", fontsize=ANNOTATION_SIZE, color="white")
        axis.set_yticks(range(len(rows)), ["original α", "revised α′"][: len(rows)])
        axis.set_xticks(range(length), [short(t) for t in item.tokens[:length]], rotation=60, ha="right",
                        rotation_mode="anchor")
        axis.set_xlim(-0.5, widest - 0.5)
        cut = f"  (first {max_tokens} of {len(item.tokens)} tokens)" if len(item.tokens) > max_tokens else ""
        axis.set_title(item.title + cut, loc="left", fontsize=FONT_SIZE)
        axis.tick_params(length=0)
        for spine in axis.spines.values():
            spine.set_visible(False)
    return figure


def _sentences(item: MapItem) -> list[tuple[int, int]]:
    """A document's sentence spans in its tokens (a sentence's item has none to draw by)."""
    if item.sentences is None:
        raise ValueError(f"{item.title!r} has no sentence spans: document maps draw documents")
    return item.sentences


@styled
def document_figure(items: Sequence[MapItem], max_tokens: int = 20, max_sentences: int = 15):
    """Per document, two grids (α above α′): one row per sentence, its words in the cells.

    Cell colour is the word's weight in its sentence's array α_s, on one scale per document
    (one colour bar beside both grids); the row label gives the sentence weight γ_s (γ′_s).
    Sentences beyond ``max_sentences`` and words beyond ``max_tokens`` are cut for the picture
    (the title says so).
    """
    panels = 2 if items[0].revised is not None else 1
    widest = min(max(end - start for item in items for start, end in _sentences(item)[:max_sentences]), max_tokens)
    cell = 0.62  # inches: a word of up to 8 characters at ANNOTATION_SIZE
    width = widest * cell + 2.6
    heights = []
    for item in items:
        heights += [0.32 * min(len(_sentences(item)), max_sentences) + 0.55] * panels
    figure = new_figure(width, sum(heights) + 0.6 * len(items), layout="constrained")
    grid = figure.add_gridspec(len(items) * panels, 1, height_ratios=heights)
    for d, item in enumerate(items):
        spans = _sentences(item)[:max_sentences]
        arrays = [("original α", item.original, item.sentence_original)]
        if item.revised is not None:
            arrays.append(("revised α′", item.revised, item.sentence_revised))
        top = max(max(float(np.max(w)) for _, w, _ in arrays), 1e-12)
        axes = []
        for p, (name, weights, gamma) in enumerate(arrays):
            axis = figure.add_subplot(grid[d * panels + p, 0])
            axes.append(axis)
            values = np.full((len(spans), widest), np.nan)
            for s, (start, end) in enumerate(spans):
                cut = min(end - start, widest)
                values[s, :cut] = weights[start : start + cut]
            image = axis.imshow(values, cmap="Reds", vmin=0.0, vmax=top, aspect="auto", interpolation="nearest")
            for s, (start, end) in enumerate(spans):
                for t in range(min(end - start, widest)):
                    strong = weights[start + t] >= 0.5 * top
                    axis.text(t, s, short(item.tokens[start + t], 8), ha="center", va="center", fontsize=ANNOTATION_SIZE,
                              color="white" if strong else "#333")
            symbol = "γ′" if p else "γ"
            labels = [f"s{s + 1}  {symbol} {gamma[s]:.2f}" if gamma is not None else f"s{s + 1}" for s in range(len(spans))]
            axis.set_yticks(range(len(spans)), labels)
            axis.set_xticks([])
            axis.tick_params(length=0)
            for spine in axis.spines.values():
                spine.set_visible(False)
            cuts = []
            if len(_sentences(item)) > max_sentences:
                cuts.append(f"first {max_sentences} of {len(_sentences(item))} sentences")
            if any(end - start > max_tokens for start, end in spans):
                cuts.append(f"first {max_tokens} words of a sentence")
            note = f"  ({'; '.join(cuts)})" if cuts else ""
            heading = f"{item.title}\n{name} per sentence; row label: sentence weight{note}" if p == 0 else f"{name} per sentence"
            axis.set_title(heading, loc="left", fontsize=FONT_SIZE)
        # one scale per document: one colour bar beside its grids
        figure.colorbar(image, ax=axes, fraction=0.03, pad=0.01, aspect=12).set_label("weight in the sentence")
    return figure


# ----------------------------------------------------------------------------- HTML

_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 70em; color: #222; }
.ex { margin: 1.2em 0; padding: 0.6em 0.8em; border: 1px solid #ddd; border-radius: 6px; }
.meta { font-size: 0.85em; color: #555; margin-bottom: 0.4em; }
.row { display: flex; align-items: baseline; line-height: 2.1em; }
.lab { flex: none; width: 6.5em; font-size: 0.8em; color: #777; }
.toks { flex: 1; }
.tok { padding: 0.15em 0.2em; margin: 0 0.05em; border-radius: 3px; }
.rule { font-size: 0.85em; color: #555; }
.sent { font-size: 0.8em; color: #555; margin-top: 0.5em; }
"""


def _cell(token: str, weight: float, alpha: float, rgb: tuple[int, int, int], tip: str) -> str:
    color = f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{alpha:.3f})"
    return f'<span class="tok" style="background:{color}" title="{html.escape(tip)}">{html.escape(token)}</span>'


def _rows_html(tokens: Sequence[str], rows: Sequence[tuple[str, np.ndarray]], with_change: bool, label: str = "") -> list[str]:
    """Coloured rows of one token sequence: each attention, then (optionally) the change α′ − α."""
    top = max(max(float(np.max(w)) for _, w in rows), 1e-12)
    lines = []
    for name, weights in rows:
        cells = [_cell(tok, w, w / top, (220, 40, 40), f"{name}: {w:.4f}") for tok, w in zip(tokens, weights)]
        lab = html.escape(label + name)
        lines.append(f'<div class="row"><span class="lab">{lab}</span><span class="toks">{" ".join(cells)}</span></div>')
    if with_change and len(rows) == 2:
        change = rows[1][1] - rows[0][1]
        scale = max(float(np.max(np.abs(change))), 1e-12)
        cells = [
            _cell(tok, d, abs(d) / scale, (220, 40, 40) if d > 0 else (40, 90, 220), f"{rows[1][0]} − {rows[0][0]}: {d:+.4f}")
            for tok, d in zip(tokens, change)
        ]
        lines.append(
            f'<div class="row"><span class="lab">{html.escape(label)}change</span><span class="toks">{" ".join(cells)}</span></div>'
        )
    return lines


def _gamma_html(item: MapItem, s: int) -> str:
    """'sentence 3: γ 0.31 → γ′ 0.28' with the sentence weight as a coloured box."""
    parts = [f"sentence {s + 1}"]
    for name, gamma in (("γ", item.sentence_original), ("γ′", item.sentence_revised)):
        if gamma is not None:
            parts.append(
                _cell(
                    f"{name} {gamma[s]:.3f}",
                    gamma[s],
                    float(gamma[s]) / max(float(np.max(gamma)), 1e-12),
                    (220, 40, 40),
                    f"sentence weight {name}: {gamma[s]:.4f}",
                )
            )
    return f'<div class="sent">{" ".join(parts)}</div>'


def html_page(items: Sequence[MapItem], heading: str, notes: Sequence[str] = ()) -> str:
    """A standalone page: per sentence, rows 'original', 'revised' and 'change' of coloured tokens.

    Red intensity is the weight divided by the largest weight of that sentence (both rows on
    one scale); in the change row red is raised by the agent, blue lowered. Hovering a token
    shows the exact numbers. Documents: one block per sentence, headed by its sentence weight
    γ (γ′), each on its own scale. IAN: the aspect term's attention as extra rows.
    """
    blocks = []
    for item in items:
        lines = []
        spans = item.sentences or [(0, len(item.tokens))]
        for s, (start, end) in enumerate(spans):
            if item.sentences is not None:
                lines.append(_gamma_html(item, s))
            rows = [("original α", item.original[start:end])]
            if item.revised is not None:
                rows.append(("revised α′", item.revised[start:end]))
            lines += _rows_html(item.tokens[start:end], rows, with_change=True)
        if item.aspect is not None and item.aspect_original is not None:
            rows = [("aspect β", item.aspect_original)]
            if item.aspect_revised is not None:
                rows.append(("aspect β′", item.aspect_revised))
            lines.append('<div class="sent">attention over the aspect term</div>')
            lines += _rows_html(item.aspect, rows, with_change=True, label="")
        blocks.append(f'<div class="ex"><div class="meta">{html.escape(item.title)}</div>{"".join(lines)}</div>')
    note_html = "".join(f'<p class="rule">{html.escape(n)}</p>' for n in notes)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
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
    if items and items[0].sentences is not None:
        notes.append("Documents: " + DOCUMENT_RULE + " Each sentence's rows are coloured on that sentence's own scale.")
    if items and items[0].aspect_original is not None:
        notes.append(
            "Aspect rows: the network's attention over the aspect term's tokens (β; β′ after the agent), "
            "a site of its own that the other analyses leave out."
        )
    out.mkdir(parents=True, exist_ok=True)
    page = out / "attention_maps.html"
    write_text_atomic(page, html_page(items, heading, notes))
    png = save_png(heatmap_figure(items[:max_png_examples]), out / "attention_maps.png")
    return {"html": str(page), "png": str(png)}
