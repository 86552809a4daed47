"""Callbacks: what a run reports while it trains, to its loggers and to a user's own code.

The runner (:mod:`drga.runner.loop`) tells its callbacks what happened in small records of names
and numbers; a callback never sees the runner, so it cannot change a run's numbers. TensorBoard
(:class:`drga.runner.loggers.TensorBoardLogger`) and the CSV file
(:class:`drga.runner.loggers.CSVLogger`) are callbacks like a user's: ``run.report_to`` picks the
loggers, and ``drga.api.retrofit(..., callbacks=[...])`` (or ``Trainer(config, callbacks=[...])``)
adds a user's own after them.

A run sends its events in this order (a phase's epoch 0 is its starting point, evaluated only
where it competes for the phase's best epoch: the equal-budget baseline and co-training)::

    on_run_start
    for each phase of the plan:
        on_evaluation                  epoch 0, where the starting point competes
        for each epoch:
            on_train_log ...           every 10 updates (LOG_INTERVAL)
            on_image ...               classification's tracked sentences, after each dev evaluation
            on_evaluation              the epoch's dev scores
            on_epoch_end
        on_phase_end
    on_run_end                         results.json is written
    close                              always, also when the run stops on an error

Under torchrun only the main process (rank 0) calls its callbacks. A resumed run continues from
its ``last.pt``: events sent after that checkpoint was written, before the interruption, are sent
again (:attr:`RunStart.completed_epochs` says which epochs the resumed run keeps).

Subclass :class:`Callback` and override the methods you need::

    class PrintBest(Callback):
        def on_evaluation(self, evaluation):
            if evaluation.improved:
                print(evaluation.phase, evaluation.epoch, evaluation.scores)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drga.records import RunResults

#: The evaluation modes of a record's scores: the network alone, and with the agent revising its attention.
Scores = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class RunStart:
    """A run is set up: its folder exists with ``config.toml``; a resumed run's state is loaded."""

    run_dir: Path
    #: The configuration as ``section.key`` → value.
    config: Mapping[str, Any]
    #: The phases the run goes through, in order (each phase with 0 epochs left out).
    phases: tuple[str, ...]
    #: A resumed run: the (phase, epoch) of every epoch that ended before the interruption; empty for a fresh run.
    completed_epochs: tuple[tuple[str, int], ...] = ()
    #: A resumed run: the phase it continues and that phase's step (:attr:`TrainingLog.step`) it continues from.
    resumed_at: tuple[str, int] | None = None


@dataclass(frozen=True)
class TrainingLog:
    """Training statistics of the last updates (the loss, the reward's terms, β, gradient norms, speed)."""

    phase: str
    #: Updates since the phase began: one step axis that the equal-budget baseline and co-training share.
    step: int
    values: Mapping[str, float]
    run_dir: Path


@dataclass(frozen=True)
class Image:
    """A picture of the run's state, as an ``H × W × 3`` uint8 array (classification's tracked sentences' attention)."""

    phase: str
    tag: str
    image: Any
    step: int
    run_dir: Path


@dataclass(frozen=True)
class Evaluation:
    """The dev scores of one epoch (epoch 0: the phase's starting point) in each evaluation mode the phase scores."""

    phase: str
    epoch: int
    step: int
    #: Mode (``net-only``, ``with-agent``) → the task's numbers: accuracy, reward, ... (translation: perplexity, BLEU, ...).
    scores: Scores
    #: Whether this epoch's selecting score beats every earlier epoch of the phase (its checkpoint is the phase's best so far).
    improved: bool
    run_dir: Path


@dataclass(frozen=True)
class EpochEnd:
    """An epoch of a phase ended: its mean training statistics and its dev scores (``results.json``'s history record)."""

    phase: str
    epoch: int
    #: The epochs the phase gets (it may stop earlier: ``train.patience``).
    epochs: int
    step: int
    seconds: float
    #: The epoch's mean training statistics.
    train: Mapping[str, float]
    dev: Scores
    improved: bool
    run_dir: Path


@dataclass(frozen=True)
class PhaseEnd:
    """A phase ended, after ``epochs`` of its ``max_epochs`` (fewer: stopped early)."""

    phase: str
    epochs: int
    max_epochs: int
    stopped_early: bool
    run_dir: Path


@dataclass(frozen=True)
class RunEnd:
    """Every phase ran and the final report is written (``results.json``)."""

    #: What ``results.json`` holds: a row per reported model (``results.rows``), the history, what each phase took, ...
    results: RunResults
    #: Per phase: the final report's numbers of its selected checkpoints, ``hparam/<split>_<metric>_<mode>`` → value.
    final: Mapping[str, Mapping[str, float]]
    run_dir: Path


class Callback:
    """Told what a run does; every method does nothing unless overridden. The order of the events
    is in this module's description (:mod:`drga.runner.callbacks`)."""

    def on_run_start(self, run: RunStart) -> None:
        """The run is set up, before its first phase."""

    def on_train_log(self, log: TrainingLog) -> None:
        """Every 10 updates of a phase: the statistics of the last update."""

    def on_image(self, image: Image) -> None:
        """A picture of the run's state (after a dev evaluation, with ``train.track_examples``)."""

    def on_evaluation(self, evaluation: Evaluation) -> None:
        """The dev scores of an epoch, once the epoch's checkpoint is selected or not."""

    def on_epoch_end(self, epoch: EpochEnd) -> None:
        """An epoch ended, its ``last.pt`` not yet written."""

    def on_phase_end(self, phase: PhaseEnd) -> None:
        """A phase ended (after its last epoch, or stopped early)."""

    def on_run_end(self, run: RunEnd) -> None:
        """The final report is written."""

    def close(self) -> None:
        """The run is over, finished or not: release files. Called once, last."""


class CallbackList(Callback):
    """Several callbacks told each event in their order."""

    def __init__(self, callbacks: Iterable[Callback] = ()):
        self.callbacks = list(callbacks)

    def on_run_start(self, run: RunStart) -> None:
        for callback in self.callbacks:
            callback.on_run_start(run)

    def on_train_log(self, log: TrainingLog) -> None:
        for callback in self.callbacks:
            callback.on_train_log(log)

    def on_image(self, image: Image) -> None:
        for callback in self.callbacks:
            callback.on_image(image)

    def on_evaluation(self, evaluation: Evaluation) -> None:
        for callback in self.callbacks:
            callback.on_evaluation(evaluation)

    def on_epoch_end(self, epoch: EpochEnd) -> None:
        for callback in self.callbacks:
            callback.on_epoch_end(epoch)

    def on_phase_end(self, phase: PhaseEnd) -> None:
        for callback in self.callbacks:
            callback.on_phase_end(phase)

    def on_run_end(self, run: RunEnd) -> None:
        for callback in self.callbacks:
            callback.on_run_end(run)

    def close(self) -> None:
        """Close every callback, even when one of them fails (the first failure is raised after)."""
        failure: BaseException | None = None
        for callback in self.callbacks:
            try:
                callback.close()
            except BaseException as error:  # noqa: BLE001 - re-raised below, once the others are closed
                failure = failure or error
        if failure is not None:
            raise failure
