"""Attention vs saliency (after Jain & Wallace 2019): does attention rank tokens like the
measures of what the output actually depends on?

Per sentence, in each mode (net-only: the network with its own α; with-agent: the network
with the revised α′, the agent's action held fixed):

- gradient saliency g_t = |∂ log P(ŷ|X)/∂e_t · e_t| (gradient × input on the word vector
  e_t), ŷ the mode's own prediction (``target="predicted"``) or the gold label (``"gold"``);
- leave-one-out importance o_t = TVD(P(·|X), P(·|X without token t)): the sentence is re-run
  without the token (in with-agent mode the agent acts on the shortened sentence too);
- Kendall τ-b of the attention (α or α′, ``SQUASH_RULE``) against g and against o, and of g
  against o (how much the two saliency measures agree with each other, for scale).

Documents (HAN): the tokens are all the document's words; e_t is each word's vector, the
attention that ranks them is ω_st = γ_s·α_st (``DOCUMENT_RULE``), and leave-one-out re-runs
the document without the word (a sentence left empty is dropped). Aspect networks: the
tokens are the sentence's; the aspect term's own vectors are not scored.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from drga.analysis.attention import (
    AnalysisError,
    eval_mode,
    kept_tokens,
    length_sorted_chunks,
    mode_output,
    model_device,
    real_tokens,
    token_sites,
    token_weights,
)
from drga.analysis.plots import DOC_WIDTH, ORIGINAL_COLOR, REVISED_COLOR, new_figure, save_png, styled
from drga.analysis.stats import kendall_tau, total_variation
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.policy import StatePolicy
from drga.data import EncodedExample, collate
from drga.files import open_atomic, write_text_atomic
from drga.names import MODES, Mode


def word_embedding(network: AttentionNetwork) -> nn.Embedding:
    """The network's word-embedding table: its own (``network.word_embedding()``), else its first ``nn.Embedding``."""
    found = network.word_embedding()
    if found is not None:
        return found
    for module in network.modules():
        if isinstance(module, nn.Embedding):
            return module
    raise AnalysisError(f"network '{network.net_name}' has no nn.Embedding; gradient saliency needs word vectors")


def _output(
    network: AttentionNetwork, batch: Batch, mode: str, policy: StatePolicy | None, beta, site: str | None = None
) -> tuple[Tensor, Tensor, Any]:
    """(output, per-token attention [B, T] (documents: ω [B, S, T]), encoding) of one mode."""
    attention, output, encoding = mode_output(network, batch, mode, policy, beta)
    return output, token_weights(attention, encoding, batch, token_sites(encoding, batch, site)), encoding


def gradient_saliency(
    network: AttentionNetwork,
    batch: Batch,
    mode: str,
    policy: StatePolicy | None = None,
    beta=None,
    target: str = "predicted",
    site: str | None = None,
) -> tuple[Tensor, Tensor]:
    """(saliency |∂ log P(y|X)/∂e_t · e_t| [B, T], per-token attention [B, T]) of one mode.

    Documents: both [B, S, T] (the attention is ω = γ·α). The word vectors are taken from the
    embedding's output by a forward hook and made a leaf that requires grad, so frozen
    embeddings work too; only that gradient is computed. The hook keeps the lookup of the
    batch's tokens, not of other ids (an aspect term's) the network embeds with the same table.
    """
    captured: list[tuple[bool, Tensor]] = []  # (looked up exactly the batch's tokens, word vectors)

    def hook(_module: nn.Module, inputs: Any, output: Tensor) -> Tensor:
        leaf = output.detach().requires_grad_(True)
        ids = inputs[0] if inputs else None
        exact = isinstance(ids, Tensor) and tuple(ids.shape) == tuple(batch.tokens.shape) and torch.equal(ids, batch.tokens)
        captured.append((exact, leaf))
        return leaf

    handle = word_embedding(network).register_forward_hook(hook)
    try:
        # cuDNN cannot run an RNN backward in eval mode; the saliency is defined in eval mode.
        with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
            output, attention, _ = _output(network, batch, mode, policy, beta, site)
            labels = output.argmax(dim=-1) if target == "predicted" else batch.labels
            log_likelihood = network.log_likelihood(output, labels).sum()
            shape = tuple(batch.tokens.shape)
            words = next((c for exact, c in captured if exact), None)
            if words is None:  # a network that embeds edited ids: the first lookup of the tokens' shape
                words = next((c for _, c in captured if tuple(c.shape[: len(shape)]) == shape), None)
            if words is None:
                raise AnalysisError(f"could not find the word vectors of network '{network.net_name}' for the saliency")
            (gradient,) = torch.autograd.grad(log_likelihood, words)
    finally:
        handle.remove()
    saliency = (gradient * words.detach()).sum(dim=-1).abs() * batch.mask
    return saliency.detach(), attention.detach()


def without_token(example: EncodedExample, t: int) -> EncodedExample:
    """The example with its t-th token removed (:func:`~drga.analysis.attention.kept_tokens`: a
    document's sentence left empty is dropped, an aspect's span moves with the tokens)."""
    return kept_tokens(example, [position != t for position in range(len(example.ids))])


@torch.no_grad()
def leave_one_out(
    network: AttentionNetwork,
    example: EncodedExample,
    mode: str,
    policy: StatePolicy | None = None,
    beta=None,
    batch_size: int = 256,
) -> np.ndarray:
    """TVD between the output on the sentence and on the sentence without token t, for every t."""
    device = model_device(network)
    variants = [example] + [without_token(example, t) for t in range(len(example.ids))]
    chunks = []
    for start in range(0, len(variants), batch_size):
        batch = collate(variants[start : start + batch_size]).to(device)
        output, _, _ = _output(network, batch, mode, policy, beta)
        chunks.append(torch.softmax(output, dim=-1).double().cpu().numpy())
    probs = np.concatenate(chunks)
    return total_variation(probs[:1], probs[1:])


def saliency_rows(
    network: AttentionNetwork,
    examples: Sequence[EncodedExample],
    indices: Sequence[int],
    policy: StatePolicy | None,
    beta,
    target: str = "predicted",
    site: str | None = None,
    batch_size: int = 64,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """One row per (sentence of ≥ 3 tokens, mode): τ(attention, gradient), τ(attention, LOO), τ(gradient, LOO)."""
    if target not in ("predicted", "gold"):
        raise ValueError(f"target must be 'predicted' or 'gold', got {target!r}")
    device = model_device(network)
    modes = MODES if policy is not None else MODES[:1]
    chosen = [(i, examples[i]) for i in indices if len(examples[i].ids) >= 3]
    rows = []
    with eval_mode(network, policy):
        bar = tqdm(total=len(chosen) * len(modes), desc="saliency", leave=False, disable=not progress)
        for mode in modes:
            for chunk in length_sorted_chunks([e for _, e in chosen], batch_size):
                batch = collate([chosen[k][1] for k in chunk]).to(device)
                saliency, attention = gradient_saliency(network, batch, mode, policy, beta, target, site)
                for row, k in enumerate(chunk):
                    index, example = chosen[k]
                    length = len(example.ids)
                    grad = real_tokens(saliency[row], batch.mask[row]).double().cpu().numpy()
                    weights = real_tokens(attention[row], batch.mask[row]).double().cpu().numpy()
                    loo = leave_one_out(network, example, mode, policy, beta)
                    rows.append({
                        "mode": mode, "index": index, "length": length,
                        "tau_attention_gradient": kendall_tau(weights, grad),
                        "tau_attention_loo": kendall_tau(weights, loo),
                        "tau_gradient_loo": kendall_tau(grad, loo),
                        "top_attention_is_top_gradient": bool(weights.argmax() == grad.argmax()),
                        "top_attention_is_top_loo": bool(weights.argmax() == loo.argmax()),
                    })
                    bar.update()
        bar.close()
    return sorted(rows, key=lambda r: (MODES.index(r["mode"]), r["index"]))


PAIRS = (
    ("tau_attention_gradient", "τ(attention, gradient)"),
    ("tau_attention_loo", "τ(attention, leave-one-out)"),
    ("tau_gradient_loo", "τ(gradient, leave-one-out)"),
)


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per mode: mean, median and share > 0 of each τ (NaN τ of constant rankings left out)."""
    summary: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        entry: dict[str, Any] = {"sentences": len(mine)}
        for key, _ in PAIRS:
            values = np.array([r[key] for r in mine], dtype=np.float64)
            values = values[np.isfinite(values)]
            entry[key] = {
                "mean": float(values.mean()) if len(values) else float("nan"),
                "std": float(values.std(ddof=1)) if len(values) > 1 else float("nan"),
                "median": float(np.median(values)) if len(values) else float("nan"),
                "share_positive": float((values > 0).mean()) if len(values) else float("nan"),
                "n": int(len(values)),
            }
        entry["top_agreement_gradient"] = float(np.mean([r["top_attention_is_top_gradient"] for r in mine]))
        entry["top_agreement_loo"] = float(np.mean([r["top_attention_is_top_loo"] for r in mine]))
        summary[mode] = entry
    return summary


def markdown(summary: dict[str, dict[str, Any]], dataset: str, unit: str = "sentences") -> str:
    """Mean ± std (median) of each τ per mode, and how often the top-attention token is the top-saliency one."""
    lines = [
        f"| {dataset} | {unit} | " + " | ".join(name for _, name in PAIRS) + " | top-α token = top-gradient / top-LOO token |",
        "|---|---|" + "---|" * len(PAIRS) + "---|",
    ]
    for mode, s in summary.items():
        cells = [f"{s[key]['mean']:+.3f} ± {s[key]['std']:.3f} (median {s[key]['median']:+.3f})" for key, _ in PAIRS]
        attention = "α" if mode == Mode.NET_ONLY else "α′"
        lines.append(
            f"| {mode} ({attention}) | {s['sentences']} | " + " | ".join(cells)
            + f" | {100 * s['top_agreement_gradient']:.1f}% / {100 * s['top_agreement_loo']:.1f}% |"
        )
    return "\n".join(lines)


def write_saliency(rows: Sequence[dict[str, Any]], out: Path, dataset: str, unit: str = "sentences") -> dict[str, Any]:
    """saliency.csv (per sentence and mode), saliency.md and saliency.png (τ distributions)."""
    out.mkdir(parents=True, exist_ok=True)
    with open_atomic(out / "saliency.csv", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in r.items()} for r in rows)  # 4 digits: small files
    summary = summarize(rows)
    table = markdown(summary, dataset, unit)
    write_text_atomic(out / "saliency.md", table + "\n")
    save_png(box_figure(rows, dataset), out / "saliency.png")
    return {"summary": summary, "markdown": table}


@styled
def box_figure(rows: Sequence[dict[str, Any]], dataset: str):
    """Box plots of the per-sentence Kendall τ-b: attention vs each saliency, and the two saliencies, per mode."""
    figure = new_figure(DOC_WIDTH - 1.0, 4.6, layout="constrained")
    axis = figure.subplots()
    data, labels, colors = [], [], []
    for mode, color in zip(MODES, (ORIGINAL_COLOR, REVISED_COLOR)):
        for key, name in PAIRS:
            values = np.array([r[key] for r in rows if r["mode"] == mode], dtype=np.float64)
            if len(values):
                data.append(values[np.isfinite(values)])
                pair = name.replace("attention", "α′" if mode == Mode.WITH_AGENT else "α").replace(", ", ",\n")
                labels.append(f"{mode}\n{pair}")
                colors.append(color)
    parts = axis.boxplot(data, patch_artist=True, widths=0.6, showfliers=False)
    for patch, color in zip(parts["boxes"], colors):
        patch.set_facecolor(color)
        patch.set_alpha(0.55)
    for median in parts["medians"]:
        median.set_color("black")
    axis.set_xticks(range(1, len(labels) + 1), labels)
    axis.axhline(0, color="#999", lw=0.8)
    axis.set_ylabel("Kendall τ-b per sentence")
    axis.set_title(f"{dataset}: attention vs gradient and leave-one-out saliency")
    return figure
