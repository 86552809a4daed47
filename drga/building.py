"""The parts of a run every task builds the same way: the seeds, the device, the agent and β."""

from __future__ import annotations

import random

import numpy as np
import torch

from drga.agents.gaussian_policy import GaussianPolicy
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.beta import AdjustmentStrength
from drga.config import ConfigError, ExperimentConfig
from drga.eval_mode import eval_mode
from drga.state import agent_state


def seed_everything(seed: int) -> None:
    # Adam's decaying moments for rarely seen embedding rows reach the denormal range after a
    # few hundred steps, and CPU arithmetic on denormals is slow.
    torch.set_flush_denormal(True)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device '{name}' requested but torch sees no CUDA device; use --device cpu")
    if device.type == "cuda" and device.index is not None and device.index >= (count := torch.cuda.device_count()):
        raise ConfigError(f"device '{name}' requested but torch sees {count} CUDA device(s): use cuda:0 to cuda:{count - 1}")
    return device


def state_and_action_size(network: AttentionNetwork, batch: Batch) -> tuple[int, int]:
    """Observation size and action size the network's sites call for (the same at every site)."""
    with eval_mode(network), torch.no_grad():
        encoding = network.encode(batch)
    sizes = set()
    for site in encoding.sites:
        site.validate()
        sizes.add((agent_state(site).size, site.action_size))  # S of eq. 1, without building the states
    if len(sizes) != 1:
        raise ValueError(
            f"the network's attention sites give different state/action sizes {sorted(sizes)}; "
            "project every site to the same Dw, Dh, Du (see baselines/protocol.py)"
        )
    return sizes.pop()


def build_policy(config: ExperimentConfig, state_size: int, action_size: int) -> GaussianPolicy:
    agent = config.agent
    return GaussianPolicy(
        state_size,
        action_size,
        hidden_sizes=agent.hidden_sizes,
        init_log_std=agent.init_log_std,
        log_std_bounds=(agent.log_std_min, agent.log_std_max),
        normalize_state=agent.normalize_state,
    )


def build_strength(config: ExperimentConfig, batches_per_epoch: int) -> AdjustmentStrength:
    adjust = config.adjust
    return AdjustmentStrength(adjust.beta0, adjust.beta_half_life_epochs * batches_per_epoch, adjust.trainable_beta)

