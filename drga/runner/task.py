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
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from drga.config import ConfigError, ExperimentConfig, settings_fingerprint
from drga.names import PhaseName, ResultRow, best_checkpoint, scores_from_record
from drga.registry import RegistryError

if TYPE_CHECKING:
    from torch import Tensor

    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.checkpoint_format import CheckpointPayload
    from drga.core.rollout import Rollout
    from drga.records import RunResults
    from drga.runner.context import RunContext, TaskBatches
    from drga.runner.phases import Phase

__all__ = ["ReportCell", "Task", "TaskBatches", "imported"]


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
    def owns_checkpoint(cls, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` (a loaded checkpoint) is one of this task's: its ``task`` entry is :attr:`name`."""
        from drga.checkpoint_format import CheckpointPayload  # torch: only when a checkpoint is read

        return CheckpointPayload.of(payload).task == cls.name

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

    @classmethod
    def dev_selection_key(cls, config: Any, dev: Mapping[str, Any]) -> tuple[float, ...]:
        """The :meth:`selection_key` of a dev record of a run of ``config`` (``drga tune`` ranks its trials by it): the
        very key the runner selects epochs by."""
        return tuple(cls(config).selection_key_of_record(dev))

    @classmethod
    def config_data_fingerprint(cls, config: Any, command: str) -> str:
        """:meth:`read_content_fingerprint` of ``config``'s data, for ``command`` (``drga sweep``, ``drga tune``): the very
        fingerprint the runner records; an error naming what to give when the task cannot say."""
        found = cls(config).read_content_fingerprint()
        if found is None:
            raise RegistryError(f"task '{cls.name}' cannot be used by {command}: its class gives no read_content_fingerprint "
                                "(docs/extending.md, \"A new task\")")
        return str(found)

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

    def config_dict(self) -> dict[str, Any]:
        """The whole configuration, as saved in checkpoints and results."""
        return self.settings.to_dict()

    def flat_config(self) -> dict[str, Any]:
        """The configuration as ``section.key`` → value (resume checks, the HParams tab)."""
        return self.settings.flat()

    def config_toml(self) -> str:
        """The run folder's ``config.toml`` (:meth:`to_toml` of the whole configuration)."""
        return self.to_toml(self.settings)

    @abstractmethod
    def saved_flat_config(self, saved: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's configuration in :meth:`flat_config`'s form (keys newer than it: defaults)."""

    def validate(self) -> None:
        self.settings.validate()

    # ------------------------------------------------------------------ starting from a pretrained network

    def adopt_pretrained(self, context: RunContext, source: Path) -> None:
        """``train.init_from``: the given network checkpoint becomes this run's ``pretrain_best.pt``, so
        that runs differing only in what DRGA does start from one network (pretraining is skipped)."""
        from drga.checkpoint_format import CheckpointError, CheckpointPayload
        from drga.runner.checkpoints import inherited_plateau_cuts

        try:
            payload = CheckpointPayload.read(source)
        except CheckpointError as error:
            raise ConfigError(f"train.init_from: {error}") from None
        if payload.net_name != self.config.network.name:
            raise ConfigError(f"train.init_from: {source} holds the network '{payload.net_name}', not '{self.config.network.name}'")
        self.check_adoptable(source, payload)
        if self.config.train.continue_lr:
            try:
                inherited_plateau_cuts(payload, source)  # refused now, not when the first phase after it starts
            except CheckpointError as error:
                raise ConfigError(f"train.init_from: {error}") from None
        context.load_model(source, policy=False)  # its network must fit this configuration (sizes)
        shutil.copyfile(source, best_checkpoint(context.run_dir, PhaseName.PRETRAIN))
        context.log(f"start  from {source} (pretraining skipped)")

    @abstractmethod
    def check_adoptable(self, source: Path, payload: Mapping[str, Any]) -> None:
        """Raise :class:`ConfigError` (``train.init_from: ...``) unless the checkpoint's network reads and
        writes what this run's data give (the labels and vocabulary; the subword models)."""

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

    @abstractmethod
    def agent_examples(self) -> tuple[Sequence[Any], Callable[[list[Any]], Batch]]:
        """The training examples and their collate function (the Gymnasium environment's episodes)."""

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

    @abstractmethod
    def numbers(self, result: Any) -> dict[str, Any]:
        """A score's numbers, for the epoch record and TensorBoard."""

    @abstractmethod
    def selection_key(self, result: Any) -> tuple[float, ...]:
        """Bigger is better: the key a dev score is selected by."""

    #: The dataclass its ``evaluate`` returns (classification's ``EvalResult``), which a dev record's fields fill; or
    #: ``"module:Class"``, imported when first used.
    result_type: ClassVar[type | str | None] = None

    def selection_key_of_record(self, record: Mapping[str, Any]) -> tuple[float, ...]:
        """:meth:`selection_key` of a dev record as results.json keeps it, or an epoch's numbers (``drga tune`` ranks by it)."""
        if self.result_type is None:
            raise NotImplementedError(f"{type(self).__name__} names no result_type, the dataclass its evaluate returns")
        result_type = imported(self.result_type) if isinstance(self.result_type, str) else self.result_type
        return self.selection_key(scores_from_record(result_type, record))

    @abstractmethod
    def epoch_summary(self, scores: Mapping[str, Any], train_stats: Mapping[str, float]) -> list[str]:
        """The parts of an epoch's console line that describe its scores."""

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

    def fingerprint(self) -> dict[str, str | None]:
        """What results.json records so that another configuration can be told from this run's: the fingerprint of its
        settings (:func:`drga.config.settings_fingerprint`) and of its data as read; ``drga sweep`` skips a finished run
        only when both equal the new run's."""
        return {"settings": settings_fingerprint(self.flat_config()), "data": self.content_fingerprint()}

    def check_resume(self, context: RunContext, payload: Mapping[str, Any], force: bool) -> None:
        """Refuse to resume ``payload`` (``last.pt``, before any weight is loaded) on data that changed since
        the run started, unless ``force``; even then, refuse what :meth:`check_continuable` refuses."""
        from drga.checkpoint_format import CheckpointError, CheckpointPayload

        recorded, now = CheckpointPayload.of(payload).data_checksum, self.data_fingerprint()
        if recorded is None or now is None or recorded == now:
            return
        last = context.run_dir / "last.pt"
        if not force:
            raise CheckpointError(
                f"cannot resume {last}: the data differ from those the run was trained on (fingerprint {recorded}, now {now}); "
                "restore the data, start a new run, or resume anyway with --force"
            )
        self.check_continuable(last, payload)
        context.log(f"resuming on changed data (--force): fingerprint {recorded} → {now}")

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

