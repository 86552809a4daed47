"""Evaluation in the two modes every result is reported in.

- ``net-only``: the (retrofitted) network alone, with its own attention.
- ``with-agent``: the agent's deterministic actions squash(μ(s_t)) applied through eqs. 3–4.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import torch

from drga.agents.gaussian_policy import AgentPolicy
from drga.baselines.protocol import AttentionNetwork, Batch
from drga.eval_mode import eval_mode
from drga.names import MODES, Mode
from drga.reward import RewardTerms
from drga.rollout import Rollout, rollout
from drga.scoring import RewardSettings, score


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
    reward: RewardSettings,
    mode: Mode,
    policy: AgentPolicy | None = None,
    beta: torch.Tensor | float | None = None,
) -> tuple[torch.Tensor, RewardTerms]:
    """The network's output on ``batch`` in one evaluation mode, and eq. 5's terms for it."""
    if mode == Mode.NET_ONLY:
        encoding = network.encode(batch)
        masks = [site.mask for site in encoding.sites]
        scored = score(network, encoding, encoding.attention, batch.labels, masks, reward)
        return scored.output, scored.terms
    result = agent_pass(network, batch, reward, policy, beta)
    return result.output, result.terms


def agent_pass(
    network: AttentionNetwork, batch: Batch, reward: RewardSettings, policy: AgentPolicy, beta: torch.Tensor | float
) -> Rollout:
    """The ``with-agent`` mode's pass over ``batch``: the agent's deterministic actions applied (eqs. 1–4),
    rewarded by eq. 5; its ``shift`` says how far they moved the attention."""
    return rollout(network, policy, batch, torch.as_tensor(beta), reward=reward, deterministic=True)


@torch.no_grad()
def evaluate(
    network: AttentionNetwork,
    batches: Iterable[Batch],
    reward: RewardSettings,
    mode: Mode = Mode.NET_ONLY,
    policy: AgentPolicy | None = None,
    beta: torch.Tensor | float | None = None,
    device: torch.device | str = "cpu",
) -> EvalResult:
    if mode not in MODES:
        raise ValueError(f"unknown evaluation mode '{mode}'; choose one of {', '.join(MODES)}")
    if mode == Mode.WITH_AGENT and (policy is None or beta is None):
        raise ValueError("with-agent evaluation needs a policy and β")
    totals = dict(correct=0.0, log_likelihood=0.0, reward=0.0, penalty=0.0, highlighted_fraction=0.0)
    count = 0
    with eval_mode(network, policy):
        for batch in batches:
            batch = batch.to(device)
            output, terms = output_and_reward(network, batch, reward, mode, policy, beta)
            totals["correct"] += (network.predictions(output) == batch.labels).float().sum().item()
            totals["log_likelihood"] += terms.log_likelihood.sum().item()
            totals["reward"] += terms.reward.sum().item()
            totals["penalty"] += terms.penalty.sum().item()
            totals["highlighted_fraction"] += terms.highlighted_fraction.sum().item()
            count += batch.size
    count = max(count, 1)
    return EvalResult(
        accuracy=totals["correct"] / count,
        log_likelihood=totals["log_likelihood"] / count,
        reward=totals["reward"] / count,
        penalty=totals["penalty"] / count,
        highlighted_fraction=totals["highlighted_fraction"] / count,
        examples=count,
    )
