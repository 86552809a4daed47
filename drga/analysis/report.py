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
faithfulness.md/.csv/.jsonl ERASER comprehensiveness/sufficiency of attention vs random and IG; τ vs IG, LOO
cue_mass.md/.csv            attention mass on the words of --cue-words, before and after the agent
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
from drga.files import write_text_atomic

#: Why the polarity analysis does not apply to document networks (said in the report).
POLARITY_DOCUMENTS = (
    "token polarity skipped: it scores a token by the output when all attention is on it, and in a document "
    "network (HAN) the sentence encoder still mixes in every other sentence, so no attention setting isolates one word"
)

ALL = ("maps", "transitions", "highlighted", "modified-words", "explainability", "saliency", "polarity", "faithfulness", "cue-mass")
#: The analyses that also read a checkpoint without an agent (a baseline's): in net-only mode only.
WITHOUT_AGENT = ("faithfulness",)


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
    faithfulness_examples: int = 200
    ig_steps: int = 50
    site: str | None = None
    reference: str | None = None
    cue_words: list[str] | None = None
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


@dataclass
class AnalysisRun:
    """What every analysis of one ``drga analyze`` call reads and adds to: the loaded inputs, the
    options, the summary (summary.json) and the sections of summary.md."""

    checkpoint: str
    options: AnalyzeOptions
    inputs: Any
    out: Path
    log: Callable[[str], None]
    summary: dict[str, Any]
    sections: list[str] = field(default_factory=list)
    records: Any = None  #: compute_records' per-example attention, shared by maps, highlighted and modified-words
    tracked: Any = None  #: the run's tracked-sentence file, shared by transitions and polarity

    @property
    def unit(self) -> str:
        return "documents" if self.documents else "sentences"

    @property
    def documents(self) -> bool:
        return bool(self.inputs.examples) and self.inputs.examples[0].sentences is not None

    def note(self, text: str) -> None:
        self.summary["notes"].append(text)
        self.log(f"  note: {text}")


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
    from drga.analysis.tracking import HOW_TO_TRACK, TRACKED_FILE, read_tracked

    unknown = [name for name in options.only if name not in ALL]
    if unknown:
        raise AnalysisError(f"unknown analysis {', '.join(unknown)}; choose from {', '.join(ALL)}")
    require_agent = not set(options.only) <= set(WITHOUT_AGENT)
    inputs = load_inputs(checkpoint, dataset, options.split, data_dir, tsv, device, allow_other_dataset, require_agent)
    model, out = inputs.model, Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    network, beta = model.network, inputs.beta
    summary: dict[str, Any] = {
        "checkpoint": str(checkpoint), "network": network.net_name, "phase": model.phase, "dataset": model.config.data.dataset,
        "split": options.split, "sentences": len(inputs.examples), "beta": float(beta) if model.has_agent else None, "seed": options.seed,
        "command": options.command, "squash_rule": SQUASH_RULE, "notes": [],
    }
    run = AnalysisRun(checkpoint, options, inputs, out, log, summary)
    if run.documents:
        summary["document_rule"] = DOCUMENT_RULE
    log(
        f"analysing {checkpoint}: {network.net_name} from phase '{model.phase}', {model.config.data.dataset} {options.split} "
        f"({len(inputs.examples)} {run.unit}), {_strength(model, beta)}"
    )
    if {"maps", "highlighted", "modified-words"} & set(options.only) or ("cue-mass" in options.only and options.cue_words):
        run.records = compute_records(network, inputs.examples, model.vocab, model.policy, beta, options.site,
                                      progress=options.progress)
    if {"transitions", "polarity"} & set(options.only):
        try:
            run.tracked = read_tracked(inputs.run_dir)
        except AnalysisError:
            if set(options.only) != set(ALL) and "transitions" in options.only:
                raise
            run.note(f"{inputs.run_dir} has no {TRACKED_FILE}: transitions and polarity over training skipped; {HOW_TO_TRACK}")
    for name, section in SECTIONS:
        if name in options.only:
            section(run)
    _write_summary(run)
    return summary


def _maps_section(run: AnalysisRun) -> None:
    from drga.analysis import maps

    options, model = run.options, run.inputs.model
    chosen = maps.choose_examples(run.records, options.num_examples, options.seed, chosen=options.examples)
    heading = f"{model.network.net_name} on {model.config.data.dataset} ({options.split}): original vs revised attention"
    files = maps.write_maps(chosen, model.label_names, run.out, heading)
    run.summary["maps"] = {"examples": [r.index for r in chosen], **files}
    run.sections.append(
        f"## Attention maps (Table VI)\n\n{len(chosen)} {options.split} {run.unit} (positions "
        f"{', '.join(str(r.index) for r in chosen)}): [attention_maps.html](attention_maps.html), "
        "![attention maps](attention_maps.png)"
    )
    run.log(f"  maps: {files['html']}, {files['png']}")


def _transitions_section(run: AnalysisRun) -> None:
    from drga.analysis import transitions

    if run.tracked is None:
        return
    result = transitions.write_transitions(run.tracked, run.out)
    run.summary["transitions"] = {k: v for k, v in result.items() if k != "markdown"}
    run.sections.append(
        f"## Transitions over training (Table VII)\n\n{result['examples']} tracked dev {run.unit} at the evaluations "
        f"{', '.join(result['evaluations'])}: ![transitions](transitions.png), tables in [transitions.md](transitions.md)"
    )
    run.log(f"  transitions: {result['examples']} {run.unit} x {len(result['evaluations'])} evaluations")


def _highlighted_section(run: AnalysisRun) -> None:
    from drga.analysis import highlighted
    from drga.core.reward import PAPER_DELTA

    reference = reference_name = None
    if run.options.reference:
        reference, reference_name = _reference_records(run.options.reference, run.inputs, run.options)
    delta = run.inputs.model.config.reward.setting("delta", PAPER_DELTA)  # eq. 5's δ, else the paper's
    result = highlighted.write_highlighted(run.records, delta, run.out, reference, reference_name)
    run.summary["highlighted"] = {k: v for k, v in result.items() if k != "markdown"}
    run.sections.append(f"## Highlighted tokens (Table VIII)\n\n{result['markdown']}\n\n![highlighted](highlighted.png)")
    run.log(f"  highlighted: mean N {result['mean_n_original']:.2f} → {result['mean_n_revised']:.2f} ({-100 * result['reduction']:+.1f}%)")


def _modified_words_section(run: AnalysisRun) -> None:
    from drga.analysis import modified_words

    options = run.options
    result = modified_words.write_modified_words(run.records, run.out, options.top_k, options.min_count)
    run.summary["modified_words"] = result
    fmt = lambda items: ", ".join(f"{c['token']} ({c['mean_change']:+.4f}, {c['count']})" for c in items)
    run.sections.append(
        f"## Most-modified words (Fig. 4)\n\n{result['words']} words seen ≥ {options.min_count} times. Raised most: "
        f"{fmt(result['raised'])}.\n\nLowered most: {fmt(result['lowered'])}.\n\n![modified words](modified_words.png)"
    )
    raised, lowered = (", ".join(c["token"] for c in result[side][:5]) for side in ("raised", "lowered"))
    run.log(f"  modified words: raised {raised}; lowered {lowered}")


def _explainability_section(run: AnalysisRun) -> None:
    from drga.analysis import explainability

    options, model, inputs = run.options, run.inputs.model, run.inputs
    rows = explainability.removal_rows(
        model.network, inputs.examples, model.vocab, model.policy, inputs.beta, options.seed, options.site, progress=options.progress
    )
    result = explainability.write_explainability(rows, run.out)
    run.summary["explainability"] = result["summary"]
    run.sections.append(f"## Explainability test (eq. 13, Fig. 5)\n\n{result['markdown']}\n\n![explainability](explainability.png)")
    for mode, s in result["summary"].items():
        run.log(f"  explainability {mode}: ΔJS > 0 in {100 * s['share_delta_js_positive']:.1f}%, threshold Δα {s['threshold_delta_alpha']}")


def _saliency_section(run: AnalysisRun) -> None:
    from drga.analysis import saliency

    options, model, inputs = run.options, run.inputs.model, run.inputs
    count = min(options.saliency_examples, len(inputs.examples))
    indices = sorted(np.random.default_rng(options.seed).choice(len(inputs.examples), count, replace=False).tolist())
    rows = saliency.saliency_rows(model.network, inputs.examples, indices, model.policy, inputs.beta, site=options.site,
                                  progress=options.progress)
    result = saliency.write_saliency(rows, run.out, model.config.data.dataset, run.unit)
    run.summary["saliency"] = result["summary"]
    run.sections.append(
        f"## Attention vs saliency\n\n{count} random {options.split} {run.unit} (≥ 3 tokens kept).\n\n"
        f"{result['markdown']}\n\n![saliency](saliency.png)"
    )
    for mode, s in result["summary"].items():
        run.log(
            f"  saliency {mode}: τ(att, grad) {s['tau_attention_gradient']['mean']:+.3f}, "
            f"τ(att, LOO) {s['tau_attention_loo']['mean']:+.3f}"
        )


def _polarity_section(run: AnalysisRun) -> None:
    from drga.analysis import polarity

    if run.documents:
        run.note(POLARITY_DOCUMENTS)
        run.sections.append(f"## Token polarity and attention (Sun & Lu 2020)\n\nNot applicable: {POLARITY_DOCUMENTS}.")
        return
    options, model, inputs = run.options, run.inputs.model, run.inputs
    rows = polarity.snapshot(model.network, inputs.data.train, inputs.examples, model.vocab, len(model.label_names), model.policy,
                             inputs.beta)
    if rows:
        result = polarity.write_snapshot(rows, model.label_names, run.out)
        run.summary["polarity_snapshot"] = result
        text = (
            f"## Token polarity and attention (Sun & Lu 2020)\n\n{result['tokens']} frequent tokens (≤ 20 "
            f"occurrences each in the {options.split} split): Kendall τ of |polarity| against the mean relative attention "
            f"L·α: {result['tau_abs_polarity_attention']:+.3f} (own α), {result['tau_abs_polarity_attention_revised']:+.3f} "
            "(revised α′).\n\n![polarity snapshot](polarity_snapshot.png)"
        )
    else:
        run.note("polarity snapshot skipped: no frequent token occurs in the analysed split")
        text = "## Token polarity and attention (Sun & Lu 2020)\n"
    if run.tracked is not None and run.tracked.get("polarity_tokens"):
        result = polarity.write_trajectories(run.tracked, run.out)
        run.summary["polarity_tracking"] = result
        text += f"\n\nFollowed over training ({', '.join(result['tokens'])}): ![polarity tracking](polarity_tracking.png)"
    run.sections.append(text)
    run.log(f"  polarity: {run.out / 'polarity_snapshot.png'}")


def _faithfulness_section(run: AnalysisRun) -> None:
    from drga.analysis import faithfulness

    options, model, inputs = run.options, run.inputs.model, run.inputs
    count = min(options.faithfulness_examples, len(inputs.examples))
    indices = sorted(np.random.default_rng(options.seed).choice(len(inputs.examples), count, replace=False).tolist())
    policy = model.policy if model.has_agent else None
    rows = faithfulness.faithfulness_rows(model.network, inputs.examples, indices, policy, inputs.beta, options.seed, options.site,
                                          options.ig_steps, progress=options.progress)
    result = faithfulness.write_faithfulness(rows, run.out)
    run.summary["faithfulness"] = result["summary"]
    run.summary["faithfulness_removal"] = faithfulness.REMOVAL_RULE
    modes = "net-only and with-agent" if policy is not None else "net-only (this checkpoint has no agent)"
    run.sections.append(
        f"## Faithfulness (ERASER)\n\n{count} random {options.split} {run.unit} (≥ 2 tokens kept), {modes}; top-k % "
        f"rationales, k = {', '.join(map(str, faithfulness.BINS))}; integrated gradients with {options.ig_steps} steps; "
        f"{faithfulness.REMOVAL_RULE}. Per {run.unit[:-1]}: faithfulness.csv, faithfulness.jsonl.\n\n{result['markdown']}"
    )
    for mode, s in result["summary"].items():
        comp, suff = s["comprehensiveness"], s["sufficiency"]
        run.log(
            f"  faithfulness {mode}: comprehensiveness AOPC attention {comp['attention']['aopc']:.3f}, random "
            f"{comp['random']['aopc']:.3f}, IG {comp['integrated_gradients']['aopc']:.3f}; sufficiency AOPC attention "
            f"{suff['attention']['aopc']:.3f}, random {suff['random']['aopc']:.3f}, IG {suff['integrated_gradients']['aopc']:.3f}; "
            f"τ(att, IG) {s['tau_attention_ig']['mean']:+.3f}, τ(att, LOO) {s['tau_attention_loo']['mean']:+.3f}"
        )


def _cue_mass_section(run: AnalysisRun) -> None:
    from drga.analysis import cue_mass

    words = run.options.cue_words
    if not words:  # every analysis was asked for, and no words were named
        return
    vocab = run.inputs.model.vocab
    result = cue_mass.write_cue_mass(run.records, words, getattr(vocab, "stoi", ()), run.out)
    run.summary["cue_mass"] = {k: v for k, v in result.items() if k != "markdown"}
    run.sections.append(f"## Attention mass on the cue words\n\n{result['markdown']}")
    if result["sentences_with_cues"] and "mean_mass_revised" in result:
        run.log(f"  cue mass: {result['mean_mass_original']:.3f} → {result['mean_mass_revised']:.3f} on {result['sentences_with_cues']} "
                f"{run.unit} (uniform {result['mean_uniform_mass']:.3f}); accuracy there {result['mean_correct_original']:.4f} → "
                f"{result['mean_correct_revised']:.4f}")
    else:
        run.log(f"  cue mass: {result['sentences_with_cues']} {run.unit} hold a cue word")


#: The analyses in the order summary.md lists them: name (as ``--only`` takes it) → its section.
SECTIONS: tuple[tuple[str, Callable[[AnalysisRun], None]], ...] = (
    ("maps", _maps_section),
    ("transitions", _transitions_section),
    ("highlighted", _highlighted_section),
    ("modified-words", _modified_words_section),
    ("explainability", _explainability_section),
    ("saliency", _saliency_section),
    ("polarity", _polarity_section),
    ("faithfulness", _faithfulness_section),
    ("cue-mass", _cue_mass_section),
)


def _strength(model: Any, beta: Any) -> str:
    """β as the reports print it; a checkpoint without an agent has none that means anything."""
    return f"β = {float(beta):.3f}" if model.has_agent else "no agent"


def _write_summary(run: AnalysisRun) -> None:
    """summary.json and summary.md: the header, the notes, then every section."""
    summary, model, options = run.summary, run.inputs.model, run.options
    write_text_atomic(run.out / "summary.json", json.dumps(_clean(summary), indent=2, ensure_ascii=False))
    header = [
        f"# Attention analysis of `{run.checkpoint}`",
        "",
        f"{model.network.net_name} (phase '{model.phase}', {_strength(model, run.inputs.beta)}) on {model.config.data.dataset} "
        f"{options.split}, {len(run.inputs.examples)} {run.unit}.",
    ]
    if options.command:
        header += ["", "```", options.command, "```"]
    header += ["", f"Per-token weights: {SQUASH_RULE}"]
    if run.documents:
        header += ["", f"Documents: {DOCUMENT_RULE}"]
    header += [f"\nNote: {n}" for n in summary["notes"]]
    write_text_atomic(run.out / "summary.md", "\n".join(header) + "\n\n" + "\n\n".join(run.sections) + "\n")
    run.log(f"summary: {run.out / 'summary.md'}")


def _reference_records(path: str, inputs, options: AnalyzeOptions):
    """Records of another checkpoint's own attention on the same sentences (same vocabulary needed)."""
    from drga.tasks.classification.trained import load_trained, quoted

    reference = load_trained(path, device=str(inputs.model.device))
    if reference.vocab.itos != inputs.model.vocab.itos:
        raise AnalysisError(f"{path} has another vocabulary than {inputs.checkpoint}; use a checkpoint of the same run")
    if reference.label_names != inputs.model.label_names:
        raise AnalysisError(
            f"{path} was trained on the labels {quoted(reference.label_names)} and {inputs.checkpoint} on "
            f"{quoted(inputs.model.label_names)}; use a checkpoint of the same run"
        )
    records = compute_records(reference.network, inputs.examples, reference.vocab, site=options.site, progress=options.progress)
    return records, f"{Path(path).name}, phase {reference.phase}"
