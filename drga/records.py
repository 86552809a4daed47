"""What a run writes about itself, typed both ways: each record is what the code holds, and its
``to_dict`` writes the JSON its ``from_dict`` reads (results.json, ``last.pt``'s history, a sweep's
result file), so nothing reads a run's numbers by string keys.

- :class:`EpochRecord`: one epoch of a phase (results.json's ``history``, ``last.pt``, ``metrics.csv``'s row);
- :class:`PhaseCost`: what a phase took (results.json's ``phases``);
- :class:`ReportRow`: one row of the final report, a phase's selected checkpoints scored on the test split;
- :class:`RunResults`: results.json, what ``Trainer.run()`` and ``drga.api.train`` return.

The JSON keys are the ones every committed result file has (tests/studies/test_result_files.py reads them all).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drga.errors import UserError
from drga.names import MODES, Mode, Split, epoch_key, headline_score, history_key, parse_history_key, score_key


@dataclass(frozen=True)
class EpochRecord:
    """One epoch of a phase as results.json's ``history``, ``last.pt`` and a result file keep it (``metrics.csv``'s row):
    ``phase``, ``epoch``, ``seconds`` (its wall time up to its selection), the epoch's mean training statistics, and its
    dev numbers, each under ``dev_<mode>_<metric>`` (:func:`~drga.names.history_key`), in that order. :meth:`to_dict`
    writes the keys :meth:`from_dict` reads, so a record read and written again is the same JSON."""

    phase: str
    epoch: int
    seconds: float | None = None  #: None in a record without it
    #: The epoch's mean training statistics (``loss``, ``reward``, ``beta``, ...: the learner's), in the order logged.
    train: dict[str, Any] = field(default_factory=dict)
    #: Mode → the task's dev numbers (accuracy, reward, ...; translation: perplexity, BLEU, ...).
    dev: dict[Mode, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> EpochRecord:
        train: dict[str, Any] = {}
        dev: dict[Mode, dict[str, Any]] = {}
        for key, value in record.items():
            if key in ("phase", "epoch", "seconds"):
                continue
            cell = parse_history_key(key)
            if cell is None:
                train[key] = value
            else:
                dev.setdefault(cell[0], {})[cell[1]] = value
        return cls(record["phase"], record["epoch"], record.get("seconds"), train, dev)

    def to_dict(self) -> dict[str, Any]:
        seconds = {} if self.seconds is None else {"seconds": self.seconds}
        dev = {history_key(mode, metric): value for mode, numbers in self.dev.items() for metric, value in numbers.items()}
        return {"phase": self.phase, "epoch": self.epoch, **seconds, **self.train, **dev}

    def dev_number(self, mode: Mode | str, metric: str) -> Any:
        """The epoch's dev ``metric`` in ``mode``; None where the epoch was not scored so."""
        return self.dev.get(Mode(mode), {}).get(metric)


@dataclass(frozen=True)
class PhaseCost:
    """What one phase of a run took: its epochs of the planned cap, whether early stopping ended it, its wall seconds."""

    epochs: int
    max_epochs: int
    seconds: float
    stopped_early: bool

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any], source: str = "results.json") -> PhaseCost:
        missing = [key for key in ("epochs", "seconds") if not isinstance(entry, Mapping) or key not in entry]
        if missing:
            raise UserError(f"{source}: a phase's entry without {', '.join(missing)}")
        epochs = int(entry["epochs"])
        max_epochs = int(entry.get("max_epochs", epochs))  # files of a sweep before the cap was recorded
        return cls(epochs, max_epochs, float(entry["seconds"]), bool(entry.get("stopped_early", epochs < max_epochs)))

    def to_dict(self) -> dict[str, Any]:
        return {"epochs": self.epochs, "max_epochs": self.max_epochs, "seconds": self.seconds, "stopped_early": self.stopped_early}


def phase_costs_from_dict(entries: Mapping[str, Any] | None, source: str = "results.json") -> dict[str, PhaseCost]:
    """results.json's ``phases`` (a result file's too): phase → :class:`PhaseCost`; none for a file without them."""
    return {phase: PhaseCost.from_dict(entry, f"{source}, phase {phase}") for phase, entry in (entries or {}).items()}


@dataclass(frozen=True)
class ModeScores:
    """One mode of a report row: the epoch its checkpoint was selected at, that checkpoint's dev numbers as its
    epoch recorded them, its test scores (the task's evaluation: accuracy, ...; greedy BLEU, ...), and a
    translation's beam-search test scores."""

    epoch: int | None
    test: dict[str, Any]
    dev: dict[str, Any] | None = None
    test_beam: dict[str, Any] | None = None

    def scores(self, split: Split | str, beam: bool = False) -> dict[str, Any] | None:
        """The numbers of ``split`` (with ``beam``: the beam-search test scores); None where there are none."""
        if Split(split) == Split.DEV:
            return self.dev
        return self.test_beam if beam else self.test


@dataclass(frozen=True)
class ReportRow:
    """One row of a run's final report (:class:`~drga.names.ResultRow` names them): a phase's selected checkpoints,
    one per mode scored, as results.json's ``results`` keeps them (``test_<mode>``, ``dev_<mode>``,
    ``epoch_<mode>``, and a translation's ``test_<mode>_beam``)."""

    phase: str
    #: The epoch of the row's first checkpoint (in files written before each mode had its own, the only one).
    epoch: int
    checkpoint: str
    modes: dict[Mode, ModeScores] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], source: str = "results.json") -> ReportRow:
        if not isinstance(row, Mapping):
            raise UserError(f"{source}: a report row that is not a JSON object ({type(row).__name__})")
        missing = [key for key in ("phase", "epoch", "checkpoint") if key not in row]
        if missing:
            raise UserError(f"{source}: a report row without {', '.join(missing)}")
        known = {"phase", "epoch", "checkpoint"}
        modes: dict[Mode, ModeScores] = {}
        for mode in MODES:
            keys = score_key(Split.TEST, mode), score_key(Split.DEV, mode), score_key(Split.TEST, mode, beam=True), epoch_key(mode)
            known.update(keys)
            if keys[0] in row:
                modes[mode] = ModeScores(row.get(keys[3], row.get("epoch")), row[keys[0]], row.get(keys[1]), row.get(keys[2]))
        unknown = sorted(set(row) - known)
        if unknown:
            raise UserError(f"{source}: a report row with keys this version does not know: {', '.join(unknown)}")
        return cls(row["phase"], row["epoch"], row["checkpoint"], modes)

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"phase": self.phase, "epoch": self.epoch, "checkpoint": self.checkpoint}
        for mode, cell in self.modes.items():
            row[epoch_key(mode)] = cell.epoch
            row[score_key(Split.TEST, mode)] = cell.test
            if cell.test_beam is not None:
                row[score_key(Split.TEST, mode, beam=True)] = cell.test_beam
            row[score_key(Split.DEV, mode)] = cell.dev
        return row

    def scores(self, split: Split | str, mode: Mode | str, beam: bool = False) -> dict[str, Any] | None:
        """The row's numbers of ``split`` in ``mode``; None where the row has no such cell."""
        cell = self.modes.get(Mode(mode))
        return None if cell is None else cell.scores(split, beam)

    def epoch_of(self, mode: Mode | str) -> int | None:
        """The epoch ``mode``'s checkpoint was selected at; None where the row has no such cell."""
        cell = self.modes.get(Mode(mode))
        return None if cell is None else cell.epoch

    def test_score(self, mode: Mode | str, metric: str) -> float | None:
        """The test number a table shows of ``mode``'s cell: its task's ``metric`` (its registration's
        ``report.metric``); None where the row has no such cell."""
        test = self.scores(Split.TEST, mode)
        return None if test is None else headline_score(test, metric)


@dataclass(frozen=True)
class RunResults:
    """A finished run's results.json: every reported row, the history, what each phase took, and what tells its
    settings and data from another run's. A task's own entries (classification's ``majority_class``, a
    translation's ``beam_size`` and ``bleu_signature``) are in :attr:`task_entries`, written beside the others."""

    run_dir: str
    #: The run's settings as its task writes them (``config.toml``'s content).
    config: dict[str, Any]
    #: Row label (:class:`~drga.names.ResultRow`) → the row, in the order the phases ran.
    rows: dict[str, ReportRow]
    history: list[EpochRecord]
    #: Phase → its cost; empty until the loop has summed the history.
    phases: dict[str, PhaseCost] = field(default_factory=dict)
    #: The fingerprint of its settings and data (``settings``, ``data``: drga/sweep/fingerprints.py compares it before
    #: skipping a run).
    fingerprint: dict[str, Any] | None = None
    data_checksum: str | None = None
    #: The checksum of the network the run started from (``train.init_from`` pairs runs by it).
    pretrain_checksum: str | None = None
    task_entries: dict[str, Any] = field(default_factory=dict)

    #: The keys this record writes itself; any other top-level key of results.json is a task entry.
    FIELDS = ("run_dir", "config", "data_checksum", "results", "pretrain_checksum", "history", "phases", "fingerprint")

    @classmethod
    def from_dict(cls, content: Any, source: str = "results.json") -> RunResults:
        """The typed results of results.json's content; a UserError naming ``source`` if it is not one."""
        if not isinstance(content, Mapping) or not all(key in content for key in ("results", "history")):
            raise UserError(f"{source}: not a run's results.json (it needs results and history)")
        if not isinstance(content["results"], Mapping) or not isinstance(content["history"], list) or not all(
                isinstance(record, Mapping) for record in content["history"]):
            raise UserError(f"{source}: not a run's results.json (its results must be an object, its history a list of objects)")
        return cls(
            run_dir=content.get("run_dir", ""),
            config=dict(content.get("config") or {}),
            rows={label: ReportRow.from_dict(row, source) for label, row in content["results"].items()},
            history=[EpochRecord.from_dict(record) for record in content["history"]],
            phases=phase_costs_from_dict(content.get("phases"), source),
            fingerprint=content.get("fingerprint"),
            data_checksum=content.get("data_checksum"),
            pretrain_checksum=content.get("pretrain_checksum"),
            task_entries={key: value for key, value in content.items() if key not in cls.FIELDS},
        )

    @classmethod
    def read(cls, path: str | Path) -> RunResults:
        """A run's results.json, read and checked."""
        try:
            content = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise UserError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
        return cls.from_dict(content, str(path))

    def to_dict(self) -> dict[str, Any]:
        """results.json's content: plain JSON values, copies of the record's (a caller may change them freely)."""
        optional = {"data_checksum": self.data_checksum, "pretrain_checksum": self.pretrain_checksum}
        content = {
            "run_dir": self.run_dir,
            "config": copy.deepcopy(self.config),
            **{key: value for key, value in optional.items() if value is not None},
            "results": {label: copy.deepcopy(row.to_dict()) for label, row in self.rows.items()},
            "history": [record.to_dict() for record in self.history],
            **copy.deepcopy(self.task_entries),
        }
        if self.phases:
            content["phases"] = {phase: cost.to_dict() for phase, cost in self.phases.items()}
        if self.fingerprint is not None:
            content["fingerprint"] = self.fingerprint
        return content

    def row(self, label: str) -> ReportRow:
        """The row ``label`` (a :class:`~drga.names.ResultRow`); a UserError naming the rows there are if it has none."""
        if label not in self.rows:
            raise UserError(f"{self.run_dir or 'this run'}: no row '{label}' in its results (it has: {', '.join(self.rows) or 'none'})")
        return self.rows[label]

    def test_score(self, label: str, mode: Mode | str, metric: str) -> float | None:
        """The test number a table shows of row ``label`` in ``mode`` (its task's ``metric``); None where there is none."""
        row = self.rows.get(label)
        return None if row is None else row.test_score(mode, metric)
