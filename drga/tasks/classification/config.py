"""Classification's configuration: the sections every task shares (``drga/config.py`` ·
:class:`~drga.config.ExperimentConfig`, which is classification's whole configuration), loaded and
checked against the classification networks and data sets. Its loader is classification's in the
task registry (``drga/tasks/classification/task.py`` · ``ClassificationTask.load_config``), which ``drga train``, ``drga tune`` and
``drga sweep`` reach through ``drga/tasks/run_config.py`` · ``load_run_config``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drga.config import ConfigError, ExperimentConfig, load_config

__all__ = ["TASK_NAME", "ClassificationConfig", "load_classification_config"]

#: The task's name in the registry, which its checkpoints record.
TASK_NAME = "classification"

#: A classification run's configuration: the shared sections, nothing of its own.
ClassificationConfig = ExperimentConfig


def load_classification_config(path: str | Path | None = None, overrides: list[str] | None = None,
                               report: Callable[[str], None] | None = None) -> ExperimentConfig:
    """:func:`drga.config.load_config` (defaults, the TOML file, the overrides, the network's own defaults;
    ``report`` is told which), its network a registered one and its data set one classification reads: the loader of
    classification's registration, and of every task built on it, whose networks it trains (the registry has chosen the
    task already, so a network whose registration names another task is not refused here)."""
    from drga.baselines import NETWORKS  # torch: only when a configuration loads, not for `drga --help`
    from drga.data import DATASETS

    config = load_config(path, overrides, report, into=ExperimentConfig())
    if config.network.name not in NETWORKS:
        raise ConfigError(f"unknown network '{config.network.name}'; choose one of: {', '.join(sorted(NETWORKS))}")
    if config.data.dataset not in DATASETS:
        raise ConfigError(f"unknown dataset '{config.data.dataset}'; choose one of: {', '.join(sorted(DATASETS))}")
    return config
