"""Decoding with the agent: eq. 1's source side projected once per sentence (drga/core/source_state.py)
gives what the plain state builder gives (drga/core/state.py), and the same translations."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from drga.baselines.nmt_common import EOS_ID, cross_attention_site, map_tensors
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer_nmt import TransformerNMT
from drga.core.policy import GaussianPolicy
from drga.core.rollout import mean_action_attention
from drga.core.source_state import project_source, source_state
from drga.core.state import agent_state, agent_state_size
from drga.tasks.translation.decoding import agent_adjuster, beam_search, greedy_decode, length_limits

NETWORKS = {
    "seq2seq-luong": lambda: LuongSeq2Seq(40, 40, embedding_dim=12, hidden_size=16, dropout=0.0),
    "seq2seq-luong-rerun": lambda: LuongSeq2Seq(40, 40, embedding_dim=12, hidden_size=16, dropout=0.0, rerun_decoder=True),
    "transformer-nmt": lambda: TransformerNMT(40, 40, hidden_size=16, dropout=0.0, layers=2, heads=2, feedforward_size=32),
}


def decoding_site(seed: int, b: int = 4, k: int = 6, t: int = 7, dw: int = 5, dh: int = 6, du: int = 4):
    """A decoding step's site: every array real, source rows padded to different lengths."""
    generator = torch.Generator().manual_seed(seed)
    words, hidden = torch.randn(b, t, dw, generator=generator), torch.randn(b, t, dh, generator=generator) + 0.3
    lengths = torch.randint(1, t + 1, (b,), generator=generator)
    lengths[0] = t
    mask = torch.arange(t) < lengths.unsqueeze(1)
    attention = torch.softmax(torch.randn(b, k, t, generator=generator).masked_fill(~mask.unsqueeze(1), float("-inf")), dim=-1)
    queries = torch.randn(b, k, du, generator=generator)
    site = cross_attention_site(words, hidden, queries, mask, torch.ones(b, k, dtype=torch.bool), attention)
    return site, words, hidden, mask


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_first_layer_from_the_source_projection_is_the_plain_one(seed, normalize):
    site, words, hidden, mask = decoding_site(seed)
    torch.manual_seed(seed)
    policy = GaussianPolicy(agent_state_size(5, 6, 4), hidden_sizes=(9, 7), normalize_state=normalize)
    if normalize:  # a LayerNorm with weights of its own
        with torch.no_grad():
            policy.body[0].weight.normal_(1.0, 0.3)
            policy.body[0].bias.normal_(0.0, 0.3)
    first_layer = policy.first_layer()
    assert first_layer is not None
    linear, norm = first_layer
    rows = site.mask.flatten().nonzero().squeeze(1)
    plain = agent_state(site)
    dense = linear(norm(plain.dense()) if norm is not None else plain.dense())
    fast = source_state(site, project_source(words, hidden, mask, linear, norm))
    assert torch.allclose(fast.select(rows).project(linear, norm), plain.select(rows).project(linear, norm), atol=1e-5)
    assert torch.allclose(fast.select(rows).project(linear, norm), dense.flatten(0, 2)[rows], atol=1e-5)
    assert torch.allclose(fast.project(linear, norm).flatten(0, 2)[rows], dense.flatten(0, 2)[rows], atol=1e-5)
    # and the with-agent mode's revised attention (eqs. 1-4) through either
    with torch.no_grad():
        policy.mean_head.weight.normal_(0.0, 1.0)
    beta = torch.tensor(0.5)
    expected = mean_action_attention(site, policy, beta)
    got = mean_action_attention(site, policy, beta, fast)
    assert torch.allclose(got.revised, expected.revised, atol=1e-6)
    assert not torch.allclose(expected.revised, site.attention, atol=1e-3)  # the agent really moved the attention


def test_the_projection_follows_the_beams_and_refuses_another_layer():
    site, words, hidden, mask = decoding_site(3)
    policy = GaussianPolicy(agent_state_size(5, 6, 4), hidden_sizes=(9,))
    linear, norm = policy.first_layer()
    source = project_source(words, hidden, mask, linear, norm)
    order = torch.tensor([2, 2, 0, 3, 1])
    moved = map_tensors(source, lambda x: x.index_select(0, order))
    assert moved.layer is linear and torch.equal(moved.tokens, source.tokens[order])
    expected = project_source(words[order], hidden[order], mask[order], linear, norm)
    # the same rows through a matmul of another batch: the kernel may block (and so add) them in another order
    torch.testing.assert_close(moved.summary, expected.summary, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(moved.summary_moments, expected.summary_moments, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="another layer"):
        source_state(site, source).project(nn.Linear(linear.in_features, 9), norm)
    assert GaussianPolicy(agent_state_size(5, 6, 4), hidden_sizes=()).first_layer() is None


def network_and_agent(name: str, seed: int):
    torch.manual_seed(seed)
    network = NETWORKS[name]().eval()
    probe = network.start(torch.tensor([[5, 6]]), torch.tensor([[True, True]]))
    source_states = probe["states"] if "states" in probe else probe["memory"]
    dh = source_states.shape[-1]  # u, the decoder state, has the encoder states' size in both networks
    policy = GaussianPolicy(agent_state_size(probe["words"].shape[-1], dh, dh), hidden_sizes=(12, 12))
    with torch.no_grad():  # an agent that really moves the attention
        policy.mean_head.weight.normal_(0.0, 3.0)
        policy.body[0].weight.normal_(1.0, 0.2)
    return network, policy


def batches(seed: int):
    generator = torch.Generator().manual_seed(100 + seed)
    for size, length in ((5, 9), (3, 4), (6, 12)):
        tokens = torch.randint(4, 40, (size, length), generator=generator)
        lengths = torch.randint(1, length + 1, (size,), generator=generator)
        lengths[0] = length
        mask = torch.arange(length) < lengths.unsqueeze(1)
        yield tokens.masked_fill(~mask, 0), mask


@pytest.mark.parametrize("name", list(NETWORKS))
@pytest.mark.parametrize("seed", [0, 1])
def test_decoding_with_the_source_projection_translates_as_the_plain_path(name, seed):
    network, policy = network_and_agent(name, seed)
    with torch.no_grad():  # long translations: many steps after the projection
        (network.output_bias if hasattr(network, "output_bias") else network.output.bias)[EOS_ID] -= 3.0
    beta = torch.tensor(0.9)
    fast, plain = agent_adjuster(policy, beta), agent_adjuster(policy, beta, source_projection=False)
    for tokens, mask in batches(seed):
        state = network.with_adjuster(network.start(tokens, mask), fast)
        assert "adjuster" in state and "adjuster" not in network.with_adjuster(network.start(tokens, mask), plain)
        limits = length_limits(mask, 2.0, 16)
        assert greedy_decode(network, tokens, mask, limits, fast) == greedy_decode(network, tokens, mask, limits, plain)
        assert beam_search(network, tokens, mask, limits, 5, 0.6, fast) == beam_search(network, tokens, mask, limits, 5, 0.6, plain)
        assert sum(len(row) for row in greedy_decode(network, tokens, mask, limits, fast)) > 2 * tokens.shape[0]


@pytest.mark.parametrize("name", list(NETWORKS))
def test_each_decoding_step_gives_the_plain_log_probabilities(name):
    network, policy = network_and_agent(name, 5)
    beta = torch.tensor(0.9)
    tokens, mask = next(batches(5))
    steps = {}
    with torch.no_grad():
        for adjust in (agent_adjuster(policy, beta), agent_adjuster(policy, beta, source_projection=False), None):
            state = network.start(tokens, mask) if adjust is None else network.with_adjuster(network.start(tokens, mask), adjust)
            previous, out = torch.full((tokens.shape[0],), 2), []
            for t in range(8):
                log_probs, state = network.step(state, previous, adjust)
                out.append(log_probs)
                previous = (tokens[:, t % tokens.shape[1]] + 1).clamp(4, 39)
            steps[None if adjust is None else adjust.source_projection] = torch.stack(out)
    assert torch.allclose(steps[True], steps[False], atol=1e-5)
    assert not torch.allclose(steps[True], steps[None], atol=1e-3)  # the agent really changed the decoder's distributions
