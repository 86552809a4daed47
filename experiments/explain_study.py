"""The explainability study (issue 41): is DRGA's attention a more faithful or more focused explanation
than the equal-budget baseline's? Per-run analyses, then the page rebuilt from their JSON alone.

    OMP_NUM_THREADS=1 python experiments/explain_study.py analyze --runs runs/explain \\
        --out experiments/results/explain-analysis
    python experiments/explain_study.py tables                     # docs/EXPLAINABILITY.md, docs/explainability/*.png

``analyze`` reads every finished run folder of ``experiments/explain_regime.sh`` (``<dataset>-lstm-sa-seed<k>``
with results.json and the checkpoints below) and writes one small JSON per run (a run whose JSON exists is
skipped). Three attentions are compared on the same test sentences:

- ``baseline``: the equal-budget baseline (``baseline_best.pt``), its own α;
- ``drga-net-only``: DRGA's network without the agent (``cotrain_best_net-only.pt``, selected net-only), its own α;
- ``drga-with-agent``: DRGA with the agent (``cotrain_best.pt``), the revised α* (the agent's deterministic action).

Each gets the measures of ``drga.analysis`` (see :func:`attention_measures`); the most-modified words compare
α* with the same network's own α (the paper's Fig. 4) and with the baseline's α. ``tables`` is in
``explain_tables.py`` beside this file.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checkout import ROOT

from drga.names import Mode, PhaseName, best_checkpoint_name

#: The attentions compared, in the order of every table: name → (checkpoint, evaluation mode).
ATTENTIONS = {
    "baseline": (best_checkpoint_name(PhaseName.BASELINE), "net-only"),
    "drga-net-only": (best_checkpoint_name(PhaseName.COTRAIN, Mode.NET_ONLY), "net-only"),
    "drga-with-agent": (best_checkpoint_name(PhaseName.COTRAIN), "with-agent"),
}
#: Data sets whose labels are sentiment, where negation and intensification have a direction to act on.
SENTIMENT_DATASETS = ("mr", "sst", "sst2")
#: Fixed Δα edges of the erasure test's curve (so that runs average bin by bin).
DELTA_ALPHA_EDGES = [round(0.05 * k, 2) for k in range(21)]
#: Occurrences a word needs in the test split to enter the most-modified words.
MIN_COUNT = 10
#: Random rankings per sentence of the ERASER reference (``--random-draws``); the committed analyses made one.
RANDOM_DRAWS = 5


@dataclass
class Attention:
    """One of the three attentions: the network that computes it and how it is evaluated."""

    name: str
    network: Any
    policy: Any
    beta: Any
    mode: str

    @property
    def revised(self) -> bool:
        return self.mode == "with-agent"


def _rounded(value: Any, digits: int = 6) -> Any:
    """JSON-ready and small: floats to ``digits`` significant digits, NaN to null, numpy to Python."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return None if math.isnan(value) else float(f"{value:.{digits}g}")
    return value


def attention_measures(attention: Attention, inputs: Any, records: Any, sample: list[int], seed: int, ig_steps: int,
                       random_draws: int = 1) -> dict[str, Any]:
    """Every measure of one attention on the test split (records: ``compute_records`` of its network)."""
    import numpy as np

    from drga.analysis import explainability, faithfulness, highlighted, lexicon, negation, polarity

    model = inputs.model
    weights = [r.revised if attention.revised else r.original for r in records]
    probs = [r.probs_revised if attention.revised else r.probs_original for r in records]
    correct = [int(np.argmax(p)) == r.label for p, r in zip(probs, records)]
    result: dict[str, Any] = {"accuracy": float(np.mean(correct))}
    result["highlighted"] = highlighted.mean_highlighted(weights, model.config.reward.delta)
    result["word_classes"] = lexicon.word_class_masses([(r.tokens, w) for r, w in zip(records, weights)])
    if model.config.data.dataset in SENTIMENT_DATASETS:
        result["negation"] = {
            name: negation.modifier_view([(r.tokens, w, c) for r, w, c in zip(records, weights, correct)], cue)
            for name, cue in negation.CUES.items()
        }
    # the erasure test: with a policy removal_rows tests α and α′; keep the one this attention is
    rows = explainability.removal_rows(attention.network, inputs.examples, model.vocab, attention.policy, attention.beta, seed)
    key = "revised" if attention.revised else "original"
    rows = [r for r in rows if r["mode"] == key]
    counts, means = explainability.fixed_bins([r["delta_alpha"] for r in rows], [r["delta_js"] for r in rows], DELTA_ALPHA_EDGES)
    result["erasure"] = {**explainability.summarize(rows)[key], "curve": {"count": counts, "mean_delta_js": means}}
    sentences = faithfulness.faithfulness_rows(
        attention.network, inputs.examples, sample, attention.policy, attention.beta, seed, steps=ig_steps, modes=[attention.mode],
        random_draws=random_draws,
    )
    result["faithfulness"] = faithfulness.summarize(sentences)[attention.mode]
    tokens = polarity.snapshot(attention.network, inputs.data.train, inputs.examples, model.vocab, len(model.label_names),
                               attention.policy, attention.beta)
    column = "attention_revised" if attention.revised else "attention"
    # the snapshot's tokens depend on the data alone: the same list, in the same order, for every attention
    result["polarity"] = {
        "tau_abs_polarity_attention": polarity.polarity_attention_tau(tokens, column),
        **_rounded({  # per token: what the scatter needs, to 4 digits
            "token": [t["token"] for t in tokens],
            "rate": [t["rate_c_plus"] for t in tokens],
            "polarity": [t["polarity"] for t in tokens],
            "attention": [t[column] for t in tokens],
        }, 4),
    }
    return result


def modified_words(tokens: list[list[str]], pairs: dict[str, tuple[list[Any], list[Any]]]) -> dict[str, list[Any]]:
    """The words seen ≥ MIN_COUNT times (alphabetical), their counts and mean change after − before per pair."""
    from drga.analysis.modified_words import changes_between

    changes = {name: {c.token: c for c in changes_between(list(zip(tokens, *pair)), MIN_COUNT)} for name, pair in pairs.items()}
    words = sorted(next(iter(changes.values())))
    result: dict[str, list[Any]] = {"token": words, "count": [next(iter(changes.values()))[w].count for w in words]}
    for name, found in changes.items():
        result[name] = [found[w].mean_change for w in words]
    return _rounded(result, 4)  # per word: what the figure needs, to 4 digits


def analyze_run(run: Path, sample_size: int, seed: int, ig_steps: int, commit: str, log=print, random_draws: int = 1) -> dict[str, Any]:
    """The per-run JSON of one finished run folder."""
    import numpy as np
    import torch

    from drga.analysis.attention import AnalysisError, compute_records, load_inputs
    from drga.tasks.classification.trained import load_trained

    started, cpu_started = time.perf_counter(), time.process_time()
    inputs = load_inputs(run / ATTENTIONS["drga-with-agent"][0], split="test")
    model = inputs.model
    networks = {"drga-with-agent": model}
    for name in ("baseline", "drga-net-only"):
        networks[name] = load_trained(run / ATTENTIONS[name][0])
        if networks[name].vocab.itos != model.vocab.itos:
            raise AnalysisError(f"{run / ATTENTIONS[name][0]} has another vocabulary than {inputs.checkpoint}")
    attentions = {
        name: Attention(name, networks[name].network, model.policy if mode == "with-agent" else None,
                        inputs.beta if mode == "with-agent" else None, mode)
        for name, (_, mode) in ATTENTIONS.items()
    }
    count = min(sample_size, len(inputs.examples))
    sample = sorted(np.random.default_rng(seed).choice(len(inputs.examples), count, replace=False).tolist())
    records = {}
    for name, attention in attentions.items():
        records[name] = compute_records(attention.network, inputs.examples, model.vocab, attention.policy, attention.beta)
    result: dict[str, Any] = {
        "run": run.name,
        "dataset": model.config.data.dataset,
        "seed": model.config.run.seed,
        "network": model.network.net_name,
        "split": "test",
        "sentences": len(inputs.examples),
        "faithfulness_sentences": count,
        "ig_steps": ig_steps,
        "random_draws": random_draws,  # of the ERASER random ranking, per sentence
        "analysis_seed": seed,
        "delta": model.config.reward.delta,
        "label_names": list(model.label_names),
        "checkpoints": {name: checkpoint for name, (checkpoint, _) in ATTENTIONS.items()},
        "attentions": {},
    }
    for name, attention in attentions.items():
        began = time.perf_counter()
        result["attentions"][name] = attention_measures(attention, inputs, records[name], sample, seed, ig_steps, random_draws)
        log(f"  {run.name} {name}: {time.perf_counter() - began:.0f} s")
    tokens = [r.tokens for r in records["drga-with-agent"]]
    revised = [r.revised for r in records["drga-with-agent"]]
    result["modified_words"] = modified_words(tokens, {
        "agent": ([r.original for r in records["drga-with-agent"]], revised),
        "vs_baseline": ([r.original for r in records["baseline"]], revised),
    })
    snapshot_tokens = {tuple(a["polarity"]["token"]) for a in result["attentions"].values()}
    if len(snapshot_tokens) != 1:
        raise AnalysisError(f"{run}: the polarity snapshot chose other tokens for other attentions")
    result["cost"] = {
        "wall_seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu_started,
        "torch_threads": torch.get_num_threads(),
        "commit": commit,  # the code this process loaded, read when it started
    }
    return _rounded(result)


def _commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def finished(run: Path) -> bool:
    """Whether the run folder holds a finished run: its results.json and every compared checkpoint."""
    return (run / "results.json").is_file() and all((run / checkpoint).is_file() for checkpoint, _ in ATTENTIONS.values())


def cmd_analyze(args: argparse.Namespace) -> int:
    import torch

    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: set OMP_NUM_THREADS=1 to measure the cost on one thread as the study does", file=sys.stderr)
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    commit = _commit()
    for run in sorted(p for p in Path(args.runs).iterdir() if p.is_dir()):
        target = out / f"{run.name}.json"
        if target.exists():
            print(f"{run.name}: {target} exists, skipped")
            continue
        if not finished(run):
            print(f"{run.name}: not finished (no results.json or a checkpoint missing), skipped")
            continue
        print(f"{run.name}: analysing")
        result = analyze_run(run, args.faithfulness_sentences, args.seed, args.ig_steps, commit, random_draws=args.random_draws)
        target.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{run.name}: {target} ({result['cost']['wall_seconds']:.0f} s wall, {result['cost']['cpu_seconds']:.0f} s CPU)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    analyze = commands.add_parser("analyze", help="one JSON per finished run (runs whose JSON exists are skipped)")
    analyze.add_argument("--runs", default="runs/explain", help="folder of run folders (default runs/explain)")
    analyze.add_argument("--out", default="experiments/results/explain-analysis", help="folder of the per-run JSON")
    analyze.add_argument("--faithfulness-sentences", type=int, default=200, help="test sentences of the ERASER measures (default 200)")
    analyze.add_argument("--ig-steps", type=int, default=20, help="integrated-gradients steps (default 20)")
    analyze.add_argument("--seed", type=int, default=0, help="seed of the sentence sample and the random tokens (default 0)")
    analyze.add_argument("--random-draws", type=int, default=RANDOM_DRAWS,
                         help=f"random rankings per sentence of the ERASER reference, averaged (default {RANDOM_DRAWS}; "
                              "the committed analyses made 1)")
    analyze.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    tables = commands.add_parser("tables", help="docs/EXPLAINABILITY.md and its pictures from the per-run JSON alone")
    tables.add_argument("--results", default="experiments/results/explain-analysis", help="folder of the per-run JSON")
    tables.add_argument("--page", default="docs/EXPLAINABILITY.md", help="the page to write")
    tables.add_argument("--figures", default="docs/explainability", help="folder of its PNGs")
    args = parser.parse_args(argv)
    if args.command == "analyze":
        return cmd_analyze(args)
    from explain_tables import write_page  # beside this script

    write_page(Path(args.results), Path(args.page), Path(args.figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
