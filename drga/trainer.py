"""Algorithm 1 for either task: a trainer is the phase runner with a task.

- :class:`Trainer`: classification (``drga/tasks/classification/task.py``);
- :class:`TranslationTrainer`: translation (``drga/tasks/translation/task.py``: subwords,
  token-level eq. 12, perplexity and BLEU, decoding);
- :func:`trainer_for`: the one of a configuration's task.

The phases are ``drga/runner/phases.py``, the loop that runs them ``drga/runner/loop.py``;
docs/architecture.md shows how they fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from drga.baselines.protocol import AttentionNetwork
from drga.config import ExperimentConfig
from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info
from drga.tasks.classification.data import PreparedData
from drga.tasks.classification.task import ClassificationTask
from drga.tasks.run_config import RunConfig
from drga.tasks.translation.config import TranslationConfig
from drga.tasks.translation.data import TranslationData
from drga.tasks.translation.evaluation import TranslationEval
from drga.tasks.translation.task import TranslationTask


class Trainer(PhaseRunner):
    """A classification run. ``force``: resume even when the data differ from the run's (their
    fingerprint is in every checkpoint). ``network`` and ``data`` (the Python API, drga/api.py): a
    network instance of the user's and prepared data, instead of those the configuration names. ``callbacks``:
    told what the run does (:mod:`drga.runner.callbacks`), after the loggers of ``run.report_to``."""

    task: ClassificationTask

    def __init__(self, config: ExperimentConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, network: AttentionNetwork | None = None,
                 data: PreparedData | None = None, callbacks: Sequence[Callback] = ()):
        super().__init__(ClassificationTask(config, network, data), resume=resume, overwrite=overwrite, log=log, force=force,
                         callbacks=callbacks)

    @property
    def data(self) -> PreparedData:
        return self.task.data


class TranslationTrainer(PhaseRunner):
    """A translation run; ``callbacks`` as :class:`drga.runner.PhaseRunner`'s."""

    task: TranslationTask

    def __init__(self, config: TranslationConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, callbacks: Sequence[Callback] = ()):
        super().__init__(TranslationTask(config), resume=resume, overwrite=overwrite, log=log, force=force, callbacks=callbacks)

    @property
    def data(self) -> TranslationData:
        return self.task.data

    def evaluate(self, split: str, mode: str, beam_size: int = 1, bleu: bool = True) -> tuple[TranslationEval, list[str]]:
        """Scores of ``split`` (dev or test) in ``mode`` and the translations; BLEU of greedy (beam 1) or beam decoding."""
        return self.task.scores(self.context, split, mode, beam_size, bleu)


def trainer_for(config: RunConfig, **options: Any) -> Trainer | TranslationTrainer:
    """The trainer of ``config``'s task; ``options`` as the trainers take them."""
    return Trainer(config, **options) if isinstance(config, ExperimentConfig) else TranslationTrainer(config, **options)
