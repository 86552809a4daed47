"""The one loader of a run's configuration, for either task: a TOML file and ``section.key=value``
overrides read into classification's :class:`~drga.config.ExperimentConfig`, or, where the network
translates (its input is "parallel", ``baselines.NETWORK_INPUTS``), a
:class:`~drga.tasks.translation.config.TranslationConfig` (the same sections and ``[nmt]``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from drga.baselines import NETWORK_INPUTS, NETWORKS
from drga.config import ConfigError, ExperimentConfig, config_to_toml, load_config
from drga.data import DATASETS
from drga.data.parallel import PARALLEL_DATASETS
from drga.tasks.translation.config import TranslationConfig, load_translation_config, requested_network
from drga.tasks.translation.config import config_to_toml as translation_toml

#: Either task's configuration.
RunConfig = ExperimentConfig | TranslationConfig


def translates(network: str | None) -> bool:
    """Whether the network of that name is a translation network."""
    return NETWORK_INPUTS.get(network or "", "") == "parallel"


def load_run_config(path: str | Path | None = None, overrides: list[str] | None = None,
                    report: Callable[[str], None] | None = None) -> RunConfig:
    """Defaults, the TOML file, then the overrides (the last word wins), in the configuration of the
    task the network asks for; the data set must be one that task reads. ``report``: told which of
    a classification network's own defaults were applied."""
    overrides = list(overrides or [])
    if translates(requested_network(path, overrides)):
        translation = load_translation_config(path, overrides)
        data = translation.experiment.data
        if data.dataset not in PARALLEL_DATASETS:
            raise ConfigError(
                f"network '{translation.experiment.network.name}' translates parallel text, but data set '{data.dataset}' is not one; "
                f"choose one of: {', '.join(sorted(PARALLEL_DATASETS))}"
            )
        if translation.experiment.agent.algorithm != "reinforce":
            raise ConfigError(f"agent.algorithm={translation.experiment.agent.algorithm}: translation trains the agent with REINFORCE "
                              "(eqs. 6–7) only")
        return translation
    config = load_config(path, overrides, report)
    if config.network.name not in NETWORKS:
        raise ConfigError(f"unknown network '{config.network.name}'; choose one of: {', '.join(sorted(NETWORKS))}")
    if config.data.dataset not in DATASETS:
        raise ConfigError(f"unknown dataset '{config.data.dataset}'; choose one of: {', '.join(sorted(DATASETS))}")
    return config


def experiment(config: RunConfig) -> ExperimentConfig:
    """The settings every task shares (a translation configuration's ``experiment``)."""
    return config if isinstance(config, ExperimentConfig) else config.experiment


def run_config_toml(config: RunConfig) -> str:
    """The resolved configuration as TOML, as a run saves it."""
    return config_to_toml(config) if isinstance(config, ExperimentConfig) else translation_toml(config)
