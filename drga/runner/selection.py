"""Best-epoch selection and the checkpoints a run keeps: :class:`Selection`, a collaborator of the loop.

After every dev evaluation the loop asks :meth:`Selection.consider` whether the epoch beats the
phase's best by the task's ``selection_key``: if so ``<phase>_best.pt`` is written (and each other
dev mode's own best as ``<phase>_best_<mode>.pt``), else the epoch counts as stale (early stopping,
plateau cuts). After every epoch it writes ``last.pt`` (:meth:`Selection.save_last`), and at the end
it hands the final report its cells (:meth:`Selection.best_checkpoints`). What a checkpoint holds is
``drga/runner/checkpoints.py``; the file format ``drga/checkpoint_format.py``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from drga.checkpoint_format import CheckpointPayload
from drga.names import best_checkpoint
from drga.runner import checkpoints
from drga.runner.checkpoints import PhaseProgress, RetrofitModules
from drga.runner.context import RunState
from drga.runner.phases import PHASES, Phase
from drga.runner.task import ReportCell, Task


class Selection:
    """Which epochs a run keeps. ``main``: this process writes the files (under torchrun every rank
    decides, rank 0 writes)."""

    def __init__(self, task: Task, modules: RetrofitModules, run_dir: Path, main: bool):
        self.task, self.modules, self.run_dir, self.main = task, modules, run_dir, main
        self.config = task.config

    def consider(self, phase: Phase, scores: Mapping[str, Any], epoch: int, progress: PhaseProgress,
                 plateau_cuts: int | None) -> bool:
        """Keep ``<phase>_best.pt`` if the selecting mode's key beats the phase's best so far and
        count stale epochs (early stopping); keep each other mode's own best as ``<phase>_best_<mode>.pt``.
        ``plateau_cuts``: of the learning rate the epoch trained the network at, recorded in the checkpoints."""
        selecting = phase.selection_mode(self.config.train.select_mode)
        for mode, result in scores.items():
            key = self.task.selection_key(result)
            best = progress.best_by_mode.get(mode)
            if mode != selecting and (best is None or key > tuple(best)):
                progress.best_by_mode[mode] = key
                self.save_model(phase, epoch, scores, best_checkpoint(self.run_dir, phase.name, mode), plateau_cuts)
        key = self.task.selection_key(scores[selecting])
        if progress.best is None or key > tuple(progress.best):
            progress.best, progress.stale = key, 0
            self.save_model(phase, epoch, scores, best_checkpoint(self.run_dir, phase.name), plateau_cuts)
            return True
        progress.stale += 1
        return False

    def model_payload(self, phase: Phase, epoch: int, scores: Mapping[str, Any] | None = None,
                      plateau_cuts: int | None = None) -> CheckpointPayload:
        dev = {mode: r.as_dict() for mode, r in (scores or {}).items()}
        return checkpoints.model_payload(self.modules, phase.name, phase.has_agent, epoch, dev, self.task.settings.to_dict(),
                                         self.config.network.name, self.task.name, self.task.checkpoint_content(), plateau_cuts)

    def save_model(self, phase: Phase, epoch: int, scores: Mapping[str, Any], path: Path, plateau_cuts: int | None = None) -> None:
        if self.main:
            self.model_payload(phase, epoch, scores, plateau_cuts).save(path)

    def save_last(self, phase: Phase, state: RunState, optimisers: Mapping[str, Any]) -> None:
        """``last.pt``: the modules in ``phase``, the run's state and the optimisers' (``OptimiserStep.state_dict``)."""
        if self.main:
            schedule = optimisers.get("lr_schedule") or {}  # last.pt records its network's plateau cuts as every model file does
            model = self.model_payload(phase, state.progress.epoch, plateau_cuts=schedule.get("plateau_cuts"))
            checkpoints.resume_payload(model, state.progress, state.history, state.global_step, optimisers).save(self.run_dir / "last.pt")

    def best_checkpoints(self, plan: Sequence[Phase]) -> Iterator[ReportCell]:
        """The final report's cells that ran, each loaded into the modules when reached. Each mode
        reads the epoch selected by its own dev score (``<phase>_best_<mode>.pt`` where the phase
        kept one, else ``<phase>_best.pt``); the mode of ``<phase>_best.pt`` comes first."""
        planned = {phase.name for phase in plan}
        for phase in PHASES:
            path = best_checkpoint(self.run_dir, phase.name)
            if phase.name in planned and not path.exists():  # a phase that ran saved it (its first epoch is its best so far)
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))  # gone: its row is not left out quietly
            if not path.exists() or (phase.name not in planned and phase is not PHASES[0]):  # train.init_from: pretrain's row
                continue
            own = {mode: best_checkpoint(self.run_dir, phase.name, mode) for mode in phase.dev_modes}
            # an adopted network's file (train.init_from) holds its own run's agent, of that run's size: its row needs none
            policy = phase.name in planned
            for mode in sorted(phase.dev_modes, key=lambda mode: own[mode].exists()):
                chosen = own[mode] if own[mode].exists() else path
                payload = checkpoints.load_model(self.modules, chosen, self.config.network.name, policy=policy)
                yield ReportCell(phase.report_label, phase.name, mode, chosen, payload)
