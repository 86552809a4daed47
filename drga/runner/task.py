"""A task (classification, translation, yours): one class, registered with ``@register_task``; what it supplies to the
phase runner (only what differs) and what the entry points read of it before any run.

The runner (``drga/runner/loop.py``) owns the phases, epochs, early stopping, checkpoints, resume,
the callbacks (TensorBoard, CSV: ``drga/runner/callbacks.py``) and torchrun DDP. A task says what
its data and network are, what eq. 12's loss is on the network's own and on the revised attention,
how a dev split is scored and which score selects, what a checkpoint holds besides the modules, and
what the final report is. Its hooks receive a :class:`~drga.runner.context.RunContext` (what they
may read of the run and ask of it), not the runner.

Its class members are its registration (``drga/registry.py`` · :func:`~drga.registry.register_task`): its name, its
configuration class and loader, what its networks read, its trainer, its commands, how a checkpoint of it is loaded, what
its selection key's first number is called and the metric its tables report. ``drga train``, the runner, ``drga tune``,
``drga sweep``, ``drga evaluate`` and the tables read these same members. This module, and a task's, import torch only
when a hook runs, so that the registry can import a task (``drga --help`` lists its commands) without loading it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from drga.config import ExperimentConfig
from drga.names import ResultRow, scores_from_record
from drga.registry import RegistryError

if TYPE_CHECKING:
    from torch import Tensor

    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.checkpoint_format import CheckpointPayload
    from drga.core.rollout import Rollout
    from drga.records import RunResults
    from drga.runner.context import RunContext, TaskBatches
    from drga.runner.phases import Phase

__all__ = ["ReportCell", "Task", "TaskBatches", "data_fingerprint_of", "dev_selection_key", "imported"]


def __getattr__(name: str) -> Any:
    if name == "TaskBatches":  # re-exported; drga/runner/context.py (torch) is imported when it is asked for
        from drga.runner.context import TaskBatches

        return TaskBatches
    raise AttributeError(f"module 'drga.runner.task' has no attribute '{name}'")


def imported(reference: str) -> Any:
    """``"module:name"``: that module's attribute, the module imported now (a task names by it what sits above its layer,
    its commands and its trainer, as gymnasium's string entry points do)."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass
class ReportCell:
    """One cell of the final report: a phase's best checkpoint in one evaluation mode, loaded into the run's modules."""

    label: ResultRow
    phase: str
    mode: str
    path: Path
    payload: CheckpointPayload


class Task(ABC):
    """The task half of a run, and the task's registration; the built-in subclasses are
    :class:`drga.tasks.classification.task.ClassificationTask` and :class:`drga.tasks.translation.task.TranslationTask`.

    Registered with ``@register_task`` (``drga/registry.py``), a subclass names itself (:attr:`name`), its configuration
    class (:attr:`config_class`) and what its networks read (:attr:`inputs`); the classmethods below are what the entry
    points ask of it before any run exists (its configuration loaded, its trainer built, a checkpoint of it loaded or
    evaluated, its commands). A task built from a configuration alone (``cls(config)``) answers ``drga tune`` and
    ``drga sweep``: its :meth:`selection_key`, :meth:`read_content_fingerprint` and :meth:`metric_name`.
    """

    # ------------------------------------------------------------------ the registration (what the entry points read)

    #: Its name; a checkpoint of it records it as ``task`` (classification's, from before tasks had names, none).
    name: ClassVar[str] = ""
    #: Its configuration class (:class:`drga.config.ExperimentConfig` or one with it inside): each task has its own.
    config_class: ClassVar[type] = ExperimentConfig
    #: What its networks read (:data:`drga.registry.INPUTS`, or a word of its own); a network reading one is its network,
    #: unless the network's registration names another task (``register_network(..., task=)``).
    inputs: ClassVar[tuple[str, ...]] = ()
    #: ``drga train`` options that only this task reads, each with the setting it sets: given for another task, refused.
    train_options: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: ``"module"`` with ``register(subparsers) -> {name: handler}`` and ``OPTION_SCOPES``: its own ``drga`` subcommands
    #: (classification's ``predict``, translation's ``translate``), imported when the command line is built.
    commands_module: ClassVar[str | None] = None
    #: What to do with one of its checkpoints instead of ``drga predict`` (a task whose :meth:`load` is not a classifier).
    inference: ClassVar[str] = ""
    #: The one number of a test cell that tables show and TensorBoard's HParams tab reports per arm (a key of its
    #: evaluation's scores: classification's ``accuracy``, translation's greedy ``bleu``).
    report_metric: ClassVar[str] = "accuracy"
    #: How a table shows :attr:`report_metric`: multiplied by ``report_scale`` (100: a fraction shown in percent), under
    #: ``report_label``.
    report_scale: ClassVar[float] = 100.0
    report_label: ClassVar[str] = "accuracy (%)"

    @classmethod
    def load_config(cls, path: str | Path | None = None, overrides: list[str] | None = None,
                    report: Callable[[str], None] | None = None) -> Any:
        """Its configuration from a TOML file and ``section.key=value`` overrides (``report``: told which of the network's
        own defaults were applied); default: :func:`drga.config.load_config` into a :attr:`config_class`."""
        from drga.config import load_config

        return load_config(path, overrides, report, into=cls.config_class())

    @classmethod
    def defaults(cls) -> Any:
        """Its default configuration (``drga sweep``'s table lists the settings that differ from it)."""
        return cls.config_class()

    @classmethod
    def shared(cls, config: Any) -> ExperimentConfig:
        """The sections every task shares, in ``config`` (default: the configuration itself)."""
        return config

    @classmethod
    def to_toml(cls, config: Any) -> str:
        """``config`` as its ``config.toml``."""
        from drga.config import config_to_toml

        return config_to_toml(config)

    @classmethod
    def trainer(cls, config: Any, **options: Any) -> Any:
        """The runner that trains ``config`` (options: ``resume``, ``overwrite``, ``force``, ``log``, ``callbacks``);
        default: :class:`drga.runner.PhaseRunner` with ``cls(config)``."""
        return imported("drga.runner.loop:PhaseRunner")(cls(config), **options)

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> Any:
        """One of its checkpoints ready for inference (what ``drga.load`` returns for it; ``options``: ``device=``)."""
        raise RegistryError(f"task '{cls.name}' cannot load a checkpoint for inference: its class gives no load "
                            "(docs/extending.md, \"A new task\")")

    @classmethod
    def evaluate_checkpoint(cls, args: Any, payload: dict[str, Any]) -> int:
        """``drga evaluate`` on one of its checkpoints (``payload``, as loaded); the command's exit status."""
        raise RegistryError(f"task '{cls.name}' registered no `drga evaluate` (its class gives no evaluate_checkpoint)")

    @classmethod
    def commands(cls, subparsers: Any) -> dict[str, Callable[[Any], int]]:
        """Adds its own ``drga`` subcommands to argparse's subparsers object (:attr:`commands_module`'s ``register``)."""
        return dict(importlib.import_module(cls.commands_module).register(subparsers)) if cls.commands_module else {}

    @classmethod
    def option_scopes(cls) -> Mapping[str, Mapping[str, str | None]]:
        """Where each option of its commands is read (``drga.cli.OPTION_SCOPES``'s form)."""
        return importlib.import_module(cls.commands_module).OPTION_SCOPES if cls.commands_module else {}

    @classmethod
    def metric_name(cls, config: Any) -> str:
        """What the first number of its :meth:`selection_key` is (``"dev accuracy"``), as ``drga tune`` reports it."""
        raise RegistryError(f"task '{cls.name}' cannot be used by drga tune: its class gives no metric_name "
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
    found = task_class(config).read_content_fingerprint()
    if found is None:
        raise RegistryError(f"task '{task_class.name}' cannot be used by {command}: its class gives no read_content_fingerprint "
                            "(docs/extending.md, \"A new task\")")
    return str(found)
