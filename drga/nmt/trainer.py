"""Temporary: tests/regression_runs.py imports TranslationTrainer from here; remove with that import."""

from drga.trainer import TranslationTrainer

__all__ = ["TranslationTrainer"]
