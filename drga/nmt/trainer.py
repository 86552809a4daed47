"""Algorithm 1 for translation: :class:`TranslationTrainer` = the phase runner with the translation task.

The phases are ``drga/runner/phases.py``, the loop ``drga/runner/loop.py``, the task's own parts
(subwords, token-level eq. 12, perplexity and BLEU, decoding) ``drga/tasks/translation.py``, and
its data ``drga/nmt/data.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from drga.data.parallel import EncodedPair
from drga.nmt.config import TranslationConfig
from drga.nmt.data import (  # noqa: F401  (drga.nmt.trainer's names, as before)
    TranslationData,
    build_translation_network,
    load_translation_splits,
    prepare_translation_data,
    tokenizers_from_payload,
    train_tokenizers,
)
from drga.nmt.evaluation import TranslationEval
from drga.nmt.task import TranslationTask, token_cross_entropy
from drga.runner.callbacks import Callback
from drga.runner.loop import PhaseRunner
from drga.runner.run_folder import log_info

#: eq. 12, token-level (the name it had here)
token_loss = token_cross_entropy


class TranslationTrainer(PhaseRunner):
    """A translation run (see ``drga/tasks/translation.py``); ``callbacks`` as :class:`drga.runner.PhaseRunner`'s."""

    task: TranslationTask

    def __init__(self, config: TranslationConfig, resume: bool = False, overwrite: bool = False,
                 log: Callable[[str], None] = log_info, force: bool = False, callbacks: Sequence[Callback] = ()):
        super().__init__(TranslationTask(config), resume=resume, overwrite=overwrite, log=log, force=force, callbacks=callbacks)

    @property
    def data(self) -> TranslationData:
        return self.task.data

    def evaluate(self, split: str, mode: str, beam_size: int = 1, bleu: bool = True) -> tuple[TranslationEval, list[str]]:  # type: ignore[override]
        """Scores of ``split`` (dev or test) in ``mode`` and the translations; BLEU of greedy (beam 1) or beam decoding."""
        return self.task.scores(self, split, mode, beam_size, bleu)

    def translate_pairs(self, pairs: Sequence[EncodedPair], mode: str, beam_size: int = 1, description: str = "decode") -> list[str]:
        """Detokenized translations of ``pairs`` in their order."""
        return self.task.translate_pairs(self, pairs, mode, beam_size, description)
