"""The co-training speed-ups compute the same numbers as the plain forms they replace.

- the agent's first layer on the blocks of eq. 1 (``AgentState.project``, ``drga/core/blockwise.py``, the
  module of the speed-ups) equals the layer
  (LayerNorm, Linear) applied to ``build_agent_state``'s dense [B, K, T, S] tensor, for every
  family's real sites, with the same gradients;
- the Transformer's first layer run once per example for K repeated copies equals running it
  on every copy;
- ``train.task_loss_samples`` (opt-in) keeps every value and scales the kept copies' gradient.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from drga.baselines import NETWORK_INPUTS, build_network
from drga.baselines.common import apply_keep_mask, attention_pool, dropout_keep_mask
from drga.baselines.protocol import AttentionSite, Batch, NetworkEncoding, per_example
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer_nmt import TransformerNMT
from drga.core.adjust import adjust_attention
from drga.core.policy import GaussianPolicy
from drga.core.rollout import predict_fewer_gradients, rollout
from drga.core.scoring import RewardConstants
from drga.core.state import AgentState, agent_state, build_agent_state
from tests.unit.test_families import BATCHES, CLASSIFIERS, SMALL


def random_site(b=3, k=4, t=6, dw=5, dh=7, du=4, multi=False, shared=False, empty_arrays=False, groups=0) -> AttentionSite:
    """A site with padding; ``shared``: w and h one tensor expanded over K (as translation sites);
    ``groups`` = G: w and h given once per group of K / G arrays (as a Transformer's heads site)."""
    lengths = torch.tensor([t, t - 2, 1])[:b]
    mask = (torch.arange(t) < lengths[:, None])[:, None, :].expand(b, k, t)
    if empty_arrays:  # some arrays see no token (a padded target step)
        mask = mask & (torch.arange(k) % 3 != 2)[None, :, None]
    if shared:
        words, hidden = torch.randn(b, 1, t, dw).expand(b, k, t, dw), torch.randn(b, 1, t, dh).expand(b, k, t, dh)
    elif groups:
        words, hidden = torch.randn(b, groups, t, dw), torch.randn(b, groups, t, dh)
    else:
        words, hidden = torch.randn(b, k, t, dw), torch.randn(b, k, t, dh)
    real = mask.unsqueeze(-1) if multi else mask
    alpha = torch.rand(b, k, t, dh) if multi else torch.rand(b, k, t)
    alpha = alpha * real
    alpha = alpha / alpha.sum(dim=2, keepdim=True).clamp_min(1e-9)
    return AttentionSite(words, hidden, torch.randn(b, k, du), mask, alpha)


def first_layer_pair(state: AgentState, normalize: bool):
    """(layer applied to the dense state, layer applied blockwise), a policy with LayerNorm weights that are not 1/0."""
    policy = GaussianPolicy(state.size, 1, hidden_sizes=(9,), normalize_state=normalize)
    if normalize:
        with torch.no_grad():
            policy.body[0].weight.uniform_(0.5, 1.5)
            policy.body[0].bias.normal_()
    norm, linear = (policy.body[0], policy.body[1]) if normalize else (None, policy.body[0])
    dense = state.dense()
    plain = linear(norm(dense) if norm is not None else dense)
    return policy, plain, state.project(linear, norm)


def assert_same_first_layer(state: AgentState, normalize: bool = True):
    policy, plain, blockwise = first_layer_pair(state, normalize)
    assert blockwise.shape == plain.shape
    assert torch.allclose(blockwise, plain, atol=1e-5, rtol=1e-5)
    params = [p for p in policy.body.parameters()]
    weights = torch.randn_like(plain)  # a generic downstream loss
    g_plain = torch.autograd.grad((plain * weights).sum(), params)
    g_block = torch.autograd.grad((blockwise * weights).sum(), params)
    for a, b in zip(g_plain, g_block):
        assert torch.allclose(a, b, atol=1e-5 * max(1.0, a.abs().max().item()), rtol=1e-5)


@pytest.mark.parametrize("layout", [
    dict(), dict(multi=True), dict(shared=True), dict(shared=True, empty_arrays=True),
    dict(shared=True, multi=True, empty_arrays=True), dict(k=1), dict(empty_arrays=True),
    dict(groups=2), dict(groups=2, multi=True), dict(groups=2, empty_arrays=True), dict(k=6, groups=3, multi=True),
])
@pytest.mark.parametrize("normalize", [True, False])
def test_blockwise_first_layer_equals_the_layer_on_the_dense_state(layout, normalize):
    torch.manual_seed(1)
    site = random_site(**layout)
    state = agent_state(site)
    assert torch.equal(state.dense(), build_agent_state(site))
    if layout.get("shared"):
        assert state.words.shape[1] == state.hidden.shape[1] == 1  # the expanded views stay compact
    assert_same_first_layer(state, normalize)
    # only the real tokens (what the rollout computes): the rows of the dense states
    rows = site.mask.flatten().nonzero().squeeze(1)
    selected = state.select(rows)
    assert torch.equal(selected.dense(), build_agent_state(site).flatten(0, 2)[rows])
    assert selected.shape == (rows.numel(), state.size)
    assert_same_first_layer(selected, normalize)


@pytest.mark.parametrize("layout", [dict(), dict(multi=True), dict(empty_arrays=True), dict(k=6, groups=1)])
def test_grouped_site_gives_the_states_of_its_repeated_form(layout):
    # A site whose arrays share w and h by groups is the same site as one with a copy per array.
    torch.manual_seed(4)
    grouped = random_site(groups=layout.pop("groups", 2), **layout)
    grouped.validate()
    k = grouped.arrays
    repeated = dataclasses.replace(grouped, **{
        name: getattr(grouped, name).repeat_interleave(k // getattr(grouped, name).shape[1], dim=1)
        for name in ("word_vectors", "hidden_states")
    })
    assert repeated.hidden_states.shape[1] == k
    state, expected = agent_state(grouped), agent_state(repeated)
    assert state.hidden.shape[1] == grouped.hidden_states.shape[1]  # compact, not copied per array
    assert torch.allclose(state.dense(), expected.dense(), atol=1e-6)
    rows = grouped.mask.flatten().nonzero().squeeze(1)
    policy = GaussianPolicy(state.size, 1, hidden_sizes=(9,))
    norm, linear = policy.body[0], policy.body[1]
    assert torch.allclose(state.select(rows).project(linear, norm), expected.select(rows).project(linear, norm), atol=1e-5)


def test_site_rejects_groups_that_do_not_divide_the_arrays():
    site = random_site(k=4, groups=2)
    bad = dataclasses.replace(site, hidden_states=torch.randn(3, 3, 6, 7))
    with pytest.raises(ValueError, match="G dividing the 4 arrays"):
        bad.validate()


def test_state_blocks_match_eq_1_on_shifted_large_values():
    # LayerNorm's statistics combined from the blocks stay accurate when the features are far from 0.
    torch.manual_seed(2)
    site = random_site(shared=True, empty_arrays=True)
    site = dataclasses.replace(site, word_vectors=site.word_vectors + 50.0, hidden_states=site.hidden_states * 10 - 30)
    assert_same_first_layer(agent_state(site))


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_blockwise_first_layer_on_every_family_s_sites(name):
    torch.manual_seed(0)
    network = build_network(name, vocab_size=20, num_classes=3, dropout=0.0, **SMALL).eval()
    for site in network.encode(BATCHES[NETWORK_INPUTS[name]]()).sites:
        state = agent_state(site)
        assert torch.equal(state.dense(), build_agent_state(site))
        assert_same_first_layer(state.detach())


@pytest.mark.parametrize("network", [
    LuongSeq2Seq(20, 30, embedding_dim=8, hidden_size=10),
    TransformerNMT(20, 30, hidden_size=8, layers=2, heads=2, feedforward_size=12),
])
def test_blockwise_first_layer_on_translation_sites(network):
    torch.manual_seed(0)
    batch = Batch(torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]]), torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]]) != 0,
                  torch.tensor([[11, 12, 13, 3], [14, 3, 0, 0]]))
    site = network.eval().encode(batch).sites[0]
    state = agent_state(site)
    assert state.words.shape[1] == 1 and state.hidden.shape[1] == 1  # shared by the arrays, not copied
    assert torch.allclose(state.dense(), build_agent_state(site))
    assert_same_first_layer(state.detach())


@pytest.mark.parametrize("hidden_sizes", [(6, 5), ()])
def test_policy_distribution_from_blocks_equals_distribution_from_the_dense_state(hidden_sizes):
    torch.manual_seed(3)
    state = agent_state(random_site(shared=True, empty_arrays=True))
    policy = GaussianPolicy(state.size, 1, hidden_sizes=hidden_sizes)
    plain, blockwise = policy.distribution(state.dense()), policy.distribution(state)
    assert torch.allclose(plain.mean, blockwise.mean, atol=1e-6)
    assert torch.allclose(plain.stddev, blockwise.stddev, atol=1e-6)


def transformer_case(dropout: float):
    torch.manual_seed(0)
    network = build_network("transformer", vocab_size=30, num_classes=3, dropout=dropout, layers=2, heads=2,
                            embedding_dim=8, hidden_size=12, attention_size=6, classifier_hidden=6, feedforward_size=10)
    return network, BATCHES["text"]()


def test_transformer_first_layer_once_per_example_equals_every_copy():
    network, batch = transformer_case(dropout=0.3)
    network.eval()
    encoding = network.encode(batch)
    repeated = encoding.repeat_interleave(3)
    assert repeated.base is encoding and repeated.repeats == 3
    revised = [adjust_attention(s.attention, torch.rand_like(s.attention) * 2 - 1, 0.4, s.mask) for s in repeated.sites]
    shared = network.predict(repeated, revised)
    every_copy = network.predict(NetworkEncoding(sites=repeated.sites, cache=dict(repeated.cache)), revised)  # every copy made
    assert torch.allclose(shared, every_copy, atol=1e-5)
    params = [p for p in network.parameters() if p.requires_grad]
    g_shared = torch.autograd.grad(shared.square().sum(), params, retain_graph=True, allow_unused=True)
    g_every = torch.autograd.grad(every_copy.square().sum(), params, allow_unused=True)
    for a, b in zip(g_shared, g_every):
        if a is not None:
            assert torch.allclose(a, b, atol=1e-5)


def test_transformer_copies_of_an_example_share_dropout_masks_in_training():
    network, batch = transformer_case(dropout=0.5)
    network.train()
    encoding = network.encode(batch)
    repeated = encoding.repeat_interleave(4)
    # the same revision for every copy: copies then differ only if their dropout masks do
    one = [adjust_attention(s.attention, torch.rand_like(s.attention) * 2 - 1, 0.4, s.mask) for s in encoding.sites]
    output = network.predict(repeated, [r.repeat_interleave(4, dim=0) for r in one]).view(batch.size, 4, -1)
    assert torch.allclose(output, output[:, :1].expand_as(output), atol=1e-6)
    assert not torch.allclose(output[0, 0], output[1, 0], atol=1e-3)  # different examples, different masks


def test_transformer_with_its_own_attention_reuses_the_encoder_output():
    network, batch = transformer_case(dropout=0.3)
    network.eval()
    encoding = network.encode(batch)
    reused = network.predict(encoding, encoding.attention)
    recomputed = network.predict(encoding, [a.clone() for a in encoding.attention])  # not its own: every layer re-run
    assert torch.allclose(reused, recomputed, atol=1e-5)


def test_keep_mask_is_drawn_once_per_example_and_shared_by_its_copies():
    torch.manual_seed(0)
    x = torch.ones(200, 3, 50)  # 50 examples × 4 copies
    keep = dropout_keep_mask(x[:50], 0.25, True)
    out = apply_keep_mask(x, keep, copies=4).view(50, 4, 3, 50)
    assert torch.equal(out, out[:, :1].expand_as(out))
    assert torch.equal(out[:, 0], keep)
    assert torch.allclose(out.unique(), torch.tensor([0.0, 1 / 0.75]))  # kept units scaled by 1/(1 − p)
    assert abs((out == 0).float().mean().item() - 0.25) < 0.03
    assert dropout_keep_mask(x, 0.25, False) is None and dropout_keep_mask(x, 0.0, True) is None
    assert torch.equal(apply_keep_mask(x, None, copies=4), x)
    assert dropout_keep_mask(x, 0.5, True, shape=(7, 2)).shape == (7, 2)


def test_transformer_predict_reuses_the_dropout_masks_of_encode():
    # In training, a revision that changes nothing reproduces encode's own pass (the same masks),
    # and the two predict calls of predict_fewer_gradients (with and without gradient) apply the
    # same masks, so their values equal one predict over all K copies.
    network, batch = transformer_case(dropout=0.5)
    network.train()
    encoding = network.encode(batch)
    own = network.predict(encoding, encoding.attention)  # encode's layer outputs, reused
    unchanged = network.predict(encoding, [a.clone() for a in encoding.attention])  # every layer re-run
    assert torch.allclose(own, unchanged, atol=1e-5)
    k = 3
    repeated = encoding.repeat_interleave(k)
    revised = [adjust_attention(s.attention, torch.rand_like(s.attention) * 2 - 1, 0.4, s.mask) for s in repeated.sites]
    assert torch.allclose(predict_fewer_gradients(network, encoding, revised, k, 1), network.predict(repeated, revised), atol=1e-5)


@pytest.mark.parametrize("name", ["transformer", "lstm-sa"])
def test_task_loss_samples_keeps_values_and_averages_the_gradient_over_the_kept_samples(name):
    if name == "transformer":
        network, batch = transformer_case(dropout=0.0)
    else:
        torch.manual_seed(0)
        network, batch = build_network(name, vocab_size=20, num_classes=3, dropout=0.0, **SMALL), BATCHES["text"]()
    policy = GaussianPolicy(agent_state(network.encode(batch).sites[0]).size, 1, hidden_sizes=(6,))
    k, n = 4, 1
    results = {}
    for task_samples in (0, n):
        torch.manual_seed(7)  # the same action samples
        r = rollout(network, policy, batch, torch.tensor(0.4), samples=k, reward=RewardConstants(0.2, 0.2, 0.85), task_samples=task_samples)
        network.zero_grad()
        loss = -r.log_likelihood.mean()
        loss.backward()
        results[task_samples] = (r, loss, [p.grad.clone() for p in network.parameters() if p.grad is not None])
    full, fewer = results[0], results[n]
    assert torch.allclose(full[0].output, fewer[0].output, atol=1e-6)
    assert torch.allclose(full[0].terms.reward, fewer[0].terms.reward, atol=1e-6)
    assert torch.allclose(full[1], fewer[1], atol=1e-6)
    # the gradient of the loss on the first n samples of every sequence, from the full rollout
    torch.manual_seed(7)
    r = rollout(network, policy, batch, torch.tensor(0.4), samples=k, reward=RewardConstants(0.2, 0.2, 0.85))
    network.zero_grad()
    (-r.log_likelihood.view(-1, k)[:, :n].mean()).backward()
    expected = [p.grad for p in network.parameters() if p.grad is not None]
    assert len(expected) == len(fewer[2])
    for a, b in zip(expected, fewer[2]):
        assert torch.allclose(a, b, atol=1e-6)


def plain_rollout(network, policy, batch, beta, k, gamma=0.2, sqrt_l0=0.2, delta=0.85):
    """The rollout written plainly: the dense state of every token, padding included, one
    dist.sample((k,)) per site, masked sums (what drga/core/rollout.py computes blockwise on the real tokens)."""
    from drga.core.reward import drga_reward

    encoding = network.encode(batch)
    log_prob = torch.zeros(batch.size, k)
    repeated, revised, std_sum, entropy_sum, positions = encoding.repeat_interleave(k), [], 0.0, 0.0, 0.0
    for site, site_repeated in zip(encoding.sites, repeated.sites):
        dist = policy.distribution(build_agent_state(site).detach())
        x = dist.sample((k,))  # [k, B, K, T, A]
        real = site.mask.unsqueeze(0).unsqueeze(-1).to(x.dtype)
        log_prob = log_prob + (dist.log_prob(x) * real).sum(dim=(2, 3, 4)).transpose(0, 1)
        action = 2 * torch.sigmoid(x) - 1
        action = (action if site.multi_dimensional else action.squeeze(-1)).transpose(0, 1).flatten(0, 1)
        revised.append(adjust_attention(site_repeated.attention, action, beta, site_repeated.mask))
        std_sum = std_sum + (dist.stddev * real[0]).sum()
        entropy_sum = entropy_sum + (dist.entropy() * real[0]).sum()
        positions = positions + real[0].sum() * x.shape[-1]
    output = network.predict(repeated, revised)
    log_likelihood = network.log_likelihood(output, batch.labels.repeat_interleave(k, dim=0))
    terms = drga_reward(log_likelihood.detach(), [r.detach() for r in revised], [s.mask for s in repeated.sites], gamma, sqrt_l0, delta)
    return log_prob.flatten(), log_likelihood, terms.reward, revised, std_sum / positions, entropy_sum / positions


@pytest.mark.parametrize("name", CLASSIFIERS + ["transformer-nmt"])
def test_rollout_equals_the_plain_rollout_values_and_gradients(name):
    torch.manual_seed(0)
    if name == "transformer-nmt":
        network = TransformerNMT(20, 30, hidden_size=8, layers=2, heads=2, feedforward_size=12, dropout=0.0)
        tokens = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0], [4, 0, 0, 0]])
        batch = Batch(tokens, tokens != 0, torch.tensor([[11, 12, 13, 3], [14, 3, 0, 0], [12, 13, 3, 0]]))
    else:
        network = build_network(name, vocab_size=20, num_classes=3, dropout=0.0, **SMALL)
        batch = BATCHES[NETWORK_INPUTS[name]]()
    site = network.encode(batch).sites[0]
    policy = GaussianPolicy(agent_state(site).size, site.action_size, hidden_sizes=(7,))
    beta, k = torch.tensor(0.4, requires_grad=True), 3
    params = list(network.parameters()) + list(policy.parameters()) + [beta]

    def loss_and_grads(values):
        log_prob, log_likelihood, reward, revised, std, entropy = values
        loss = -(log_prob * (reward - reward.mean())).mean() - log_likelihood.mean() - 0.01 * entropy
        return [g if g is not None else torch.zeros_like(p) for g, p in zip(torch.autograd.grad(loss, params, allow_unused=True), params)]

    torch.manual_seed(3)
    plain = plain_rollout(network, policy, batch, beta, k)
    torch.manual_seed(3)  # the same action samples
    r = rollout(network, policy, batch, beta, samples=k, reward=RewardConstants(0.2, 0.2, 0.85))
    ours = (r.log_prob, r.log_likelihood, r.terms.reward, r.revised, r.policy_std, r.entropy)
    for a, b in zip(plain[:3], ours[:3]):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-5)
    for a, b in zip(plain[3], ours[3]):
        assert torch.allclose(a, b, atol=1e-6)
    assert torch.allclose(plain[4], ours[4], atol=1e-6) and torch.allclose(plain[5], ours[5], atol=1e-6)
    for a, b in zip(loss_and_grads(plain), loss_and_grads(ours)):
        assert torch.allclose(a, b, atol=1e-4 * max(1.0, a.abs().max().item()), rtol=1e-4)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_predict_on_k_copies_reads_each_example_once_and_equals_predict_on_copies(name):
    """``repeat_interleave`` copies nothing up front and a network's ``predict`` may read its
    examples once (``per_example``, ``attention_pool``): the outputs and gradients equal those of
    an encoding with every copy made, in training mode (the copies share their dropout masks)."""
    torch.manual_seed(0)
    network = build_network(name, vocab_size=50, num_classes=3, **SMALL)
    network.train()
    batch = BATCHES[NETWORK_INPUTS[name]]()
    encoding = network.encode(batch)
    repeated = encoding.repeat_interleave(3)
    first_key = next(iter(encoding.cache))
    assert per_example(repeated, first_key) == (encoding.cache[first_key], 3)
    revised = [adjust_attention(s.attention, torch.rand_like(s.attention) * 2 - 1, 0.4, s.mask) for s in repeated.sites]
    shared = network.predict(repeated, revised)
    every_copy = network.predict(NetworkEncoding(sites=repeated.sites, cache=dict(repeated.cache)), revised)
    assert torch.allclose(shared, every_copy, atol=1e-6)
    params = [p for p in network.parameters() if p.requires_grad]
    g_shared = torch.autograd.grad(shared.square().sum(), params, retain_graph=True, allow_unused=True)
    g_every = torch.autograd.grad(every_copy.square().sum(), params, allow_unused=True)
    for a, b in zip(g_shared, g_every):
        assert (a is None) == (b is None)
        if a is not None:
            assert torch.allclose(a, b, atol=1e-5)


def test_attention_pool_is_eq_10_for_each_copy():
    values = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])  # one example, T = 2, D = 2
    alpha = torch.tensor([[0.25, 0.75], [1.0, 0.0]])  # two revisions of it
    # c′ = Σ_t α′_t h_t: 0.25·(1, 2) + 0.75·(3, 4) = (2.5, 3.5); 1·(1, 2) = (1, 2)
    assert torch.equal(attention_pool(alpha, values, copies=2), torch.tensor([[2.5, 3.5], [1.0, 2.0]]))
    strided = alpha.t().contiguous().t()  # the same values, not contiguous (a slice of a bigger α′ is not)
    assert torch.equal(attention_pool(strided, values, copies=2), torch.tensor([[2.5, 3.5], [1.0, 2.0]]))
    per_dimension = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])  # multi-dimensional α′ [1, T, D]
    assert torch.equal(attention_pool(per_dimension, values), torch.tensor([[1.0, 4.0]]))


@pytest.mark.parametrize("name", ["lstm-sa", "disan"])
def test_zeroed_fraction_counts_the_real_weights_that_eqs_3_4_set_to_zero(name):
    torch.manual_seed(0)
    network, batch = build_network(name, vocab_size=20, num_classes=3, dropout=0.0, **SMALL), BATCHES["text"]()
    assert not batch.mask.all()  # padding, which the count must leave out
    site = network.encode(batch).sites[0]
    policy = GaussianPolicy(agent_state(site).size, site.action_size, hidden_sizes=(6,), init_log_std=1.0)  # wide: many zeroed
    r = rollout(network, policy, batch, torch.tensor(0.4), samples=3, reward=RewardConstants(0.2, 0.2, 0.85))
    alpha, mask = r.revised[0], batch.mask.repeat_interleave(3, dim=0).unsqueeze(1)  # [B·K, 1, T(, H)]
    real = mask.unsqueeze(-1).expand_as(alpha) if alpha.dim() > mask.dim() else mask.expand_as(alpha)
    expected = ((alpha == 0) & real).sum() / real.sum()
    assert 0 < expected < 1
    assert r.zeroed_fraction.item() == pytest.approx(expected.item())
