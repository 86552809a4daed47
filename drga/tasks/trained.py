"""What loading a trained checkpoint shares between the tasks: the file's kind, the agent and β, the device.

Each task rebuilds its own network and what reads its data (classification: the vocabulary and
label names, ``drga/tasks/classification/trained.py``; translation: the subword models,
``drga/tasks/translation/trained.py``); the mode a loaded model is evaluated in is checked by
:func:`drga.names.checked_mode`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from drga.checkpoint_format import CheckpointError, CheckpointPayload, load_module_state
from drga.config import ExperimentConfig
from drga.core.beta import AdjustmentStrength
from drga.core.building import build_policy
from drga.core.policy import StatePolicy
from drga.runtime.device import resolve_device


def model_checkpoint(path: str | Path, payload: Mapping[str, Any] | None = None) -> CheckpointPayload:
    """The contents of a model checkpoint (a phase's best or a run's ``last.pt``); ``payload``: the file, already loaded."""
    checkpoint = CheckpointPayload.read(path) if payload is None else CheckpointPayload.of(payload)
    if checkpoint.kind not in ("model", "resume"):
        raise CheckpointError(f"{path} is not a model checkpoint")
    return checkpoint


def trained_agent(payload: Mapping[str, Any], path: str | Path, config: ExperimentConfig) -> tuple[StatePolicy, AdjustmentStrength]:
    """The checkpoint's agent and adjusting module (β and its schedule's position)."""
    checkpoint = CheckpointPayload.of(payload)
    policy = build_policy(config, checkpoint.state_size, checkpoint.action_size)
    load_module_state(policy, checkpoint.policy_state, "agent", path)
    strength = AdjustmentStrength(config.adjust.beta0)
    load_module_state(strength, checkpoint.strength_state, "adjusting module", path)
    strength.half_life_steps = checkpoint.half_life_steps
    return policy, strength


def ready_for_evaluation(device: str, *modules: nn.Module) -> torch.device:
    """``modules`` on ``device`` (cpu, cuda, cuda:N or auto) in eval mode; the device."""
    torch_device = resolve_device(device)
    for module in modules:
        module.to(torch_device).eval()
    return torch_device
