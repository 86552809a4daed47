"""A trial's pruning as a run callback: each epoch of the scored phase reports its dev score to Optuna,
and the run stops there when Optuna's pruner says the trial is doing worse than the earlier ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drga.runner.callbacks import Callback, Evaluation


class ReportAndPrune(Callback):
    """Reports ``mode``'s dev accuracy of every trained epoch of ``phase`` to ``trial`` (Optuna's step: the epoch)
    and raises ``optuna.TrialPruned`` when the trial should be pruned. That ends the run before the epoch's line
    and ``last.pt`` are written (a pruned trial is never resumed), so ``log``, the trial's log, is told why."""

    def __init__(self, trial: Any, phase: str, mode: str, log: Callable[[str], None]):
        self.trial, self.phase, self.mode, self.log = trial, phase, mode, log

    def on_evaluation(self, evaluation: Evaluation) -> None:
        # epoch 0 is the phase's starting point, not an epoch the trial trained: Optuna's steps are trained epochs
        if evaluation.phase != self.phase or evaluation.epoch == 0:
            return
        accuracy = evaluation.scores[self.mode]["accuracy"]
        self.trial.report(accuracy, step=evaluation.epoch)
        if self.trial.should_prune():
            import optuna  # there: a trial is an Optuna trial

            reason = f"pruned after {self.phase} epoch {evaluation.epoch}"
            self.log(f"   {reason}: dev accuracy {self.mode} {accuracy:.4f}, worse than the earlier trials at this epoch")
            raise optuna.TrialPruned(reason)
