"""experiments/deterministic_actions.py counts what a deterministic action does, by hand."""

from __future__ import annotations

import torch
from torch.distributions import Normal

from drga.baselines.protocol import AttentionSite
from tests.scripts import load_script


def deterministic_actions():
    return load_script("experiments/deterministic_actions.py")


class SaturatedPolicy:
    """μ = −50 for every token: squash(μ) = 2·sigmoid(−50) − 1 = −1 to float precision."""

    def distribution(self, state):
        rows = state.shape[0]
        return Normal(torch.full((rows, 1), -50.0), torch.ones(rows, 1))


def test_a_saturated_action_leaves_all_non_positive_arrays_unchanged_and_keeps_only_weights_above_beta():
    script = deterministic_actions()
    alpha = torch.tensor([[[0.5, 0.5]], [[0.9, 0.1]]])  # [B = 2, K = 1, T = 2]
    words, hidden, query = torch.randn(2, 1, 2, 3), torch.randn(2, 1, 2, 4), torch.randn(2, 1, 4)
    site = AttentionSite(words, hidden, query, torch.ones(2, 1, 2, dtype=torch.bool), alpha)
    revised, counts = script.site_counts(site, SaturatedPolicy(), torch.tensor(0.6))
    # α + β·a = α − 0.6: [−0.1, −0.1] (nothing left: α kept) and [0.3, −0.5] (only the first token: [1, 0])
    assert torch.allclose(revised, torch.tensor([[[0.5, 0.5]], [[1.0, 0.0]]]))
    assert counts == {"mu": 200.0, "saturated": 4.0, "tokens": 4, "unchanged": 1.0, "arrays": 2.0}
