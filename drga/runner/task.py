"""A task (classification, translation, yours): one class of hooks, registered with ``@register_task``; what it supplies
to the phase runner (only what differs).

The runner (``drga/runner/loop.py``) owns the phases, epochs, early stopping, checkpoints, resume,
the callbacks (TensorBoard, CSV: ``drga/runner/callbacks.py``) and torchrun DDP. A task says what
its data and network are, what eq. 12's loss is on the network's own and on the revised attention,
how a dev split is scored and which score selects, what a checkpoint holds besides the modules, and
what the final report is. Its hooks receive a :class:`~drga.runner.context.RunContext` (what they
may read of the run and ask of it), not the runner.

The task's registration (``@register_task("name", config=..., ...)``, ``drga/registry.py`` · :class:`~drga.registry.TaskSpec`)
says what the entry points read of it before any run: its configuration class and loader, its trainer, its commands, how a
checkpoint of it is loaded; the class holds the hooks alone. This module, and a task's, import torch only when a hook
runs, so that the registry can import a task (``drga --help`` lists its commands) without loading it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from drga import registry
from drga.config import ExperimentConfig
from drga.names import ResultRow, scores_from_record
from drga.registry import RegistryError, imported

if TYPE_CHECKING:
    from torch import Tensor

    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.checkpoint_format import CheckpointPayload
    from drga.core.rollout import Rollout
    from drga.records import RunResults
    from drga.runner.context import RunContext, TaskBatches
    from drga.runner.phases import Phase

__all__ = ["ReportCell", "Task", "TaskBatches", "data_fingerprint_of", "dev_selection_key"]


def __getattr__(name: str) -> Any:
    if name == "TaskBatches":  # re-exported; drga/runner/context.py (torch) is imported when it is asked for
        from drga.runner.context import TaskBatches

        return TaskBatches
    raise AttributeError(f"module 'drga.runner.task' has no attribute '{name}'")


@dataclass
class ReportCell:
    """One cell of the final report: a phase's best checkpoint in one evaluation mode, loaded into the run's modules."""

    label: ResultRow
    phase: str
    mode: str
    path: Path
    payload: CheckpointPayload


class Task(ABC):
    """The task half of a run: the hooks the runner calls. The built-in subclasses are
    :class:`drga.tasks.classification.task.ClassificationTask` and :class:`drga.tasks.translation.task.TranslationTask`.

    A task written from scratch implements the nine abstract hooks; the others have defaults. Registered with
    ``@register_task`` (``drga/registry.py``), it is built from a configuration alone (``cls(config)``) by the runner's
    trainer, and by ``drga tune`` and ``drga sweep``, which ask it for its :meth:`selection_key`, its
    :meth:`read_content_fingerprint` and its :meth:`metric_name`.
    """

    @property
    def name(self) -> str:
        """The name it is registered under: its checkpoints record it as ``task``."""
        return registry.task_spec_of(type(self)).name

    def metric_name(self) -> str:
        """What the first number of its :meth:`selection_key` is (``"dev accuracy"``), as ``drga tune`` reports it."""
        raise RegistryError(f"task '{self.name}' cannot be used by drga tune: its class gives no metric_name "
                            "(docs/extending.md, \"A new task\")")

    #: Config fields a resumed run may change without changing its numbers (data.rare_labels: data that load are the same data;
    #: data.tsv_path and data.data_dir say where the data are read from, written relative to the folder the run was started
    #: in: the data's fingerprint, checked by :meth:`check_resume`, says whether they are the same data).
    resumable_changes: frozenset[str] = frozenset(
        {"run.device", "run.progress", "run.threads", "run.logdir", "run.report_to", "data.rare_labels", "data.tsv_path", "data.data_dir"}
    )
    #: Under torchrun: whether dev and test are sharded over the processes (their means then
    #: combined by :meth:`combine_over_processes`), or scored whole by every process.
    shard_evaluation: bool = True

    def __init__(self, config: ExperimentConfig, settings: Any = None):
        """``config``: the settings every task shares; ``settings``: the whole configuration when the
        task has sections of its own (translation's ``[nmt]``), with ``validate``, ``to_dict`` and ``flat``."""
        self.config = config
        self.settings = config if settings is None else settings

    # ------------------------------------------------------------------ configuration

    def saved_flat_config(self, saved: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's configuration as ``section.key`` → value, as ``settings.flat()`` gives this run's (keys newer than
        it: defaults); the default reads the shared sections alone (:func:`drga.config.config_from_dict`)."""
        from drga.config import config_from_dict

        return config_from_dict(saved).flat()

    def check_adoptable(self, source: Path, payload: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` (``train.init_from: ...``) unless the checkpoint's network reads and writes what this
        run's data give (the labels and vocabulary; the subword models); the default checks only that its sizes fit."""

    # ------------------------------------------------------------------ data and network

    @abstractmethod
    def prepare(self, log: Callable[[str], None], resume_from: Path | None) -> TaskBatches:
        """Load and encode the data (``resume_from``: the run's ``last.pt`` when resuming); the batches."""

    @abstractmethod
    def build_network(self, log: Callable[[str], None]) -> AttentionNetwork:
        """The network the configuration names (or the caller's)."""

    @abstractmethod
    def probe_batch(self) -> Batch:
        """A small training batch: the agent's state and action sizes are read off its encoding."""

    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]:
        """The training examples and their collate function: the Gymnasium environment's episodes, which only the
        stable-baselines3 learners (``agent.algorithm = "sb3-ppo"``, ``"sb3-a2c"``) read."""
        raise RegistryError(f"task '{self.name}' gives no agent_examples, which the stable-baselines3 learners read: "
                            "train its agent with agent.algorithm = \"reinforce\", or give them (docs/extending.md, \"A new task\")")

    # ------------------------------------------------------------------ training

    @abstractmethod
    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor:
        """Eq. 12 on the network's own attention."""

    @abstractmethod
    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor:
        """Eq. 12 on the attention the agent revised, over the K samples."""

    def warmup_steps(self, phase: Phase) -> int:
        """Optimiser steps over which the network's learning rate warms up in ``phase`` (translation's
        ``nmt.warmup_steps`` in a ``phase.warms_up``; 0: none); ``drga/runner/lr_schedule.py`` applies it."""
        return 0

    # ------------------------------------------------------------------ evaluation and selection

    @abstractmethod
    def evaluate(self, context: RunContext, split: str, mode: str) -> Any:
        """The scores of ``split`` (dev or test) in evaluation ``mode``: an object with ``as_dict()``
        (what a checkpoint keeps of it)."""

    def combine_over_processes(self, result: Any, batches: Any) -> Any:
        """Under torchrun with :attr:`shard_evaluation`: this process's scores → everyone's."""
        return result

    def numbers(self, result: Any) -> dict[str, Any]:
        """A score's numbers, for the epoch record and TensorBoard (default: its ``as_dict()``)."""
        return dict(result.as_dict())

    @abstractmethod
    def selection_key(self, result: Any) -> tuple[float, ...]:
        """Bigger is better: the key a dev score is selected by."""

    #: The dataclass its ``evaluate`` returns (classification's ``EvalResult``), which a dev record's fields fill; or
    #: ``"module:Class"``, imported when first used.
    result_type: ClassVar[type | str | None] = None

    def epoch_summary(self, scores: Mapping[str, Any], train_stats: Mapping[str, float]) -> list[str]:
        """The parts of an epoch's console line that describe its scores (default: each mode's numbers)."""
        return [f"dev {mode} " + " ".join(f"{key} {value:.4f}" for key, value in self.numbers(result).items()
                                          if isinstance(value, float)) for mode, result in scores.items()]

    def after_dev_evaluation(self, context: RunContext, phase: Phase, epoch: int) -> None:
        """Runs after every dev evaluation (classification: the tracked sentences)."""

    # ------------------------------------------------------------------ run folder, checkpoints, report

    def start(self, context: RunContext, resumed: bool) -> None:
        """Runs once the run folder is open (files of the task's own, a starting checkpoint)."""

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

    def check_continuable(self, last: Path, payload: Mapping[str, Any]) -> None:
        """With ``--force`` on changed data: refuse, in words, data the checkpoint's network cannot continue on."""

    @abstractmethod
    def checkpoint_content(self) -> dict[str, Any]:
        """What a checkpoint holds besides the modules (vocabulary, tokenizers, ...): the task's own entries, which the
        checkpoint nests under one entry beside the task's :attr:`name` (``CheckpointPayload.task_entries``)."""

    @abstractmethod
    def final_report(self, context: RunContext, cells: Iterable[ReportCell]) -> tuple[RunResults, str]:
        """Score the test split with every selected checkpoint: the run's results (the loop adds what each phase took and
        the fingerprint, then writes them as results.json) and a note for the log."""


def selection_key_of_record(task: Task, record: Mapping[str, Any]) -> tuple[float, ...]:
    """``task``'s :meth:`~Task.selection_key` of a dev record as results.json keeps it, or of an epoch's numbers."""
    if task.result_type is None:
        raise NotImplementedError(f"{type(task).__name__} names no result_type, the dataclass its evaluate returns")
    result_type = imported(task.result_type) if isinstance(task.result_type, str) else task.result_type
    return tuple(task.selection_key(scores_from_record(result_type, record)))


def dev_selection_key(task_class: type[Task], config: Any, dev: Mapping[str, Any]) -> tuple[float, ...]:
    """The selection key of a dev record of a run of ``config`` (``drga tune`` ranks its trials by it): the very key the
    runner selects epochs by."""
    return selection_key_of_record(task_class(config), dev)


def data_fingerprint_of(task_class: type[Task], config: Any, command: str) -> str:
    """:meth:`~Task.read_content_fingerprint` of ``config``'s data, for ``command`` (``drga sweep``, ``drga tune``): the very
    fingerprint the runner records; an error naming what to give when the task cannot say."""
    task = task_class(config)
    found = task.read_content_fingerprint()
    if found is None:
        raise RegistryError(f"task '{task.name}' cannot be used by {command}: its class gives no read_content_fingerprint "
                            "(docs/extending.md, \"A new task\")")
    return str(found)
