"""Token polarity and attention scores (after Sun & Lu, "Understanding Attention for Text
Classification", ACL 2020).

Sun & Lu's simple classifier pools word embeddings e with attention; a token's *polarity
score* is s_e = W·e (its contribution to the class logits) and its *attention score* a_e is
the pre-softmax score. Retrofitted networks contextualise every token, so both become
properties of a token *occurrence*, averaged over a fixed set of occurrences:

- polarity s_t = log P(c+ | α = one-hot at t) − log P(c− | α = one-hot at t): the log-odds the
  network outputs when all attention goes to that token (every spanning array one-hot). For
  Sun & Lu's model this is exactly (W_{c+} − W_{c−})·e. c+ is the last class, c− the first
  (for SUBJ: subjective vs objective; for MR and SST-2: positive vs negative).
- attention L·α_t: the token's weight relative to uniform (1 = an average token), for the
  network's own α and for the revised α′. Softmax scores are shift-invariant per sentence, so
  this relative weight is the comparable quantity across sentences.

Tokens are grouped by their training-set class rate: *positive* (most often in c+ sentences),
*negative* (most often in c− sentences), *neutral* (frequent, at the prior rate).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from drga.analysis.attention import (
    AnalysisError,
    eval_mode,
    model_device,
    one_hot_attention,
    revised_attention,
    squash_attention,
    token_sites,
)
from drga.analysis.plots import ANNOTATION_SIZE, DOC_WIDTH, DPI, FONT_SIZE, new_figure, save_png, styled
from drga.analysis.stats import kendall_tau
from drga.baselines.protocol import AttentionNetwork
from drga.core.policy import StatePolicy
from drga.data import EncodedExample, Vocabulary, collate
from drga.files import open_atomic

if TYPE_CHECKING:
    from matplotlib.transforms import Bbox

GROUPS = ("positive", "negative", "neutral")


@dataclass
class PolarityToken:
    """A token whose scores are followed: its id, group and training-set statistics."""

    token: str
    id: int
    group: str
    count: int  #: training sentences (of classes c− or c+) that contain it
    rate: float  #: smoothed share of those sentences labelled c+

    def as_dict(self) -> dict[str, Any]:
        return vars(self).copy()


def choose_polarity_tokens(
    train: Sequence[EncodedExample], vocab: Vocabulary, num_classes: int, per_group: int = 4, min_count: int = 20
) -> list[PolarityToken]:
    """``per_group`` positive, negative and neutral tokens among those in ≥ ``min_count`` sentences.

    rate = (n+ + 1) / (n+ + n− + 2) over training sentences of class c+ (last) and c− (first).
    Positive: highest rates; negative: lowest; neutral: the most frequent tokens whose rate is
    within 0.05 of the prior (or else closest to it). Ties go to the more frequent token.
    """
    positive_class, negative_class = num_classes - 1, 0
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    prior_counts = [0, 0]
    for example in train:
        if example.label not in (positive_class, negative_class):
            continue
        side = int(example.label == positive_class)
        prior_counts[side] += 1
        for token_id in set(example.ids):
            if token_id >= 2:  # not <pad>, <unk>
                counts[token_id][side] += 1
    prior = (prior_counts[1] + 1) / (sum(prior_counts) + 2)
    stats = {i: (n[0] + n[1], (n[1] + 1) / (n[0] + n[1] + 2)) for i, n in counts.items() if n[0] + n[1] >= min_count}
    if len(stats) < 3 * per_group:
        return []
    by_rate = sorted(stats, key=lambda i: (-stats[i][1], -stats[i][0], i))
    chosen: dict[str, list[int]] = {"positive": by_rate[:per_group], "negative": by_rate[::-1][:per_group]}
    taken = set(chosen["positive"]) | set(chosen["negative"])
    by_count = [i for i in sorted(stats, key=lambda i: (-stats[i][0], i)) if i not in taken]
    neutral = [i for i in by_count if abs(stats[i][1] - prior) <= 0.05][:per_group]
    if len(neutral) < per_group:
        rest = sorted((i for i in by_count[:200] if i not in neutral), key=lambda i: abs(stats[i][1] - prior))
        neutral += rest[: per_group - len(neutral)]
    chosen["neutral"] = neutral
    return [
        PolarityToken(vocab.itos[i], i, group, stats[i][0], round(stats[i][1], 4)) for group in GROUPS for i in chosen[group]
    ]


def token_occurrences(
    examples: Sequence[EncodedExample], token_ids: Sequence[int], per_token: int = 30
) -> list[tuple[int, int]]:
    """(example index, position) pairs: the first ``per_token`` occurrences of each token id."""
    wanted = set(token_ids)
    seen: dict[int, int] = defaultdict(int)
    found = []
    for index, example in enumerate(examples):
        for position, token_id in enumerate(example.ids):
            if token_id in wanted and seen[token_id] < per_token:
                seen[token_id] += 1
                found.append((index, position))
    return found


@torch.no_grad()
def occurrence_scores(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    occurrences: Sequence[tuple[int, int]],
    policy: StatePolicy | None = None,
    beta: Tensor | float | None = None,
    batch_size: int = 128,
) -> dict[str, np.ndarray | None]:
    """Per occurrence: polarity s_t, relative attention L·α_t and (with an agent) L·α′_t."""
    device = model_device(network)
    polarity, attention, revised = [], [], []
    with eval_mode(network, policy):
        for start in range(0, len(occurrences), batch_size):
            chunk = occurrences[start : start + batch_size]
            batch = collate([examples[i] for i, _ in chunk]).to(device)  # one row per occurrence
            positions = torch.tensor([p for _, p in chunk], device=device)
            rows = torch.arange(len(chunk), device=device)
            encoding = network.encode(batch)
            sites = token_sites(encoding, batch)
            lengths = batch.mask.sum(dim=1).to(torch.float64)
            log_probs = torch.log_softmax(network.predict(encoding, one_hot_attention(encoding.attention, sites, positions)), -1)
            polarity.append((log_probs[:, -1] - log_probs[:, 0]).double().cpu())
            own = squash_attention(encoding.attention, encoding, sites)[rows, positions].double()
            attention.append((own * lengths).cpu())
            if policy is not None:
                adjusted, _ = revised_attention(network, policy, batch, beta, encoding)
                mine = squash_attention(adjusted, encoding, sites)[rows, positions].double()
                revised.append((mine * lengths).cpu())
    join = lambda parts: torch.cat(parts).numpy() if parts else np.zeros(0)
    return {"polarity": join(polarity), "attention": join(attention), "attention_revised": join(revised) if policy else None}


def token_means(
    tokens: Sequence[PolarityToken],
    examples: Sequence[EncodedExample],
    occurrences: Sequence[tuple[int, int]],
    scores: dict[str, np.ndarray | None],
) -> dict[str, list[float] | None]:
    """Mean of each score over each token's occurrences, in the order of ``tokens`` (NaN if none)."""
    which = np.array([examples[i].ids[p] for i, p in occurrences])
    means: dict[str, list[float] | None] = {}
    for key, values in scores.items():
        if values is None:
            means[key] = None
            continue
        means[key] = [
            round(float(values[which == t.id].mean()), 5) if (which == t.id).any() else float("nan") for t in tokens
        ]
    return means


# ----------------------------------------------------------------------------- outputs


def snapshot(
    network: AttentionNetwork,
    train: Sequence[EncodedExample],
    examples: Sequence[EncodedExample],
    vocab: Vocabulary,
    num_classes: int,
    policy: StatePolicy | None,
    beta: Tensor | float | None,
    tokens: int = 150,
    per_token: int = 20,
    min_count: int = 10,
) -> list[dict[str, Any]]:
    """Scores of the ``tokens`` most frequent training tokens (≥ min_count sentences), over ``examples``.

    Each row: token, training count and class rate, occurrences scored, mean polarity, mean
    L·α and mean L·α′. The picture Sun & Lu draw at the end of training.
    """
    positive_class = num_classes - 1
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for example in train:
        if example.label in (0, positive_class):
            for token_id in set(example.ids):
                if token_id >= 2:
                    counts[token_id][int(example.label == positive_class)] += 1
    frequent = sorted((i for i, n in counts.items() if sum(n) >= min_count), key=lambda i: (-sum(counts[i]), i))[:tokens]
    chosen = [PolarityToken(vocab.itos[i], i, "", sum(counts[i]), (counts[i][1] + 1) / (sum(counts[i]) + 2)) for i in frequent]
    occurrences = token_occurrences(examples, frequent, per_token)
    if not occurrences:
        return []
    scores = occurrence_scores(network, examples, occurrences, policy, beta)
    means = token_means(chosen, examples, occurrences, scores)
    which = [examples[i].ids[p] for i, p in occurrences]
    polarity_means, attention_means, revised_means = means["polarity"], means["attention"], means["attention_revised"]
    if polarity_means is None or attention_means is None:  # never: occurrence_scores scores both with or without an agent
        raise AnalysisError("the occurrences were scored without their polarity or attention")
    rows = []
    for k, token in enumerate(chosen):
        seen = which.count(token.id)
        if not seen:
            continue
        rows.append(
            {
                "token": token.token, "train_count": token.count, "rate_c_plus": round(token.rate, 4), "occurrences": seen,
                "polarity": polarity_means[k], "attention": attention_means[k],
                "attention_revised": revised_means[k] if revised_means else float("nan"),
            }
        )
    return rows


def write_snapshot(rows: Sequence[dict[str, Any]], label_names: Sequence[str], out: Path) -> dict[str, Any]:
    """polarity_snapshot.csv and polarity_snapshot.png: polarity vs relative attention per token."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "polarity_snapshot.csv"
    with open_atomic(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["token"])
        writer.writeheader()
        writer.writerows(rows)
    png = save_png(snapshot_figure(rows, label_names), out / "polarity_snapshot.png")
    return {
        "csv": str(path), "png": str(png), "tokens": len(rows),
        "tau_abs_polarity_attention": polarity_attention_tau(rows, "attention"),
        "tau_abs_polarity_attention_revised": polarity_attention_tau(rows, "attention_revised"),
    }


def polarity_attention_tau(rows: Sequence[dict[str, Any]], key: str = "attention") -> float:
    """Kendall τ of |polarity| against the mean relative attention ``key`` over the snapshot's tokens.

    Sun & Lu's observation is that tokens of strong polarity get large attention scores; a rank
    correlation measures it without assuming a scale.
    """
    return kendall_tau(np.abs([r["polarity"] for r in rows]), [r[key] for r in rows])


def write_trajectories(tracked: dict[str, Any], out: Path) -> dict[str, Any]:
    """polarity_tracking.png and .csv: each followed token's scores at every recorded evaluation.

    Reads the ``polarity`` part of a run's tracked_attention.json (``drga train
    --track-examples N``); the x axis is the evaluations in training order (pretrain, agent,
    co-training; the equal-budget baseline is a separate branch and is left out).
    """
    from drga.analysis.transitions import training_path

    tokens = tracked.get("polarity_tokens") or []
    records = [r for r in training_path(tracked["records"]) if r.get("polarity")]
    if not tokens or not records:
        raise ValueError("the tracked file holds no polarity scores")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "polarity_tracking.csv"
    with open_atomic(path, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["phase", "epoch", "global_step", "token", "group", "polarity", "attention", "attention_revised"])
        for r in records:
            revised = r["polarity"].get("attention_revised")
            for k, token in enumerate(tokens):
                writer.writerow(
                    [r["phase"], r["epoch"], r["global_step"], token["token"], token["group"], r["polarity"]["polarity"][k],
                     r["polarity"]["attention"][k], revised[k] if revised else ""]
                )
    png = save_png(tracking_figure(tracked), out / "polarity_tracking.png")
    return {"csv": str(path), "png": str(png), "tokens": [t["token"] for t in tokens], "evaluations": len(records)}


#: Log axes of relative attention start here: a token the agent clips everywhere has mean L·α′ = 0.
FLOOR = 1e-3


@styled
def snapshot_figure(rows: Sequence[dict[str, Any]], label_names: Sequence[str]):
    """Polarity against relative attention per token, α (left) and α′ (right), coloured by class rate."""
    figure = new_figure(DOC_WIDTH, 4.8, layout="constrained")
    axes = figure.subplots(1, 2, sharey=True, sharex=True)
    polarity = np.array([r["polarity"] for r in rows])
    for axis, key, name in ((axes[0], "attention", "original α"), (axes[1], "attention_revised", "revised α′")):
        values = np.maximum(np.array([r[key] for r in rows]), FLOOR)
        points = axis.scatter(values, polarity, c=[r["rate_c_plus"] for r in rows], cmap="coolwarm", vmin=0, vmax=1, s=22,
                              edgecolors="#444", linewidths=0.3)
        # name the tokens at the extremes of either axis (most extreme first; see below for overlaps)
        order = [int(i) for i in np.argsort(-np.abs(polarity))[:6]] + [int(i) for i in np.argsort(-values)[:6]]
        for i in dict.fromkeys(order):
            axis.annotate(rows[i]["token"], (values[i], polarity[i]), fontsize=ANNOTATION_SIZE, xytext=(3, 3),
                          textcoords="offset points")
        axis.set_xscale("log")
        axis.axhline(0, color="#999", lw=0.8)
        axis.axvline(1, color="#999", lw=0.8, ls=":")
        axis.set_title(name)
        axis.set_xlabel("mean relative attention L·α" + ("′" if key == "attention_revised" else ""))
    axes[0].set_ylabel(f"polarity: log P({label_names[-1]})\n− log P({label_names[0]})")
    colorbar = figure.colorbar(points, ax=list(axes), fraction=0.04, aspect=25)
    colorbar.set_label(f"training-set share of '{label_names[-1]}'")
    drop_overlapping_labels(figure, axes)
    figure.suptitle(f"{len(rows)} frequent tokens: polarity vs attention (Sun & Lu 2020); "
                    f"L·α below {FLOOR:g} drawn at {FLOOR:g}")
    return figure


def spread(positions: Sequence[float], gap: float, low: float = 0.0, high: float = 1.0) -> list[float]:
    """Label heights (axes fractions) near ``positions``, at least ``gap`` apart, within [low, high].

    Labels keep their order; each moves as little as this greedy pass allows (up, then back
    down where the top is reached).
    """
    order = np.argsort(positions, kind="stable")
    placed = np.clip(np.asarray(positions, dtype=np.float64)[order], low, high)
    for k in range(1, len(placed)):
        placed[k] = max(placed[k], placed[k - 1] + gap)
    if len(placed) and placed[-1] > high:
        placed[-1] = high
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
    result = np.empty_like(placed)
    result[order] = placed
    return result.tolist()


#: One colour per token of a group (the same token has the same colour in every panel).
TOKEN_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d")


@styled
def tracking_figure(tracked: dict[str, Any]):
    """Small multiples of the followed tokens over training: rows polarity, L·α, L·α′; columns the groups.

    Each panel has at most a group's tokens (4 by default), named at their line ends; the
    panels share the x axis (the evaluations) and, per row, the y axis; the two attention rows
    share one log scale.
    """
    from drga.analysis.transitions import row_label, training_path

    tokens = tracked.get("polarity_tokens") or []
    records = [r for r in training_path(tracked["records"]) if r.get("polarity")]
    classes = tracked.get("polarity_classes") or ["c−", "c+"]
    groups = [g for g in GROUPS if any(t["group"] == g for t in tokens)]
    figure = new_figure(DOC_WIDTH, 9.6, layout="constrained")
    axes = _tracking_axes(figure, len(groups))
    series = _plot_followed_tokens(axes, groups, tokens, records, classes)
    _label_tracking_rows(axes, classes)
    _evaluation_axis(axes, records, [row_label(r) for r in records])
    _name_line_ends(figure, axes, series, len(records) - 1 + 0.55)
    figure.suptitle(f"Followed tokens over training; L·α below {FLOOR:g} drawn at {FLOOR:g}")
    return figure


#: A plotted line of :func:`tracking_figure`: (axis, values, token, colour).
_Series = tuple[Any, list[float], str, str]


def _tracking_axes(figure: Any, columns: int) -> np.ndarray:
    """3 × ``columns`` panels: one x axis for all, one y axis per row, the two attention rows sharing theirs."""
    axes = figure.subplots(3, columns, sharex=True, squeeze=False)
    for row in range(3):
        for column in range(columns):
            if (row, column) != (0, 0):
                axes[row, column].sharey(axes[0 if row == 0 else 1, 0])
    return axes


def _plot_followed_tokens(
    axes: np.ndarray, groups: list[str], tokens: list[dict[str, Any]], records: list[dict[str, Any]], classes: list[str]
) -> list[_Series]:
    """Each group's tokens in its column, one colour per token (the same in every row), and the columns' titles."""
    x = np.arange(len(records))
    series: list[_Series] = []
    for column, group in enumerate(groups):
        members = [(k, t) for k, t in enumerate(tokens) if t["group"] == group]
        for n, (k, token) in enumerate(members):
            color = TOKEN_COLORS[n % len(TOKEN_COLORS)]
            for row, values in enumerate(_token_rows(records, k, len(tokens))):
                axes[row, column].plot(x, values, color=color, lw=1.6, marker="o", ms=3.5)
                series.append((axes[row, column], values, token["token"], color))
        side = {"positive": classes[-1], "negative": classes[0], "neutral": "near the prior"}[group]
        axes[0, column].set_title(f"{group} tokens ({side})")
    return series


def _token_rows(records: list[dict[str, Any]], k: int, count: int) -> list[list[float]]:
    """Token ``k``'s polarity, L·α and L·α′ at every evaluation, the attention floored for the log axis
    (α′ is NaN, not drawn, where an evaluation has none)."""
    revised = [(r["polarity"].get("attention_revised") or [np.nan] * count)[k] for r in records]
    return [
        [r["polarity"]["polarity"][k] for r in records],
        [max(r["polarity"]["attention"][k], FLOOR) for r in records],
        [max(v, FLOOR) if v == v else v for v in revised],
    ]


def _label_tracking_rows(axes: np.ndarray, classes: list[str]) -> None:
    """The rows' names, their neutral line (polarity 0, relative attention 1) and the attention rows' log scale."""
    names = {
        0: f"polarity s_t\nlog P({classes[-1]}) − log P({classes[0]})",
        1: "relative attention L·α\n(the network's own)",
        2: "relative attention L·α′\n(revised by the agent)",
    }
    for row in range(3):
        axes[row, 0].set_ylabel(names[row])
        for axis in axes[row]:
            axis.axhline(0 if row == 0 else 1, color="#999", lw=0.8, ls=":")
            if row:
                axis.set_yscale("log")


def _evaluation_axis(axes: np.ndarray, records: list[dict[str, Any]], labels: list[str]) -> None:
    """The shared x axis: a tick per evaluation, the phases shaded, room right of the lines for the tokens' names."""
    # every evaluation has a tick; the first of each phase (and the last evaluation) is named, and the
    # phases are shaded in turn, so that 14 or more evaluations stay legible
    starts = [i for i in range(len(records)) if i == 0 or records[i]["phase"] != records[i - 1]["phase"]]
    named = sorted(set(starts) | {len(records) - 1})
    for axis in axes.ravel():
        for k, start in enumerate(starts):
            if k % 2:
                stop = starts[k + 1] if k + 1 < len(starts) else len(records)
                axis.axvspan(start - 0.5, stop - 0.5, color="#f0f0f0", zorder=0, lw=0)
    for axis in axes[-1]:
        axis.set_xticks(np.arange(len(records)), minor=True)
        axis.set_xticks(named, [labels[i] for i in named], rotation=90)
        axis.set_xlabel("evaluation (a tick each)")
    axes[0, 0].set_xlim(-0.5, len(records) - 1 + 0.5 * len(records))


def _name_line_ends(figure: Any, axes: np.ndarray, series: list[_Series], text_x: float) -> None:
    """Each line's token named at its last drawn point, the names at x = ``text_x``."""
    # names spread so that they never overlap: one line of type apart, in axes fractions of the panel
    # heights the layout gives, hence drawn (without rendering) first
    figure.draw_without_rendering()
    for axis in axes.ravel():
        gap = 1.4 * FONT_SIZE / 72 * DPI / axis.get_window_extent().height
        ends = [(drawn, t, c) for a, v, t, c in series if a is axis if (drawn := _last_drawn(v)) is not None]
        if not ends:
            continue
        axis.get_xlim(), axis.get_ylim()  # settles the shared, autoscaled limits the transform reads
        to_axes = axis.transScale + axis.transLimits
        heights = [float(to_axes.transform((xi, yi))[1]) for (xi, yi), _, _ in ends]
        for ((xi, yi), token, color), place in zip(ends, spread(heights, gap, 0.03, 0.97)):
            axis.annotate(f"'{token}'", xy=(xi, yi), xytext=(text_x, place), textcoords=("data", "axes fraction"),
                          va="center", color=color, fontsize=FONT_SIZE,
                          arrowprops={"arrowstyle": "-", "color": color, "lw": 0.6, "shrinkA": 0, "shrinkB": 3})


def _last_drawn(values: list[float]) -> tuple[int, float] | None:
    """(index, value) of the last value that is not NaN, or None."""
    return next(((len(values) - 1 - i, w) for i, w in enumerate(reversed(values)) if w == w), None)


def drop_overlapping_labels(figure, axes) -> None:
    """Remove each text label that would overlap one placed before it (a more extreme token, named first)."""
    figure.draw_without_rendering()
    for axis in axes:
        kept: list[Bbox] = []
        for text in list(axis.texts):
            box = text.get_window_extent()
            if any(box.overlaps(other) for other in kept):
                text.remove()
            else:
                kept.append(box)
