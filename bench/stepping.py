"""A trainer's phases stepped by hand, without the run loop: what the benchmarks and the device tests time and check.

``begin_phase`` starts a phase afresh (its starting weights, what trains, its optimisers) as the run does;
``train_step`` is one update of its learner on one batch (``drga/learners/``), the very update the run's epochs
make, without the epoch around it (autocast, the accumulation window's end, the statistics); ``train_one_epoch``
is one epoch of it, without evaluation or checkpoints. These are the benchmarks' own, kept out of ``PhaseRunner``.
Import it as ``from stepping import ...`` from a script of bench/ (``python bench/<script>.py`` puts bench/ on the
path) or through ``tests/scripts.py`` · ``load_script``.
"""

from __future__ import annotations

from typing import Any

from torch import Tensor

from drga.learners.updates import UpdateLearner
from drga.runner.loop import PhaseRunner
from drga.runner.phases import Phase, epoch_key, phase_named


def begin_phase(trainer: PhaseRunner, name: str) -> Phase:
    """Start phase ``name`` afresh for stepping batch by batch with :func:`train_step`."""
    phase = phase_named(name)
    trainer.start_phase(phase, fresh=True)
    trainer.network.train(not phase.network_frozen)
    trainer.policy.train()
    return phase


def train_step(trainer: PhaseRunner, phase: Phase, batch: Any) -> dict[str, Tensor]:
    """One update of ``phase``'s learner on ``batch`` (on the trainer's device): its training step (a DRGA step where
    the agent acts, else eq. 12 on the network) and the loop's optimiser step of its losses; its statistics."""
    learner = trainer.learners[phase.name]
    if not isinstance(learner, UpdateLearner):
        raise TypeError(f"phase {phase.name}'s learner ({type(learner).__name__}) learns an epoch at a time, not batch by batch")
    return trainer.update(lambda stepped: learner.training_step(trainer.context, stepped), batch)


def train_one_epoch(trainer: PhaseRunner, name: str, epoch: int = 1) -> dict[str, float]:
    """Start phase ``name`` afresh and train one epoch of it, without evaluation or checkpoints."""
    phase = begin_phase(trainer, name)
    trainer.train_batches.set_epoch(epoch_key(phase, epoch))
    return trainer.train_epoch(phase, epoch, epoch)
