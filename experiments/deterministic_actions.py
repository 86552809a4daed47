"""What a trained agent's deterministic action does to attention, per checkpoint.

For every checkpoint given (a run's agent_best.pt or cotrain_best.pt), on a split of the data it
was trained on, with the action the evaluation uses (a = squash(μ(s_t)), eq. 2 without noise):

- mean |μ|, the pre-squash mean, and the share of real tokens whose action is saturated (|a| > 0.99);
- the share of sequences (arrays) whose α + β·a is non-positive on every real token: eqs. 3–4
  then have nothing to renormalise, and the adjusting module keeps the original α
  (drga/core/adjust.py), so the agent changes nothing there;
- the mean total-variation distance TV(α, α′) it makes.

    python experiments/deterministic_actions.py runs/sb3-compare-small/*/agent_best.pt --split dev

docs/sb3.md uses it to explain why the A2C and PPO agents of its comparison print the same rows.
"""

from __future__ import annotations

import argparse

import checkout  # noqa: F401  (first: this checkout's drga)
import torch

from drga.analysis.attention import length_sorted_chunks, load_inputs
from drga.core.policy import squash
from drga.core.reward import attention_shift
from drga.core.rollout import mean_action_attention
from drga.data import collate
from drga.runtime.eval_mode import eval_mode


def site_counts(site, policy, beta: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    """α′ of one site under the deterministic action, and its counts (sums, not yet means)."""
    adjusted = mean_action_attention(site, policy, beta)  # the with-agent mode's α′ (eqs. 1–4)
    mean, action = adjusted.distribution.mean, adjusted.action  # μ [N, A]; a = squash(μ) on the site, 0 on padding
    mask, present = site.mask, site.mask.any(dim=-1)
    if site.multi_dimensional:  # each of the H dimensions is one distribution
        mask, present = mask.unsqueeze(-1).expand_as(site.attention), present.unsqueeze(-1).expand(*present.shape, site.attention.shape[-1])
    nothing_left = ((site.attention + beta * action <= 0) | ~mask).all(dim=2) & present
    counts = {
        "mu": float(mean.abs().sum()), "saturated": float((squash(mean).abs() > 0.99).sum()), "tokens": mean.numel(),
        "unchanged": float(nothing_left.sum()), "arrays": float(present.sum()),
    }
    return adjusted.revised, counts


@torch.no_grad()
def action_summary(checkpoint: str, split: str, batch_size: int = 64) -> dict[str, float]:
    inputs = load_inputs(checkpoint, split=split)
    network, policy, beta = inputs.model.network, inputs.model.policy, inputs.beta
    totals = {"mu": 0.0, "saturated": 0.0, "tokens": 0.0, "unchanged": 0.0, "arrays": 0.0, "shift": 0.0}
    with eval_mode(network, policy):
        for chunk in length_sorted_chunks(inputs.examples, batch_size):
            batch = collate([inputs.examples[i] for i in chunk]).to(inputs.model.device)
            encoding = network.encode(batch)
            revised = []
            for site in encoding.sites:
                alpha, counts = site_counts(site, policy, beta)
                revised.append(alpha)
                totals = {key: totals[key] + counts.get(key, 0.0) for key in totals}
            totals["shift"] += float(attention_shift(encoding.attention, revised, [s.mask for s in encoding.sites]).sum())
    return {
        "beta": float(beta),
        "mean |mu|": totals["mu"] / totals["tokens"],
        "saturated tokens": totals["saturated"] / totals["tokens"],
        "arrays left unchanged (all non-positive)": totals["unchanged"] / totals["arrays"],
        "mean TV(alpha, alpha')": totals["shift"] / len(inputs.examples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--split", default="dev", choices=("train", "dev", "test"))
    args = parser.parse_args()
    rows = [(path, action_summary(path, args.split)) for path in args.checkpoints]
    keys = list(rows[0][1])
    print(f"| checkpoint ({args.split}) | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for path, summary in rows:
        print(f"| {path} | " + " | ".join(f"{summary[k]:.3f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
