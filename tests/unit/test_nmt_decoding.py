"""Greedy and beam search, net-only and with the agent; one decoding step equals teacher forcing."""

from __future__ import annotations

import math

import pytest
import torch
from torch import Tensor

from drga.baselines.nmt_common import BOS_ID, EOS_ID, TranslationNetwork
from drga.baselines.protocol import Batch
from drga.baselines.seq2seq_luong import LuongSeq2Seq
from drga.baselines.transformer_nmt import TransformerNMT
from drga.core.building import state_and_action_size
from drga.core.policy import GaussianPolicy
from drga.core.rollout import rollout
from drga.core.scoring import RewardConstants
from drga.tasks.translation.decoding import agent_adjuster, beam_search, greedy_decode, length_limits, length_normalizer

NETWORKS = {
    "luong": lambda: LuongSeq2Seq(24, 24, embedding_dim=8, hidden_size=8, dropout=0.0),
    "luong-rerun-2-layers": lambda: LuongSeq2Seq(24, 24, embedding_dim=8, hidden_size=8, dropout=0.0, layers=2, rerun_decoder=True),
    "luong-gru": lambda: LuongSeq2Seq(24, 24, embedding_dim=8, hidden_size=8, dropout=0.0, encoder="gru"),
    "transformer": lambda: TransformerNMT(24, 24, hidden_size=8, dropout=0.0, layers=2, heads=2, feedforward_size=16),
}


def batch() -> Batch:
    tokens = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0], [11, 12, 13, 0]])
    labels = torch.tensor([[14, 15, 16, EOS_ID], [17, EOS_ID, 0, 0], [18, 19, EOS_ID, 0]])
    return Batch(tokens, tokens != 0, labels)


def network_and_agent(name: str) -> tuple[TranslationNetwork, GaussianPolicy]:
    torch.manual_seed(1)
    network = NETWORKS[name]().eval()
    state_size, action_size = state_and_action_size(network, batch())
    policy = GaussianPolicy(state_size, action_size, hidden_sizes=(8,))
    with torch.no_grad():  # an agent that really moves the attention
        policy.mean_head.weight.normal_(0.0, 1.0)
    return network, policy


@pytest.mark.parametrize("name", list(NETWORKS))
@pytest.mark.parametrize("mode", ["net-only", "with-agent"])
def test_one_decoding_step_computes_what_teacher_forcing_computes(name, mode):
    network, policy = network_and_agent(name)
    b, beta = batch(), torch.tensor(0.4)
    adjust = agent_adjuster(policy, beta) if mode == "with-agent" else None
    with torch.no_grad():
        if adjust is None:
            expected = network.log_likelihood(network(b), b.labels)
        else:  # the same deterministic agent through the training code path
            expected = rollout(
                network, policy, b, beta, samples=1, reward=RewardConstants(0.2, 0.2, 0.85), deterministic=True
            ).log_likelihood
        state = network.start(b.tokens, b.mask)
        previous = torch.full((3,), BOS_ID)
        total = torch.zeros(3)
        for t in range(b.labels.shape[1]):
            log_probs, state = network.step(state, previous, adjust)
            real = b.labels[:, t] != 0
            total += log_probs.gather(1, b.labels[:, t : t + 1]).squeeze(1) * real
            previous = b.labels[:, t].masked_fill(~real, EOS_ID)
    assert torch.allclose(total, expected, atol=1e-4)


@pytest.mark.parametrize("name", list(NETWORKS))
@pytest.mark.parametrize("mode", ["net-only", "with-agent"])
def test_beam_of_one_is_greedy(name, mode):
    network, policy = network_and_agent(name)
    b = batch()
    adjust = agent_adjuster(policy, torch.tensor(0.4)) if mode == "with-agent" else None
    limits = length_limits(b.mask, 2.0, 12)
    greedy = greedy_decode(network, b.tokens, b.mask, limits, adjust)
    assert beam_search(network, b.tokens, b.mask, limits, 1, 0.6, adjust) == greedy
    assert all(len(row) <= int(limit) for row, limit in zip(greedy, limits))
    assert beam_search(network, b.tokens, b.mask, limits, 3, 0.6, adjust)  # runs, one hypothesis per row


class TableNetwork(TranslationNetwork):
    """A decoder whose next-token distribution is a fixed function of the prefix (a lookup table)."""

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]], vocab: int = 8):
        super().__init__()
        self.table, self.vocab = table, vocab

    def start(self, tokens: Tensor, mask: Tensor) -> dict:
        return {"prefix": tokens.new_zeros(tokens.shape[0], 0)}

    def step(self, state, tokens, adjust=None):
        prefix = torch.cat([state["prefix"], tokens.unsqueeze(1)], dim=1)
        rows = []
        for row in prefix.tolist():
            probs = torch.full((self.vocab,), 1e-6)
            for token, p in self.table.get(tuple(row[1:]), {EOS_ID: 1.0}).items():
                probs[token] = p
            rows.append((probs / probs.sum()).log())
        return torch.stack(rows), {"prefix": prefix}


def test_greedy_and_beam_agree_where_they_must():
    # Every step puts 0.96 on one token: the greedy sequence is the most probable one (no other
    # sequence can catch up), so beam search of any width must return it too.
    table = {(): {4: 0.96, 5: 0.04}, (4,): {6: 0.96, EOS_ID: 0.04}, (4, 6): {7: 0.96, 4: 0.04}, (4, 6, 7): {EOS_ID: 0.96, 5: 0.04}}
    network = TableNetwork(table)
    tokens = torch.tensor([[4, 5], [6, 0]])
    limits = torch.tensor([10, 10])
    greedy = greedy_decode(network, tokens, tokens != 0, limits)
    assert greedy == [[4, 6, 7], [4, 6, 7]]
    for width in (2, 3, 5):
        assert beam_search(network, tokens, tokens != 0, limits, width, length_penalty=0.0) == greedy


def test_beam_search_finds_what_greedy_misses():
    # Greedy takes 4 (0.6) and then has only 0.5 for any continuation: 0.30 at best.
    # Beam search keeps 5 (0.4), whose </s> has 0.9: 0.36 — the most probable translation.
    table = {(): {4: 0.6, 5: 0.4}, (4,): {6: 0.5, 7: 0.5}, (5,): {EOS_ID: 0.9, 6: 0.1}}
    network = TableNetwork(table)
    tokens = torch.tensor([[4]])
    limits = torch.tensor([5])
    assert greedy_decode(network, tokens, tokens != 0, limits) == [[4, 6]]
    assert beam_search(network, tokens, tokens != 0, limits, 2, length_penalty=0.0) == [[5]]


def test_length_limits_and_the_length_penalty():
    mask = torch.tensor([[True] * 4 + [False], [True] * 5])
    assert length_limits(mask, 2.0, 100).tolist() == [18, 20]
    assert length_limits(mask, 2.0, 15).tolist() == [15, 15]
    assert length_normalizer(torch.tensor([1, 7]), 0.0).tolist() == [1.0, 1.0]
    assert length_normalizer(torch.tensor([7]), 1.0).item() == pytest.approx(2.0)  # (5 + 7) / 6
    assert length_normalizer(torch.tensor([7]), 0.6).item() == pytest.approx(math.pow(2.0, 0.6))


@pytest.mark.parametrize("mode", ["net-only", "with-agent"])
def test_transformer_key_value_cache_decodes_exactly_what_the_full_prefix_decodes(mode):
    network, policy = network_and_agent("transformer")
    with torch.no_grad():  # no early </s>: every row decodes to its length limit, many cached steps
        network.output_bias[EOS_ID] = -50.0
    b = batch()
    adjust = agent_adjuster(policy, torch.tensor(0.4)) if mode == "with-agent" else None
    limits = length_limits(b.mask, 2.0, 20)
    outputs = {}
    for cached in (True, False):
        network.kv_cache = cached
        with torch.no_grad():
            state = network.start(b.tokens, b.mask)
            assert ("length" in state) == cached
            previous, steps = torch.full((3,), BOS_ID), []
            for t in range(12):  # per-step log-probabilities along a fixed prefix
                log_probs, state = network.step(state, previous, adjust)
                steps.append(log_probs)
                previous = torch.tensor([5 + t, 9, 13])
        outputs[cached] = (
            torch.stack(steps),
            greedy_decode(network, b.tokens, b.mask, limits, adjust),
            beam_search(network, b.tokens, b.mask, limits, 3, 0.6, adjust),
        )
    (cached_steps, cached_greedy, cached_beam), (full_steps, full_greedy, full_beam) = outputs[True], outputs[False]
    assert torch.allclose(cached_steps, full_steps, atol=1e-5)
    assert cached_greedy == full_greedy and cached_beam == full_beam
    assert all(len(row) == int(limit) for row, limit in zip(cached_greedy, limits))  # really ran to the limit
