"""What a task's hooks and a learner receive from the loop: :class:`RunContext`, a narrow view of a run.

Not the loop (``drga/runner/loop.py`` · ``PhaseRunner``): a task or a learner reads the run's modules,
settings, folder, batches and what it has done so far (:class:`RunState`), and asks for the few
things it may: a split's scores, a checkpoint loaded into the modules, a picture or training
statistics reported, and (a learner) an epoch of batch-by-batch training steps, whose losses the loop
steps. It cannot step an optimiser, start phases, select epochs, cut the learning rate or write the
run's progress, and its history is a read-only view; those stay the loop's and its collaborators'
(``drga/runner/optim.py`` · ``OptimiserStep``, ``drga/runner/selection.py`` · ``Selection``).
A learner sees the part of it that ``drga/learners/context.py`` · ``LearnerContext`` names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import torch

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.checkpoint_format import CheckpointPayload
from drga.config import ExperimentConfig
from drga.core.beta import AdjustmentStrength
from drga.core.policy import StatePolicy
from drga.core.reward import Reward, make_reward
from drga.learners.context import TaskLosses, TrainingStep
from drga.records import EpochRecord
from drga.runner import checkpoints
from drga.runner.callbacks import CallbackList, Image, TrainingLog
from drga.runner.checkpoints import PhaseProgress, RetrofitModules
from drga.runner.optim import OptimiserStep
from drga.runner.sharding import ShardedEvaluation
from drga.runtime import distributed

#: The loop's pass over an epoch's batches (``PhaseRunner.train_by_updates``): (training step, epoch, epochs) → mean statistics.
TrainsByUpdates = Callable[[Callable[[Batch], TrainingStep], int, int], dict[str, float]]


class ContextTask(TaskLosses, Protocol):
    """What a context asks of its task (``drga/runner/task.py`` · ``Task``, which imports this module)."""

    config: ExperimentConfig

    def evaluate(self, context: RunContext, split: str, mode: str) -> Any: ...


@dataclass
class TaskBatches:
    """A task's batch iterators: training, dev, test, and the agent's held-out training batches (if any).
    A context holds this process's: under torchrun its shard of every training batch, and of dev and
    test where the task shards them."""

    train: Any
    dev: Any
    test: Any
    agent: Any | None = None


@dataclass
class RunState:
    """What a run has done: where it stands in its phases, each epoch's record, its updates so far.
    The loop advances it and ``last.pt`` keeps it; tasks and learners read it through :class:`RunContext`."""

    progress: PhaseProgress = field(default_factory=PhaseProgress)
    history: list[EpochRecord] = field(default_factory=list)  #: each epoch's record, as the loop wrote it
    global_step: int = 0

    @property
    def phase_step(self) -> int:
        """Updates since the current phase began: the step axis every arm shares (``drga/runner/tensorboard.py``)."""
        return self.global_step - self.progress.start_step


class RunContext:
    """What a task's hooks and a learner may read of a run, and the operations they may ask for."""

    def __init__(self, task: ContextTask, modules: RetrofitModules, state: RunState, optimiser: OptimiserStep, callbacks: CallbackList,
                 batches: TaskBatches, device: torch.device, run_dir: Path, main: bool, log: Callable[[str], None],
                 show_progress: bool, train_by_updates: TrainsByUpdates):
        self._task, self._modules, self._state, self._optimiser, self._callbacks = task, modules, state, optimiser, callbacks
        self._batches, self._train_by_updates = batches, train_by_updates
        self.device, self.run_dir, self.main, self.log, self.show_progress = device, run_dir, main, log, show_progress

    # ------------------------------------------------------------------ what it may read

    @property
    def config(self) -> ExperimentConfig:
        return self._task.config

    @property
    def task(self) -> ContextTask:
        """The run's task (a learner asks it for eq. 12 and the agent's episodes)."""
        return self._task

    @property
    def network(self) -> AttentionNetwork:
        return self._modules.network

    @property
    def policy(self) -> StatePolicy:
        return self._modules.policy

    @property
    def strength(self) -> AdjustmentStrength:
        return self._modules.strength

    @cached_property
    def reward(self) -> Reward:
        """The reward the configuration chose (``reward.name``, ``reward.closeness``: :func:`drga.core.reward.make_reward`),
        built once per run."""
        return make_reward(self.config.reward)

    @property
    def history(self) -> tuple[EpochRecord, ...]:
        """Every epoch's record so far (the final report keeps it), as copies: the loop alone writes the run's history."""
        return tuple(EpochRecord(r.phase, r.epoch, r.seconds, dict(r.train), {mode: dict(numbers) for mode, numbers in r.dev.items()})
                     for r in self._state.history)

    @property
    def global_step(self) -> int:
        return self._state.global_step

    @property
    def phase_step(self) -> int:
        return self._state.phase_step

    @property
    def train_batches(self) -> Any:
        """This process's training batches (under torchrun: its shard of every global batch)."""
        return self._batches.train

    @property
    def agent_batches(self) -> Any | None:
        """``data.agent_holdout`` (beyond the paper): the agent's own batches, else None."""
        return self._batches.agent

    def batches(self, split: str) -> Any:
        """This process's dev or test batches."""
        return self._batches.dev if split == "dev" else self._batches.test

    # ------------------------------------------------------------------ what it may ask for

    def train_by_updates(self, training_step: Callable[[Batch], TrainingStep], epoch: int, epochs: int) -> dict[str, float]:
        """Epoch ``epoch`` of ``epochs`` of the current phase, each batch handed to ``training_step`` and its losses
        stepped by the loop (``PhaseRunner.train_by_updates``); the mean of each statistic."""
        return self._train_by_updates(training_step, epoch, epochs)

    def evaluate_split(self, split: str, mode: str) -> Any:
        """The task's scores of ``split`` in ``mode``, the same on every process under torchrun."""
        with self._optimiser.autocast():
            result = self._task.evaluate(self, split, mode)
        if distributed.active() and isinstance(self._task, ShardedEvaluation):
            result = self._task.combine_over_processes(result, self.batches(split))
        return result

    def load_model(self, path: Path, network: bool = True, policy: bool = True) -> CheckpointPayload:
        """Load a checkpoint of this run's network into the network and β (``network``) and the agent (``policy``)."""
        return checkpoints.load_model(self._modules, path, self.config.network.name, network, policy)

    def report_scalars(self, phase: str, values: Mapping[str, float], step: int) -> None:
        """Training statistics of ``phase`` at ``step`` (updates since it began), for the callbacks."""
        self._callbacks.on_train_log(TrainingLog(phase, step, dict(values), self.run_dir))

    def report_image(self, phase: str, tag: str, image: Any, step: int) -> None:
        """An ``H × W × 3`` uint8 picture of the run's state, for the callbacks (a task's tracked sentences)."""
        self._callbacks.on_image(Image(phase, tag, image, step, self.run_dir))
