"""A run's random seeds and its device: ``run.seed`` and ``run.device`` applied to this process."""

from __future__ import annotations

import random

import numpy as np
import torch

from drga.config import ConfigError, device_problem


def seed_everything(seed: int) -> None:
    # Adam's decaying moments for rarely seen embedding rows reach the denormal range after a
    # few hundred steps, and CPU arithmetic on denormals is slow.
    torch.set_flush_denormal(True)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def resolve_device(name: str) -> torch.device:
    """The torch device of ``name`` (:data:`drga.config.DEVICE_PATTERN`), refused in words when it is no such name or
    this machine has no such device."""
    problem = device_problem(name, where="--device")
    if problem is not None:
        raise ConfigError(problem)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device '{name}' requested but torch sees no CUDA device; use --device cpu")
    if device.type == "cuda" and device.index is not None and device.index >= (count := torch.cuda.device_count()):
        raise ConfigError(f"device '{name}' requested but torch sees {count} CUDA device(s): use cuda:0 to cuda:{count - 1}")
    return device
