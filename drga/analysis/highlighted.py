"""Highlighted-token counts (the paper's Table VIII): N before and after DRGA over a data set.

N is eq. 5's count: tokens taken in descending attention until their cumulative mass reaches
δ (``drga.core.reward.count_highlighted``), counted on the per-token weights of ``SQUASH_RULE``.
"Before" is the retrofitted network's own α, "after" the revised α′ (deterministic agent);
with ``--reference`` also the α of another checkpoint (e.g. the equal-budget baseline).

Documents (HAN): N is counted on each sentence's word array α_s (one row per sentence, means
over all sentences of all documents) and, separately, on each document's sentence array γ (one
row per document). The trainer's logged N/L averages, per document, N/L over its S word arrays
and its sentence array (eq. 5 as in ``drga.core.reward``); that figure is reported too, as a check.
IAN: the table counts the context array; its array over the aspect term is counted separately,
with the trainer's N/L (the mean over both arrays) beside it.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from drga.analysis.attention import AttentionRecord
from drga.analysis.plots import DOC_WIDTH, ORIGINAL_COLOR, REVISED_COLOR, legend_below, new_figure, save_png, styled
from drga.core.reward import count_highlighted
from drga.files import open_atomic, write_text_atomic


def highlighted(weights: np.ndarray, delta: float) -> int:
    """N of one sentence's per-token weights [L] (eq. 5)."""
    tensor = torch.as_tensor(np.asarray(weights, dtype=np.float64)).view(1, 1, -1)
    return int(count_highlighted(tensor, torch.ones_like(tensor, dtype=torch.bool), delta).item())


def mean_highlighted(weights: Sequence[np.ndarray], delta: float) -> dict[str, float]:
    """Mean N and mean N/L over sentences, each given by its per-token weights [L]."""
    counts = np.array([highlighted(w, delta) for w in weights], dtype=np.float64)
    lengths = np.array([len(w) for w in weights], dtype=np.float64)
    return {"mean_n": float(counts.mean()), "mean_fraction": float((counts / lengths).mean())}


def count_all(
    records: Sequence[AttentionRecord], delta: float, reference: Sequence[AttentionRecord] | None = None
) -> list[dict[str, Any]]:
    """Per sentence: length L and N of α, α′ (and of the reference's α when given).

    Documents: one row per sentence of each document (its word array α_s), with the sentence's
    position in ``sentence``; the sentence level is :func:`count_sentence_level`.
    """
    if reference is not None and [r.index for r in reference] != [r.index for r in records]:
        raise ValueError("the reference records must cover the same sentences in the same order")
    rows = []
    for k, record in enumerate(records):
        for s, (start, end) in enumerate(record.sentence_spans()):
            row: dict[str, Any] = {"index": record.index}
            if record.is_document:
                row["sentence"] = s
            row["length"] = end - start
            row["n_original"] = highlighted(record.original[start:end], delta)
            if record.revised is not None:
                row["n_revised"] = highlighted(record.revised[start:end], delta)
            if reference is not None:
                row["n_reference"] = highlighted(reference[k].original[start:end], delta)
            rows.append(row)
    return rows


def count_second_level(
    records: Sequence[AttentionRecord], delta: float, reference: Sequence[AttentionRecord] | None = None, level: str = "sentence"
) -> list[dict[str, Any]]:
    """Per example, length and N of its second array: a document's sentence-level γ (``level``
    "sentence") or IAN's array over the aspect term ("aspect"); α′'s and the reference's too."""
    rows = []
    for k, record in enumerate(records):
        original = getattr(record, f"{level}_original")
        if original is None:
            continue
        row = {"index": record.index, "length": len(original), "n_original": highlighted(original, delta)}
        if getattr(record, f"{level}_revised") is not None:
            row["n_revised"] = highlighted(getattr(record, f"{level}_revised"), delta)
        if reference is not None and getattr(reference[k], f"{level}_original") is not None:
            row["n_reference"] = highlighted(getattr(reference[k], f"{level}_original"), delta)
        rows.append(row)
    return rows


def count_sentence_level(
    records: Sequence[AttentionRecord], delta: float, reference: Sequence[AttentionRecord] | None = None
) -> list[dict[str, Any]]:
    """Documents: per document, S and N of the sentence-level γ, γ′ (and the reference's γ)."""
    return count_second_level(records, delta, reference, "sentence")


def trainer_fraction(word_rows: Sequence[dict[str, Any]], sentence_rows: Sequence[dict[str, Any]], key: str) -> float:
    """The mean over examples of the mean N/L over every array of the example.

    Documents: its S word arrays and its sentence array; IAN: its context and aspect arrays.
    This is what the trainer logs as N/L (``highlighted_fraction``): eq. 5's penalty averages
    over every attention array of an example.
    """
    per_document: dict[int, list[float]] = {}
    for row in list(word_rows) + list(sentence_rows):
        per_document.setdefault(row["index"], []).append(row[key] / row["length"])
    return float(np.mean([np.mean(v) for v in per_document.values()]))


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means of L, N and N/L per attention, and the reduction of N by the agent."""
    length = np.array([r["length"] for r in rows], dtype=np.float64)
    summary: dict[str, Any] = {"sentences": len(rows), "mean_length": float(length.mean())}
    for key in ("n_original", "n_revised", "n_reference"):
        if rows and key in rows[0]:
            n = np.array([r[key] for r in rows], dtype=np.float64)
            name = key[2:]
            summary[f"mean_n_{name}"] = float(n.mean())
            summary[f"mean_fraction_{name}"] = float((n / length).mean())
    if "mean_n_revised" in summary:
        before, after = np.array([r["n_original"] for r in rows]), np.array([r["n_revised"] for r in rows])
        summary["reduction"] = 1.0 - summary["mean_n_revised"] / summary["mean_n_original"]
        summary["sentences_fewer"] = float((after < before).mean())
        summary["sentences_same"] = float((after == before).mean())
        summary["sentences_more"] = float((after > before).mean())
    if "mean_n_reference" in summary and "mean_n_revised" in summary:
        summary["reduction_vs_reference"] = 1.0 - summary["mean_n_revised"] / summary["mean_n_reference"]
    return summary


def markdown(summary: dict[str, Any], delta: float, reference_name: str | None = None) -> str:
    """Table VIII as markdown (documents: the word level, then the sentence level)."""
    if "sentence_level" in summary:
        return _document_markdown(summary, delta, reference_name)
    lines = [
        f"| attention | mean N (δ = {delta}) | mean N/L |",
        "|---|---|---|",
    ]
    if "mean_n_reference" in summary:
        lines.append(f"| reference α ({reference_name}) | {summary['mean_n_reference']:.2f} | {summary['mean_fraction_reference']:.3f} |")
    lines.append(f"| original α (net-only) | {summary['mean_n_original']:.2f} | {summary['mean_fraction_original']:.3f} |")
    if "mean_n_revised" in summary:
        lines.append(f"| revised α′ (with agent) | {summary['mean_n_revised']:.2f} | {summary['mean_fraction_revised']:.3f} |")
        lines += [
            "",
            f"{summary['sentences']} sentences, mean length {summary['mean_length']:.1f}. Change of mean N by the agent: "
            f"{-100 * summary['reduction']:+.1f}%; N fell in {100 * summary['sentences_fewer']:.1f}% of the sentences, "
            f"stayed in {100 * summary['sentences_same']:.1f}%, rose in {100 * summary['sentences_more']:.1f}%.",
        ]
    if "aspect_level" in summary:
        aspect = summary["aspect_level"]
        parts = [f"{name} N {aspect[f'mean_n_{key}']:.2f}, N/L {aspect[f'mean_fraction_{key}']:.3f}"
                 for key, name in (("reference", "reference β"), ("original", "β"), ("revised", "β′")) if f"mean_n_{key}" in aspect]
        fractions = [f"{summary[f'trainer_fraction_{k}']:.3f} ({n})" for k, n in (("original", "α, β"), ("revised", "α′, β′"))
                     if f"trainer_fraction_{k}" in summary]
        lines += [
            "",
            f"The table counts the sentence's tokens (the context array). The network's second array, over the aspect term "
            f"(mean length {aspect['mean_length']:.1f}): {'; '.join(parts)}. N/L as the trainer logs it (per sentence, the "
            f"mean over the context and aspect arrays): {', '.join(fractions)}.",
        ]
    return "\n".join(lines)


def _document_markdown(summary: dict[str, Any], delta: float, reference_name: str | None) -> str:
    words, sentences = summary, summary["sentence_level"]
    lines = [
        f"| attention | level | mean N (δ = {delta}) | mean N/L | mean L |",
        "|---|---|---|---|---|",
    ]
    names = (("reference", f"reference ({reference_name})"), ("original", "original (net-only)"), ("revised", "revised (with agent)"))
    for key, name in names:
        for level, part, symbol, unit in (("words", words, "α", "words"), ("sentences", sentences, "γ", "sentences")):
            if f"mean_n_{key}" in part:
                mark = symbol + ("′" if key == "revised" else "")
                lines.append(
                    f"| {name} {mark} | {level} | {part[f'mean_n_{key}']:.2f} | {part[f'mean_fraction_{key}']:.3f} | "
                    f"{part['mean_length']:.1f} {unit} |"
                )
    lines.append("")
    lines.append(
        f"Word level: one count per sentence ({words['sentences']} sentences), on its word array α_s; sentence level: one "
        f"count per document ({sentences['sentences']} documents), on γ."
    )
    if "mean_n_revised" in words:
        for part, name in ((words, "word level"), (sentences, "sentence level")):
            if "reduction" in part:
                lines.append(
                    f"Change of mean N by the agent, {name}: {-100 * part['reduction']:+.1f}%; N fell in "
                    f"{100 * part['sentences_fewer']:.1f}%, stayed in {100 * part['sentences_same']:.1f}%, rose in "
                    f"{100 * part['sentences_more']:.1f}%."
                )
    fractions = [
        f"{summary[f'trainer_fraction_{k}']:.3f} ({n})"
        for k, n in (("original", "α"), ("revised", "α′"))
        if f"trainer_fraction_{k}" in summary
    ]
    lines.append(
        "N/L as the trainer logs it (per document, the mean over its word arrays and its sentence array): " + ", ".join(fractions) + "."
    )
    return "\n".join(lines)


def write_highlighted(
    records: Sequence[AttentionRecord],
    delta: float,
    out: Path,
    reference: Sequence[AttentionRecord] | None = None,
    reference_name: str | None = None,
) -> dict[str, Any]:
    """highlighted.csv (per sentence), highlighted.md (the table) and highlighted.png (N/L histograms)."""
    rows = count_all(records, delta, reference)
    summary = summarize(rows)
    # the second array of an example: a document's sentence level, IAN's aspect term
    second = None
    if records and records[0].is_document:
        second = "sentence"
    elif records and records[0].aspect_original is not None:
        second = "aspect"
    second_rows = count_second_level(records, delta, reference, second) if second else []
    if second_rows:
        summary[f"{second}_level"] = summarize(second_rows)
        for key in ("original", "revised"):
            if f"n_{key}" in rows[0]:
                summary[f"trainer_fraction_{key}"] = trainer_fraction(rows, second_rows, f"n_{key}")
    sentence_rows = second_rows if second == "sentence" else []
    out.mkdir(parents=True, exist_ok=True)
    with open_atomic(out / "highlighted.csv", newline="") as handle:
        if second == "sentence":
            table_rows = [{"level": "words", **r} for r in rows] + [{"level": "sentences", "sentence": "", **r} for r in second_rows]
        elif second == "aspect":
            table_rows = [{"level": "context", **r} for r in rows] + [{"level": "aspect", **r} for r in second_rows]
        else:
            table_rows = rows
        writer = csv.DictWriter(handle, fieldnames=list(table_rows[0]))
        writer.writeheader()
        writer.writerows(table_rows)
    table = markdown(summary, delta, reference_name)
    write_text_atomic(out / "highlighted.md", table + "\n")
    levels = [("words" if sentence_rows else "tokens", rows)] + ([(f"{second}s", second_rows)] if second_rows else [])
    save_png(histogram_figure(levels, delta, reference_name), out / "highlighted.png")
    return {**summary, "delta": delta, "markdown": table}


@styled
def histogram_figure(levels: Sequence[tuple[str, Sequence[dict[str, Any]]]], delta: float, reference_name: str | None = None):
    """Histograms of N/L per attention, one panel per level; the legend (with the means) below the panels.

    ``levels``: (name, rows of :func:`count_all` or :func:`count_second_level`), name one of
    tokens, words, sentences, aspects.
    """
    figure = new_figure(min(5.0 * len(levels) + 1.0, 2 * DOC_WIDTH), 4.2, layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(levels)))
    bins = np.linspace(0, 1, 21)
    series = [
        ("n_original", "original α", ORIGINAL_COLOR),
        ("n_revised", "revised α′", REVISED_COLOR),
        ("n_reference", reference_name or "reference", "#55a868"),
    ]
    for axis, (level, level_rows) in zip(axes, levels):
        for key, name, color in series:
            if key in level_rows[0]:
                fraction = np.array([r[key] / r["length"] for r in level_rows])
                if level != "tokens" and level != "words":
                    name = name.replace("α", "γ" if level == "sentences" else "β")
                axis.hist(fraction, bins=bins, histtype="step", lw=2, color=color, label=f"{name}: mean N/L {fraction.mean():.3f}")
        unit = {
            "tokens": "tokens",
            "words": "words of a sentence",
            "sentences": "sentences of a document",
            "aspects": "the aspect term's tokens",
        }[level]
        axis.set_xlabel(f"N/L: share of {unit}\nholding δ = {delta} of the attention")
        axis.set_ylabel("documents" if level == "sentences" else "sentences")
        axis.set_xlim(0, 1)
        if level == "aspects":
            axis.set_title("the second array, over the aspect term")
    legend_below(figure, ncol=1 if len(levels) == 1 else len(levels))
    return figure
