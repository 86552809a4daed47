"""What both tasks' evaluation shares: a split scored in one of the two modes every result is reported in.

- ``net-only``: the (retrofitted) network alone, with its own attention.
- ``with-agent``: the agent's deterministic actions squash(μ(s_t)) applied through eqs. 3–4
  (:func:`drga.core.rollout.mean_action_attention`).

Classification adds accuracy (``drga/tasks/classification/evaluation.py``), translation perplexity,
BLEU and chrF (``drga/tasks/translation/evaluation.py``); both sum eq. 5's terms here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from drga.baselines.protocol import AttentionNetwork, Batch
from drga.core.policy import AgentPolicy
from drga.core.reward import Reward, RewardTerms, make_reward
from drga.core.rollout import rollout
from drga.core.scoring import RewardSettings, score
from drga.names import MODES, Mode
from drga.runtime.eval_mode import eval_mode


@dataclass
class ModePass:
    """The network's output on a batch in one mode, eq. 5's terms for it, and (with-agent) how far
    the agent's actions moved the attention: TV(α, α′) per sequence (None net-only)."""

    output: Tensor
    terms: RewardTerms
    shift: Tensor | None = None


def mode_pass(
    network: AttentionNetwork,
    batch: Batch,
    reward: Reward | RewardSettings,
    mode: Mode,
    policy: AgentPolicy | None = None,
    beta: Tensor | float | None = None,
) -> ModePass:
    """One batch in one evaluation mode, rewarded by eq. 5."""
    if mode == Mode.NET_ONLY:
        encoding = network.encode(batch)
        masks = [site.mask for site in encoding.sites]
        scored = score(network, encoding, encoding.attention, batch.labels, masks, reward)
        return ModePass(scored.output, scored.terms)
    if policy is None or beta is None:
        raise ValueError("with-agent evaluation needs a policy and β")
    acted = rollout(network, policy, batch, torch.as_tensor(beta), reward=reward, deterministic=True)
    return ModePass(acted.output, acted.terms, acted.shift)


def scored_batches(
    network: AttentionNetwork,
    batches: Iterable[Batch],
    reward: RewardSettings,
    mode: Mode | str,
    policy: AgentPolicy | None = None,
    beta: Tensor | float | None = None,
    device: torch.device | str = "cpu",
) -> Iterator[tuple[Batch, ModePass]]:
    """Each batch of a split on ``device`` with its pass in ``mode`` (the network and the agent in eval
    mode while it runs; the caller turns gradients off)."""
    if mode not in MODES:
        raise ValueError(f"unknown evaluation mode '{mode}'; choose one of {', '.join(MODES)}")
    mode = Mode(mode)
    if mode == Mode.WITH_AGENT and (policy is None or beta is None):
        raise ValueError("with-agent evaluation needs a policy and β")
    chosen = make_reward(reward)  # built once for the split, not per batch
    # a policy that is a module (every policy of the toolkit's) is switched too; the AgentPolicy protocol has no modes
    with eval_mode(network, policy if isinstance(policy, nn.Module) else None):
        for batch in batches:
            batch = batch.to(device)
            yield batch, mode_pass(network, batch, chosen, mode, policy, beta)


@dataclass
class RewardSums:
    """Eq. 5's terms (and the attention's shift) summed over a split's sequences, for their means per sequence."""

    log_likelihood: float = 0.0
    reward: float = 0.0
    penalty: float = 0.0
    highlighted_fraction: float = 0.0
    shift: float = 0.0
    sequences: int = 0

    def add(self, scored: ModePass, size: int) -> None:
        terms = scored.terms
        self.log_likelihood += terms.log_likelihood.sum().item()
        self.reward += terms.reward.sum().item()
        self.penalty += terms.penalty.sum().item()
        self.highlighted_fraction += terms.highlighted_fraction.sum().item()
        if scored.shift is not None:
            self.shift += scored.shift.sum().item()
        self.sequences += size

    def means(self) -> dict[str, float]:
        """The mean per sequence of log P(y|X), the reward, the penalty and N/L."""
        n = max(self.sequences, 1)
        return {"log_likelihood": self.log_likelihood / n, "reward": self.reward / n, "penalty": self.penalty / n,
                "highlighted_fraction": self.highlighted_fraction / n}
