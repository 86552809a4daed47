"""Translation's registration in the task registry (``drga/registry.py`` · :class:`~drga.registry.TaskSpec`):
what ``drga train``, the configuration loader, the trainer, ``drga evaluate`` and ``drga translate``
need of it. The registry imports this module by name, so nothing imports it (it may reach every
layer of its task); what is heavy is imported when used, so that ``drga --help`` does not load torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drga.registry import TaskSpec, register_task
from drga.tasks.translation import commands
from drga.tasks.translation.config import TranslationConfig, config_to_toml, load_checked_translation_config


def _trainer(config: TranslationConfig, **options: Any) -> Any:
    from drga.tasks.translation.trainer import TranslationTrainer

    return TranslationTrainer(config, **options)


def _load(path: str | Path, device: str = "cpu", **options: Any) -> Any:
    from drga.tasks.translation.trained import load_translation_model

    return load_translation_model(path, device=device, **options)


def _shared(config: TranslationConfig) -> Any:
    return config.experiment


def _metric_name(config: TranslationConfig) -> str:
    return "dev BLEU" if config.nmt.select_metric == "bleu" else "minus dev perplexity"


def _defaults() -> TranslationConfig:
    from drga.config import ExperimentConfig
    from drga.tasks.translation.config import NMTConfig

    return TranslationConfig(ExperimentConfig(), NMTConfig())


SPEC = register_task(TaskSpec(
    name="translation",  # its checkpoints record it as "task"
    config=TranslationConfig,
    load_config=load_checked_translation_config,
    trainer=_trainer,
    to_toml=config_to_toml,
    inputs=("parallel",),
    shared=_shared,
    load=_load,
    evaluate=commands.evaluate_translation_checkpoint,
    commands=commands.register,
    option_scopes=commands.OPTION_SCOPES,
    inference="translate with it (drga translate {path} < input.txt)",
    task="drga.tasks.translation.task:TranslationTask",  # drga tune ranks by its selection_key
    metric_name=_metric_name,
    report_metric="bleu",  # greedy decoding's
    defaults=_defaults,
))
