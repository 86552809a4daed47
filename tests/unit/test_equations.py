"""Each equation against numbers worked out by hand."""

import math

import pytest
import torch
from torch.distributions import Normal

from drga.baselines.protocol import AttentionSite
from drga.core.adjust import adjust_attention
from drga.core.beta import AdjustmentStrength, beta_schedule
from drga.core.policy import gaussian_log_prob, squash
from drga.core.reinforce import reinforce_loss
from drga.core.reward import count_highlighted, drga_reward, saliency_penalty
from drga.core.state import agent_state_size, build_agent_state


def t(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


# --- eqs. 3–4: the adjusting module -------------------------------------------------------


def test_adjust_zeroes_non_positive_and_renormalizes():
    # α + β·a = [0.1-0.4, 0.2+0.2, 0.3+0.1, 0.4+0] = [-0.3, 0.4, 0.4, 0.4] → [0, 1/3, 1/3, 1/3]
    alpha = t([[[0.1, 0.2, 0.3, 0.4]]])
    action = t([[[-1.0, 0.5, 0.25, 0.0]]])
    mask = torch.ones(1, 1, 4, dtype=torch.bool)
    revised = adjust_attention(alpha, action, 0.4, mask)
    assert torch.allclose(revised, t([[[0.0, 1 / 3, 1 / 3, 1 / 3]]]))


def test_adjust_keeps_padding_at_zero():
    # real tokens: [0.5+0.1, 0.5-0.1] = [0.6, 0.4] (sum 1); the padded slot's +0.2 is ignored
    alpha = t([[[0.5, 0.5, 0.0]]])
    action = t([[[0.5, -0.5, 1.0]]])
    mask = t([[[1, 1, 0]]], torch.bool)
    revised = adjust_attention(alpha, action, 0.2, mask)
    assert torch.allclose(revised, t([[[0.6, 0.4, 0.0]]]))
    assert revised[0, 0, 2].item() == 0.0


def test_adjust_all_non_positive_keeps_original_without_nan():
    alpha = t([[[0.2, 0.8]], [[0.5, 0.5]]]).requires_grad_()
    action = t([[[-1.0, -1.0]], [[1.0, -1.0]]])  # row 0: [-0.8, -0.2]; row 1: [1.5, -0.5] → [1, 0]
    mask = torch.ones(2, 1, 2, dtype=torch.bool)
    revised = adjust_attention(alpha, action, 1.0, mask)
    assert torch.allclose(revised, t([[[0.2, 0.8]], [[1.0, 0.0]]]))
    revised.sum().backward()
    assert torch.isfinite(alpha.grad).all()


def test_adjust_empty_sequence_stays_zero():
    alpha = torch.zeros(1, 1, 3)
    revised = adjust_attention(alpha, torch.ones(1, 1, 3), 0.4, torch.zeros(1, 1, 3, dtype=torch.bool))
    assert torch.equal(revised, torch.zeros(1, 1, 3))


def test_adjust_gradient_reaches_beta():
    beta = torch.tensor(0.4, requires_grad=True)
    revised = adjust_attention(t([[[0.3, 0.7]]]), t([[[0.5, -0.5]]]), beta, torch.ones(1, 1, 2, dtype=torch.bool))
    revised[0, 0, 0].backward()  # α'_0 = (0.3+0.5β)/1 → d/dβ = 0.5 (the sum stays 1 while both stay positive)
    assert beta.grad.item() == pytest.approx(0.5)


def test_adjust_broadcasts_one_alpha_over_several_action_samples():
    # two samples of one α: the same values as adjusting a copy of α per sample, and α's gradient
    # is the sum of the two samples' gradients (as through a repeated copy)
    alpha = t([[[[0.1, 0.2, 0.3, 0.4]]]]).requires_grad_()  # [B = 1, 1, K = 1, T = 4]
    action = t([[[[-1.0, 0.5, 0.25, 0.0]]], [[[1.0, 0.0, 0.0, -1.0]]]]).view(1, 2, 1, 4)
    mask = torch.ones(1, 1, 1, 4, dtype=torch.bool)
    revised = adjust_attention(alpha, action, 0.4, mask)
    # sample 0: [0, 1/3, 1/3, 1/3] (the first test); sample 1: [0.5, 0.2, 0.3, 0] / 1.0
    assert torch.allclose(revised, t([[[[0.0, 1 / 3, 1 / 3, 1 / 3]], [[0.5, 0.2, 0.3, 0.0]]]]))
    revised[:, :, :, 1].sum().backward()
    copies = alpha.detach().expand(1, 2, 1, 4).clone().requires_grad_()
    adjust_attention(copies, action, 0.4, mask.expand(1, 2, 1, 4))[:, :, :, 1].sum().backward()
    assert torch.allclose(alpha.grad, copies.grad.sum(dim=1, keepdim=True))


def test_adjust_rejects_mismatched_action():
    with pytest.raises(ValueError, match="does not match"):
        adjust_attention(torch.ones(1, 1, 3), torch.ones(1, 1, 2), 0.4, torch.ones(1, 1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="does not match"):  # α may broadcast over samples, the action may not
        adjust_attention(torch.ones(1, 2, 3), torch.ones(1, 1, 3), 0.4, torch.ones(1, 2, 3, dtype=torch.bool))


# --- eq. 2: the Gaussian policy's log-density ---------------------------------------------


def test_gaussian_log_prob_by_hand_and_as_torch_computes_it():
    # one token, A = 2: μ = (0, 1), σ = (1, 2); x = (1, 0): −½(1² + (−1/2)²) − log 2 − 2·log √(2π)
    mean = t([[0.0, 1.0]]).requires_grad_()
    std = t([[1.0, 2.0]]).requires_grad_()
    x = t([[[1.0, 0.0]], [[0.0, 1.0]]])  # two samples, [2, N = 1, A = 2]
    ours = gaussian_log_prob(Normal(mean, std), x)
    assert ours.shape == (2, 1)
    assert ours[0, 0].item() == pytest.approx(-0.5 * 1.25 - math.log(2.0) - math.log(2 * math.pi))
    theirs = Normal(mean, std).log_prob(x).sum(dim=-1)
    assert torch.allclose(ours, theirs)
    weights = t([[0.3], [-0.7]])
    grads = [torch.autograd.grad((weights * v).sum(), (mean, std)) for v in (ours, theirs)]
    for a, b in zip(*grads):
        assert torch.allclose(a, b)


# --- eq. 2's squash -----------------------------------------------------------------------


def test_squash_maps_to_open_interval_symmetrically():
    assert squash(t([0.0])).item() == 0.0
    assert squash(t([math.log(3.0)])).item() == pytest.approx(0.5)  # 2·(3/4) − 1
    assert squash(t([-math.log(3.0)])).item() == pytest.approx(-0.5)
    extremes = squash(t([-30.0, 30.0]))
    assert extremes[0] >= -1 and extremes[1] <= 1 and extremes[0] < -0.999 and extremes[1] > 0.999


# --- eq. 5: the reward --------------------------------------------------------------------


def test_count_highlighted_by_cumulative_mass():
    mask4 = torch.ones(1, 1, 4, dtype=torch.bool)
    # sorted [0.5, 0.3, 0.15, 0.05]: cumulative 0.5, 0.8, 0.95 → 3 tokens reach δ = 0.85
    assert count_highlighted(t([[[0.15, 0.5, 0.05, 0.3]]]), mask4, 0.85).item() == 3
    assert count_highlighted(t([[[0.25, 0.25, 0.25, 0.25]]]), mask4, 0.85).item() == 4
    assert count_highlighted(t([[[0.9, 0.05, 0.05, 0.0]]]), mask4, 0.85).item() == 1
    # exactly reaching δ counts: 0.5 + 0.35 = 0.85 → 2
    assert count_highlighted(t([[[0.5, 0.35, 0.1, 0.05]]]), mask4, 0.85).item() == 2
    padded = t([[[0.6, 0.4, 0.0, 0.0]]])
    assert count_highlighted(padded, t([[[1, 1, 0, 0]]], torch.bool), 0.85).item() == 2


def test_saliency_penalty_values_and_minimum():
    l0 = 0.2**2
    # N = 3, L = 4: 0.75 + 0.04 / 0.75
    assert saliency_penalty(t(3.0), t(4.0), l0).item() == pytest.approx(0.75 + 0.04 / 0.75)
    # smallest at N/L = √L0 = 0.2: f = 0.2 + 0.04/0.2 = 0.4
    length = t(100.0)
    values = {n: saliency_penalty(t(float(n)), length, l0).item() for n in (10, 20, 30, 100)}
    assert values[20] == pytest.approx(0.4)
    assert values[20] < values[10] and values[20] < values[30] < values[100]


def test_drga_reward_by_hand():
    # log P = log 0.8; N = 3 of L = 4 → penalty 0.75 + 0.04/0.75; R = log 0.8 − 0.2 · penalty
    alpha = t([[[0.5, 0.3, 0.15, 0.05]]])
    terms = drga_reward(t([math.log(0.8)]), [alpha], [torch.ones(1, 1, 4, dtype=torch.bool)], 0.2, 0.2, 0.85)
    penalty = 0.75 + 0.04 / 0.75
    assert terms.penalty.item() == pytest.approx(penalty)
    assert terms.reward.item() == pytest.approx(math.log(0.8) - 0.2 * penalty)
    assert terms.highlighted_fraction.item() == pytest.approx(0.75)


def test_drga_reward_averages_arrays_and_skips_empty_ones():
    # array 0: N = 1 of L = 2 → 0.5 + 0.04/0.5 = 0.58; array 1: N = 2 of 2 → 1 + 0.04 = 1.04; array 2: empty
    alpha = t([[[0.9, 0.1], [0.5, 0.5], [0.0, 0.0]]])
    mask = t([[[1, 1], [1, 1], [0, 0]]], torch.bool)
    terms = drga_reward(t([0.0]), [alpha], [mask], 1.0, 0.2, 0.85)
    assert terms.penalty.item() == pytest.approx((0.58 + 1.04) / 2)


# --- β ------------------------------------------------------------------------------------


def test_beta_schedule_halves_every_half_life():
    assert beta_schedule(0, 0.4, 10) == pytest.approx(0.4)
    assert beta_schedule(10, 0.4, 10) == pytest.approx(0.2)
    assert beta_schedule(20, 0.4, 10) == pytest.approx(0.1)
    assert beta_schedule(50, 0.4, 0) == pytest.approx(0.4)


def test_adjustment_strength_starts_at_beta0_and_stays_in_range():
    strength = AdjustmentStrength(beta0=0.4, half_life_steps=10)
    assert strength().item() == pytest.approx(0.4)  # β̃ = exp(0) = 1
    strength.advance(10)
    assert strength().item() == pytest.approx(0.2)
    with torch.no_grad():
        strength.log_factor.fill_(50.0)
    assert strength().item() == pytest.approx(1.0 / 2)  # β̃ capped at 1/β0: β ≤ 1 before the schedule's halving
    with torch.no_grad():
        strength.log_factor.fill_(-50.0)
    assert 0.0 < strength().item() < 1e-6
    with pytest.raises(ValueError):
        AdjustmentStrength(beta0=1.5)


def test_beta_moves_measurably_under_adam_in_one_epoch():
    """100 steps (an MR epoch has 134) of Adam 5e-4 on a task loss that keeps preferring a larger β."""
    strength = AdjustmentStrength(beta0=0.4)
    optimizer = torch.optim.Adam(strength.parameters(), lr=5e-4)
    generator = torch.Generator().manual_seed(0)
    for _ in range(100):
        noisy_slope = 1.0 + torch.randn((), generator=generator)  # a noisy gradient whose mean asks for more β
        loss = -noisy_slope * strength()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert strength.learned_factor.item() > 1.02  # was ≈ 1.0000 with exp(−softplus(ρ)) from ρ = −6


# --- eq. 1: the state ---------------------------------------------------------------------


def test_state_by_hand_with_padding():
    # two real tokens and one pad; Dw = 1, Dh = 2, Du = 1
    site = AttentionSite(
        word_vectors=t([[[[1.0], [2.0], [0.0]]]]),
        hidden_states=t([[[[1.0, 2.0], [3.0, 4.0], [50.0, 60.0]]]]),
        query=t([[[9.0]]]),
        mask=t([[[1, 1, 0]]], torch.bool),
        attention=t([[[0.25, 0.75, 0.0]]]),
    )
    state = build_agent_state(site)
    assert state.shape == (1, 1, 3, agent_state_size(1, 2, 1)) == (1, 1, 3, 12)
    # [w; h; α·h; h^s = 0.25·[1,2] + 0.75·[3,4]; mean h; max h; u]
    expected_first = [1.0, 1.0, 2.0, 0.25, 0.5, 2.5, 3.5, 2.0, 3.0, 3.0, 4.0, 9.0]
    assert torch.allclose(state[0, 0, 0], t(expected_first))
    assert torch.allclose(state[0, 0, 1, :5], t([2.0, 3.0, 4.0, 2.25, 3.0]))


def test_state_multi_dimensional_needs_matching_sizes():
    site = AttentionSite(
        word_vectors=torch.zeros(1, 1, 2, 1), hidden_states=torch.ones(1, 1, 2, 2), query=torch.zeros(1, 1, 1),
        mask=torch.ones(1, 1, 2, dtype=torch.bool), attention=torch.full((1, 1, 2, 3), 0.5),
    )
    with pytest.raises(ValueError, match="must match"):
        build_agent_state(site)


# --- eqs. 6–7: REINFORCE ------------------------------------------------------------------


def test_reinforce_loss_uses_mean_of_samples_as_baseline():
    log_prob = t([[1.0, 2.0]]).requires_grad_()
    loss = reinforce_loss(log_prob, t([[1.0, 3.0]]), normalize_advantage=False)
    # advantages [-1, +1]; loss = −mean(−1·1 + 1·2) = −0.5
    assert loss.item() == pytest.approx(-0.5)
    loss.backward()
    assert torch.allclose(log_prob.grad, t([[0.5, -0.5]]))
    with pytest.raises(ValueError):
        reinforce_loss(t([1.0]), t([1.0]))


def test_an_untrained_agent_adjusts_gently_by_default():
    """The default initial spread: expected total-variation distance between α and α′ ≤ 0.1 at L = 20
    (with the earlier init log σ = −0.5 it was ≈ 0.45 and a third of the tokens were zeroed)."""
    from drga.config import ExperimentConfig
    from drga.core.building import build_policy

    config = ExperimentConfig()
    torch.manual_seed(0)
    policy = build_policy(config, state_size=32, action_size=1)
    states = torch.randn(2000, 20, 32)
    dist = policy.distribution(states)
    action = squash(dist.sample()).squeeze(-1)  # [2000, 20]
    mask = torch.ones(2000, 1, 20, dtype=torch.bool)
    for alpha in (torch.full((2000, 1, 20), 1 / 20), torch.softmax(torch.randn(2000, 1, 20) * 1.5, dim=-1)):
        revised = adjust_attention(alpha, action.unsqueeze(1), config.adjust.beta0, mask)
        total_variation = 0.5 * (revised - alpha).abs().sum(-1).mean().item()
        assert total_variation <= 0.1, total_variation
        assert (revised == 0).float().mean().item() < 0.15  # few tokens zeroed


def test_attention_shift_by_hand():
    from drga.core.reward import attention_shift

    # one example, two samples; α = [0.5, 0.3, 0.2, pad]
    alpha = t([[[0.5, 0.3, 0.2, 0.0]]])
    revised = t([[[0.6, 0.3, 0.1, 0.0]], [[0.5, 0.3, 0.2, 0.0]]])  # [B·S = 2, K = 1, T = 4]
    mask = t([[[1, 1, 1, 0]], [[1, 1, 1, 0]]], torch.bool)
    # sample 0: ½(0.1 + 0 + 0.1) = 0.1; sample 1: unchanged, 0
    assert attention_shift([alpha], [revised], [mask]).tolist() == pytest.approx([0.1, 0.0])
    # multi-dimensional: each of the H dimensions a distribution, their distances averaged
    alpha_h = t([[[[0.5, 1.0], [0.5, 0.0]]]])  # [1, 1, T = 2, H = 2]
    revised_h = t([[[[1.0, 1.0], [0.0, 0.0]]]])
    assert attention_shift([alpha_h], [revised_h], [t([[[1, 1]]], torch.bool)]).tolist() == pytest.approx([0.25])


def test_reinforce_with_a_given_baseline_by_hand():
    # two samples of one sequence, rewards 1 and 3; the self-critical baseline (mean action's reward) is 2.5
    log_prob = torch.tensor([[0.0, 0.0]], requires_grad=True)
    loss = reinforce_loss(log_prob, t([[1.0, 3.0]]), normalize_advantage=False, baseline=t([[2.5]]))
    loss.backward()
    # loss = −mean(advantage · log π): advantages −1.5 and +0.5, gradient −advantage / 2
    assert log_prob.grad[0].tolist() == pytest.approx([0.75, -0.25])
    mean_baseline = torch.tensor([[0.0, 0.0]], requires_grad=True)
    reinforce_loss(mean_baseline, t([[1.0, 3.0]]), normalize_advantage=False).backward()
    assert mean_baseline.grad[0].tolist() == pytest.approx([0.5, -0.5])  # advantages ∓1 around the mean 2
