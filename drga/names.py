"""The names that configurations, checkpoints and result files share: Algorithm 1's phases, the parts
a phase trains, the two evaluation modes, the splits, the rows of the final report, and the keys of a results.json row
(drga/records.py reads and writes the records by them).

Each is a ``str`` enum: a member *is* its string (``Mode.NET_ONLY == "net-only"``), so JSON, TOML,
f-strings, reprs and dictionary keys see exactly the strings they saw before the enums existed, and
every committed result file stays readable (tests/studies/test_result_files.py reads all of them).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from drga.errors import UserError

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same behaviour, written out

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return format(str(self.value), spec)


class Name(StrEnum):
    """A ``str`` enum whose repr is its string's too: a record, dict or error message that holds one
    prints as it did when it held the string (``{'net-only': 0.52}``, not ``{<Mode.NET_ONLY: ...>: 0.52}``)."""

    def __repr__(self) -> str:
        return repr(self.value)


class PhaseName(Name):
    """Algorithm 1's phases, in the order a run takes them (``drga/runner/phases.py``)."""

    PRETRAIN = "pretrain"
    BASELINE = "baseline"  #: the equal-budget baseline
    AGENT = "agent"
    COTRAIN = "cotrain"


class Part(Name):
    """What a phase trains or starts from: the network (with β's schedule), the agent, β's learned factor."""

    NETWORK = "network"
    AGENT = "agent"
    BETA = "beta"


M = TypeVar("M")


def modules_by_part(network: M, policy: M, strength: M) -> dict[Part, M]:
    """The module behind each part, in the order every list of them keeps (network, agent, β): the one
    part → module map (the optimiser table of ``drga/runner/optim.py``, the checkpoints' ``RetrofitModules``)."""
    return {Part.NETWORK: network, Part.AGENT: policy, Part.BETA: strength}


class Mode(Name):
    """The two evaluation modes: the network on its own attention α, or on the agent's revised α′."""

    NET_ONLY = "net-only"
    WITH_AGENT = "with-agent"


#: Both modes, net-only first (the order of every table).
MODES: tuple[Mode, ...] = tuple(Mode)


class ModeError(UserError, ValueError):
    """A mode a trained model cannot be evaluated in: not a mode, or with-agent without a trained agent."""


def checked_mode(mode: str | None, has_agent: bool, model: str = "this checkpoint", otherwise: str = "use mode net-only") -> Mode:
    """The mode to evaluate a trained model in: ``mode``, or (None) with-agent where the model holds a
    trained agent and net-only where it does not (a checkpoint of a phase before the agent's).
    ``model`` names it in the error, ``otherwise`` says what to do instead of with-agent."""
    if mode is None:
        return Mode.WITH_AGENT if has_agent else Mode.NET_ONLY
    if mode not in MODES:
        raise ModeError(f"unknown mode '{mode}'; choose one of: {', '.join(MODES)}")
    if mode == Mode.WITH_AGENT and not has_agent:
        raise ModeError(f"{model} holds no trained agent (it is from a phase before the agent's); {otherwise}")
    return Mode(mode)


class Split(Name):
    DEV = "dev"
    TEST = "test"


class ResultRow(Name):
    """The rows of a run's final report (results.json's ``results``, a result file's ``rows``): one per phase,
    each read at that phase's best checkpoints (``Phase.report_label`` in :mod:`drga.runner.phases`)."""

    PRETRAIN_ONLY = "baseline (pretrain only)"
    EQUAL_BUDGET = "baseline (equal budget)"  #: the equal-budget baseline
    AGENT_ON_FROZEN = "agent on frozen network"
    DRGA = "DRGA (co-trained)"


def score_key(split: Split | str, mode: Mode | str, beam: bool = False) -> str:
    """The key of a results.json row that holds ``split``'s scores in ``mode`` (``test_net-only``);
    with ``beam``, translation's beam-search scores (``test_net-only_beam``)."""
    return f"{Split(split)}_{Mode(mode)}" + ("_beam" if beam else "")


def epoch_key(mode: Mode | str) -> str:
    """The key of a results.json row that holds the epoch ``mode``'s cell was selected at (``epoch_with-agent``)."""
    return f"epoch_{Mode(mode)}"


def history_key(mode: Mode | str, metric: str) -> str:
    """The key of an epoch record (results.json's ``history``, ``metrics.csv``) that holds a dev ``metric`` in ``mode``."""
    return f"{Split.DEV}_{Mode(mode)}_{metric}"


def parse_history_key(key: str) -> tuple[Mode, str] | None:
    """(mode, metric) of an epoch record's key that :func:`history_key` builds; None for any other key."""
    for mode in MODES:
        prefix = history_key(mode, "")
        if key.startswith(prefix) and len(key) > len(prefix):
            return mode, key[len(prefix):]
    return None


def scores_from_record(kind: type, record: Mapping[str, Any]) -> Any:
    """A task's score object (``kind``, a dataclass) from a record of its fields: a dev record as results.json keeps
    it, or an epoch's numbers (which lack the text fields: None)."""
    return kind(**{f.name: record.get(f.name) for f in dataclasses.fields(kind) if f.name in record or f.default is dataclasses.MISSING})


def best_checkpoint(run_dir: str | Path, phase: str, mode: str | None = None) -> Path:
    """A phase's best checkpoint in its run folder: ``<phase>_best.pt``, the epoch its selecting mode chose, or with
    ``mode`` the epoch that mode chose where it is not the selecting one (``cotrain_best_net-only.pt``)."""
    return Path(run_dir) / best_checkpoint_name(phase, mode)


def best_checkpoint_name(phase: str, mode: str | None = None) -> str:
    """The file name of :func:`best_checkpoint`, as result files record it."""
    return f"{phase}_best.pt" if mode is None else f"{phase}_best_{mode}.pt"


def headline_score(scores: Mapping[str, Any], metric: str) -> float:
    """The one number a table shows of a test cell: its task's ``metric`` (its registration's ``report.metric``:
    a classification's accuracy, a translation's greedy BLEU)."""
    return float(scores[metric])


def counted(number: int, noun: str) -> str:
    """A count and its noun in the number it takes: ``1 epoch``, ``2 epochs`` (a regular plural: the noun and an s)."""
    return f"{number} {noun}" + ("" if number == 1 else "s")
