"""What a sweep writes about its runs: each finished run's small result file (``--results``), the
projected compute of the runs still to do, and the final table (markdown, a .csv beside it).

The result file's format is read by the table builders of experiments/ (regime_tables.py,
variant_tables.py, translation_tables.py) over hundreds of committed files, through
:func:`read_result_file` (tests/studies/test_result_files.py reads every one): change it only with them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drga.errors import UserError
from drga.files import open_atomic, write_text_atomic
from drga.names import MODES, EpochRecord, Mode, ResultRow, Split, headline_score, row_epoch, row_scores
from drga.registry import report_metric_of_network, task_for_network
from drga.sweep.grid import Run

#: Result columns: (column title, results.json row, evaluation mode).
COLUMNS = [
    ("baseline, pretrain only", ResultRow.PRETRAIN_ONLY, Mode.NET_ONLY),
    ("baseline, equal budget", ResultRow.EQUAL_BUDGET, Mode.NET_ONLY),
    ("agent on frozen network", ResultRow.AGENT_ON_FROZEN, Mode.WITH_AGENT),
    ("DRGA net-only", ResultRow.DRGA, Mode.NET_ONLY),
    ("DRGA with-agent", ResultRow.DRGA, Mode.WITH_AGENT),
]


#: The name of a run root: the folder that holds a study's run folders (``runs/``, or a folder ending in ``-runs``).
RUN_ROOT = "runs"


def portable_path(path: str, start: str | Path | None = None) -> str:
    """``path`` as a committed file records it: never absolute, since an absolute path names one machine's disk.

    An absolute path below ``start`` (default: the working directory, the repository root for experiments/)
    is written relative to it; any other from its run root on, the first folder named ``runs`` or ending in
    ``-runs`` (``/work/runs/tuned-study/drga`` → ``runs/tuned-study/drga``); failing both, relative to ``start``.
    A relative path is kept as it is."""
    if not os.path.isabs(path):
        return path
    start = os.path.abspath(start if start is not None else os.getcwd())
    absolute = os.path.normpath(path)
    if absolute == start or absolute.startswith(start.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(absolute, start)).as_posix()
    parts = Path(absolute).parts
    roots = [i for i, part in enumerate(parts) if part == RUN_ROOT or part.endswith(f"-{RUN_ROOT}")]
    if roots:
        return Path(*parts[roots[0]:]).as_posix()
    return Path(os.path.relpath(absolute, start)).as_posix()


def portable_paths(value: Any, start: str | Path | None = None) -> Any:
    """``value`` (a config, or any part of a result) with every absolute path in it made :func:`portable_path`."""
    if isinstance(value, dict):
        return {key: portable_paths(item, start) for key, item in value.items()}
    if isinstance(value, list):
        return [portable_paths(item, start) for item in value]
    if isinstance(value, str) and os.path.isabs(value) and value.count("/") >= 2 and not any(c.isspace() for c in value):
        return portable_path(value, start)  # a path of two folders or more: not a token such as "/s" or a sentence
    return value


def export_result(run: Run, commit: str, replace: bool = False) -> None:
    """The run's small result file (``--results``) from its results.json; nothing if it has none yet, or has one
    (``replace``: the run was trained again, ``--rerun-changed``)."""
    source = run.folder / "results.json"
    if run.result_file is None or not source.exists() or (run.result_file.exists() and not replace):
        return
    full = json.loads(source.read_text(encoding="utf-8"))
    rows = {}
    for label, row in full.get("results", {}).items():
        rows[label] = {
            mode: compact_row(row, mode) for mode in MODES if row_scores(row, Split.TEST, mode) is not None
        }
    history = [{k: (round(v, 5) if isinstance(v, float) else v) for k, v in record.items()} for record in full.get("history", [])]
    wall = run.folder / "wall_seconds.txt"
    compact = {
        "name": run.name,
        "net": run.net,
        "dataset": run.dataset,
        "seed": run.seed,
        "commit": commit,
        "data_checksum": full.get("data_checksum"),
        "wall_seconds": float(wall.read_text()) if wall.exists() else None,
        "phases": full.get("phases"),
        "majority_class": full.get("majority_class"),
        "rows": rows,
        "pretrain_checksum": full.get("pretrain_checksum"),
        "config": portable_paths(full.get("config")),  # run folders from their run root: no machine's absolute path
        "fingerprint": full.get("fingerprint"),  # its settings and data (drga/sweep/fingerprints.py); older files lack it
        "history": history,
    }
    write_text_atomic(run.result_file, json.dumps(compact, indent=1) + "\n")


def compact_row(row: dict, mode: str) -> dict:
    """One mode of a results.json row: a classification row's accuracies, or a translation row's scores
    (perplexity, BLEU, chrF, reward terms; greedy, and beam search under ``test_beam``) without the
    metric signatures, which the full config determines."""
    test = row_scores(row, Split.TEST, mode)
    if "accuracy" in test:
        return {
            "epoch": row_epoch(row, mode),
            "dev": (row_scores(row, Split.DEV, mode) or {}).get("accuracy"),
            "test": test["accuracy"],
            "test_reward": test.get("reward"),
            "test_highlighted_fraction": test.get("highlighted_fraction"),
        }

    def numbers(scores: dict | None) -> dict | None:
        return None if scores is None else {k: v for k, v in scores.items() if not k.endswith("_signature")}

    return {
        "epoch": row_epoch(row, mode),
        "dev": numbers(row_scores(row, Split.DEV, mode)),
        "test": numbers(test),
        "test_beam": numbers(row_scores(row, Split.TEST, mode, beam=True)),
        "signatures": {k: v for k, v in test.items() if k.endswith("_signature")},
    }


@dataclass(frozen=True)
class ResultFile:
    """A result file of :func:`export_result`, its rows typed: ``rows[label][mode]`` is one cell
    (:func:`compact_row`: the epoch it was selected at, its dev and test scores). ``payload`` is the
    whole file, for what the tables read beyond the rows (phases, history, config, checksums)."""

    name: str
    net: str
    dataset: str
    seed: int
    rows: dict[str, dict[Mode, dict[str, Any]]]
    payload: dict[str, Any]

    @classmethod
    def from_dict(cls, payload: Any, source: str = "a result file") -> ResultFile:
        """The typed view of a result file's content; a UserError naming ``source`` and what is wrong if it is not one."""
        if not isinstance(payload, dict) or not all(key in payload for key in ("name", "net", "dataset", "seed", "rows")):
            raise UserError(f"{source}: not a result file of drga sweep --results (it needs name, net, dataset, seed and rows)")
        rows: dict[str, dict[Mode, dict[str, Any]]] = {}
        for label, cells in payload["rows"].items():
            unknown = sorted(set(cells) - set(MODES))
            if unknown:
                raise UserError(f"{source}: row {label!r} has cells of unknown modes {unknown}; the modes are {', '.join(MODES)}")
            for mode, cell in cells.items():
                if not isinstance(cell, dict) or "test" not in cell:
                    raise UserError(f"{source}: row {label!r}, {mode}: no test scores")
            rows[label] = {Mode(mode): cell for mode, cell in cells.items()}
        return cls(payload["name"], payload["net"], payload["dataset"], int(payload["seed"]), rows, payload)

    def cell(self, row: str, mode: Mode | str) -> dict[str, Any] | None:
        """The cell of ``row`` in ``mode``; None if the run has none (a phase that did not run)."""
        return self.rows.get(row, {}).get(Mode(mode))

    def test_score(self, row: str, mode: Mode | str) -> float | None:
        """The cell's test score in its task's metric (accuracy; a translation's greedy BLEU); None if the run has no such cell."""
        return cell_test_score(self.cell(row, mode), report_metric_of_network(self.net))

    @property
    def history(self) -> list[EpochRecord]:
        """The run's epoch records, every phase's in order (none in a file written without them)."""
        return [EpochRecord.from_dict(record) for record in self.payload.get("history") or []]


#: The fields of a result that measure wall time: they differ between two runs of the same numbers.
CLOCK_FIELDS = ("wall_seconds", "seconds")


def without_clock(value: Any) -> Any:
    """A result (or any part of one) without :data:`CLOCK_FIELDS`, for comparing two runs' files exactly."""
    if isinstance(value, dict):
        return {key: without_clock(item) for key, item in value.items() if key not in CLOCK_FIELDS}
    if isinstance(value, list):
        return [without_clock(item) for item in value]
    return value


def read_result_file(path: Path) -> ResultFile:
    """A result file of :func:`export_result`, read and checked (:meth:`ResultFile.from_dict`)."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UserError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
    return ResultFile.from_dict(payload, str(path))


def cell_test_score(cell: Mapping[str, Any] | None, metric: str) -> float | None:
    """A result file cell's test score in its task's ``metric`` (a classification cell keeps its accuracy alone, a
    translation cell all its scores, of which the greedy BLEU); None for no cell."""
    if cell is None:
        return None
    test = cell["test"]
    return headline_score(test, metric) if isinstance(test, Mapping) else float(test)


def measured_cost(run: Run) -> tuple[float, int] | None:
    """(seconds, epochs) a finished run took, from its result file or results.json; None if unknown."""
    for source in (run.result_file, run.folder / "results.json"):
        if source is not None and source.exists():
            return cost_in(source)
    return None


def cost_in(result_file: Path) -> tuple[float, int] | None:
    """(seconds, epochs) summed over the phases a result file records; None if it records none."""
    phases = json.loads(result_file.read_text(encoding="utf-8")).get("phases") or {}
    if not phases:
        return None
    return sum(p["seconds"] for p in phases.values()), sum(p["epochs"] for p in phases.values())


def projected_compute(todo: list[Run], runs: list[Run], args: argparse.Namespace, threads: list[int] | None = None) -> str:
    """What the runs still to do will cost, projected from the measured runs of the same cells
    (network, data set): runs, epochs, core-hours and wall hours at ``args.jobs`` runs at a time. ``threads``: each
    run's torch threads, as it will use them (its ``run.threads`` when set; default ``args.threads_per_run`` for all)."""
    measured: dict[tuple[str, str], list[tuple[float, int]]] = {}
    counted_files = set()
    for run in runs:
        cost = measured_cost(run) if run.finished else None
        if cost is not None:
            measured.setdefault((run.net, run.dataset), []).append(cost)
            counted_files.add(run.result_file)
    # and the committed result files of the same cells' other seeds (a sweep asked for seeds 5-9 of a study)
    for cell, result_file in {((r.net, r.dataset), r.result_file.parent / f"{r.dataset}-{r.net}-seed") for r in todo if r.result_file}:
        for other in sorted(result_file.parent.glob(f"{result_file.name}*.json")):
            cost = cost_in(other) if other not in counted_files else None
            if cost is not None and other.stem.rsplit("seed", 1)[-1].isdigit():
                measured.setdefault(cell, []).append(cost)
                counted_files.add(other)
    per_run = threads if threads is not None else [max(1, args.threads_per_run or 1)] * len(todo)
    seconds = epochs = core_seconds = 0.0
    unmeasured: dict[tuple[str, str], int] = {}
    for run, run_threads in zip(todo, per_run):
        costs = measured.get((run.net, run.dataset))
        if not costs:
            unmeasured[(run.net, run.dataset)] = unmeasured.get((run.net, run.dataset), 0) + 1
            continue
        seconds += statistics.mean(c[0] for c in costs)
        core_seconds += statistics.mean(c[0] for c in costs) * run_threads
        epochs += statistics.mean(c[1] for c in costs)
    counted = len(todo) - sum(unmeasured.values())
    resumed = sum(run.interrupted for run in todo)
    low, high = (min(per_run), max(per_run)) if per_run else (max(1, args.threads_per_run or 1),) * 2
    each = f"{low} thread(s) each" if low == high else f"{low} to {high} threads each"
    lines = [f"[plan] {len(todo)} runs to do ({resumed} resumed), {args.jobs} at a time, {each}"]
    if counted:
        lines.append(
            f"[plan] projected for {counted} of them (from {sum(len(c) for c in measured.values())} finished runs of the same "
            f"cells): {epochs:.0f} epochs, {core_seconds / 3600:.1f} core-hours, {seconds / 3600 / max(args.jobs, 1):.1f} h "
            f"wall at {args.jobs} jobs (a resumed run counts as a whole one)"
        )
    if unmeasured:
        cells = ", ".join(f"{net}/{dataset} ×{count}" for (net, dataset), count in unmeasured.items())
        lines.append(f"[plan] not projected (no finished run of the cell yet): {cells}")
    return "\n".join(lines)


def accuracy(payload: dict, row: str, mode: str, metric: str = "accuracy") -> float | None:
    """A results.json's test score of ``row`` in ``mode`` in its task's ``metric`` (accuracy; a translation's greedy
    BLEU); None if it has no such cell."""
    result = row_scores(payload.get("results", {}).get(row, {}), Split.TEST, mode)
    return None if result is None else headline_score(result, metric)


def table(runs: list[Run], out: str | Path, settings: list[str] | None = None) -> str:
    """Every run's test scores (its task's report metric, as its task shows it: accuracy in %, BLEU), then mean ± std
    over seeds per network and data set; the rows (unscaled) also go to ``out`` with the suffix .csv. ``settings``: what
    the runs were made with, said under the title (drga/sweep/fingerprints.py). Returns the markdown."""
    titles = [title for title, _, _ in COLUMNS]
    tasks = {run.net: task_for_network(run.net) for run in runs}
    labels = sorted({task.report_label for task in tasks.values()})
    lines = [
        f"Test {' or '.join(labels) or 'scores'} of `{' '.join(sys.argv[1:]) or 'sweep.py'}`.",
        "",
        *[part for line in settings or [] for part in (line, "")],
        "| network | data set | seed | status | " + " | ".join(titles) + " | wall (s) |",
        "|---|---|---|---|" + "---|" * len(titles) + "---|",
    ]
    rows: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}  #: (network, data set) → each title's finished values
    for run in runs:
        full = run.folder / "results.json"
        payload = json.loads(full.read_text()) if full.exists() else {}
        metric = tasks[run.net].report_metric
        values = [accuracy(payload, row, mode, metric) for _, row, mode in COLUMNS]
        wall = run.folder / "wall_seconds.txt"
        seconds = wall.read_text().strip() if wall.exists() else ""
        status = run.status if run.status != "pending" else ("finished" if run.finished else "not run")
        rows.append(
            {
                "network": run.net,
                "dataset": run.dataset,
                "seed": run.seed,
                "status": status,
                **{t: v for t, v in zip(titles, values)},
                "wall_seconds": seconds,
            }
        )
        cells = [f"{tasks[run.net].report_scale * v:.2f}" if v is not None else "-" for v in values]
        lines.append(f"| {run.net} | {run.dataset} | {run.seed} | {status} | " + " | ".join(cells) + f" | {seconds} |")
        if run.finished:
            group = groups.setdefault((run.net, run.dataset), {t: [] for t in titles})
            for title, value in zip(titles, values):
                if value is not None:
                    group[title].append(value)
    lines += [
        "",
        "Mean ± std over the finished seeds:",
        "",
        "| network | data set | seeds | " + " | ".join(titles) + " |",
        "|---|---|---|" + "---|" * len(titles),
    ]
    # here, not at the top: drga.analysis.stats imports numpy, and `drga --help` imports this module
    from drga.analysis.stats import mean_std_text

    for (net, dataset), group in groups.items():
        seeds = max((len(v) for v in group.values()), default=0)
        scale = tasks[net].report_scale
        lines.append(f"| {net} | {dataset} | {seeds} | " + " | ".join(mean_std_text([scale * v for v in group[t]]) for t in titles) + " |")
    with open_atomic(Path(out).with_suffix(".csv"), newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return "\n".join(lines)


