"""The loggers ``run.report_to`` names, each a callback (:mod:`drga.runner.callbacks`).

- ``tensorboard``: :class:`TensorBoardLogger`, one TensorBoard run per arm under ``tb/`` (:mod:`drga.runner.tensorboard`);
- ``csv``: :class:`CSVLogger`, ``metrics.csv``: one row per dev evaluation.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from drga.files import open_atomic, writing
from drga.names import history_key
from drga.runner.callbacks import Callback, EpochEnd, Evaluation, Image, RunEnd, RunStart, TrainingLog
from drga.runner.tensorboard import ARMS, PhaseWriters

#: Scores that are sizes, not measurements: kept out of TensorBoard.
COUNTS = ("examples", "sentences", "tokens")


class TensorBoardLogger(Callback):
    """TensorBoard's event files under the run folder's ``tb/``: one sibling run per arm, the same tags
    for the same quantity, on each phase's step axis (the tags: :mod:`drga.runner.tensorboard`)."""

    def __init__(self) -> None:
        self.writers: PhaseWriters | None = None
        self.config: Mapping[str, Any] = {}

    def on_run_start(self, run: RunStart) -> None:
        # a resumed run drops its arm's events from the step it continues from: they are written again
        purge = {ARMS.get(run.resumed_at[0], run.resumed_at[0]): run.resumed_at[1]} if run.resumed_at else None
        self.writers = PhaseWriters(run.run_dir / "tb", purge)
        self.config = run.config

    def _writers(self) -> PhaseWriters:
        if self.writers is None:
            raise RuntimeError("TensorBoardLogger: on_run_start was not called")
        return self.writers

    def on_train_log(self, log: TrainingLog) -> None:
        self._writers().scalars(log.phase, log.values, log.step)

    def on_image(self, image: Image) -> None:
        self._writers().image(image.phase, image.tag, image.image, image.step)

    def on_evaluation(self, evaluation: Evaluation) -> None:
        self._writers().dev(evaluation.phase, evaluation.scores, evaluation.step, skip=COUNTS)

    def on_epoch_end(self, epoch: EpochEnd) -> None:
        self._writers().scalars(epoch.phase, epoch.train, epoch.step, tag=lambda key: f"epoch/{key}")

    def on_run_end(self, run: RunEnd) -> None:
        """Each arm's row of the HParams tab: the configuration and its final numbers."""
        writers = self._writers()
        for phase, values in run.final.items():
            writers.hparams(phase, {"arm": ARMS.get(phase, phase), **self.config}, values)
        writers.flush()

    def close(self) -> None:
        if self.writers is not None:
            self.writers.close()


class CSVLogger(Callback):
    """``metrics.csv`` in the run folder (or ``path``): a header, then one row per dev evaluation.

    An epoch's row is its ``results.json`` history record: ``phase``, ``epoch``, ``step``, ``seconds``,
    the epoch's mean training statistics, and ``dev_<mode>_<number>`` for each evaluation mode; the
    row of a phase's starting point (epoch 0) has its dev numbers only. Each row is flushed as it is
    written, so an interrupted run keeps its rows; a resumed run keeps the rows of the epochs it
    resumes with and appends. A row with a column the header lacks (a later phase's statistics)
    rewrites the file with the wider header, the earlier rows' new cells empty.
    """

    FILE_NAME = "metrics.csv"
    LEADING = ("phase", "epoch", "step", "seconds")

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else None
        self.columns: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self._handle: IO[str] | None = None
        self._writer: csv.DictWriter | None = None

    def on_run_start(self, run: RunStart) -> None:
        if self.path is None:
            self.path = run.run_dir / self.FILE_NAME
        self.close()
        if not run.completed_epochs or not self.path.exists():
            self.columns, self.rows = [], []
            self.path.unlink(missing_ok=True)  # a fresh run's file starts with its first row
            return
        with self.path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            columns, rows = list(reader.fieldnames or []), list(reader)
        # what the resumed run keeps: its completed epochs, and the starting points of the phases they belong to
        kept = set(run.completed_epochs) | {(phase, 0) for phase, _ in run.completed_epochs}
        self.columns = columns
        self.rows = [row for row in rows if (row.get("phase"), _integer(row.get("epoch"))) in kept]
        if len(self.rows) < len(rows):  # rows written after last.pt, before the interruption: they come again
            self._rewrite()

    def on_evaluation(self, evaluation: Evaluation) -> None:
        if evaluation.epoch == 0:  # an epoch's own row comes with its training statistics (on_epoch_end)
            self._write({"phase": evaluation.phase, "epoch": 0, "step": evaluation.step, **_dev_columns(evaluation.scores)})

    def on_epoch_end(self, epoch: EpochEnd) -> None:
        self._write({"phase": epoch.phase, "epoch": epoch.epoch, "step": epoch.step, "seconds": epoch.seconds,
                     **epoch.train, **_dev_columns(epoch.dev)})

    def _write(self, row: dict[str, Any]) -> None:
        assert self.path is not None
        self.rows.append(row)
        self.columns = self.columns or list(self.LEADING)
        new = [key for key in row if key not in self.columns]
        if new or not self.path.exists():
            self.columns += new
            self._rewrite()
            return
        if self._writer is None:
            self._open()
        assert self._writer is not None and self._handle is not None
        with writing(self.path):
            self._writer.writerow(row)
            self._handle.flush()

    def _rewrite(self) -> None:
        """The file anew: the header and every row (atomic: a reader never sees it half written)."""
        assert self.path is not None
        self.close()
        with open_atomic(self.path, newline="") as handle:
            writer = csv.DictWriter(handle, self.columns, restval="")
            writer.writeheader()
            writer.writerows(self.rows)

    def _open(self) -> None:
        assert self.path is not None
        with writing(self.path):
            self._handle = self.path.open("a", newline="", encoding="utf-8")
        self._writer = csv.DictWriter(self._handle, self.columns, restval="")

    def close(self) -> None:
        handle, self._handle, self._writer = self._handle, None, None
        if handle is not None:
            with writing(handle.name):
                handle.close()


def _dev_columns(scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``dev_<mode>_<number>``: the names ``results.json``'s history gives the dev scores."""
    return {history_key(mode, key): value for mode, numbers in scores.items() for key, value in numbers.items()}


def _integer(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


#: ``run.report_to``'s names → their loggers.
LOGGERS: dict[str, type[Callback]] = {"tensorboard": TensorBoardLogger, "csv": CSVLogger}


def report_loggers(names: Sequence[str]) -> list[Callback]:
    """A new logger for each name of ``run.report_to`` (a name given twice: one logger)."""
    return [LOGGERS[name]() for name in dict.fromkeys(names)]
