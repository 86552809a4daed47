"""Tables of the paper-regime study, rebuilt from the committed per-run result files alone.

    python experiments/regime_tables.py experiments/results/paper-regime [more result folders] \\
        [--out docs/results/paper-regime.md] [--curves docs/results/paper-regime-curves.png]

Reads every ``<dataset>-<net>-seed<k>.json`` that ``experiments/sweep.py --results`` wrote and
prints three tables (markdown). A folder of pretrain-only runs (the Transformer's SST-5 in
``experiments/paper_regime.sh``) adds to the first table only, its seeds counted as such; a full
run of the same seed replaces its pretrain-only file.

1. **Baselines and convergence**: test accuracy of the pretrained network (mean ± std over
   seeds) beside issue 15's targets and the paper's number, the pretraining epochs early
   stopping needed, and the equal-budget baseline's gain over pretrain-only (under 0.5 points
   on average means the network was close to convergence when the agent started).
2. **DRGA against its baselines**: the paper's baseline and DRGA beside ours; Δ of DRGA (with
   the agent, and net-only) against the equal-budget baseline and against pretrain-only (the
   paper's own comparison) in separate columns, each with its 95% t interval, the paired t-test
   over seeds and Holm's correction across every cell of that column.
3. **Selected epochs**: per cell and overall, how many runs read DRGA's rows at co-training
   epoch 0 (with the agent: the agent on the frozen network; net-only: the pretrained network)
   and the equal-budget baseline at its epoch 0 (experiments/selected_epochs.py).
4. **Runs**: seeds per cell, the commits the runs' code was at, mean wall time (a run that started
   from a pretrain-only run's network counts that run's pretraining in both; see ``run_seconds``).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import checkout  # noqa: F401  (first: this checkout's drga)
from selected_epochs import start_counts_by_cell, start_table
from study_stats import holm_adjust, paired_comparison, t_interval

from drga.analysis.stats import mean_std_text
from drga.names import Mode, PhaseName, ResultRow
from drga.sweep.results import ResultFile, read_result_file

PRETRAIN, BASELINE, AGENT, DRGA = ResultRow.PRETRAIN_ONLY, ResultRow.EQUAL_BUDGET, ResultRow.AGENT_ON_FROZEN, ResultRow.DRGA

#: Issue 15's targets for the pretrained baselines (test accuracy %, GloVe 6B 50d, mean of 3 seeds).
TARGETS = {
    ("lstm-sa", "mr"): 79.0, ("lstm-sa", "subj"): 92.0, ("lstm-sa", "sst"): 45.0,
    ("cnn-sa", "mr"): 78.0, ("cnn-sa", "subj"): 91.5, ("cnn-sa", "sst"): 44.0,
    ("transformer", "mr"): 75.0, ("transformer", "subj"): 90.0, ("transformer", "sst"): 42.0,
}
#: The paper's Tables II and III (../shared/paper/tables.md): (baseline, +DRGA); SST is SST-5.
PAPER = {
    ("lstm-sa", "mr"): (80.1, 82.4), ("lstm-sa", "sst"): (48.3, 50.6), ("lstm-sa", "subj"): (93.5, 95.5),
    ("cnn-sa", "mr"): (81.9, 82.3), ("cnn-sa", "sst"): (48.5, 49.5), ("cnn-sa", "subj"): (93.3, 95.6),
    ("transformer", "mr"): (81.5, 82.4), ("transformer", "sst"): (48.2, 49.9), ("transformer", "subj"): (94.0, 95.8),
    ("disan", "mr"): (82.9, 82.2), ("disan", "sst"): (51.7, 52.7), ("disan", "subj"): (94.2, 95.5),
    # Table III (task-specific attention); the paper's SemEval-2015 laptop set is not available here
    ("atae-lstm", "semeval14-laptop"): (68.7, 70.0), ("atae-lstm", "semeval14-restaurant"): (77.2, 78.1),
    ("atae-lstm", "semeval15-restaurant"): (74.7, 76.2),
    ("ian", "semeval14-laptop"): (72.1, 74.7), ("ian", "semeval14-restaurant"): (78.6, 80.8), ("ian", "semeval15-restaurant"): (75.5, 75.3),
}


@dataclass(frozen=True)
class JoinedRun(ResultFile):
    """A full run that started from a pretrain-only run's network (``train.init_from``), with that run's pretraining
    added (:func:`with_pretraining_of`): ``pretrained_at`` is the commit the pretraining ran at."""

    pretrained_at: str = "?"


#: (net, dataset) → seed → the run's result file.
Cells = dict[tuple[str, str], dict[int, ResultFile]]


def load(folders: list[Path]) -> Cells:
    """(net, dataset) → seed → result file.

    A seed may have a file in two folders: a pretrain-only run (``paper-regime-pretrain-only``)
    and the full run that repeats its pretraining, or that started from the pretrain-only run's
    network (``train.init_from``). The one with more rows is kept, so the tables never mix two
    runs' numbers; a full run that started from the other's network takes over its pretraining
    record (:func:`with_pretraining_of`). Both should hold the same pretrained network (equal
    ``pretrain_checksum``); a warning says when they do not (e.g. other thread counts), as the
    pretrain-only number shown before the full run existed then was not the full run's. Two files
    of a seed with the same rows are an error: nothing says which to keep."""
    cells: Cells = defaultdict(dict)
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            result = read_result_file(path)
            runs, seed = cells[(result.net, result.dataset)], result.seed
            if seed in runs:
                kept = runs[seed]
                if set(kept.rows) == set(result.rows):
                    raise SystemExit(f"{path}: seed {seed} of {result.net}/{result.dataset} has two result files of the same kind")
                if kept.pretrain_checksum != result.pretrain_checksum:
                    print(f"warning: {path}: seed {seed}'s pretrain-only and full runs pretrained different networks; "
                          "the full run is used", file=sys.stderr)
                full, pretrain_only = (kept, result) if len(kept.rows) >= len(result.rows) else (result, kept)
                result = with_pretraining_of(full, pretrain_only)
            runs[seed] = result
    return dict(cells)


def with_pretraining_of(full: ResultFile, pretrain_only: ResultFile) -> ResultFile:
    """A full run that skipped pretraining (``train.init_from``) on the pretrain-only run's network,
    with that run's pretraining added: its epochs and dev curve, its wall time in the run's, its
    commit in ``pretrained_at`` (a :class:`JoinedRun`). Any other full run is returned as it is."""
    pretrain = pretrain_only.phases.get(PhaseName.PRETRAIN)
    same_network = full.pretrain_checksum == pretrain_only.pretrain_checksum
    if not pretrain or not same_network or full.phases.get(PhaseName.PRETRAIN):
        return full
    pretraining = [record for record in pretrain_only.history if record.phase == PhaseName.PRETRAIN]
    return JoinedRun(**{
        **{field.name: getattr(full, field.name) for field in dataclasses.fields(ResultFile)},
        "phases": {PhaseName.PRETRAIN: pretrain, **full.phases},
        "history": pretraining + full.history,
        "wall_seconds": (full.wall_seconds or 0.0) + (pretrain_only.wall_seconds or 0.0),
        "pretrained_at": pretrain_only.commit or "?",
    })


def borrow_baselines(cells: Cells, reference: Cells) -> int:
    """Fill the pretrain-only and equal-budget rows of runs that started from another run's pretrained
    network (``train.init_from``) with that run's, when both started from the same network (equal
    ``pretrain_checksum``); the number of runs filled. A run whose network differs is an error."""
    filled = 0
    for key, runs in cells.items():
        for seed, result in list(runs.items()):
            if BASELINE in result.rows:
                continue
            source = reference.get(key, {}).get(seed)
            if source is None:
                continue
            if not result.pretrain_checksum or result.pretrain_checksum != source.pretrain_checksum:
                raise SystemExit(f"{result.name}: its pretrained network is not the reference run's; it cannot borrow its baselines")
            rows = {**{row: source.rows[row] for row in (PRETRAIN, BASELINE) if row in source.rows}, **result.rows}
            # the reference's pretraining, after the run's own phases, where the run has none of its own
            borrowed = source.phases.get(PhaseName.PRETRAIN)
            phases = {**result.phases, PhaseName.PRETRAIN: borrowed} if borrowed and PhaseName.PRETRAIN not in result.phases \
                else result.phases
            runs[seed] = dataclasses.replace(result, rows=rows, phases=phases)
            filled += 1
    return filled


def is_pretrain_only(result: ResultFile) -> bool:
    """A run of pretraining alone (the Transformer's SST-5 in ``paper-regime-pretrain-only``)."""
    return set(result.rows) == {PRETRAIN}


def test_accuracy(result: ResultFile, row: str, mode: Mode | str) -> float | None:
    """The test accuracy (%) of a result file's ``row`` in ``mode``; None if the run has no such cell."""
    score = result.test_score(row, mode)
    return None if score is None else 100.0 * score


def order(cells: dict) -> list[tuple[str, str]]:
    nets = ["lstm-sa", "cnn-sa", "transformer", "disan", "atae-lstm", "ian", "han"]
    datasets = ["mr", "sst", "subj", "semeval14-laptop", "semeval14-restaurant", "semeval15-restaurant", "movie-reviews"]
    rank = lambda key: (nets.index(key[0]) if key[0] in nets else 99, datasets.index(key[1]) if key[1] in datasets else 99, key)  # noqa: E731
    return sorted(cells, key=rank)


def baseline_table(cells: Cells) -> list[str]:
    lines = [
        "| network | data set | seeds | majority class | pretrain-only test | target | paper | pretraining epochs (mean, range) "
        "| equal-budget baseline − pretrain-only (points) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in order(cells):
        runs = cells[key]
        pretrain = [v for r in runs.values() if (v := test_accuracy(r, PRETRAIN, Mode.NET_ONLY)) is not None]
        gains = [b - p for r in runs.values()
                 if (p := test_accuracy(r, PRETRAIN, Mode.NET_ONLY)) is not None
                 and (b := test_accuracy(r, BASELINE, Mode.NET_ONLY)) is not None]
        epochs = [cost.epochs for r in runs.values() if (cost := r.phases.get(PhaseName.PRETRAIN))]
        best = [r.rows[PRETRAIN][Mode.NET_ONLY].epoch for r in runs.values() if PRETRAIN in r.rows]
        target = TARGETS.get(key)
        met = "" if target is None or not pretrain else (" ✓" if statistics.mean(pretrain) >= target else " ✗")
        paper = PAPER.get(key, (None, None))[0]
        epoch_text = f"{statistics.mean(epochs):.1f} ({min(epochs)}–{max(epochs)}; best {min(best)}–{max(best)})" if epochs else "-"
        gain_text = f"{statistics.mean(gains):+.2f} ({mean_std_text(gains)})" if gains else "-"
        majority = next((r.majority_class["test_accuracy"] for r in runs.values() if r.majority_class), None)
        majority_text = f"{100 * majority:.2f}" if majority is not None else "-"
        pretrain_only = sum(map(is_pretrain_only, runs.values()))
        seeds_text = f"{len(runs)} ({pretrain_only} pretrain-only)" if pretrain_only else f"{len(runs)}"
        lines.append(
            f"| {key[0]} | {key[1]} | {seeds_text} | {majority_text} | {mean_std_text(pretrain)} | {target if target else '-'}{met} "
            f"| {paper if paper else '-'} | {epoch_text} | {gain_text} |"
        )
    return lines


def comparisons(cells: Cells) -> list[tuple[str, tuple[str, str], tuple[str, str]]]:
    return [
        ("DRGA with agent − equal-budget baseline", (DRGA, Mode.WITH_AGENT), (BASELINE, Mode.NET_ONLY)),
        ("DRGA net-only − equal-budget baseline", (DRGA, Mode.NET_ONLY), (BASELINE, Mode.NET_ONLY)),
        ("DRGA with agent − pretrain-only (the paper's comparison)", (DRGA, Mode.WITH_AGENT), (PRETRAIN, Mode.NET_ONLY)),
    ]


def drga_keys(cells: Cells) -> list[tuple[str, str]]:
    """The cells, in the tables' order, that have a run with DRGA's rows (not only pretrain-only runs)."""
    return [key for key in order(cells) if any(DRGA in r.rows for r in cells[key].values())]


def comparison_stats(cells: Cells) -> dict[str, list[dict]]:
    """Per comparison (its title), per cell with DRGA's rows: the paired differences over seeds, p, the spread and
    Holm's p over the cells of that comparison (what :func:`comparison_lines` prints; experiments/answers.py reads it)."""
    keys = drga_keys(cells)
    stats: dict[str, list[dict]] = {}
    for title, ours, reference in comparisons(cells):
        entries = []
        for key in keys:
            pairs = [(test_accuracy(r, *reference), test_accuracy(r, *ours)) for r in cells[key].values()]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            comparison = paired_comparison([a for a, _ in pairs], [b for _, b in pairs])
            entries.append({"key": key, "n": comparison.n, "diff": list(comparison.differences), "p": comparison.p,
                            "spread": comparison.spread})
        for entry, adjusted in zip(entries, holm_adjust([e["p"] for e in entries])):
            entry["holm"] = adjusted
        stats[title] = entries
    return stats


def drga_table(cells: Cells) -> list[str]:
    keys = drga_keys(cells)
    stats = comparison_stats(cells)
    header = (
        "| network | data set | seeds | paper: baseline → DRGA | pretrain-only | equal-budget baseline | DRGA with agent | DRGA net-only |"
    )
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    for key in keys:
        runs = [r for r in cells[key].values() if DRGA in r.rows]  # not the pretrain-only runs of the cell

        def column(row: str, mode: Mode, runs=runs) -> str:
            return mean_std_text([v for r in runs if (v := test_accuracy(r, row, mode)) is not None])

        paper = PAPER.get(key)
        paper_text = f"{paper[0]} → {paper[1]} ({paper[1] - paper[0]:+.1f})" if paper else "-"
        lines.append(
            f"| {key[0]} | {key[1]} | {len(runs)} | {paper_text} | {column(PRETRAIN, Mode.NET_ONLY)} "
            f"| {column(BASELINE, Mode.NET_ONLY)} | {column(DRGA, Mode.WITH_AGENT)} | {column(DRGA, Mode.NET_ONLY)} |"
        )
    for title, entries in stats.items():
        lines += comparison_lines(title, entries)
    return lines


def comparison_lines(title: str, entries: list[dict]) -> list[str]:
    """One comparison's table: per cell the mean difference, its 95% t interval, p, Holm's p and the verdict."""
    lines = [
        "",
        f"**{title}** (points; 95% t interval; paired t-test over seeds; Holm over the "
        f"{sum(not math.isnan(e['p']) for e in entries)} cells with a test):",
        "",
        "| network | data set | seeds | Δ | 95% interval | p | p (Holm) | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in entries:
        cell = f"| {entry['key'][0]} | {entry['key'][1]} | {entry['n']} |"
        if entry["n"] < 2:
            lines.append(cell + (f" {entry['diff'][0]:+.2f}" if entry["diff"] else " -") + " | - | - | - | too few seeds |")
            continue
        mean = statistics.mean(entry["diff"])
        if not entry["spread"]:
            lines.append(cell + f" {mean:+.2f} | - | - | - | no spread (every seed differs by the same) |")
            continue
        low, high = t_interval(entry["diff"])
        verdict = "tie" if not entry["holm"] < 0.05 else ("better" if mean > 0 else "worse")
        lines.append(cell + f" {mean:+.2f} | [{low:+.2f}, {high:+.2f}] | {entry['p']:.3f} | {entry['holm']:.3f} | {verdict} |")
    return lines


def selection_section(cells: Cells) -> list[str]:
    """How often co-training (and the equal-budget baseline) kept its starting point; nothing when no run co-trained."""
    # (selected_epochs.py reads a result file's content, as to_dict writes it)
    counts = start_counts_by_cell({key: [run.to_dict() for run in runs.values()] for key, runs in cells.items()})
    if not counts:
        return []
    return [
        "### Selected epochs: how often co-training kept its starting point",
        "",
        "Runs whose row was read at its phase's epoch 0, the starting point, which competes for the best dev score:",
        "DRGA's with-agent row is then the agent on the frozen pretrained network, its net-only row the pretrained",
        "network; the equal-budget baseline's, the pretrained network.",
        "",
        *start_table(counts, order(cells)),
        "",
    ]


def run_seconds(run: ResultFile) -> float | None:
    """A run's wall time: its ``wall_seconds``, but at least the sum of its phases' seconds.

    The phases' seconds are saved in every checkpoint and so survive a resume; the sweep's wall time
    lost the piece of a run that was killed outright until the sweep wrote it as the run went,
    and a result file from before then under-reports a resumed run."""
    phases = sum(cost.seconds or 0.0 for cost in run.phases.values())
    seconds = max(run.wall_seconds or 0.0, phases)
    return seconds or None


def runs_table(cells: Cells) -> list[str]:
    lines = ["| network | data set | seeds | commits | mean wall time per run (s) |", "|---|---|---|---|---|"]
    for key in order(cells):
        runs = cells[key]
        commits = sorted({r.commit or "?" for r in runs.values()}
                         | {r.pretrained_at for r in runs.values() if isinstance(r, JoinedRun)})
        timed = [(seconds, is_pretrain_only(r)) for r in runs.values() if (seconds := run_seconds(r))]
        whole = [seconds for seconds, only in timed if not only]
        pretrain_only = [seconds for seconds, only in timed if only]
        walls = [f"{statistics.mean(whole):.0f}"] if whole else []
        walls += [f"{statistics.mean(pretrain_only):.0f} (pretrain-only runs)"] if pretrain_only else []
        lines.append(f"| {key[0]} | {key[1]} | {', '.join(map(str, sorted(runs)))} | {', '.join(commits)} | {'; '.join(walls) or '-'} |")
    return lines


def learning_curves(cells: Cells, path: Path) -> None:
    """Dev accuracy of every seed through pretraining and the equal-budget baseline, one panel per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = order(cells)
    columns = min(3, len(keys))
    rows = (len(keys) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5.2 * columns, 3.8 * rows), squeeze=False)
    for axis, key in zip(axes.flat, keys):
        for seed, result in sorted(cells[key].items()):
            pretrain = [(h.epoch, 100 * h.dev_number(Mode.NET_ONLY, "accuracy")) for h in result.history if h.phase == PhaseName.PRETRAIN]
            stop = pretrain[-1][0] if pretrain else 0
            baseline = [(stop + h.epoch, 100 * h.dev_number(Mode.NET_ONLY, "accuracy"))
                        for h in result.history if h.phase == PhaseName.BASELINE]
            (line,) = axis.plot(*zip(*pretrain), marker=".", label=f"seed {seed}")
            if baseline:
                axis.plot(*zip(*([pretrain[-1]] + baseline)), linestyle="--", color=line.get_color())
        target = TARGETS.get(key)
        if target:
            axis.axhline(target, color="grey", linewidth=0.8, linestyle=":", label="issue 15 target (test accuracy)")
        axis.set_title(f"{key[0]} on {key[1]}", fontsize=12)
        axis.set_xlabel("epoch (solid: pretraining; dashed: equal-budget baseline)", fontsize=9)
        axis.set_ylabel("dev accuracy (%)", fontsize=10)
        axis.grid(alpha=0.3)
    for axis in list(axes.flat)[len(keys) :]:
        axis.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), 10), fontsize=10, frameon=False)
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="folders of per-run result files")
    parser.add_argument("--out", type=Path, help="write the tables here (markdown) as well as to stdout")
    parser.add_argument("--curves", type=Path, help="write the dev learning curves of every cell to this PNG")
    parser.add_argument(
        "--reference", type=Path, help="result folder whose baselines runs started with train.init_from from its pretrained networks share"
    )
    args = parser.parse_args(argv)
    cells = load(args.folders)
    if not cells:
        parser.error(f"no result files in {', '.join(map(str, args.folders))}")
    if args.reference:
        borrow_baselines(cells, load([args.reference]))
    command = "python experiments/regime_tables.py " + " ".join(str(f) for f in args.folders)
    command += f" --reference {args.reference}" if args.reference else ""
    if args.curves:
        learning_curves(cells, args.curves)
    text = "\n".join(
        [
            f"<!-- generated by `{command}` from the committed result files; do not edit by hand -->",
            "",
            "### Baselines and convergence (test accuracy %)",
            "",
            *baseline_table(cells),
            "",
            "### DRGA against its baselines (test accuracy %)",
            "",
            *drga_table(cells),
            "",
            *selection_section(cells),
            "### Runs",
            "",
            *runs_table(cells),
            "",
        ]
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
