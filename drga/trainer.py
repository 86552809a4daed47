"""Algorithm 1 for any registered task: a trainer is the phase runner with a task.

- :class:`Trainer`: classification (``drga/tasks/classification/trainer.py``);
- :class:`TranslationTrainer`: translation (``drga/tasks/translation/trainer.py``: subwords,
  token-level eq. 12, perplexity and BLEU, decoding);
- :func:`trainer_for`: the trainer of a configuration's task, found in the task registry
  (``drga/registry.py`` · :func:`~drga.registry.task_of_config`: its registration's ``trainer``), a task of your own included.

The phases are ``drga/runner/phases.py``, the loop that runs them ``drga/runner/loop.py``;
docs/architecture.md shows how they fit.
"""

from __future__ import annotations

from typing import Any

from drga.registry import task_of_config
from drga.runner.loop import PhaseRunner
from drga.tasks.classification.trainer import Trainer
from drga.tasks.run_config import RunConfig
from drga.tasks.translation.trainer import TranslationTrainer

__all__ = ["Trainer", "TranslationTrainer", "trainer_for"]


def trainer_for(config: RunConfig, **options: Any) -> PhaseRunner:
    """The trainer of ``config``'s task (its registration's ``trainer``); ``options`` as the trainers take them
    (``resume``, ``overwrite``, ``force``, ``log``, ``callbacks``)."""
    return task_of_config(config).trainer(config, **options)
