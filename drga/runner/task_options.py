"""What a task may add to :class:`~drga.runner.task.Task`'s nine hooks: each class here is one capability, which a task
has by inheriting the class. A task without one gets the runner's default for it, named in the class's docstring. The
built-in tasks inherit them all (translation but :class:`ShardedEvaluation`: it scores dev and test whole).

The runner reaches them through :func:`epoch_hooks`, :func:`run_checks`, and :func:`tunable`, which give the task itself
where it has the capability, else the default or an error naming what to add; the stable-baselines3 learners ask the
task for its :class:`Episodes`' ``agent_examples`` themselves.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from drga import registry
from drga.registry import RegistryError
from drga.runner.sharding import ShardedEvaluation

if TYPE_CHECKING:
    from drga.baselines.protocol import Batch
    from drga.runner.context import RunContext
    from drga.runner.phases import Phase

__all__ = ["EpochHooks", "Episodes", "RunChecks", "ShardedEvaluation", "Tunable", "epoch_hooks", "run_checks",
           "tunable"]


class EpochHooks:
    """How a run reports and paces the task's epochs. Without it: each score's ``as_dict()`` numbers, no warm-up, and
    nothing at the start or after a dev evaluation."""

    def numbers(self, result: Any) -> dict[str, Any]:
        """A score's numbers, for the epoch record and TensorBoard (default: its ``as_dict()``)."""
        return dict(result.as_dict())

    def epoch_summary(self, scores: Mapping[str, Any], train_stats: Mapping[str, float]) -> list[str]:
        """The parts of an epoch's console line that describe its scores (default: each mode's float numbers)."""
        return [f"dev {mode} " + " ".join(f"{key} {value:.4f}" for key, value in self.numbers(result).items()
                                          if isinstance(value, float)) for mode, result in scores.items()]

    def warmup_steps(self, phase: Phase) -> int:
        """Optimiser steps over which the network's learning rate warms up in ``phase`` (translation's
        ``nmt.warmup_steps`` in a ``phase.warms_up``; 0: none); ``drga/runner/lr_schedule.py`` applies it."""
        return 0

    def start(self, context: RunContext, resumed: bool) -> None:
        """Runs once the run folder is open (files of the task's own, a starting checkpoint)."""

    def after_dev_evaluation(self, context: RunContext, phase: Phase, epoch: int) -> None:
        """Runs after every dev evaluation (classification: the tracked sentences)."""


class RunChecks:
    """What a run checks before it reuses a checkpoint: a resumed run's configuration and data, ``train.init_from``'s
    network, and the data fingerprint that ``drga sweep`` compares a finished run's against. Without it: the shared
    sections' settings are compared, the network's sizes checked, and no data fingerprint is recorded (``drga sweep`` and
    ``drga tune`` then refuse the task)."""

    #: Config fields a resumed run may change without changing its numbers (data.rare_labels: data that load are the same data;
    #: data.tsv_path and data.data_dir say where the data are read from, written relative to the folder the run was started
    #: in: the data's fingerprint says whether they are the same data).
    resumable_changes: frozenset[str] = frozenset(
        {"run.device", "run.progress", "run.threads", "run.logdir", "run.report_to", "data.rare_labels", "data.tsv_path", "data.data_dir"}
    )

    def saved_flat_config(self, saved: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's configuration as ``section.key`` → value, as ``settings.flat()`` gives this run's (keys newer than
        it: defaults); the default reads the shared sections alone (:func:`drga.config.config_from_dict`)."""
        from drga.config import config_from_dict

        return config_from_dict(saved).flat()

    def check_adoptable(self, source: Path, payload: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` (``train.init_from: ...``) unless the checkpoint's network reads and writes what this
        run's data give (the labels and vocabulary; the subword models); the default checks only that its sizes fit."""

    def check_continuable(self, last: Path, payload: Mapping[str, Any]) -> None:
        """With ``--force`` on changed data: refuse, in words, data the checkpoint's network cannot continue on."""

    def data_fingerprint(self) -> str | None:
        """A fingerprint of what the run trains and is scored on (checkpoints record it as ``data_checksum``)."""
        return None

    def content_fingerprint(self) -> str | None:
        """A fingerprint of the data as read from their files, before any vocabulary (``DatasetSplits.content_fingerprint``)."""
        return None

    def read_content_fingerprint(self) -> str | None:
        """:meth:`content_fingerprint` of the configured data read from their files alone, without preparing a run:
        what ``drga sweep`` checks a finished run's data against and ``drga tune`` records (None: the task cannot say)."""
        return None


class Tunable(ABC):
    """What ``drga tune`` needs to rank trials by the very key the runner selects epochs by, from their dev records alone.
    Without it, ``drga tune`` refuses the task."""

    #: The dataclass the task's ``evaluate`` returns (classification's ``EvalResult``), which a dev record's fields fill;
    #: or ``"module:Class"``, imported when first used.
    result_type: ClassVar[type | str]

    @abstractmethod
    def metric_name(self) -> str:
        """What the first number of the task's ``selection_key`` is (``"dev accuracy"``), as ``drga tune`` reports it."""


class Episodes(ABC):
    """The Gymnasium environment's episodes, which only the stable-baselines3 learners read (``agent.algorithm =
    "sb3-ppo"``, ``"sb3-a2c"``). Without it, those learners refuse the task."""

    @abstractmethod
    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]:
        """The training examples and their collate function."""


_NO_EPOCH_HOOKS, _NO_RUN_CHECKS = EpochHooks(), RunChecks()


def epoch_hooks(task: object) -> EpochHooks:
    """``task``'s :class:`EpochHooks`, else the defaults."""
    return task if isinstance(task, EpochHooks) else _NO_EPOCH_HOOKS


def run_checks(task: object) -> RunChecks:
    """``task``'s :class:`RunChecks`, else the defaults."""
    return task if isinstance(task, RunChecks) else _NO_RUN_CHECKS


def _name(task: object) -> str:
    return registry.task_spec_of(type(task)).name


def tunable(task: object) -> Tunable:
    """``task`` as :class:`Tunable`, or an error saying ``drga tune`` cannot use it."""
    if not isinstance(task, Tunable):
        raise RegistryError(f"task '{_name(task)}' cannot be used by drga tune: its class is no "
                            "drga.extend.Tunable, which gives the metric_name and result_type (docs/extending.md, \"A new task\")")
    return task
