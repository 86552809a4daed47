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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from drga import registry
from drga.config import ExperimentConfig
from drga.names import ResultRow, scores_from_record
from drga.registry import RegistryError, imported
from drga.runner.task_options import run_checks, tunable

if TYPE_CHECKING:
    from torch import Tensor

    from drga.baselines.protocol import AttentionNetwork, Batch
    from drga.checkpoint_format import CheckpointPayload
    from drga.core.rollout import Rollout
    from drga.records import RunResults
    from drga.runner.context import RunContext, TaskBatches

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
    """The task half of a run: the nine hooks the runner calls. The built-in subclasses are
    :class:`drga.tasks.classification.task.ClassificationTask` and :class:`drga.tasks.translation.task.TranslationTask`.

    Registered with ``@register_task`` (``drga/registry.py``), it is built from a configuration alone (``cls(config)``)
    by the runner's trainer, and by ``drga tune`` and ``drga sweep``. What a task may add (its epochs' console lines, the
    checks before a checkpoint is reused, what ``drga tune`` and the stable-baselines3 learners need) is one class each
    in :mod:`drga.runner.task_options`, which it inherits beside this one.
    """

    def __init__(self, config: ExperimentConfig, settings: Any = None):
        """``config``: the settings every task shares; ``settings``: the whole configuration when the
        task has sections of its own (translation's ``[nmt]``), with ``validate``, ``to_dict`` and ``flat``."""
        self.config = config
        self.settings = config if settings is None else settings

    @property
    def name(self) -> str:
        """The name it is registered under: its checkpoints record it as ``task``."""
        return registry.task_spec_of(type(self)).name

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
    def loss(self, network: AttentionNetwork, batch: Batch) -> Tensor:
        """Eq. 12 on the network's own attention."""

    @abstractmethod
    def revised_loss(self, rollout: Rollout, batch: Batch) -> Tensor:
        """Eq. 12 on the attention the agent revised, over the K samples."""

    @abstractmethod
    def evaluate(self, context: RunContext, split: str, mode: str) -> Any:
        """The scores of ``split`` (dev or test) in evaluation ``mode``: an object with ``as_dict()``
        (what a checkpoint keeps of it)."""

    @abstractmethod
    def selection_key(self, result: Any) -> tuple[float, ...]:
        """Bigger is better: the key a dev score is selected by."""

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
    declared = tunable(task).result_type
    result_type = imported(declared) if isinstance(declared, str) else declared
    return tuple(task.selection_key(scores_from_record(result_type, record)))


def dev_selection_key(task_class: type[Task], config: Any, dev: Mapping[str, Any]) -> tuple[float, ...]:
    """The selection key of a dev record of a run of ``config`` (``drga tune`` ranks its trials by it): the very key the
    runner selects epochs by."""
    return selection_key_of_record(task_class(config), dev)


def data_fingerprint_of(task_class: type[Task], config: Any, command: str) -> str:
    """:meth:`~drga.runner.task_options.RunChecks.read_content_fingerprint` of ``config``'s data, for ``command``
    (``drga sweep``, ``drga tune``): the very fingerprint the runner records; an error naming what to give when the task
    cannot say."""
    task = task_class(config)
    found = run_checks(task).read_content_fingerprint()
    if found is None:
        raise RegistryError(f"task '{task.name}' cannot be used by {command}: its class gives no read_content_fingerprint "
                            "(drga.extend.RunChecks; docs/extending.md, \"A new task\")")
    return str(found)
