"""Evaluation in the two modes every result is reported in.

- ``net-only``: the (retrofitted) network alone, with its own attention.
- ``with-agent``: the agent's deterministic actions squash(μ(s_t)) applied through eqs. 3–4.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Literal

import torch

from drga.agents.gaussian_policy import GaussianPolicy
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.config import RewardConfig
from drga.reward import RewardTerms, drga_reward
from drga.rollout import rollout

Mode = Literal["net-only", "with-agent"]
MODES: tuple[Mode, ...] = ("net-only", "with-agent")


@dataclass
class EvalResult:
    accuracy: float
    log_likelihood: float
    reward: float
    penalty: float
    highlighted_fraction: float
    examples: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def output_and_reward(
    network: AttentionNetwork,
    batch: Batch,
    reward: RewardConfig,
    mode: Mode,
    policy: GaussianPolicy | None = None,
    beta: torch.Tensor | float | None = None,
) -> tuple[torch.Tensor, RewardTerms]:
    """The network's output on ``batch`` in one evaluation mode, and eq. 5's terms for it."""
    if mode == "net-only":
        encoding = network.encode(batch)
        output = network.predict(encoding, encoding.attention)
        log_likelihood = network.log_likelihood(output, batch.labels)
        masks = [site.mask for site in encoding.sites]
        return output, drga_reward(log_likelihood, encoding.attention, masks, reward.gamma, reward.sqrt_l0, reward.delta)
    result = rollout(network, policy, batch, torch.as_tensor(beta), 1, reward.gamma, reward.sqrt_l0, reward.delta, deterministic=True)
    return result.output, result.terms


@torch.no_grad()
def evaluate(
    network: AttentionNetwork,
    batches: Iterable[Batch],
    reward: RewardConfig,
    mode: Mode = "net-only",
    policy: GaussianPolicy | None = None,
    beta: torch.Tensor | float | None = None,
    device: torch.device | str = "cpu",
) -> EvalResult:
    if mode not in MODES:
        raise ValueError(f"unknown evaluation mode '{mode}'; choose one of {MODES}")
    if mode == "with-agent" and (policy is None or beta is None):
        raise ValueError("with-agent evaluation needs a policy and β")
    was_training = network.training, policy.training if policy is not None else False
    network.eval()
    if policy is not None:
        policy.eval()
    totals = dict(correct=0.0, log_likelihood=0.0, reward=0.0, penalty=0.0, highlighted_fraction=0.0)
    count = 0
    for batch in batches:
        batch = batch.to(device)
        output, terms = output_and_reward(network, batch, reward, mode, policy, beta)
        totals["correct"] += (network.predictions(output) == batch.labels).float().sum().item()
        totals["log_likelihood"] += terms.log_likelihood.sum().item()
        totals["reward"] += terms.reward.sum().item()
        totals["penalty"] += terms.penalty.sum().item()
        totals["highlighted_fraction"] += terms.highlighted_fraction.sum().item()
        count += batch.size
    network.train(was_training[0])
    if policy is not None:
        policy.train(was_training[1])
    count = max(count, 1)
    return EvalResult(
        accuracy=totals["correct"] / count,
        log_likelihood=totals["log_likelihood"] / count,
        reward=totals["reward"] / count,
        penalty=totals["penalty"] / count,
        highlighted_fraction=totals["highlighted_fraction"] / count,
        examples=count,
    )
