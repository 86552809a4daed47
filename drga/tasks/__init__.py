"""The tasks the phase runner runs: what differs between classification and translation."""

from drga.tasks.classification import ClassificationTask
from drga.tasks.translation import TranslationTask

__all__ = ["ClassificationTask", "TranslationTask"]
