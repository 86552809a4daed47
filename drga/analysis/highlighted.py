"""Highlighted-token counts (the paper's Table VIII): N before and after DRGA over a data set.

N is eq. 5's count: tokens taken in descending attention until their cumulative mass reaches
δ (``drga.reward.count_highlighted``), counted on the per-token weights of ``SQUASH_RULE``.
"Before" is the retrofitted network's own α, "after" the revised α′ (deterministic agent);
with ``--reference`` also the α of another checkpoint (e.g. the equal-budget baseline).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from drga.analysis.attention import AttentionRecord
from drga.analysis.plots import ORIGINAL_COLOR, REVISED_COLOR, new_figure, save_png
from drga.reward import count_highlighted


def highlighted(weights: np.ndarray, delta: float) -> int:
    """N of one sentence's per-token weights [L] (eq. 5)."""
    tensor = torch.as_tensor(np.asarray(weights, dtype=np.float64)).view(1, 1, -1)
    return int(count_highlighted(tensor, torch.ones_like(tensor, dtype=torch.bool), delta).item())


def count_all(
    records: Sequence[AttentionRecord], delta: float, reference: Sequence[AttentionRecord] | None = None
) -> list[dict[str, Any]]:
    """Per sentence: length L and N of α, α′ (and of the reference's α when given)."""
    if reference is not None and [r.index for r in reference] != [r.index for r in records]:
        raise ValueError("the reference records must cover the same sentences in the same order")
    rows = []
    for k, record in enumerate(records):
        row = {"index": record.index, "length": record.length, "n_original": highlighted(record.original, delta)}
        if record.revised is not None:
            row["n_revised"] = highlighted(record.revised, delta)
        if reference is not None:
            row["n_reference"] = highlighted(reference[k].original, delta)
        rows.append(row)
    return rows


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
    """Table VIII as markdown."""
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
    out.mkdir(parents=True, exist_ok=True)
    with (out / "highlighted.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = markdown(summary, delta, reference_name)
    (out / "highlighted.md").write_text(table + "\n", encoding="utf-8")
    figure = new_figure(5.5, 3.0)
    axis = figure.subplots()
    bins = np.linspace(0, 1, 21)
    series = [("n_original", "original α", ORIGINAL_COLOR), ("n_revised", "revised α′", REVISED_COLOR), ("n_reference", reference_name or "reference", "#55a868")]
    for key, name, color in series:
        if key in rows[0]:
            fraction = np.array([r[key] / r["length"] for r in rows])
            axis.hist(fraction, bins=bins, histtype="step", lw=1.6, color=color, label=f"{name}: mean N/L {fraction.mean():.3f}")
    axis.set_xlabel(f"N/L: share of tokens holding δ = {delta} of the attention", fontsize=8)
    axis.set_ylabel("sentences", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.legend(fontsize=7)
    figure.tight_layout()
    save_png(figure, out / "highlighted.png")
    return {**summary, "delta": delta, "markdown": table}
