"""Attention mass on named words: how much of α, and of the revised α′, falls on words the user says matter.

A planted control (docs/controls.md) knows which tokens carry the label; any data set may have words a reader expects
attention to find (negations, aspect terms). For each sentence holding at least one of them, the mass is the sum of the
per-token weights on those tokens (``drga.analysis.attention.SQUASH_RULE``'s weights, summing to 1 over the sentence),
and its chance level is the share uniform attention would give them, (their count) / L. Accuracy is reported on the
same sentences, from α (net-only) and from α′ (with the agent).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from drga.analysis.attention import AttentionRecord
from drga.files import open_atomic, write_text_atomic

__all__ = ["cue_words", "cue_rows", "summarize_cue_mass", "write_cue_mass"]


def cue_words(text: str) -> list[str]:
    """The words of ``--cue-words``: comma-separated, or ``@FILE`` with one word per line; lower-cased, as the
    toolkit's tokenizer gives tokens."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            items: Iterable[str] = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ValueError(f"--cue-words {text}: cannot read {path}: {error.strerror or error}") from None
    else:
        items = text.split(",")
    words = list(dict.fromkeys(item.strip().lower() for item in items if item.strip()))
    if not words:
        raise ValueError(f"--cue-words {text!r} names no word")
    return words


def cue_rows(records: Sequence[AttentionRecord], words: Sequence[str]) -> list[dict[str, Any]]:
    """Per sentence with at least one of ``words``: its length, how many of its tokens are cues, the mass α and α′
    put on them, uniform attention's share, and whether α's and α′'s predictions are right."""
    wanted = {word.lower() for word in words}
    rows = []
    for record in records:
        cues = np.array([token.lower() in wanted for token in record.tokens], dtype=bool)
        if not cues.any():
            continue
        row: dict[str, Any] = {
            "index": record.index, "length": record.length, "cues": int(cues.sum()),
            "uniform_mass": float(cues.sum() / record.length), "mass_original": float(record.original[cues].sum()),
            "correct_original": int(int(np.argmax(record.probs_original)) == record.label),
        }
        if record.revised is not None and record.probs_revised is not None:
            row["mass_revised"] = float(record.revised[cues].sum())
            row["correct_revised"] = int(int(np.argmax(record.probs_revised)) == record.label)
        rows.append(row)
    return rows


def summarize_cue_mass(rows: Sequence[dict[str, Any]], sentences: int, words: Sequence[str], vocabulary: Iterable[str]) -> dict[str, Any]:
    """Means over the sentences holding a cue; ``sentences`` is how many were analysed, ``vocabulary`` the
    checkpoint's (a word outside it is never a token, and is named)."""
    known = set(vocabulary)
    summary: dict[str, Any] = {
        "words": list(words), "unknown_words": [word for word in words if word not in known],
        "sentences": sentences, "sentences_with_cues": len(rows),
    }
    if not rows:
        return summary
    for key in ("uniform_mass", "mass_original", "correct_original", "mass_revised", "correct_revised"):
        if key in rows[0]:
            summary[f"mean_{key}"] = float(np.mean([row[key] for row in rows]))
    if "mass_revised" in rows[0]:
        change = np.array([row["mass_revised"] - row["mass_original"] for row in rows])
        summary["sentences_raised"] = float((change > 0).mean())
        summary["sentences_lowered"] = float((change < 0).mean())
    return summary


def markdown(summary: dict[str, Any]) -> str:
    words = ", ".join(summary["words"])
    lines = [f"{summary['sentences_with_cues']} of {summary['sentences']} sentences hold at least one of: {words}."]
    if summary["unknown_words"]:
        lines.append(f"Not in the checkpoint's vocabulary (never a token): {', '.join(summary['unknown_words'])}.")
    if not summary["sentences_with_cues"]:
        return "\n".join(lines)
    lines += ["", "| attention | mean mass on the cue words | accuracy on these sentences |", "|---|---|---|",
              f"| uniform (1/L each) | {summary['mean_uniform_mass']:.3f} | |",
              f"| the network's α | {summary['mean_mass_original']:.3f} | {summary['mean_correct_original']:.4f} |"]
    if "mean_mass_revised" in summary:
        revised = f"{summary['mean_mass_revised']:.3f} | {summary['mean_correct_revised']:.4f}"
        lines.append(f"| revised α′ (the agent's mean action) | {revised} |")
        lines += ["", f"The agent raised the cue words' mass in {100 * summary['sentences_raised']:.1f}% of these sentences and "
                      f"lowered it in {100 * summary['sentences_lowered']:.1f}%."]
    return "\n".join(lines)


def write_cue_mass(records: Sequence[AttentionRecord], words: Sequence[str], vocabulary: Iterable[str], out: Path) -> dict[str, Any]:
    """cue_mass.csv (per sentence) and cue_mass.md (the table); returns the summary with its markdown."""
    rows = cue_rows(records, words)
    summary = summarize_cue_mass(rows, len(records), words, vocabulary)
    out.mkdir(parents=True, exist_ok=True)
    with open_atomic(out / "cue_mass.csv", newline="") as handle:
        fields = list(rows[0]) if rows else ["index", "length", "cues", "uniform_mass", "mass_original", "correct_original"]
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    text = markdown(summary)
    write_text_atomic(out / "cue_mass.md", text + "\n")
    return {**summary, "markdown": text}
