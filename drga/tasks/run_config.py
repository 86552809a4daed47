"""The one loader of a run's configuration, for any registered task: a TOML file and
``section.key=value`` overrides read into the configuration of the task that trains the requested
network (``drga/registry.py`` · :func:`~drga.registry.task_for_network`: the task the network's
registration names, else the one that reads its input; classification's
:class:`~drga.config.ExperimentConfig`, translation's
:class:`~drga.tasks.translation.config.TranslationConfig`, the same sections and ``[nmt]``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drga.config import ConfigError, ExperimentConfig, requested_network
from drga.registry import TaskSpec, task_for_network, task_of_config
from drga.tasks.translation.config import TranslationConfig

#: The built-in tasks' configurations (a task of your own has its own class, an ExperimentConfig or one holding it).
RunConfig = ExperimentConfig | TranslationConfig


def requested_task(path: str | Path | None = None, overrides: list[str] | None = None) -> TaskSpec:
    """The task (its registration, :class:`drga.registry.TaskSpec`) that trains the network a config file plus overrides
    ask for (the last word wins)."""
    return task_for_network(requested_network(path, list(overrides or [])))


def load_run_config(path: str | Path | None = None, overrides: list[str] | None = None,
                    report: Callable[[str], None] | None = None, *, task: str | None = None) -> RunConfig:
    """Defaults, the TOML file, then the overrides (the last word wins), in the configuration of the
    task the network asks for (its registration's ``load_config``); the data set must be one that
    task reads. ``report``: told which of the network's own defaults were applied. ``task``: the task
    you expect; a network that another task trains is refused, naming both."""
    overrides = list(overrides or [])
    resolved = requested_task(path, overrides)
    if task is not None and resolved.name != task:
        network = requested_network(path, overrides)
        raise ConfigError(f"network '{network}' is trained by the task '{resolved.name}', not '{task}': choose a network of "
                          f"'{task}' (network.name) or leave task out")
    return resolved.load_config(path, overrides, report)


def experiment(config: RunConfig) -> ExperimentConfig:
    """The settings every task shares (a translation configuration's ``experiment``)."""
    return task_of_config(config).shared(config)


def run_config_toml(config: RunConfig) -> str:
    """The resolved configuration as TOML, as a run saves it."""
    return task_of_config(config).to_toml(config)
