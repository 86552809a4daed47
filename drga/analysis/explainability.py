"""The explainability test (the paper's eq. 13 and Fig. 5, after Serrano & Smith 2019).

For each sentence and each attention (the network's own α, the revised α′):

- p: the output distribution under that attention;
- i: the token of highest attention; r: a random other token (the same draw for α and α′);
- q_i, q_r: the output after removing i (resp. r): its weight zeroed in every spanning array
  and the rest renormalised (``remove_token``);
- ΔJS = JS(p, q_i) − JS(p, q_r) against Δα = α_i − α_r (per-token weights, ``SQUASH_RULE``).

If attention is explanatory, removing the most attended token should change the output more
than removing a random one (ΔJS > 0), increasingly so as Δα grows. The reported *threshold*
is the Δα above which the binned mean ΔJS is positive in every bin.

Documents (HAN) are tested at two levels. Words: i is the word of highest document weight
ω_st = γ_s·α_st, r a random other word of the document; removing a word zeroes it in its
sentence's array α_s and renormalises that sentence only; Δα = ω_i − ω_r. Sentences (as
Serrano & Smith test HANs): i is the sentence of highest γ, r a random other one (documents
of ≥ 2 sentences); removing it zeroes γ_i and renormalises γ; Δα = γ_i − γ_r. The summary's
keys are ``original``/``revised`` for the word (token) level and ``sentences-original``/
``sentences-revised`` for the sentence level.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from drga.analysis.attention import (
    eval_mode,
    is_document,
    length_sorted_chunks,
    model_device,
    remove_token,
    revised_attention,
    sentence_sites,
    squash_attention,
    squash_sentences,
    token_sites,
    token_weights,
)
from drga.analysis.plots import DOC_WIDTH, ORIGINAL_COLOR, REVISED_COLOR, legend_below, new_figure, save_png, styled
from drga.analysis.stats import js_divergence
from drga.baselines.protocol import AttentionNetwork
from drga.core.policy import StatePolicy
from drga.data import EncodedExample, Vocabulary, collate
from drga.files import open_atomic, write_text_atomic

if TYPE_CHECKING:
    from matplotlib.artist import Artist

MODES = (("original", "net-only, α"), ("revised", "with-agent, α′"))
#: Documents' sentence level (summary keys and table names).
SENTENCE_MODES = (("sentences-original", "net-only, γ (sentences)"), ("sentences-revised", "with-agent, γ′ (sentences)"))
ALL_MODES = MODES + SENTENCE_MODES


def random_other(top: Tensor, lengths: Tensor, uniform: Tensor) -> Tensor:
    """A token ≠ ``top`` per row, uniformly among the other real tokens, from a fixed draw in [0, 1)."""
    pick = (uniform * (lengths - 1).to(uniform.dtype)).floor().long().clamp_max((lengths - 2).clamp_min(0))
    return pick + (pick >= top).long()  # skip over the top token


@torch.no_grad()
def removal_rows(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    vocab: Vocabulary,
    policy: StatePolicy | None,
    beta: Tensor | float | None,
    seed: int = 0,
    site: str | None = None,
    batch_size: int = 128,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """One row per (sentence of ≥ 2 tokens, attention): positions, weights, JS values, decision flips."""
    device = model_device(network)
    draws = np.random.default_rng(seed).random(len(examples))  # one uniform per sentence, shared by α and α′
    rows: list[dict[str, Any]] = []
    with eval_mode(network, policy):
        for chunk in tqdm(length_sorted_chunks(examples, batch_size), desc="explainability", leave=False, disable=not progress):
            chunk = [i for i in chunk if len(examples[i].ids) >= 2]
            if not chunk:
                continue
            batch = collate([examples[i] for i in chunk]).to(device)
            encoding = network.encode(batch)
            if is_document(batch):
                rows += _document_rows(network, policy, beta, batch, encoding, chunk, examples, vocab, draws, seed, site)
                continue
            sites = token_sites(encoding, batch, site)
            lengths = batch.mask.sum(dim=1)
            uniform = torch.as_tensor(draws[chunk], device=device)
            attentions = {"original": encoding.attention}
            if policy is not None:
                attentions["revised"] = revised_attention(network, policy, batch, beta, encoding)[0]
            for mode, attention in attentions.items():
                weights = squash_attention(attention, encoding, sites)
                top = weights.argmax(dim=1)
                other = random_other(top, lengths, uniform)
                prob = lambda a, encoding=encoding: torch.softmax(network.predict(encoding, a), dim=-1).double().cpu().numpy()
                p, q_top, q_other = prob(attention), prob(remove_token(attention, sites, top)), prob(remove_token(attention, sites, other))
                js_top, js_other = js_divergence(p, q_top), js_divergence(p, q_other)
                w = weights.double().cpu().numpy()
                for row, position in enumerate(chunk):
                    i, r = int(top[row]), int(other[row])
                    ids = examples[position].ids
                    rows.append({
                        "mode": mode, "index": position, "length": len(ids),
                        "top": i, "top_token": vocab.itos[ids[i]], "random": r, "random_token": vocab.itos[ids[r]],
                        "alpha_top": w[row, i], "alpha_random": w[row, r], "delta_alpha": w[row, i] - w[row, r],
                        "js_top": float(js_top[row]), "js_random": float(js_other[row]),
                        "delta_js": float(js_top[row] - js_other[row]),
                        "flip_top": bool(q_top[row].argmax() != p[row].argmax()),
                        "flip_random": bool(q_other[row].argmax() != p[row].argmax()),
                    })
    order = [mode for mode, _ in ALL_MODES]
    return sorted(rows, key=lambda r: (order.index(r["mode"]), r["index"]))


def _document_rows(network, policy, beta, batch, encoding, chunk, examples, vocab, draws, seed, site) -> list[dict[str, Any]]:
    """The removal test of a batch of documents at the word level and (≥ 2 sentences) the sentence level."""
    device = batch.tokens.device
    words = token_sites(encoding, batch, site)
    upper = sentence_sites(encoding, batch)
    b, n_sentences, t = batch.mask.shape
    flat_mask = batch.mask.reshape(b, -1)
    lengths = flat_mask.sum(dim=1)
    sentence_counts = batch.mask.any(dim=-1).sum(dim=1)
    # the document's real words, in reading order: flat position of its k-th word
    order = torch.argsort((~flat_mask).to(torch.int8), dim=1, stable=True)
    rank = flat_mask.long().cumsum(dim=1) - 1  # a real word's position in the document's word list
    uniform = torch.as_tensor(draws[chunk], device=device)
    # a second, independent draw for the random sentence (same for α and α′)
    uniform_sentence = torch.as_tensor(np.random.default_rng([seed, 1]).random(len(draws))[chunk], device=device)
    attentions = {"original": encoding.attention}
    if policy is not None:
        attentions["revised"] = revised_attention(network, policy, batch, beta, encoding)[0]
    rows: list[dict[str, Any]] = []
    prob = lambda a: torch.softmax(network.predict(encoding, a), dim=-1).double().cpu().numpy()
    for mode, attention in attentions.items():
        p = prob(attention)
        rows_idx = torch.arange(b, device=device)
        # word level: rank words by ω = γ·α across the document
        omega = token_weights(attention, encoding, batch, words).reshape(b, -1)
        top_flat = omega.argmax(dim=1)
        top = rank[rows_idx, top_flat]
        other = random_other(top, lengths, uniform)
        other_flat = order[rows_idx, other]
        removed = lambda flat, attention=attention: prob(remove_token(attention, words, flat % t, arrays=flat // t))
        q_top, q_other = removed(top_flat), removed(other_flat)
        rows += _rows(mode, chunk, examples, vocab, p, q_top, q_other, top, other,
                      omega[rows_idx, top_flat].double().cpu().numpy(), omega[rows_idx, other_flat].double().cpu().numpy(),
                      lambda position, i: vocab.itos[examples[position].ids[i]], range(b))
        if not upper:
            continue
        gamma = squash_sentences(attention, encoding, upper)
        keep = [row for row in range(b) if int(sentence_counts[row]) >= 2]
        if not keep:
            continue
        top_s = gamma.argmax(dim=1)
        other_s = random_other(top_s, sentence_counts, uniform_sentence).clamp_max(n_sentences - 1)  # 1-sentence rows: unused
        q_top, q_other = prob(remove_token(attention, upper, top_s)), prob(remove_token(attention, upper, other_s))
        sentence_text = lambda position, i: "s{}: {}".format(i + 1, " ".join(vocab.decode(examples[position].sentences[i][:6])))
        rows += _rows(f"sentences-{mode}", chunk, examples, vocab, p, q_top, q_other, top_s, other_s,
                      gamma[rows_idx, top_s].double().cpu().numpy(), gamma[rows_idx, other_s].double().cpu().numpy(),
                      sentence_text, keep)
    return rows


def _rows(mode, chunk, examples, vocab, p, q_top, q_other, top, other, alpha_top, alpha_other, name, keep) -> list[dict[str, Any]]:
    js_top, js_other = js_divergence(p, q_top), js_divergence(p, q_other)
    rows = []
    for row in keep:
        position = chunk[row]
        i, r = int(top[row]), int(other[row])
        rows.append({
            "mode": mode, "index": position, "length": len(examples[position].ids),
            "top": i, "top_token": name(position, i), "random": r, "random_token": name(position, r),
            "alpha_top": float(alpha_top[row]), "alpha_random": float(alpha_other[row]),
            "delta_alpha": float(alpha_top[row] - alpha_other[row]),
            "js_top": float(js_top[row]), "js_random": float(js_other[row]), "delta_js": float(js_top[row] - js_other[row]),
            "flip_top": bool(q_top[row].argmax() != p[row].argmax()),
            "flip_random": bool(q_other[row].argmax() != p[row].argmax()),
        })
    return rows


def binned(delta_alpha: np.ndarray, delta_js: np.ndarray, bins: int = 10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(edges, bin centres, mean ΔJS per bin) over equal-count bins of Δα (empty bins dropped)."""
    edges = np.unique(np.quantile(delta_alpha, np.linspace(0, 1, bins + 1)))
    if len(edges) < 2:
        edges = np.array([delta_alpha.min(), delta_alpha.max() + 1e-12])
    which = np.clip(np.searchsorted(edges, delta_alpha, side="right") - 1, 0, len(edges) - 2)
    keep = [b for b in range(len(edges) - 1) if (which == b).any()]
    centres = np.array([delta_alpha[which == b].mean() for b in keep])
    means = np.array([delta_js[which == b].mean() for b in keep])
    return edges[keep + [keep[-1] + 1]] if keep else edges, centres, means


def fixed_bins(delta_alpha: np.ndarray, delta_js: np.ndarray, edges: Sequence[float]) -> tuple[list[int], list[float | None]]:
    """(count, mean ΔJS) per bin [edges[k], edges[k+1]) of Δα, the last bin closed; None for an empty bin.

    Fixed edges (unlike :func:`binned`'s equal-count ones) let curves of several runs be averaged bin by bin.
    """
    delta_alpha, delta_js = np.asarray(delta_alpha, dtype=np.float64), np.asarray(delta_js, dtype=np.float64)
    bounds = np.asarray(edges, dtype=np.float64)
    which = np.searchsorted(bounds, delta_alpha, side="right") - 1
    which[delta_alpha == bounds[-1]] = len(bounds) - 2
    counts, means = [], []
    for k in range(len(bounds) - 1):
        inside = which == k
        counts.append(int(inside.sum()))
        means.append(float(delta_js[inside].mean()) if inside.any() else None)
    return counts, means


def positive_threshold(delta_alpha: np.ndarray, delta_js: np.ndarray, bins: int = 10) -> float | None:
    """The Δα above which the binned mean ΔJS is positive in every bin (None if the top bin is not).

    It is the lower edge of the first bin of the run of positive bins that reaches the largest
    Δα; the smallest Δα seen when every bin is positive.
    """
    edges, _, means = binned(np.asarray(delta_alpha, dtype=np.float64), np.asarray(delta_js, dtype=np.float64), bins)
    if len(means) == 0 or means[-1] <= 0:
        return None
    start = len(means) - 1
    while start > 0 and means[start - 1] > 0:
        start -= 1
    return float(edges[start])


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per attention: sentences, share with ΔJS > 0, mean ΔJS, medians, flip rates, the threshold."""
    summary: dict[str, dict[str, Any]] = {}
    for mode, _ in ALL_MODES:
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        da = np.array([r["delta_alpha"] for r in mine])
        dj = np.array([r["delta_js"] for r in mine])
        summary[mode] = {
            "sentences": len(mine),
            "share_delta_js_positive": float((dj > 0).mean()),
            "share_delta_js_negative": float((dj < 0).mean()),
            "mean_delta_js": float(dj.mean()),
            "median_js_top": float(np.median([r["js_top"] for r in mine])),
            "median_js_random": float(np.median([r["js_random"] for r in mine])),
            "flip_rate_top": float(np.mean([r["flip_top"] for r in mine])),
            "flip_rate_random": float(np.mean([r["flip_random"] for r in mine])),
            "mean_delta_alpha": float(da.mean()),
            "threshold_delta_alpha": positive_threshold(da, dj),
        }
    return summary


def markdown(summary: dict[str, dict[str, Any]]) -> str:
    """The summary as a markdown table."""
    document = any(mode.startswith("sentences-") for mode in summary)
    lines = [
        f"| attention | {'documents' if document else 'sentences'} | ΔJS > 0 | ΔJS < 0 | mean ΔJS | median JS(p, q_i) | "
        "median JS(p, q_r) | decision flips (i / r) | Δα threshold |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, name in ALL_MODES:
        if mode in summary:
            s = summary[mode]
            if document and mode in ("original", "revised"):
                name = name.replace("α", "ω") + " (words)"
            threshold = "none" if s["threshold_delta_alpha"] is None else f"{s['threshold_delta_alpha']:.4f}"
            lines.append(
                f"| {name} | {s['sentences']} | {100 * s['share_delta_js_positive']:.1f}% | {100 * s['share_delta_js_negative']:.1f}% | "
                f"{s['mean_delta_js']:.2e} | {s['median_js_top']:.2e} | {s['median_js_random']:.2e} | "
                f"{100 * s['flip_rate_top']:.1f}% / {100 * s['flip_rate_random']:.1f}% | {threshold} |"
            )
    return "\n".join(lines)


def write_explainability(rows: Sequence[dict[str, Any]], out: Path) -> dict[str, Any]:
    """explainability.csv (per sentence), explainability.md and explainability.png (ΔJS vs Δα)."""
    out.mkdir(parents=True, exist_ok=True)
    with open_atomic(out / "explainability.csv", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)  # 4 digits: small files
    summary = summarize(rows)
    table = markdown(summary)
    write_text_atomic(out / "explainability.md", table + "\n")
    save_png(scatter_figure(rows, summary), out / "explainability.png")
    return {"summary": summary, "markdown": table}


@styled
def scatter_figure(rows: Sequence[dict[str, Any]], summary: dict[str, Any]):
    """ΔJS against Δα per attention (symlog y), binned means and threshold; the legend below the panels."""
    present = [(mode, name) for mode, name in ALL_MODES if mode in summary]
    columns = min(len(present), 2)
    lines = -(-len(present) // columns)
    figure = new_figure(min(4.6 * columns + 1.0, DOC_WIDTH), 3.9 * lines + 0.8, layout="constrained")
    axes = np.atleast_1d(figure.subplots(lines, columns, sharey=True, squeeze=False)).ravel()
    document = any(m.startswith("sentences-") for m, _ in present)
    for axis, (mode, name) in zip(axes, present):
        color = REVISED_COLOR if mode.endswith("revised") else ORIGINAL_COLOR
        if document and mode in ("original", "revised"):
            name = name.replace("α", "ω") + " (words)"
        mine = [r for r in rows if r["mode"] == mode]
        da = np.array([r["delta_alpha"] for r in mine])
        dj = np.array([r["delta_js"] for r in mine])
        axis.scatter(da, dj, s=6, alpha=0.35, color=color, lw=0, label=f"one {'document' if document else 'sentence'} ({name})")
        _, centres, means = binned(da, dj)
        axis.plot(centres, means, color="black", marker="o", ms=4, lw=1.2, label="binned mean (deciles of Δα)")
        axis.axhline(0, color="#999", lw=0.8)
        # JS changes span orders of magnitude and both signs: linear near 0, logarithmic beyond
        axis.set_yscale("symlog", linthresh=1e-5)
        threshold = summary[mode]["threshold_delta_alpha"]
        title = f"{name}\nΔJS > 0 in {100 * summary[mode]['share_delta_js_positive']:.0f}%"
        if threshold is not None:
            axis.axvline(threshold, color="#2a2", lw=1.2, ls="--", label="threshold Δα (value in the panel title)")
            title += f", threshold Δα {threshold:.4f}"
        axis.set_title(title, loc="left")
        label = "Δα = α_i − α_r"
        if mode.startswith("sentences-"):
            label = "Δγ = γ_i − γ_r (sentences)"
        elif document:  # a document's word level
            label = "Δω = ω_i − ω_r (words, ω = γ·α)"
        axis.set_xlabel(label)
    for axis in axes[len(present):]:
        axis.set_visible(False)
    for axis in axes[::columns]:
        axis.set_ylabel("ΔJS (symlog)")
    handles: dict[str, Artist] = {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    order = sorted(handles, key=lambda label: not label.startswith("one "))  # the points first, then the lines
    legend_below(figure, [handles[k] for k in order], order, ncol=2, markerscale=2)
    return figure
