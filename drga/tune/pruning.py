"""A trial's pruning as a run callback: each epoch of the scored phase reports its dev score to Optuna,
and the run stops there when Optuna's pruner says the trial is doing worse than the earlier ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from drga.runner.callbacks import Callback, Evaluation


class ReportAndPrune(Callback):
    """Reports ``mode``'s dev score of every trained epoch of ``phase`` to ``trial`` (Optuna's step: the epoch)
    and raises ``optuna.TrialPruned`` when the trial should be pruned. That ends the run before the epoch's line
    and ``last.pt`` are written (a pruned trial is never resumed), so ``log``, the trial's log, is told why.
    ``value``: the trial's number from the mode's dev numbers (the task's selection key's first part), which
    ``metric`` names (dev accuracy, dev BLEU)."""

    def __init__(self, trial: Any, phase: str, mode: str, value: Callable[[Mapping[str, float]], float], metric: str,
                 log: Callable[[str], None]):
        self.trial, self.phase, self.mode, self.value, self.metric, self.log = trial, phase, mode, value, metric, log

    def on_evaluation(self, evaluation: Evaluation) -> None:
        # epoch 0 is the phase's starting point, not an epoch the trial trained: Optuna's steps are trained epochs
        if evaluation.phase != self.phase or evaluation.epoch == 0:
            return
        score = self.value(evaluation.scores[self.mode])
        self.trial.report(score, step=evaluation.epoch)
        if self.trial.should_prune():
            import optuna  # there: a trial is an Optuna trial

            reason = f"pruned after {self.phase} epoch {evaluation.epoch}"
            self.log(f"   {reason}: {self.metric} {self.mode} {score:.4f}, worse than the earlier trials at this epoch")
            raise optuna.TrialPruned(reason)
