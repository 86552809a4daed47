"""Faithfulness of attention as an explanation: ERASER's comprehensiveness and sufficiency
(DeYoung et al. 2020) against a random and an integrated-gradients ranking, and the rank agreement
of attention with integrated gradients and leave-one-out (Jain & Wallace 2019).

Per sentence x of L ≥ 2 tokens, in each mode (net-only: the network with its own α; with-agent:
the network with the agent's revision α*, its deterministic action, as evaluation runs it), ŷ the
mode's prediction on x and p(ŷ|·) the mode's probability of ŷ:

- a *ranking* orders the L tokens by a score, highest first, ties broken by position (earlier
  first). Scores: ``attention`` (the mode's α or α*, one weight per token by ``SQUASH_RULE``:
  networks with several arrays average them; documents rank all their words by ω = γ·α,
  ``DOCUMENT_RULE``), ``random`` (uniform draws seeded by (seed, the sentence's position in the
  split): the same in both modes and on every run; with ``random_draws`` D > 1, D such rankings per
  sentence, the first of them that one, and every random number is the mean over the D),
  ``integrated_gradients`` (see below);
- the rationale r_k is the first n_k = max(1, ⌊k·L/100⌋) tokens of a ranking, k ∈ :data:`BINS` (%);
- comprehensiveness_k = p(ŷ|x) − p(ŷ|x ∖ r_k) (the rationale removed; high = the rationale mattered);
- sufficiency_k = p(ŷ|x) − p(ŷ|r_k) (only the rationale kept; low = it suffices);
- AOPC = the mean over the bins of comprehensiveness_k (resp. sufficiency_k);
- integrated gradients (captum's ``IntegratedGradients``) of p(ŷ|x) with respect to the word
  vectors e_t, from the zero vector: IG_t = Σ_d e_td · ∫₀¹ ∂p(ŷ|a·e)/∂e_td da, signed (positive =
  evidence for ŷ); completeness: Σ_t IG_t = p(ŷ|e) − p(ŷ|0), up to the quadrature's error;
- leave-one-out o_t = p(ŷ|x) − p(ŷ|x ∖ {t});
- τ: Kendall τ-b (scipy) per sentence of attention vs IG, attention vs LOO and IG vs LOO.

Removing tokens deletes them from the sequence (ERASER's definition): the network re-encodes
the shorter sentence, its attention spreads over the kept tokens only, and in with-agent mode the
agent revises the attention of the shortened input too. Nothing is masked or zeroed in place.
A document loses a sentence all of whose words are removed; an aspect's span moves with the
tokens (its aspect term, a separate input, is kept). Networks reading subwords with special
tokens (hf-encoder) rank their text subwords; [CLS]/[SEP] are never ranked nor removed.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from drga.analysis.attention import (
    AnalysisError,
    TextMasking,
    eval_mode,
    kept_tokens,
    length_sorted_chunks,
    mode_output,
    model_device,
    real_tokens,
    text_view,
    token_sites,
    token_weights,
)
from drga.analysis.extra import needs_extra
from drga.analysis.saliency import word_embedding
from drga.analysis.stats import Values, kendall_tau
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.policy import StatePolicy
from drga.data import EncodedExample, collate
from drga.files import open_atomic, write_text_atomic
from drga.names import MODES, Mode

#: The rationale sizes k, in % of the sentence's tokens (ERASER's bins).
BINS = (1, 5, 10, 20, 50)
#: The rankings whose rationales are scored: the attention and its two references.
RANKINGS = ("attention", "random", "integrated_gradients")
#: The per-sentence rank agreements (Kendall τ-b): key → (first, second) score.
TAUS = {
    "tau_attention_ig": ("attention", "integrated_gradients"),
    "tau_attention_loo": ("attention", "leave_one_out"),
    "tau_ig_loo": ("integrated_gradients", "leave_one_out"),
}
#: How tokens are removed, stated in every report.
REMOVAL_RULE = (
    "removed tokens are deleted from the sequence and the network re-encodes the shorter one (ERASER's definition); "
    "in with-agent mode the agent revises the shortened input's attention too"
)


def rationale_size(length: int, percent: float) -> int:
    """n_k = max(1, ⌊k·L/100⌋): the tokens of a top-k % rationale of a sentence of L tokens."""
    return max(1, math.floor(percent * length / 100 + 1e-9))  # 1e-9: 10·30/100 is 3, not 2.9999…


def ranking(scores: Values) -> np.ndarray:
    """Token positions by descending score; equal scores keep their order (the earlier token first)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def random_scores(seed: int, index: int, length: int, draw: int = 0) -> np.ndarray:
    """Uniform scores of the random ranking, seeded by (seed, the sentence's position ``index``); draw d > 0 of a
    sentence by (seed, index, d), so the first draw is the one a single-draw analysis makes."""
    return np.random.default_rng([seed, index] if draw == 0 else [seed, index, draw]).random(length)


@dataclass
class SentenceFaithfulness:
    """The measures of one sentence in one mode (lists over the sentence's L ranked tokens or over :data:`BINS`)."""

    mode: str
    index: int  #: position in the analysed split
    length: int  #: L, the tokens ranked
    predicted: int  #: ŷ, the mode's prediction on the whole sentence
    probability: float  #: p(ŷ|x)
    comprehensiveness: dict[str, list[float]]  #: ranking → comprehensiveness_k per bin
    sufficiency: dict[str, list[float]]  #: ranking → sufficiency_k per bin
    scores: dict[str, list[float]]  #: attention, integrated_gradients, leave_one_out, random: one per token
    tau_attention_ig: float
    tau_attention_loo: float
    tau_ig_loo: float
    #: measure → the random ranking's AOPC of each of its draws (the ``random`` lists above are their mean per bin)
    random_draws: dict[str, list[float]] | None = None

    def aopc(self, measure: str, name: str) -> float:
        """The mean of ``measure`` ('comprehensiveness' or 'sufficiency') of ranking ``name`` over the bins."""
        return float(np.mean(getattr(self, measure)[name]))


@torch.no_grad()
def probabilities(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    mode: str,
    policy: StatePolicy | None = None,
    beta: Tensor | float | None = None,
    batch_size: int = 256,
) -> np.ndarray:
    """P(·|x) [N, C] of each example in one mode (with-agent: the agent revises each example's attention)."""
    device = model_device(network)
    result: dict[int, np.ndarray] = {}
    for chunk in length_sorted_chunks(examples, batch_size):
        _, output, _ = mode_output(network, collate([examples[i] for i in chunk]).to(device), mode, policy, beta)
        for row, probs in zip(chunk, torch.softmax(output, dim=-1).double().cpu().numpy()):
            result[row] = probs
    return np.stack([result[row] for row in range(len(examples))])


@contextmanager
def _word_vectors(embedding: nn.Module, batch: Batch, vectors: Tensor) -> Iterator[None]:
    """Inside the block, a lookup of the batch's tokens in ``embedding`` returns ``vectors`` instead.

    A lookup matches when it reads as many ids as the batch has tokens, equal on the real tokens
    (a network may reshape them, or pad with its own id); other lookups in the same table (an
    aspect term's) are left alone.
    """
    matched = []

    def hook(_module: nn.Module, inputs: Any, output: Tensor) -> Tensor | None:
        ids = inputs[0] if inputs else None
        if isinstance(ids, Tensor) and ids.numel() == batch.tokens.numel():
            if torch.equal(ids.reshape(batch.tokens.shape)[batch.mask], batch.tokens[batch.mask]):
                matched.append(True)
                return vectors.reshape(output.shape)
        return None

    handle = embedding.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()
    if not matched:
        raise AnalysisError("could not find the network's lookup of the word vectors for integrated gradients")


def integrated_gradients(
    network: AttentionNetwork,
    batch: Batch,
    mode: str,
    targets: Tensor,
    policy: StatePolicy | None = None,
    beta: Tensor | float | None = None,
    steps: int = 50,
    internal_batch_size: int | None = None,
) -> Tensor:
    """IG_t = Σ_d e_td · ∫₀¹ ∂p(y_b|a·e)/∂e_td da per token, [B, T] (documents [B, S, T]), zero on padding.

    captum's ``IntegratedGradients`` (Gauss–Legendre, ``steps`` points) from the zero vector to the
    word vectors e of network's embedding table, y_b = ``targets[b]``; the output is the
    probability, so Σ_t IG_t ≈ p(y|e) − p(y|0) (completeness). With-agent mode: the path runs
    through the agent's revision too. The word vectors are replaced inside the forward pass (by a
    hook), so frozen embeddings work as well.
    """
    # imported when first used (drga --help stays fast), from the analysis extra
    IntegratedGradients = needs_extra("captum.attr", "integrated gradients (drga analyze's faithfulness measures)").IntegratedGradients

    embedding = word_embedding(network)
    with torch.no_grad():
        vectors = embedding(batch.tokens)
    keys = sorted(batch.extras)

    def forward(words: Tensor, tokens: Tensor, mask: Tensor, labels: Tensor, *extras: Tensor) -> Tensor:
        steps_batch = Batch(tokens, mask, labels, dict(zip(keys, extras)))
        with _word_vectors(embedding, steps_batch, words):
            _, output, _ = mode_output(network, steps_batch, mode, policy, beta)
        return torch.softmax(output, dim=-1)

    # cuDNN cannot run an RNN backward in eval mode; the attributions are defined in eval mode.
    with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
        attributions = IntegratedGradients(forward).attribute(
            vectors,
            baselines=torch.zeros_like(vectors),
            target=targets,
            additional_forward_args=(batch.tokens, batch.mask, batch.labels, *(batch.extras[k] for k in keys)),
            n_steps=steps,
            internal_batch_size=internal_batch_size,
        )
    return attributions.sum(dim=-1).detach() * batch.mask


def _removal_sets(scores: dict[str, np.ndarray], length: int, names: Sequence[str] = RANKINGS
                  ) -> list[tuple[str, int, frozenset[int], frozenset[int]]]:
    """(ranking, bin, tokens removed for comprehensiveness, tokens removed for sufficiency) of every rationale
    of the rankings ``names`` (keys of ``scores``)."""
    everything = frozenset(range(length))
    sets = []
    for name in names:
        order = ranking(scores[name])
        for k in BINS:
            rationale = frozenset(order[: rationale_size(length, k)].tolist())
            sets.append((name, k, rationale, everything - rationale))
    return sets


def _chunk_rows(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    indices: Sequence[int],
    mode: str,
    policy: StatePolicy | None,
    beta: Tensor | float | None,
    seed: int,
    site: str | None,
    steps: int,
    random_draws: int = 1,
) -> list[SentenceFaithfulness]:
    """The measures of a batch of sentences in one mode (one run of the network per distinct shortened input)."""
    batch = collate(list(examples)).to(model_device(network))
    with torch.no_grad():
        attention, output, encoding = mode_output(network, batch, mode, policy, beta)
        text = text_view(network, batch)
        weights = token_weights(attention, encoding, text, token_sites(encoding, text, site))
        probs = torch.softmax(output, dim=-1).double().cpu().numpy()
    predicted = output.argmax(dim=-1)
    ig = integrated_gradients(network, batch, mode, predicted, policy, beta, steps)
    sentences = []  # per sentence: (text positions among its ids, token scores)
    for row, index in enumerate(indices):
        positions = np.flatnonzero(real_tokens(text.mask[row], batch.mask[row]).cpu().numpy())
        length = len(positions)
        scores = {
            "attention": real_tokens(weights[row], text.mask[row]).double().cpu().numpy(),
            "integrated_gradients": real_tokens(ig[row], text.mask[row]).double().cpu().numpy(),
            "random": random_scores(seed, index, length),
        }
        draws = {f"random:{d}": random_scores(seed, index, length, d) for d in range(1, random_draws)}
        sentences.append((positions, scores, draws))
    # every distinct input to run: (sentence, text tokens removed); leave-one-out and the rationales share them
    variants: dict[tuple[int, frozenset[int]], int] = {}
    for row, (positions, scores, draws) in enumerate(sentences):
        removals = [frozenset([t]) for t in range(len(positions))]
        removals += [removed for *_, comp, suff in _removal_sets(scores, len(positions)) for removed in (comp, suff)]
        removals += [removed for *_, comp, suff in _removal_sets(draws, len(positions), list(draws)) for removed in (comp, suff)]
        for removed in removals:
            variants.setdefault((row, removed), len(variants))
    shortened = []
    for row, removed in variants:
        positions = sentences[row][0]
        keep = [True] * len(examples[row].ids)
        for t in removed:
            keep[positions[t]] = False
        shortened.append(kept_tokens(examples[row], keep))
    variant_probs = probabilities(network, shortened, mode, policy, beta)
    rows = []
    for row, (index, (positions, scores, draws)) in enumerate(zip(indices, sentences)):
        y = int(predicted[row])
        p = float(probs[row, y])
        drop = lambda removed, row=row, y=y, p=p: p - float(variant_probs[variants[(row, removed)], y])
        scores["leave_one_out"] = np.array([drop(frozenset([t])) for t in range(len(positions))])
        comprehensiveness: dict[str, list[float]] = {name: [] for name in RANKINGS}
        sufficiency: dict[str, list[float]] = {name: [] for name in RANKINGS}
        for name, _, comp, suff in _removal_sets(scores, len(positions)):
            comprehensiveness[name].append(drop(comp))
            sufficiency[name].append(drop(suff))
        per_draw = None
        if draws:  # the random ranking over its draws: each draw's curves, then their mean per bin
            curves = {"comprehensiveness": [comprehensiveness["random"]], "sufficiency": [sufficiency["random"]]}
            for name in draws:
                sets = _removal_sets(draws, len(positions), [name])
                curves["comprehensiveness"].append([drop(comp) for *_, comp, _ in sets])
                curves["sufficiency"].append([drop(suff) for *_, suff in sets])
            comprehensiveness["random"] = np.mean(curves["comprehensiveness"], axis=0).tolist()
            sufficiency["random"] = np.mean(curves["sufficiency"], axis=0).tolist()
            per_draw = {measure: [float(np.mean(curve)) for curve in found] for measure, found in curves.items()}
        taus = {key: kendall_tau(scores[a], scores[b]) for key, (a, b) in TAUS.items()}
        rows.append(SentenceFaithfulness(
            mode=mode, index=int(index), length=len(positions), predicted=y, probability=p,
            comprehensiveness=comprehensiveness, sufficiency=sufficiency,
            scores={name: values.tolist() for name, values in scores.items()}, **taus, random_draws=per_draw,
        ))
    return rows


def faithfulness_rows(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    indices: Sequence[int],
    policy: StatePolicy | None,
    beta: Tensor | float | None,
    seed: int = 0,
    site: str | None = None,
    steps: int = 50,
    batch_size: int = 16,
    progress: bool = False,
    modes: Sequence[str] | None = None,
    random_draws: int = 1,
) -> list[SentenceFaithfulness]:
    """The measures of the sentences at ``indices`` (those with ≥ 2 ranked tokens) in each mode.

    ``modes`` default to both with a policy (and β) and to net-only without one (a baseline's
    checkpoint); with-agent mode needs the policy. ``batch_size`` sentences share one
    integrated-gradients pass of ``batch_size · steps`` inputs. ``random_draws``: random rankings per
    sentence (the first is the single-draw analysis's); the random numbers are their mean.
    """
    if policy is not None and beta is None:
        raise ValueError("with-agent mode needs β as well as the policy")
    if random_draws < 1:
        raise AnalysisError(f"the random ranking needs at least one draw per sentence, got {random_draws}")
    if steps < 1:
        raise AnalysisError(f"integrated gradients need at least one step, got {steps}")
    modes = tuple(modes) if modes is not None else MODES if policy is not None else MODES[:1]
    if not set(modes) <= set(MODES) or (Mode.WITH_AGENT in modes and policy is None):
        raise ValueError(f"modes must be among {', '.join(MODES)} (with-agent only with a policy), got {modes}")
    network_text = lambda example: len(example.ids) - _special_tokens(network, example)
    chosen = [i for i in indices if network_text(examples[i]) >= 2]
    rows: list[SentenceFaithfulness] = []
    with eval_mode(network, policy):
        bar = tqdm(total=len(chosen) * len(modes), desc="faithfulness", leave=False, disable=not progress)
        for mode in modes:
            for chunk in length_sorted_chunks([examples[i] for i in chosen], batch_size):
                picked = [chosen[k] for k in chunk]
                rows += _chunk_rows(network, [examples[i] for i in picked], picked, mode, policy, beta, seed, site, steps,
                                    random_draws)
                bar.update(len(chunk))
        bar.close()
    return sorted(rows, key=lambda r: (MODES.index(r.mode), r.index))


def _special_tokens(network: AttentionNetwork, example: EncodedExample) -> int:
    """How many of the example's ids are special tokens the network's attention leaves out ([CLS], [SEP])."""
    if not isinstance(network, TextMasking):
        return 0
    ids = torch.tensor([example.ids], device=model_device(network))
    return int((~network.text_mask(ids, torch.ones_like(ids, dtype=torch.bool))).sum())


def _finite(value: Any) -> Any:
    """JSON has no NaN: an undefined τ (a constant ranking) is written as null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _spread(values: Sequence[float]) -> dict[str, float | int]:
    """Mean, sample std, median, share > 0 and count of the finite values (NaN τ of constant scores left out)."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    n = len(finite)
    return {
        "mean": float(finite.mean()) if n else float("nan"),
        "std": float(finite.std(ddof=1)) if n > 1 else float("nan"),
        "median": float(np.median(finite)) if n else float("nan"),
        "share_positive": float((finite > 0).mean()) if n else float("nan"),
        "n": n,
    }


def summarize(rows: Sequence[SentenceFaithfulness]) -> dict[str, dict[str, Any]]:
    """Per mode: sentences, mean p(ŷ|x), the mean comprehensiveness and sufficiency per ranking and bin
    (keys '1' … '50' and 'aopc'), the spread of each τ, the random ranking's draws per sentence and, with
    more than one, its AOPC per draw (``random_by_draw``)."""
    summary: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        mine = [r for r in rows if r.mode == mode]
        if not mine:
            continue
        entry: dict[str, Any] = {"sentences": len(mine), "mean_probability": float(np.mean([r.probability for r in mine]))}
        for measure in ("comprehensiveness", "sufficiency"):
            entry[measure] = {}
            for name in RANKINGS:
                values = np.array([getattr(r, measure)[name] for r in mine])  # [sentences, bins]
                entry[measure][name] = {str(k): float(v) for k, v in zip(BINS, values.mean(axis=0))}
                entry[measure][name]["aopc"] = float(values.mean())
        for key in TAUS:
            entry[key] = _spread([getattr(r, key) for r in mine])
        draws = [r.random_draws for r in mine if r.random_draws]
        entry["random_draws"] = len(draws[0]["comprehensiveness"]) if draws else 1
        if draws:  # the random ranking's AOPC per draw, each the mean over the sentences: its spread over draws
            entry["random_by_draw"] = {measure: np.mean([d[measure] for d in draws], axis=0).tolist()
                                       for measure in ("comprehensiveness", "sufficiency")}
        summary[mode] = entry
    return summary


#: A mode (its :class:`Mode` or plain string, as a summary read from JSON has it) → its name in the tables.
ATTENTION_NAMES: dict[str, str] = {Mode.NET_ONLY: "net-only (α)", Mode.WITH_AGENT: "with-agent (α*)"}
RANKING_NAMES = {"attention": "attention", "random": "random", "integrated_gradients": "integrated gradients"}


def markdown(summary: dict[str, dict[str, Any]]) -> str:
    """Two tables: comprehensiveness and sufficiency (AOPC and per bin) per mode and ranking; the τ per mode."""
    bins = " / ".join(f"{k}" for k in BINS)
    lines = [
        f"| attention | ranking | comprehensiveness AOPC ↑ | sufficiency AOPC ↓ | comprehensiveness at k = {bins} % | "
        f"sufficiency at k = {bins} % |",
        "|---|---|---|---|---|---|",
    ]
    for mode, s in summary.items():
        for name in RANKINGS:
            comp, suff = s["comprehensiveness"][name], s["sufficiency"][name]
            per_bin = lambda values: " / ".join(f"{values[str(k)]:.3f}" for k in BINS)
            lines.append(
                f"| {ATTENTION_NAMES[mode]} | {RANKING_NAMES[name]} | {comp['aopc']:.3f} | {suff['aopc']:.3f} | "
                f"{per_bin(comp)} | {per_bin(suff)} |"
            )
    lines += [
        "",
        "| attention | sentences | mean p(ŷ\\|x) | τ(attention, IG) | τ(attention, LOO) | τ(IG, LOO) |",
        "|---|---|---|---|---|---|",
    ]
    for mode, s in summary.items():
        cells = [f"{s[key]['mean']:+.3f} ± {s[key]['std']:.3f} (median {s[key]['median']:+.3f})" for key in TAUS]
        lines.append(f"| {ATTENTION_NAMES[mode]} | {s['sentences']} | {s['mean_probability']:.3f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_faithfulness(rows: Sequence[SentenceFaithfulness], out: Path) -> dict[str, Any]:
    """faithfulness.csv (per sentence and mode: AOPCs and τ), faithfulness.jsonl (every measure per
    sentence, the token scores included) and faithfulness.md (the tables); returns the summary and tables."""
    if not rows:
        raise AnalysisError("no sentence of at least 2 tokens to measure the faithfulness on")
    out.mkdir(parents=True, exist_ok=True)
    with open_atomic(out / "faithfulness.jsonl") as handle:
        for row in rows:
            handle.write(json.dumps({k: _finite(v) for k, v in asdict(row).items()}) + "\n")
    columns = ["mode", "index", "length", "predicted", "probability"]
    columns += [f"{m}_aopc_{name}" for m in ("comprehensiveness", "sufficiency") for name in RANKINGS] + list(TAUS)
    with open_atomic(out / "faithfulness.csv", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for r in rows:
            aopcs = [r.aopc(m, name) for m in ("comprehensiveness", "sufficiency") for name in RANKINGS]
            values = [r.mode, r.index, r.length, r.predicted, r.probability, *aopcs, *(getattr(r, key) for key in TAUS)]
            writer.writerow([f"{v:.4g}" if isinstance(v, float) else v for v in values])  # 4 digits: small files
    summary = summarize(rows)
    table = markdown(summary)
    write_text_atomic(out / "faithfulness.md", table + "\n")
    return {"summary": summary, "markdown": table}
