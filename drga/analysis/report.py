"""``drga analyze``: every analysis on one checkpoint, written to one folder with a summary.

Outputs (in ``--out``):

==========================  ===================================================================
attention_maps.html/.png    Table VI: original vs revised attention of chosen sentences
transitions.md/.png         Table VII: tracked dev sentences over training (needs tracking)
highlighted.md/.csv/.png    Table VIII: highlighted tokens N before and after the agent
modified_words.csv/.png     Fig. 4: the words whose attention the agent raised / lowered most
explainability.md/.csv/.png eq. 13, Fig. 5: ΔJS vs Δα when removing the top vs a random token
saliency.md/.csv/.png       Kendall τ of attention vs gradient and leave-one-out saliency
polarity_snapshot.csv/.png  polarity vs attention scores of frequent tokens (Sun & Lu 2020)
polarity_tracking.csv/.png  the same for 12 followed tokens over training (needs tracking)
summary.md, summary.json    every table and number above, with the command that made them
==========================  ===================================================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from drga.analysis.attention import DOCUMENT_RULE, SQUASH_RULE, AnalysisError, compute_records, load_inputs

#: Why the polarity analysis does not apply to document networks (said in the report).
POLARITY_DOCUMENTS = (
    "token polarity skipped: it scores a token by the output when all attention is on it, and in a document "
    "network (HAN) the sentence encoder still mixes in every other sentence, so no attention setting isolates one word"
)

ALL = ("maps", "transitions", "highlighted", "modified-words", "explainability", "saliency", "polarity")


@dataclass
class AnalyzeOptions:
    """What ``drga analyze`` was asked for (its flags)."""

    out: str
    split: str = "test"
    only: list[str] = field(default_factory=lambda: list(ALL))
    examples: list[int] | None = None
    num_examples: int = 8
    seed: int = 0
    top_k: int = 15
    min_count: int = 10
    saliency_examples: int = 300
    site: str | None = None
    reference: str | None = None
    progress: bool = False
    command: str | None = None


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def run_analyses(
    checkpoint: str,
    options: AnalyzeOptions,
    dataset: str | None = None,
    data_dir: str | None = None,
    tsv: str | None = None,
    device: str = "cpu",
    allow_other_dataset: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the requested analyses; write their files, summary.md and summary.json; return the summary."""
    from drga.analysis import explainability, highlighted, maps, modified_words, polarity, saliency, transitions
    from drga.analysis.tracking import HOW_TO_TRACK, TRACKED_FILE, read_tracked

    unknown = [name for name in options.only if name not in ALL]
    if unknown:
        raise AnalysisError(f"unknown analysis {', '.join(unknown)}; choose from {', '.join(ALL)}")
    explicit = set(options.only) != set(ALL)
    inputs = load_inputs(checkpoint, dataset, options.split, data_dir, tsv, device, allow_other_dataset)
    model, out = inputs.model, Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    network, policy, beta, vocab = model.network, model.policy, inputs.beta, model.vocab
    config = model.config
    dataset_name = config.data.dataset
    documents = bool(inputs.examples) and inputs.examples[0].sentences is not None
    unit = "documents" if documents else "sentences"
    log(
        f"analysing {checkpoint}: {network.net_name} from phase '{model.phase}', {dataset_name} {options.split} "
        f"({len(inputs.examples)} {unit}), β = {float(beta):.3f}"
    )
    summary: dict[str, Any] = {
        "checkpoint": str(checkpoint), "network": network.net_name, "phase": model.phase, "dataset": dataset_name,
        "split": options.split, "sentences": len(inputs.examples), "beta": float(beta), "seed": options.seed,
        "command": options.command, "squash_rule": SQUASH_RULE, "notes": [],
    }
    if documents:
        summary["document_rule"] = DOCUMENT_RULE
    sections: list[str] = []

    def note(text: str) -> None:
        summary["notes"].append(text)
        log(f"  note: {text}")

    records = None
    if {"maps", "highlighted", "modified-words"} & set(options.only):
        records = compute_records(network, inputs.examples, vocab, policy, beta, options.site, progress=options.progress)

    if "maps" in options.only:
        chosen = maps.choose_examples(records, options.num_examples, options.seed, chosen=options.examples)
        heading = f"{network.net_name} on {dataset_name} ({options.split}): original vs revised attention"
        files = maps.write_maps(chosen, model.label_names, out, heading)
        summary["maps"] = {"examples": [r.index for r in chosen], **files}
        sections.append(
            f"## Attention maps (Table VI)\n\n{len(chosen)} {options.split} {unit} (positions "
            f"{', '.join(str(r.index) for r in chosen)}): [attention_maps.html](attention_maps.html), "
            "![attention maps](attention_maps.png)"
        )
        log(f"  maps: {files['html']}, {files['png']}")

    tracked = None
    if {"transitions", "polarity"} & set(options.only):
        try:
            tracked = read_tracked(inputs.run_dir)
        except AnalysisError:
            if explicit and "transitions" in options.only:
                raise
            note(f"{inputs.run_dir} has no {TRACKED_FILE}: transitions and polarity over training skipped; {HOW_TO_TRACK}")

    if "transitions" in options.only and tracked is not None:
        result = transitions.write_transitions(tracked, out)
        summary["transitions"] = {k: v for k, v in result.items() if k != "markdown"}
        sections.append(
            f"## Transitions over training (Table VII)\n\n{result['examples']} tracked dev {unit} at the evaluations "
            f"{', '.join(result['evaluations'])}: ![transitions](transitions.png), tables in [transitions.md](transitions.md)"
        )
        log(f"  transitions: {result['examples']} {unit} x {len(result['evaluations'])} evaluations")

    if "highlighted" in options.only:
        reference = reference_name = None
        if options.reference:
            reference, reference_name = _reference_records(options.reference, inputs, options)
        result = highlighted.write_highlighted(records, config.reward.delta, out, reference, reference_name)
        summary["highlighted"] = {k: v for k, v in result.items() if k != "markdown"}
        sections.append(f"## Highlighted tokens (Table VIII)\n\n{result['markdown']}\n\n![highlighted](highlighted.png)")
        log(f"  highlighted: mean N {result['mean_n_original']:.2f} → {result['mean_n_revised']:.2f} ({-100 * result['reduction']:+.1f}%)")

    if "modified-words" in options.only:
        result = modified_words.write_modified_words(records, out, options.top_k, options.min_count)
        summary["modified_words"] = result
        fmt = lambda items: ", ".join(f"{c['token']} ({c['mean_change']:+.4f}, {c['count']})" for c in items)
        sections.append(
            f"## Most-modified words (Fig. 4)\n\n{result['words']} words seen ≥ {options.min_count} times. Raised most: "
            f"{fmt(result['raised'])}.\n\nLowered most: {fmt(result['lowered'])}.\n\n![modified words](modified_words.png)"
        )
        raised, lowered = (", ".join(c["token"] for c in result[side][:5]) for side in ("raised", "lowered"))
        log(f"  modified words: raised {raised}; lowered {lowered}")

    if "explainability" in options.only:
        rows = explainability.removal_rows(
            network, inputs.examples, vocab, policy, beta, options.seed, options.site, progress=options.progress
        )
        result = explainability.write_explainability(rows, out)
        summary["explainability"] = result["summary"]
        sections.append(f"## Explainability test (eq. 13, Fig. 5)\n\n{result['markdown']}\n\n![explainability](explainability.png)")
        for mode, s in result["summary"].items():
            log(f"  explainability {mode}: ΔJS > 0 in {100 * s['share_delta_js_positive']:.1f}%, threshold Δα {s['threshold_delta_alpha']}")

    if "saliency" in options.only:
        count = min(options.saliency_examples, len(inputs.examples))
        indices = sorted(np.random.default_rng(options.seed).choice(len(inputs.examples), count, replace=False).tolist())
        rows = saliency.saliency_rows(network, inputs.examples, indices, policy, beta, site=options.site, progress=options.progress)
        result = saliency.write_saliency(rows, out, dataset_name, unit)
        summary["saliency"] = result["summary"]
        sections.append(
            f"## Attention vs saliency\n\n{count} random {options.split} {unit} (≥ 3 tokens kept).\n\n"
            f"{result['markdown']}\n\n![saliency](saliency.png)"
        )
        for mode, s in result["summary"].items():
            log(
                f"  saliency {mode}: τ(att, grad) {s['tau_attention_gradient']['mean']:+.3f}, "
                f"τ(att, LOO) {s['tau_attention_loo']['mean']:+.3f}"
            )

    if "polarity" in options.only and documents:
        note(POLARITY_DOCUMENTS)
        sections.append(f"## Token polarity and attention (Sun & Lu 2020)\n\nNot applicable: {POLARITY_DOCUMENTS}.")
    elif "polarity" in options.only:
        rows = polarity.snapshot(network, inputs.data.train, inputs.examples, vocab, len(model.label_names), policy, beta)
        if rows:
            result = polarity.write_snapshot(rows, model.label_names, out)
            summary["polarity_snapshot"] = result
            text = (
                f"## Token polarity and attention (Sun & Lu 2020)\n\n{result['tokens']} frequent tokens (≤ 20 "
                f"occurrences each in the {options.split} split): Kendall τ of |polarity| against the mean relative attention "
                f"L·α: {result['tau_abs_polarity_attention']:+.3f} (own α), {result['tau_abs_polarity_attention_revised']:+.3f} "
                "(revised α′).\n\n![polarity snapshot](polarity_snapshot.png)"
            )
        else:
            note("polarity snapshot skipped: no frequent token occurs in the analysed split")
            text = "## Token polarity and attention (Sun & Lu 2020)\n"
        if tracked is not None and tracked.get("polarity_tokens"):
            result = polarity.write_trajectories(tracked, out)
            summary["polarity_tracking"] = result
            text += f"\n\nFollowed over training ({', '.join(result['tokens'])}): ![polarity tracking](polarity_tracking.png)"
        sections.append(text)
        log(f"  polarity: {out / 'polarity_snapshot.png'}")

    (out / "summary.json").write_text(json.dumps(_clean(summary), indent=2, ensure_ascii=False), encoding="utf-8")
    header = [
        f"# Attention analysis of `{checkpoint}`",
        "",
        f"{network.net_name} (phase '{model.phase}', β = {float(beta):.3f}) on {dataset_name} {options.split}, "
        f"{len(inputs.examples)} {unit}.",
    ]
    if options.command:
        header += ["", "```", options.command, "```"]
    header += ["", f"Per-token weights: {SQUASH_RULE}"]
    if documents:
        header += ["", f"Documents: {DOCUMENT_RULE}"]
    header += [f"\nNote: {n}" for n in summary["notes"]]
    (out / "summary.md").write_text("\n".join(header) + "\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    log(f"summary: {out / 'summary.md'}")
    return summary


def _reference_records(path: str, inputs, options: AnalyzeOptions):
    """Records of another checkpoint's own attention on the same sentences (same vocabulary needed)."""
    from drga.pretrained import load_trained

    reference = load_trained(path, device=str(inputs.model.device))
    if reference.vocab.itos != inputs.model.vocab.itos:
        raise AnalysisError(f"{path} has another vocabulary than {inputs.checkpoint}; use a checkpoint of the same run")
    records = compute_records(reference.network, inputs.examples, reference.vocab, site=options.site, progress=options.progress)
    return records, f"{Path(path).name}, phase {reference.phase}"
