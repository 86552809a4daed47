"""docs/results/agent_size.md: the paper's Table I (issue 57) from the committed result files alone.

    python experiments/agent_size_study.py tables      # or: python experiments/agent_size_tables.py

Reads ``experiments/results/agent-size/`` (the equal-budget baseline and each agent size, per seed;
``parameters.json``; ``pretrain/``, the pretrained network each seed's runs started from, compared
with the tuned study's pretraining of the same seed, ``tuned-regime/pretrain/``). Per agent size: parameters, the iterations to the selected
epochs, test accuracy in both modes, and the paired difference from the same seed's equal-budget
baseline (95% t interval, paired t-test, Holm over the sizes with a test), the paper's row beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)
from selected_epochs import StartCounts, fraction_text, start_counts
from study_stats import holm_adjust, paired_comparison, t_interval
from tuned_study import AGENT_SIZES

from drga.analysis.stats import mean_std_text
from drga.names import Mode, PhaseName, ResultRow
from drga.sweep.results import ResultFile, read_result_file

COMMAND = "python experiments/agent_size_study.py tables"
#: Table I's one cell.
CELL = ("lstm-sa", "subj")
#: Where the study's result files go, under ``--results`` (agent_size_study.py writes them, this module reads them).
STUDY = "agent-size"
#: The equal-budget baseline's folder beside the sizes'.
BASELINE = "baseline"
#: The rows of a result file the table reads.
PRETRAIN_ONLY, EQUAL_BUDGET, AGENT_ROW, DRGA = ResultRow.PRETRAIN_ONLY, ResultRow.EQUAL_BUDGET, ResultRow.AGENT_ON_FROZEN, ResultRow.DRGA
#: The paper's Table I (../shared/paper/tables.md): parameters (K), iterations, accuracy per size; its baseline row.
PAPER = {
    "1x100": (3315, 920, 93.8), "1x200": (3446, 1228, 94.3), "1x300": (3597, 1420, 94.9), "2x100": (3336, 1120, 94.8),
    "2x200": (3527, 1400, 95.0), "2x300": (3778, 1560, 95.5), "2x400": (4089, 1725, 94.9), "3x100": (3356, 1210, 94.0),
    "3x200": (3607, 1500, 94.5), "3x300": (3958, 1630, 94.9),
}
PAPER_BASELINE = (3212, 780, 93.5)


#: ``runs[kind][seed]``: a result file per kind of run (the baseline, each agent size, ``pretrain``) and seed.
Runs = dict[str, dict[int, ResultFile]]


def load(results: Path) -> Runs:
    """``runs[kind][seed]``: the result files of the baseline and of each size (kind ``pretrain``: the shared pretrain-only runs)."""
    runs: Runs = {}
    for kind in [BASELINE, *AGENT_SIZES]:  # (agent-size/pretrain/ is read below, for the seeds these have)
        runs[kind] = {}
        for path in sorted((results / STUDY / kind).glob("*.json")):
            result = read_result_file(path)
            if (result.net, result.dataset) != CELL:
                raise SystemExit(f"{path}: a run of {result.net}/{result.dataset}, not of Table I's {CELL[0]}/{CELL[1]}")
            runs[kind][result.seed] = result
    seeds = sorted({seed for by_seed in runs.values() for seed in by_seed})
    runs["pretrain"] = {}
    for seed in seeds:
        path = results / STUDY / "pretrain" / f"{CELL[1]}-{CELL[0]}-seed{seed}.json"
        if path.exists():
            runs["pretrain"][seed] = read_result_file(path)
    check_starts(runs)
    return runs


def pretrain_checksum_of(result: ResultFile | None) -> str | None:
    """The checksum of the network a run started from; None where the run, or its record of it, is missing."""
    return None if result is None else result.pretrain_checksum


def check_starts(runs: Runs) -> None:
    """Every run of a seed started from that seed's pretrained network: the table pairs them on it."""
    for seed, result in runs[BASELINE].items():
        if EQUAL_BUDGET not in result.rows:
            raise SystemExit(f"agent-size/{BASELINE} seed {seed} has no '{EQUAL_BUDGET}' row: its baseline phase did not run")
    for kind, by_seed in runs.items():
        for seed, result in by_seed.items():
            start = pretrain_checksum_of(runs["pretrain"].get(seed))
            if kind != "pretrain" and start is not None and result.pretrain_checksum != start:
                raise SystemExit(f"agent-size/{kind} seed {seed} started from another network than agent-size/pretrain's "
                                 f"seed {seed} (checksum {str(result.pretrain_checksum)[:12]} against {start[:12]})")


def same_training(ours: ResultFile, theirs: ResultFile | None) -> bool:
    """Whether two pretrain-only runs trained alike: every epoch's training loss and dev accuracy equal."""
    def curve(result: ResultFile) -> list[tuple[Any, Any]]:
        return [(record.train.get("task_loss"), record.dev_number(Mode.NET_ONLY, "accuracy"))
                for record in result.history if record.phase == PhaseName.PRETRAIN]

    return theirs is not None and bool(curve(ours)) and curve(ours) == curve(theirs)


def tuned_study_pretraining(results: Path, seeds: list[int]) -> dict[int, ResultFile]:
    """The tuned study's pretrain-only runs of these seeds (the same settings)."""
    found = {}
    for seed in seeds:
        path = results / "tuned-regime" / "pretrain" / f"{CELL[1]}-{CELL[0]}-seed{seed}.json"
        if path.exists():
            found[seed] = read_result_file(path)
    return found


def accuracy(result: ResultFile | None, row: str, mode: Mode | str) -> float | None:
    """The test accuracy (%) of a run's ``row`` in ``mode``; None where there is no run or no such cell."""
    score = None if result is None else result.test_score(row, mode)
    return None if score is None else 100.0 * score


def selected_epoch(result: ResultFile, row: str, mode: Mode) -> int | None:
    """The epoch ``row`` was read at in ``mode``; None where the run has no such cell."""
    cell = result.cell(row, mode)
    return None if cell is None else cell.epoch


def iterations(result: ResultFile, steps: int) -> tuple[int, int] | None:
    """(agent, co-training) updates up to the epochs the with-agent model was selected at: the agent phase's best epoch,
    then co-training's (0: the agent phase's model kept)."""
    agent, cotrain = selected_epoch(result, AGENT_ROW, Mode.WITH_AGENT), selected_epoch(result, DRGA, Mode.WITH_AGENT)
    return None if agent is None or cotrain is None else (agent * steps, cotrain * steps)


def mean_text(values: list[int] | list[float], digits: int = 0) -> str:
    return "-" if not values else f"{statistics.mean(values):,.{digits}f}"


def comparison_row(entry: dict[str, Any]) -> str:
    """Δ, its interval, p, Holm's p and the verdict of one size against the baseline."""
    if entry["n"] < 2:
        return "| - | - | - | too few seeds |"
    mean = round(statistics.mean(entry["diff"]), 9) + 0.0  # k/n accuracies: a zero mean prints +0.00, not -0.00
    if not entry["spread"]:
        return f"| {mean:+.2f} (no spread) | - | - | no test |"
    low, high = t_interval(entry["diff"])
    verdict = "tie" if not entry["holm"] < 0.05 else ("better" if mean > 0 else "worse")
    return f"| {mean:+.2f} [{low:+.2f}, {high:+.2f}] | {entry['p']:.3f} | {entry['holm']:.3f} | {verdict} |"


def compared(runs: Runs, mode: Mode | str) -> dict[str, dict[str, Any]]:
    """Per size, DRGA's test accuracy in ``mode`` minus the same seed's equal-budget baseline, with Holm over the sizes."""
    entries = {}
    for size in AGENT_SIZES:
        pairs = [(a, b) for seed in sorted(runs[size]) if (a := accuracy(runs[BASELINE].get(seed), EQUAL_BUDGET, Mode.NET_ONLY)) is not None
                 and (b := accuracy(runs[size][seed], DRGA, mode)) is not None]
        comparison = paired_comparison([a for a, _ in pairs], [b for _, b in pairs])
        entries[size] = {"n": comparison.n, "diff": list(comparison.differences), "p": comparison.p, "spread": comparison.spread}
    for entry, adjusted in zip(entries.values(), holm_adjust([e["p"] for e in entries.values()])):
        entry["holm"] = adjusted
    return entries


def main_table(runs: Runs, parameters: dict[str, Any]) -> list[str]:
    steps = int(parameters.get("steps_per_epoch", 0))
    network = parameters.get("network")
    with_agent, net_only = compared(runs, Mode.WITH_AGENT), compared(runs, Mode.NET_ONLY)
    tested = sum(not math.isnan(e["p"]) for e in with_agent.values())
    lines = [
        f"| agent | parameters (network + agent) | paper: parameters | agent / co-training iterations to the selected epoch "
        f"| paper: iterations | seeds | test, DRGA with agent | test, DRGA net-only | paper: accuracy (Δ) "
        f"| with agent − baseline [95%] | p | p (Holm, {tested} sizes) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    baseline_accuracies = [v for r in runs[BASELINE].values() if (v := accuracy(r, EQUAL_BUDGET, Mode.NET_ONLY)) is not None]
    baseline_epochs = [e * steps for r in runs[BASELINE].values() if (e := selected_epoch(r, EQUAL_BUDGET, Mode.NET_ONLY)) is not None]
    network_text = f"{network / 1000:,.0f}K" if network else "-"
    updates = f"{mean_text(baseline_epochs)} (the network's extra updates)" if baseline_epochs and steps else "-"
    lines.append(f"| none: equal-budget baseline | {network_text} | {PAPER_BASELINE[0]:,}K | {updates} | {PAPER_BASELINE[1]:,} "
                 f"| {len(baseline_accuracies)} | - | {mean_std_text(baseline_accuracies)} | {PAPER_BASELINE[2]} | | | | |")
    for size in AGENT_SIZES:
        results = [runs[size][seed] for seed in sorted(runs[size])]
        agent = parameters.get("agent", {}).get(size)
        total = f"{(network + agent) / 1000:,.0f}K ({agent / 1000:,.0f}K)" if network and agent else "-"
        counted = [its for r in results if (its := iterations(r, steps)) is not None] if steps else []
        its = f"{mean_text([a for a, _ in counted])} / {mean_text([c for _, c in counted])}" if counted else "-"
        paper = PAPER[size]
        lines.append(
            f"| {size.replace('x', ' × ')} | {total} | {paper[0]:,}K | {its} | {paper[1]:,} | {len(results)} "
            f"| {mean_std_text([v for r in results if (v := accuracy(r, DRGA, Mode.WITH_AGENT)) is not None])} "
            f"| {mean_std_text([v for r in results if (v := accuracy(r, DRGA, Mode.NET_ONLY)) is not None])} "
            f"| {paper[2]} ({paper[2] - PAPER_BASELINE[2]:+.1f}) {comparison_row(with_agent[size])}"
        )
    lines += ["", "DRGA net-only − the equal-budget baseline (the co-trained network without the agent), the same test:", "",
              "| agent | seeds | net-only − baseline [95%] | p | p (Holm) | verdict |", "|---|---|---|---|---|---|"]
    for size in AGENT_SIZES:
        lines.append(f"| {size.replace('x', ' × ')} | {net_only[size]['n']} {comparison_row(net_only[size])}")
    return lines


def provenance(runs: Runs, parameters: dict[str, Any], tuned: dict[int, ResultFile]) -> list[str]:
    commits = sorted({r.commit for kind, by_seed in runs.items() if kind != "pretrain" for r in by_seed.values()})
    pretrain_commits = sorted({r.commit for r in runs["pretrain"].values()})
    seeds = sorted({seed for kind, by_seed in runs.items() if kind != "pretrain" for seed in by_seed})
    hours = sum((r.wall_seconds or 0.0) for kind, by_seed in runs.items() if kind != "pretrain" for r in by_seed.values()) / 3600
    pretrain_only = [v for r in runs["pretrain"].values() if (v := accuracy(r, PRETRAIN_ONLY, Mode.NET_ONLY)) is not None]
    # (a seed the tuned study did not run compares None with the run's checksum: equal only where that is missing too)
    same_checksum = sum(r.pretrain_checksum == pretrain_checksum_of(tuned.get(s)) for s, r in runs["pretrain"].items())
    return [
        f"Seeds {', '.join(map(str, seeds)) or '-'}; code {', '.join(commits) or '-'} (the runs after pretraining), "
        f"{', '.join(pretrain_commits) or '-'} (the pretrained networks, `agent-size/pretrain/`). Every run of a seed starts "
        f"from that seed's network (checked from the files). {hours:.2f} wall hours in all after pretraining (the files' "
        f"`wall_seconds`). The files record no thread count: {threads_text(runs)}.",
        "",
        "The pretraining has the tuned study's settings (`tuned-regime/pretrain/`, code 021f4d1), so each seed's network "
        f"should be that study's: in {sum(same_training(r, tuned.get(s)) for s, r in runs['pretrain'].items())} of "
        f"{len(runs['pretrain'])} seeds every epoch's training loss and dev accuracy are equal to that study's, and in "
        f"{same_checksum} "
        "the checkpoint's tensor checksum is. The files do not say why the checksums differ where the recorded histories "
        "agree.",
        "",
        f"The pretrained network alone (before the equal-budget baseline's at most 8 further epochs): test "
        f"{mean_std_text(pretrain_only)} over {len(pretrain_only)} seed{'s' if len(pretrain_only) != 1 else ''}.",
        "",
        f"Iterations are updates of batch {parameters.get('batch_size', '-')}: {parameters.get('steps_per_epoch', '-')} per epoch "
        f"({parameters.get('train_examples', '-')} training sentences; these counts are `agent-size/parameters.json`'s"
        f"{', which records no commit' if not parameters.get('commit') else ''}). The paper does not say how it counts them; "
        "ours count the agent phase to its selected epoch and co-training to the epoch the with-agent model was selected at (0: the agent "
        "phase's model was kept); the baseline's are the network's updates beyond pretraining to its selected epoch.",
    ]


def threads_text(runs: Runs) -> str:
    """What the result files' ``run.threads`` say (0: torch's default, whatever the environment set)."""
    found = [(r.config.get("run") or {}).get("threads") for by_seed in runs.values() for r in by_seed.values()]
    counts = {value: found.count(value) for value in sorted(set(found), key=str)}
    return "; ".join((f"`run.threads` is {value} in {count} of {len(found)} files" if value is not None else
                      f"no `run.threads` in {count} of {len(found)} files") + (" (torch's default)" if value == 0 else "")
                     for value, count in counts.items()) or "no file"


def baseline_seeds(runs: Runs) -> list[str]:
    """What the equal-budget baseline is in each seed: its epochs, the epoch it kept, and whether that is the pretrained network."""
    lines = [
        "| seed | baseline epochs run | epoch kept (0: the pretrained network) | baseline test | pretrained network's test "
        "| the baseline in this seed |",
        "|---|---|---|---|---|---|",
    ]
    for seed, result in sorted(runs[BASELINE].items()):
        phase = result.phases.get(PhaseName.BASELINE)
        epoch = selected_epoch(result, EQUAL_BUDGET, Mode.NET_ONLY)
        baseline = accuracy(result, EQUAL_BUDGET, Mode.NET_ONLY)
        pretrained = accuracy(runs["pretrain"].get(seed), PRETRAIN_ONLY, Mode.NET_ONLY)
        stopped = ", stopped early" if phase is not None and phase.stopped_early else ""
        run_epochs = "- of at most -" if phase is None else f"{phase.epochs} of at most {phase.max_epochs}"
        what = ("the pretrained network itself" if epoch == 0 else
                f"the network after {epoch} further epoch{'s' if epoch != 1 else ''}" if epoch is not None else "-")
        lines.append(f"| {seed} | {run_epochs}{stopped} | "
                     f"{'-' if epoch is None else epoch} | {'-' if baseline is None else f'{baseline:.2f}'} "
                     f"| {'-' if pretrained is None else f'{pretrained:.2f}'} | {what} |")
    return lines


def start_lines(runs: Runs) -> list[str]:
    """Per size and over all sizes, the runs whose DRGA rows were read at co-training epoch 0; then the baseline's."""
    lines = [
        "| agent | runs | DRGA with agent = agent on the frozen network (co-training epoch 0) "
        "| DRGA net-only = pretrained network (co-training epoch 0) | both |",
        "|---|---|---|---|---|",
    ]
    total = StartCounts()
    for size in AGENT_SIZES:
        # (selected_epochs.py reads a result file's content, as to_dict writes it)
        count = start_counts(runs[size][seed].to_dict() for seed in sorted(runs[size]))
        total += count
        lines.append(f"| {size.replace('x', ' × ')} | {count.runs} | {fraction_text(count.with_agent, count.runs)} "
                     f"| {fraction_text(count.net_only, count.runs)} | {fraction_text(count.both, count.runs)} |")
    lines.append(f"| **all** | {total.runs} | {fraction_text(total.with_agent, total.runs)} | {fraction_text(total.net_only, total.runs)} "
                 f"| {fraction_text(total.both, total.runs)} |")
    kept = [seed for seed, r in sorted(runs[BASELINE].items()) if selected_epoch(r, EQUAL_BUDGET, Mode.NET_ONLY) == 0]
    lines += ["", f"The equal-budget baseline kept the pretrained network (its epoch 0) in {len(kept)} of {len(runs[BASELINE])} "
                  f"seeds{' (' + ', '.join(map(str, kept)) + ')' if kept else ''}: every size's comparison in those seeds is "
                  "against the pretrained network itself."]
    return lines


def page(results: Path, out: Path) -> str:
    runs = load(results)
    parameters_file = results / STUDY / "parameters.json"
    parameters = json.loads(parameters_file.read_text(encoding="utf-8")) if parameters_file.exists() else {}
    lines = [
        "# The agent's size: the paper's Table I (LSTM+SA on SUBJ)",
        "",
        f"Generated by `{COMMAND}` from `experiments/results/{STUDY}/` and, for the comparison of the pretraining, "
        "`experiments/results/tuned-regime/pretrain/`; "
        "do not edit by hand. The runs: `python experiments/agent_size_study.py run --seeds 0-4` (its `--dry-run` prints the "
        "projected cost first).",
        "",
        "The classification study's paper regime (`experiments/configs/paper_regime.toml`: GloVe 6B 50d, 300-unit LSTM+SA, "
        "dropout 0.5, 3 agent epochs then 5 co-training epochs, SUBJ's tuned √L0 = 0.5 and δ = 0.85), with the agent's MLP "
        "varied as in the paper's Table I. The comparison is paired by seed: each size, and the equal-budget baseline "
        "(the network alone for at most the same 8 epochs, stopped early on dev and read at its best dev epoch, which may be "
        "its epoch 0: the pretrained network itself; per seed below), start from the same pretrained network.",
        "",
        *provenance(runs, parameters, tuned_study_pretraining(results, sorted(runs["pretrain"]))),
        "",
        "## Table I, ours beside the paper's",
        "",
        *main_table(runs, parameters),
        "",
        "## The baseline in each seed",
        "",
        *baseline_seeds(runs),
        "",
        "## Selected epochs: how often co-training kept its starting point",
        "",
        "Runs whose row was read at co-training epoch 0, the starting point, which competes for the best dev score: DRGA's "
        "with-agent row is then the agent on the frozen pretrained network, its net-only row the pretrained network.",
        "",
        *start_lines(runs),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default="experiments/results")
    parser.add_argument("--out", default="docs/results/agent_size.md")
    args = parser.parse_args(argv)
    text = page(Path(args.results), Path(args.out))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
