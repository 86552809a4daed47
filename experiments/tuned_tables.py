"""The tuned study's page (issue 40), rebuilt from its committed files alone: ``python experiments/tuned_study.py tables``.

    python experiments/tuned_tables.py [--results experiments/results] [--out docs/results/tuned.md] [--figures docs/results/tuned]

Reads ``tuned-search/*.db`` (the Optuna studies of experiments/tuned_study.py search),
``tuned-search/pretrained.json``, the per-run result files of ``tuned-regime/{pretrain,drga,baseline,time-matched}/``
and, for the untuned numbers, the main study's ``paper-regime/``; writes:

1. **The search**: per cell and arm the trials (completed, pruned, failed), their CPU and wall hours, the
   best dev accuracy beside the start's (the pretrained network every trial began from), how many
   trials were above the start on dev at any scored epoch, and how many completed trials selected an
   epoch after the start (for DRGA, anything but the agent on the frozen network); every trial that ended in
   state FAIL, with what its SQLite file records of why (a hand-set ``stopped`` attribute, or the trial that
   retried its parameters after its heartbeat went stale) and the wall time to its last heartbeat, which no
   hour of the table counts;
2. **The best configurations** each arm's search found;
3. **What mattered**: each knob's importance (Optuna's PED-ANOVA evaluator, which needs no
   scikit-learn; completed trials only), as a table and as bars (``<figures>/importance.png``), and
   ``<figures>/dev-curves.png``, the dev accuracy per epoch of each arm's best trials (what Optuna's
   pruner saw) against the start;
4. **The test**: test accuracy at the tested seeds of the tuned arms, the time-matched baseline, the
   untuned study (all its seeds, and its runs of the same seeds started from the same network where
   the checksums agree) and the paper; paired differences per cell, 95% t intervals, paired t-tests, Holm over the cells,
   and the average difference over the cells with its interval, and again without seed 0 (the search's own
   seed and network, whose runs repeat the best trials); which code each run names, and in how many seeds the
   main study's pretrained network is the tuned study's (its checksum) or trained the same as far as its
   result file records (its pretraining history);
5. **Time**: the seconds the time-matched baseline was given and used;
6. **Selected epochs** of the tuned runs (experiments/selected_epochs.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import checkout  # noqa: F401  (first: this checkout's drga)
import regime_tables as regime
from selected_epochs import start_counts_by_cell, start_table
from study_stats import holm_adjust, paired_comparison

from drga.analysis.plots import DOC_WIDTH, legend_below, new_figure, save_png, styled
from drga.analysis.stats import equal_weight_interval, mean_std_text
from drga.names import Mode, PhaseName
from drga.records import EpochRecord
from drga.sweep.results import ResultFile, read_result_file

ROOT = checkout.ROOT
ARMS = ("drga", "baseline")
KINDS = ("pretrain", "drga", "baseline", "time-matched")
PRETRAIN, BASELINE, DRGA = regime.PRETRAIN, regime.BASELINE, regime.DRGA
#: Completed trials below which no importance is computed.
MIN_TRIALS_FOR_IMPORTANCE = 4
#: Best trials per arm drawn in the dev curves.
CURVES_PER_ARM = 3


def optuna_module() -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def cell_of(study: str) -> tuple[tuple[str, str], str]:
    """``mr-lstm-sa-drga`` → ((``lstm-sa``, ``mr``), ``drga``)."""
    dataset, rest = study.split("-", 1)
    net, arm = rest.rsplit("-", 1)
    return (net, dataset), arm


def load_studies(search: Path) -> dict[tuple[tuple[str, str], str], Any]:
    """(cell, arm) → the Optuna study of ``search/<dataset>-<net>-<arm>.db``."""
    optuna = optuna_module()
    studies = {}
    for path in sorted(search.glob("*.db")):
        studies[cell_of(path.stem)] = optuna.load_study(study_name=path.stem, storage=f"sqlite:///{path.resolve()}")
    return studies


def load_runs(regime_folder: Path) -> dict[str, dict[tuple[str, str], dict[int, ResultFile]]]:
    """kind → cell → seed → result file."""
    runs: dict[str, dict[tuple[str, str], dict[int, ResultFile]]] = {kind: defaultdict(dict) for kind in KINDS}
    for kind in KINDS:
        for path in sorted((regime_folder / kind).glob("*.json")):
            result = read_result_file(path)
            runs[kind][(result.net, result.dataset)][result.seed] = result
    return runs


def trials_of(study: Any, state: str) -> list[Any]:
    return [t for t in study.get_trials(deepcopy=False) if t.state.name == state]


def hours(trials: list[Any], key: str) -> float:
    return sum(t.user_attrs.get(key, 0.0) for t in trials) / 3600


def best_of(study: Any) -> Any | None:
    """The completed trial with the best selection key (dev accuracy, then dev reward), the earliest of equals (drga tune's rule)."""
    complete = trials_of(study, "COMPLETE")
    return max(complete, key=lambda t: (tuple(t.user_attrs.get("selection_key", [t.value])), -t.number)) if complete else None


def in_order(studies: dict) -> list[tuple[tuple[tuple[str, str], str], Any]]:
    """The studies cell by cell (regime_tables.py's order), the DRGA arm first."""
    rank = {cell: index for index, cell in enumerate(regime.order(sorted({cell for cell, _ in studies})))}
    return sorted(studies.items(), key=lambda item: (rank[item[0][0]], ARMS.index(item[0][1])))


def value_text(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def start_accuracies(runs: dict) -> dict[tuple[str, str], float]:
    """Per cell, the dev accuracy of the pretrained network every trial started from (seed 0's pretrain run)."""
    return {cell: seeds[0].rows[PRETRAIN][Mode.NET_ONLY].dev for cell, seeds in runs["pretrain"].items() if 0 in seeds}


def beat_start(trial: Any, start: float) -> bool:
    """Whether any scored epoch of the trial (what the pruner saw) was above the start on dev."""
    return any(value > start for value in trial.intermediate_values.values())


def search_table(studies: dict, starts: dict[tuple[str, str], float]) -> list[str]:
    lines = [
        "| network | data set | arm | trials: completed + pruned (failed) | CPU hours | wall hours | best dev accuracy (trial) "
        "| the start's dev accuracy | trials above the start at some epoch | completed trials that selected an epoch after the start |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (cell, arm), study in in_order(studies):
        complete, pruned, failed = trials_of(study, "COMPLETE"), trials_of(study, "PRUNED"), trials_of(study, "FAIL")
        other = len(study.get_trials(deepcopy=False)) - len(complete) - len(pruned) - len(failed)
        aside = ", ".join(part for part in (f"{len(failed)} failed" if failed else "", f"{other} other" if other else "") if part)
        finished = complete + pruned
        totals[arm][0] += hours(finished, "cpu_seconds")
        totals[arm][1] += hours(finished, "wall_seconds")
        best = best_of(study)
        best_text = f"{100 * best.value:.2f} ({best.number})" if best else "-"
        start = starts.get(cell)
        start_text, above = ("-", "-") if start is None else \
            (f"{100 * start:.2f}", f"{sum(beat_start(t, start) for t in finished)}/{len(finished)}")
        moved = f"{sum((t.user_attrs.get('epoch') or 0) > 0 for t in complete)}/{len(complete)}" if complete else "-"
        lines.append(f"| {cell[0]} | {cell[1]} | {arm} | {len(complete)} + {len(pruned)}{f' ({aside})' if aside else ''} "
                     f"| {hours(finished, 'cpu_seconds'):.2f} | {hours(finished, 'wall_seconds'):.2f} | {best_text} "
                     f"| {start_text} | {above} | {moved} |")
    for arm, (cpu, wall) in sorted(totals.items()):
        lines.append(f"| **all** | | {arm} | | {cpu:.2f} | {wall:.2f} | | | | |")
    return lines


def last_heartbeats(path: Path) -> dict[int, Any]:
    """Trial number → its last heartbeat (Optuna's ``trial_heartbeats`` table: a running trial writes one every 15 s),
    read from the SQLite file itself (Optuna has no public reader); nothing for a file without the table."""
    import datetime

    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        try:
            rows = connection.execute("SELECT t.number, h.heartbeat FROM trial_heartbeats h JOIN trials t ON t.trial_id = h.trial_id")
        except sqlite3.OperationalError:
            return {}
        return {number: datetime.datetime.fromisoformat(beat) for number, beat in rows.fetchall()}


def paraphrased_note(note: str) -> str:
    """A note written by hand into the study's file, its words about the machine's own working time ("session 5 ended")
    said as what happened to the run: the machine it ran on was taken back."""
    return re.sub(r"session \d+ ended", "the machine it ran on was taken back", note)


def failure_of(trial: Any, study: Any) -> str:
    """What the study records of why ``trial`` ended in FAIL."""
    if trial.user_attrs.get("stopped"):
        # not retried as a stale trial is; a later trial may still have drawn the same parameters (the file does not say why)
        same = [t for t in study.get_trials(deepcopy=False) if t.number > trial.number and t.params == trial.params]
        later = (f"trial {same[0].number} ({same[0].state.name.lower()}) ran the same {len(trial.params)} parameters, "
                 "which the file does not record as a retry") if same else "no later trial ran its parameters"
        return f"marked FAIL by hand, its note (in other words): {paraphrased_note(trial.user_attrs['stopped'])}; {later}"
    retries = [t for t in study.get_trials(deepcopy=False) if t.system_attrs.get("failed_trial") == trial.number]
    if retries:
        retry = retries[0]
        return (f"its process stopped (no heartbeat for over a minute); the search's next start failed it as stale and "
                f"retried its parameters as trial {retry.number} ({retry.state.name.lower()})")
    return "no reason recorded"


def failed_table(studies: dict, search: Path) -> list[str]:
    """Every trial that ended in state FAIL: when it ran, its wall time up to its last heartbeat, and why."""
    rows = []
    for (cell, arm), study in in_order(studies):
        failed = trials_of(study, "FAIL")
        if not failed:
            continue
        beats = last_heartbeats(search / f"{cell[1]}-{cell[0]}-{arm}.db")
        for trial in failed:
            beat = beats.get(trial.number)
            # a heartbeat is stored to the second at times, the start to the microsecond: 0, not −0.7 s
            alive = max(0.0, (beat - trial.datetime_start).total_seconds()) if beat and trial.datetime_start else None
            rows.append((cell, arm, trial, alive, failure_of(trial, study)))
    if not rows:
        return []
    lines = [
        f"{len(rows)} trials ended in state FAIL. They are not among the finished trials above, and no hour of the table "
        "counts their time: a failed trial records no CPU or wall seconds. Its wall time up to its last heartbeat (written "
        "every 15 s while it runs) bounds that time from below, to within 15 s. Each one, with what its SQLite file "
        "records of why:",
        "",
        "| network | data set | arm | trial | started | failed at | wall seconds to its last heartbeat | what the file records |",
        "|---|---|---|---|---|---|---|---|",
    ]
    when = lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S") if moment else "-"  # noqa: E731
    for cell, arm, trial, alive, why in rows:
        lines.append(f"| {cell[0]} | {cell[1]} | {arm} | {trial.number} | {when(trial.datetime_start)} | "
                     f"{when(trial.datetime_complete)} | {'-' if alive is None else f'{alive:.0f}'} | {why} |")
    known = [alive for *_, alive, _ in rows if alive is not None]
    if known:
        lines += ["", f"In all, {sum(known) / 60:.1f} minutes of wall time to their last heartbeats ({len(known)} of "
                      f"{len(rows)} trials have one)."]
    return lines


def best_table(studies: dict) -> list[str]:
    lines = ["| network | data set | arm | trial | its settings |", "|---|---|---|---|---|"]
    for (cell, arm), study in in_order(studies):
        best = best_of(study)
        settings = ", ".join(f"{key} = {value_text(value)}" for key, value in sorted(best.params.items())) if best else "-"
        lines.append(f"| {cell[0]} | {cell[1]} | {arm} | {best.number if best else '-'} | {settings} |")
    return lines


def importances(study: Any) -> dict[str, float] | None:
    """Each knob's importance (Optuna's PED-ANOVA over the completed trials), largest first; None with too few trials."""
    if len(trials_of(study, "COMPLETE")) < MIN_TRIALS_FOR_IMPORTANCE:
        return None
    optuna = optuna_module()
    return optuna.importance.get_param_importances(study, evaluator=optuna.importance.PedAnovaImportanceEvaluator())


def importance_table(studies: dict, found: dict) -> list[str]:
    """``found``: (cell, arm) → :func:`importances` of its study."""
    lines = ["| network | data set | arm | completed trials | importance of each knob (PED-ANOVA; largest first) |",
             "|---|---|---|---|---|"]
    for (cell, arm), study in in_order(studies):
        knobs = found[(cell, arm)]
        text = f"too few completed trials (fewer than {MIN_TRIALS_FOR_IMPORTANCE})" if knobs is None else \
            ", ".join(f"{key} {value:.2f}" for key, value in knobs.items())
        lines.append(f"| {cell[0]} | {cell[1]} | {arm} | {len(trials_of(study, 'COMPLETE'))} | {text} |")
    return lines


@styled
def importance_plot(studies: dict, found: dict, path: Path) -> None:
    """A row of panels per cell, a panel per arm: each knob's importance (``found``, as for the table) as a bar, largest on top."""
    cells = regime.order(sorted({cell for cell, _ in studies}))
    figure = new_figure(DOC_WIDTH, 2.6 * len(cells) + 0.4, layout="constrained")
    axes = figure.subplots(len(cells), len(ARMS), squeeze=False)
    for row, cell in enumerate(cells):
        for column, arm in enumerate(ARMS):
            axis = axes[row][column]
            knobs = found.get((cell, arm))
            axis.set_title(f"{cell[0]} on {cell[1]}: {arm} arm")
            if not knobs:
                axis.text(0.5, 0.5, "no search" if (cell, arm) not in studies else "too few completed trials", ha="center",
                          va="center", transform=axis.transAxes)
                axis.set_axis_off()
                continue
            names = list(knobs)[::-1]
            axis.barh(names, [knobs[name] for name in names], color="tab:orange" if arm == "drga" else "tab:blue")
            axis.set_xlim(0, 1)
            axis.set_xlabel("importance (PED-ANOVA, sums to 1)")
            axis.tick_params(axis="y", labelsize=7)
            axis.grid(axis="x", alpha=0.3)
    save_png(figure, path, reproducible=True)


@styled
def dev_curves(studies: dict, starts: dict[tuple[str, str], float], path: Path) -> None:
    """One panel per cell: the dev accuracy of each arm's best completed trials at every epoch they reported,
    and the pretrained network both arms started from (a dashed line)."""
    cells = regime.order(sorted({cell for cell, _ in studies}))
    columns = min(2, len(cells))
    rows = (len(cells) + columns - 1) // columns
    figure = new_figure(DOC_WIDTH, 3.4 * rows + 0.8, layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    styles = {"drga": ("tab:orange", "co-training (DRGA arm; with the agent)"),
              "baseline": ("tab:blue", "equal-budget baseline (baseline arm)")}
    for axis, cell in zip(axes.flat, cells):
        if cell in starts:
            axis.axhline(100 * starts[cell], color="0.4", linestyle="--", linewidth=1.0,
                         label="the pretrained network both arms start from" if axis is axes.flat[0] else None)
        for arm in ARMS:
            study = studies.get((cell, arm))
            if study is None:
                continue
            ranked = sorted(trials_of(study, "COMPLETE"), key=lambda t: (-t.value, t.number))[:CURVES_PER_ARM]
            color, label = styles[arm]
            for rank, trial in enumerate(ranked):
                steps = sorted(trial.intermediate_values)
                axis.plot(steps, [100 * trial.intermediate_values[s] for s in steps], color=color, marker=".",
                          alpha=1.0 - 0.3 * rank, label=label if rank == 0 else None)
        axis.set_title(f"{cell[0]} on {cell[1]}")
        axis.set_xlabel("epoch of the scored phase")
        axis.set_ylabel("dev accuracy (%)")
        axis.grid(alpha=0.3)
    for axis in list(axes.flat)[len(cells):]:
        axis.axis("off")
    legend_below(figure, ncol=3)
    save_png(figure, path, reproducible=True)


def test_accuracy(result: ResultFile | None, row: str, mode: Mode) -> float | None:
    """The test accuracy (%) of a run's ``row`` in ``mode``; None where there is no run or no such cell."""
    return None if result is None else regime.test_accuracy(result, row, mode)


def pretrain_checksum_of(result: ResultFile | None) -> str | None:
    """The checksum of the network a run started from; None where the run, or its record of it, is missing."""
    return None if result is None else result.pretrain_checksum


#: The test's comparisons: (title, (kind, row, mode) compared, (kind, row, mode) it is compared against).
COMPARISONS = (
    ("tuned DRGA with agent − tuned baseline", ("drga", DRGA, Mode.WITH_AGENT), ("baseline", BASELINE, Mode.NET_ONLY)),
    ("tuned DRGA net-only − tuned baseline", ("drga", DRGA, Mode.NET_ONLY), ("baseline", BASELINE, Mode.NET_ONLY)),
    ("tuned DRGA with agent − time-matched baseline", ("drga", DRGA, Mode.WITH_AGENT), ("time-matched", BASELINE, Mode.NET_ONLY)),
    ("tuned DRGA with agent − untuned DRGA with agent (the main study, same network)", ("drga", DRGA, Mode.WITH_AGENT),
     ("untuned", DRGA, Mode.WITH_AGENT)),
)


def same_network(runs: dict, cell: tuple[str, str], seed: int) -> bool:
    """Whether the main study's run of this seed started from the network the tuned runs did."""
    untuned, pretrained = runs["untuned"].get(cell, {}).get(seed), runs["pretrain"].get(cell, {}).get(seed)
    return untuned is not None and pretrained is not None and untuned.pretrain_checksum == pretrained.pretrain_checksum


def test_tables(runs: dict) -> list[str]:
    cells = regime.order(sorted(runs["drga"]))
    lines = [
        "| network | data set | seeds | paper: baseline → DRGA | untuned, the main study's seeds: equal-budget baseline, DRGA with agent "
        "| untuned (same networks): equal-budget baseline, DRGA with agent "
        "| tuned baseline | tuned DRGA with agent | tuned DRGA net-only | time-matched baseline |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cell in cells:
        seeds = sorted(runs["drga"][cell])

        def column(kind: str, row: str, mode: Mode, seeds: list[int] = seeds, cell: tuple[str, str] = cell) -> str:
            return mean_std_text([v for s in seeds if (v := test_accuracy(runs[kind].get(cell, {}).get(s), row, mode)) is not None])

        def untuned(chosen: list[int], count: str, column=column) -> str:
            """The main study's equal-budget baseline and DRGA with the agent over ``chosen`` seeds."""
            return (f"{column('untuned', BASELINE, Mode.NET_ONLY, chosen)}, {column('untuned', DRGA, Mode.WITH_AGENT, chosen)} "
                    f"({count} seeds)") if chosen else "-"

        matched = [s for s in seeds if same_network(runs, cell, s)]
        main_seeds = sorted(runs["untuned"].get(cell, {}))
        main_study, same_networks = untuned(main_seeds, f"{len(main_seeds)}"), untuned(matched, f"{len(matched)} of {len(seeds)}")
        paper = regime.PAPER.get(cell)
        paper_text = f"{paper[0]} → {paper[1]} ({paper[1] - paper[0]:+.1f})" if paper else "-"
        lines.append(f"| {cell[0]} | {cell[1]} | {len(seeds)} | {paper_text} | {main_study} | {same_networks} "
                     f"| {column('baseline', BASELINE, Mode.NET_ONLY)} "
                     f"| {column('drga', DRGA, Mode.WITH_AGENT)} | {column('drga', DRGA, Mode.NET_ONLY)} "
                     f"| {column('time-matched', BASELINE, Mode.NET_ONLY)} |")
    for (title, entries), (_, _, reference) in zip(test_comparisons(runs), COMPARISONS):
        lines += regime.comparison_lines(title, entries)
        lines += over_the_cells([entry["diff"] for entry in entries])
        # the answer without seed 0; not against the untuned runs, whose few same-network seeds leave too little
        if reference[0] != "untuned" and any(0 in runs["drga"][cell] for cell in cells):
            lines += over_the_cells([entry["without_seed_0"] for entry in entries], without="seed 0 (the search's own seed and network)")
    return lines


def test_comparisons(runs: dict) -> list[tuple[str, list[dict]]]:
    """Per comparison of :data:`COMPARISONS` (its title), per cell: the paired differences over the test seeds (and
    without seed 0), p, the spread and Holm's p over the cells (what the page prints; experiments/answers.py reads it)."""
    cells = regime.order(sorted(runs["drga"]))
    found = []
    for title, ours, reference in COMPARISONS:
        entries = []
        for cell in cells:
            pairs = []
            for seed in sorted(runs["drga"][cell]):
                if reference[0] == "untuned" and not same_network(runs, cell, seed):
                    continue
                a = test_accuracy(runs[reference[0]].get(cell, {}).get(seed), *reference[1:])
                b = test_accuracy(runs[ours[0]].get(cell, {}).get(seed), *ours[1:])
                if a is not None and b is not None:
                    pairs.append((seed, a, b))
            comparison = paired_comparison([a for _, a, _ in pairs], [b for *_, b in pairs])
            later = paired_comparison([a for seed, a, _ in pairs if seed != 0], [b for seed, _, b in pairs if seed != 0])
            entries.append({"key": cell, "n": comparison.n, "diff": list(comparison.differences), "p": comparison.p,
                            "spread": comparison.spread, "without_seed_0": list(later.differences)})
        for entry, adjusted in zip(entries, holm_adjust([e["p"] for e in entries])):
            entry["holm"] = adjusted
        found.append((title, entries))
    return found


def over_the_cells(differences: list[list[float]], without: str | None = None) -> list[str]:
    """The average difference over the cells, each weighted equally, and its 95% interval (what bounds the
    effect over the study); nothing with fewer than two cells of two seeds or more. ``without``: what the
    differences leave out, said at the line's start."""
    tested = [d for d in differences if len(d) >= 2]
    if len(tested) < 2:
        return []
    pooled = equal_weight_interval(tested)
    head = f"Over the {len(tested)} cells" if without is None else f"Without {without}, over the {len(tested)} cells"
    if math.isnan(pooled.df):
        return ["", f"{head}, each weighted equally: {pooled.mean:+.2f} points (no spread in any cell)."]
    return ["", f"{head}, each weighted equally: {pooled.mean:+.2f} points, 95% interval "
                f"[{pooled.low:+.2f}, {pooled.high:+.2f}] (t with Welch–Satterthwaite's {pooled.df:.1f} degrees of freedom; "
                "`drga.analysis.stats.equal_weight_interval`)."]


def seed_ranges(seeds: list[int]) -> str:
    """``[0, 1, 2, 5]`` → ``0–2, 5``."""
    parts: list[list[int]] = []
    for seed in sorted(seeds):
        if parts and seed == parts[-1][-1] + 1:
            parts[-1].append(seed)
        else:
            parts.append([seed])
    return ", ".join(f"{p[0]}–{p[-1]}" if len(p) > 2 else ", ".join(map(str, p)) for p in parts)


def seed_zero_note(runs: dict, studies: dict, recorded: dict) -> list[str]:
    """Whether test seed 0 repeats the search: its pretrained network is the recorded one every trial started from,
    and its tuned runs select the best trials' epochs at their dev accuracy."""
    cells = [cell for cell in regime.order(sorted(runs["drga"])) if 0 in runs["drga"][cell]]
    if not cells:
        return []
    same_network = [cell for cell in cells if (recorded.get(f"{cell[1]}-{cell[0]}") or {}).get("checksum")
                    == pretrain_checksum_of(runs["pretrain"].get(cell, {}).get(0))]
    repeated, compared = 0, 0
    for cell in cells:
        for arm, row, mode in (("drga", DRGA, Mode.WITH_AGENT), ("baseline", BASELINE, Mode.NET_ONLY)):
            best, result = best_of(studies[(cell, arm)]) if (cell, arm) in studies else None, runs[arm].get(cell, {}).get(0)
            if best is None or result is None or row not in result.rows:
                continue
            compared += 1
            chosen = result.rows[row][mode]
            repeated += chosen.dev == best.value and chosen.epoch == best.user_attrs.get("epoch")
    return [
        f"**Seed 0 is the search's own.** Test seed 0 is the seed every trial ran at, and its pretrained network is the one "
        f"every trial started from (the checksum `tuned-search/pretrained.json` records) in {len(same_network)} of "
        f"{len(cells)} cells; its tuned runs select the best trial's epoch at the best trial's dev accuracy in {repeated} of "
        f"{compared} (cell, arm) pairs. So seed 0 repeats the search rather than testing its choice on a new seed; each "
        "comparison below is given without it as well.",
        "",
    ]


def code_table(runs: dict) -> list[str]:
    """Per cell the code each study's result files name (seeds per commit), and per seed whether the main study's
    pretrained network is the tuned study's: the same checksum, or another one whose pretraining history (every
    recorded number of every pretraining epoch but its seconds) is the same."""
    def pretraining(result: ResultFile) -> list[EpochRecord]:
        """Its pretraining epochs without their wall time, which differs between two runs of the same numbers."""
        return [dataclasses.replace(record, seconds=None) for record in result.history if record.phase == PhaseName.PRETRAIN]

    def commits(seeds: dict[int, ResultFile]) -> str:
        by_commit: dict[str, list[int]] = defaultdict(list)
        for seed, result in seeds.items():
            by_commit[(result.commit or "?")[:7]].append(seed)
        return "; ".join(f"{commit} ({seed_ranges(found)})" for commit, found in sorted(by_commit.items(), key=lambda c: min(c[1])))

    lines = [
        "| network | data set | tuned study's code (seeds) | main study's code (seeds) | seeds whose main-study network is the tuned "
        "one (same checksum) | other checksum, same pretraining history as recorded |",
        "|---|---|---|---|---|---|",
    ]
    for cell in regime.order(sorted(runs["pretrain"])):
        tuned = {seed: result for kind in KINDS for seed, result in runs[kind].get(cell, {}).items()}
        main = runs["untuned"].get(cell, {})
        shared = sorted(seed for seed in runs["pretrain"][cell] if same_network(runs, cell, seed))
        other = sorted(seed for seed in runs["pretrain"][cell] if seed in main and seed not in shared)
        alike = [seed for seed in other if pretraining(main[seed]) == pretraining(runs["pretrain"][cell][seed])]
        shared_text = f"{len(shared)} ({seed_ranges(shared)})" if shared else "0"
        alike_text = f"{len(alike)} of {len(other)}" + (f" ({seed_ranges(alike)})" if alike else "") if other else "-"
        lines.append(f"| {cell[0]} | {cell[1]} | {commits(tuned)} | {commits(main) if main else '-'} | {shared_text} | {alike_text} |")
    return lines


def time_table(runs: dict) -> list[str]:
    lines = [
        "| network | data set | seeds | given: the DRGA run's agent + co-training (s) | time-matched baseline: used (s) | its epochs "
        "| tuned equal-budget baseline: epochs (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for cell in regime.order(sorted(runs["time-matched"])):
        seeds = sorted(runs["time-matched"][cell])

        def phase(kind: str, name: str, measure: str, digits: int, seeds: list[int] = seeds, cell: tuple[str, str] = cell) -> str:
            """Mean ± std over the seeds' runs of ``kind`` of phase ``name``'s ``measure`` (a PhaseCost field: seconds,
            epochs); 0 for a run without the phase."""
            costs = [r.phases.get(name) for s in seeds if (r := runs[kind].get(cell, {}).get(s))]
            return mean_std_text([0.0 if cost is None else getattr(cost, measure) for cost in costs], digits)

        given = [r.config["train"]["baseline_seconds"] for s in seeds if (r := runs["time-matched"][cell][s]).config]
        lines.append(
            f"| {cell[0]} | {cell[1]} | {len(seeds)} | {mean_std_text(given, 0)} | {phase('time-matched', 'baseline', 'seconds', 0)} "
            f"| {phase('time-matched', 'baseline', 'epochs', 1)} | {phase('baseline', 'baseline', 'epochs', 1)} "
            f"({phase('baseline', 'baseline', 'seconds', 0)}) |"
        )
    return lines


def merged_runs(runs: dict) -> dict[tuple[str, str], list[ResultFile]]:
    """Per cell, each seed's tuned rows in one result: the baseline arm's equal-budget row beside the DRGA arm's rows."""
    merged = {}
    for cell, seeds in runs["drga"].items():
        merged[cell] = []
        for seed, result in sorted(seeds.items()):
            baseline = runs["baseline"].get(cell, {}).get(seed)
            merged[cell].append(dataclasses.replace(result, rows={**(baseline.rows if baseline else {}), **result.rows}))
    return merged


def test_runs(results: Path) -> dict[str, Any]:
    """:func:`load_runs` of ``tuned-regime/``, with the main study's runs (``paper-regime/``) as kind ``untuned``."""
    runs: dict[str, Any] = load_runs(results / "tuned-regime")
    runs["untuned"] = {key: dict(seeds) for key, seeds in regime.load([results / "paper-regime"]).items()} \
        if (results / "paper-regime").is_dir() else {}
    return runs


def page(results: Path, out: Path, figures: Path, command: str) -> str:
    studies = load_studies(results / "tuned-search")
    runs = test_runs(results)
    recorded = json.loads((results / "tuned-search" / "pretrained.json").read_text(encoding="utf-8")) \
        if (results / "tuned-search" / "pretrained.json").exists() else {}
    lines = [f"<!-- generated by `{command}` from the committed files; do not edit by hand -->", ""]
    lines += ["### The search (dev accuracy, seed 0, one pretrained network per cell)", ""]
    lines += [f"- {name}: network checksum {entry['checksum'][:12]} (pretrained at {entry['commit']})"
              for name, entry in sorted(recorded.items())]
    starts = start_accuracies(runs)
    lines += ["", *search_table(studies, starts), ""]
    failed = failed_table(studies, results / "tuned-search")
    lines += [*failed, ""] if failed else []
    lines += ["### The best configurations", "", *best_table(studies), ""]
    if studies:
        curves, bars = figures / "dev-curves.png", figures / "importance.png"
        dev_curves(studies, starts, curves)
        found = {key: importances(study) for key, study in studies.items()}  # PED-ANOVA once per study: table and bars
        importance_plot(studies, found, bars)
        lines += ["### What mattered", "", *importance_table(studies, found), "",
                  f"![each knob's importance per cell and arm]({Path(os.path.relpath(bars, out.parent)).as_posix()})", "",
                  f"![dev accuracy of each arm's best trials]({Path(os.path.relpath(curves, out.parent)).as_posix()})", ""]
    if runs["drga"]:
        lines += ["### The test (test accuracy %)", "", *seed_zero_note(runs, studies, recorded), *test_tables(runs), ""]
    if runs["pretrain"]:
        lines += ["### Code and pretrained networks", "",
                  "The commit each result file names (its `commit`), and how many test seeds share their pretrained network "
                  "with the main study's run of the same seed. Both studies pretrain with `experiments/configs/paper_regime.toml`: "
                  "their result files' configs differ only in the phases after pretraining (the main study's runs go on to the "
                  "baseline, the agent and co-training) and in options added since, at their defaults. Where the checksums differ, "
                  "the last "
                  "column says in how many seeds the two pretraining histories are still the same in every number the result "
                  "files record (to 5 digits), so the networks differ below what the files record. The files do not say why "
                  "they differ.", "", *code_table(runs), ""]
    if runs["time-matched"]:
        lines += ["### Time: the time-matched baseline", "", *time_table(runs), ""]
    # (selected_epochs.py reads a result file's content, as to_dict writes it)
    counts = start_counts_by_cell({cell: [result.to_dict() for result in merged] for cell, merged in merged_runs(runs).items()})
    if counts:
        lines += ["### Selected epochs of the tuned runs", "", *start_table(counts, regime.order(sorted(counts))), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=Path("experiments/results"))
    parser.add_argument("--out", type=Path, default=Path("docs/results/tuned.md"))
    parser.add_argument("--figures", type=Path, default=Path("docs/results/tuned"))
    args = parser.parse_args(argv)
    if not (args.results / "tuned-search").is_dir():
        parser.error(f"no study in {args.results / 'tuned-search'}")
    command = "python experiments/tuned_study.py tables"
    defaults = {"--results": Path("experiments/results"), "--out": Path("docs/results/tuned.md"), "--figures": Path("docs/results/tuned")}
    for flag, default in defaults.items():
        value = getattr(args, flag[2:])
        command += f" {flag} {value}" if value != default else ""
    text = page(args.results, args.out, args.figures, command)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
