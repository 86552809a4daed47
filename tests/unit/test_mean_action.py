"""The with-agent mode's one deterministic path (drga.core.rollout.mean_action_attention): eqs. 1–4 with
the agent's mean action, worked out by hand."""

from __future__ import annotations

import math

import torch

from drga.baselines.protocol import AttentionSite
from drga.core.policy import GaussianPolicy
from drga.core.rollout import mean_action_attention, site_adjusted_attention
from drga.core.state import agent_state


def site_and_policy(mean: float) -> tuple[AttentionSite, GaussianPolicy]:
    """One sequence of three real tokens and one padding token; a policy whose mean is ``mean`` for every state."""
    torch.manual_seed(0)
    words, hidden, query = torch.randn(1, 4, 3), torch.randn(1, 4, 2), torch.randn(1, 2)
    mask = torch.tensor([[True, True, True, False]])
    site = AttentionSite.single(words, hidden, query, mask, torch.tensor([[0.5, 0.3, 0.2, 0.0]]))
    policy = GaussianPolicy(agent_state(site).size, 1, hidden_sizes=(4,))
    with torch.no_grad():
        policy.mean_head.weight.zero_()
        policy.mean_head.bias.fill_(mean)
    return site, policy


def test_the_mean_action_squashed_times_beta_adjusts_the_attention_by_eqs_3_and_4():
    # μ = −ln 3 gives a = 2·sigmoid(μ) − 1 = −0.5; with β = 0.5: α + β·a = (0.25, 0.05, −0.05), the last
    # cut to 0 (eq. 4), then renormalised over what is left: (0.25, 0.05, 0) / 0.30
    site, policy = site_and_policy(-math.log(3.0))
    adjusted = mean_action_attention(site, policy, torch.tensor(0.5))
    assert torch.allclose(adjusted.action, torch.tensor([[[-0.5, -0.5, -0.5, 0.0]]]), atol=1e-6)  # 0 on padding
    assert torch.allclose(adjusted.revised, torch.tensor([[[0.25 / 0.3, 0.05 / 0.3, 0.0, 0.0]]]), atol=1e-6)
    assert adjusted.rows.tolist() == [0, 1, 2] and adjusted.distribution.mean.shape == (3, 1)


def test_given_actions_adjust_a_site_alike_squeezed_or_not():
    site, _ = site_and_policy(0.0)
    action = torch.tensor([[[0.2, -0.2, 0.0, 0.9]]])  # padding's action changes nothing
    expected = torch.tensor([[[0.6, 0.2, 0.2, 0.0]]])  # β = 0.5: α + β·a = (0.6, 0.2, 0.2), already summing to 1
    assert torch.allclose(site_adjusted_attention(site, action, 0.5), expected, atol=1e-6)
    assert torch.allclose(site_adjusted_attention(site, action.unsqueeze(-1), 0.5), expected, atol=1e-6)
