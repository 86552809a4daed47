"""Algorithm 1 for translation: :class:`TranslationTrainer` = the phase runner with the translation task.

The phases are ``drga/runner/phases.py``, the loop ``drga/runner/loop.py``, the task's own parts
(subwords, token-level eq. 12, perplexity and BLEU, decoding) ``drga/nmt/task.py``, and
its data ``drga/nmt/data.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drga.nmt.config import TranslationConfig
from drga.nmt.data import TranslationData
from drga.nmt.evaluation import TranslationEval
from drga.nmt.task import TranslationTask
from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info


class TranslationTrainer(PhaseRunner):
    """A translation run (see ``drga/nmt/task.py``); ``callbacks`` as :class:`drga.runner.PhaseRunner`'s."""

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
