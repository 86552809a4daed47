"""Attention transitions over training (the paper's Table VII), from a run's tracked_attention.json.

The pictures follow DRGA's own path: pretrain → agent (network frozen) → co-training; the
equal-budget baseline is a separate branch from the pretrained network and is listed in the
markdown only. Co-training epoch 0 is its starting point (pretrained network + pretrained
agent), recorded before the first co-training update.

Documents (HAN): the top tokens are ranked by the document weight ω = γ·α, the markdown adds
the top sentences by γ, and the picture follows the sentence weights γ (γ′) instead of the words.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from drga.analysis.maps import add_colorbar, cell_widths, short
from drga.analysis.plots import FONT_SIZE, new_figure, save_png, styled
from drga.files import write_text_atomic
from drga.names import PhaseName

#: DRGA's path through the phases, in order.
PATH_PHASES = (PhaseName.PRETRAIN, PhaseName.AGENT, PhaseName.COTRAIN)
SHORT = {PhaseName.PRETRAIN: "pre", PhaseName.BASELINE: "base", PhaseName.AGENT: "agent", PhaseName.COTRAIN: "co"}


def training_path(records: Sequence[dict[str, Any]], phases: Sequence[str] = PATH_PHASES) -> list[dict[str, Any]]:
    """The records of ``phases``, in phase order then epoch order."""
    return sorted((r for r in records if r["phase"] in phases), key=lambda r: (list(phases).index(r["phase"]), r["epoch"]))


def row_label(record: dict[str, Any]) -> str:
    return f"{SHORT.get(record['phase'], record['phase'])} {record['epoch']}"


def top_tokens(tokens: Sequence[str], weights: Sequence[float], k: int = 3) -> str:
    """'word (0.41), other (0.12), ...': the k most attended tokens."""
    order = np.argsort(-np.asarray(weights), kind="stable")[:k]
    return ", ".join(f"{tokens[i]} ({weights[i]:.2f})" for i in order)


def spans(example: dict[str, Any]) -> list[tuple[int, int]]:
    """[start, end) of each sentence of a tracked document in its token list."""
    ends = np.cumsum(example["sentence_lengths"]).tolist()
    return list(zip([0] + ends[:-1], ends))


def document_weights(example: dict[str, Any], record: dict[str, Any], key: str, e: int) -> list[float] | None:
    """A tracked example's weights under ``key`` (original/revised); documents: ω = γ·α over its words."""
    words = record[key][e] if record[key] is not None else None
    if words is None or "sentence_lengths" not in example:
        return words
    gamma = record[f"sentences_{key}"][e]
    return (np.asarray(words) * np.repeat(gamma, example["sentence_lengths"])).tolist()


def markdown(tracked: dict[str, Any], k: int = 3) -> str:
    """Per tracked sentence, per evaluation: P(gold) and the top-k tokens under α and α′.

    Documents: tokens ranked by ω = γ·α, and the top sentences by γ (γ′) in two more columns.
    """
    names = tracked["label_names"]
    phases = PATH_PHASES + (PhaseName.BASELINE,)
    records = training_path(tracked["records"], phases)
    parts = []
    for e, example in enumerate(tracked["examples"]):
        tokens = example["tokens"]
        document = "sentence_lengths" in example
        if document:
            text = "\n>\n".join(f"> s{s + 1}: {' '.join(tokens[a:b])}" for s, (a, b) in enumerate(spans(example)))
            parts.append(f"### dev #{example['dev_index']} ({names[example['label']]})\n\n{text}\n")
            parts.append("| evaluation | step | P(gold) α | top words under ω = γ·α | top sentences under γ | P(gold) α′ | "
                         "top words under ω′ = γ′·α′ | top sentences under γ′ |")
            parts.append("|---|---|---|---|---|---|---|---|")
        else:
            parts.append(f"### dev #{example['dev_index']} ({names[example['label']]})\n\n> {' '.join(tokens)}\n")
            parts.append("| evaluation | step | P(gold) α | top tokens under α | P(gold) α′ | top tokens under α′ |")
            parts.append("|---|---|---|---|---|---|")
        for r in records:
            cells = [f"{r['phase']} {r['epoch']}", str(r["global_step"])]
            for key in ("original", "revised"):
                weights = document_weights(example, r, key, e)
                if weights is None:
                    cells += ["-", "-"] + (["-"] if document else [])
                    continue
                cells += [f"{r[f'p_gold_{key}'][e]:.2f}", top_tokens(tokens, weights, k)]
                if document:
                    labels = [f"s{s + 1}" for s in range(len(example["sentence_lengths"]))]
                    cells.append(top_tokens(labels, r[f"sentences_{key}"][e], k))
            parts.append("| " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts)


@styled
def heatmap_figure(tracked: dict[str, Any], max_examples: int = 4):
    """Per sentence: α (top) and α′ (below) over the evaluations of DRGA's path, one colour scale per sentence.

    α′ has rows from the first agent evaluation on (before that there is no agent). Each
    sentence gets one colour bar beside its two grids. At most DOC_WIDTH inches wide.
    """
    records = training_path(tracked["records"])
    examples = tracked["examples"][:max_examples]
    names = tracked["label_names"]
    document = "sentence_lengths" in examples[0]
    if document:  # the sentence weights γ over training: one column per sentence
        columns = lambda example: [f"s{s + 1}: {' '.join(example['tokens'][a:b][:3])}…" for s, (a, b) in enumerate(spans(example))]
        keys = ("sentences_original", "sentences_revised")
        titles = ("sentence weights γ", "revised sentence weights γ′ (agent)")
    else:
        columns = lambda example: [short(t) for t in example["tokens"]]
        keys = ("original", "revised")
        titles = ("network's own α", "revised α′ (agent, deterministic)")
    widest = max(len(columns(e)) for e in examples)
    cell = cell_widths(widest, 2.3, largest=0.5)
    row_height = 0.24
    panels = []  # per example: [(key, title, records with that key)]
    for _ in range(len(examples)):
        panels.append([(key, title, [r for r in records if r.get(key) is not None]) for key, title in zip(keys, titles)])
        panels[-1] = [p for p in panels[-1] if p[2]]
    # fixed layout in inches (constrained layout would stretch the rows of the panels unevenly)
    left, right, title, gap = 1.0, 0.95, 0.36, 0.18
    below = [0.2 + 0.087 * max(len(t) for t in columns(example)) * 0.87 for example in examples]
    block = lambda e: sum(title + len(rows) * row_height for _, _, rows in panels[e]) + below[e] + gap
    width = left + widest * cell + right
    height = sum(block(e) for e in range(len(examples))) + 0.1
    figure = new_figure(width, height)
    y = height - 0.05  # inches from the bottom: the top of the next panel's title
    for e, example in enumerate(examples):
        tokens = columns(example)
        boxes, images = [], []
        top = max(max(max(r[key][e]) for r in rows) for key, _, rows in panels[e])
        for k, (key, name, rows) in enumerate(panels[e]):
            y -= title + len(rows) * row_height
            box = (left / width, y / height, widest * cell / width, len(rows) * row_height / height)
            axis = figure.add_axes(box)
            boxes.append(box)
            values = np.array([r[key][e] for r in rows], dtype=np.float64)
            images.append(axis.imshow(values, cmap="Reds", vmin=0, vmax=top, aspect="auto", interpolation="nearest"))
            if k == len(panels[e]) - 1:
                axis.set_xticks(range(len(tokens)), tokens, rotation=60, ha="right", rotation_mode="anchor")
            else:
                axis.set_xticks([])
            axis.set_xlim(-0.5, widest - 0.5)
            axis.set_yticks(range(len(rows)), [row_label(r) for r in rows])
            axis.set_title(f"dev #{example['dev_index']} ({names[example['label']]}): {name}", loc="left", fontsize=FONT_SIZE)
            axis.tick_params(length=0)
            for spine in axis.spines.values():
                spine.set_visible(False)
        y -= below[e] + gap
        # one scale per sentence: one colour bar beside both of its grids
        low = boxes[-1][1]
        add_colorbar(figure, images[0], (boxes[0][0], low, boxes[0][2], boxes[0][1] + boxes[0][3] - low))
    return figure


def write_transitions(tracked: dict[str, Any], out: Path, max_examples: int = 4) -> dict[str, Any]:
    """transitions.md (every tracked sentence) and transitions.png (the first ``max_examples``)."""
    if not tracked.get("records"):
        raise ValueError("the tracked file holds no records yet")
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(tracked)
    write_text_atomic(out / "transitions.md", text + "\n")
    save_png(heatmap_figure(tracked, max_examples), out / "transitions.png")
    path = training_path(tracked["records"])
    return {"examples": len(tracked["examples"]), "evaluations": [row_label(r) for r in path], "markdown": text}
