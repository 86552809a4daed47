"""Loading a trained run's checkpoint back into a network, an agent and β."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from drga.agents.gaussian_policy import GaussianPolicy
from drga.baselines import PRETRAINED_TOKENIZERS
from drga.baselines.protocol import AttentionNetwork
from drga.beta import AdjustmentStrength
from drga.checkpoint import CheckpointError, load_checkpoint, load_module_state
from drga.config import ExperimentConfig, config_from_dict
from drga.data import Vocabulary
from drga.setup import build_attention_network, build_policy, pretrained_vocabulary, resolve_device


@dataclass
class TrainedModel:
    config: ExperimentConfig
    network: AttentionNetwork
    policy: GaussianPolicy
    strength: AdjustmentStrength
    vocab: Vocabulary
    label_names: list[str]
    has_agent: bool
    phase: str
    device: torch.device


def load_trained(path: str | Path, device: str = "cpu", expected_net: str | None = None) -> TrainedModel:
    payload = load_checkpoint(path)
    if payload.get("kind") not in ("model", "resume"):
        raise CheckpointError(f"{path} is not a model checkpoint")
    if expected_net is not None and payload["net_name"] != expected_net:
        raise CheckpointError(f"{path} holds a '{payload['net_name']}' network, not '{expected_net}'")
    config = config_from_dict(payload["config"])
    config.network.vectors = None  # the trained embeddings are in the checkpoint
    # A network reading its pretrained tokenizer's subwords gets that tokenizer back (checked against the recorded ids).
    subwords = config.network.name in PRETRAINED_TOKENIZERS
    vocab = pretrained_vocabulary(config, payload["vocab"]) if subwords else Vocabulary(payload["vocab"])
    torch_device = resolve_device(device)
    network = build_attention_network(config, vocab, len(payload["label_names"]))
    load_module_state(network, payload["network"], "network", path)
    policy = build_policy(config, payload["state_size"], payload["action_size"])
    load_module_state(policy, payload["policy"], "agent", path)
    strength = AdjustmentStrength(config.adjust.beta0)
    load_module_state(strength, payload["strength"], "adjusting module", path)
    strength.half_life_steps = float(payload.get("half_life_steps", 0.0))
    for module in (network, policy, strength):
        module.to(torch_device).eval()
    return TrainedModel(
        config, network, policy, strength, vocab, list(payload["label_names"]), bool(payload["has_agent"]),
        payload["phase"], torch_device,
    )
