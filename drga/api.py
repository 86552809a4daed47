"""Retrofit your own network on your own data from Python (a notebook's door to the toolkit).

    from drga.api import TextData, retrofit

    data = TextData.from_pairs(pairs)                      # [(text, label), ...]: split 80/10/10
    network = MyAttentionNet(len(data.vocab), data.num_classes)   # follows drga.baselines.protocol
    result = retrofit(network, data, pretrain_epochs=5, cotrain_epochs=3)
    print(result.table())
    result.predict(["a gripping film", "dull and long"])        # labels of new texts

The public path of classification's API (:mod:`drga.tasks.classification.api`: ``TextData``,
``retrofit``, ``RetrofitResult``), and :func:`train`, which trains a configuration of any
registered task: what ``drga train`` runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from drga.records import EpochRecord, ModeScores, PhaseCost, ReportRow, RunResults
from drga.runner.callbacks import Callback, EpochEnd, Evaluation, PhaseEnd, RunEnd, RunStart, TrainingLog
from drga.runner.loggers import CSVLogger, TensorBoardLogger
from drga.tasks.classification.api import (
    MARK,
    STARTING_POINTS,
    RetrofitResult,
    TextData,
    default_tokenizer,
    retrofit,
)
from drga.tasks.run_config import RunConfig

__all__ = [
    "TextData", "RetrofitResult", "retrofit", "load", "load_config", "train", "default_tokenizer", "STARTING_POINTS", "MARK",
    # records (drga.records): what train returns and results.json holds
    "RunResults", "ReportRow", "ModeScores", "EpochRecord", "PhaseCost",
    # callbacks (drga.runner.callbacks): what a run reports while it trains
    "Callback", "RunStart", "TrainingLog", "Evaluation", "EpochEnd", "PhaseEnd", "RunEnd", "CSVLogger", "TensorBoardLogger",
]


def load_config(path: str | Path | None = None, overrides: Sequence[str] = (), *, task: str | None = None,
                report: Callable[[str], None] | None = None) -> RunConfig:
    """A run's configuration, for whichever task trains its network: the defaults, the TOML file at ``path``, then the
    ``section.key=value`` overrides (the last word wins), read into that task's configuration (the task the network's
    registration names, else the one that reads its input). ``task``: the task you expect; another is refused in one
    line. ``report``: told which of the network's own defaults were applied. What ``drga train --config`` reads."""
    from drga.tasks.run_config import load_run_config

    return load_run_config(path, list(overrides), report, task=task)


def load(path: str | Path, **options: Any) -> Any:
    """A trained checkpoint (``runs/<run>/cotrain_best.pt``, any ``*_best*.pt``) ready for inference, as the task that
    wrote it loads it: a classifier's is a :class:`~drga.prediction.Classifier` (``.predict(texts)``; ``options``:
    ``network=`` your network's class, ``tokenizer=``, ``device=``), a translation network's its translator
    (``device=``), a task of your own's what its registration's ``load`` returns."""
    from drga.registry import load_for_inference  # torch: only when a checkpoint is read

    return load_for_inference(path, **options)


def train(config: RunConfig, *, resume: bool = False, overwrite: bool = False, force: bool = False,
          callbacks: Sequence[Callback] = ()) -> RunResults:
    """Train what ``config`` names (its network from the registry, its data set) with its task's trainer
    (classification, translation or a task of your own: :func:`drga.trainer.trainer_for`): what ``drga train``
    runs. Returns the run's :class:`RunResults`, what results.json holds (``results.rows[label].scores("test", mode)``).
    ``resume`` continues the run in its folder (``force``: although its data changed); ``overwrite`` replaces it;
    ``callbacks`` as :func:`retrofit`'s."""
    from drga.trainer import trainer_for  # the trainer imports the whole toolkit: only when training

    config.validate()
    return trainer_for(config, resume=resume, overwrite=overwrite, force=force, callbacks=callbacks).run()
