"""Classification's registration in the task registry (``drga/registry.py`` · :class:`~drga.registry.TaskSpec`):
what ``drga train``, the configuration loader, the trainer, ``drga evaluate``, ``drga predict`` and
``drga.load`` need of it. The registry imports this module by name, so nothing imports it (it may
reach every layer of its task); what is heavy is imported when used, so that ``drga --help`` does not load torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drga.config import CLASSIFICATION_FLAGS, ExperimentConfig, config_to_toml
from drga.registry import TaskSpec, register_task
from drga.tasks.classification import commands
from drga.tasks.classification.config import TASK_NAME, is_classification_checkpoint, load_classification_config


def _trainer(config: ExperimentConfig, **options: Any) -> Any:
    from drga.tasks.classification.trainer import Trainer

    return Trainer(config, **options)


def _load(path: str | Path, device: str = "cpu", **options: Any) -> Any:
    from drga.tasks.classification.prediction import load

    return load(path, device=device, **options)


SPEC = register_task(TaskSpec(
    name=TASK_NAME,
    config=ExperimentConfig,
    load_config=load_classification_config,
    trainer=_trainer,
    to_toml=config_to_toml,
    inputs=("text", "aspect", "document"),
    owns_checkpoint=is_classification_checkpoint,
    load=_load,
    evaluate=commands.evaluate_classification_checkpoint,
    commands=commands.register,
    option_scopes=commands.OPTION_SCOPES,
    train_options=CLASSIFICATION_FLAGS,
    task="drga.tasks.classification.task:ClassificationTask",  # drga tune ranks by its selection_key
    metric_name=lambda config: "dev accuracy",
    defaults=ExperimentConfig,
))
