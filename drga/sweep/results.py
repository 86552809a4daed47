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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drga.errors import UserError
from drga.files import open_atomic, write_text_atomic
from drga.names import MODES, Mode, ResultRow, headline_score
from drga.records import EpochRecord, ModeScores, PhaseCost, RunResults, phase_costs_from_dict
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
    full = RunResults.read(source)
    wall = run.folder / "wall_seconds.txt"
    compact = ResultFile(
        name=run.name, net=run.net, dataset=run.dataset, seed=run.seed, commit=commit,
        data_checksum=full.data_checksum,
        wall_seconds=float(wall.read_text()) if wall.exists() else None,
        phases=full.phases,
        majority_class=full.task_entries.get("majority_class"),  # a classification run's own entry
        rows={label: {mode: ResultCell.of(cell) for mode, cell in row.modes.items()} for label, row in full.rows.items()},
        pretrain_checksum=full.pretrain_checksum,
        config=portable_paths(full.config),  # run folders from their run root: no machine's absolute path
        fingerprint=full.fingerprint,  # its settings and data (drga/sweep/fingerprints.py); older files lack it
        history=[EpochRecord.from_dict({k: (round(v, 5) if isinstance(v, float) else v) for k, v in record.to_dict().items()})
                 for record in full.history],
    )
    write_text_atomic(run.result_file, json.dumps(compact.to_dict(), indent=1) + "\n")


@dataclass(frozen=True)
class ResultCell:
    """One mode of a result file's row: the epoch its checkpoint was selected at, and its scores. A classification cell
    keeps the accuracies alone (``dev``, ``test``) and the test reward terms; a translation cell all its numbers (perplexity,
    BLEU, chrF, reward terms; greedy, and beam search under ``test_beam``) without the metric signatures, which the full
    config determines (``signatures``: the greedy test's)."""

    epoch: int | None
    dev: float | dict[str, Any] | None
    test: float | dict[str, Any]
    test_reward: float | None = None
    test_highlighted_fraction: float | None = None
    test_beam: dict[str, Any] | None = None
    signatures: dict[str, Any] | None = None

    @classmethod
    def of(cls, cell: ModeScores) -> ResultCell:
        """The cell a result file keeps of one mode of a results.json row."""
        if "accuracy" in cell.test:
            dev = (cell.dev or {}).get("accuracy")
            return cls(cell.epoch, dev, cell.test["accuracy"], cell.test.get("reward"), cell.test.get("highlighted_fraction"))

        def numbers(scores: Mapping[str, Any] | None) -> dict[str, Any] | None:
            return None if scores is None else {k: v for k, v in scores.items() if not k.endswith("_signature")}

        signatures = {k: v for k, v in cell.test.items() if k.endswith("_signature")}
        return cls(cell.epoch, numbers(cell.dev), numbers(cell.test) or {}, test_beam=numbers(cell.test_beam), signatures=signatures)

    @property
    def translation(self) -> bool:
        """Whether it is a translation cell (all the numbers) rather than a classification one (the accuracies)."""
        return isinstance(self.test, Mapping)

    @classmethod
    def from_dict(cls, cell: Mapping[str, Any]) -> ResultCell:
        return cls(cell.get("epoch"), cell.get("dev"), cell["test"], cell.get("test_reward"), cell.get("test_highlighted_fraction"),
                   cell.get("test_beam"), cell.get("signatures"))

    def to_dict(self) -> dict[str, Any]:
        if self.translation:
            return {"epoch": self.epoch, "dev": self.dev, "test": self.test, "test_beam": self.test_beam, "signatures": self.signatures}
        return {"epoch": self.epoch, "dev": self.dev, "test": self.test, "test_reward": self.test_reward,
                "test_highlighted_fraction": self.test_highlighted_fraction}

    def test_score(self, metric: str) -> float:
        """The test number a table shows: its task's ``metric`` (a classification cell keeps its accuracy alone, a
        translation cell all its scores, of which the greedy BLEU)."""
        return headline_score(self.test, metric) if isinstance(self.test, Mapping) else float(self.test)


@dataclass(frozen=True)
class ResultFile:
    """A run's small result file (``drga sweep --results``, :func:`export_result`), typed: ``rows[label][mode]`` is one
    :class:`ResultCell`; :meth:`to_dict` writes the JSON :meth:`from_dict` reads. Files written before a field existed
    read it as None (``fingerprint``, ``pretrain_checksum``, ``majority_class``)."""

    name: str
    net: str
    dataset: str
    seed: int
    rows: dict[str, dict[Mode, ResultCell]]
    commit: str | None = None
    data_checksum: str | None = None
    wall_seconds: float | None = None
    phases: dict[str, PhaseCost] = field(default_factory=dict)
    majority_class: dict[str, Any] | None = None  #: a classification run's majority-class accuracies
    pretrain_checksum: str | None = None
    config: dict[str, Any] = field(default_factory=dict)  #: the run's settings, paths portable
    fingerprint: dict[str, Any] | None = None  #: its settings and data (drga/sweep/fingerprints.py)
    history: list[EpochRecord] = field(default_factory=list)  #: every phase's epoch records, in order

    @classmethod
    def from_dict(cls, payload: Any, source: str = "a result file") -> ResultFile:
        """The typed view of a result file's content; a UserError naming ``source`` and what is wrong if it is not one."""
        if not isinstance(payload, dict) or not all(key in payload for key in ("name", "net", "dataset", "seed", "rows")):
            raise UserError(f"{source}: not a result file of drga sweep --results (it needs name, net, dataset, seed and rows)")
        if not isinstance(payload["seed"], int) or isinstance(payload["seed"], bool):
            raise UserError(f"{source}: its seed must be an integer, not {payload['seed']!r}")
        if not isinstance(payload["rows"], dict) or not all(isinstance(cells, dict) for cells in payload["rows"].values()):
            raise UserError(f"{source}: its rows must be an object of rows, each an object of modes")
        rows: dict[str, dict[Mode, ResultCell]] = {}
        for label, cells in payload["rows"].items():
            unknown = sorted(set(cells) - set(MODES))
            if unknown:
                raise UserError(f"{source}: row {label!r} has cells of unknown modes {unknown}; the modes are {', '.join(MODES)}")
            for mode, cell in cells.items():
                if not isinstance(cell, dict) or "test" not in cell:
                    raise UserError(f"{source}: row {label!r}, {mode}: no test scores")
            rows[label] = {Mode(mode): ResultCell.from_dict(cell) for mode, cell in cells.items()}
        return cls(
            payload["name"], payload["net"], payload["dataset"], payload["seed"], rows,
            commit=payload.get("commit"), data_checksum=payload.get("data_checksum"), wall_seconds=payload.get("wall_seconds"),
            phases=phase_costs_from_dict(payload.get("phases"), source), majority_class=payload.get("majority_class"),
            pretrain_checksum=payload.get("pretrain_checksum"), config=dict(payload.get("config") or {}),
            fingerprint=payload.get("fingerprint"), history=[EpochRecord.from_dict(record) for record in payload.get("history") or []],
        )

    def to_dict(self) -> dict[str, Any]:
        """The file's content, in the order :func:`export_result` writes it."""
        return {
            "name": self.name, "net": self.net, "dataset": self.dataset, "seed": self.seed, "commit": self.commit,
            "data_checksum": self.data_checksum, "wall_seconds": self.wall_seconds,
            "phases": {phase: cost.to_dict() for phase, cost in self.phases.items()} or None,
            "majority_class": self.majority_class,
            "rows": {label: {mode: cell.to_dict() for mode, cell in cells.items()} for label, cells in self.rows.items()},
            "pretrain_checksum": self.pretrain_checksum, "config": self.config, "fingerprint": self.fingerprint,
            "history": [record.to_dict() for record in self.history],
        }

    def cell(self, row: str, mode: Mode | str) -> ResultCell | None:
        """The cell of ``row`` in ``mode``; None if the run has none (a phase that did not run)."""
        return self.rows.get(row, {}).get(Mode(mode))

    def test_score(self, row: str, mode: Mode | str) -> float | None:
        """The cell's test score in its task's metric (accuracy; a translation's greedy BLEU); None if the run has no such cell."""
        cell = self.cell(row, mode)
        return None if cell is None else cell.test_score(report_metric_of_network(self.net))


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


def measured_cost(run: Run) -> tuple[float, int] | None:
    """(seconds, epochs) a finished run took, from its result file or results.json; None if unknown."""
    for source in (run.result_file, run.folder / "results.json"):
        if source is not None and source.exists():
            return cost_in(source)
    return None


def cost_in(result_file: Path) -> tuple[float, int] | None:
    """(seconds, epochs) summed over the phases a result file (or a results.json) records; None if it records none, or
    cannot be read: a projection leaves such a run unmeasured rather than stop the sweep."""
    try:
        content = json.loads(Path(result_file).read_text(encoding="utf-8"))
        phases = phase_costs_from_dict(content.get("phases") if isinstance(content, dict) else None, str(result_file))
    except (json.JSONDecodeError, UserError):
        return None
    if not phases:
        return None
    return sum(cost.seconds for cost in phases.values()), sum(cost.epochs for cost in phases.values())


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


def accuracy(results: RunResults | None, row: str, mode: str, metric: str = "accuracy") -> float | None:
    """A run's test score of ``row`` in ``mode`` in its task's ``metric`` (accuracy; a translation's greedy BLEU); None if
    it has no such cell, or (``results`` None) no results yet."""
    return None if results is None else results.test_score(row, mode, metric)


def table(runs: list[Run], out: str | Path, settings: list[str] | None = None) -> str:
    """Every run's test scores (its task's report metric, as its task shows it: accuracy in %, BLEU), then mean ± std
    over seeds per network and data set; the rows (unscaled) also go to ``out`` with the suffix .csv. ``settings``: what
    the runs were made with, said under the title (drga/sweep/fingerprints.py). Returns the markdown."""
    titles = [title for title, _, _ in COLUMNS]
    tasks = {run.net: task_for_network(run.net) for run in runs}
    labels = sorted({task.report.label for task in tasks.values()})
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
        results = RunResults.read(full) if full.exists() else None
        metric = tasks[run.net].report.metric
        values = [accuracy(results, row, mode, metric) for _, row, mode in COLUMNS]
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
        cells = [f"{tasks[run.net].report.scale * v:.2f}" if v is not None else "-" for v in values]
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
        scale = tasks[net].report.scale
        lines.append(f"| {net} | {dataset} | {seeds} | " + " | ".join(mean_std_text([scale * v for v in group[t]]) for t in titles) + " |")
    with open_atomic(Path(out).with_suffix(".csv"), newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return "\n".join(lines)


