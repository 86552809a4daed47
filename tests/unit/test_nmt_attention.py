"""DRGA on decoder cross-attention: the site's layout, eqs. 3–5 per decoder step (hand-worked
numbers), padding on both sides, and predict from revised attention."""

from __future__ import annotations

import pytest
import torch

from drga.baselines.nmt_common import CrossAttentionEncoding, cross_attention_site
from drga.baselines.protocol import Batch
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer_nmt import TransformerNMT
from drga.core.adjust import adjust_attention
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.core.reward import drga_reward
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants


def tiny_batch() -> Batch:
    """Two pairs: source lengths 4 and 2, targets (with </s>) of 4 and 2 tokens."""
    tokens = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])
    labels = torch.tensor([[11, 12, 13, 3], [14, 3, 0, 0]])
    return Batch(tokens, tokens != 0, labels)


def test_cross_attention_arrays_are_adjusted_and_renormalised_per_step_by_hand():
    # B = 2 pairs, T_y = 3 decoder steps, T_x = 3 source tokens. Pair 1 has a 2-token source
    # (token 3 is padding) and 2 real target steps (step 3 is padding).
    source_mask = torch.tensor([[True, True, True], [True, True, False]])
    step_real = torch.tensor([[True, True, True], [True, True, False]])
    alpha = torch.tensor([
        [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]],
        [[0.6, 0.4, 0.0], [0.25, 0.75, 0.0], [0.5, 0.5, 0.0]],  # the network's α at a padded step
    ])
    action = torch.tensor([
        [[0.4, -1.0, 0.2], [0.0, 0.0, 0.0], [-0.8, -0.8, -0.8]],
        [[-0.4, 0.4, 0.9], [0.5, -0.5, 0.0], [0.3, 0.3, 0.3]],
    ])
    words, states = torch.randn(2, 3, 4), torch.randn(2, 3, 5)
    site = cross_attention_site(words, states, torch.randn(2, 3, 6), source_mask, step_real, alpha)
    assert site.mask.tolist() == [
        [[True, True, True]] * 3,
        [[True, True, False], [True, True, False], [False, False, False]],
    ]
    assert site.attention[1, 2].tolist() == [0.0, 0.0, 0.0]  # a padded step's array is empty
    assert site.word_vectors.stride(1) == 0 and site.hidden_states.stride(1) == 0  # views, not copies

    revised = adjust_attention(site.attention, action, 0.5, site.mask)  # eqs. 3–4 with β = 0.5
    expected = torch.tensor([
        # α + 0.5·a = [0.7, −0.2, 0.3] → clip → [0.7, 0, 0.3], already summing to 1
        # a = 0 keeps α; every α* ≤ 0 → the step keeps its original α
        [[0.7, 0.0, 0.3], [0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]],
        # [0.4, 0.6 | padding stays 0]; [0.75, 0.5] → /1.25 = [0.6, 0.4]; padded step: all 0
        [[0.4, 0.6, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 0.0]],
    ])
    expected[1, 1] = torch.tensor([0.5, 0.5, 0.0])  # [0.25 + 0.25, 0.75 − 0.25] = [0.5, 0.5]
    assert torch.allclose(revised, expected, atol=1e-6)

    # eq. 5 with γ = 0.2, √L0 = 0.2, δ = 0.85, the penalty averaged over the 5 real step arrays.
    # pair 0: N = 2, 2, 3 of L = 3 → (2/3 + 0.04·3/2) twice and (1 + 0.04) once → mean 0.831111
    # pair 1: N = 2 of L = 2 on both real steps → 1.04 (the padded step is left out)
    terms = drga_reward(torch.tensor([-3.0, -2.0]), [revised], [site.mask], gamma=0.2, sqrt_l0=0.2, delta=0.85)
    assert torch.allclose(terms.penalty, torch.tensor([2.4933333 / 3, 1.04]), atol=1e-5)
    assert torch.allclose(terms.reward, torch.tensor([-3.0 - 0.2 * 2.4933333 / 3, -2.0 - 0.2 * 1.04]), atol=1e-5)
    assert torch.allclose(terms.highlighted_fraction, torch.tensor([(2 / 3 + 2 / 3 + 1) / 3, 1.0]), atol=1e-5)


@pytest.mark.parametrize("rerun", [False, True])
def test_luong_site_layout_and_revised_attention_reach_the_prediction(rerun):
    torch.manual_seed(0)
    network = LuongSeq2Seq(20, 20, embedding_dim=8, hidden_size=8, dropout=0.0, rerun_decoder=rerun).eval()
    batch = tiny_batch()
    with torch.no_grad():
        encoding = network.encode(batch)
    assert isinstance(encoding, CrossAttentionEncoding)
    (site,) = encoding.sites
    site.validate()
    assert tuple(site.attention.shape) == (2, 4, 4)  # K = T_y arrays over T_x tokens
    sums = site.attention.sum(dim=-1)
    assert torch.allclose(sums[0], torch.ones(4)) and torch.allclose(sums[1], torch.tensor([1.0, 1.0, 0.0, 0.0]))
    assert site.attention[1, :, 2:].abs().max() == 0  # padded source tokens get no attention
    assert not site.mask[1, 2:].any() and site.mask[1, :2, :2].all()
    assert torch.equal(site.query, encoding.cache["site"]["queries"])  # u = the decoder state per step

    # Hand-chosen action, β = 0.4: +1 on the first source token, −1 on the others.
    action = torch.full_like(site.attention, -1.0)
    action[..., 0] = 1.0
    revised = adjust_attention(site.attention, action, 0.4, site.mask)
    for b, steps, length in ((0, 4, 4), (1, 2, 2)):
        for t in range(steps):
            raw = [float(site.attention[b, t, j]) + 0.4 * float(action[b, t, j]) for j in range(length)]
            kept = [max(r, 0.0) for r in raw]
            want = [k / sum(kept) for k in kept] if sum(kept) > 0 else [float(site.attention[b, t, j]) for j in range(length)]
            assert revised[b, t, :length].tolist() == pytest.approx(want, abs=1e-6)
            assert float(revised[b, t, length:].abs().sum()) == 0.0
    assert float(revised[1, 2:].abs().sum()) == 0.0  # padded target steps stay empty

    # predict from the network's own α reproduces forward; from α′ it changes the output.
    real = batch.labels != 0  # outputs at padded target steps are never scored
    own = network.predict(encoding, [site.attention.clone()])
    assert torch.allclose(own[real], network(batch)[real], atol=1e-5)
    changed = network.predict(encoding, [revised])
    assert not torch.allclose(changed[0], own[0], atol=1e-4)
    if not rerun:  # the approximation: α′ enters eq. 10 at its own step only
        one_hot = torch.zeros_like(revised)
        one_hot[:, :, 1] = 1.0
        logits = network.predict(encoding, [one_hot])
        h_src, h_t = encoding.cache["site"]["source_states"], encoding.cache["site"]["queries"]
        attentional = torch.tanh(network.combine(torch.cat([h_src[:, 1:2].expand(-1, 4, -1), h_t], dim=-1)))
        assert torch.allclose(logits, network.output(attentional), atol=1e-5)


def test_log_likelihood_is_the_sum_of_target_token_log_probabilities():
    torch.manual_seed(0)
    network = LuongSeq2Seq(20, 20, embedding_dim=8, hidden_size=8, dropout=0.0).eval()
    batch = tiny_batch()
    with torch.no_grad():
        output = network(batch)
    log_probs = torch.log_softmax(output, dim=-1)
    expected = [
        sum(float(log_probs[b, t, batch.labels[b, t]]) for t in range(4) if batch.labels[b, t] != 0) for b in range(2)
    ]
    assert network.log_likelihood(output, batch.labels).tolist() == pytest.approx(expected, abs=1e-5)
    assert network.predictions(output).shape == batch.labels.shape


def test_transformer_has_one_array_per_step_layer_and_head():
    torch.manual_seed(0)
    network = TransformerNMT(20, 20, hidden_size=8, dropout=0.0, layers=2, heads=2, feedforward_size=16).eval()
    batch = tiny_batch()
    encoding = network.encode(batch)
    (site,) = encoding.sites
    site.validate()
    assert tuple(site.attention.shape) == (2, 4 * 2 * 2, 4)  # K = T_y · layers · heads
    # array k = (t·L + l)·H + h: the arrays of pair 1's padded steps 2, 3 are empty
    real_arrays = site.mask.any(dim=-1)
    assert real_arrays[0].all() and real_arrays[1, :8].all() and not real_arrays[1, 8:].any()
    weights, _, _, _ = network._original_pass(encoding.cache["target_in"], encoding.cache["target_mask"],
                                              encoding.cache["site"]["source_states"], batch.mask)
    t, layer, h = 1, 1, 0
    assert torch.allclose(site.attention[0, (t * 2 + layer) * 2 + h], weights[0, layer, h, t])
    # The heads of one step see different queries u (their codes), so one agent can tell them apart.
    assert not torch.allclose(site.query[0, 0], site.query[0, 1])
    # Re-running the decoder with the own rows (a new tensor) reproduces the output exactly.
    real = batch.labels != 0  # outputs at padded target steps are never scored
    assert torch.allclose(network.predict(encoding, [site.attention.clone()])[real], network(batch)[real], atol=1e-5)


@pytest.mark.parametrize("net", ["luong", "transformer"])
def test_rollout_runs_unchanged_on_cross_attention(net):
    torch.manual_seed(0)
    network = (
        LuongSeq2Seq(20, 20, embedding_dim=8, hidden_size=8, dropout=0.0)
        if net == "luong" else TransformerNMT(20, 20, hidden_size=8, dropout=0.0, layers=1, heads=2, feedforward_size=16)
    )
    batch = tiny_batch()
    state_size, action_size = state_and_action_size(network, batch)
    assert action_size == 1 and state_size == 8 + 5 * 8 + 8  # w_src, h_src, α·h_src, context, mean, max, u
    policy = GaussianPolicy(state_size, 1, hidden_sizes=(8,))
    result = rollout(network, policy, batch, torch.tensor(0.4), samples=3, reward=RewardConstants(0.2, 0.2, 0.85))
    assert result.revised[0].shape[0] == 2 * 3
    # every real step array of every sample sums to 1; padded steps and tokens stay 0
    sums = result.revised[0].sum(dim=-1)
    per_step = result.revised[0].shape[1] // 4
    real = (batch.labels != 0).repeat_interleave(3, dim=0).repeat_interleave(per_step, dim=1).float()
    assert torch.allclose(sums.detach(), real, atol=1e-5)
    assert result.terms.reward.shape == (6,) and (result.terms.log_likelihood < 0).all()
    # the reward's first term is log P(y|X) of each pair, summed over its target tokens
    assert torch.allclose(result.log_likelihood.detach(), result.terms.log_likelihood)
    result.log_likelihood.mean().backward()  # gradients reach the network through α′
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in network.parameters())


def test_transformer_copies_share_the_dropout_masks_encode_drew():
    # Training mode with dropout: every revised copy of an example applies the masks encode drew
    # (common random numbers), so K copies of the network's own rows give encode's output K times,
    # and a revision changes only its own copy.
    torch.manual_seed(0)
    network = TransformerNMT(20, 20, hidden_size=8, dropout=0.3, layers=2, heads=2, feedforward_size=16).train()
    batch = tiny_batch()
    encoding = network.encode(batch)
    own = encoding.sites[0].attention
    copies = 3
    repeated = encoding.repeat_interleave(copies)
    logits = network.predict(repeated, [own.repeat_interleave(copies, dim=0)])
    expected = network.predict(encoding, [own]).repeat_interleave(copies, dim=0)  # the encode pass's output
    real = (batch.labels != 0).repeat_interleave(copies, dim=0)
    assert torch.allclose(logits[real], expected[real], atol=1e-5)
    # the same with one copy and a new tensor (the revised-pass path, not the cached output)
    pair_real = batch.labels != 0
    assert torch.allclose(network.predict(encoding, [own.clone()])[pair_real], network.predict(encoding, [own])[pair_real], atol=1e-5)
    # a revision of copy 1 of pair 0 (uniform rows) changes that copy only
    revised = own.repeat_interleave(copies, dim=0).clone()
    revised[1] = encoding.sites[0].mask[0].float() / encoding.sites[0].mask[0].float().sum(-1, keepdim=True).clamp_min(1)
    changed = network.predict(repeated, [revised])
    assert not torch.allclose(changed[1], expected[1], atol=1e-3)
    keep = [r for r in range(2 * copies) if r != 1]
    assert torch.allclose(changed[keep][real[keep]], expected[keep][real[keep]], atol=1e-5)
    # gradients reach the decoder's first layer through the shared start and later layers through each copy
    changed[real].logsumexp(-1).sum().backward()
    assert network.decoder_layers[0].self_attention.query.weight.grad.abs().sum() > 0
    assert network.decoder_layers[1].self_attention.query.weight.grad.abs().sum() > 0
