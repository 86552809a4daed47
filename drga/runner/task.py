"""What a task (classification, translation) supplies to the phase runner: only what differs.

The runner (``drga/runner/loop.py``) owns the phases, epochs, early stopping, checkpoints, resume,
the callbacks (TensorBoard, CSV: ``drga/runner/callbacks.py``) and torchrun DDP. A task says what
its data and network are, what eq. 12's loss is on the network's own and on the revised attention,
how a dev split is scored and which score selects, what a checkpoint holds besides the modules, and
what the final report is. Its hooks receive a :class:`~drga.runner.context.RunContext` (what they
may read of the run and ask of it), not the runner.
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import Tensor

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.checkpoint_format import CheckpointError, CheckpointPayload
from drga.config import ConfigError, ExperimentConfig, settings_fingerprint
from drga.core.rollout import Rollout
from drga.names import PhaseName, ResultRow, best_checkpoint, scores_from_record
from drga.runner.checkpoints import inherited_plateau_cuts
from drga.runner.context import RunContext, TaskBatches
from drga.runner.phases import Phase

__all__ = ["ReportCell", "Task", "TaskBatches"]


@dataclass
class ReportCell:
    """One cell of the final report: a phase's best checkpoint in one evaluation mode, loaded into the run's modules."""

    label: ResultRow
    phase: str
    mode: str
    path: Path
    payload: CheckpointPayload


class Task(ABC):
    """The task half of a run; subclasses are :class:`drga.tasks.ClassificationTask` and
    :class:`drga.tasks.TranslationTask`."""

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

    @abstractmethod
    def config_toml(self) -> str:
        """The run folder's ``config.toml``."""

    @abstractmethod
    def saved_flat_config(self, saved: dict[str, Any]) -> dict[str, Any]:
        """A checkpoint's configuration in :meth:`flat_config`'s form (keys newer than it: defaults)."""

    def validate(self) -> None:
        self.settings.validate()

    # ------------------------------------------------------------------ starting from a pretrained network

    def adopt_pretrained(self, context: RunContext, source: Path) -> None:
        """``train.init_from``: the given network checkpoint becomes this run's ``pretrain_best.pt``, so
        that runs differing only in what DRGA does start from one network (pretraining is skipped)."""
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

    #: The dataclass its ``evaluate`` returns (classification's ``EvalResult``), which a dev record's fields fill.
    result_type: type | None = None

    def selection_key_of_record(self, record: Mapping[str, Any]) -> tuple[float, ...]:
        """:meth:`selection_key` of a dev record as results.json keeps it, or an epoch's numbers (``drga tune`` ranks by it)."""
        if self.result_type is None:
            raise NotImplementedError(f"{type(self).__name__} names no result_type, the dataclass its evaluate returns")
        return self.selection_key(scores_from_record(self.result_type, record))

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
        """What a checkpoint holds besides the modules (vocabulary, tokenizers, ...)."""

    @abstractmethod
    def final_report(self, context: RunContext, cells: Iterable[ReportCell]) -> tuple[dict[str, Any], str]:
        """Score the test split with every selected checkpoint; results.json's content and a note for the log."""

