"""Tables of the translation study (issue 39), rebuilt from its committed per-run result files alone.

    python experiments/translation_tables.py [experiments/results/translation-regime] [--out docs/results/nmt-regime.md | --out -]

Reads every ``multi30k-en-de-<net>-seed<k>.json`` that ``experiments/translation_regime.sh`` (through
``experiments/sweep.py --results``) wrote and writes one markdown page (``--out -``: to stdout). A run
that started from its seed's network of the study's first stage (``train.init_from``; its pretraining
ran apart, its result file in ``pretrain/``) counts that stage's pretraining epochs and hours as its own:

1. **Seeds**: per network the seeds present against the seeds planned; a cell short of its seeds is
   marked incomplete, and the page says it is partial.
2. **Baselines and convergence**: pretrain-only test BLEU (beam) against issue 39's floors, the
   pretraining epochs early stopping needed, and the equal-budget baseline's gain over pretrain-only
   (under 0.5 BLEU on average: the network was close to convergence when the agent started).
3. **Test scores**: mean ± std over seeds of every row and mode (pretrain-only, equal-budget baseline,
   agent on the frozen network, DRGA co-trained net-only and with the agent): perplexity, BLEU and
   chrF greedy and beam, BLEU's brevity penalty and hypothesis/reference length, and the agent's
   signals (N/L, the highlighted fraction; the attention shift TV(α, α′)).
4. **Selected epochs** of the baseline and DRGA rows, and how often the selection kept the phase's
   starting point (epoch 0).
5. **The paper's Table V beside ours**: its WMT14 deltas (the corpora differ: compare deltas only).
6. **Paired tests** of DRGA (each mode) against the equal-budget baseline and against pretrain-only,
   on BLEU beam, BLEU greedy and perplexity: paired t-test over seeds, 95% t interval, Holm's
   correction over every (network, comparison) cell of a metric.
7. **Runs**: commits, wall time, epochs per phase.

Before any of that, **stage 1** alone (``pretrain/``, every seed's network pretrained alone): per network the
seeds pretrained, their pretraining epochs, best dev BLEU and pretrain-only test BLEU against the floor, and
``<figures>/dev-curves.png`` (``--figures``, default docs/results/nmt-regime/): dev BLEU per pretraining epoch
of every seed and, where stage 2 has run, the equal-budget baseline's and DRGA's (with the agent: the agent
phase, then co-training) dev BLEU per epoch after pretraining, from the pretrained network's. The page is
written from stage 1's files alone while stage 2 has not started.

The same files give the same bytes. A file that is not a result of this study, or lacks a number the
tables need, is refused with one line naming it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)
from matplotlib.ticker import MaxNLocator
from study_stats import detectable_effect, holm_adjust, paired_comparison, t_interval

from drga.analysis.plots import DOC_WIDTH, new_figure, save_png, styled
from drga.analysis.stats import mean_std_text
from drga.errors import UserError
from drga.names import Mode, PhaseName, ResultRow
from drga.sweep.results import ResultCell, ResultFile, read_result_file

STUDY = "experiments/results/translation-regime"
PAGE = "docs/results/nmt-regime.md"
FIGURES = "docs/results/nmt-regime"
#: The study's first stage (every seed's network pretrained alone), inside the study's folder.
PRETRAINING = "pretrain"
#: The runs' test translations, inside the study's folder: ``<run>/test.<phase>.<mode>.<search>.de.gz`` (stage 1's under
#: ``pretrain/``) and the references they were scored against, ``references.test.de.gz`` (experiments/translation_gpu.py unpack).
TRANSLATIONS = "hypotheses"
REFERENCES = "references.test.de.gz"
#: The GPU calls' manifests (experiments/translation_gpu.py), inside the study's folder.
MANIFESTS = "manifests"
#: The phase whose checkpoint a row reads: the translation file's name (drga/tasks/translation/task.py, final_report).
ROW_PHASES = {ResultRow.PRETRAIN_ONLY: "pretrain", ResultRow.EQUAL_BUDGET: "baseline", ResultRow.AGENT_ON_FROZEN: "agent",
              ResultRow.DRGA: "cotrain"}
#: What the tables print of a search's scores, each recomputed from the committed translations.
RECOMPUTED = ("bleu", "chrf", "brevity_penalty", "hypothesis_length", "reference_length")
DATASET = "multi30k-en-de"
PRETRAIN, BASELINE, AGENT, DRGA = ResultRow.PRETRAIN_ONLY, ResultRow.EQUAL_BUDGET, ResultRow.AGENT_ON_FROZEN, ResultRow.DRGA
#: Every (results.json row, evaluation mode) a run of the study reports, in the tables' order.
CELLS = [(PRETRAIN, "net-only"), (BASELINE, "net-only"), (AGENT, "with-agent"), (DRGA, "net-only"), (DRGA, "with-agent")]
CELL_NAMES = {
    (PRETRAIN, "net-only"): "pretrain-only",
    (BASELINE, "net-only"): "equal-budget baseline",
    (AGENT, "with-agent"): "agent on the frozen network",
    (DRGA, "net-only"): "DRGA net-only",
    (DRGA, "with-agent"): "DRGA with agent",
}
#: What the study compares: (DRGA's cell, the reference cell).
COMPARISONS = [
    ((DRGA, "with-agent"), (BASELINE, "net-only")),
    ((DRGA, "net-only"), (BASELINE, "net-only")),
    ((DRGA, "with-agent"), (PRETRAIN, "net-only")),
    ((DRGA, "net-only"), (PRETRAIN, "net-only")),
]
#: The pretrain-only baseline's gain from the equal budget that still counts as converged (BLEU points).
CONVERGED_GAIN = 0.5
#: Pretraining stopped by its epoch cap ended on its plateau when its last PLATEAU_EPOCHS epochs lie within
#: PLATEAU_BLEU dev BLEU of its best (issue 61).
PLATEAU_EPOCHS, PLATEAU_BLEU = 3, 0.5
#: The CPU units' records (experiments/translation_cpu.py), inside the study's folder.
UNITS = "units"
#: A unit is sized to finish within a wall-clock budget of 2 h 15 min (issue 61; translation_cpu.py --budget-min 135).
UNIT_LIMIT_SECONDS = 2.25 * 3600


@dataclass(frozen=True)
class PaperTableV:
    """The paper's Table V on WMT14 English→German (../shared/paper/tables.md): baseline and +DRGA."""

    bleu: tuple[float, float]
    perplexity: tuple[float, float]


@dataclass(frozen=True)
class Network:
    title: str
    planned_seeds: tuple[int, ...]
    #: issue 61's floor on the pretrain-only test2016 BLEU (beam 5), mean of the seeds
    floor: float
    paper: PaperTableV


NETWORKS = {
    "seq2seq-luong": Network("Luong attention seq2seq", (0, 1, 2, 3, 4), 30.0, PaperTableV((23.0, 25.6), (6.3, 5.2))),
    "transformer-nmt": Network("Transformer encoder-decoder", (0, 1, 2, 3, 4, 5, 6), 33.0, PaperTableV((28.4, 29.8), (4.3, 3.7))),
}


@dataclass(frozen=True)
class Measure:
    """One number of a row and mode's result, read from its compact result (``experiments/sweep.py``'s compact_row)."""

    title: str
    read: Callable[[ResultCell], float | None]
    digits: int = 2
    lower_is_better: bool = False


def test_scores(cell: ResultCell, search: str) -> dict[str, Any] | None:
    """A translation cell's test scores of one search: greedy (``test``) or beam search (``test_beam``); None where
    the cell has none."""
    scores = cell.test_beam if search == "test_beam" else cell.test
    return scores if isinstance(scores, dict) else None


def _field(search: str, key: str) -> Callable[[ResultCell], float | None]:
    return lambda cell: (test_scores(cell, search) or {}).get(key)


def _length_ratio(search: str) -> Callable[[ResultCell], float | None]:
    def read(cell: ResultCell) -> float | None:
        scores = test_scores(cell, search) or {}
        hypothesis, reference = scores.get("hypothesis_length"), scores.get("reference_length")
        return hypothesis / reference if hypothesis is not None and reference else None

    return read


PERPLEXITY = Measure("test ppl", _field("test", "perplexity"), lower_is_better=True)
BLEU_GREEDY = Measure("BLEU greedy", _field("test", "bleu"))
BLEU_BEAM = Measure("BLEU beam", _field("test_beam", "bleu"))
CHRF_GREEDY, CHRF_BEAM = Measure("chrF greedy", _field("test", "chrf")), Measure("chrF beam", _field("test_beam", "chrf"))
SCORES = [PERPLEXITY, BLEU_GREEDY, CHRF_GREEDY, BLEU_BEAM, CHRF_BEAM]
LENGTHS_AND_SIGNALS = [
    Measure("BP greedy", _field("test", "brevity_penalty"), 3),
    Measure("BP beam", _field("test_beam", "brevity_penalty"), 3),
    Measure("hyp/ref length greedy", _length_ratio("test"), 3),
    Measure("hyp/ref length beam", _length_ratio("test_beam"), 3),
    Measure("P(stop early)", _field("test", "early_stop_probability"), 3, lower_is_better=True),
    Measure("N/L", _field("test", "highlighted_fraction"), 3),
    Measure("attention shift", _field("test", "attention_shift"), 3),
]
#: The paired tests' metrics, the first the study's main one; each is its own Holm family.
TESTED = [BLEU_BEAM, BLEU_GREEDY, PERPLEXITY]


# ---------------------------------------------------------------------------------------- reading


#: net → seed → the run's result file.
Runs = dict[str, dict[int, ResultFile]]
#: (net, seed) → the stage-1 run's result file: its path and content.
Pretrained = dict[tuple[str, int], tuple[Path, ResultFile]]


def load(folder: Path, pretrained: Pretrained | None = None) -> Runs:
    """net → seed → result file, every file checked (:func:`check`) and given its stage 1 (:func:`with_pretraining`;
    ``pretrained``: :func:`load_pretraining` of the study's ``pretrain/``, read here when not given)."""
    pretrained = load_pretraining(folder / PRETRAINING) if pretrained is None else pretrained
    runs: Runs = {}
    for path in sorted(folder.glob("*.json")):
        result = with_pretraining(check(path), pretrained, path)
        seeds = runs.setdefault(result.net, {})
        if result.seed in seeds:
            raise UserError(f"{path}: a second result file of {result.net} seed {result.seed}")
        seeds[result.seed] = result
    return runs


def load_pretraining(folder: Path) -> Pretrained:
    """(net, seed) → the stage-1 run's result file and content: the network alone, pretrained to convergence."""
    pretrained = {}
    for path in sorted(folder.glob("*.json")):
        result = read_result_file(path)
        check_name(path, result)
        pretraining = result.phases.get(PhaseName.PRETRAIN)
        if pretraining is None or not pretraining.epochs:
            raise UserError(f"{path}: no pretraining epochs: not a run of the study's first stage")
        pretrain_only = result.cell(PRETRAIN, Mode.NET_ONLY)
        if pretrain_only is None or BLEU_BEAM.read(pretrain_only) is None:
            raise UserError(f"{path}: no pretrain-only test BLEU (beam): not a finished run of the study's first stage")
        pretrained[(result.net, result.seed)] = (path, result)
    return pretrained


def with_pretraining(result: ResultFile, pretrained: Pretrained, path: Path) -> ResultFile:
    """A run that skipped pretraining (``train.init_from``) with its stage-1 run's pretraining phase and wall time;
    a run that pretrained its own network, or has no stage-1 file, as it is."""
    if result.phases.get(PhaseName.PRETRAIN) or (result.net, result.seed) not in pretrained:
        return result
    source, stage1 = pretrained[(result.net, result.seed)]
    own, theirs = result.pretrain_checksum, stage1.pretrain_checksum
    if own and theirs and own != theirs:
        raise UserError(f"{path}: started from another network than {source} pretrained (checksum {own[:12]}, not {theirs[:12]})")
    walls = [w for w in (result.wall_seconds, stage1.wall_seconds) if w is not None]
    return replace(result, phases={PhaseName.PRETRAIN: stage1.phases[PhaseName.PRETRAIN], **result.phases},
                   wall_seconds=sum(walls) if walls else None)


def check_name(path: Path, result: ResultFile) -> None:
    """Refuse a result file whose name is not ``<dataset>-<net>-seed<k>`` of the run it holds."""
    if path.stem != f"{DATASET}-{result.net}-seed{result.seed}":
        raise UserError(f"{path}: its name does not match its run ({result.net} seed {result.seed})")


def check(path: Path) -> ResultFile:
    """A result file if it is a finished run of this study with every number the tables need."""
    result = read_result_file(path)
    if result.dataset != DATASET:
        raise UserError(f"{path}: a run on {result.dataset}, not {DATASET}: not a result of the translation study")
    check_name(path, result)
    for row, mode in CELLS:
        cell = result.cell(row, mode)
        if cell is None:
            raise UserError(f"{path}: no {row} / {mode} scores (a run of the study reports every row)")
        for search in ("test", "test_beam"):
            scores = test_scores(cell, search)
            missing = [key for key in ("perplexity", "bleu", "chrf") if not isinstance((scores or {}).get(key), (int, float))]
            if missing:
                raise UserError(f"{path}: {row} / {mode} has no {search} {', '.join(missing)}")
        if not isinstance(cell.epoch, int):
            raise UserError(f"{path}: {row} / {mode} has no selected epoch")
    return result


def values(runs: dict[int, ResultFile], cell: tuple[str, str], measure: Measure) -> list[float]:
    """``measure`` of ``cell`` over the seeds in order, where the result holds it."""
    row, mode = cell
    read = (measure.read(runs[seed].rows[row][Mode(mode)]) for seed in sorted(runs))
    return [float(v) for v in read if v is not None]


def order(runs: Runs) -> list[str]:
    return [net for net in NETWORKS if net in runs] + sorted(net for net in runs if net not in NETWORKS)


def seeds_text(seeds) -> str:
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(map(str, seeds)) or "-"


def missing_seeds(net: str, runs: dict[int, ResultFile]) -> list[int]:
    planned = NETWORKS[net].planned_seeds if net in NETWORKS else ()
    return [seed for seed in planned if seed not in runs]


# ---------------------------------------------------------------------------------------- tables


def seeds_table(runs: Runs) -> list[str]:
    lines = ["| network | planned seeds | seeds present | missing | cell |", "|---|---|---|---|---|"]
    for net in [*NETWORKS, *(n for n in order(runs) if n not in NETWORKS)]:
        present = runs.get(net, {})
        missing = missing_seeds(net, present)
        planned = seeds_text(NETWORKS[net].planned_seeds) if net in NETWORKS else "-"
        state = f"incomplete ({len(present)} of {len(NETWORKS[net].planned_seeds)})" if missing else "complete"
        lines.append(f"| {net} | {planned} | {seeds_text(present)} | {seeds_text(missing)} | {state} |")
    return lines


def status_line(runs: Runs) -> str:
    short = [f"{net} {len(runs.get(net, {}))}/{len(spec.planned_seeds)}"
             for net, spec in NETWORKS.items() if missing_seeds(net, runs.get(net, {}))]
    if short:
        return f"**Partial**: {', '.join(short)} seeds so far; the numbers below are those of the finished runs."
    return "Every network has its planned seeds."


def floor_verdict(net: str, pretrain_bleu_beam: list[float]) -> str:
    """Issue 61's floor of ``net`` and whether the seeds' mean pretrain-only test BLEU (beam) reaches it."""
    floor = NETWORKS[net].floor if net in NETWORKS else None
    return "-" if floor is None else f"{floor:.1f} {'✓' if statistics.mean(pretrain_bleu_beam) >= floor else '✗'}"


def convergence_table(runs: Runs) -> list[str]:
    lines = [
        "| network | seeds | pretrain-only BLEU beam | floor (issue 61) | pretraining epochs (mean, range; best) "
        f"| equal-budget − pretrain-only, BLEU beam (under {CONVERGED_GAIN}: converged) |",
        "|---|---|---|---|---|---|",
    ]
    for net in order(runs):
        seeds = runs[net]
        pretrain = values(seeds, (PRETRAIN, "net-only"), BLEU_BEAM)
        baseline = values(seeds, (BASELINE, "net-only"), BLEU_BEAM)
        floor_text = floor_verdict(net, pretrain)
        epochs = [cost.epochs for r in seeds.values() if (cost := r.phases.get(PhaseName.PRETRAIN))]
        best = [r.rows[PRETRAIN][Mode.NET_ONLY].epoch for r in seeds.values()]
        epoch_text = f"{statistics.mean(epochs):.1f} ({min(epochs)}–{max(epochs)}; best {min(best)}–{max(best)})" if epochs else "-"
        gains = [b - p for p, b in zip(pretrain, baseline)]
        gain = statistics.mean(gains)
        gain_text = f"{gain:+.2f} ({mean_std_text(gains)}) {'✓' if gain < CONVERGED_GAIN else '✗'}"
        lines.append(f"| {net} | {len(seeds)} | {mean_std_text(pretrain)} | {floor_text} | {epoch_text} | {gain_text} |")
    return lines


def scores_table(seeds: dict[int, ResultFile], measures: list[Measure]) -> list[str]:
    lines = ["| row | mode | seeds | " + " | ".join(m.title for m in measures) + " |", "|---|---|---|" + "---|" * len(measures)]
    for cell in CELLS:
        columns = [mean_std_text(values(seeds, cell, m), m.digits) for m in measures]
        lines.append(f"| {CELL_NAMES[cell]} | {cell[1]} | {len(seeds)} | " + " | ".join(columns) + " |")
    return lines


def reference_lengths(runs: Runs) -> str:
    lengths = {
        scores["reference_length"]
        for seeds in runs.values() for result in seeds.values() for row, mode in CELLS
        for search in ("test", "test_beam") if (scores := test_scores(result.rows[row][Mode(mode)], search) or {}).get("reference_length")
    }
    return ", ".join(f"{n:,}" for n in sorted(lengths)) or "-"


def cells_of(result: ResultFile) -> list[ResultCell]:
    """The (row, mode) scores a result file holds, in :data:`CELLS`' order (a stage-1 file: pretrain-only alone)."""
    return [cell for row, mode in CELLS if (cell := result.cell(row, mode)) is not None]


def test_sentences(runs: Runs) -> str:
    counts = {(test_scores(cell, "test") or {}).get("sentences")
              for seeds in runs.values() for result in seeds.values() for cell in cells_of(result)}
    return ", ".join(f"{n:,}" for n in sorted(counts - {None})) or "?"


def epochs_table(runs: Runs) -> list[str]:
    lines = [
        "| network | row | mode | selected epoch per seed | trained in its phase (epoch ≥ 1) "
        "| its starting point, chosen by dev (epoch 0) |",
        "|---|---|---|---|---|---|",
    ]
    for net in order(runs):
        seeds = runs[net]
        for cell in [(BASELINE, "net-only"), (DRGA, "net-only"), (DRGA, "with-agent")]:
            epochs = [seeds[seed].rows[cell[0]][Mode(cell[1])].epoch for seed in sorted(seeds)]
            per_seed = ", ".join(f"{epoch} (seed {seed})" for seed, epoch in zip(sorted(seeds), epochs))
            trained = len(epochs) - epochs.count(0)
            lines.append(f"| {net} | {CELL_NAMES[cell]} | {cell[1]} | {per_seed} | {trained} of {len(epochs)} "
                         f"| {epochs.count(0)} of {len(epochs)} |")
    return lines


def paper_table(runs: Runs) -> list[str]:
    lines = [
        "| network | paper (WMT14): BLEU | paper: ppl | ours: pretrain-only → DRGA with agent, BLEU beam "
        "| ours: equal-budget → DRGA with agent, BLEU beam | ours: pretrain-only → DRGA with agent, test ppl |",
        "|---|---|---|---|---|---|",
    ]
    for net in [n for n in order(runs) if n in NETWORKS]:
        paper, seeds = NETWORKS[net].paper, runs[net]

        def change(reference: tuple[str, str], measure: Measure, relative: bool = False, seeds=seeds) -> str:
            before, after = values(seeds, reference, measure), values(seeds, (DRGA, "with-agent"), measure)
            text = f"{statistics.mean(before):.2f} → {statistics.mean(after):.2f} ({statistics.mean(after) - statistics.mean(before):+.2f}"
            return text + (f", {100 * (statistics.mean(after) / statistics.mean(before) - 1):+.1f} %)" if relative else ")")

        (bleu0, bleu1), (ppl0, ppl1) = paper.bleu, paper.perplexity
        lines.append(
            f"| {net} | {bleu0} → {bleu1} ({bleu1 - bleu0:+.1f}) | {ppl0} → {ppl1} ({ppl1 - ppl0:+.1f}, {100 * (ppl1 / ppl0 - 1):+.1f} %) "
            f"| {change((PRETRAIN, 'net-only'), BLEU_BEAM)} | {change((BASELINE, 'net-only'), BLEU_BEAM)} "
            f"| {change((PRETRAIN, 'net-only'), PERPLEXITY, relative=True)} |"
        )
    return lines


def paired_tests(runs: Runs, measure: Measure) -> list[dict]:
    """Every (network, comparison) cell's paired test on ``measure``, with Holm's p over the cells that have a test."""
    entries = []
    for net in order(runs):
        for ours, reference in COMPARISONS:
            comparison = paired_comparison(values(runs[net], reference, measure), values(runs[net], ours, measure))
            entries.append({"net": net, "ours": ours, "reference": reference, "comparison": comparison})
    for entry, adjusted in zip(entries, holm_adjust([e["comparison"].p for e in entries])):
        entry["holm"] = adjusted
    return entries


def tests_table(runs: Runs, measure: Measure) -> list[str]:
    entries = paired_tests(runs, measure)
    tested = sum(not math.isnan(e["comparison"].p) for e in entries)
    better = "lower" if measure.lower_is_better else "higher"
    lines = [
        f"**{measure.title}** (DRGA − reference; {better} is better; 95% t interval; paired t-test over seeds; "
        f"Holm over the {tested} cells of this metric with a test; could detect: the smallest mean difference these seeds' spread "
        + (f"would show with 80% power at Holm's strictest level, 0.05/{tested}):" if tested else "would show, from two seeds on):"),
        "",
        "| network | comparison | seeds | Δ | 95% interval | p | p (Holm) | could detect | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in entries:
        comparison = entry["comparison"]
        start = f"| {entry['net']} | {CELL_NAMES[entry['ours']]} − {CELL_NAMES[entry['reference']]} | {comparison.n} |"
        if comparison.n < 2:
            only = f" {comparison.differences[0]:+.2f}" if comparison.differences else " -"
            lines.append(start + only + " | - | - | - | - | too few seeds |")
            continue
        mean = statistics.mean(comparison.differences)
        if not comparison.spread:
            lines.append(start + f" {mean:+.2f} | - | - | - | - | no spread (every seed differs by the same) |")
            continue
        low, high = t_interval(comparison.differences)
        improved = mean < 0 if measure.lower_is_better else mean > 0
        verdict = "tie" if not entry["holm"] < 0.05 else ("better" if improved else "worse")
        detectable = detectable_effect(comparison.n, 0.05 / tested) * statistics.stdev(comparison.differences)
        lines.append(start + f" {mean:+.2f} | [{low:+.2f}, {high:+.2f}] | {comparison.p:.3f} | {entry['holm']:.3f} | {detectable:.2f} "
                     f"| {verdict} |")
    return lines


def run_hours(result: ResultFile) -> float | None:
    """A run's wall time: its ``wall_seconds``, but at least its phases' seconds (which survive a resume)."""
    phases = sum(cost.seconds or 0.0 for cost in result.phases.values())
    seconds = max(result.wall_seconds or 0.0, phases)
    return seconds / 3600 if seconds else None


def runs_table(runs: Runs) -> list[str]:
    phases = ("pretrain", "baseline", "agent", "cotrain")
    lines = [
        "| network | seeds | commits | mean wall time per run (h) | epochs run (mean: " + ", ".join(phases) + ") |",
        "|---|---|---|---|---|",
    ]
    for net in order(runs):
        seeds = runs[net]
        commits = ", ".join(sorted({str(r.commit or "?") for r in seeds.values()}))
        hours = [h for r in seeds.values() if (h := run_hours(r)) is not None]
        epochs = [
            [cost.epochs if (cost := r.phases.get(phase)) else None for r in seeds.values()] for phase in phases
        ]
        epoch_text = ", ".join(f"{statistics.mean(e):.1f}" if all(x is not None for x in e) else "-" for e in epochs)
        lines.append(f"| {net} | {seeds_text(seeds)} | {commits} | {f'{statistics.mean(hours):.1f}' if hours else '-'} | {epoch_text} |")
    return lines


def read_units(folder: Path) -> list[dict]:
    """The CPU units' records (experiments/translation_cpu.py), in their names' order."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted((folder / UNITS).glob("*.json"))]


def units_table(units: list[dict]) -> list[str]:
    """Per CPU unit: its commit and threads, each stage's projected and measured wall clock, and whether it fit its budget."""
    def hours(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds / 3600:.2f}"

    lines = [
        "| unit | commit | threads | stage 1 h (projected) | stage 2 h (projected) | whole unit h | within 2 h 15 min | finished |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for unit in units:
        spent, projected = unit.get("stage_seconds") or {}, unit.get("projected_seconds") or {}
        source = unit.get("source") or {}
        commit = source.get("commit", "?")[:10] + ("-dirty" if source.get("code_dirty_paths") else "")
        total = sum(spent.values()) if spent else None
        fits = "-" if total is None or not unit.get("finished") else ("yes" if total <= UNIT_LIMIT_SECONDS else "**no**")
        lines.append(
            f"| {unit['net']} seed {unit['seed']} | {commit} | {unit['threads']} | {hours(spent.get('pretrain'))} "
            f"({hours(projected.get('pretrain'))}) | {hours(spent.get('drga'))} ({hours(projected.get('drga'))}) | {hours(total)} "
            f"| {fits} | {'yes' if unit.get('finished') else 'no'} |"
        )
    return lines


def pretraining_history(result: ResultFile) -> list[tuple[int, float]]:
    """(epoch, dev BLEU greedy, net-only) of every pretraining epoch a result file recorded."""
    return [(record.epoch, record.dev_number(Mode.NET_ONLY, "bleu")) for record in result.history
            if record.phase == PhaseName.PRETRAIN and record.dev_number(Mode.NET_ONLY, "bleu") is not None]


def stage_one(pretrained: Pretrained) -> Runs:
    """net → seed → the stage-1 result file."""
    nets: Runs = {}
    for (net, seed), (_, result) in sorted(pretrained.items()):
        nets.setdefault(net, {})[seed] = result
    return nets


def stage_one_table(stage1: Runs) -> list[str]:
    lines = [
        "| network | seeds pretrained | pretraining epochs (mean, range) | selected epoch | best dev BLEU greedy "
        "| pretrain-only test BLEU beam | floor (issue 61, mean of the seeds) | ended on its dev plateau |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for net in order(stage1):
        seeds = stage1[net]
        epochs = [r.phases[PhaseName.PRETRAIN].epochs for r in seeds.values()]
        selected = [r.rows[PRETRAIN][Mode.NET_ONLY].epoch for r in seeds.values()]
        best_dev = [max(bleu for _, bleu in history) for r in seeds.values() if (history := pretraining_history(r))]
        test = values(seeds, (PRETRAIN, "net-only"), BLEU_BEAM)
        floor_text = floor_verdict(net, test)
        lines.append(f"| {net} | {seeds_text(seeds)} | {statistics.mean(epochs):.1f} ({min(epochs)}–{max(epochs)}) "
                     f"| {min(selected)}–{max(selected)} | {mean_std_text(best_dev)} | {mean_std_text(test)} | {floor_text} "
                     f"| {plateau_text(seeds)} |")
    return lines


def stopped_early(result: ResultFile) -> bool:
    """Whether early stopping ended the run's pretraining."""
    pretraining = result.phases.get(PhaseName.PRETRAIN)
    return pretraining is not None and pretraining.stopped_early


def on_plateau(result: ResultFile) -> bool:
    """Pretraining ended on its dev plateau: early stopping ended it, or its last :data:`PLATEAU_EPOCHS` epochs lie
    within :data:`PLATEAU_BLEU` dev BLEU of its best (the cap ended it there)."""
    if stopped_early(result):
        return True
    curve = [bleu for _, bleu in pretraining_history(result)]
    return bool(curve) and max(curve) - min(curve[-PLATEAU_EPOCHS:]) <= PLATEAU_BLEU


def plateau_text(seeds: dict[int, ResultFile]) -> str:
    """Per seed: stopped early, at the cap on its plateau, or at the cap still rising (a miss, shown in the curves)."""
    def state(result: ResultFile) -> str:
        if stopped_early(result):
            return "early stop"
        pretraining = result.phases.get(PhaseName.PRETRAIN)
        cap = f"at its {pretraining.max_epochs}-epoch cap" if pretraining is not None else "at its cap"
        return f"{cap}, on its plateau" if on_plateau(result) else f"{cap}, dev BLEU **still rising**"

    return "; ".join(f"seed {seed}: {state(result)}" for seed, result in sorted(seeds.items()))


def after_pretraining(result: ResultFile, phases: tuple[str, ...], mode: str) -> list[tuple[int, float]]:
    """Dev BLEU (greedy, ``mode``) per epoch of ``phases`` in order, counted on from 1 after pretraining."""
    points = [record.dev_number(mode, "bleu") for phase in phases for record in result.history
              if record.phase == phase and record.dev_number(mode, "bleu") is not None]
    return list(enumerate(points, start=1))


@styled
def dev_curves(stage1: Runs, runs: Runs, path: Path) -> None:
    """Per network: dev BLEU per pretraining epoch of every seed (left) and, where stage 2 ran, per epoch after
    pretraining from the selected pretraining epoch's (right): the equal-budget baseline and DRGA with the agent."""
    nets = order({**stage1, **runs})
    figure = new_figure(DOC_WIDTH, 3.4 * len(nets) + 0.8, layout="constrained")
    axes = figure.subplots(len(nets), 2, squeeze=False)
    colors = [f"C{k}" for k in range(10)]
    for (left, right), net in zip(axes, nets):
        seeds = sorted(set(stage1.get(net, {})) | set(runs.get(net, {})))
        for seed in seeds:
            source = stage1.get(net, {}).get(seed) or runs[net][seed]
            history = pretraining_history(source)
            color = colors[seed % len(colors)]
            if history:
                left.plot(*zip(*history), color=color, marker=".", label=f"seed {seed}")
            if seed not in runs.get(net, {}) or not history:
                continue
            # the pretrained network every stage-2 row starts from: the selected pretraining epoch's
            pretrain_only = source.cell(PRETRAIN, Mode.NET_ONLY)
            selected = None if pretrain_only is None else pretrain_only.epoch
            start = dict(history).get(selected, max(bleu for _, bleu in history))
            for points, style, label in ((after_pretraining(runs[net][seed], ("baseline",), "net-only"), "-", "equal-budget baseline"),
                                         (after_pretraining(runs[net][seed], ("agent", "cotrain"), "with-agent"), "--",
                                          "DRGA with the agent (agent phase, then co-training)")):
                if points:
                    right.plot([0, *(x for x, _ in points)], [start, *(y for _, y in points)], color=color, linestyle=style, marker=".",
                               label=label if seed == seeds[0] else None)
        if net in NETWORKS:
            left.axhline(NETWORKS[net].floor, color="0.4", linestyle=":", linewidth=1.0,
                         label="issue 61's floor (test BLEU, beam), for scale")
        left.set_title(f"{net}: pretraining (stage 1)")
        left.set_xlabel("pretraining epoch")
        right.set_title(f"{net}: after pretraining (stage 2)")
        right.set_xlabel("epoch after pretraining (0: the pretrained network)")
        for axis in (left, right):
            axis.xaxis.set_major_locator(MaxNLocator(integer=True))
            axis.set_ylabel("dev BLEU (greedy)")
            axis.grid(alpha=0.3)
            if axis.get_legend_handles_labels()[0]:
                axis.legend(fontsize="small")
            elif axis is right:
                axis.text(0.5, 0.5, "stage 2 has not run", ha="center", va="center", transform=axis.transAxes)
    save_png(figure, path, reproducible=True)


def read_lines(path: Path) -> list[str]:
    """A gzip'd file of one sentence per line (its last line ends with a newline)."""
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    return text[:-1].split("\n") if text else []


def check_translations(folder: Path, runs: Runs, stage1: Runs) -> int | None:
    """Every test score the tables print (BLEU, chrF, the brevity penalty and lengths), recomputed with sacrebleu from the
    committed translations and compared with the run's own; the number of translation files checked, None where no
    translations are committed. A file missing, or a score that differs, is refused naming it."""
    root = folder / TRANSLATIONS
    if not root.is_dir():
        return None
    from drga.tasks.translation.metrics import score_translations  # here: sacrebleu only where translations are checked

    if not (root / REFERENCES).is_file():
        raise UserError(f"{root}: translations without the references they were scored against ({REFERENCES})")
    references = read_lines(root / REFERENCES)
    checked = 0
    for prefix, files in (("", runs), (f"{PRETRAINING}/", stage1)):
        for net, seeds in files.items():
            for seed, result in seeds.items():
                beam = (result.config.get("nmt") or {}).get("beam_size")
                for row, cells in result.rows.items():
                    for mode, cell in cells.items():
                        for key, search in (("test", "greedy"), ("test_beam", f"beam{beam}")):
                            scores_of_file = test_scores(cell, key)
                            if not scores_of_file:
                                continue
                            path = root / f"{prefix}{DATASET}-{net}-seed{seed}" / f"test.{ROW_PHASES[row]}.{mode}.{search}.de.gz"
                            if not path.is_file():
                                raise UserError(f"{path}: missing: the translations of {net} seed {seed}, {row} / {mode}, {search}")
                            scores = score_translations(read_lines(path), references).as_dict()
                            differ = [f"{name} {scores_of_file.get(name)} in the result file, {scores[name]} recomputed"
                                      for name in RECOMPUTED if scores_of_file.get(name) is not None
                                      and not math.isclose(scores_of_file[name], scores[name], abs_tol=1e-9)]
                            if differ:
                                raise UserError(f"{path}: its scores are not the run's: {'; '.join(differ)}")
                            checked += 1
    return checked


def translations_line(checked: int | None) -> str:
    if checked is None:
        return "No test translations are committed beside these result files: the scores are the runs' own."
    return (f"Every BLEU, chrF, brevity penalty and length below was recomputed with sacrebleu from the committed test translations "
            f"(`{TRANSLATIONS}/`, {checked} files, against the references there) and equals the run's own.")


def provenance_line(folder: Path, units: list[dict]) -> str:
    """How the runs were made: the CPU units (``units``, experiments/translation_cpu.py; each one's commit, threads and hours
    are in the units table), else the GPU calls' manifests (experiments/translation_gpu.py), else the CPU study's script."""
    if units:
        return (f"The runs: `bash experiments/translation_cpu.sh NET SEED`, one unit per seed on two CPU cores ({len(units)} unit(s): "
                "their commits, threads and hours are in the units table below).")
    manifests = [json.loads(path.read_text(encoding="utf-8")) for path in sorted((folder / MANIFESTS).glob("*.json"))]
    if not manifests:
        return "The runs: `bash experiments/translation_regime.sh`."
    def call(m: dict) -> str:
        budget = f"of a {m['budget_seconds']:.0f} s budget" if m["budget_seconds"] else "with no budget"
        return (f"commit {m['commit']}, {m['machine'].get('gpu') or 'CPU'}, torch {m['machine'].get('torch')}, MPS {m.get('mps')}, "
                f"{m['seconds']:.0f} s {budget}, {len(m['finished'])} of {len(m['planned'])} runs finished"
                + (", a rehearsal (SMOKE=1)" if m.get("smoke") else ""))

    calls = "; ".join(call(m) for m in manifests)
    return f"The runs: `bash experiments/translation_gpu.sh` in {len(manifests)} call(s) ({calls})."


def settings_line(runs: Runs) -> str:
    """The decoding settings and sacrebleu signatures the files record (several if the runs differ)."""
    beams = sorted({r.config.get("nmt", {}).get("beam_size") for s in runs.values() for r in s.values()} - {None})
    penalties = sorted({r.config.get("nmt", {}).get("length_penalty") for s in runs.values() for r in s.values()} - {None})
    signatures = sorted({
        f"BLEU {c.signatures.get('bleu_signature', '?')}; chrF {c.signatures.get('chrf_signature', '?')}"
        for s in runs.values() for r in s.values() for c in cells_of(r) if c.signatures
    })
    beam_text = f"beam search of {', '.join(map(str, beams)) or '?'} (length penalty {', '.join(map(str, penalties)) or '?'})"
    return f"Beam: {beam_text}. sacrebleu: {' | '.join(f'`{s}`' for s in signatures) or '-'}."


def stage_one_lines(stage1: Runs, curves: str) -> list[str]:
    """The page's section on the networks pretrained alone, and the dev curves (``curves``: the PNG's path from the page)."""
    lines = ["## Stage 1: the networks pretrained alone", ""]
    if stage1:
        lines += ["Early stopping on greedy dev BLEU over all 1,014 dev sentences; the selected epoch's network is every "
                  "stage-2 row's starting point.", "", *stage_one_table(stage1), ""]
    else:
        lines += ["No stage-1 file (the study's `pretrain/`): its runs pretrained their own networks.", ""]
    return [*lines, f"![dev BLEU per epoch: pretraining, and after it]({curves})", ""]


def units_lines(units: list[dict]) -> list[str]:
    """The section on the CPU units (`bash experiments/translation_cpu.sh NET SEED`), where the study ran that way."""
    if not units:
        return []
    return ["## The units: one seed's whole pipeline within a wall-clock budget", "",
            "Each unit ran `bash experiments/translation_cpu.sh NET SEED` on two CPU cores; projected: what the unit printed before "
            "it started (from the throughput probe, `probes/`, whose files record no commit; later from the finished units).", "",
            *units_table(units), ""]


def page(runs: Runs, stage1: Runs, command: str, curves: str,
         provenance: str = "The runs: `bash experiments/translation_regime.sh`.", translations: str = "",
         units: list[dict] | None = None) -> str:
    everything = {**stage1, **runs}
    lines = [
        f"<!-- generated by `{command}` from the committed result files; do not edit by hand -->",
        "",
        "# Translation in the paper's regime: Multi30k English→German (issues 39 and 61)",
        "",
        f"Multi30k task 1 test2016 ({test_sentences(everything)} sentences). BLEU and chrF are sacrebleu's on detokenized, cased output "
        "against the raw references; perplexity is per target subword under teacher forcing. Mean ± sample std over seeds. "
        f"{settings_line(everything)} {provenance}",
        "",
        *([translations, ""] if translations else []),
        *stage_one_lines(stage1, curves),
        *units_lines(units or []),
    ]
    if not runs:
        return "\n".join([*lines, "**Stage 2 has not run yet**: no baseline, agent or co-training result.", ""])
    lines += [
        status_line(runs),
        "",
        "## Seeds",
        "",
        *seeds_table(runs),
        "",
        "## Baselines and convergence",
        "",
        *convergence_table(runs),
        "",
        "## Test scores",
        "",
        "BP: BLEU's brevity penalty; hyp/ref length: the translations' tokens over the references' "
        f"({reference_lengths(runs)} tokens as BLEU counts them); P(stop early): teacher-forced, the probability of "
        "ending before the reference does (1 − Π(1 − P(</s>)) over its words), the network's own inclination to stop "
        "short apart from the search. N/L: the highlighted fraction of the source "
        "(eq. 5's N over L, teacher-forced); attention shift: TV(α, α′) = ½ Σ|α′ − α| of the agent's deterministic "
        "action, averaged over the arrays and sentences (with the agent only).",
    ]
    for net in order(runs):
        title = NETWORKS[net].title if net in NETWORKS else net
        lines += ["", f"### {net} ({title})", "", *scores_table(runs[net], SCORES), "", *scores_table(runs[net], LENGTHS_AND_SIGNALS)]
    lines += [
        "",
        "## Selected epochs",
        "",
        "The equal-budget baseline and co-training count their starting point as epoch 0: the pretrained network "
        "(and, with the agent, the agent phase's agent). A DRGA row selected at epoch 0 is no co-trained network.",
        "",
        *epochs_table(runs),
        "",
        "## The paper's Table V beside ours",
        "",
        "The paper's numbers are WMT14 English→German (../shared/paper/tables.md, Table V); ours are Multi30k, "
        "whose perplexities (another corpus and subword vocabulary) compare as relative changes only.",
        "",
        *paper_table(runs),
        "",
        "## Paired tests",
        "",
    ]
    for measure in TESTED:
        lines += [*tests_table(runs, measure), ""]
    lines += ["## Runs", "", *runs_table(runs), ""]
    return "\n".join(lines)


def command_line(folder: Path, out: str, figures: Path) -> str:
    """The command that rebuilds the page, as short as the defaults allow."""
    command = "python experiments/translation_tables.py"
    command += f" {folder}" if folder != Path(STUDY) else ""
    command += f" --figures {figures}" if figures != Path(FIGURES) else ""
    return command + (f" --out {out}" if out not in (PAGE, "-") else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, default=Path(STUDY), help=f"the study's result files (default {STUDY})")
    parser.add_argument("--out", default=PAGE, help=f"the page to write (default {PAGE}); - prints it instead")
    parser.add_argument("--figures", type=Path, default=Path(FIGURES), help=f"the folder of the dev curves' PNG (default {FIGURES})")
    args = parser.parse_args(argv)
    try:
        pretrained = load_pretraining(args.folder / PRETRAINING)
        runs = load(args.folder, pretrained)
        if not runs and not pretrained:
            raise UserError(f"no result files in {args.folder} or its {PRETRAINING}/ (experiments/translation_regime.sh writes them)")
        stage1 = stage_one(pretrained)
        curves = args.figures / "dev-curves.png"
        # printed (--out -), the page is a preview of the default page: its link is the one that page has, and no PNG is written
        relative = Path(os.path.relpath(curves, Path(PAGE if args.out == "-" else args.out).parent))
        checked = check_translations(args.folder, runs, stage1)
        units = read_units(args.folder)
        text = page(runs, stage1, command_line(args.folder, args.out, args.figures), relative.as_posix(),
                    provenance_line(args.folder, units), translations_line(checked) if checked is not None else "", units)
        if args.out != "-":
            args.figures.mkdir(parents=True, exist_ok=True)
            dev_curves(stage1, runs, curves)
    except UserError as error:
        print(f"translation_tables.py: {error}", file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
