"""The tasks the phase runner runs: what differs between classification and translation.

The translation task lives with the rest of translation, in ``drga/nmt/task.py``.
"""

from drga.nmt.task import TranslationTask
from drga.tasks.classification import ClassificationTask

__all__ = ["ClassificationTask", "TranslationTask"]
