"""Classifying new text with a trained network: ``drga predict``, ``drga.load(path)`` and ``RetrofitResult.predict``.

The public path of :mod:`drga.tasks.classification.prediction` (classification's inference loader),
where the code lives beside the rest of its task.
"""

from drga.tasks.classification.prediction import Classifier, EmptyTextError, Prediction, Text, load

__all__ = ["Classifier", "EmptyTextError", "Prediction", "Text", "load"]
