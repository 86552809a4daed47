"""A classifier's evaluation in one of the two modes (drga/tasks/evaluation.py): accuracy, and eq. 5's
reward and its terms, the mean per example."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import torch

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.policy import AgentPolicy
from drga.core.scoring import RewardSettings
from drga.names import Mode
from drga.tasks.evaluation import RewardSums, scored_batches


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


@torch.no_grad()
def evaluate(
    network: AttentionNetwork,
    batches: Iterable[Batch],
    reward: RewardSettings,
    mode: Mode | str = Mode.NET_ONLY,
    policy: AgentPolicy | None = None,
    beta: torch.Tensor | float | None = None,
    device: torch.device | str = "cpu",
) -> EvalResult:
    correct, sums = 0.0, RewardSums()
    for batch, scored in scored_batches(network, batches, reward, mode, policy, beta, device):
        correct += (network.predictions(scored.output) == batch.labels).float().sum().item()
        sums.add(scored, batch.size)
    examples = max(sums.sequences, 1)
    return EvalResult(accuracy=correct / examples, **sums.means(), examples=examples)
