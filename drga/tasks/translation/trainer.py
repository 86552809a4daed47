"""A translation run: the phase runner (``drga/runner/loop.py``) with :class:`TranslationTask`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info
from drga.tasks.translation.config import TranslationConfig
from drga.tasks.translation.data import TranslationData
from drga.tasks.translation.evaluation import TranslationEval
from drga.tasks.translation.task import TranslationTask

__all__ = ["TranslationTrainer"]


class TranslationTrainer(PhaseRunner):
    """A translation run; ``callbacks`` as :class:`drga.runner.PhaseRunner`'s; ``task_class``: a subclass of translation's
    task, registered under a name of its own."""

    task: TranslationTask

    def __init__(self, config: TranslationConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, callbacks: Sequence[Callback] = (),
                 task_class: type[TranslationTask] = TranslationTask):
        super().__init__(task_class(config), resume=resume, overwrite=overwrite, log=log, force=force, callbacks=callbacks)

    @property
    def data(self) -> TranslationData:
        return self.task.data

    def evaluate(self, split: str, mode: str, beam_size: int = 1, bleu: bool = True) -> tuple[TranslationEval, list[str]]:
        """Scores of ``split`` (dev or test) in ``mode`` and the translations; BLEU of greedy (beam 1) or beam decoding."""
        return self.task.scores(self.context, split, mode, beam_size, bleu)
