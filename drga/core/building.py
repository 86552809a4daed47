"""The agent's policy (eq. 2) and β (eq. 3) built from a configuration, the same way for every task, with the
state and action sizes a network's attention sites call for (eq. 1's S).

The run's seeds and device: :mod:`drga.runtime.device`."""

from __future__ import annotations

import torch

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.config import ExperimentConfig
from drga.core.beta import AdjustmentStrength
from drga.core.policy import BinaryPolicy, GaussianPolicy, StatePolicy
from drga.core.state import agent_state
from drga.runtime.eval_mode import eval_mode


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


def build_policy(config: ExperimentConfig, state_size: int, action_size: int) -> StatePolicy:
    agent = config.agent
    multiplicative = config.adjust.multiplicative
    if agent.policy == "binary":  # the authors' code's, not eq. 2
        return BinaryPolicy(state_size, action_size, agent.hidden_sizes, agent.normalize_state, multiplicative)
    return GaussianPolicy(
        state_size,
        action_size,
        hidden_sizes=agent.hidden_sizes,
        init_log_std=agent.init_log_std,
        log_std_bounds=(agent.log_std_min, agent.log_std_max),
        normalize_state=agent.normalize_state,
        multiplicative=multiplicative,
    )


def build_strength(config: ExperimentConfig, batches_per_epoch: int) -> AdjustmentStrength:
    adjust = config.adjust
    return AdjustmentStrength(adjust.beta0, adjust.beta_half_life_epochs * batches_per_epoch, adjust.trainable_beta)

